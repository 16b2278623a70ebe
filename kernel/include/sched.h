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
