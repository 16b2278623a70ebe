/* DomainSet_Set. Kairos has one domain (CONFIG_NUM_DOMAINS = 1), so the only
 * valid request sets domain 0, which every thread already has; the checks
 * are seL4's, in its order (errors-by-invocation.md, Domain). */
#include <invocation.h>
#include <thread.h>

struct syscall_error decode_domain_invocation(struct invocation *inv)
{
    if (inv->label != INV_DOMAIN_SET)
        return error0(ERR_ILLEGAL_OPERATION);
    if (inv->length == 0)
        return error0(ERR_TRUNCATED_MESSAGE);
    word_t domain = get_mr(inv->caller, 0);
    if (domain >= CONFIG_NUM_DOMAINS)
        return error1(ERR_INVALID_ARGUMENT, 0);
    if (inv->n_extra < 1)
        return error0(ERR_TRUNCATED_MESSAGE);
    if (cap_type(inv->extra[0]) != CAP_THREAD)
        return error1(ERR_INVALID_ARGUMENT, 1);
    tcb_from_paddr(cap_obj(inv->extra[0]))->domain = (u32)domain;
    return no_error();
}
