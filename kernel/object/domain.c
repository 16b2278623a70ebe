/* DomainSet_Set. Kairos has one domain (CONFIG_NUM_DOMAINS = 1), so the only
 * valid request sets domain 0, which every thread already has; the checks
 * are seL4's, in its order (seL4's decodeDomainInvocation). */
#include <invocation.h>
#include <thread.h>

/* DomainSet_Set, decoded: the thread and its new domain. */
struct domain_op {
    struct tcb *tcb;
    u32 domain;
};

/* Validates the invocation and fills *op; changes nothing. */
static struct syscall_error decode_domain(const struct invocation *inv, struct domain_op *op)
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
    op->tcb = tcb_from_paddr(cap_obj(inv->extra[0]));
    op->domain = (u32)domain;
    return no_error();
}

struct syscall_error invoke_domain(struct invocation *inv)
{
    struct domain_op op;
    struct syscall_error e = decode_domain(inv, &op);
    if (e.code != ERR_NONE)
        return e;
    op.tcb->domain = op.domain; /* perform: cannot fail */
    return no_error();
}
