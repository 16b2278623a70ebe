/* The capability derivation tree (mdb links in each slot) and the slot
 * operations built on it. Implemented in kernel/kernel/cdt.c. */
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
/* Move a cap from src to the empty slot dest, keeping its place in the tree. */
void cdt_move(cap_t new_cap, cte_t *src, cte_t *dest);
/* Exchange two caps (Rotate with two slots). */
void cdt_swap(cap_t c1, cte_t *s1, cap_t c2, cte_t *s2);
/* Is this the last cap to its object (no other slot names the same object)? */
bool cdt_is_final_cap(const cte_t *slot);

/* Delete the cap in slot: finalise the object if it is the last cap.
 * Preemptible: ERR_PREEMPTED leaves things consistent and the caller restarts. */
struct syscall_error cte_delete(cte_t *slot, bool exposed);
/* Delete every descendant of slot (preemptible in the same way). */
struct syscall_error cte_revoke(cte_t *slot);
/* Empty a slot whose cap needs no finalisation (used once finalised). */
void cte_delete_one(cte_t *slot);

#endif
