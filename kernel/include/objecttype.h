/* Operations on caps that depend on the object type: derivation, rights
 * masking, badge/guard updates, identity, finalisation and creation.
 * Generic types in kernel/object/objecttype.c and untyped.c; RISC-V types
 * (frames, page tables, ASID control/pools) in arch/riscv/object/objecttype.c. */
#ifndef KAIROS_OBJECTTYPE_H
#define KAIROS_OBJECTTYPE_H

#include <invocation.h>
#include <object.h>

struct derive_result {
    enum error_code status; /* ERR_NONE, ERR_REVOKE_FIRST or ERR_ILLEGAL_OPERATION */
    cap_t cap;
};

struct derive_result derive_cap(cte_t *slot, cap_t c);
cap_t mask_cap_rights(word_t rights, cap_t c);
/* Mint/Mutate word: badge for endpoints and notifications, guard for CNodes.
 * `preserve` is Mutate/Rotate's semantics (may yield a null cap). */
cap_t update_cap_data(bool preserve, word_t data, cap_t c);
bool same_region_as(cap_t a, cap_t b);
bool same_object_as(cap_t a, cap_t b);
bool cap_is_physical(cap_t c);
/* Address and size of the object a cap names (for CDT parenthood). */
paddr_t cap_object_base(cap_t c);
word_t cap_object_size(cap_t c);

/* The last cap to a CNode or TCB leaves a zombie naming the object's slots,
 * which the delete loops (cdt.c) empty one per step; every other type is
 * finalised in one step and its slot emptied at once. */
static inline bool cap_leaves_zombie(cap_t c)
{
    word_t t = cap_type(c);
    return t == CAP_CNODE || t == CAP_THREAD || t == CAP_ZOMBIE;
}

/* Finalise cap c of a type that leaves no zombie (final: the last cap to
 * its object). Returns false if it stopped at a preemption point (an
 * endpoint or notification with threads still to restart, an IRQ handler's
 * notification cap): the cap stays and the delete is re-executed;
 * otherwise the slot may be emptied. The flag is the return value, in a
 * register, so that the WCET analysis's unwinding facts (docs/wcet.md)
 * follow it from a taken poll up to the delete loops' tests. */
bool finalise_cap(cap_t c, bool final);
/* A CNode, TCB or zombie cap (cap_leaves_zombie): the zombie to reduce, or
 * null when c is not the last cap to its object. Two functions, not one
 * with a remainder: the delete loops then branch on the cap's type before
 * any finalisation, so no path (the WCET analysis's included) finalises an
 * SC and then reduces a zombie in the same step. */
cap_t finalise_to_zombie(cap_t c, bool final);

/* Create one object of `type` at paddr (zeroed memory) and return its cap. */
cap_t create_object(enum object_type type, paddr_t paddr, word_t size_bits, bool device);
/* Object size in bits for a type, given the user size argument (e.g. a
 * CNode of 2^radix slots is radix + 5 bits). */
word_t object_size_bits(enum object_type type, word_t user_size_bits);

/* RISC-V parts (arch/riscv/object/objecttype.c). */
struct derive_result arch_derive_cap(cte_t *slot, cap_t c);
cap_t arch_mask_cap_rights(word_t rights, cap_t c);
bool arch_same_region_as(cap_t a, cap_t b);
bool arch_same_object_as(cap_t a, cap_t b);
/* Never preempted, never a remainder. */
void arch_finalise_cap(cap_t c, bool final);
cap_t arch_create_object(enum object_type type, paddr_t paddr, word_t size_bits, bool device);
word_t arch_object_size_bits(enum object_type type);

/* Per-object finalisation hooks. */
void tcb_finalise(struct tcb *t);                      /* object/tcb.c */

/* Thread admission (object/tcb.c; docs/object-model.md "Thread limit"): at
 * most CONFIG_MAX_THREADS TCBs exist, the root thread's included. tcb_room
 * is how many more may be made; tcb_count_new records one made (retype,
 * boot); tcb_finalise gives its count back. */
word_t tcb_room(void);
void tcb_count_new(void);
/* KAIROS_COUNTER_THREADS and _THREADS_MAX (debug builds), else 0. */
u64 tcb_debug_counter(word_t id);
void sched_context_finalise(struct sched_context *sc); /* object/schedcontext.c */

#endif
