/* The scheduler's per-core state, shared by the scheduler (thread.c) and the
 * IPC fastpath (fastpath.c), which needs to read it without function calls:
 * which priorities are ready, which SC is being charged, what the timer is
 * armed for, and whose FP state is in the registers. Everything else uses
 * the functions in thread.h. */
#ifndef KAIROS_SCHED_H
#define KAIROS_SCHED_H

#include <arch/csr.h>
#include <config.h>
#include <object.h>
#include <release.h>
#include <types.h>

#define PRIO_WORDS (CONFIG_NUM_PRIORITIES / 64)
#define NO_TIMEOUT (~0ull)

struct sched_node {
    struct tcb *ready_head[CONFIG_NUM_PRIORITIES];
    struct tcb *ready_tail[CONFIG_NUM_PRIORITIES];
    word_t bitmap_top;         /* bit i: bitmap[i] non-zero */
    word_t bitmap[PRIO_WORDS]; /* bit p%64 of word p/64: queue p non-empty */
    /* The SC charged for the time since `stamp` (the one the last exit ran),
     * or NULL (idle, or it stopped running during this entry). */
    struct sched_context *cur_sc;
    u64 stamp;    /* time of the last kernel entry (ticks) */
    u64 consumed; /* used by cur_sc since it was last charged to its refills */
    bool yielded; /* the current thread did seL4_Yield this entry (sched_yield) */
#if CONFIG_INVARIANT_CHECKS
    bool charged_this_entry; /* charge_current ran since the entry (at most once) */
#endif
    /* What the timer is programmed for (NO_TIMEOUT: off): the earlier of
     * cur_sc's budget expiry and the release-queue head's release, as of
     * the last exit. */
    u64 armed;
    /* Measurements (docs/scheduling.md), in instructions. */
    u64 n_reprograms, reprogram_instret, n_sc_switches, sc_switch_instret, sc_switch_max;
    u64 overrun_max; /* ticks used past the head refill when exhaustion was noticed */
    /* Runnable threads waiting for their SC's next refill, earliest
     * release first (release.h). Only a thread on a sporadic SC waits there,
     * one per SC, and SchedControl_ConfigureFlags admits at most
     * CONFIG_MAX_SPORADIC_SCS sporadic SCs per core, so it never overflows.
     * Last in the node (6 KiB): the fields above keep their offsets, which
     * the fastpath reaches with one instruction less. */
    struct release_queue release;
    u32 sporadic_scs; /* configured sporadic SCs of this core (thread.c) */
};
extern struct sched_node sched_nodes[CONFIG_MAX_NUM_NODES];

/* The ready queues' invariants as ACSL, for the Frama-C/WP proofs of
 * ready_insert and ready_remove (make prove, proof set `ready`;
 * docs/proofs.md "Ready queues"): a priority's bit is set exactly when its
 * queue is non-empty, a word's bit in bitmap_top exactly when the word is
 * non-zero (and no bit above the last word), and a queue's two ends agree:
 * both NULL or both threads, the head with no predecessor and the tail with
 * no successor.
 * The bitmap facts are macros, not ACSL predicates: WP hands a predicate to
 * the provers folded, and CVC4 and Z3 then fail to relate it to the word
 * the code just wrote (they time out); expanded in place, they prove it. */
#ifdef __FRAMAC__
#define ACSL_PRIO_BIT(n, p) ((((n)->bitmap[(p) / 64]) & (1 << ((p) % 64))) != 0)
#define ACSL_TOP_BIT(n, w) ((((n)->bitmap_top) & (1 << (w))) != 0)
#define ACSL_BITMAP_PRIOS(n) \
    (\forall integer q; 0 <= q < CONFIG_NUM_PRIORITIES ==> \
         (ACSL_PRIO_BIT(n, q) <==> (n)->ready_head[q] != \null))
#define ACSL_BITMAP_WORDS(n) \
    (\forall integer w; 0 <= w < PRIO_WORDS ==> (ACSL_TOP_BIT(n, w) <==> (n)->bitmap[w] != 0))
#define ACSL_BITMAP_TOP_CLEAR(n) (\forall integer w; PRIO_WORDS <= w < 64 ==> !ACSL_TOP_BIT(n, w))
#endif
/*@
  // Setting or clearing bit k of a word, as the code writes it: what it does
  // to bit j (proved by WP from its bit-extraction axioms; the provers do
  // not find these inside a function's goal unaided).
  lemma bit_or_test: \forall unsigned long a, integer k, j; 0 <= k < 64 && 0 <= j < 64 ==>
      ((((unsigned long)(1 << k) | a) & (1 << j)) != 0 <==> (j == k || (a & (1 << j)) != 0));
  lemma bit_nonzero: \forall unsigned long a, integer j; 0 <= j < 64 ==>
      (a & (1 << j)) != 0 ==> a != 0;
  lemma and_nonzero: \forall unsigned long a, b; (a & b) != 0 ==> a != 0;
  lemma u32_small: \forall integer x; 0 <= x < 64 ==> (unsigned int)x == x;
  lemma prio_split: \forall integer q, p; 0 <= q < CONFIG_NUM_PRIORITIES && 0 <= p < CONFIG_NUM_PRIORITIES &&
      q != p && q / 64 == p / 64 ==> q % 64 != p % 64;
  lemma set_other: \forall unsigned long a, integer q, p;
      0 <= q < CONFIG_NUM_PRIORITIES && 0 <= p < CONFIG_NUM_PRIORITIES && q != p && q / 64 == p / 64 ==>
      ((((unsigned long)(1 << (unsigned int)(p % 64)) | a) & (1 << (q % 64))) != 0 <==>
          (a & (1 << (q % 64))) != 0);
  lemma set_top_other: \forall unsigned long a, integer w, p;
      0 <= w < 64 && 0 <= p < CONFIG_NUM_PRIORITIES && w != p / 64 ==>
      ((((unsigned long)(1 << (unsigned int)(p / 64)) | a) & (1 << w)) != 0 <==> (a & (1 << w)) != 0);
  lemma set_top_self: \forall unsigned long a, integer p; 0 <= p < CONFIG_NUM_PRIORITIES ==>
      (((unsigned long)(1 << (unsigned int)(p / 64)) | a) & (1 << (p / 64))) != 0;
  lemma set_word_nonzero: \forall unsigned long a, integer p; 0 <= p < CONFIG_NUM_PRIORITIES ==>
      ((unsigned long)(1 << (unsigned int)(p % 64)) | a) != 0;
  lemma clear_other: \forall unsigned long a, integer q, p;
      0 <= q < CONFIG_NUM_PRIORITIES && 0 <= p < CONFIG_NUM_PRIORITIES && q != p && q / 64 == p / 64 ==>
      (((a & (unsigned long)~(unsigned long)(1 << (unsigned int)(p % 64))) & (1 << (q % 64))) != 0 <==>
          (a & (1 << (q % 64))) != 0);
  lemma clear_self: \forall unsigned long a, integer p; 0 <= p < CONFIG_NUM_PRIORITIES ==>
      ((a & (unsigned long)~(unsigned long)(1 << (unsigned int)(p % 64))) & (1 << (p % 64))) == 0;
  lemma clear_top_other: \forall unsigned long a, integer w, p;
      0 <= w < 64 && 0 <= p < CONFIG_NUM_PRIORITIES && w != p / 64 ==>
      (((a & (unsigned long)~(unsigned long)(1 << (unsigned int)(p / 64))) & (1 << w)) != 0 <==>
          (a & (1 << w)) != 0);
  lemma clear_top_self: \forall unsigned long a, integer p; 0 <= p < CONFIG_NUM_PRIORITIES ==>
      ((a & (unsigned long)~(unsigned long)(1 << (unsigned int)(p / 64))) & (1 << (p / 64))) == 0;

  // Two TCB pointers are the same thread or disjoint memory (each TCB is an
  // object of its own, retyped from untyped): WP's typed model would
  // otherwise let two structs overlap.
  predicate tcb_apart(struct tcb *a, struct tcb *b) =
      a == \null || b == \null || a == b || \separated(a, b);

  predicate queue_ends(struct sched_node *n, integer p) =
      (n->ready_head[p] == \null <==> n->ready_tail[p] == \null) &&
      (n->ready_head[p] != \null ==>
          \valid(n->ready_head[p]) && \valid(n->ready_tail[p]) &&
          \separated(n, n->ready_head[p]) && \separated(n, n->ready_tail[p]) &&
          n->ready_head[p]->ready_prev == \null && n->ready_tail[p]->ready_next == \null);
*/
/* This core's state. Single core for now; SMP indexes by hart. */
#define NODE (&sched_nodes[0])

/* Lazy FP switching: the FP registers hold fpu_owner's state if fpu_loaded.
 * Every other thread runs with sstatus.FS off; its first FP instruction
 * traps (illegal instruction) and the kernel moves the FP state then
 * (thread.c fpu_take), so a switch between threads that do not use FP costs
 * nothing. */
extern struct tcb *fpu_owner;
extern bool fpu_loaded;

/* The sstatus.FS value t runs with: its own (Clean or Dirty, so a change is
 * saved at the next FP switch) if its state is loaded, else off. */
static ALWAYS_INLINE word_t fpu_status_for(const struct tcb *t)
{
    if (t != fpu_owner || !fpu_loaded || (t->flags & TCB_FLAG_FPU_DISABLED))
        return SSTATUS_FS_OFF;
    return (t->ctx.sstatus & SSTATUS_FS) == SSTATUS_FS_DIRTY ? SSTATUS_FS_DIRTY : SSTATUS_FS_CLEAN;
}

/* Index of the most significant set bit of a non-zero word, by binary search:
 * six steps, no loop, no library call (the base ISA has no clz instruction). */
static ALWAYS_INLINE int msb_index(word_t w)
{
    int n = 0;
    if (w >> 32) { n += 32; w >>= 32; }
    if (w >> 16) { n += 16; w >>= 16; }
    if (w >> 8) { n += 8; w >>= 8; }
    if (w >> 4) { n += 4; w >>= 4; }
    if (w >> 2) { n += 2; w >>= 2; }
    if (w >> 1) { n += 1; }
    return n;
}

/* Highest priority with a non-empty ready queue, or -1. */
static ALWAYS_INLINE int highest_ready_priority(void)
{
    struct sched_node *n = NODE;
    if (n->bitmap_top == 0)
        return -1;
    int word = msb_index(n->bitmap_top);
    int bit = msb_index(n->bitmap[word]);
    return word * 64 + bit;
}

/* No ready thread has a priority at or above p (p < CONFIG_NUM_PRIORITIES),
 * so a thread at p woken now would be the scheduler's next choice even
 * though the slow path puts it behind ready threads of its own priority.
 * Two bitmap tests instead of a search. */
static ALWAYS_INLINE bool ready_none_at_or_above(u32 p)
{
    struct sched_node *n = NODE;
    u32 word = p / 64;
    /* No non-empty word above p's (a shift by at most 63, then by 1: a
     * shift by 64 is undefined), and no bit from p up in p's word. */
    return ((n->bitmap_top >> word) >> 1) == 0 && (n->bitmap[word] >> (p % 64)) == 0;
}

#endif
