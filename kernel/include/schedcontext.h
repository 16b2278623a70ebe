/* Scheduling contexts (MCS): processor time as an object.
 *
 * The object is a header (object.h) followed by a ring of refills (refill.h:
 * the sporadic-server arithmetic and the limits). This file's functions
 * create, configure and bind contexts; the scheduler (thread.c) charges them
 * (docs/scheduling.md). */
#ifndef KAIROS_SCHEDCONTEXT_H
#define KAIROS_SCHEDCONTEXT_H

#include <arch/memory.h>
#include <object.h>
#include <refill.h> /* the limits: MIN_BUDGET, MAX_PERIOD, refills per context */

#define SC_FLAG_SPORADIC 1ul /* ConfigureFlags flags bit 0 (seL4_SchedContext_Sporadic) */

/* Prepare a new scheduling context in zeroed memory (it relies on that):
 * unconfigured (budget 0, grants no time), unbound, ring size from its
 * size. create_object calls it for OBJ_SCHED_CONTEXT. */
void sched_context_init(struct sched_context *sc, u32 size_bits);

/* The context a SchedContext cap names. Objects are aligned to their size,
 * at least 2^MIN_SCHED_CONTEXT_BITS, so the mask changes nothing; it shows
 * the WCET analysis that the context is 128-aligned (its header fields then
 * fall into known cache sets), as the annotations state for SC pointers
 * loaded from fields (docs/wcet.md "Interrupt latency"). */
static inline struct sched_context *sc_from_cap(cap_t c)
{
    return (struct sched_context *)((word_t)paddr_to_kptr(cap_obj(c)) & ~(word_t)MASK(MIN_SCHED_CONTEXT_BITS));
}

/* Has ConfigureFlags given this context any time? */
static inline bool sc_configured(const struct sched_context *sc) { return sc->budget != 0; }
/* Configured sporadic (budget < period): the only kind whose thread can wait
 * in the release queue (a round-robin head is always released), so it counts
 * against CONFIG_MAX_SPORADIC_SCS (thread.h sched_admit_sporadic). */
static inline bool sc_waits_for_release(const struct sched_context *sc)
{
    return sc_configured(sc) && sc->period != 0 && sc->period != sc->budget;
}
/* seL4's sc_released: configured and its head refill usable now (a
 * round-robin head always is; a sporadic head once its release time is
 * within the ready slack, refill.h). */
bool sc_released(const struct sched_context *sc);

/* Bind sc and t (both unbound); t enters the scheduler if it can run. */
void sched_context_bind_tcb(struct sched_context *sc, struct tcb *t);
/* The same without entering the scheduler, for a caller that schedules t
 * itself right after (one thread_schedule per wake-up). */
void sched_context_link_tcb(struct sched_context *sc, struct tcb *t);
/* Unbind sc from its thread (if any); the thread leaves the scheduler. */
void sched_context_unbind_tcb(struct sched_context *sc);
/* The perform step of SchedControl_ConfigureFlags (schedcontrol.c decodes
 * it): budget and period in µs (budget == period: round robin). Cannot
 * fail. */
void sched_context_configure(struct sched_context *sc, u64 budget_us, u64 period_us, word_t extra_refills,
                             word_t badge, word_t flags);
/* Unbind sc from its notification (if any). */
void sched_context_unbind_notification(struct sched_context *sc);
/* A YieldTo that yielded ends (seL4's schedContext_completeYieldTo): the
 * yielder gets its answer, a0 = 0, a1 = info(0, length 1), MR0 = the time
 * the context consumed since (µs), which is then reset. Nothing if
 * yielder has no YieldTo pending. */
void sched_context_complete_yield_to(struct tcb *yielder);
/* The same, but the yielder is told nothing (it was suspended or deleted;
 * seL4's schedContext_cancelYieldTo). */
void sched_context_cancel_yield_to(struct tcb *yielder);

#endif
