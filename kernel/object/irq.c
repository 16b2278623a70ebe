/* IRQ control: not implemented yet (the object-model and scheduling work fills this
 * in). Until then the invocation is refused with IllegalOperation. */
#include <invocation.h>

struct syscall_error decode_irq_control_invocation(struct invocation *inv)
{
    (void)inv;
    return error0(ERR_ILLEGAL_OPERATION);
}

struct syscall_error decode_irq_handler_invocation(struct invocation *inv)
{
    (void)inv;
    return error0(ERR_ILLEGAL_OPERATION);
}
