/* Capability addressing: resolving a cptr through a tree of CNodes. */
#ifndef KAIROS_CSPACE_H
#define KAIROS_CSPACE_H

#include <arch/memory.h>
#include <object.h>

/* seL4 lookup-failure types (reported to user as type + 1). */
enum lookup_failure_type {
    LOOKUP_INVALID_ROOT = 0,
    LOOKUP_MISSING_CAPABILITY = 1,
    LOOKUP_DEPTH_MISMATCH = 2,
    LOOKUP_GUARD_MISMATCH = 3,
};

struct lookup_failure {
    enum lookup_failure_type type;
    word_t bits_left;
    word_t guard_found;
    word_t bits_found;
};

struct lookup_result {
    cte_t *slot;                 /* NULL on failure */
    word_t bits_remaining;       /* bits not consumed when the walk stopped */
    struct lookup_failure failure;
};

/* Walk cptr's top `depth` bits from the CNode cap `root` (seL4's
 * resolveAddressBits). Stops at the first non-CNode cap reached; fails
 * (DepthMismatch, bits found 0) where it would enter a CNode beyond the
 * CONFIG_MAX_CSPACE_DEPTH-th. */
struct lookup_result resolve_address_bits(cap_t root, cptr_t cptr, word_t depth);
/* Look up a cap for invocation: depth 64 from the thread's CSpace root. */
struct lookup_result lookup_cap_slot(struct tcb *t, cptr_t cptr);
/* CNode-style slot lookup (index, depth): the walk must end exactly at depth. */
struct lookup_result lookup_slot_for_cnode_op(cap_t root, cptr_t index, word_t depth);

static inline cte_t *cnode_slots(cap_t cnode) { return (cte_t *)paddr_to_kptr(cap_obj(cnode)); }
/* The same with the low bits cleared: a CNode is an object aligned to its
 * size, a multiple of a slot, so the mask changes nothing; it shows the
 * WCET analysis that a slot address is a multiple of 32 (a cap's two words
 * then share a line), which it cannot tell from the cap's address field
 * (docs/wcet.md "Interrupt latency"). One instruction more per level, so
 * the fastpath's walk does without it. */
static inline cte_t *cnode_slots_aligned(cap_t cnode)
{
    return (cte_t *)((word_t)cnode_slots(cnode) & ~(word_t)MASK(SLOT_BITS));
}

/* The slot resolve_address_bits(root, cptr, 64) finds, or NULL, without the
 * failure details (which a cap fault does not report under MCS), walking
 * at most max_levels CNodes (NULL if more are needed; max_levels <=
 * CONFIG_MAX_CSPACE_DEPTH). Kept inline: it is the first thing every system
 * call does. The fewest instructions: the fastpath and the invocation's
 * own lookup use it (make bench); cspace_walk_lines below is the same walk
 * shaped for the WCET analysis. */
static ALWAYS_INLINE cte_t *cspace_walk(cap_t node, cptr_t cptr, int max_levels)
{
    word_t remaining = 64;
    for (int level = 0; level < max_levels; level++) {
        if (cap_type(node) != CAP_CNODE)
            return NULL;
        word_t radix = cap_cnode_radix(node);
        word_t guard_size = cap_cnode_guard_size(node);
        word_t level_bits = radix + guard_size;
        if (level_bits > remaining)
            return NULL;
        if (guard_size != 0 &&
            ((cptr >> (remaining - guard_size)) & MASK(guard_size)) != cap_cnode_guard(node))
            return NULL;
        remaining -= level_bits;
        cte_t *slot = cnode_slots(node) + ((cptr >> remaining) & MASK(radix));
        if (remaining == 0 || cap_type(slot->cap) != CAP_CNODE)
            return slot;
        node = slot->cap;
    }
    return NULL;
}

/* The checks of one lookup level on the CNode cap node with `remaining`
 * bits of the cptr left: a CNode cap, enough bits for its guard and radix,
 * the guard matching. All are computed on the cap's two words together,
 * without a branch between their reads: the WCET analysis charges the
 * lines read through a pointer of unknown value per basic block, and a
 * guard word read after a branch on the type cost a second miss per level
 * (docs/wcet.md "Interrupt latency"). The shift count is masked: it is
 * below 64 whenever the guard is compared (guard_size <= remaining), and
 * the mask keeps the shift defined when it is not (the result is then
 * ignored). Guard sizes are at most 63 for every CNode cap (updateCapData
 * keeps guard size + radix <= 64 with radix >= 1). */
struct cnode_level {
    word_t radix, guard_size, level_bits;
    word_t not_cnode; /* node is not a CNode cap */
    word_t guard_short;  /* too few bits for the guard */
    word_t guard_differs; /* the guard differs (valid if not guard_short) */
    word_t too_deep;     /* too few bits for guard and radix (implied by guard_short) */
};

static ALWAYS_INLINE struct cnode_level cnode_level_check(cap_t node, cptr_t cptr, word_t remaining)
{
    struct cnode_level l;
    l.radix = cap_cnode_radix(node);
    l.guard_size = cap_cnode_guard_size(node);
    l.level_bits = l.radix + l.guard_size;
    word_t found = (cptr >> ((remaining - l.guard_size) & 63)) & MASK(l.guard_size);
    l.not_cnode = cap_type(node) != CAP_CNODE;
    l.guard_short = l.guard_size > remaining;
    l.guard_differs = (l.guard_size != 0) & (found != cap_cnode_guard(node));
    l.too_deep = l.level_bits > remaining;
    return l;
}

/* cspace_walk's result, computed so that the WCET analysis charges one line
 * per level (lookup_slot: the extra caps, the reply and receive slots):
 * each level's checks (cnode_level_check) test the previous slot's cap. */
static ALWAYS_INLINE cte_t *cspace_walk_lines(cap_t node, cptr_t cptr, int max_levels)
{
    word_t remaining = 64;
    cte_t *slot = NULL; /* where node was read (NULL: the root) */
    for (int level = 0; level < max_levels; level++) {
        struct cnode_level l = cnode_level_check(node, cptr, remaining);
        if (l.not_cnode | l.guard_differs | l.too_deep)
            return l.not_cnode ? slot : NULL; /* a slot holding no CNode cap ends the walk there */
        remaining -= l.level_bits;
        slot = cnode_slots_aligned(node) + ((cptr >> remaining) & MASK(l.radix));
        if (remaining == 0)
            return slot;
        node = slot->cap;
    }
    /* max_levels CNodes walked: the last slot is the answer unless it
     * holds a CNode cap that bits are left for. */
    return cap_type(node) != CAP_CNODE ? slot : NULL;
}
/* lookup_cap_slot(t, cptr).slot: the cap t names for an invocation. */
cte_t *lookup_slot(struct tcb *t, cptr_t cptr);

/* Insert new_cap into the empty dest slot as a child of src in the
 * derivation tree (seL4's cteInsert). */
void cte_insert(cap_t new_cap, cte_t *src, cte_t *dest);
/* Place a cap with no parent (boot-time original caps). */
void cte_insert_original(cap_t c, cte_t *dest, bool revocable);

#endif
