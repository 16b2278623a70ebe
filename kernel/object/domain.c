/* DomainSet_Set: not implemented yet (the object-model and scheduling work fills this
 * in). Until then the invocation is refused with IllegalOperation. */
#include <invocation.h>

struct syscall_error decode_domain_invocation(struct invocation *inv)
{
    (void)inv;
    return error0(ERR_ILLEGAL_OPERATION);
}
