/* The capability derivation tree (mdb links in each slot) and the slot
 * operations built on it. Implemented in kernel/kernel/cdt.c; the design
 * (zombies, preemption, the longest non-preemptible step) is described at the
 * top of that file and in docs/object-model.md. */
#ifndef KAIROS_CDT_H
#define KAIROS_CDT_H

#include <invocation.h>
#include <object.h>

/* Is `child` a descendant of `parent` (seL4's isMDBParentOf, applied to the
 * slot that follows parent in the list)? */
bool cdt_is_parent_of(const cte_t *parent, const cte_t *child);
/* Does the slot have any children in the derivation tree? */
bool cdt_has_children(const cte_t *slot);
/* Insert a freshly created object cap after `parent` (an untyped), revocable
 * and first-badged as seL4's insertNewCap does. */
void cdt_insert_new_cap(cte_t *parent, cte_t *dest, cap_t c);
/* Move a cap from src to the empty slot dest, keeping its place in the tree
 * (seL4's cteMove): dest gets new_cap and src's links, src becomes empty. */
void cdt_move(cap_t new_cap, cte_t *src, cte_t *dest);
/* Exchange two slots' places in the tree (seL4's cteSwap): s1 gets c2 and the
 * links s2 had, s2 gets c1 and the links s1 had. */
void cdt_swap(cap_t c1, cte_t *s1, cap_t c2, cte_t *s2);
/* Is this the last cap to its object (no other slot names the same object)? */
bool cdt_is_final_cap(const cte_t *slot);
/* seL4's slotCapLongRunningDelete: would deleting this slot's cap take a
 * long (preemptible) operation? True for the last cap to a TCB or a CNode,
 * and for a zombie. TCB_Configure/SetSpace refuse such slots. */
bool cdt_slot_long_running_delete(const cte_t *slot);

/* Delete the cap in slot: finalise the object if it is the last cap.
 * exposed = true is the user-visible delete (CNode_Delete, revoke, replacing
 * a TCB's cap): the slot is empty afterwards. exposed = false is seL4's
 * internal form used on the slots of an object being destroyed.
 * Preemptible: ERR_PREEMPTED leaves things consistent; the caller returns it
 * and the system call is restarted, continuing where this one stopped. */
struct syscall_error cte_delete(cte_t *slot, bool exposed);
/* Delete every descendant of slot, one child at a time from the front
 * (preemptible in the same way). */
struct syscall_error cte_revoke(cte_t *slot);

/* CNode-operation slot lookup with all of seL4's checks (lookupSlotForCNodeOp):
 * root not a CNode → FailedLookup(source, InvalidRoot); depth outside 1..64 →
 * RangeError(1, 64); the walk fails or ends with bits left → FailedLookup.
 * On success *slot is the slot (possibly empty). Implemented in cspace.c. */
struct syscall_error lookup_slot_checked(bool source, cap_t root, cptr_t index, word_t depth, cte_t **slot);

/* Zombie caps: what is left of the last cap to a CNode or a TCB while the
 * slots inside the object are being emptied. w0: obj = the object's physical
 * address, field_a = radix (CNode) | ZOMBIE_TCB; w1 = number of slots of the
 * object (from index 0) that may still hold caps. */
#define ZOMBIE_TCB (1ul << 6)
static inline cap_t cap_zombie(paddr_t obj, bool tcb, word_t radix, word_t n)
{
    return cap_make(CAP_ZOMBIE, tcb ? ZOMBIE_TCB : (radix & 0x3f), obj, n);
}
static inline bool cap_zombie_is_tcb(cap_t c) { return (cap_field_a(c) & ZOMBIE_TCB) != 0; }
static inline word_t cap_zombie_radix(cap_t c) { return cap_field_a(c) & 0x3f; }
static inline word_t cap_zombie_number(cap_t c) { return c.w1; }
static inline cap_t cap_zombie_set_number(cap_t c, word_t n)
{
    c.w1 = n;
    return c;
}
/* First slot of the object a zombie names (a CNode's slot 0, a TCB's slots[0]). */
cte_t *zombie_slots(cap_t z);

#if CONFIG_INVARIANT_CHECKS
/* For the invariant checker: per-slot derivation-tree facts (NULL if they
 * hold, else what is wrong), and the length of the list from a head slot
 * (prev = 0), counting at most limit + 1. Every non-empty slot must be on
 * exactly one list: the lengths from all heads add up to the number of caps. */
const char *cdt_check_slot(const cte_t *s);
word_t cdt_list_length(const cte_t *head, word_t limit);
#endif

#endif
