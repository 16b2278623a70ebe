/* Refills: the sporadic-server replenishment logic of a scheduling context
 * (Lyons' MCS model: Lyons et al., EuroSys 2018, and his thesis, App. B, with
 * the corrections of docs/scheduling.md "Refills").
 *
 * A scheduling context's processor time is a ring of refills {release_time,
 * amount} in timer ticks after its 96-byte header (object.h). The head refill
 * is the time the context may use now (once released); the others are time
 * it used earlier, coming back one period after that use began. The amounts
 * always add up to the configured budget, which is what bounds the time a
 * context gets in any window of one period.
 *
 * Everything here works on one `struct sched_context *` with the current
 * time (`now`) and the time consumed (`usage`) passed in, in ticks: no global
 * state, no hardware, so the scheduler calls it and the host tests
 * (tests/test_refill_model.py) run it natively. The only outside call is
 * us_to_ticks() (timer.h), for MIN_BUDGET and the kernel WCET slack.
 *
 * Two kinds of context:
 *  - round robin: budget == period (stored as period 0, seL4's encoding;
 *    a period of 0 is also accepted): the head refill is what is left of the
 *    time slice, the tail what has been used of it; the slice is refilled as
 *    soon as it falls below MIN_BUDGET. No release times, no window.
 *  - sporadic (budget < period): a sporadic server. In any window of one
 *    period the context runs at most its budget plus one kernel WCET (the
 *    larger of the overrun, the kernel entry that notices the budget expiry
 *    running on past it, and the ready slack below), provided
 *    the scheduler calls refill_unblock_check whenever the context becomes
 *    current (docs/scheduling.md "Refills"; tests/test_refill_model.py
 *    checks this over thousands of random histories and shows the
 *    tolerance is reached).
 *
 * Preconditions (the ConfigureFlags checks establish them): MIN_BUDGET <=
 * budget <= period (or period 0), max_refills <= refill_max_for_size(size),
 * and times stay below 2^63 (a period is at most REFILL_MAX_PERIOD_US, 2^61
 * ticks at 10 MHz, so time + period does not overflow).
 *
 * Every loop here does at most CONFIG_MAX_REFILLS steps: a ring never holds
 * more (refill_new and refill_update clamp to it, and ConfigureFlags refuses
 * more), and each loop pops or visits one refill per step.
 */
#ifndef KAIROS_REFILL_H
#define KAIROS_REFILL_H

#include <object.h>
#include <types.h>

/* The limits of scheduling contexts, all here: seL4 MCS riscv64 numbers
 * (seL4's MIN_BUDGET_US, MAX_PERIOD_US and refill_absolute_max) and Kairos's refill cap (config.h). */
#define REFILL_MIN_BUDGET_US 20ul  /* 2 x the kernel WCET constant: a donated
                                    * context must pay for an entry and an exit */
#define REFILL_KERNEL_WCET_US 10ul /* the ready slack: a refill due within one
                                    * kernel WCET counts as released */
#define REFILL_MAX_PERIOD_US 230584300921369395ul /* (2^64 - 1) / 10 / 8 */
#define REFILL_MIN_REFILLS 2u      /* a ring never needs fewer; with one, the
                                    * App. B merge loop would pop the only refill */
_Static_assert(CONFIG_MAX_REFILLS >= REFILL_MIN_REFILLS, "a ring holds at least two refills");

/* MIN_BUDGET and the ready slack in ticks (us_to_ticks of the numbers
 * above), computed once when the timer's rate is set (the conversion
 * divides; these are read on every kernel entry). */
extern u64 refill_min_budget_ticks, refill_wcet_ticks;
static inline u64 refill_min_budget(void) { return refill_min_budget_ticks; }
static inline u64 refill_wcet(void) { return refill_wcet_ticks; }
/* The timer's rate was set (timer_init): recompute the two above. */
/*@ assigns refill_min_budget_ticks, refill_wcet_ticks; */
void refill_timebase_changed(void);

/* Refills an SC object of 2^size_bits bytes holds after its header (seL4's
 * refill_absolute_max: 2 for 2^7, 10 for 2^8, up to 2^34). */
static inline word_t refill_capacity(word_t size_bits)
{
    return ((1ul << size_bits) - SC_HEADER_BYTES) / sizeof(struct refill);
}

/* The most refills a context of 2^size_bits bytes may be configured with:
 * its capacity, and never more than CONFIG_MAX_REFILLS. */
static inline u32 refill_max_for_size(word_t size_bits)
{
    word_t cap = refill_capacity(size_bits);
    return cap < CONFIG_MAX_REFILLS ? (u32)cap : CONFIG_MAX_REFILLS;
}

/* The clauses named `history` (docs/proofs.md "Sliding window" ->
 * "History") are seen by the refill-history proof set alone, which defines
 * KAIROS_PROVE_HISTORY: as hypotheses of the other sets' goals they slowed
 * some of those (refill-order's merge_overlapping postcondition, two
 * refill-window assertions after a pop) past the 20 s limit. Frama-C runs
 * annotations through the preprocessor; to gcc they are comments. */
#ifdef KAIROS_PROVE_HISTORY
#define ACSL_HISTORY(...) __VA_ARGS__
#else
#define ACSL_HISTORY(...)
#endif

/* The ring's shape as ACSL, for the Frama-C/WP proofs of refill.c (make
 * prove; docs/proofs.md "Refills"). Between kernel entries, and before and
 * after every operation below on a configured context:
 *   REFILL_MIN_REFILLS <= refill_max <= CONFIG_MAX_REFILLS,
 *   refill_head < refill_max, 1 <= refill_count <= refill_max,
 *   the ring's slots are memory of their own, apart from the header,
 *   and a round-robin context (period 0) uses at most its head and tail.
 * Every loop in refill.c is proved to take at most refill_count steps,
 * which this bounds by CONFIG_MAX_REFILLS: the bound the WCET analysis
 * uses (kernel/wcet-annotations.toml). */
/*@
  logic integer clamped_max(integer m) =
      m < REFILL_MIN_REFILLS ? REFILL_MIN_REFILLS : m > CONFIG_MAX_REFILLS ? CONFIG_MAX_REFILLS : m;

  // The slot of the k-th refill from the head (k < refill_max).
  logic integer ring_slot(struct sched_context *sc, integer k) =
      sc->refill_head + k < sc->refill_max ? sc->refill_head + k
                                           : sc->refill_head + k - sc->refill_max;

  predicate ring_memory(struct sched_context *sc, integer max) =
      \valid(sc) && \valid(Refills(sc) + (0 .. max - 1)) &&
      \separated(sc, Refills(sc) + (0 .. max - 1),
                 &refill_min_budget_ticks, &refill_wcet_ticks);

  predicate ring_shape(struct sched_context *sc) =
      REFILL_MIN_REFILLS <= sc->refill_max <= CONFIG_MAX_REFILLS &&
      sc->refill_head < sc->refill_max && 1 <= sc->refill_count <= sc->refill_max;

  predicate refill_invariant(struct sched_context *sc) =
      ring_shape(sc) && ring_memory(sc, sc->refill_max) &&
      (sc->period == 0 ==> sc->refill_count <= 2);

  // The sporadic-server sum, over ring slots rather than positions from
  // the head: slot i (i < refill_max) is in use when its offset from the
  // head is below refill_count. Advancing the head, appending at the tail
  // or changing one slot's amount then changes one term of the sum, with
  // no induction over the ring (docs/proofs.md "Sum").
  logic integer ring_off(struct sched_context *sc, integer i) =
      i >= sc->refill_head ? i - sc->refill_head : i + sc->refill_max - sc->refill_head;
  predicate slot_live(struct sched_context *sc, integer i) =
      0 <= i < sc->refill_max && ring_off(sc, i) < sc->refill_count;
  logic integer slot_amount(struct sched_context *sc, integer i) =
      0 <= i < sc->refill_max && ring_off(sc, i) < sc->refill_count ? Refills(sc)[i].amount : 0;
  logic integer ring_sum(struct sched_context *sc) =
      slot_amount(sc, 0) + slot_amount(sc, 1) + slot_amount(sc, 2) + slot_amount(sc, 3) +
      slot_amount(sc, 4) + slot_amount(sc, 5) + slot_amount(sc, 6) + slot_amount(sc, 7);

  // The amounts add up to the budget: always for a sporadic context and a
  // round-robin one with its two refills (head: what is left of the slice,
  // tail: what was used); a round-robin context made with the head alone
  // (the boot context) has at most the budget until the slice is refilled.
  // A configured context stores a period equal to its budget as 0.
  predicate refill_sum(struct sched_context *sc) =
      (sc->period == 0 || sc->period != sc->budget) &&
      ring_sum(sc) <= sc->budget &&
      (sc->period != 0 || sc->refill_count == 2 ==> ring_sum(sc) == sc->budget);

  // The head holds at least MIN_BUDGET (enough for a kernel entry and
  // exit), for a context whose budget is at least MIN_BUDGET (ConfigureFlags
  // refuses less). The other refills may hold less (a small chunk appended
  // to a single refill): the kernel keeps the minimum for the head only
  // (docs/proofs.md "Minimum budget").
  predicate refill_min(struct sched_context *sc) =
      sc->budget >= refill_min_budget_ticks &&
      Refills(sc)[sc->refill_head].amount >= refill_min_budget_ticks;

  // Order and non-overlap of a sporadic ring (docs/proofs.md "Order"),
  // stated by position from the head (k-th refill: slot ring_slot(sc, k))
  // and for neighbours only, so that each fact is a one-variable
  // quantifier. A refill ends (release + amount) no later than the next is
  // released; amounts are unsigned, so the release times are then
  // non-decreasing from head to tail (ring_order).
  logic integer pos_rel(struct sched_context *sc, integer k) =
      Refills(sc)[ring_slot(sc, k)].release_time;
  logic integer pos_amt(struct sched_context *sc, integer k) =
      Refills(sc)[ring_slot(sc, k)].amount;
  // Non-overlap from position p on (p = 1: all but the head pair, which
  // the head's own changes break and merge_overlapping restores).
  predicate ring_apart(struct sched_context *sc, integer p) =
      \forall integer k; p <= k && k + 1 < sc->refill_count ==>
          pos_rel(sc, k) + pos_amt(sc, k) <= pos_rel(sc, k + 1);
  // The head ends strictly before the next release (nothing left to merge).
  predicate head_apart(struct sched_context *sc) =
      sc->refill_count >= 2 ==> pos_rel(sc, 0) + pos_amt(sc, 0) < pos_rel(sc, 1);
  predicate ring_order(struct sched_context *sc) =
      \forall integer k; 0 <= k && k + 1 < sc->refill_count ==> pos_rel(sc, k) <= pos_rel(sc, k + 1);
  // Every release time at most t: with t + the amounts below 2^64, the
  // code's 64-bit ends (release + amount) do not wrap.
  predicate rel_below(struct sched_context *sc, integer t) =
      \forall integer k; 0 <= k < sc->refill_count ==> pos_rel(sc, k) <= t;

  // The sliding window at ring level (docs/proofs.md "Sliding window"):
  // the tail ends no later than one period after position p's release.
  // For p = 0 (ring_window) and a ring in order (ring_apart), every refill
  // lies in [head's release, head's release + period]. Quantifier-free:
  // the tail is the one position it names.
  logic integer tail_end(struct sched_context *sc) =
      pos_rel(sc, sc->refill_count - 1) + pos_amt(sc, sc->refill_count - 1);
  predicate ends_within(struct sched_context *sc, integer p) =
      p < sc->refill_count ==> tail_end(sc) <= pos_rel(sc, p) + sc->period;
  predicate ring_window(struct sched_context *sc) = ends_within(sc, 0);
  // The head released no later than the next refill (what ring_apart gives
  // and the head's own changes keep, but for the overrun's delay).
  predicate head_first(struct sched_context *sc) =
      sc->refill_count >= 2 ==> pos_rel(sc, 0) <= pos_rel(sc, 1);
*/
/* ring_sum above names eight slots. */
_Static_assert(CONFIG_MAX_REFILLS <= 8, "ring_sum (ACSL) sums slots 0 to 7");

/* Round robin: budget == period, or period 0 (how seL4 and the boot context
 * store it). */
static inline bool refill_round_robin(const struct sched_context *sc)
{
    return sc->period == 0 || sc->period == sc->budget;
}

/* The ring. Only meaningful once configured (refill_count >= 1). */
static inline u32 refill_size(const struct sched_context *sc) { return sc->refill_count; }
/*@ requires \valid_read(sc) && i < sc->refill_max && n < sc->refill_max;
    assigns \nothing;
    ensures \result == (i + n < sc->refill_max ? i + n : i + n - sc->refill_max);
    ensures \result < sc->refill_max; */
static inline u32 refill_index_add(const struct sched_context *sc, u32 i, u32 n)
{
    /* i < max and n < max: one conditional subtraction instead of a modulo
     * (no division in the scheduler's paths). */
    u32 room = sc->refill_max - i;
    return n < room ? i + n : n - room;
}
static inline struct refill *refill_at(struct sched_context *sc, u32 i) { return &sc_refills(sc)[i]; }
static inline struct refill *refill_head(struct sched_context *sc) { return refill_at(sc, sc->refill_head); }
static inline struct refill *refill_tail(struct sched_context *sc)
{
    return refill_at(sc, refill_index_add(sc, sc->refill_head, sc->refill_count - 1));
}

/* A fresh (or migrated) context: the whole budget available at `now`.
 * Round robin ignores max_refills and uses REFILL_MIN_REFILLS (seL4:
 * extra_refills is ignored); otherwise the ring holds max_refills, kept
 * within [REFILL_MIN_REFILLS, CONFIG_MAX_REFILLS]. */
/*@ requires ring_memory(sc, period == 0 || period == budget ? REFILL_MIN_REFILLS
                                                              : clamped_max(max_refills));
    assigns sc->budget, sc->period, sc->refill_max, sc->refill_head, sc->refill_count,
            Refills(sc)[0 .. 1];
    ensures refill_invariant(sc) && refill_sum(sc) && sc->refill_count <= 2;
    ensures sc->refill_max == (period == 0 || period == budget ? REFILL_MIN_REFILLS
                                                               : clamped_max(max_refills));
    ensures Refills(sc)[0].release_time == now && Refills(sc)[0].amount == budget;
    ensures budget >= refill_min_budget_ticks ==> refill_min(sc);
    ensures order: sc->period != 0 ==> ring_apart(sc, 0) && head_apart(sc);
    ensures order: rel_below(sc, now);
    ensures order: sc->budget == budget && sc->period == (period == 0 || period == budget ? 0 : period);
    ensures window: sc->period != 0 && budget <= period ==> ring_window(sc); */
void refill_new(struct sched_context *sc, word_t max_refills, u64 budget, u64 period, u64 now);

/* Reconfigure a context that is in use (bound to a runnable thread) without
 * giving it more than the old head allowed now: pending refills are dropped,
 * the head is kept (trimmed to the new budget), and any extra budget comes
 * one new period after the head's release. `usage`: what the context used
 * since it was last charged (it is running; 0 otherwise), taken off the head
 * exactly as refill_budget_check would, given that the head is ready and
 * holds usage + MIN_BUDGET (the scheduler's entry check).
 * Order (behavior `ordered`, docs/proofs.md "Order"): a sporadic
 * configuration (new_budget < new_period: ConfigureFlags) leaves the ring
 * in order with the head ending strictly before the next release, given
 * times that fit: `now`, and the old head's release + usage + the old
 * period, at most 2^64 - 1 - new_period - new_budget (the caller's, not
 * proved: sched_context_configure passes times since boot and periods of at
 * most REFILL_MAX_PERIOD_US).
 * Window (docs/proofs.md "Sliding window"): only a ring of one refill (a
 * fresh context, or a kept head that reaches the new budget) is proved to
 * be in the window. With a kept head below the new budget, the extra budget
 * comes one new period after the head's release, so the tail ends up to
 * new_budget - head amount past one period after the head's release (later
 * than ring_window allows, not earlier; seL4's refill_update does the
 * same). */
/*@ requires ring_memory(sc, new_period == 0 || new_period == new_budget ? REFILL_MIN_REFILLS
                                                                      : clamped_max(new_max_refills));
    requires sc->refill_count != 0 ==> refill_invariant(sc);
    requires sc->refill_count != 0 ==> refill_min(sc);
    requires usage + refill_min_budget_ticks <= UINT64_MAX;
    assigns sc->budget, sc->period, sc->refill_max, sc->refill_head, sc->refill_count,
            Refills(sc)[0 .. 1];
    ensures refill_invariant(sc) && sc->refill_count <= 2;
    ensures refill_sum(sc);
    ensures new_budget >= refill_min_budget_ticks ==> refill_min(sc);
    behavior ordered:
      assumes new_budget < new_period && now <= UINT64_MAX - new_period - new_budget;
      assumes sc->refill_count != 0 ==>
          Refills(sc)[sc->refill_head].release_time + usage + sc->period <= UINT64_MAX - new_period - new_budget;
      ensures order: ring_apart(sc, 0) && head_apart(sc);
      ensures order: rel_below(sc, UINT64_MAX - sc->budget);
      ensures window: sc->refill_count == 1 ==> ring_window(sc); */
void refill_update(struct sched_context *sc, u64 new_period, u64 new_budget, word_t new_max_refills,
                   u64 usage, u64 now);

/* The head refill may be used at `now`: released, or due within one kernel
 * WCET (not worth a timer interrupt). */
static inline bool refill_ready(const struct sched_context *sc, u64 now)
{
    return sc_refills((struct sched_context *)sc)[sc->refill_head].release_time <= now + refill_wcet();
}

/* After consuming `usage`, the head refill still holds at least MIN_BUDGET
 * (enough for a kernel entry and exit). The scheduler checks this once per
 * kernel entry with the time consumed so far. */
static inline bool refill_sufficient(const struct sched_context *sc, u64 usage)
{
    u64 a = sc_refills((struct sched_context *)sc)[sc->refill_head].amount;
    return (usage > a ? 0 : a - usage) >= refill_min_budget(); /* what is left (thesis: capacity) */
}

/* Charge `usage` ticks, consumed up to `now`, to the context. Whole refills
 * used up go one period on; a partly used head is split; time used past the
 * end of the released refills (an overrun) is cut off the next refill and
 * delays the rest of it. Afterwards the head holds at least MIN_BUDGET and
 * ends before the next refill's release. Returns true when the head was used up (round
 * robin: the time slice ended and was refilled; sporadic: the context must go
 * to the back of its priority's queue, or to the release queue if the new head
 * is not ready).
 * Order (behavior `ordered`, docs/proofs.md "Order"): a sporadic ring in
 * order stays in order, and after a charge (usage != 0) its head ends
 * strictly before the next release, given every release at most 2^64 - 1 -
 * budget - usage - (refill_count + 1) periods (the caller's times, not
 * proved: charge_current's `usage` is time consumed since the last charge).
 * History (docs/proofs.md "Sliding window" -> "History"): a charge of at most
 * the head and the next refill comes back at the tail of the ring, where it
 * cannot be used before one period after the head's release (the time its
 * use began, when the scheduler calls refill_unblock_check at every switch):
 * the sporadic-server rule that the window over histories rests on. */
/*@ requires \valid(sc) && \separated(sc, &refill_min_budget_ticks, &refill_wcet_ticks);
    requires sc->refill_count != 0 ==> refill_invariant(sc) && refill_sum(sc) && refill_min(sc);
    assigns sc->refill_head, sc->refill_count, Refills(sc)[0 .. sc->refill_max - 1];
    ensures \old(sc->refill_count) != 0 ==> refill_invariant(sc) && refill_sum(sc);
    ensures \old(sc->refill_count) != 0 ==> refill_min(sc);
    ensures \old(sc->refill_count) == 0 ==> sc->refill_count == 0;
    behavior ordered:
      assumes sc->refill_count != 0 && sc->period != 0 && ring_apart(sc, 0);
      assumes rel_below(sc, UINT64_MAX - sc->budget - usage - sc->period - sc->refill_count * sc->period);
      ensures charge: ring_apart(sc, 0);
      ensures charge: usage != 0 || \old(head_apart(sc)) ==> head_apart(sc);
      ensures charge: rel_below(sc, UINT64_MAX - sc->budget);
      ensures window: \old(ring_window(sc)) && sc->budget <= sc->period ==> ring_window(sc);
      ACSL_HISTORY(ensures history: 0 < usage && sc->budget <= sc->period &&
                       usage <= \old(pos_amt(sc, 0)) + (\old(sc->refill_count) >= 2 ? \old(pos_amt(sc, 1)) : 0) ==>
                           tail_end(sc) >= \old(pos_rel(sc, 0)) + sc->period + usage;) */
bool refill_budget_check(struct sched_context *sc, u64 usage, u64 now);

/* The context starts being used at `now`: if the head is ready, its release
 * moves up to `now` (so what is cut from it comes back one period after its
 * real use) and refills that would be released before it runs out are merged
 * into it. Nothing for round robin. Returns true when the head changed
 * (reprogram the timer).
 * When to call it (the scheduler's choice, Lyons' thesis, 2018, ch. 7):
 *  - whenever the context becomes the current one (an SC switch) and when a
 *    thread of it becomes runnable: this gives the sliding window of
 *    refill.h's top comment (tests/test_refill_model.py, "switch" protocol);
 *  - mainline seL4 calls it only when a thread becomes runnable for
 *    sporadic-flagged contexts, and only at the SC switch for the others
 *    (constant bandwidth). A thread preempted and resumed without the call
 *    keeps the head's earlier release, so chunks used after the preemption
 *    come back early and the window bound weakens (docs/scheduling.md).
 * History (docs/proofs.md "Sliding window" -> "History"): nothing becomes
 * usable earlier: the head's release and the tail's end only move later. */
/*@ requires \valid(sc) && \separated(sc, &refill_min_budget_ticks, &refill_wcet_ticks);
    requires sc->refill_count != 0 ==> refill_invariant(sc) && refill_sum(sc) && refill_min(sc);
    assigns sc->refill_head, sc->refill_count, Refills(sc)[0 .. sc->refill_max - 1];
    ensures \old(sc->refill_count) != 0 ==> refill_invariant(sc) && refill_sum(sc) && refill_min(sc);
    ensures \old(sc->refill_count) == 0 ==> sc->refill_count == 0;
    behavior ordered:
      assumes sc->refill_count != 0 && sc->period != 0 && ring_apart(sc, 0);
      assumes rel_below(sc, UINT64_MAX - sc->budget) && now <= UINT64_MAX - sc->budget;
      ensures order: unblock_apart: ring_apart(sc, 0);
      ensures order: \result ==> head_apart(sc);
      ensures order: \old(head_apart(sc)) ==> head_apart(sc);
      ensures order: rel_below(sc, UINT64_MAX - sc->budget);
      ensures window: \old(ring_window(sc)) && sc->budget <= sc->period ==> ring_window(sc);
      ACSL_HISTORY(ensures history: pos_rel(sc, 0) >= \old(pos_rel(sc, 0));
      ensures history: tail_end(sc) >= \old(tail_end(sc));) */
bool refill_unblock_check(struct sched_context *sc, u64 now);

/* seL4_Yield after consuming `usage`: round robin refills the slice; a
 * sporadic context gives up the rest of its head refill (charged as used,
 * back one period after the head's release). Returns refill_budget_check's
 * value (true: the thread goes to the back of its queue, or to the release
 * queue if the new head is not ready). Consumed must count `usage` only.
 * It is refill_budget_check(sc, refill_yield_usage(sc, usage, now), now):
 * the scheduler charges that way, with its one call of the charge.
 * Order: as refill_budget_check's, with the charge at most the larger of
 * `usage` and the head's amount in the bound. History: as
 * refill_budget_check's for `usage`; a ready head given up comes back whole,
 * one period after its release. */
/*@ requires \valid(sc) && \separated(sc, &refill_min_budget_ticks, &refill_wcet_ticks);
    requires sc->refill_count != 0 ==> refill_invariant(sc) && refill_sum(sc) && refill_min(sc);
    assigns sc->refill_head, sc->refill_count, Refills(sc)[0 .. sc->refill_max - 1];
    ensures \old(sc->refill_count) != 0 ==> refill_invariant(sc) && refill_sum(sc) && refill_min(sc);
    ensures \old(sc->refill_count) == 0 ==> sc->refill_count == 0;
    behavior ordered:
      assumes sc->refill_count != 0 && sc->period != 0 && ring_apart(sc, 0);
      assumes rel_below(sc, UINT64_MAX - sc->budget - \max(usage, Refills(sc)[sc->refill_head].amount) -
                            sc->period - sc->refill_count * sc->period);
      ensures charge: ring_apart(sc, 0);
      ensures charge: usage != 0 || \old(head_apart(sc)) ==> head_apart(sc);
      ensures charge: rel_below(sc, UINT64_MAX - sc->budget);
      ensures window: \old(ring_window(sc)) && sc->budget <= sc->period ==> ring_window(sc);
      ACSL_HISTORY(ensures history: 0 < usage && sc->budget <= sc->period &&
                       usage <= \old(pos_amt(sc, 0)) + (\old(sc->refill_count) >= 2 ? \old(pos_amt(sc, 1)) : 0) ==>
                           tail_end(sc) >= \old(pos_rel(sc, 0)) + sc->period + usage;
      ensures history: 0 < \old(pos_amt(sc, 0)) && sc->budget <= sc->period && usage <= \old(pos_amt(sc, 0)) &&
                       now + refill_wcet_ticks <= UINT64_MAX && \old(pos_rel(sc, 0)) <= now + refill_wcet_ticks ==>
                           tail_end(sc) >= \old(pos_rel(sc, 0)) + sc->period + \old(pos_amt(sc, 0));) */
bool refill_yield(struct sched_context *sc, u64 usage, u64 now);
static inline u64 refill_yield_usage(struct sched_context *sc, u64 usage, u64 now)
{
    if (sc->refill_count == 0)
        return usage;
    u64 head = refill_head(sc)->amount;
    /* Round robin: the slice is refilled (charging all of it does that). */
    if (refill_round_robin(sc))
        return head;
    /* Sporadic: the rest of the head is given up, charged as if used. A head
     * not yet released is not the yielder's to give up (a running thread's
     * head is always ready; this only guards a misuse). */
    if (!refill_ready(sc, now))
        return usage;
    return usage > head ? usage : head;
}

/* The ring invariants (for the Check flavour's invariant checker and the
 * tests): 1 <= size <= max, release times non-decreasing from head to tail,
 * amounts add up to the budget, the head holds at least MIN_BUDGET. */
/*@ requires \valid_read(sc);
    requires REFILL_MIN_REFILLS <= sc->refill_max <= CONFIG_MAX_REFILLS;
    requires \valid_read(Refills((struct sched_context *)sc) + (0 .. sc->refill_max - 1));
    assigns \nothing; */
bool refill_valid(const struct sched_context *sc);

#endif
