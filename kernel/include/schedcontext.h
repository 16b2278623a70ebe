/* Scheduling contexts (MCS): processor time as an object.
 *
 * This issue implements round-robin contexts (budget == period) and the
 * binding of contexts to threads; sporadic servers, the release queue and
 * timeout faults are the scheduling issue's. The object layout (object.h:
 * a header of at most 96 bytes, then the refill ring) is already the final
 * one, so that work only adds behaviour.
 *
 * Refill model used now: the head refill's `amount` is the budget left in
 * the current time slice; it is charged by thread.c at every kernel exit and
 * refilled to the full budget when it drops below MIN_BUDGET (the thread then
 * goes to the tail of its priority's queue). */
#ifndef KAIROS_SCHEDCONTEXT_H
#define KAIROS_SCHEDCONTEXT_H

#include <object.h>

/* seL4 MCS riscv64 numbers (shared/abi/behaviour.md (j)). */
#define MIN_BUDGET_US 20ul
#define MAX_PERIOD_US 230584300921369395ul /* (2^64 - 1) / 10 / 8 */
#define SC_HEADER_BYTES 96ul
#define MIN_REFILLS 2ul
#define SC_FLAG_SPORADIC 1ul

/* Refills an SC object of 2^size_bits bytes holds after its header (the
 * exact value, which may exceed the saturated refill_max field). */
static inline word_t sc_refill_capacity(word_t size_bits)
{
    return ((1ul << size_bits) - SC_HEADER_BYTES) / sizeof(struct refill);
}

/* Prepare a new scheduling context in zeroed memory: unconfigured (budget 0,
 * grants no time), unbound, ring capacity from its size.
 * For the Untyped code: call this from create_object for OBJ_SCHED_CONTEXT
 * (it replaces a local initialiser there). */
void sched_context_init(struct sched_context *sc, u32 size_bits);

/* Has ConfigureFlags given this context any time? */
static inline bool sc_configured(const struct sched_context *sc) { return sc->budget != 0; }
/* Configured sporadic (budget < period): the only kind whose thread can wait
 * in the release queue (a round-robin head is always released), so it counts
 * against CONFIG_MAX_SPORADIC_SCS (thread.h sched_admit_sporadic). */
static inline bool sc_waits_for_release(const struct sched_context *sc)
{
    return sc_configured(sc) && sc->period != 0 && sc->period != sc->budget;
}
/* seL4's sc_released: configured and its head refill usable now. With only
 * round-robin refills the head is always ready once configured. */
bool sc_released(const struct sched_context *sc);

/* Bind sc and t (both unbound); t enters the scheduler if it can run. */
void sched_context_bind_tcb(struct sched_context *sc, struct tcb *t);
/* Unbind sc from its thread (if any); the thread leaves the scheduler. */
void sched_context_unbind_tcb(struct sched_context *sc);
/* SchedControl_ConfigureFlags after its checks: budget and period in µs
 * (budget == period: round robin). Starts with the full budget available. */
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
