/* Capability addressing (seL4's resolveAddressBits, lookupSlot,
 * lookupSlotForCNodeOp) and insertion of derived caps (cteInsert).
 *
 * Lookup semantics (seL4's resolveAddressBits and lookupSlot* in src/kernel/cspace.c; docs/object-model.md):
 * at every CNode the guard is checked first (guard size larger than the bits
 * left, or a different guard value: GuardMismatch), then the level must fit
 * in the bits left (DepthMismatch with bitsFound = guard size + radix); the
 * walk stops successfully when the bits run out or when the slot reached
 * holds anything but a CNode cap (the caller decides whether bits left over
 * are an error). */
#include <cdt.h>
#include <cspace.h>
#include <kernel.h>
#include <objecttype.h>

struct lookup_result resolve_address_bits(cap_t node, cptr_t cptr, word_t depth)
{
    struct lookup_result r = {NULL, depth, {LOOKUP_INVALID_ROOT, 0, 0, 0}};
    if (cap_type(node) != CAP_CNODE)
        return r;
    word_t remaining = depth;
    cte_t *slot = NULL; /* where node was read (the root: checked above) */
    /* At most CONFIG_MAX_CSPACE_DEPTH CNodes, whatever the cptr: the
     * enforced bound of the decode loop (seL4 would go on, up to 64). */
    for (int level = 0; level < CONFIG_MAX_CSPACE_DEPTH; level++) {
        /* The previous slot's "not a CNode cap" test is made here, with
         * this level's checks on both words of node (cnode_level_check).
         * The failures are reported in seL4's order: the slot reached, the
         * guard, then the depth. */
        struct cnode_level l = cnode_level_check(node, cptr, remaining);
        word_t bad_guard = l.guard_short | l.guard_differs;
        if (l.not_cnode | bad_guard | l.too_deep) {
            if (l.not_cnode) {
                r.slot = slot;
                r.bits_remaining = remaining;
            } else if (bad_guard) {
                r.failure.type = LOOKUP_GUARD_MISMATCH;
                r.failure.bits_left = remaining;
                r.failure.guard_found = cap_cnode_guard(node);
                r.failure.bits_found = l.guard_size;
            } else {
                r.failure.type = LOOKUP_DEPTH_MISMATCH;
                r.failure.bits_left = remaining;
                r.failure.bits_found = l.level_bits;
            }
            return r;
        }
        word_t index = (cptr >> (remaining - l.level_bits)) & MASK(l.radix);
        slot = cnode_slots_aligned(node) + index;
        remaining -= l.level_bits;
        if (remaining == 0) {
            r.slot = slot;
            r.bits_remaining = 0;
            return r;
        }
        node = slot->cap;
    }
    if (cap_type(node) != CAP_CNODE) {
        r.slot = slot;
        r.bits_remaining = remaining;
        return r;
    }
    /* The last allowed level held a CNode cap and bits are left: the walk
     * may not enter it. Reported as a walk that stopped with bits left
     * (DepthMismatch, bits found 0), the error a CNode-style lookup gives
     * at a non-CNode cap. */
    r.failure.type = LOOKUP_DEPTH_MISMATCH;
    r.failure.bits_left = remaining;
    r.failure.bits_found = 0;
    return r;
}

struct lookup_result lookup_cap_slot(struct tcb *t, cptr_t cptr)
{
    return resolve_address_bits(t->slots[TCB_SLOT_CSPACE].cap, cptr, 64);
}

cte_t *lookup_slot(struct tcb *t, cptr_t cptr)
{
    return cspace_walk_lines(t->slots[TCB_SLOT_CSPACE].cap, cptr, CONFIG_MAX_CSPACE_DEPTH);
}

struct lookup_result lookup_slot_for_cnode_op(cap_t root, cptr_t index, word_t depth)
{
    struct lookup_result r = resolve_address_bits(root, index, depth);
    if (r.slot && r.bits_remaining != 0) {
        /* Reached a non-CNode cap (or an empty slot) with bits left. */
        r.failure.type = LOOKUP_DEPTH_MISMATCH;
        r.failure.bits_left = r.bits_remaining;
        r.failure.bits_found = 0;
        r.slot = NULL;
    }
    return r;
}

struct syscall_error lookup_slot_checked(bool source, cap_t root, cptr_t index, word_t depth, cte_t **slot)
{
    *slot = NULL;
    if (cap_type(root) != CAP_CNODE) {
        struct lookup_failure f = {LOOKUP_INVALID_ROOT, 0, 0, 0};
        return failed_lookup_error(source, &f);
    }
    if (depth < 1 || depth > 64)
        return range_error(1, 64);
    struct lookup_result r = lookup_slot_for_cnode_op(root, index, depth);
    if (!r.slot)
        return failed_lookup_error(source, &r.failure);
    *slot = r.slot;
    return no_error();
}

void cte_insert_original(cap_t c, cte_t *dest, bool revocable)
{
    /* seL4's insertInitCap: an original cap is revocable and the first of
     * its badge (it has no parent). */
    dest->cap = c;
    dest->mdb.prev = 0;
    dest->mdb.next = revocable ? (MDB_REVOCABLE | MDB_FIRST_BADGED) : 0;
}

/* seL4's isCapRevocable: may the derived cap have children of its own? */
static bool cap_is_revocable(cap_t derived, cap_t src)
{
    switch (cap_type(derived)) {
    case CAP_ENDPOINT:
    case CAP_NOTIFICATION:
        /* A newly badged cap starts a badge's subtree. */
        return cap_badge(derived) != cap_badge(src);
    case CAP_IRQ_HANDLER:
        return cap_type(src) == CAP_IRQ_CONTROL;
    case CAP_UNTYPED:
        return true;
    default:
        /* Every RISC-V cap and every other generic cap: no. */
        return false;
    }
}

/* Each slot is visited once: everything needed from src is read and src
 * is written, then dest is checked and written, then the next slot's back
 * link. The WCET analysis places the three slots anywhere, so a miss on
 * one may evict another's line; code that goes back and forth between
 * them (as the plain order of seL4's cteInsert does) pays a miss at every
 * switch (docs/processor-model.md §3 "Symbolic lines"). */
void cte_insert(cap_t new_cap, cte_t *src, cte_t *dest)
{
    cap_t src_cap = src->cap;
    word_t src_next = src->mdb.next;
    bool revocable = cap_is_revocable(new_cap, src_cap);
    /* A copy of an untyped takes over its free memory: the source is marked
     * full so that only the copy can allocate (seL4's setUntypedCapAsFull). */
    if (cap_type(src_cap) == CAP_UNTYPED && cap_type(new_cap) == CAP_UNTYPED &&
        cap_obj(src_cap) == cap_obj(new_cap) && cap_untyped_size_bits(src_cap) == cap_untyped_size_bits(new_cap))
        src->cap.w1 = 1ul << cap_untyped_size_bits(src_cap); /* cap.h: w1 = watermark */
    src->mdb.next = (word_t)dest | (src_next & MDB_FLAGS);
    cte_t *next = (cte_t *)(src_next & ~MDB_FLAGS);
    /* One test of all three words (bitwise &), so the check is one run of reads. */
    kassert(cap_is_null(dest->cap) & (dest->mdb.next == 0) & (dest->mdb.prev == 0));
    /* Word by word: a structure copy makes gcc store new_cap on the stack
     * and read it back here, between the accesses to dest. */
    dest->cap.w0 = new_cap.w0;
    dest->cap.w1 = new_cap.w1;
    dest->mdb.prev = (word_t)src;
    dest->mdb.next = (word_t)next | (revocable ? (MDB_REVOCABLE | MDB_FIRST_BADGED) : 0);
    if (next)
        next->mdb.prev = (word_t)dest;
}
