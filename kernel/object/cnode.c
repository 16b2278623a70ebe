/* CNode invocations (labels 18-25): Revoke, Delete, CancelBadgedSends, Copy,
 * Mint, Move, Mutate, Rotate, with seL4's checks in seL4's order (seL4's
 * decodeCNodeInvocation).
 *
 * decode_cnode validates everything and changes nothing; perform_cnode
 * cannot fail, except that Revoke, Delete and CancelBadgedSends can stop at
 * a preemption point (ERR_PREEMPTED); the system call is then restarted and
 * continues from the state the derivation tree or the endpoint queue
 * records (kernel/kernel/cdt.c, endpoint.c). */
#include <cdt.h>
#include <endpoint.h>
#include <cspace.h>
#include <invocation.h>
#include <objecttype.h>

/* Message words of the CNode invocations (libsel4's seL4_CNode_* stubs). */
enum {
    MR_INDEX = 0,
    MR_DEPTH = 1,
    MR_SRC_INDEX = 2,    /* Copy/Mint/Move/Mutate */
    MR_SRC_DEPTH = 3,
    MR_RIGHTS = 4,       /* Copy, Mint */
    MR_MINT_DATA = 5,    /* Mint */
    MR_MUTATE_DATA = 4,  /* Mutate */
    MR_PIVOT_DATA = 2,   /* Rotate: applied to the pivot cap, which moves to the destination */
    MR_PIVOT_INDEX = 3,
    MR_PIVOT_DEPTH = 4,
    MR_SRC_DATA = 5,     /* Rotate: applied to the source cap, which moves to the pivot */
    MR_ROT_SRC_INDEX = 6,
    MR_ROT_SRC_DEPTH = 7,
};

static struct syscall_error missing_cap(bool source, word_t depth)
{
    struct lookup_failure f = {LOOKUP_MISSING_CAPABILITY, depth, 0, 0};
    return failed_lookup_error(source, &f);
}

/* CancelBadgedSends needs an endpoint cap with all four rights. */
static bool has_cancel_send_rights(cap_t c)
{
    return cap_type(c) == CAP_ENDPOINT && (cap_rights(c) & RIGHTS_ALL) == RIGHTS_ALL;
}

/* A CNode invocation, decoded. dest: the slot the invocation names (MR0,
 * MR1 from the invoked CNode). Copy/Mint/Move/Mutate: new_cap goes from
 * src to dest (moved or derived). Rotate: new_src goes to pivot and
 * new_pivot to dest (a swap if dest is src). */
struct cnode_op {
    word_t label;
    cte_t *dest;
    cte_t *src, *pivot;
    cap_t new_cap;     /* Copy, Mint, Move, Mutate */
    bool move;         /* Move, Mutate */
    cap_t new_src, new_pivot; /* Rotate */
};

/* Copy, Mint, Move, Mutate: a new cap in the empty destination, from the
 * source (extra cap 0 = source root, MR2/MR3 = source index/depth). */
static struct syscall_error decode_copy_like(const struct invocation *inv, struct cnode_op *op)
{
    struct tcb *t = inv->caller;
    if (inv->length < 4 || inv->n_extra < 1)
        return error0(ERR_TRUNCATED_MESSAGE);
    word_t src_index = get_mr(t, MR_SRC_INDEX);
    word_t src_depth = get_mr(t, MR_SRC_DEPTH);
    if (!cap_is_null(op->dest->cap))
        return error0(ERR_DELETE_FIRST);
    cte_t *src;
    struct syscall_error e = lookup_slot_checked(true, inv->extra[0], src_index, src_depth, &src);
    if (e.code != ERR_NONE)
        return e;
    if (cap_is_null(src->cap))
        return missing_cap(true, src_depth);

    cap_t new_cap;
    bool move;
    switch (inv->label) {
    case INV_CNODE_COPY: {
        if (inv->length < 5)
            return error0(ERR_TRUNCATED_MESSAGE);
        cap_t masked = mask_cap_rights(get_mr(t, MR_RIGHTS), src->cap);
        struct derive_result d = derive_cap(src, masked);
        if (d.status != ERR_NONE)
            return error0(d.status);
        new_cap = d.cap;
        move = false;
        break;
    }
    case INV_CNODE_MINT: {
        if (inv->length < 6)
            return error0(ERR_TRUNCATED_MESSAGE);
        cap_t masked = mask_cap_rights(get_mr(t, MR_RIGHTS), src->cap);
        struct derive_result d = derive_cap(src, update_cap_data(false, get_mr(t, MR_MINT_DATA), masked));
        if (d.status != ERR_NONE)
            return error0(d.status);
        new_cap = d.cap;
        move = false;
        break;
    }
    case INV_CNODE_MOVE:
        new_cap = src->cap;
        move = true;
        break;
    default: /* INV_CNODE_MUTATE */
        if (inv->length < 5)
            return error0(ERR_TRUNCATED_MESSAGE);
        new_cap = update_cap_data(true, get_mr(t, MR_MUTATE_DATA), src->cap);
        move = true;
        break;
    }
    if (cap_is_null(new_cap))
        return error0(ERR_ILLEGAL_OPERATION);
    op->src = src;
    op->new_cap = new_cap;
    op->move = move;
    return no_error();
}

/* Rotate: source → pivot, pivot → destination (destination may be the
 * source, which makes it a swap). */
static struct syscall_error decode_rotate(const struct invocation *inv, struct cnode_op *op)
{
    struct tcb *t = inv->caller;
    cte_t *dest = op->dest;
    if (inv->length < 8 || inv->n_extra < 2)
        return error0(ERR_TRUNCATED_MESSAGE);
    word_t pivot_data = get_mr(t, MR_PIVOT_DATA);
    word_t pivot_index = get_mr(t, MR_PIVOT_INDEX);
    word_t pivot_depth = get_mr(t, MR_PIVOT_DEPTH);
    word_t src_data = get_mr(t, MR_SRC_DATA);
    word_t src_index = get_mr(t, MR_ROT_SRC_INDEX);
    word_t src_depth = get_mr(t, MR_ROT_SRC_DEPTH);

    cte_t *src, *pivot;
    struct syscall_error e = lookup_slot_checked(true, inv->extra[1], src_index, src_depth, &src);
    if (e.code != ERR_NONE)
        return e;
    /* seL4 flags the pivot lookup as a source lookup. */
    e = lookup_slot_checked(true, inv->extra[0], pivot_index, pivot_depth, &pivot);
    if (e.code != ERR_NONE)
        return e;
    if (pivot == src || pivot == dest)
        return error0(ERR_ILLEGAL_OPERATION);
    if (src != dest && !cap_is_null(dest->cap))
        return error0(ERR_DELETE_FIRST);
    if (cap_is_null(src->cap))
        return missing_cap(true, src_depth);
    /* seL4 reports a missing pivot as a non-source lookup. */
    if (cap_is_null(pivot->cap))
        return missing_cap(false, pivot_depth);
    cap_t new_src = update_cap_data(true, src_data, src->cap);
    cap_t new_pivot = update_cap_data(true, pivot_data, pivot->cap);
    if (cap_is_null(new_src))
        return error0(ERR_ILLEGAL_OPERATION);
    if (cap_is_null(new_pivot))
        return error0(ERR_ILLEGAL_OPERATION);
    op->src = src;
    op->pivot = pivot;
    op->new_src = new_src;
    op->new_pivot = new_pivot;
    return no_error();
}

/* Validates the invocation in seL4's order and fills *op; changes nothing. */
static struct syscall_error decode_cnode(const struct invocation *inv, struct cnode_op *op)
{
    struct tcb *t = inv->caller;
    if (inv->label < INV_CNODE_REVOKE || inv->label > INV_CNODE_ROTATE)
        return error0(ERR_ILLEGAL_OPERATION);
    if (inv->length < 2)
        return error0(ERR_TRUNCATED_MESSAGE);
    op->label = inv->label;
    struct syscall_error e = lookup_slot_checked(false, inv->cap, get_mr(t, MR_INDEX), get_mr(t, MR_DEPTH), &op->dest);
    if (e.code != ERR_NONE)
        return e;
    switch (inv->label) {
    case INV_CNODE_REVOKE:
    case INV_CNODE_DELETE:
        return no_error();
    case INV_CNODE_CANCEL_BADGED_SENDS:
        if (!has_cancel_send_rights(op->dest->cap))
            return error0(ERR_ILLEGAL_OPERATION);
        return no_error();
    case INV_CNODE_ROTATE:
        return decode_rotate(inv, op);
    default:
        return decode_copy_like(inv, op);
    }
}

/* Does what the decoded invocation asks. Only Revoke, Delete and
 * CancelBadgedSends can stop early, at a preemption point (ERR_PREEMPTED),
 * with the derivation tree or the endpoint queue consistent; the rest
 * cannot fail. */
static struct syscall_error perform_cnode(const struct cnode_op *op)
{
    cte_t *dest = op->dest;
    switch (op->label) {
    case INV_CNODE_REVOKE:
        return cte_revoke(dest);
    case INV_CNODE_DELETE:
        return cte_delete(dest, true);
    case INV_CNODE_CANCEL_BADGED_SENDS:
        /* A non-zero badge restarts every sender queued on the endpoint
         * with that badge (seL4's cancelBadgedSends; endpoint.c,
         * preemptible); badge 0 is a no-op. */
        if (cap_badge(dest->cap) != 0 &&
            endpoint_cancel_badged_sends(endpoint_from_cap(dest->cap), cap_badge(dest->cap)))
            return preempted();
        return no_error();
    case INV_CNODE_ROTATE:
        if (op->src == dest) {
            cdt_swap(op->new_src, op->src, op->new_pivot, op->pivot); /* src gets the pivot's cap and vice versa */
        } else {
            cdt_move(op->new_pivot, op->pivot, dest);
            cdt_move(op->new_src, op->src, op->pivot);
        }
        return no_error();
    default: /* Copy, Mint, Move, Mutate */
        if (op->move)
            cdt_move(op->new_cap, op->src, dest);
        else
            cte_insert(op->new_cap, op->src, dest);
        return no_error();
    }
}

struct syscall_error invoke_cnode(struct invocation *inv)
{
    struct cnode_op op;
    struct syscall_error e = decode_cnode(inv, &op);
    if (e.code != ERR_NONE)
        return e;
    return perform_cnode(&op);
}
