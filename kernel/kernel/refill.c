/* Refills: the sporadic-server replenishment algorithms (refill.h).
 *
 * Follows Lyons' thesis (UNSW 2018), Appendix B, and seL4's sporadic.c,
 * with corrections, some that the property tests (tests/test_refill_model.py)
 * showed to be needed; each is marked "Correction" below and listed in
 * docs/scheduling.md "Refills".
 *
 * Loop bounds: every loop below runs at most refill_count times (each
 * iteration pops or visits one refill), and refill_count <= refill_max <=
 * CONFIG_MAX_REFILLS, which clamp_max enforces whatever the caller asks
 * (kernel/wcet-annotations.toml bounds the loops by it). No loop depends on
 * the size of `usage` or on time. */
#include <refill.h>
#include <timer.h>

u64 refill_min_budget_ticks, refill_wcet_ticks;
void refill_timebase_changed(void)
{
    refill_min_budget_ticks = us_to_ticks(REFILL_MIN_BUDGET_US);
    refill_wcet_ticks = us_to_ticks(REFILL_KERNEL_WCET_US);
}

static bool single(const struct sched_context *sc) { return sc->refill_count == 1; }
static bool full(const struct sched_context *sc) { return sc->refill_count == sc->refill_max; }

static const struct refill *cref(const struct sched_context *sc, u32 i) { return &sc_refills((struct sched_context *)sc)[i]; }
static struct refill *next_of_head(struct sched_context *sc) { return refill_at(sc, refill_index_add(sc, sc->refill_head, 1)); }
static u32 tail_index(const struct sched_context *sc) { return refill_index_add(sc, sc->refill_head, sc->refill_count - 1); }

/* The ring's amounts and release times change only through these three
 * stores, each with what it does to the sum of the amounts as its contract
 * (docs/proofs.md "Sum"): the operations' proofs then chain these facts
 * instead of unfolding the eight slots of ring_sum. Always inlined: the
 * machine code is that of the plain stores. */
/*@ requires refill_invariant(sc);
    requires i < sc->refill_max && ring_off(sc, i) < sc->refill_count;
    assigns Refills(sc)[i].amount;
    ensures refill_invariant(sc) && sc->budget == \old(sc->budget) && sc->period == \old(sc->period);
    ensures sc->refill_max == \old(sc->refill_max);
    ensures Refills(sc)[i].amount == a;
    ensures ring_sum(sc) == \old(ring_sum(sc)) - \old(Refills(sc)[i].amount) + a;
    ensures order: \forall integer k; 0 <= k < sc->refill_count && ring_slot(sc, k) != i ==>
                       pos_rel(sc, k) == \old(pos_rel(sc, k)) && pos_amt(sc, k) == \old(pos_amt(sc, k));
    ensures order: Refills(sc)[i].release_time == \old(Refills(sc)[i].release_time);
    ensures window: ring_slot(sc, sc->refill_count - 1) != i ==> tail_end(sc) == \old(tail_end(sc)); */
static ALWAYS_INLINE void set_amount(struct sched_context *sc, u32 i, u64 a)
{
    refill_at(sc, i)->amount = a;
    /* One term of the sum changed (slots: ring_sum). */
    /*@ assert \forall integer k; 0 <= k < 8 && k != i ==> slot_amount(sc, k) == \at(slot_amount(sc, k), Pre); */
    /*@ assert slot_amount(sc, i) == a && \at(slot_amount(sc, i), Pre) == \at(Refills(sc)[i].amount, Pre); */
}

/* Adding to a refill in use: the sum bounds the result, so it does not wrap. */
/*@ requires refill_invariant(sc);
    requires i < sc->refill_max && ring_off(sc, i) < sc->refill_count;
    requires ring_sum(sc) + a <= UINT64_MAX;
    assigns Refills(sc)[i].amount;
    ensures refill_invariant(sc) && sc->budget == \old(sc->budget) && sc->period == \old(sc->period);
    ensures sc->refill_max == \old(sc->refill_max);
    ensures Refills(sc)[i].amount == \old(Refills(sc)[i].amount) + a;
    ensures ring_sum(sc) == \old(ring_sum(sc)) + a;
    ensures order: \forall integer k; 0 <= k < sc->refill_count && ring_slot(sc, k) != i ==>
                       pos_rel(sc, k) == \old(pos_rel(sc, k)) && pos_amt(sc, k) == \old(pos_amt(sc, k));
    ensures order: Refills(sc)[i].release_time == \old(Refills(sc)[i].release_time); */
static ALWAYS_INLINE void add_amount(struct sched_context *sc, u32 i, u64 a)
{
    /*@ assert slot_amount(sc, i) == Refills(sc)[i].amount; */
    /*@ assert Refills(sc)[i].amount <= ring_sum(sc); */
    refill_at(sc, i)->amount += a;
    /*@ assert \forall integer k; 0 <= k < 8 && k != i ==> slot_amount(sc, k) == \at(slot_amount(sc, k), Pre); */
    /*@ assert slot_amount(sc, i) == \at(slot_amount(sc, i), Pre) + a; */
}

/*@ requires refill_invariant(sc);
    requires i < sc->refill_max;
    assigns Refills(sc)[i].release_time;
    ensures refill_invariant(sc) && sc->budget == \old(sc->budget) && sc->period == \old(sc->period);
    ensures sc->refill_max == \old(sc->refill_max);
    ensures Refills(sc)[i].release_time == t;
    ensures ring_sum(sc) == \old(ring_sum(sc));
    ensures order: \forall integer k; 0 <= k < sc->refill_count && ring_slot(sc, k) != i ==>
                       pos_rel(sc, k) == \old(pos_rel(sc, k)) && pos_amt(sc, k) == \old(pos_amt(sc, k));
    ensures order: Refills(sc)[i].amount == \old(Refills(sc)[i].amount); */
static ALWAYS_INLINE void set_release(struct sched_context *sc, u32 i, u64 t)
{
    refill_at(sc, i)->release_time = t;
    /*@ assert \forall integer k; 0 <= k < 8 ==> slot_amount(sc, k) == \at(slot_amount(sc, k), Pre); */
}

/* A lemma function (proved once, instantiated where called, so that the
 * fact is not a hypothesis of every goal): a ring of one or two refills
 * sums to their amounts. */
/*@ ghost
  /@ requires ring_shape(sc) && sc->refill_count <= 2;
     assigns \nothing;
     ensures ring_sum(sc) == Refills(sc)[sc->refill_head].amount +
                 (sc->refill_count == 2 ? Refills(sc)[ring_slot(sc, 1)].amount : 0); @/
  static void ring_sum_small(struct sched_context *sc) { }
*/

/* A lemma function: the head's amount is at most the sum (the other
 * terms are unsigned), so that a release bounded by UINT64_MAX - ring_sum
 * plus the head's amount does not wrap (docs/proofs.md "Order"). */
/*@ ghost
  /@ requires refill_invariant(sc);
     assigns \nothing;
     ensures order: Refills(sc)[sc->refill_head].amount <= ring_sum(sc); @/
  static void head_le_sum(struct sched_context *sc) { }
*/

/* The same for any refill in use (order: a tail's end does not wrap). */
/*@ ghost
  /@ requires refill_invariant(sc) && i < sc->refill_max && ring_off(sc, i) < sc->refill_count;
     assigns \nothing;
     ensures order: Refills(sc)[i].amount <= ring_sum(sc); @/
  static void live_le_sum(struct sched_context *sc, u32 i) { }
*/

/* A lemma function (order): one step of the charge's first loop moves the
 * bound on the release times by one period; the loop counter's decrement
 * does not wrap. Products of the counter and the period are the only
 * non-linear terms of the order proofs, kept out of the loop's goals. */
/*@ ghost
  /@ requires 0 < n;
     assigns \nothing;
     ensures charge: (u32)(n - 1) == n - 1;
     ensures charge: (u32)(n - 1) * p + p == n * p;
     ensures charge: 0 <= (u32)(n - 1) * p; @/
  static void period_step(u32 n, u64 p) { }
*/

/* A lemma function (order): every release at most t when the last one
 * and all before it are (the case split of a bound after schedule_used,
 * which the provers did not take within the charge's goal). */
/*@ ghost
  /@ requires ring_shape(sc);
     assigns \nothing;
     ensures charge: \forall integer t;
         (\forall integer k; 0 <= k < sc->refill_count - 1 ==> pos_rel(sc, k) <= t) &&
         pos_rel(sc, sc->refill_count - 1) <= t ==> rel_below(sc, t); @/
  static void rel_below_join(struct sched_context *sc) { }
*/

/* A lemma function (order): a ring of at most two refills whose head ends
 * before the next is released is in order (refill_update's new ring; the
 * provers did not take the step from the one pair to ring_apart's
 * quantifier within that function's goal). */
/*@ ghost
  /@ assigns \nothing;
     ensures order: sc->refill_count <= 2 && head_apart(sc) ==> ring_apart(sc, 0); @/
  static void apart_two(struct sched_context *sc) { }
*/

/* A lemma function (window): a ring of one refill holds the whole sum, so
 * it ends no later than its release plus the sum (the one-refill case of
 * every window step). No precondition: the callers call it in ghost code
 * on rings of any size. */
/*@ ghost
  /@ assigns \nothing;
     ensures window: ring_shape(sc) && sc->refill_count == 1 ==>
                         pos_amt(sc, 0) == ring_sum(sc) && tail_end(sc) == pos_rel(sc, 0) + ring_sum(sc); @/
  static void one_holds_sum(struct sched_context *sc) { }
*/

/* The ring reset to one refill (head 0) takes its first slot. */
/*@ requires refill_invariant(sc) && sc->refill_head == 0 && sc->refill_count == 1;
    assigns Refills(sc)[0];
    ensures refill_invariant(sc) && sc->budget == \old(sc->budget) && sc->period == \old(sc->period);
    ensures sc->refill_max == \old(sc->refill_max);
    ensures Refills(sc)[0].release_time == h.release_time && Refills(sc)[0].amount == h.amount;
    ensures ring_sum(sc) == h.amount; */
static ALWAYS_INLINE void set_only(struct sched_context *sc, struct refill h)
{
    *refill_at(sc, 0) = h;
    /*@ assert \forall integer k; 1 <= k < 8 ==> slot_amount(sc, k) == 0; */
}

/* Remove the head (there is another refill behind it). */
/*@ requires refill_invariant(sc) && sc->refill_count >= 2;
    assigns sc->refill_head, sc->refill_count;
    ensures refill_invariant(sc) && sc->refill_count == \old(sc->refill_count) - 1;
    ensures sc->refill_head == (\old(sc->refill_head) + 1 < sc->refill_max ? \old(sc->refill_head) + 1 : 0);
    ensures \forall integer i; 0 <= i < sc->refill_max ==>
                (slot_live(sc, i) <==> \old(slot_live(sc, i)) && i != \old(sc->refill_head));
    ensures ring_sum(sc) == \old(ring_sum(sc)) - \old(Refills(sc)[sc->refill_head].amount);
    ensures \result.release_time == \old(Refills(sc)[sc->refill_head].release_time);
    ensures \result.amount == \old(Refills(sc)[sc->refill_head].amount);
    ensures order: \forall integer k; 0 <= k < sc->refill_count ==>
                       ring_slot(sc, k) == \old(ring_slot(sc, k + 1)); */
static struct refill pop_head(struct sched_context *sc)
{
    struct refill r = *refill_head(sc);
    sc->refill_head = refill_index_add(sc, sc->refill_head, 1);
    sc->refill_count--;
    return r;
}

/* Append a refill (the ring has room). */
/*@ requires ring_shape(sc) && ring_memory(sc, sc->refill_max);
    requires sc->refill_count < sc->refill_max;
    assigns sc->refill_count, Refills(sc)[ring_slot(sc, sc->refill_count)];
    ensures ring_shape(sc) && sc->refill_count == \old(sc->refill_count) + 1;
    ensures sc->budget == \old(sc->budget) && sc->period == \old(sc->period);
    ensures Refills(sc)[sc->refill_head].release_time == \old(Refills(sc)[sc->refill_head].release_time);
    ensures Refills(sc)[sc->refill_head].amount == \old(Refills(sc)[sc->refill_head].amount);
    ensures ring_sum(sc) == \old(ring_sum(sc)) + r.amount;
    ensures order: pos_rel(sc, sc->refill_count - 1) == r.release_time &&
                   pos_amt(sc, sc->refill_count - 1) == r.amount;
    ensures order: \forall integer k; 0 <= k < \old(sc->refill_count) ==>
                       pos_rel(sc, k) == \old(pos_rel(sc, k)) && pos_amt(sc, k) == \old(pos_amt(sc, k)); */
static void add_tail(struct sched_context *sc, struct refill r)
{
    sc->refill_count++;
    *refill_tail(sc) = r;
    /* The sum: only the appended slot's term changed, from 0 (not in use). */
    /*@ assert \forall integer i; 0 <= i < 8 && i != ring_slot(sc, sc->refill_count - 1) ==>
                   slot_amount(sc, i) == \at(slot_amount(sc, i), Pre); */
    /*@ assert slot_amount(sc, ring_slot(sc, sc->refill_count - 1)) == r.amount; */
    /*@ assert \at(slot_amount(sc, ring_slot(sc, sc->refill_count)), Pre) == 0; */
}

/*@ assigns \nothing;
    ensures clamped: \result == clamped_max(max_refills); */
static u32 clamp_max(word_t max_refills)
{
    /* ConfigureFlags never asks for more than CONFIG_MAX_REFILLS (nor more
     * than the object holds); the clamp keeps the loop bounds true whatever
     * the caller. Fewer than two is never asked for (it adds two to
     * extra_refills) and every object holds two; with one, a split would
     * have to merge the used chunk into the head itself. */
    if (max_refills < REFILL_MIN_REFILLS)
        return REFILL_MIN_REFILLS;
    return max_refills > CONFIG_MAX_REFILLS ? CONFIG_MAX_REFILLS : (u32)max_refills;
}

void refill_new(struct sched_context *sc, word_t max_refills, u64 budget, u64 period, u64 now)
{
    bool rr = period == 0 || period == budget;
    sc->budget = budget;
    sc->period = rr ? 0 : period;
    /* Round robin needs exactly the head (what is left of the slice) and the
     * tail (what has been used of it); seL4 ignores extra_refills for it. */
    sc->refill_max = rr ? REFILL_MIN_REFILLS : clamp_max(max_refills);
    sc->refill_head = 0;
    sc->refill_count = 1;
    refill_at(sc, 0)->release_time = now;
    refill_at(sc, 0)->amount = budget;
    /* (The sum before the round-robin tail: with the order facts in its
     * context, the postcondition timed out at 20 s without it.) */
    /*@ assert refill_invariant(sc) && ring_sum(sc) == budget; */
    /*@ assert order: sc->refill_count == 1 && pos_rel(sc, 0) == now; */
    if (rr)
        add_tail(sc, (struct refill){ .release_time = now, .amount = 0 });
    /*@ assert order: pos_rel(sc, 0) == now && pos_rel(sc, sc->refill_count - 1) == now; */
    /*@ assert order: \forall integer k; 0 <= k < sc->refill_count ==> pos_rel(sc, k) == now; */
    /* Window: a sporadic context's one refill, the budget at `now`. */
    /*@ assert window: sc->period != 0 ==> sc->refill_count == 1 && pos_amt(sc, 0) == budget; */
}


/* The head, used from its release, runs into the next refill's release: one
 * refill {head's time, both amounts} gives exactly the same time no earlier,
 * because the next one's share can only be used after the head's. Merging
 * keeps the release times of the ring strictly ordered with the head's end
 * (head.time + head.amount < next.time), which is what lets a split measure a
 * chunk's return from the head's release time. */
static bool head_overlaps(struct sched_context *sc)
{
    struct refill *h = refill_head(sc);
    return !single(sc) && h->release_time + h->amount >= next_of_head(sc)->release_time;
}

/*@ requires refill_invariant(sc) && ring_sum(sc) <= UINT64_MAX;
    assigns sc->refill_head, sc->refill_count, Refills(sc)[0 .. sc->refill_max - 1];
    ensures refill_invariant(sc) && sc->refill_count <= \old(sc->refill_count);
    ensures ring_sum(sc) == \old(ring_sum(sc));
    ensures Refills(sc)[sc->refill_head].amount >= \old(Refills(sc)[sc->refill_head].amount);
    behavior ordered:
      assumes ring_apart(sc, 1) && rel_below(sc, UINT64_MAX - ring_sum(sc));
      ensures order: ring_apart(sc, 0) && head_apart(sc);
      ensures order: rel_below(sc, UINT64_MAX - ring_sum(sc));
      ensures order: pos_rel(sc, 0) == \old(pos_rel(sc, 0));
      ensures window: \old(ring_window(sc)) && ring_sum(sc) <= sc->period ==> ring_window(sc);
      ACSL_HISTORY(ensures history: tail_end(sc) >= \old(tail_end(sc));) */
static void merge_overlapping(struct sched_context *sc)
{
    /* No step counter: each step pops a refill and head_overlaps is false
     * for a single one, so at most refill_count - 1 steps (proved: the
     * variant below, with refill_invariant's refill_count <=
     * CONFIG_MAX_REFILLS; docs/proofs.md "Optimisations"). */
    /*@ loop invariant refill_invariant(sc);
        loop invariant sc->refill_count <= \at(sc->refill_count, Pre);
        loop invariant ring_sum(sc) == \at(ring_sum(sc), Pre);
        loop invariant Refills(sc)[sc->refill_head].amount >= \at(Refills(sc)[sc->refill_head].amount, Pre);
        for ordered: loop invariant order: ring_apart(sc, 1);
        for ordered: loop invariant order: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre));
        for ordered: loop invariant order: pos_rel(sc, 0) == \at(pos_rel(sc, 0), Pre);
        for ordered: loop invariant window: sc->refill_count >= 2 ==>
            pos_rel(sc, sc->refill_count - 1) == \at(pos_rel(sc, sc->refill_count - 1), Pre) &&
            pos_amt(sc, sc->refill_count - 1) == \at(pos_amt(sc, sc->refill_count - 1), Pre);
        ACSL_HISTORY(for ordered: loop invariant history: tail_end(sc) >= \at(tail_end(sc), Pre);)
        loop assigns sc->refill_head, sc->refill_count, Refills(sc)[0 .. sc->refill_max - 1];
        loop variant sc->refill_count; */
    while (head_overlaps(sc)) {
#ifdef KAIROS_PROVE_HISTORY
        /* History: the overlap test's 64-bit end does not wrap. */
        /*@ ghost head_le_sum(sc); */
        /*@ for ordered: assert history: pos_rel(sc, 0) + pos_amt(sc, 0) >= pos_rel(sc, 1); */
        /*@ for ordered: assert history: sc->refill_count == 2 ==>
                  tail_end(sc) == pos_rel(sc, 1) + pos_amt(sc, 1); */
#endif
        struct refill r = pop_head(sc);
#ifdef KAIROS_PROVE_HISTORY
        /*@ for ordered: assert history: r.release_time + r.amount >= \at(pos_rel(sc, 1), LoopCurrent); */
#endif
        /* Order: the refills behind the new head are the old ones from
         * position 2 on; only the head's slot is written below. */
        /*@ for ordered: assert order: \forall integer k; 0 <= k < sc->refill_count ==>
                  pos_rel(sc, k) == \at(pos_rel(sc, k + 1), LoopCurrent) &&
                  pos_amt(sc, k) == \at(pos_amt(sc, k + 1), LoopCurrent); */
        /*@ for ordered: assert order: ring_apart(sc, 0); */
        /*@ for ordered: assert order: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre)); */
        /*@ for ordered: assert order: \forall integer k; 1 <= k < sc->refill_count ==>
                                       ring_slot(sc, k) != sc->refill_head; */
        /*@ for ordered: assert order: r.release_time <= UINT64_MAX - \at(ring_sum(sc), Pre); */
        add_amount(sc, sc->refill_head, r.amount);
        /*@ for ordered: assert order: ring_apart(sc, 1); */
        /*@ for ordered: assert order: \forall integer k; 1 <= k < sc->refill_count ==>
                                       pos_rel(sc, k) <= UINT64_MAX - \at(ring_sum(sc), Pre); */
        set_release(sc, sc->refill_head, r.release_time);
        /*@ for ordered: assert order: ring_apart(sc, 1); */
        /*@ for ordered: assert order: \forall integer k; 1 <= k < sc->refill_count ==>
                                       pos_rel(sc, k) <= UINT64_MAX - \at(ring_sum(sc), Pre); */
        /*@ for ordered: assert order: pos_rel(sc, 0) <= UINT64_MAX - \at(ring_sum(sc), Pre); */
        /* Window: the tail is the one it was (pop_head's shift of
         * positions); only the head's slot was written. (After the order
         * steps: as hypotheses of theirs, the window facts slowed them.) */
        /*@ for ordered: assert window: sc->refill_count >= 2 ==>
                  ring_slot(sc, sc->refill_count - 1) != sc->refill_head; */
        /*@ for ordered: assert window: sc->refill_count >= 2 ==>
                  pos_rel(sc, sc->refill_count - 1) == \at(pos_rel(sc, sc->refill_count - 1), LoopCurrent) &&
                  pos_amt(sc, sc->refill_count - 1) == \at(pos_amt(sc, sc->refill_count - 1), LoopCurrent); */
#ifdef KAIROS_PROVE_HISTORY
        /* History: a merge of the last two refills ends where the head,
         * used from its release, would run on into the next one's
         * amount: no earlier than the old tail. */
        /*@ for ordered: assert history: sc->refill_count == 1 ==>
                  pos_rel(sc, 0) == r.release_time &&
                  pos_amt(sc, 0) == r.amount + \at(pos_amt(sc, 1), LoopCurrent); */
        /*@ for ordered: assert history: tail_end(sc) >= \at(tail_end(sc), LoopCurrent); */
#endif
    }
    /* The exit test's 64-bit end did not wrap (order: head_apart). */
    /*@ ghost head_le_sum(sc); */
    /* Window: the tail is the one it was, or the head alone, which holds
     * the sum; the head's release is the one it was. */
    /*@ ghost one_holds_sum(sc); */
}

/* schedule_used (§5.4): time used from a refill comes back at `used`'s
 * release; put it at the tail of the ring. Inlined into its three callers:
 * called in sporadic_charge's loop, GCC kept the refill passed to it in a
 * stack slot, and for the WCET analysis those two stores in every
 * iteration could evict the SC's lines the loop reads (the stack and the
 * SC are at addresses it cannot relate): sporadic_charge alone at 8
 * refills 32,020 cycles as a call, 12,038 inlined (docs/wcet.md
 * "Interrupt latency" → "Figures"). */
/*@ requires refill_invariant(sc) && sc->period != 0;
    requires ring_sum(sc) + used.amount <= UINT64_MAX;
    assigns sc->refill_count, Refills(sc)[0 .. sc->refill_max - 1];
    ensures refill_invariant(sc) && sc->refill_count <= \old(sc->refill_count) + 1;
    ensures ring_sum(sc) == \old(ring_sum(sc)) + used.amount;
    behavior ordered:
      assumes ring_apart(sc, 1);
      assumes rel_below(sc, UINT64_MAX - ring_sum(sc) - used.amount);
      assumes used.release_time <= UINT64_MAX - ring_sum(sc) - used.amount;
      ensures order: ring_apart(sc, 1);
      ensures order: \old(ring_apart(sc, 0)) ==> ring_apart(sc, 0);
      ensures order: \old(head_apart(sc)) ==> head_apart(sc);
      ensures order: rel_below(sc, UINT64_MAX - ring_sum(sc));
      ensures order: pos_rel(sc, 0) == \old(pos_rel(sc, 0));
      ensures charge: \forall integer k; 0 <= k < sc->refill_count - 1 ==>
                         pos_rel(sc, k) == \old(pos_rel(sc, k)) && pos_amt(sc, k) == \old(pos_amt(sc, k));
      ensures charge: pos_rel(sc, sc->refill_count - 1) <=
                         \max(used.release_time, \old(pos_rel(sc, sc->refill_count - 1)));
      ensures window: tail_end(sc) <= \max(\old(tail_end(sc)), used.release_time) + used.amount;
      ensures window: \old(head_first(sc)) ==> head_first(sc);
      ACSL_HISTORY(ensures history: tail_end(sc) == \max(\old(tail_end(sc)), used.release_time) + used.amount;
      ensures history: pos_amt(sc, sc->refill_count - 1) >= used.amount;
      ensures history: pos_amt(sc, 0) >= \old(pos_amt(sc, 0));) */
static ALWAYS_INLINE void schedule_used(struct sched_context *sc, struct refill used, u64 min_budget)
{
    u32 ti = tail_index(sc);
    struct refill *t = refill_at(sc, ti);
    /* Order: only the tail's slot is written, or the one after it; the
     * tail's 64-bit end does not wrap. */
    /*@ ghost live_le_sum(sc, ti); */
    /*@ for ordered: assert order: ti == ring_slot(sc, sc->refill_count - 1); */
    /*@ for ordered: assert order: \forall integer k; 0 <= k < sc->refill_count - 1 ==> ring_slot(sc, k) != ti; */
    /*@ for ordered: assert order: t->release_time + t->amount <= UINT64_MAX; */
    /*@ for ordered: assert window: tail_end(sc) == t->release_time + t->amount; */
    if (t->release_time + t->amount >= used.release_time) {
        /* The tail, used from its release, reaches `used`'s release before it
         * runs out: adding the amount to it releases nothing earlier.
         * (Thesis: only when used.time <= tail.time.) */
        add_amount(sc, ti, used.amount);
        /*@ for ordered: assert order: \forall integer k; 0 <= k < sc->refill_count - 1 ==>
                                   pos_rel(sc, k) == \at(pos_rel(sc, k), Pre) && pos_amt(sc, k) == \at(pos_amt(sc, k), Pre); */
        /*@ for ordered: assert order: \forall integer k; 0 <= k < sc->refill_count ==>
                                       pos_rel(sc, k) == \at(pos_rel(sc, k), Pre); */
        /*@ for ordered: assert order: ring_apart(sc, 1) && (\at(ring_apart(sc, 0), Pre) ==> ring_apart(sc, 0)); */
        /*@ for ordered: assert order: \at(head_apart(sc), Pre) ==> head_apart(sc); */
        /*@ for ordered: assert order: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre) - used.amount); */
        /* Window: the tail grows by the amount, at its release. */
        /*@ for ordered: assert window: tail_end(sc) == \at(tail_end(sc), Pre) + used.amount; */
        /*@ for ordered: assert window: \at(head_first(sc), Pre) ==> head_first(sc); */
#ifdef KAIROS_PROVE_HISTORY
        /* History: the tail reached `used`'s release before the add, so
         * the amount it gained cannot all be used before that release. */
        /*@ for ordered: assert history: \at(tail_end(sc), Pre) >= used.release_time; */
        /*@ for ordered: assert history: pos_amt(sc, sc->refill_count - 1) == \at(pos_amt(sc, sc->refill_count - 1), Pre) + used.amount; */
        /*@ for ordered: assert history: pos_amt(sc, 0) >= \at(pos_amt(sc, 0), Pre); */
#endif
    } else if ((used.amount < min_budget && !single(sc)) || full(sc)) {
        /* Too small to be worth a refill of its own (it could never be run
         * alone), or no room: merge it into the tail, moving the tail later
         * so that the merged refill ends where `used` would have. Both
         * shares then come back no earlier than they were due.
         * Correction: the thesis delays the whole tail to used.time (more
         * than needed), and keeps a slot free instead with the App. B loop
         * `while (head < MIN_BUDGET || full)`, which with the default two
         * refills pushes the rest of the head a period away at every
         * preemption. */
        set_release(sc, ti, used.release_time - t->amount);
        /*@ for ordered: assert order: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre) - used.amount); */
        add_amount(sc, ti, used.amount);
        /*@ for ordered: assert order: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre) - used.amount); */
        /*@ for ordered: assert order: \forall integer k; 0 <= k < sc->refill_count - 1 ==>
                                   pos_rel(sc, k) == \at(pos_rel(sc, k), Pre) && pos_amt(sc, k) == \at(pos_amt(sc, k), Pre); */
        /*@ for ordered: assert order: pos_rel(sc, sc->refill_count - 1) >= \at(pos_rel(sc, sc->refill_count - 1), Pre); */
        /*@ for ordered: assert order: pos_rel(sc, sc->refill_count - 1) <= used.release_time; */
        /*@ for ordered: assert order: sc->refill_count >= 2 && pos_rel(sc, 0) == \at(pos_rel(sc, 0), Pre); */
        /*@ for ordered: assert order: \forall integer k; 0 <= k && k + 1 < sc->refill_count ==>
                  pos_rel(sc, k) + pos_amt(sc, k) == \at(pos_rel(sc, k) + pos_amt(sc, k), Pre) &&
                  pos_rel(sc, k + 1) >= \at(pos_rel(sc, k + 1), Pre); */
        /*@ for ordered: assert order: ring_apart(sc, 1); */
        /*@ for ordered: assert order: \at(ring_apart(sc, 0), Pre) ==> ring_apart(sc, 0); */
        /*@ for ordered: assert order: \at(head_apart(sc), Pre) ==> head_apart(sc); */
        /* Window: the moved tail ends where `used` would have; it moved
         * later, the head did not. */
        /*@ for ordered: assert window: tail_end(sc) == used.release_time + used.amount; */
        /*@ for ordered: assert window: \at(head_first(sc), Pre) ==> head_first(sc); */
#ifdef KAIROS_PROVE_HISTORY
        /*@ for ordered: assert history: \at(tail_end(sc), Pre) < used.release_time; */
        /*@ for ordered: assert history: pos_amt(sc, sc->refill_count - 1) == \at(pos_amt(sc, sc->refill_count - 1), Pre) + used.amount; */
        /*@ for ordered: assert history: sc->refill_count >= 2 && pos_amt(sc, 0) == \at(pos_amt(sc, 0), Pre); */
#endif
    } else {
        add_tail(sc, used);
        /*@ for ordered: assert order: \forall integer k; 0 <= k < sc->refill_count - 1 ==>
                                       pos_rel(sc, k) == \at(pos_rel(sc, k), Pre) && pos_amt(sc, k) == \at(pos_amt(sc, k), Pre); */
        /*@ for ordered: assert order: pos_rel(sc, sc->refill_count - 2) + pos_amt(sc, sc->refill_count - 2) < pos_rel(sc, sc->refill_count - 1); */
        /*@ for ordered: assert order: pos_rel(sc, 0) == \at(pos_rel(sc, 0), Pre); */
        /*@ for ordered: assert order: \forall integer k; 0 <= k && k + 2 < sc->refill_count ==>
                  pos_rel(sc, k) + pos_amt(sc, k) == \at(pos_rel(sc, k) + pos_amt(sc, k), Pre) &&
                  pos_rel(sc, k + 1) == \at(pos_rel(sc, k + 1), Pre); */
        /*@ for ordered: assert order: ring_apart(sc, 1); */
        /*@ for ordered: assert order: \at(ring_apart(sc, 0), Pre) ==>
                  \forall integer k; 0 <= k && k + 2 < sc->refill_count ==>
                      pos_rel(sc, k) + pos_amt(sc, k) <= pos_rel(sc, k + 1); */
        /*@ for ordered: assert order: \at(ring_apart(sc, 0), Pre) ==> ring_apart(sc, 0); */
        /*@ for ordered: assert order: \at(head_apart(sc), Pre) ==> head_apart(sc); */
        /*@ for ordered: assert order: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre) - used.amount); */
        /* Window: the new tail is `used`; behind a single refill it comes
         * after the head's end (the branch's test). */
        /*@ for ordered: assert window: tail_end(sc) == used.release_time + used.amount; */
        /*@ for ordered: assert window: \at(sc->refill_count, Pre) == 1 ==>
                  pos_rel(sc, 0) < pos_rel(sc, 1); */
        /*@ for ordered: assert window: \at(head_first(sc), Pre) ==> head_first(sc); */
#ifdef KAIROS_PROVE_HISTORY
        /*@ for ordered: assert history: \at(tail_end(sc), Pre) < used.release_time; */
        /*@ for ordered: assert history: pos_amt(sc, sc->refill_count - 1) == used.amount; */
        /*@ for ordered: assert history: pos_amt(sc, 0) == \at(pos_amt(sc, 0), Pre); */
#endif
    }
}

/* refill_split_check (§5.6): `usage` (0 < usage < head amount) of the head
 * was used; it comes back one period after the head's release. */
/*@ requires refill_invariant(sc) && sc->period != 0 && ring_sum(sc) <= UINT64_MAX;
    requires usage < Refills(sc)[sc->refill_head].amount;
    assigns sc->refill_head, sc->refill_count, Refills(sc)[0 .. sc->refill_max - 1];
    ensures refill_invariant(sc);
    ensures ring_sum(sc) == \old(ring_sum(sc));
    behavior ordered:
      assumes ring_apart(sc, 0);
      assumes rel_below(sc, UINT64_MAX - ring_sum(sc) - sc->period - usage);
      ensures charge: ring_apart(sc, 1);
      ensures charge: rel_below(sc, UINT64_MAX - \old(ring_sum(sc)));
      ensures window: \old(ring_window(sc)) && \old(ring_sum(sc)) <= sc->period ==>
                          ring_window(sc) && head_first(sc);
      ACSL_HISTORY(ensures history: tail_end(sc) >= \old(pos_rel(sc, 0)) + sc->period + usage;
      ensures history: pos_amt(sc, sc->refill_count - 1) >= usage;) */
static bool split_check(struct sched_context *sc, u64 usage, u64 min_budget)
{
    struct refill *h = refill_head(sc);
    u64 remnant = h->amount - usage;
    struct refill used = { .release_time = h->release_time + sc->period, .amount = usage };
    /* Order: the chunk's release does not wrap. */
    /*@ for ordered: assert charge: pos_rel(sc, 0) == h->release_time; */
    /*@ for ordered: assert charge: used.release_time == h->release_time + sc->period; */
    /*@ for ordered: assert charge: used.release_time <= UINT64_MAX - ring_sum(sc) - usage; */
    /* Window: a single refill holds the sum; otherwise the head ends no
     * later than the next release. */
    /*@ ghost one_holds_sum(sc); */
    /*@ for ordered: assert window: sc->refill_count >= 2 ==> pos_rel(sc, 0) + pos_amt(sc, 0) <= pos_rel(sc, 1); */
    /*@ for ordered: assert window: sc->refill_count >= 3 ==> pos_rel(sc, 1) <= pos_rel(sc, 2); */
#ifdef KAIROS_PROVE_HISTORY
    /* History: the chunk is `usage`, back one period after the head's
     * release (the time its use began). */
    /*@ for ordered: assert history: used.release_time == \at(pos_rel(sc, 0), Pre) + sc->period && used.amount == usage; */
#endif

    if (remnant < min_budget) {
        /* Too little left to run on (a kernel entry and exit would not fit). */
        if (single(sc)) {
            /* The whole budget moves one period on. */
            set_release(sc, sc->refill_head, h->release_time + sc->period);
            /*@ for ordered: assert charge: sc->refill_count == 1 && ring_apart(sc, 1); */
            /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre)); */
            /*@ for ordered: assert window: pos_amt(sc, 0) == \at(ring_sum(sc), Pre); */
            /*@ for ordered: assert window: \at(ring_window(sc), Pre) && \at(ring_sum(sc), Pre) <= sc->period ==>
                      ring_window(sc) && head_first(sc); */
#ifdef KAIROS_PROVE_HISTORY
            /* History: all of the head, used from its release or not,
             * comes back one period after that release. */
            /*@ for ordered: assert history: pos_rel(sc, 0) == \at(pos_rel(sc, 0), Pre) + sc->period; */
            /*@ for ordered: assert history: pos_amt(sc, 0) > usage; */
#endif
        } else {
            /* The remnant joins the next refill (later: no earlier release). */
            pop_head(sc);
            /* Order: the pop leaves the old order from position 1 on, the
             * remnant breaks the head pair alone (merge_overlapping, at the
             * end of the charge, restores it). */
            /*@ for ordered: assert charge: \forall integer k; 0 <= k < sc->refill_count ==>
                      pos_rel(sc, k) == \at(pos_rel(sc, k + 1), Pre) &&
                      pos_amt(sc, k) == \at(pos_amt(sc, k + 1), Pre); */
            /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre) - sc->period - usage); */
            /*@ for ordered: assert charge: \forall integer k; 1 <= k < sc->refill_count ==>
                                           ring_slot(sc, k) != sc->refill_head; */
            /*@ for ordered: assert charge: ring_apart(sc, 1); */
            /* Window: the tail is the one it was (or the new head alone);
             * the new head was the next refill, released after the old
             * head's end, so after the chunk's start. */
            /*@ for ordered: assert window: tail_end(sc) == \at(tail_end(sc), Pre); */
            /*@ for ordered: assert window: pos_rel(sc, 0) == \at(pos_rel(sc, 1), Pre); */
            /*@ for ordered: assert window: sc->refill_count >= 2 ==> pos_rel(sc, 0) <= pos_rel(sc, 1); */
            add_amount(sc, sc->refill_head, remnant);
            /*@ for ordered: assert charge: ring_apart(sc, 1); */
            /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre) - sc->period - usage); */
            /*@ for ordered: assert charge: ring_sum(sc) + usage == \at(ring_sum(sc), Pre); */
            /*@ for ordered: assert charge: used.release_time <= UINT64_MAX - \at(ring_sum(sc), Pre) - usage; */
            /*@ for ordered: assert window: sc->refill_count >= 2 ==> tail_end(sc) == \at(tail_end(sc), Pre); */
            /*@ ghost one_holds_sum(sc); */
            /*@ for ordered: assert window: sc->refill_count == 1 ==>
                      tail_end(sc) == pos_rel(sc, 0) + \at(ring_sum(sc), Pre) - usage; */
            /*@ for ordered: assert window: head_first(sc); */
            /*@ for ordered: assert window: \at(ring_window(sc), Pre) && \at(ring_sum(sc), Pre) <= sc->period ==>
                      tail_end(sc) + usage <= pos_rel(sc, 0) + sc->period; */
            /*@ for ordered: assert window: used.release_time + usage <= pos_rel(sc, 0) + sc->period; */
#ifdef KAIROS_PROVE_HISTORY
            /*@ for ordered: assert history: used.release_time == \at(pos_rel(sc, 0), Pre) + sc->period; */
#endif
            schedule_used(sc, used, min_budget);
#ifdef KAIROS_PROVE_HISTORY
            /*@ for ordered: assert history: tail_end(sc) >= used.release_time + usage; */
            /*@ for ordered: assert history: tail_end(sc) >= \at(pos_rel(sc, 0), Pre) + sc->period + usage; */
            /*@ for ordered: assert history: pos_amt(sc, sc->refill_count - 1) >= usage; */
#endif
            /*@ for ordered: assert charge: ring_sum(sc) == \at(ring_sum(sc), Pre); */
            /*@ for ordered: assert charge: ring_apart(sc, 1); */
            /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre)); */
            /*@ for ordered: assert window: \at(ring_window(sc), Pre) && \at(ring_sum(sc), Pre) <= sc->period ==>
                      ring_window(sc) && head_first(sc); */
        }
        return true;
    }
    /* Correction (as mainline seL4; the thesis listing does not): the head's
     * release advances by what was used, so the next chunk cut from it comes
     * back one period after *its* use began, not after the head's. */
    set_amount(sc, sc->refill_head, remnant);
    /* Order: the head's end stays where it was (release + usage, amount -
     * usage), the others do not move. */
    /*@ for ordered: assert charge: \forall integer k; 1 <= k < sc->refill_count ==>
                                   ring_slot(sc, k) != sc->refill_head; */
    /*@ for ordered: assert charge: ring_apart(sc, 1); */
    /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre) - sc->period - usage); */
    set_release(sc, sc->refill_head, h->release_time + usage);
    /*@ for ordered: assert charge: ring_apart(sc, 1); */
    /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre) - sc->period); */
    /*@ for ordered: assert charge: ring_sum(sc) + usage == \at(ring_sum(sc), Pre); */
    /* Window: the head's end stays put, so the tail (the head itself when
     * single) ends no later than the head's new release + period - usage;
     * the chunk comes back one period after the head's new release less
     * usage. */
    /*@ for ordered: assert window: sc->refill_count >= 2 ==> tail_end(sc) == \at(tail_end(sc), Pre); */
    /*@ for ordered: assert window: single_end: sc->refill_count == 1 ==>
              tail_end(sc) == \at(pos_rel(sc, 0) + pos_amt(sc, 0), Pre); */
    /*@ for ordered: assert window: pos_rel(sc, 0) == \at(pos_rel(sc, 0), Pre) + usage; */
    /*@ for ordered: assert window: head_first(sc); */
    /*@ for ordered: assert window: \at(ring_window(sc), Pre) && \at(ring_sum(sc), Pre) <= sc->period ==>
              tail_end(sc) + usage <= pos_rel(sc, 0) + sc->period; */
    /*@ for ordered: assert window: used.release_time + usage == pos_rel(sc, 0) + sc->period; */
    schedule_used(sc, used, min_budget);
#ifdef KAIROS_PROVE_HISTORY
    /*@ for ordered: assert history: tail_end(sc) >= used.release_time + usage; */
    /*@ for ordered: assert history: tail_end(sc) >= \at(pos_rel(sc, 0), Pre) + sc->period + usage; */
    /*@ for ordered: assert history: pos_amt(sc, sc->refill_count - 1) >= usage; */
#endif
    /*@ for ordered: assert charge: ring_sum(sc) == \at(ring_sum(sc), Pre); */
    /*@ for ordered: assert charge: ring_apart(sc, 1) && rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre)); */
    /*@ for ordered: assert window: \at(ring_window(sc), Pre) && \at(ring_sum(sc), Pre) <= sc->period ==>
              ring_window(sc) && head_first(sc); */
    return false;
}

/*@ requires refill_invariant(sc) && refill_sum(sc) && (sc->period == 0 || sc->period == sc->budget);
    assigns Refills(sc)[0 .. sc->refill_max - 1];
    ensures refill_invariant(sc);
    ensures refill_sum(sc);
    ensures sc->budget >= min_budget ==> Refills(sc)[sc->refill_head].amount >= min_budget; */
static bool round_robin_charge(struct sched_context *sc, u64 usage, u64 now, u64 min_budget)
{
    struct refill *h = refill_head(sc);
    u64 used = usage > h->amount ? h->amount : usage;
    set_amount(sc, sc->refill_head, h->amount - used);
    /* Minimum budget: the tail is another slot than the head. */
    /*@ assert sc->refill_count == 2 ==> ring_slot(sc, 1) != sc->refill_head; */
    if (!single(sc))
        add_amount(sc, tail_index(sc), used);
    /*@ assert sc->refill_count == 2 ==> ring_sum(sc) == \at(ring_sum(sc), Pre); */
    /*@ assert ring_sum(sc) <= \at(ring_sum(sc), Pre); */
    if (h->amount >= min_budget)
        return false;
    /* The slice is over: the whole budget again from now (no window for round
     * robin; the thread goes to the back of its priority's queue). A boot
     * context may have been made with the head refill only. */
    u64 t = h->release_time > now ? h->release_time : now;
    /*@ ghost ring_sum_small(sc); */
    set_amount(sc, sc->refill_head, sc->budget);
    set_release(sc, sc->refill_head, t);
    /*@ assert ring_sum(sc) == sc->budget +
                   (sc->refill_count == 2 ? Refills(sc)[ring_slot(sc, 1)].amount : 0); */
    if (!single(sc)) {
        set_amount(sc, tail_index(sc), 0);
        set_release(sc, tail_index(sc), t);
    }
    /*@ assert ring_sum(sc) == sc->budget; */
    /*@ assert Refills(sc)[sc->refill_head].amount == sc->budget; */
    return true;
}

/* The head must hold at least MIN_BUDGET, or the thread could not even enter
 * and leave the kernel on it: merge it into the next refill (whose release is
 * later, so nothing comes earlier). The sum of the amounts is at least
 * MIN_BUDGET, so this stops before the ring is single. *used_up: set if it
 * merged.
 * Correction (§8 item 30): Listing 7.4 tests head == tail here and App. B
 * refill_full; either pops the only refill of a full single ring.
 * The last step of sporadic_charge, a function of its own so that the
 * proof of its assigns does not carry the charge's facts (in place, the two
 * goals that add_amount's slot is in the ring time out; docs/proofs.md
 * "Sum"). Always inlined: the machine code is that of the loop in place. */
/*@ requires refill_invariant(sc) && min_budget <= ring_sum(sc) <= UINT64_MAX;
    requires \valid(used_up) && \separated(used_up, sc, Refills(sc) + (0 .. sc->refill_max - 1));
    assigns *used_up, sc->refill_head, sc->refill_count, Refills(sc)[0 .. sc->refill_max - 1];
    ensures refill_invariant(sc) && sc->refill_max == \old(sc->refill_max);
    ensures ring_sum(sc) == \old(ring_sum(sc));
    ensures head_min: Refills(sc)[sc->refill_head].amount >= min_budget;
    behavior ordered:
      assumes ring_apart(sc, 1) && rel_below(sc, UINT64_MAX - ring_sum(sc));
      ensures charge: ring_apart(sc, 1) && rel_below(sc, UINT64_MAX - ring_sum(sc));
      ensures window: \old(ring_window(sc) && ends_within(sc, 1)) && ring_sum(sc) <= sc->period ==>
                          ring_window(sc);
      ACSL_HISTORY(ensures history: tail_end(sc) >= \old(tail_end(sc));) */
static ALWAYS_INLINE void merge_small_head(struct sched_context *sc, u64 min_budget, bool *used_up)
{
    /* No step counter: the ring's size is one (proved: the variant below;
     * docs/proofs.md "Optimisations"). */
    /*@ loop invariant refill_invariant(sc);
        loop invariant sc->refill_max == \at(sc->refill_max, Pre);
        loop invariant ring_sum(sc) == \at(ring_sum(sc), Pre);
        for ordered: loop invariant charge: ring_apart(sc, 1);
        for ordered: loop invariant charge: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre));
        for ordered: loop invariant window:
            \at(ring_window(sc) && ends_within(sc, 1), Pre) && ring_sum(sc) <= sc->period ==>
                ring_window(sc) && ends_within(sc, 1);
        ACSL_HISTORY(for ordered: loop invariant history: tail_end(sc) >= \at(tail_end(sc), Pre);)
        loop assigns *used_up, sc->refill_head, sc->refill_count,
                     Refills(sc)[0 .. sc->refill_max - 1];
        loop variant sc->refill_count; */
    while (!single(sc) && refill_head(sc)->amount < min_budget) {
        struct refill r = pop_head(sc);
        /* Order: as in merge_overlapping, the refills behind the new head
         * are the old ones from position 2 on, and only the head's amount
         * grows, which breaks the head pair alone. */
        /*@ for ordered: assert charge: \forall integer k; 0 <= k < sc->refill_count ==>
                  pos_rel(sc, k) == \at(pos_rel(sc, k + 1), LoopCurrent) &&
                  pos_amt(sc, k) == \at(pos_amt(sc, k + 1), LoopCurrent); */
        /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre)); */
        /*@ for ordered: assert charge: \forall integer k; 1 <= k < sc->refill_count ==>
                                       ring_slot(sc, k) != sc->refill_head; */
        /*@ for ordered: assert charge: ring_apart(sc, 1); */
        /* Window: the tail is the one it was; the new head is the old
         * second refill, and the new second the old third, released no
         * earlier (ring_apart from position 1). */
        /*@ for ordered: assert window: tail_end(sc) == \at(tail_end(sc), LoopCurrent); */
        /*@ for ordered: assert window: pos_rel(sc, 0) == \at(pos_rel(sc, 1), LoopCurrent); */
        /*@ for ordered: assert window: sc->refill_count >= 2 ==>
                  pos_rel(sc, 1) == \at(pos_rel(sc, 2), LoopCurrent) &&
                  \at(pos_rel(sc, 1), LoopCurrent) <= \at(pos_rel(sc, 2), LoopCurrent); */
        /*@ for ordered: assert window:
                \at(ring_window(sc) && ends_within(sc, 1), Pre) && ring_sum(sc) + r.amount <= sc->period ==>
                    ring_window(sc) && ends_within(sc, 1); */
#ifdef KAIROS_PROVE_HISTORY
        /* History: popped from the last pair, the new head is the old
         * tail. */
        /*@ ghost one_holds_sum(sc); */
        /*@ for ordered: assert history: sc->refill_count == 1 ==> tail_end(sc) == pos_rel(sc, 0) + pos_amt(sc, 0); */
        /*@ for ordered: assert history: pos_rel(sc, 0) == Refills(sc)[sc->refill_head].release_time &&
                  pos_amt(sc, 0) == Refills(sc)[sc->refill_head].amount; */
        /*@ for ordered: assert history: sc->refill_count == 1 ==>
                  \at(tail_end(sc), LoopCurrent) == Refills(sc)[sc->refill_head].release_time +
                                                     Refills(sc)[sc->refill_head].amount; */
#endif
        add_amount(sc, sc->refill_head, r.amount);
        /*@ for ordered: assert charge: ring_apart(sc, 1); */
        /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre)); */
        /*@ for ordered: assert window: sc->refill_count >= 2 ==> tail_end(sc) == \at(tail_end(sc), LoopCurrent); */
        /*@ for ordered: assert window: sc->refill_count >= 2 ==> pos_rel(sc, 1) == \at(pos_rel(sc, 2), LoopCurrent); */
        /*@ for ordered: assert window: pos_rel(sc, 0) == \at(pos_rel(sc, 1), LoopCurrent); */
        /*@ ghost one_holds_sum(sc); */
        /*@ for ordered: assert window:
                \at(ring_window(sc) && ends_within(sc, 1), Pre) && ring_sum(sc) <= sc->period ==>
                    ring_window(sc) && ends_within(sc, 1); */
#ifdef KAIROS_PROVE_HISTORY
        /* History: the small head joins the next refill, at its (later)
         * release; a merged last pair ends later than the old tail. */
        /*@ for ordered: assert history: sc->refill_count == 1 ==>
                  \at(tail_end(sc), LoopCurrent) + r.amount == Refills(sc)[sc->refill_head].release_time +
                                                                Refills(sc)[sc->refill_head].amount; */
        /*@ for ordered: assert history: sc->refill_count == 1 ==>
                  tail_end(sc) == \at(tail_end(sc), LoopCurrent) + r.amount; */
        /*@ for ordered: assert history: tail_end(sc) >= \at(tail_end(sc), LoopCurrent); */
#endif
        *used_up = true;
    }
    /* Minimum budget: a single refill holds the whole sum. */
    /*@ ghost if (sc->refill_count == 1) ring_sum_small(sc); */
}

/* refill_budget_check for a sporadic context. Out of line so that the round
 * robin charge, the common one, does not pay for the registers its loops
 * need. */
/*@ requires refill_invariant(sc) && sc->period != 0 && min_budget <= ring_sum(sc) <= UINT64_MAX;
    assigns sc->refill_head, sc->refill_count, Refills(sc)[0 .. sc->refill_max - 1];
    ensures refill_invariant(sc);
    ensures ring_sum(sc) == \old(ring_sum(sc));
    ensures Refills(sc)[sc->refill_head].amount >= min_budget;
    behavior ordered:
      assumes ring_apart(sc, 0);
      assumes rel_below(sc, UINT64_MAX - ring_sum(sc) - usage - sc->period - sc->refill_count * sc->period);
      ensures charge: ring_apart(sc, 0) && head_apart(sc);
      ensures charge: rel_below(sc, UINT64_MAX - \old(ring_sum(sc)));
      ensures window: \old(ring_window(sc)) && \old(ring_sum(sc)) <= sc->period ==> ring_window(sc);
      ACSL_HISTORY(ensures history: 0 < \old(usage) && \old(ring_sum(sc)) <= sc->period &&
                       \old(usage) <= \old(pos_amt(sc, 0)) + (\old(sc->refill_count) >= 2 ? \old(pos_amt(sc, 1)) : 0) ==>
                           tail_end(sc) >= \old(pos_rel(sc, 0)) + sc->period + \old(usage);) */
static NOINLINE bool sporadic_charge(struct sched_context *sc, u64 usage, u64 min_budget)
{
    bool used_up = false;
    /* (Order: the period, constant here, as a plain term.) */
    /*@ ghost u64 per = sc->period; */
    /* Whole refills used up: each comes back one period after its release
     * (the time its use began: refill_unblock_check and the split keep the
     * head's release there). At most one pass round the ring. */
    /*@ loop invariant refill_invariant(sc) && 0 <= n <= \at(sc->refill_count, Pre);
        loop invariant ring_sum(sc) == \at(ring_sum(sc), Pre);
        for ordered: loop invariant charge: ring_apart(sc, 0);
        for ordered: loop invariant charge: usage <= \at(usage, Pre);
        for ordered: loop invariant charge: 0 <= n * per;
        loop invariant sc->period == per;
        for ordered: loop invariant charge:
            rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre) - \at(usage, Pre) - per - n * per);
        for ordered: loop invariant window: \at(ring_window(sc), Pre) && \at(ring_sum(sc), Pre) <= per ==> ring_window(sc);
        ACSL_HISTORY(for ordered: loop invariant history: n == \at(sc->refill_count, Pre) ==>
            usage == \at(usage, Pre) && pos_amt(sc, 0) == \at(pos_amt(sc, 0), Pre) &&
            (sc->refill_count >= 2 ==> pos_amt(sc, 1) == \at(pos_amt(sc, 1), Pre)) &&
            sc->refill_count == \at(sc->refill_count, Pre);
        for ordered: loop invariant history: \at(usage, Pre) <= \at(pos_amt(sc, 0), Pre) + (\at(sc->refill_count, Pre) >= 2 ? \at(pos_amt(sc, 1), Pre) : 0) &&
            n < \at(sc->refill_count, Pre) ==> usage <= pos_amt(sc, 0);
        for ordered: loop invariant history: \at(usage, Pre) <= \at(pos_amt(sc, 0), Pre) + (\at(sc->refill_count, Pre) >= 2 ? \at(pos_amt(sc, 1), Pre) : 0) &&
            (\at(sc->refill_count, Pre) >= 2 ? n + 2 <= \at(sc->refill_count, Pre) : n < \at(sc->refill_count, Pre)) ==>
                usage == 0;
        for ordered: loop invariant history: \at(ring_sum(sc), Pre) <= per ==>
            pos_rel(sc, 0) >= \at(pos_rel(sc, 0), Pre) + (\at(usage, Pre) - usage);
        for ordered: loop invariant history: tail_back: \at(ring_sum(sc), Pre) <= per && usage != \at(usage, Pre) ==>
            tail_end(sc) >= \at(pos_rel(sc, 0), Pre) + per + (\at(usage, Pre) - usage);)
        loop assigns n, usage, used_up, sc->refill_head, sc->refill_count,
                     Refills(sc)[0 .. sc->refill_max - 1];
        loop variant n; */
    for (u32 n = sc->refill_count; n > 0 && usage >= refill_head(sc)->amount; n--) {
        used_up = true;
        usage -= refill_head(sc)->amount;
#ifdef KAIROS_PROVE_HISTORY
        /* History: the step charges the head's amount; after the first
         * step, a charge within the guard has nothing left (the head held
         * all that was left) or what is left fits in the new head. */
        /*@ for ordered: assert history: usage == \at(usage, LoopCurrent) - \at(pos_amt(sc, 0), LoopCurrent); */
        /*@ for ordered: assert history: \at(usage, Pre) <= \at(pos_amt(sc, 0), Pre) + (\at(sc->refill_count, Pre) >= 2 ? \at(pos_amt(sc, 1), Pre) : 0) && n < \at(sc->refill_count, Pre) ==> usage == 0; */
        /*@ for ordered: assert history: \at(usage, Pre) <= \at(pos_amt(sc, 0), Pre) + (\at(sc->refill_count, Pre) >= 2 ? \at(pos_amt(sc, 1), Pre) : 0) && \at(sc->refill_count, Pre) == 1 ==> usage == 0; */
#endif
        /* Order: each step moves one refill one period on, so the bound on
         * the release times drops by one period a step (at most
         * refill_count steps). */
        /*@ ghost period_step(n, per); */
        if (single(sc)) {
            set_release(sc, sc->refill_head, refill_head(sc)->release_time + sc->period);
            /*@ for ordered: assert charge: sc->refill_count == 1 && ring_apart(sc, 0); */
            /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre) - \at(usage, Pre) - per - (u32)(n - 1) * per); */
            /*@ ghost one_holds_sum(sc); */
            /*@ for ordered: assert window: \at(ring_window(sc), Pre) && \at(ring_sum(sc), Pre) <= per ==> ring_window(sc); */
#ifdef KAIROS_PROVE_HISTORY
            /*@ for ordered: assert history: pos_amt(sc, 0) == \at(pos_amt(sc, 0), LoopCurrent); */
#endif
        } else {
            struct refill r = pop_head(sc);
            /*@ for ordered: assert charge: \forall integer k; 0 <= k < sc->refill_count ==>
                      pos_rel(sc, k) == \at(pos_rel(sc, k + 1), LoopCurrent) &&
                      pos_amt(sc, k) == \at(pos_amt(sc, k + 1), LoopCurrent); */
            /*@ for ordered: assert charge: ring_apart(sc, 0); */
            /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre) - \at(usage, Pre) - per - n * per); */
            /*@ for ordered: assert charge: r.release_time == \at(pos_rel(sc, 0), LoopCurrent); */
            /*@ for ordered: assert charge: r.release_time <= UINT64_MAX - \at(ring_sum(sc), Pre) - \at(usage, Pre) - per - n * per; */
            /*@ for ordered: assert charge: ring_sum(sc) + r.amount == \at(ring_sum(sc), Pre); */
            r.release_time += sc->period;
            /*@ for ordered: assert charge: r.release_time <= UINT64_MAX - \at(ring_sum(sc), Pre) - \at(usage, Pre) - per - (u32)(n - 1) * per; */
            /* Window: the tail is the one it was (or the new head alone,
             * which holds the rest of the sum); the new head is released
             * after the old one's end, so one period after it is no
             * earlier than the used refill's return plus its amount. */
            /*@ for ordered: assert window: tail_end(sc) == \at(tail_end(sc), LoopCurrent); */
            /*@ for ordered: assert window: r.amount == \at(pos_amt(sc, 0), LoopCurrent); */
            /*@ for ordered: assert window: \at(pos_rel(sc, 0) + pos_amt(sc, 0), LoopCurrent) <= pos_rel(sc, 0); */
            /*@ ghost one_holds_sum(sc); */
            /*@ for ordered: assert window: sc->refill_count == 1 ==> tail_end(sc) == pos_rel(sc, 0) + ring_sum(sc); */
            /*@ for ordered: assert window: \at(ring_window(sc), Pre) && \at(ring_sum(sc), Pre) <= per ==> tail_end(sc) + r.amount <= pos_rel(sc, 0) + per; */
            /*@ for ordered: assert window: r.release_time + r.amount <= pos_rel(sc, 0) + per; */
#ifdef KAIROS_PROVE_HISTORY
            /* History: after the first step what is left of a charge of
             * at most the head and the next refill fits in the new head. */
            /*@ for ordered: assert history: pos_amt(sc, 0) == \at(pos_amt(sc, 1), LoopCurrent); */
            /*@ for ordered: assert history: \at(usage, Pre) <= \at(pos_amt(sc, 0), Pre) + (\at(sc->refill_count, Pre) >= 2 ? \at(pos_amt(sc, 1), Pre) : 0) && n == \at(sc->refill_count, Pre) ==>
                      usage <= \at(pos_amt(sc, 1), LoopCurrent); */
#endif
            schedule_used(sc, r, min_budget);
#ifdef KAIROS_PROVE_HISTORY
            /*@ for ordered: assert history: pos_amt(sc, 0) >= \at(pos_amt(sc, 1), LoopCurrent); */
            /*@ for ordered: assert history: \at(usage, Pre) <= \at(pos_amt(sc, 0), Pre) + (\at(sc->refill_count, Pre) >= 2 ? \at(pos_amt(sc, 1), Pre) : 0) && n < \at(sc->refill_count, Pre) ==> usage <= pos_amt(sc, 0); */
#endif
            /*@ for ordered: assert window: \at(ring_window(sc), Pre) && \at(ring_sum(sc), Pre) <= per ==> ring_window(sc); */
            /*@ for ordered: assert charge: ring_apart(sc, 0); */
            /*@ for ordered: assert charge: \forall integer k; 0 <= k < sc->refill_count - 1 ==>
                      pos_rel(sc, k) <= UINT64_MAX - \at(ring_sum(sc), Pre) - \at(usage, Pre) - per - n * per; */
            /*@ for ordered: assert charge: \forall integer k; 0 <= k < sc->refill_count - 1 ==>
                      pos_rel(sc, k) <= UINT64_MAX - \at(ring_sum(sc), Pre) - \at(usage, Pre) - per - (u32)(n - 1) * per; */
            /*@ for ordered: assert charge: pos_rel(sc, sc->refill_count - 1) <= UINT64_MAX - \at(ring_sum(sc), Pre) - \at(usage, Pre) - per - (u32)(n - 1) * per; */
            /*@ ghost rel_below_join(sc); */
            /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre) - \at(usage, Pre) - per - (u32)(n - 1) * per); */
        }
    }
    /*@ for ordered: assert charge: ring_apart(sc, 1); */
    /* Window: the head is released no later than the next (ring_apart). */
    /*@ for ordered: assert window: \at(ring_window(sc), Pre) && \at(ring_sum(sc), Pre) <= per ==> ring_window(sc) && ends_within(sc, 1); */
    /* Order: the loop left one period of room for the split's chunk. */
    /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre) - \at(usage, Pre) - per); */

    if (usage > 0) {
        if (usage < refill_head(sc)->amount) {
            /* Part of the head was used. Normally the head was released (the
             * first one, or the next one if it was released by the time the
             * previous ran out). If it was not, this is an overrun: the
             * kernel entry that noticed the expiry ran on, on time that
             * belongs to this refill. Charge it like any use: cut it off
             * (back one period after the head's release) and move the rest
             * of the head on by it.
             * Correction: the thesis only delays the head by the overrun
             * (§8 item 8; charging it only when the delayed head is ready).
             * Then the overrun is never taken out of the budget, and the
             * property test finds windows with two overruns in them (budget
             * + 2 x one kernel entry); charged and delayed, at most one. */
            /*@ for ordered: assert charge: ring_sum(sc) == \at(ring_sum(sc), Pre) && usage <= \at(usage, Pre); */
            /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - ring_sum(sc) - sc->period - usage); */
            if (split_check(sc, usage, min_budget))
                used_up = true;
            /*@ for ordered: assert charge: ring_apart(sc, 1); */
            /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre)); */
            /*@ for ordered: assert window: \at(ring_window(sc), Pre) && \at(ring_sum(sc), Pre) <= per ==> ring_window(sc) && ends_within(sc, 1); */
        } else {
            /* More than a whole pass round the ring: only if charged more
             * than the budget plus an overrun, which the scheduler never
             * does. Delay everything by the excess rather than lose it. */
            /*@ for ordered: assert charge: \forall integer k; 1 <= k < sc->refill_count ==>
                                           ring_slot(sc, k) != sc->refill_head; */
            /*@ for ordered: assert charge: pos_rel(sc, 0) == Refills(sc)[sc->refill_head].release_time; */
            /*@ for ordered: assert charge: pos_rel(sc, 0) + usage <= UINT64_MAX - \at(ring_sum(sc), Pre); */
            set_release(sc, sc->refill_head, refill_head(sc)->release_time + usage);
            /*@ for ordered: assert charge: ring_apart(sc, 1); */
            /*@ for ordered: assert charge: pos_rel(sc, 0) <= UINT64_MAX - \at(ring_sum(sc), Pre); */
            /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - \at(ring_sum(sc), Pre)); */
            /* Window: only the head moved, later (a single refill holds
             * the sum). */
            /*@ for ordered: assert window: sc->refill_count >= 2 ==>
                      ring_slot(sc, sc->refill_count - 1) != sc->refill_head; */
            /*@ ghost one_holds_sum(sc); */
            /*@ for ordered: assert window: \at(ring_window(sc), Pre) && \at(ring_sum(sc), Pre) <= per ==> ring_window(sc) && ends_within(sc, 1); */
        }
    }
    /* Order: the split, the overrun's delay and the small-head merge break
     * the head pair at most; merge_overlapping restores it. */
    /*@ for ordered: assert charge: ring_apart(sc, 1); */
    /*@ for ordered: assert charge: ring_sum(sc) == \at(ring_sum(sc), Pre); */
    /*@ for ordered: assert charge: rel_below(sc, UINT64_MAX - ring_sum(sc)); */
    /* (The small-head merge's precondition, stated before the call: with
     * the charge facts in its context it timed out at 20 s without.) */
    /*@ assert refill_invariant(sc); */
    /*@ assert ring_sum(sc) == \at(ring_sum(sc), Pre); */
    /*@ for ordered: assert window: \at(ring_window(sc), Pre) && \at(ring_sum(sc), Pre) <= per ==> ring_window(sc) && ends_within(sc, 1); */
    merge_small_head(sc, min_budget, &used_up);
    /*@ for ordered: assert charge: ring_apart(sc, 1) && rel_below(sc, UINT64_MAX - ring_sum(sc)); */
    /*@ for ordered: assert window: \at(ring_window(sc), Pre) && \at(ring_sum(sc), Pre) <= per ==> ring_window(sc); */
    merge_overlapping(sc);
    return used_up;
}

bool refill_budget_check(struct sched_context *sc, u64 usage, u64 now)
{
    /* Order: the bound's product is not negative (a ring left as it was
     * keeps the weaker bound of the postcondition). */
    /*@ ghost if (sc->refill_count != 0) period_step(sc->refill_count, sc->period); */
    if (sc->refill_count == 0 || usage == 0)
        return false;
    u64 min_budget = refill_min_budget();
    if (refill_round_robin(sc))
        return round_robin_charge(sc, usage, now, min_budget);
    /* Order: a sporadic context's amounts add up to its budget (refill_sum),
     * so the charge's bound on the releases is the contract's. */
    /*@ for ordered: assert charge: ring_sum(sc) == sc->budget; */
    return sporadic_charge(sc, usage, min_budget);
}

bool refill_unblock_check(struct sched_context *sc, u64 now)
{
    if (sc->refill_count == 0 || refill_round_robin(sc) || !refill_ready(sc, now))
        return false;
    /* The head starts being used now: it comes back one period from now.
     * Correction: the thesis sets the release to `now` also when the head is
     * only due within the ready slack (now < release), which moves it
     * earlier; waking that way every period would shorten the period by the
     * slack each time. Keep the later of the two. */
    /* Window: a tail behind the head is another slot. */
    /*@ for ordered: assert window: sc->refill_count >= 2 ==>
              ring_slot(sc, sc->refill_count - 1) != sc->refill_head; */
    if (refill_head(sc)->release_time < now)
        set_release(sc, sc->refill_head, now);
    /* Order: only the head's release moved (later), so the ring is apart
     * from position 1 on, which is what merge_overlapping restores from. */
    /* (The sum and the minimum before the merge: with the order facts of
     * the callees in its context, the postcondition timed out without.) */
    /*@ assert refill_invariant(sc) && refill_sum(sc) && refill_min(sc); */
    /*@ for ordered: assert order: ring_sum(sc) == sc->budget; */
    /*@ for ordered: assert order: ring_apart(sc, 1); */
    /*@ for ordered: assert order: rel_below(sc, UINT64_MAX - ring_sum(sc)); */
    /* Window: only the head's release moved, later; a single refill holds
     * the sum (the budget). */
    /*@ ghost one_holds_sum(sc); */
    /*@ for ordered: assert window: sc->refill_count >= 2 ==> tail_end(sc) == \at(tail_end(sc), Pre); */
    /*@ for ordered: assert window: pos_rel(sc, 0) >= \at(pos_rel(sc, 0), Pre); */
    /*@ for ordered: assert window: \at(ring_window(sc), Pre) && sc->budget <= sc->period ==> ring_window(sc); */
#ifdef KAIROS_PROVE_HISTORY
    /* History: the head moved later; a single refill is the tail. */
    /*@ for ordered: assert history: sc->refill_count == 1 ==>
              pos_amt(sc, 0) == \at(pos_amt(sc, 0), Pre) && tail_end(sc) >= \at(tail_end(sc), Pre); */
    /*@ for ordered: assert history: tail_end(sc) >= \at(tail_end(sc), Pre); */
#endif
    /* Refills that become available before the head runs out join it. */
    merge_overlapping(sc);
    /*@ assert refill_invariant(sc) && refill_sum(sc) && refill_min(sc); */
    return true;
}

bool refill_yield(struct sched_context *sc, u64 usage, u64 now)
{
    return refill_budget_check(sc, refill_yield_usage(sc, usage, now), now);
}

/* What refill_budget_check(sc, usage, now) makes of the head when the
 * head is ready and holds at least usage + MIN_BUDGET (a running context:
 * the entry checked that): a sporadic head's first `usage` is cut off (its
 * release moves on by it), a round-robin slice just shrinks. Otherwise
 * (which the scheduler never asks for) the head is used up: a round-robin
 * slice is refilled from now, a sporadic head comes back one period on,
 * never earlier than a charge would bring it. The refills the charge would
 * add behind the head do not matter to the caller, which drops them. */
/*@ requires refill_invariant(sc) && refill_min(sc);
    requires usage + refill_min_budget_ticks <= UINT64_MAX;
    assigns \nothing;
    ensures \result.amount >= refill_min_budget_ticks;
    behavior fits:
      assumes Refills(sc)[sc->refill_head].release_time + usage + sc->period <= UINT64_MAX;
      ensures order: \result.release_time <=
                         \max(now, Refills(sc)[sc->refill_head].release_time + usage + sc->period); */
static struct refill head_after_use(struct sched_context *sc, u64 usage, u64 now)
{
    struct refill h = *refill_head(sc);
    if (usage + refill_min_budget() <= h.amount) {
        h.amount -= usage;
        if (!refill_round_robin(sc))
            h.release_time += usage;
    } else if (refill_round_robin(sc)) {
        h.release_time = h.release_time > now ? h.release_time : now;
        h.amount = sc->budget;
    } else {
        h.release_time += sc->period;
    }
    return h;
}

void refill_update(struct sched_context *sc, u64 new_period, u64 new_budget, word_t new_max_refills,
                   u64 usage, u64 now)
{
    if (sc->refill_count == 0) {
        refill_new(sc, new_max_refills, new_budget, new_period, now);
        /* Order: refill_new's, for the sporadic configuration. */
        /*@ for ordered: assert order: sc->period != 0 && sc->budget == new_budget; */
        /*@ for ordered: assert order: ring_apart(sc, 0) && head_apart(sc); */
        /*@ for ordered: assert order: now <= UINT64_MAX - sc->budget; */
        /*@ for ordered: assert order: rel_below(sc, UINT64_MAX - sc->budget); */
        return;
    }
    bool rr = new_period == 0 || new_period == new_budget;
    /* Keep only the head (§5.3): pending refills are dropped, which can only
     * give less time, and the head is what the context may be using now
     * (less what it used since its last charge: O(1) instead of a charge,
     * because only the head is kept). */
    struct refill h = usage ? head_after_use(sc, usage, now) : *refill_head(sc);
    /*@ assert \at(sc->refill_count, Pre) != 0 ==> h.amount >= refill_min_budget_ticks; */
    /* Order: the kept head's release leaves room for the new period and
     * budget (the bound the caller gives). */
    /*@ for ordered: assert order: h.release_time <= UINT64_MAX - new_period - new_budget; */
    sc->period = rr ? 0 : new_period;
    sc->budget = new_budget;
    sc->refill_max = rr ? REFILL_MIN_REFILLS : clamp_max(new_max_refills);
    sc->refill_head = 0;
    sc->refill_count = 1;
    /* A released head is in use from now on (a later release stays: moving it
     * to `now` would release it early). */
    if (h.release_time < now)
        h.release_time = now;
    /*@ for ordered: assert order: h.release_time <= UINT64_MAX - new_period - new_budget; */
    /*@ for ordered: assert order: !rr && sc->period == new_period && sc->budget == new_budget; */
    if (h.amount >= new_budget) {
        h.amount = new_budget;
        set_only(sc, h);
        if (rr)
            add_tail(sc, (struct refill){ .release_time = h.release_time, .amount = 0 });
        /*@ assert ring_sum(sc) == sc->budget; */
        /*@ assert Refills(sc)[sc->refill_head].amount == sc->budget; */
        /* Order: a sporadic ring of one refill. */
        /*@ for ordered: assert order: sc->refill_count == 1 && pos_rel(sc, 0) == h.release_time; */
        /*@ for ordered: assert order: ring_apart(sc, 0) && head_apart(sc); */
        /*@ for ordered: assert order: rel_below(sc, UINT64_MAX - sc->budget); */
    } else {
        /* The extra budget must not be usable before one new period after
         * the head's release (§8 item 13). Correction (§8 item 31): Listing
         * 7.2's NEXT(sc, new) / HEAD.rTime are NEXT(sc, tail) / HEAD.time. */
        set_only(sc, h);
        add_tail(sc, (struct refill){ .release_time = h.release_time + sc->period,
                                      .amount = new_budget - h.amount });
        /*@ assert ring_sum(sc) == sc->budget; */
        /*@ assert Refills(sc)[sc->refill_head].amount == h.amount; */
        /* Order: the head ends before the new period is over (its amount
         * is below the new budget, which is below the period), when the
         * tail is released. */
        /*@ for ordered: assert order: sc->refill_count == 2 && ring_slot(sc, 0) == 0 && ring_slot(sc, 1) == 1; */
        /*@ for ordered: assert order: pos_rel(sc, 0) == h.release_time && pos_amt(sc, 0) == h.amount; */
        /*@ for ordered: assert order: tail_release: pos_rel(sc, 1) == h.release_time + new_period; */
        /*@ for ordered: assert order: h.amount < new_period; */
        /*@ for ordered: assert order: pos_rel(sc, 0) + pos_amt(sc, 0) < pos_rel(sc, 1); */
        /*@ for ordered: assert order: head_apart(sc); */
        /*@ ghost apart_two(sc); */
        /*@ for ordered: assert order: ring_apart(sc, 0); */
        /*@ for ordered: assert order: rel_below(sc, UINT64_MAX - sc->budget); */
    }
}

bool refill_valid(const struct sched_context *sc)
{
    if (sc->refill_count == 0)
        return sc->budget == 0;
    if (sc->refill_count > sc->refill_max || sc->refill_head >= sc->refill_max)
        return false;
    if (cref(sc, sc->refill_head)->amount < refill_min_budget())
        return false;
    u64 sum = 0;
    u32 i = sc->refill_head;
    /*@ loop invariant 0 <= n <= sc->refill_count && i < sc->refill_max;
        loop assigns n, i, sum;
        loop variant sc->refill_count - n; */
    for (u32 n = 0; n < sc->refill_count; n++) {
        const struct refill *r = cref(sc, i);
        u32 j = refill_index_add(sc, i, 1);
        if (n + 1 < sc->refill_count && r->release_time > cref(sc, j)->release_time)
            return false;
        sum += r->amount;
        i = j;
    }
    if (sum != sc->budget)
        return false;
    /* The head ends before the next refill is released (merge_overlapping). */
    if (!refill_round_robin(sc) && !single(sc)) {
        const struct refill *h = cref(sc, sc->refill_head);
        if (h->release_time + h->amount >= cref(sc, refill_index_add(sc, sc->refill_head, 1))->release_time)
            return false;
    }
    return true;
}
