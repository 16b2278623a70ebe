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
 * resolveAddressBits). Stops at the first non-CNode cap reached. */
struct lookup_result resolve_address_bits(cap_t root, cptr_t cptr, word_t depth);
/* Look up a cap for invocation: depth 64 from the thread's CSpace root. */
struct lookup_result lookup_cap_slot(struct tcb *t, cptr_t cptr);
/* CNode-style slot lookup (index, depth): the walk must end exactly at depth. */
struct lookup_result lookup_slot_for_cnode_op(cap_t root, cptr_t index, word_t depth);

static inline cte_t *cnode_slots(cap_t cnode) { return (cte_t *)paddr_to_kptr(cap_obj(cnode)); }

/* Insert new_cap into the empty dest slot as a child of src in the
 * derivation tree (seL4's cteInsert). */
void cte_insert(cap_t new_cap, cte_t *src, cte_t *dest);
/* Place a cap with no parent (boot-time original caps). */
void cte_insert_original(cap_t c, cte_t *dest, bool revocable);

#endif
