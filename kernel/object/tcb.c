/* Thread control blocks: the invocations on a TCB cap. */
#include <invocation.h>
#include <kernel.h>
#include <thread.h>

struct syscall_error decode_tcb_invocation(struct invocation *inv)
{
    struct tcb *target = tcb_from_paddr(cap_obj(inv->cap));
    switch (inv->label) {
    case INV_TCB_SUSPEND:
        thread_suspend(target);
        return no_error();
    case INV_TCB_RESUME:
        thread_resume(target);
        return no_error();
    default:
        return error0(ERR_ILLEGAL_OPERATION);
    }
}
