/* C side of kernel entry for exceptions and interrupts (trap.S dispatches
 * here; system calls go to handle_syscall). */
#include <arch/csr.h>
#include <arch/machine.h>
#include <fastpath.h>
#include <fault.h>
#include <kernel.h>
#include <preemption.h>
#include <thread.h>

NORETURN void handle_exception(word_t scause, word_t stval);
NORETURN void handle_interrupt(word_t scause);

void handle_exception(word_t scause, word_t stval)
{
    struct tcb *t = current_thread;
    entry_stamp_begin(0, 0);
    sched_entry(); /* budget used up: ends the entry; the instruction is re-executed later */
    /* Lazy FP switching: the first FP instruction of a thread whose FP
     * state is not loaded; it is re-executed once the state is in. */
    if (scause == CAUSE_ILLEGAL_INSTR && fpu_take(t))
        kernel_exit();
    struct fault f = fault_new(FAULT_NULL, t->ctx.fault_ip);
    switch (scause) {
    case CAUSE_INSTR_ACCESS:
    case CAUSE_INSTR_PAGE_FAULT:
        f.type = FAULT_VM;
        f.addr = stval;
        f.prefetch = 1;
        f.fsr = CAUSE_INSTR_ACCESS;
        break;
    case CAUSE_LOAD_ACCESS:
    case CAUSE_LOAD_PAGE_FAULT:
        f.type = FAULT_VM;
        f.addr = stval;
        f.fsr = CAUSE_LOAD_ACCESS; /* seL4 folds page faults into access-fault codes */
        break;
    case CAUSE_STORE_ACCESS:
    case CAUSE_STORE_PAGE_FAULT:
        f.type = FAULT_VM;
        f.addr = stval;
        f.fsr = CAUSE_STORE_ACCESS;
        break;
    default:
        f.type = FAULT_USER_EXCEPTION;
        f.number = scause;
        f.addr = stval;
        break;
    }
    handle_fault(t, &f);
#if CONFIG_INVARIANT_CHECKS
    syscall_check_invariants(); /* after every kernel entry */
#endif
    kernel_exit();
}

void handle_interrupt(word_t scause)
{
    (void)scause;
    entry_stamp_begin(0, 0);
    if (!sched_stamp_entry())
        sched_note_overrun(); /* the budget ran out: kernel_exit acts on it */
    handle_pending_interrupts();
#if CONFIG_INVARIANT_CHECKS
    syscall_check_invariants();
#endif
    kernel_exit();
}
