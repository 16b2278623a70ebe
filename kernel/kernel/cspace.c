/* Capability lookup and the basic derivation-tree insertion. */
#include <cspace.h>
#include <kernel.h>

struct lookup_result resolve_address_bits(cap_t node, cptr_t cptr, word_t depth)
{
    struct lookup_result r = {NULL, depth, {LOOKUP_INVALID_ROOT, 0, 0, 0}};
    if (cap_type(node) != CAP_CNODE)
        return r;
    word_t remaining = depth;
    /* Every level consumes at least one bit (a CNode's radix is at least 1),
     * so at most 64 iterations: the bound the analyser relies on. */
    for (int level = 0; level < 64; level++) {
        word_t radix = cap_cnode_radix(node);
        word_t guard_size = cap_cnode_guard_size(node);
        word_t level_bits = radix + guard_size;
        if (level_bits > remaining) {
            r.failure.type = LOOKUP_DEPTH_MISMATCH;
            r.failure.bits_left = remaining;
            r.failure.bits_found = level_bits;
            return r;
        }
        word_t guard = guard_size == 0 ? 0 : (cptr >> (remaining - guard_size)) & MASK(guard_size);
        if (guard_size != 0 && guard != (cap_cnode_guard(node) & MASK(guard_size))) {
            r.failure.type = LOOKUP_GUARD_MISMATCH;
            r.failure.bits_left = remaining;
            r.failure.guard_found = cap_cnode_guard(node);
            r.failure.bits_found = guard_size;
            return r;
        }
        word_t index = radix == 0 ? 0 : (cptr >> (remaining - level_bits)) & MASK(radix);
        cte_t *slot = cnode_slots(node) + index;
        remaining -= level_bits;
        if (remaining == 0 || cap_type(slot->cap) != CAP_CNODE) {
            r.slot = slot;
            r.bits_remaining = remaining;
            return r;
        }
        node = slot->cap;
    }
    r.failure.type = LOOKUP_DEPTH_MISMATCH;
    r.failure.bits_left = remaining;
    return r;
}

struct lookup_result lookup_cap_slot(struct tcb *t, cptr_t cptr)
{
    return resolve_address_bits(t->slots[TCB_SLOT_CSPACE].cap, cptr, 64);
}

struct lookup_result lookup_slot_for_cnode_op(cap_t root, cptr_t index, word_t depth)
{
    struct lookup_result r = resolve_address_bits(root, index, depth);
    if (r.slot && r.bits_remaining != 0) {
        /* Reached a non-CNode cap with bits left. */
        r.failure.type = LOOKUP_DEPTH_MISMATCH;
        r.failure.bits_left = r.bits_remaining;
        r.failure.bits_found = 0;
        r.slot = NULL;
    }
    return r;
}

void cte_insert_original(cap_t c, cte_t *dest, bool revocable)
{
    dest->cap = c;
    dest->mdb.prev = 0;
    dest->mdb.next = revocable ? MDB_REVOCABLE : 0;
}

void cte_insert(cap_t new_cap, cte_t *src, cte_t *dest)
{
    cte_t *next = mdb_next(src);
    dest->cap = new_cap;
    dest->mdb.prev = (word_t)src;
    dest->mdb.next = (word_t)next; /* a copy is not revocable */
    if (next)
        next->mdb.prev = (word_t)dest;
    src->mdb.next = (word_t)dest | (src->mdb.next & MDB_FLAGS);
}
