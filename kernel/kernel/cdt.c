/* The capability derivation tree (CDT) and the slot operations built on it:
 * move, swap, finality, deletion with finalisation, and revocation.
 *
 * The tree is seL4's mapping database: every slot holding a cap is on one
 * doubly linked list in depth-first order of derivation. A slot's children
 * follow it directly and are recognised by seL4's isMDBParentOf: the parent
 * is marked revocable and names a region containing the child's; for badged
 * endpoint/notification caps the child must carry the same badge and must
 * not itself be the first cap of that badge (MDB_FIRST_BADGED).
 *
 * Deletion (seL4's cteDelete/finaliseSlot/reduceZombie, made iterative).
 * Deleting the last cap to a CNode or TCB first turns it into a Zombie cap
 * naming the object's slots [0, n); the zombie is then reduced one slot at a
 * time, from the end: the slot's cap is deleted with the "unexposed" form of
 * delete and n is decremented. The unexposed form handles a cap that is
 * itself the last cap to a CNode or TCB by swapping its zombie into that
 * object's own slot 0 (where it is self-referential) and carrying on with
 * whatever was in slot 0; such a self-referential zombie is unreachable and
 * is reduced when its memory is revoked (its untyped is revoked), exactly as
 * in seL4. So the exposed loop calls the unexposed loop and nothing calls
 * back: there is no recursion, and each loop iteration is one bounded step
 * followed by a preemption point.
 *
 * Preemption. Revoke deletes the first child, takes a preemption point, and
 * repeats; a child being deleted keeps its progress in its zombie (the slot
 * count n), so a restarted Revoke or Delete continues where it stopped: every
 * intermediate state is an ordinary CDT with zombies in it. Zombies are
 * invisible to lookups as CNodes (a zombie is not a CNode cap), cannot be
 * invoked (InvalidCapability) or copied (derive gives null), but can be moved
 * and deleted like any cap.
 *
 * Longest non-preemptible step: the finalisation of one cap (finalise_cap:
 * unmapping one frame or page table, freeing an ASID pool's entry, unbinding
 * one scheduling context; finalise_to_zombie: suspending and unbinding one
 * thread), plus is-final (two neighbour comparisons) and one swap or unlink
 * (O(1) pointer updates). A preemption point follows every completed delete
 * of a slot and every cap turned into a zombie, so a region holds at most
 * one object's finalisation, never one and then what the system call does
 * after the delete (a TCB configure's insert, the reply, the exit). No step
 * depends on the size of a CNode or on the number of caps. */
#include <arch/memory.h>
#include <cdt.h>
#include <invariants.h>
#include <kernel.h>
#include <objecttype.h>
#include <preemption.h>
#include <thread.h>

/* Only computes an address (cdt set: its contract is taken as given). */
/*@ assigns \nothing; */
cte_t *zombie_slots(cap_t z)
{
    if (cap_zombie_is_tcb(z))
        return tcb_from_paddr(cap_obj(z))->slots;
    return (cte_t *)paddr_to_kptr(cap_obj(z));
}

/* The proofs (make prove, set `cdt`; docs/proofs.md "Capability derivation
 * tree") state each list operation by what it does to the slots around the
 * place it works at: the links between them afterwards, the flags kept, and
 * (the assigns clauses) that no other word of any slot changes. So a list
 * whose neighbours point at each other before still does afterwards. */
/*@
  logic cte_t *prev_slot(cte_t *s) = (cte_t *)s->mdb.prev;
  logic cte_t *next_slot(cte_t *s) = link_slot(s->mdb.next);
  logic integer flags(cte_t *s) = s->mdb.next & MDB_FLAGS;
  // s is NULL, or a valid slot apart from a and b.
  predicate nb_ok(cte_t *s, cte_t *a, cte_t *b) = s == \null || (\valid(s) && \separated(s, a, b));
  // s is NULL, or a valid slot apart from a.
  predicate nb_ok1(cte_t *s, cte_t *a) = s == \null || (\valid(s) && \separated(s, a));
  // a and b, where both are slots, are apart; apart4: four of them pairwise.
  predicate apart2(cte_t *a, cte_t *b) = a != \null && b != \null ==> \separated(a, b);
  predicate apart4(cte_t *a, cte_t *b, cte_t *c, cte_t *d) =
    apart2(a, b) && apart2(a, c) && apart2(a, d) && apart2(b, c) && apart2(b, d) && apart2(c, d);
  // s holds cap c.
  predicate holds(cte_t *s, cap_t c) = s->cap.w0 == c.w0 && s->cap.w1 == c.w1;
  // s is NULL, or its two link words at New are those at Old.
  predicate kept{Old,New}(cte_t *s) = s == \null ||
    (\at(s->mdb.prev, New) == \at(s->mdb.prev, Old) && \at(s->mdb.next, New) == \at(s->mdb.next, Old));
  // p is NULL, or at New its successor is s, its flags and its prev word those at Old.
  predicate fwd{Old,New}(cte_t *p, cte_t *s) = p == \null ||
    (\at(next_slot(p), New) == s && \at(flags(p), New) == \at(flags(p), Old) &&
     \at(p->mdb.prev, New) == \at(p->mdb.prev, Old));
  // n is NULL, or at New its predecessor is s and its next word that at Old.
  predicate bwd{Old,New}(cte_t *n, cte_t *s) = n == \null ||
    (\at(prev_slot(n), New) == s && \at(n->mdb.next, New) == \at(n->mdb.next, Old));
*/

/* kassert's failure branch: the proofs require that it is never taken. */
/*@ requires \false;
    assigns \nothing;
    ensures \false; */
NORETURN void kernel_panic(const char *file, int line, const char *msg);

/* s's successor becomes next; s's flags stay. */
/*@ requires \valid(s);
    assigns s->mdb.next;
    ensures next_slot(s) == next;
    ensures flags(s) == \old(flags(s)); */
static inline void set_next(cte_t *s, cte_t *next) { s->mdb.next = mdb_link(next, s->mdb.next & MDB_FLAGS); }

bool cdt_is_parent_of(const cte_t *parent, const cte_t *child)
{
    if (!(parent->mdb.next & MDB_REVOCABLE))
        return false;
    /* A badged endpoint or notification cap is the parent of the caps with
     * its badge only, and not of the first cap badged with it (a new Mint's
     * child starts a list of its own). Checked before the region so that
     * same_region_as is the last thing done, a tail call: no stack frame
     * here or in cdt_has_children, whose stores the WCET analysis charges
     * as misses at an unknown stack (docs/wcet.md "Interrupt latency"). */
    enum cap_type t = cap_type(parent->cap);
    if (t == CAP_ENDPOINT || t == CAP_NOTIFICATION) {
        word_t badge = cap_badge(parent->cap);
        if (badge != 0 && (badge != cap_badge(child->cap) || (child->mdb.next & MDB_FIRST_BADGED)))
            return false;
    }
    return same_region_as(parent->cap, child->cap);
}

bool cdt_has_children(const cte_t *slot)
{
    const cte_t *next = mdb_next(slot);
    return next && cdt_is_parent_of(slot, next);
}

/* dest goes in between the parent and its old successor (n below). */
/*@ requires \valid(parent) && \valid(dest) && \separated(parent, dest);
    requires nb_ok(next_slot(parent), parent, dest);
    requires (dest->cap.w0 & 0x1f) == 0 && dest->mdb.next == 0 && dest->mdb.prev == 0;
    assigns dest->cap, dest->mdb, parent->mdb.next, next_slot(parent)->mdb.prev;
    ensures next_slot(parent) == dest && prev_slot(dest) == parent;
    ensures next_slot(dest) == \old(next_slot(parent));
    ensures succ_back: \let n = \old(next_slot(parent)); n != \null ==> prev_slot(n) == dest;
    ensures dest->cap.w0 == c.w0 && dest->cap.w1 == c.w1;
    ensures flags(dest) == (MDB_REVOCABLE | MDB_FIRST_BADGED) && flags(parent) == \old(flags(parent)); */
void cdt_insert_new_cap(cte_t *parent, cte_t *dest, cap_t c)
{
    kassert(cap_is_null(dest->cap) && dest->mdb.next == 0 && dest->mdb.prev == 0);
    cte_t *next = mdb_next(parent);
    /* The cap word by word: WP models a structure store as a havoc of its
     * cells plus a load equation, which made the goals after it time out;
     * the words compile to the same two stores. */
    dest->cap.w0 = c.w0;
    dest->cap.w1 = c.w1;
    dest->mdb.prev = (word_t)parent;
    dest->mdb.next = mdb_link(next, MDB_REVOCABLE | MDB_FIRST_BADGED);
    if (next)
        next->mdb.prev = (word_t)dest;
    set_next(parent, dest);
}

/* dest takes src's place between src's neighbours p and n. */
/*@ requires \valid(src) && \valid(dest) && \separated(src, dest) && (dest->cap.w0 & 0x1f) == 0;
    requires nb_ok(prev_slot(src), src, dest) && nb_ok(next_slot(src), src, dest);
    requires prev_slot(src) != \null && next_slot(src) != \null ==>
             \separated(prev_slot(src), next_slot(src));
    assigns src->cap, src->mdb, dest->cap, dest->mdb, prev_slot(src)->mdb.next,
            next_slot(src)->mdb.prev;
    // dest holds new_cap and src's two link words (its place and flags).
    ensures dest->cap.w0 == new_cap.w0 && dest->cap.w1 == new_cap.w1;
    ensures dest->mdb.prev == \old(src->mdb.prev) && dest->mdb.next == \old(src->mdb.next);
    // The neighbours point at dest; their other links and their flags stay.
    ensures \let p = \old(prev_slot(src)); p != \null ==>
            next_slot(p) == dest && flags(p) == \old(flags(p)) && p->mdb.prev == \old(p->mdb.prev);
    ensures \let n = \old(next_slot(src)); n != \null ==>
            prev_slot(n) == dest && n->mdb.next == \old(n->mdb.next);
    // src null and unlinked.
    ensures src->cap.w0 == 0 && src->cap.w1 == 0 && src->mdb.prev == 0 && src->mdb.next == 0; */
void cdt_move(cap_t new_cap, cte_t *src, cte_t *dest)
{
    kassert(src != dest && cap_is_null(dest->cap));
    /* Word by word, not as structures (see cdt_insert_new_cap): the same
     * stores. */
    mdb_t m = src->mdb;
    dest->cap.w0 = new_cap.w0;
    dest->cap.w1 = new_cap.w1;
    dest->mdb.prev = m.prev;
    dest->mdb.next = m.next;
    src->cap.w0 = 0;
    src->cap.w1 = 0;
    src->mdb.prev = 0;
    src->mdb.next = 0;
    /* The two slots' words, carried past each neighbour's store (each goal
     * then follows one store). */
    /*@ assert words: dest->cap.w0 == new_cap.w0 && dest->cap.w1 == new_cap.w1 &&
            dest->mdb.prev == m.prev && dest->mdb.next == m.next &&
            src->cap.w0 == 0 && src->cap.w1 == 0 && src->mdb.prev == 0 && src->mdb.next == 0; */
    cte_t *prev = (cte_t *)m.prev;
    cte_t *next = mdb_slot(m.next);
    if (prev)
        set_next(prev, dest);
    /*@ assert words_prev: dest->cap.w0 == new_cap.w0 && dest->cap.w1 == new_cap.w1 &&
            dest->mdb.prev == m.prev && dest->mdb.next == m.next &&
            src->cap.w0 == 0 && src->cap.w1 == 0 && src->mdb.prev == 0 && src->mdb.next == 0; */
    if (next)
        next->mdb.prev = (word_t)dest;
    /*@ assert words_next: dest->cap.w0 == new_cap.w0 && dest->cap.w1 == new_cap.w1 &&
            dest->mdb.prev == m.prev && dest->mdb.next == m.next &&
            src->cap.w0 == 0 && src->cap.w1 == 0 && src->mdb.prev == 0 && src->mdb.next == 0; */
}

/* s1 and s2 exchange their caps and their places in the list: each takes
 * the other's two link words (flags included) and the other's neighbours,
 * which are re-pointed at it. Adjacent slots are two behaviours of their
 * own (the code reads s2's links after re-pointing s1's neighbours, so it
 * needs s1's predecessor to be s2 when s2 comes first, and nothing of s2's
 * predecessor when s1 does). */
/*@ requires s1 != s2 ==> \valid(s1) && \valid(s2) && \separated(s1, s2);
    assigns s1->cap, s1->mdb, s2->cap, s2->mdb, prev_slot(s1)->mdb.next, next_slot(s1)->mdb.prev,
            prev_slot(s2)->mdb.next, next_slot(s2)->mdb.prev;
    behavior same:
      assumes s1 == s2;
      assigns \nothing;
    behavior apart:
      assumes s1 != s2 && next_slot(s1) != s2 && next_slot(s2) != s1;
      requires nb_ok(prev_slot(s1), s1, s2) && nb_ok(next_slot(s1), s1, s2) &&
               nb_ok(prev_slot(s2), s1, s2) && nb_ok(next_slot(s2), s1, s2);
      requires apart4(prev_slot(s1), next_slot(s1), prev_slot(s2), next_slot(s2));
      ensures holds(s1, c2) && holds(s2, c1);
      ensures s1->mdb.prev == \old(s2->mdb.prev) && s1->mdb.next == \old(s2->mdb.next);
      ensures s2->mdb.prev == \old(s1->mdb.prev) && s2->mdb.next == \old(s1->mdb.next);
      ensures fwd{Pre,Post}(\old(prev_slot(s1)), s2) && bwd{Pre,Post}(\old(next_slot(s1)), s2);
      ensures fwd{Pre,Post}(\old(prev_slot(s2)), s1) && bwd{Pre,Post}(\old(next_slot(s2)), s1);
    behavior next12:
      assumes s1 != s2 && next_slot(s1) == s2;
      requires nb_ok(prev_slot(s1), s1, s2) && nb_ok(next_slot(s2), s1, s2);
      requires apart2(prev_slot(s1), next_slot(s2));
      ensures holds(s1, c2) && holds(s2, c1);
      // p1 -> s2 -> s1 -> n2: s2 in s1's place (its prev word and flags), s1 in s2's.
      ensures s2->mdb.prev == \old(s1->mdb.prev) && next_slot(s2) == s1 && flags(s2) == \old(flags(s1));
      ensures prev_slot(s1) == s2 && s1->mdb.next == \old(s2->mdb.next);
      ensures fwd{Pre,Post}(\old(prev_slot(s1)), s2) && bwd{Pre,Post}(\old(next_slot(s2)), s1);
    behavior next21:
      assumes s1 != s2 && next_slot(s1) != s2 && next_slot(s2) == s1;
      requires prev_slot(s1) == s2;
      requires nb_ok(prev_slot(s2), s1, s2) && nb_ok(next_slot(s1), s1, s2);
      requires apart2(prev_slot(s2), next_slot(s1));
      ensures holds(s1, c2) && holds(s2, c1);
      // p2 -> s1 -> s2 -> n1: s1 in s2's place (its prev word and flags), s2 in s1's.
      ensures s1->mdb.prev == \old(s2->mdb.prev) && next_slot(s1) == s2 && flags(s1) == \old(flags(s2));
      ensures prev_slot(s2) == s1 && s2->mdb.next == \old(s1->mdb.next);
      ensures fwd{Pre,Post}(\old(prev_slot(s2)), s1) && bwd{Pre,Post}(\old(next_slot(s1)), s2);
    complete behaviors;
    disjoint behaviors; */
void cdt_swap(cap_t c1, cte_t *s1, cap_t c2, cte_t *s2)
{
    if (s1 == s2)
        return;
    s1->cap = c2;
    s2->cap = c1;
    /* What each store keeps and changes, for each behaviour (P1, N1, P2, N2:
     * s1's and s2's neighbours on entry); each goal follows one store. */
    /*@ assert caps: holds(s1, c2) && holds(s2, c1) && kept{Pre,Here}(s1) && kept{Pre,Here}(s2); */
    /*@ for apart: assert caps_apart: kept{Pre,Here}(\at(prev_slot(s1), Pre)) && kept{Pre,Here}(\at(next_slot(s1), Pre)) &&
          kept{Pre,Here}(\at(prev_slot(s2), Pre)) && kept{Pre,Here}(\at(next_slot(s2), Pre)); */
    /*@ for next12: assert caps_12: kept{Pre,Here}(\at(prev_slot(s1), Pre)) && kept{Pre,Here}(\at(next_slot(s2), Pre)); */
    /*@ for next21: assert caps_21: kept{Pre,Here}(\at(prev_slot(s2), Pre)) && kept{Pre,Here}(\at(next_slot(s1), Pre)); */
    /* Re-point s1's neighbours at s2 first, then read s2's links (which
     * that may just have changed if the two are adjacent), so adjacent
     * slots come out right in both orders. */
    mdb_t m1 = s1->mdb;
    cte_t *p = (cte_t *)m1.prev;
    cte_t *n = mdb_slot(m1.next);
    /*@ assert m1: m1.prev == \at(s1->mdb.prev, Pre) && m1.next == \at(s1->mdb.next, Pre) &&
          p == \at(prev_slot(s1), Pre) && n == \at(next_slot(s1), Pre); */
    if (p)
        set_next(p, s2);
    /*@ assert p1: holds(s1, c2) && holds(s2, c1) && fwd{Pre,Here}(\at(prev_slot(s1), Pre), s2); */
    /*@ for apart: assert p1_apart: kept{Pre,Here}(s1) && kept{Pre,Here}(s2) &&
          kept{Pre,Here}(\at(next_slot(s1), Pre)) && kept{Pre,Here}(\at(prev_slot(s2), Pre)) && kept{Pre,Here}(\at(next_slot(s2), Pre)); */
    /*@ for next12: assert p1_12: kept{Pre,Here}(s1) && kept{Pre,Here}(s2) && kept{Pre,Here}(\at(next_slot(s2), Pre)); */
    /*@ for next21: assert p1_21: kept{Pre,Here}(s1) && s2->mdb.prev == \at(s2->mdb.prev, Pre) &&
          kept{Pre,Here}(\at(next_slot(s1), Pre)) && kept{Pre,Here}(\at(prev_slot(s2), Pre)); */
    if (n)
        n->mdb.prev = (word_t)s2;
    /*@ assert n1: holds(s1, c2) && holds(s2, c1); */
    /*@ for apart: assert n1_apart: kept{Pre,Here}(s1) && kept{Pre,Here}(s2) &&
          fwd{Pre,Here}(\at(prev_slot(s1), Pre), s2) && bwd{Pre,Here}(\at(next_slot(s1), Pre), s2) && kept{Pre,Here}(\at(prev_slot(s2), Pre)) && kept{Pre,Here}(\at(next_slot(s2), Pre)); */
    /*@ for next12: assert n1_12: kept{Pre,Here}(s1) && prev_slot(s2) == s2 &&
          s2->mdb.next == \at(s2->mdb.next, Pre) && fwd{Pre,Here}(\at(prev_slot(s1), Pre), s2) && kept{Pre,Here}(\at(next_slot(s2), Pre)); */
    /*@ for next21: assert n1_21: kept{Pre,Here}(s1) && s2->mdb.prev == \at(s2->mdb.prev, Pre) &&
          next_slot(s2) == s2 && flags(s2) == \at(flags(s2), Pre) &&
          bwd{Pre,Here}(\at(next_slot(s1), Pre), s2) && kept{Pre,Here}(\at(prev_slot(s2), Pre)); */
    mdb_t m2 = s2->mdb;
    /*@ for apart: assert m2_apart: m2.prev == \at(s2->mdb.prev, Pre) && m2.next == \at(s2->mdb.next, Pre); */
    /*@ for next12: assert m2_12: (cte_t *)m2.prev == s2 && m2.next == \at(s2->mdb.next, Pre); */
    /*@ for next21: assert m2_21: m2.prev == \at(s2->mdb.prev, Pre) &&
          link_slot(m2.next) == s2 && (m2.next & MDB_FLAGS) == \at(flags(s2), Pre); */
    s1->mdb = m2;
    /*@ assert s1: holds(s1, c2) && holds(s2, c1) && s1->mdb.prev == m2.prev && s1->mdb.next == m2.next &&
          s2->mdb.prev == m2.prev && s2->mdb.next == m2.next; */
    /*@ for apart: assert s1_apart_1: fwd{Pre,Here}(\at(prev_slot(s1), Pre), s2) && bwd{Pre,Here}(\at(next_slot(s1), Pre), s2); */
    /*@ for apart: assert s1_apart_2: kept{Pre,Here}(\at(prev_slot(s2), Pre)) && kept{Pre,Here}(\at(next_slot(s2), Pre)); */
    /*@ for next12: assert s1_12: fwd{Pre,Here}(\at(prev_slot(s1), Pre), s2) && kept{Pre,Here}(\at(next_slot(s2), Pre)); */
    /*@ for next21: assert s1_21: bwd{Pre,Here}(\at(next_slot(s1), Pre), s2) && kept{Pre,Here}(\at(prev_slot(s2), Pre)); */
    s2->mdb = m1;
    /*@ assert s2: holds(s1, c2) && holds(s2, c1) && s1->mdb.prev == m2.prev && s1->mdb.next == m2.next &&
          s2->mdb.prev == m1.prev && s2->mdb.next == m1.next; */
    /*@ for apart: assert s2_apart_1: fwd{Pre,Here}(\at(prev_slot(s1), Pre), s2) && bwd{Pre,Here}(\at(next_slot(s1), Pre), s2); */
    /*@ for apart: assert s2_apart_2: kept{Pre,Here}(\at(prev_slot(s2), Pre)) && kept{Pre,Here}(\at(next_slot(s2), Pre)); */
    /*@ for next12: assert s2_12: fwd{Pre,Here}(\at(prev_slot(s1), Pre), s2) && kept{Pre,Here}(\at(next_slot(s2), Pre)); */
    /*@ for next21: assert s2_21: bwd{Pre,Here}(\at(next_slot(s1), Pre), s2) && kept{Pre,Here}(\at(prev_slot(s2), Pre)); */
    p = (cte_t *)m2.prev;
    n = mdb_slot(m2.next);
    /*@ for apart: assert m2_pn_apart: p == \at(prev_slot(s2), Pre) && n == \at(next_slot(s2), Pre); */
    /*@ for next12: assert m2_pn_12: p == s2 && n == \at(next_slot(s2), Pre); */
    /*@ for next21: assert m2_pn_21: p == \at(prev_slot(s2), Pre) && n == s2; */
    /*@ assert m2_pn: (p == \null || \valid(p)) && (n == \null || \valid(n)); */
    if (p)
        set_next(p, s1);
    /*@ for apart: assert p2_apart_c: holds(s1, c2) && holds(s2, c1); */
    /*@ for apart: assert p2_apart_w: s1->mdb.prev == \at(s2->mdb.prev, Pre) && s1->mdb.next == \at(s2->mdb.next, Pre) &&
          s2->mdb.prev == \at(s1->mdb.prev, Pre) && s2->mdb.next == \at(s1->mdb.next, Pre); */
    /*@ for apart: assert p2_apart_1: fwd{Pre,Here}(\at(prev_slot(s1), Pre), s2) && bwd{Pre,Here}(\at(next_slot(s1), Pre), s2); */
    /*@ for apart: assert p2_apart_2: fwd{Pre,Here}(\at(prev_slot(s2), Pre), s1) && kept{Pre,Here}(\at(next_slot(s2), Pre)); */
    /*@ for next12: assert p2_12_c: holds(s1, c2) && holds(s2, c1); */
    /*@ for next12: assert p2_12: prev_slot(s1) == s2 && s1->mdb.next == \at(s2->mdb.next, Pre) &&
          s2->mdb.prev == \at(s1->mdb.prev, Pre) && next_slot(s2) == s1 && flags(s2) == \at(flags(s1), Pre) &&
          fwd{Pre,Here}(\at(prev_slot(s1), Pre), s2) && kept{Pre,Here}(\at(next_slot(s2), Pre)); */
    /*@ for next21: assert p2_21_c: holds(s1, c2) && holds(s2, c1); */
    /*@ for next21: assert p2_21: s1->mdb.prev == \at(s2->mdb.prev, Pre) &&
          next_slot(s1) == s2 && flags(s1) == \at(flags(s2), Pre) && s2->mdb.next == \at(s1->mdb.next, Pre) &&
          bwd{Pre,Here}(\at(next_slot(s1), Pre), s2) && fwd{Pre,Here}(\at(prev_slot(s2), Pre), s1); */
    if (n)
        n->mdb.prev = (word_t)s1;
    /*@ for apart: assert end_apart_c: holds(s1, c2) && holds(s2, c1); */
    /*@ for apart: assert end_apart_w: s1->mdb.prev == \at(s2->mdb.prev, Pre) && s1->mdb.next == \at(s2->mdb.next, Pre) &&
          s2->mdb.prev == \at(s1->mdb.prev, Pre) && s2->mdb.next == \at(s1->mdb.next, Pre); */
    /*@ for apart: assert end_apart_p1: fwd{Pre,Here}(\at(prev_slot(s1), Pre), s2); */
    /*@ for apart: assert end_apart_n1: bwd{Pre,Here}(\at(next_slot(s1), Pre), s2); */
    /*@ for apart: assert end_apart_2: fwd{Pre,Here}(\at(prev_slot(s2), Pre), s1) && bwd{Pre,Here}(\at(next_slot(s2), Pre), s1); */
    /*@ for next12: assert end_12_c: holds(s1, c2) && holds(s2, c1); */
    /*@ for next21: assert end_21_c: holds(s1, c2) && holds(s2, c1); */
}

bool cdt_is_final_cap(const cte_t *slot)
{
    /* Caps to one object are always contiguous in the list (copies are
     * inserted next to their source), so looking at both neighbours is
     * enough (seL4's isFinalCapability). */
    const cte_t *prev = mdb_prev(slot);
    const cte_t *next = mdb_next(slot);
    bool prev_same = prev && same_object_as(prev->cap, slot->cap);
    bool next_same = next && same_object_as(slot->cap, next->cap);
    return !prev_same && !next_same;
}

bool cdt_slot_long_running_delete(const cte_t *slot)
{
    if (cap_is_null(slot->cap) || !cdt_is_final_cap(slot))
        return false;
    switch (cap_type(slot->cap)) {
    case CAP_THREAD:
    case CAP_ZOMBIE:
    case CAP_CNODE:
        return true;
    default:
        return false;
    }
}

/* Unlink a slot whose cap has been finalised and empty it (seL4's emptySlot).
 * A zombie is only ever emptied once its object has no slots left to clear,
 * i.e. the object is gone: its slot array stops being a slot array. */
/*@ requires \valid(slot);
    requires nb_ok1(prev_slot(slot), slot) && nb_ok1(next_slot(slot), slot);
    requires prev_slot(slot) != \null && next_slot(slot) != \null ==>
             \separated(prev_slot(slot), next_slot(slot));
    assigns slot->cap, slot->mdb, prev_slot(slot)->mdb.next, next_slot(slot)->mdb.prev,
            next_slot(slot)->mdb.next;
    behavior null:
      assumes (slot->cap.w0 & 0x1f) == 0;
      ensures slot->mdb.prev == \old(slot->mdb.prev) && slot->mdb.next == \old(slot->mdb.next);
    behavior unlink:
      assumes (slot->cap.w0 & 0x1f) != 0;
      // The neighbours p and n now point at each other; p's flags and
      // predecessor stay, n keeps its successor and flags, and takes the
      // first-badged mark from the slot.
      ensures \let p = \old(prev_slot(slot)); \let n = \old(next_slot(slot));
              p != \null ==> next_slot(p) == n && flags(p) == \old(flags(p)) && p->mdb.prev == \old(p->mdb.prev);
      ensures \let p = \old(prev_slot(slot)); \let n = \old(next_slot(slot));
              n != \null ==> prev_slot(n) == p && next_slot(n) == \old(next_slot(n));
      ensures \let n = \old(next_slot(slot)); n != \null && (\old(slot->mdb.next) & MDB_FIRST_BADGED) == 0 ==>
              n->mdb.next == \old(n->mdb.next);
      ensures \let n = \old(next_slot(slot)); n != \null && (\old(slot->mdb.next) & MDB_FIRST_BADGED) != 0 ==>
              flags(n) == (\old(flags(n)) | MDB_FIRST_BADGED);
      ensures slot->cap.w0 == 0 && slot->cap.w1 == 0 && slot->mdb.prev == 0 && slot->mdb.next == 0;
    complete behaviors;
    disjoint behaviors; */
static void empty_slot(cte_t *slot)
{
    cap_t c = slot->cap;
    if (cap_is_null(c))
        return;
    cte_t *prev = mdb_prev(slot);
    cte_t *next = mdb_next(slot);
    if (prev)
        set_next(prev, next);
    if (next) {
        next->mdb.prev = (word_t)prev;
        /* The first cap of a badge hands that mark to the next cap. */
        if (slot->mdb.next & MDB_FIRST_BADGED)
            next->mdb.next = mdb_add_flags(next->mdb.next, MDB_FIRST_BADGED);
    }
    /* Word by word (see cdt_insert_new_cap). */
    slot->cap.w0 = 0;
    slot->cap.w1 = 0;
    slot->mdb.prev = 0;
    slot->mdb.next = 0;
    if (cap_type(c) == CAP_ZOMBIE)
        invariants_unregister_slots(zombie_slots(c));
    /* IRQ hook: deleting the last IRQ handler cap frees the IRQ; there is no
     * IRQ state yet (see finalise_cap). */
}

/* Can a finalised remainder be dropped from `slot`? A zombie can once it
 * names no slot, or only the slot it sits in. */
static bool removable(cap_t r, const cte_t *slot)
{
    if (cap_is_null(r))
        return true;
    word_t n = cap_zombie_number(r);
    return n == 0 || (n == 1 && zombie_slots(r) == slot);
}

/* Is the cap in slot the last reference to its object? A zombie is by
 * construction. */
static bool slot_is_final(const cte_t *slot)
{
    return cap_type(slot->cap) == CAP_ZOMBIE || cdt_is_final_cap(slot);
}

/* The slot is empty: the delete is done, and it stays done if the system
 * call stops here (a re-executed call finds the slot empty and goes on
 * after it). So the finalisation of the cap's object (an SC unbound from
 * its thread and taken out of the release queue, a thread suspended, a
 * frame unmapped) and what the call does after the delete (the insert of a
 * TCB configure or an IRQ SetHandler, the reply, the exit) are two regions,
 * not one (Blackham ch. 5). Taken after every delete, final or not: the
 * WCET analysis cannot relate a flag saying "final" to the finalisation
 * branch finalise_cap took. Returns false if an interrupt is pending. */
static bool slot_deleted(void) { return !preemption_point(); }

/* seL4's cteDelete(slot, false), used on a slot inside an object that is
 * being destroyed. Returns false if it stopped at a preemption point. On
 * return the slot is empty, or it holds a zombie that refers to the slot
 * itself (the caller's own zombie came back to it; see the file comment).
 * Iterations: one per cap that passes through the slot; each one is a
 * bounded step followed by a preemption point. */
static bool delete_unexposed(cte_t *slot)
{
    for (;;) {
        if (cap_is_null(slot->cap))
            return true;
        if (!cap_leaves_zombie(slot->cap)) {
            if (!finalise_cap(slot->cap, slot_is_final(slot)))
                return false;
            empty_slot(slot);
            return slot_deleted();
        }
        cap_t rem = finalise_to_zombie(slot->cap, slot_is_final(slot));
        if (removable(rem, slot)) {
            empty_slot(slot);
            return slot_deleted();
        }
        slot->cap = rem; /* the zombie keeps the slot's place in the tree */
        cte_t *first = zombie_slots(rem);
        if (first == slot)
            return true; /* self-referential: the exposed delete owns it */
        /* Park the zombie in its object's slot 0 and go on with what was
         * there (seL4's capSwapForDelete). */
        cdt_swap(first->cap, first, slot->cap, slot);
        if (preemption_point())
            return false;
    }
}

/* seL4's cteDelete(slot, true): afterwards the slot is empty. Returns false
 * if it stopped at a preemption point; the zombie left in the slot records
 * how far it got. Iterations: one per slot of the objects whose last caps
 * pass through this slot (each iteration empties one slot of the object, or
 * finds the slot changed under it by the unexposed delete). */
static bool delete_exposed(cte_t *slot)
{
    for (;;) {
        if (cap_is_null(slot->cap))
            return true;
        if (!cap_leaves_zombie(slot->cap)) {
            if (!finalise_cap(slot->cap, slot_is_final(slot)))
                return false;
            empty_slot(slot);
            return slot_deleted();
        }
        if (cap_type(slot->cap) != CAP_ZOMBIE) {
            /* The last cap to a CNode or TCB becomes a zombie (a TCB is
             * taken out of the scheduler first). The zombie records that
             * step, so a re-executed delete goes on with reducing it, and
             * the finalisation and the first slot's delete are two
             * regions, not one. A cap that is not the last one is simply
             * removed. */
            cap_t rem = finalise_to_zombie(slot->cap, slot_is_final(slot));
            if (cap_is_null(rem)) {
                empty_slot(slot);
                return slot_deleted();
            }
            slot->cap = rem;
            if (preemption_point())
                return false;
            continue;
        }
        if (removable(slot->cap, slot)) {
            empty_slot(slot);
            return slot_deleted();
        }
        cap_t z = slot->cap;
        word_t n = cap_zombie_number(z); /* >= 1: not removable */
        cte_t *end = zombie_slots(z) + (n - 1);
        if (!delete_unexposed(end))
            return false;
        /* Shrink the zombie if it is still ours; the unexposed delete may
         * instead have moved another (self-referential) zombie here or
         * emptied this slot, and the next iteration deals with that. */
        if (cap_type(slot->cap) == CAP_ZOMBIE && slot->cap.w0 == z.w0 && cap_zombie_number(slot->cap) == n)
            slot->cap = cap_zombie_set_number(z, n - 1);
        if (preemption_point())
            return false;
    }
}

struct syscall_error cte_delete(cte_t *slot, bool exposed)
{
    bool done = exposed ? delete_exposed(slot) : delete_unexposed(slot);
    return done ? no_error() : preempted();
}

struct syscall_error cte_revoke(cte_t *slot)
{
    /* Children are deleted from the front, one at a time, so a restarted
     * revoke starts on what is left. Iterations: one per descendant. */
    for (;;) {
        cte_t *child = mdb_next(slot);
        if (!child || !cdt_is_parent_of(slot, child))
            return no_error();
        if (!delete_exposed(child))
            return preempted();
        if (preemption_point())
            return preempted();
    }
}


#if CONFIG_INVARIANT_CHECKS
/* Derivation-tree facts the invariant checker (kernel/kernel/invariants.c)
 * verifies for each slot, beyond link symmetry: a CNode cap's guard and
 * radix are well formed; a zombie names no more slots than its object has
 * and really is the last reference to that object (no live CNode or TCB cap
 * to it next to it); no slot links to itself. NULL when all hold. */
const char *cdt_check_slot(const cte_t *s)
{
    cap_t c = s->cap;
    if (cap_is_null(c))
        return NULL;
    if (mdb_next(s) == s || mdb_prev(s) == s)
        return "derivation tree: slot linked to itself";
    switch (cap_type(c)) {
    case CAP_CNODE: {
        word_t radix = cap_cnode_radix(c), gs = cap_cnode_guard_size(c);
        if (radix < 1 || radix + gs > 64 || (gs < 64 && (cap_cnode_guard(c) >> gs) != 0))
            return "CNode cap with a malformed radix or guard";
        return NULL;
    }
    case CAP_ZOMBIE: {
        word_t slots = cap_zombie_is_tcb(c) ? TCB_NUM_SLOTS : (1ul << cap_zombie_radix(c));
        if (cap_zombie_number(c) > slots)
            return "zombie names more slots than its object has";
        const cte_t *nb[2] = {mdb_prev(s), mdb_next(s)};
        for (int i = 0; i < 2; i++) {
            if (!nb[i])
                continue;
            enum cap_type t = cap_type(nb[i]->cap);
            if ((t == CAP_CNODE || t == CAP_THREAD || t == CAP_ZOMBIE) && cap_obj(nb[i]->cap) == cap_obj(c))
                return "zombie is not the last reference to its object";
        }
        return NULL;
    }
    default:
        return NULL;
    }
}

/* Number of slots on the list starting at head, counting at most limit + 1
 * (so a cycle shows up as a count above the number of caps). */
word_t cdt_list_length(const cte_t *head, word_t limit)
{
    word_t n = 0;
    for (const cte_t *c = head; c && n <= limit; c = mdb_next(c))
        n++;
    return n;
}
#endif
