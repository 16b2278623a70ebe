/* The release queue's 4-ary min-heap (release.h). */
#include <release.h>

/* The contracts (make prove, proof set `release`; docs/proofs.md "Release
 * queue"): every operation keeps each entry's SC valid memory apart from
 * the queue and its thread NULL or likewise, reads and writes only slots
 * of the heap (and its count within CONFIG_MAX_SPORADIC_SCS), and
 * terminates; the branch-free choice of the earliest child (consider)
 * picks a present child whose key comes no later than any other present
 * one. A "hole" h is the slot a sift is moving through: its contents do
 * not count. The heap order (proof set `release-order`, the clauses named
 * `order`, behaviors `ordered` and place's three; proofs/release.args proves
 * everything else): every operation that finds each stored key no earlier
 * than its parent's leaves it so. The order is over the keys the slots
 * hold: a deferred thread's slot keeps its earlier key (insert), and the
 * release loop re-keys it (settle_first) as any other sink. The
 * back-pointers (proof set `release-backptr`, the clauses named `backptr`,
 * in BACKPTR_ONLY): every operation that finds each slot's SC recording
 * the slot (release_pos == slot + 1) leaves it so, and an SC whose entry
 * leaves the heap records none (0), as insert's test for a slot expects. */
/*@
  predicate key_le(integer ta, integer sa, integer tb, integer sb) =
      ta < tb || (ta == tb && sa <= sb);
  predicate entry_ok(struct release_queue *q, struct release_entry e) =
      \valid(e.sc) && \separated(e.sc, q) &&
      (e.tcb == \null || (\valid(e.tcb) && \separated(e.tcb, q)));
  predicate entries_ok_but(struct release_queue *q, integer n, integer h) =
      \forall integer i; 0 <= i < n && i != h ==> entry_ok(q, q->heap[i]);
  predicate entries_ok(struct release_queue *q, integer n) =
      \forall integer i; 0 <= i < n ==> entry_ok(q, q->heap[i]);
  // Key (t, s) comes no later than each child m < j of c present (m < n):
  // the four cases written out, so that no goal needs a quantifier instance.
  predicate earliest(integer t, integer s, struct release_entry *c, integer j, integer n) =
      (0 < j && 0 < n ==> key_le(t, s, c[0].time, c[0].seq)) &&
      (1 < j && 1 < n ==> key_le(t, s, c[1].time, c[1].seq)) &&
      (2 < j && 2 < n ==> key_le(t, s, c[2].time, c[2].seq)) &&
      (3 < j && 3 < n ==> key_le(t, s, c[3].time, c[3].seq));
  predicate heap_ok(struct release_queue *q) =
      \valid(q) && q->count <= CONFIG_MAX_SPORADIC_SCS && entries_ok(q, q->count);

  // The order. Slot j > 0's parent; its children are ARITY * j + 1 .. + ARITY.
  logic integer parent(integer j) = (j - 1) / RELEASE_QUEUE_ARITY;
  // Slot a's stored key comes no later than slot b's.
  predicate le_slot(struct release_queue *q, integer a, integer b) =
      key_le(q->heap[a].time, q->heap[a].seq, q->heap[b].time, q->heap[b].seq);
  // Every slot 0 < j < n no earlier than its parent: one quantified
  // variable, the child (its parent is a term of it, so that an instance
  // is found from any read of a slot).
  predicate ordered(struct release_queue *q, integer n) =
      \forall integer j; 0 < j < n ==> le_slot(q, parent(j), j);
  // The same but the pairs with an end at the hole h (a sift's, as above).
  predicate ordered_but(struct release_queue *q, integer n, integer h) =
      \forall integer j; 0 < j < n && j != h && parent(j) != h ==> le_slot(q, parent(j), j);
  // Key (t, s) comes no later than each child of slot i below n. A
  // quantifier, unlike earliest: its instances are found from the reads
  // of the children, and no goal splits on which of the four a child is.
  predicate over_children(struct release_queue *q, integer n, integer i, integer t, integer s) =
      \forall integer j; 0 < j < n && parent(j) == i ==> key_le(t, s, q->heap[j].time, q->heap[j].seq);
  // Slot i's parent's key comes no later than (t, s) (nothing at the root).
  predicate under_parent(struct release_queue *q, integer i, integer t, integer s) =
      0 < i ==> key_le(q->heap[parent(i)].time, q->heap[parent(i)].seq, t, s);
  // The hole i's parent comes no later than i's children: what the order
  // gave through the entry that was at i, and what lets an entry from
  // either side fill the hole.
  predicate bridged(struct release_queue *q, integer n, integer i) =
      0 < i ==> over_children(q, n, i, q->heap[parent(i)].time, q->heap[parent(i)].seq);
  // The slots of levels l .. RELEASE_QUEUE_LEVELS (4) are level_start(l) ..
  // 340, those of levels 0 .. 4 - l are 0 .. level_end(l) - 1: a loop that
  // has made l steps down (sink) or up (rise) is there.
  logic integer level_start(integer l) = l <= 0 ? 0 : l == 1 ? 1 : l == 2 ? 5 : l == 3 ? 21 : 85;
  logic integer level_end(integer l) = l <= 0 ? 341 : l == 1 ? 85 : l == 2 ? 21 : l == 3 ? 5 : 1;

  // The back-pointers (proof set `release-backptr`, the clauses named
  // `backptr`): every slot i < n's SC records the slot, release_pos i + 1.
  // Two slots' SCs are then distinct (their release_pos differ), which is
  // what lets a store to one SC's release_pos leave the other slots' alone.
  predicate backptrs(struct release_queue *q, integer n) =
      \forall integer i; 0 <= i < n ==> q->heap[i].sc->release_pos == i + 1;
  // The same but at the hole h.
  predicate backptrs_but(struct release_queue *q, integer n, integer h) =
      \forall integer i; 0 <= i < n && i != h ==> q->heap[i].sc->release_pos == i + 1;
  // SC s is no slot's below n but the hole h's: the SC of the entry a sift
  // carries, whose release_pos is not yet its new slot's (a sink from the
  // root moves another SC into slot 0 while the carried one still records 1).
  predicate sc_absent_but(struct release_queue *q, integer n, integer h, struct sched_context *s) =
      \forall integer i; 0 <= i < n && i != h ==> q->heap[i].sc != s;
  // Every SC apart from q but s0 that recorded no slot at L (release_pos 0)
  // records none at M: what insert's test `pos == 0` relies on for an SC
  // that left the heap. A sift writes only the release_pos of slots' SCs
  // (nonzero, by the back-pointers) and of the SC it carries (s0). Apart
  // from q, as in the assigns clauses: the count is a u32 too.
  predicate zeros_kept{L, M}(struct release_queue *q, struct sched_context *s0) =
      \forall struct sched_context *s; \separated(s, q) && \at(s->release_pos, L) == 0 && s != s0 ==>
          \at(s->release_pos, M) == 0;
  // Kept from L to M and from M to N is kept from L to N (proved in the
  // release-backptr set's lemma pass; in BACKPTR_ONLY so that the other
  // sets neither prove nor assume it): what insert chains across its
  // writes, rise and place.
  BACKPTR_ONLY(lemma zeros_kept_trans{L, M, N}: \forall struct release_queue *q, struct sched_context *s0;
      zeros_kept{L, M}(q, s0) && zeros_kept{M, N}(q, s0) ==> zeros_kept{L, N}(q, s0);)

  // -(u64)1 is all ones (proved).
  lemma minus_one: \forall integer x; x == 1 ==> (u64)(-x) == 0xFFFFFFFFFFFFFFFF;
  axiomatic ReleaseBits {
    // The 64-bit instance of WP's own Cbits lemma to_uint_land_edge
    // (to_uint n x == land(2^n - 1, x)), which WP proves in Coq but does not
    // give to SMT provers: an all-ones mask keeps a 64-bit value.
    axiom land_ones: \forall integer x; 0 <= x <= 0xFFFFFFFFFFFFFFFF ==> (x & 0xFFFFFFFFFFFFFFFF) == x;
  }
*/

/*@ requires \valid_read(a) && \valid_read(b);
    assigns \nothing;
    ensures \result <==> !key_le(b->time, b->seq, a->time, a->seq); */
static inline bool release_before(const struct release_entry *a, const struct release_entry *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

/* &q->heap[i], with the low bits of its address cleared: they are zero
 * already (release.h: the queue starts on a cache line and its heap 32
 * bytes in, so slot i is at the queue + 32 + 32i, and a node's first child,
 * i = 4n + 1, at the queue + 64 + 128n). The mask shows the WCET analysis
 * what the layout gives: a slot is one line, a node's four children are
 * two, not three, and all the stores of an entry go through one address
 * (docs/wcet.md "Interrupt latency"). Not proved: WP's memory model has no
 * integer view of a pointer, so the proof set `release` takes this
 * contract as given; the layout's static assertions (release.h) are what
 * make it hold. */
/*@ requires \valid_read(q) && i < CONFIG_MAX_SPORADIC_SCS + RELEASE_QUEUE_ARITY - 1;
    requires line == sizeof(struct release_entry) ||
             (line == RELEASE_QUEUE_LINE && i % RELEASE_QUEUE_ARITY == 1);
    assigns \nothing;
    ensures \result == &q->heap[i]; */
static ALWAYS_INLINE struct release_entry *slot_at(struct release_queue *q, word_t i, word_t line)
{
    return (struct release_entry *)((word_t)&q->heap[i] & ~(line - 1));
}

/* Write e into slot i. The slot's address is computed from i here, not
 * carried over from an earlier level: a pointer from the previous
 * iteration of a sift loop would be an older value of a redefined address,
 * which the WCET analysis cannot place (docs/wcet.md "Data addresses"). */
/* Order: the three ways a sift writes a slot, each a behavior, so that the
 * order's facts are proved here, across the one store, and the sifts only
 * chain them. fill: the entry fits the hole, the heap is whole again. up:
 * rise moves the hole's parent into it, the hole goes up. down: sink moves
 * the earliest child w (ghost) into the hole, the hole goes down. The three
 * are in ORDER_ONLY, which proofs/release-order.args expands to its
 * argument and proofs/release.args to nothing: in the release set's goals
 * after a place their seven implications (quantified premises) took CVC4
 * and Z3 past the timeout on two goals that need none of them. The order
 * postconditions of rise, sink, sift and take_out are in ORDER_ONLY for
 * the same reason (after a rise, three goals of the release set took 3-6
 * times as long).
 * Back-pointers (BACKPTR_ONLY, expanded by proofs/release-backptr.args
 * only, for the same reason): f (ghost) is the SC of the entry the sift
 * carries, absent from every slot but the hole i. e is either that entry
 * (e.sc == f: the hole is filled, every slot's back-pointer holds) or slot
 * w's (a step: w's SC moves to i and records it, w is the hole now); its
 * release_pos, w + 1 before the store, tells it from every other slot's SC. */
/*@ requires \valid(q) && i < CONFIG_MAX_SPORADIC_SCS && \valid(e.sc) && \separated(e.sc, q);
    BACKPTR_ONLY(
    requires backptr: i < q->count && backptrs_but(q, q->count, i) && sc_absent_but(q, q->count, i, f);
    requires backptr: e.sc != f ==> w < q->count && w != i && e.sc == q->heap[w].sc;)
    assigns q->heap[i], e.sc->release_pos;
    ensures q->heap[i] == e;
    BACKPTR_ONLY(
    ensures backptr: slot_recorded: e.sc == f ==> backptrs(q, q->count);
    ensures backptr: e.sc != f ==> backptrs_but(q, q->count, w) && sc_absent_but(q, q->count, w, f);
    ensures backptr: zeros_kept{Old, Post}(q, e.sc);)
    ORDER_ONLY(
    behavior fill:
      assumes i < q->count && ordered_but(q, q->count, i);
      assumes under_parent(q, i, e.time, e.seq) && over_children(q, q->count, i, e.time, e.seq);
      ensures order: ordered(q, q->count);
    behavior up:
      assumes 0 < i < q->count && ordered_but(q, q->count, i) && bridged(q, q->count, i);
      assumes e.time == q->heap[parent(i)].time && e.seq == q->heap[parent(i)].seq;
      ensures order: ordered_but(q, q->count, parent(i));
      ensures order: bridged(q, q->count, parent(i));
      ensures order: over_children(q, q->count, parent(i), e.time, e.seq);
    behavior down:
      assumes i < w < q->count && parent(w) == i;
      assumes ordered_but(q, q->count, i) && bridged(q, q->count, i);
      assumes e.time == q->heap[w].time && e.seq == q->heap[w].seq;
      assumes over_children(q, q->count, i, e.time, e.seq);
      ensures order: ordered_but(q, q->count, w);
      ensures order: bridged(q, q->count, w);
      ensures order: under_parent(q, w, e.time, e.seq);) */
static inline void place(struct release_queue *q, u32 i, struct release_entry e) /*@ ghost (u32 w, struct sched_context *f) */
{
    *slot_at(q, i, sizeof(struct release_entry)) = e;
    e.sc->release_pos = i + 1;
}

/* All ones if key (ta, sa) comes before (tb, sb), else zero; computed
 * without branches (see sink). */
/*@ assigns \nothing;
    ensures !key_le(tb, sb, ta, sa) ==> \result == 0xFFFFFFFFFFFFFFFF;
    ensures key_le(tb, sb, ta, sa) ==> \result == 0; */
static ALWAYS_INLINE u64 before_mask(u64 ta, u64 sa, u64 tb, u64 sb)
{
    return -(u64)((ta < tb) | ((ta == tb) & (sa < sb)));
}

/* mask ? a : b, mask all ones or zero. */
/*@ requires mask == 0 || mask == 0xFFFFFFFFFFFFFFFF;
    assigns \nothing;
    ensures mask == 0 ==> \result == b;
    ensures mask != 0 ==> \result == a; */
static ALWAYS_INLINE u64 pick(u64 mask, u64 a, u64 b) { return b ^ ((a ^ b) & mask); }

/* Move the entries above slot i that key (time, seq) comes before down one
 * level each; returns the slot where that key belongs (i if none moved).
 * The key is passed by value so that it stays in registers across the
 * stores (a key read through a pointer would be read again after each,
 * one more line per level for the WCET analysis). Nothing is written at
 * the returned slot: the caller places the entry there. */
/*@ requires \valid(q) && q->count <= CONFIG_MAX_SPORADIC_SCS && i < q->count;
    requires entries_ok_but(q, q->count, i);
    BACKPTR_ONLY(requires backptr: backptrs_but(q, q->count, i) && sc_absent_but(q, q->count, i, f);)
    assigns q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1],
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures \result <= i;
    ensures entries_ok_but(q, q->count, \result);
    BACKPTR_ONLY(ensures backptr: backptrs_but(q, q->count, \result) && sc_absent_but(q, q->count, \result, f);
                 ensures backptr: zeros_kept{Old, Post}(q, f);)
    behavior ordered:
      assumes ordered_but(q, q->count, i) && bridged(q, q->count, i);
      assumes over_children(q, q->count, i, time, seq);
      ORDER_ONLY(ensures order: ordered_but(q, q->count, \result) && over_children(q, q->count, \result, time, seq);
                 ensures order: under_parent(q, \result, time, seq);) */
static ALWAYS_INLINE u32 rise(struct release_queue *q, u32 i, u64 time, u64 seq) /*@ ghost (struct sched_context *f) */
{
    /*@ loop invariant 0 <= level <= RELEASE_QUEUE_LEVELS;
        loop invariant i <= \at(i, Pre);
        loop invariant entries_ok_but(q, q->count, i);
        BACKPTR_ONLY(loop invariant backptr: backptrs_but(q, q->count, i) && sc_absent_but(q, q->count, i, f);
                     loop invariant backptr: zeros_kept{Pre, Here}(q, f);)
        for ordered: loop invariant order: ordered_but(q, q->count, i) && bridged(q, q->count, i);
        for ordered: loop invariant order: key_above: over_children(q, q->count, i, time, seq);
        for ordered: loop invariant order: i < level_end(level);
        loop assigns level, i, q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1],
                     { s->release_pos | struct sched_context *s; \separated(s, q) };
        loop variant RELEASE_QUEUE_LEVELS - level; */
    for (u32 level = 0; level < RELEASE_QUEUE_LEVELS && i > 0; level++) {
        u32 parent = (i - 1) / RELEASE_QUEUE_ARITY;
        struct release_entry p = *slot_at(q, parent, sizeof(struct release_entry));
        //@ for ordered: assert order: parent == parent(i);
        if (!before_mask(time, seq, p.time, p.seq))
            break;
        place(q, i, p) /*@ ghost (parent, f) */;
        i = parent;
    }
    return i;
}

/* The earliest child so far (its entry's words, and k its place among the
 * children). */
struct choice {
    u64 time, seq, sc, tcb, k;
};

/* Child j of c (present if j < n) replaces the choice if it comes before
 * it. Called with constant j, so each read is at a fixed offset from c. */
/*@ requires \valid(ch) && \valid_read(c + (0 .. RELEASE_QUEUE_ARITY - 1));
    requires \separated(ch, c + (0 .. RELEASE_QUEUE_ARITY - 1));
    requires n_present: 1 <= j < RELEASE_QUEUE_ARITY && 1 <= n;
    requires ch->k < j && ch->k < n;
    requires ch->time == c[ch->k].time && ch->seq == c[ch->k].seq &&
             ch->sc == (u64)(word_t)c[ch->k].sc && ch->tcb == (u64)(word_t)c[ch->k].tcb;
    requires earliest(ch->time, ch->seq, (struct release_entry *)c, j, n);
    assigns *ch;
    ensures ch->k <= j && ch->k < n;
    ensures ch->time == c[ch->k].time && ch->seq == c[ch->k].seq &&
            ch->sc == (u64)(word_t)c[ch->k].sc && ch->tcb == (u64)(word_t)c[ch->k].tcb;
    ensures earliest(ch->time, ch->seq, (struct release_entry *)c, j + 1, n); */
static ALWAYS_INLINE void consider(struct choice *ch, const struct release_entry *c, u64 j, u64 n)
{
    u64 m = before_mask(c[j].time, c[j].seq, ch->time, ch->seq) & -(u64)(n > j);
    ch->time = pick(m, c[j].time, ch->time);
    ch->seq = pick(m, c[j].seq, ch->seq);
    ch->sc = pick(m, (u64)(word_t)c[j].sc, ch->sc);
    ch->tcb = pick(m, (u64)(word_t)c[j].tcb, ch->tcb);
    ch->k = pick(m, j, ch->k);
}

/* Put the entry (time, seq, sc, tcb) at slot i or below it: the earliest
 * child moves up while it comes before the entry, which is passed in
 * registers for the reason given at rise. A node's children are adjacent; each level reads all four
 * (slots past count, up to the padding at the heap's end, are read and
 * ignored) in one straight run with no branch, then chooses in registers.
 * The WCET analysis charges the lines of an unknown address per basic
 * block, so children read in separate branches would each pay a line of
 * their own (docs/wcet.md "Interrupt latency"). */
/*@ requires \valid(q) && q->count <= CONFIG_MAX_SPORADIC_SCS && i < q->count;
    requires entries_ok_but(q, q->count, i);
    requires \valid(sc) && \separated(sc, q) && (tcb == \null || (\valid(tcb) && \separated(tcb, q)));
    BACKPTR_ONLY(requires backptr: backptrs_but(q, q->count, i) && sc_absent_but(q, q->count, i, sc);)
    assigns q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1],
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures entries_ok(q, q->count);
    BACKPTR_ONLY(ensures backptr: backptrs(q, q->count);
                 ensures backptr: zeros_kept{Old, Post}(q, sc);)
    behavior ordered:
      assumes ordered_but(q, q->count, i) && bridged(q, q->count, i) && under_parent(q, i, time, seq);
      ORDER_ONLY(ensures order: ordered(q, q->count);) */
static void sink(struct release_queue *q, u32 i, u64 time, u64 seq, struct sched_context *sc, struct tcb *tcb)
{
    u32 count = q->count;
    /*@ loop invariant 0 <= level <= RELEASE_QUEUE_LEVELS;
        loop invariant i < count;
        loop invariant entries_ok_but(q, count, i);
        BACKPTR_ONLY(loop invariant backptr: backptrs_but(q, count, i) && sc_absent_but(q, count, i, sc);
                     loop invariant backptr: zeros_kept{Pre, Here}(q, sc);)
        for ordered: loop invariant order: count == q->count;
        for ordered: loop invariant order: ordered_but(q, count, i) && bridged(q, count, i);
        for ordered: loop invariant order: under_parent(q, i, time, seq);
        for ordered: loop invariant order: level_start(level) <= i;
        loop assigns level, i, q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1],
                     { s->release_pos | struct sched_context *s; \separated(s, q) };
        loop variant RELEASE_QUEUE_LEVELS - level; */
    for (u32 level = 0; level < RELEASE_QUEUE_LEVELS; level++) {
        u32 first = RELEASE_QUEUE_ARITY * i + 1;
        if (first >= count)
            break;
        const struct release_entry *c = slot_at(q, first, RELEASE_QUEUE_LINE);
        u64 n = count - first; /* children present, at least 1 */
        struct choice ch = {c[0].time, c[0].seq, (u64)(word_t)c[0].sc, (u64)(word_t)c[0].tcb, 0};
        consider(&ch, c, 1, n);
        consider(&ch, c, 2, n);
        consider(&ch, c, 3, n);
        //@ assert \let w = first + ch.k; i < w < count;
        /*@ assert \let w = first + ch.k;
                q->heap[w].time == ch.time && q->heap[w].seq == ch.seq &&
                q->heap[w].sc == (struct sched_context *)(word_t)ch.sc &&
                q->heap[w].tcb == (struct tcb *)(word_t)ch.tcb; */
        /*@ for ordered: assert order: over_children(q, count, i, ch.time, ch.seq); */
        /*@ for ordered: assert order: key_le(time, seq, ch.time, ch.seq) ==>
                                       over_children(q, count, i, time, seq); */
        if (!before_mask(ch.time, ch.seq, time, seq))
            break;
        //@ ghost u32 w = first + (u32)ch.k;
        //@ for ordered: assert order: w == first + ch.k && parent(w) == i && i < w < q->count;
        //@ assert backptr: BACKPTR_ONLY((w == first + ch.k && i < w < q->count) &&) \true;
        place(q, i, (struct release_entry){ch.time, ch.seq, (struct sched_context *)(word_t)ch.sc,
                                           (struct tcb *)(word_t)ch.tcb}) /*@ ghost (w, sc) */;
        //@ assert entries_ok_but(q, count, w);
        //@ for ordered: assert order: under_parent(q, w, time, seq);
        i = first + (u32)ch.k;
    }
    //@ for ordered: assert order: over_children(q, count, i, time, seq);
    place(q, i, (struct release_entry){time, seq, sc, tcb}) /*@ ghost (i, sc) */;
}

/* Put e, whose old entry was at slot i, where its key belongs. The
 * direction is decided first, on the parent, so that the code has a rise
 * path and a sink path and no path through both (deciding by whether rise
 * moved anything saves that one read, but the WCET analysis cannot tell
 * that a rise that moved entries is never followed by a sink, and charged
 * both). */
/*@ requires \valid(q) && q->count <= CONFIG_MAX_SPORADIC_SCS && i < q->count;
    requires entries_ok_but(q, q->count, i) && entry_ok(q, e);
    BACKPTR_ONLY(requires backptr: backptrs_but(q, q->count, i) && sc_absent_but(q, q->count, i, e.sc);)
    assigns q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1],
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures entries_ok(q, q->count);
    BACKPTR_ONLY(ensures backptr: backptrs(q, q->count);
                 ensures backptr: zeros_kept{Old, Post}(q, e.sc);)
    behavior ordered:
      assumes ordered_but(q, q->count, i) && bridged(q, q->count, i);
      ORDER_ONLY(ensures order: ordered(q, q->count);) */
static void sift(struct release_queue *q, u32 i, struct release_entry e)
{
    const struct release_entry *p = slot_at(q, (i - (i > 0)) / RELEASE_QUEUE_ARITY, sizeof(struct release_entry));
    //@ for ordered: assert order: i > 0 ==> p == &q->heap[parent(i)];
    /*@ for ordered: assert order: i > 0 && !key_le(p->time, p->seq, e.time, e.seq) ==>
                                   over_children(q, q->count, i, e.time, e.seq); */
    /*@ for ordered: assert order: !(i > 0 && !key_le(p->time, p->seq, e.time, e.seq)) ==>
                                   under_parent(q, i, e.time, e.seq); */
    if (i > 0 && before_mask(e.time, e.seq, p->time, p->seq))
        place(q, rise(q, i, e.time, e.seq) /*@ ghost (e.sc) */, e) /*@ ghost (i, e.sc) */;
    else
        sink(q, i, e.time, e.seq, e.sc, e.tcb);
}

/* The entry at slot i leaves the heap: the last one fills the hole. */
/*@ requires heap_ok(q) && i < q->count;
    BACKPTR_ONLY(requires backptr: backptrs(q, q->count);)
    assigns q->count, q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1],
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures heap_ok(q);
    ensures q->count == \old(q->count) - 1;
    BACKPTR_ONLY(ensures backptr: backptrs(q, q->count);
                 ensures backptr: \old(q->heap[i].sc)->release_pos == 0;
                 ensures backptr: zeros_kept{Old, Post}(q, \null);)
    behavior ordered:
      assumes ordered(q, q->count);
      ORDER_ONLY(ensures order: ordered(q, q->count);) */
static void take_out(struct release_queue *q, u32 i)
{
    q->heap[i].sc->release_pos = 0;
    //@ assert entries_ok(q, q->count) && q->count == \at(q->count, Pre);
    //@ assert backptr: BACKPTR_ONLY(backptrs_but(q, q->count, i) &&) \true;
    //@ assert backptr: BACKPTR_ONLY((i != q->count - 1 ==> q->heap[q->count - 1].sc->release_pos == q->count) &&) \true;
    //@ for ordered: assert order: ordered(q, q->count);
    u32 last = --q->count;
    //@ assert entries_ok_but(q, q->count, i);
    //@ assert backptr: BACKPTR_ONLY(backptrs_but(q, q->count, i) &&) \true;
    //@ assert backptr: BACKPTR_ONLY((i != last ==> sc_absent_but(q, q->count, i, q->heap[last].sc)) &&) \true;
    //@ for ordered: assert order: ordered(q, q->count + 1);
    //@ for ordered: assert order: ordered(q, q->count);
    //@ for ordered: assert order: ordered_but(q, q->count, i) && bridged(q, q->count, i);
    if (i != last)
        sift(q, i, q->heap[last]);
    //@ assert entries_ok(q, q->count);
    //@ assert backptr: BACKPTR_ONLY(backptrs(q, q->count) &&) \true;
    //@ assert backptr: BACKPTR_ONLY(\at(q->heap[i].sc, Pre)->release_pos == 0 &&) \true;
}

/* A thread queued again into its SC's stale slot: when its new key comes
 * before the slot's, the entry rises (a key that only moves up never needs
 * the sink, whose levels read four children each); otherwise the slot
 * keeps its earlier key and the thread is "deferred", its own key kept in
 * its TCB. Every queued thread's slot key then comes no later than its own
 * key, so the first entry, when not deferred, holds the earliest own key
 * of all: the release loop re-keys a deferred first entry
 * (release_queue_settle_first) before it releases anything, and the order
 * of releases is that of the own keys, seL4's. The sink a re-queue needed
 * moves from the wake-up to the release loop, which has a preemption
 * point per entry (docs/wcet.md "Interrupt latency"). */
/*@ requires heap_ok(q);
    requires \valid(t) && \separated(t, q) && \valid(t->sc) && \separated(t->sc, q) && \separated(t->sc, t);
    requires t->sc->release_pos <= q->count;
    requires t->sc->release_pos == 0 ==> q->count < CONFIG_MAX_SPORADIC_SCS;
    BACKPTR_ONLY(requires backptr: backptrs(q, q->count);)
    assigns q->next_seq, q->count, q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1], t->in_release_queue,
            t->release_deferred, t->release_time, t->release_seq,
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures heap_ok(q);
    ensures q->count == \old(q->count) + (\old(t->sc->release_pos) == 0 ? 1 : 0);
    BACKPTR_ONLY(ensures backptr: backptrs(q, q->count);
                 ensures backptr: zeros_kept{Old, Post}(q, \old(t->sc));)
    ensures order: t->release_deferred ==> \old(t->sc->release_pos) != 0 &&
        key_le(q->heap[\old(t->sc->release_pos) - 1].time, q->heap[\old(t->sc->release_pos) - 1].seq,
               t->release_time, t->release_seq);
    behavior ordered:
      assumes ordered(q, q->count);
      ensures order: ordered(q, q->count); */
void release_queue_insert(struct release_queue *q, struct tcb *t, u64 time)
{
    struct release_entry e = {time, q->next_seq++, t->sc, t};
    t->in_release_queue = true;
    t->release_deferred = false;
    u32 pos = t->sc->release_pos;
    u32 i;
    if (pos != 0) {
        i = pos - 1;
        struct release_entry *slot = slot_at(q, i, sizeof(struct release_entry));
        if (!before_mask(e.time, e.seq, slot->time, slot->seq)) {
            t->release_deferred = true;
            t->release_time = e.time;
            t->release_seq = e.seq;
            //@ assert entries_ok_but(q, q->count, i) && entry_ok(q, q->heap[i]);
            slot->tcb = t;
            //@ assert entry_ok(q, q->heap[i]);
            //@ assert entries_ok(q, q->count);
            //@ for ordered: assert order: ordered(q, q->count);
            //@ assert backptr: BACKPTR_ONLY(backptrs(q, q->count) &&) \true;
            //@ assert backptr: BACKPTR_ONLY(zeros_kept{Pre, Here}(q, e.sc) &&) \true;
            return;
        }
    } else {
        i = q->count++;
    }
    /* One rise for both ways in, inlined: insertion then needs no frame
     * for the entry across a call. */
    //@ assert entries_ok_but(q, q->count, i);
    //@ assert backptr: BACKPTR_ONLY(backptrs_but(q, q->count, i) &&) \true;
    //@ assert backptr: BACKPTR_ONLY(sc_absent_but(q, q->count, i, e.sc) &&) \true;
    //@ assert backptr: BACKPTR_ONLY(zeros_kept{Pre, Here}(q, e.sc) &&) \true;
    //@ for ordered: assert order: ordered_but(q, q->count, i) && bridged(q, q->count, i);
    //@ for ordered: assert order: over_children(q, q->count, i, e.time, e.seq);
    place(q, rise(q, i, e.time, e.seq) /*@ ghost (e.sc) */, e) /*@ ghost (i, e.sc) */;
    //@ assert entries_ok(q, q->count);
}

/*@ requires heap_ok(q);
    requires \valid(t) && \separated(t, q) && \valid_read(t->sc) && 1 <= t->sc->release_pos <= q->count;
    BACKPTR_ONLY(requires backptr: backptrs(q, q->count);)
    assigns t->in_release_queue, t->release_deferred, q->heap[t->sc->release_pos - 1].tcb;
    ensures heap_ok(q) && q->count == \old(q->count);
    ensures q->heap[\old(t->sc->release_pos) - 1].tcb == \null;
    BACKPTR_ONLY(ensures backptr: backptrs(q, q->count);)
    behavior ordered:
      assumes ordered(q, q->count);
      ensures order: ordered(q, q->count); */
void release_queue_remove(struct release_queue *q, struct tcb *t)
{
    t->in_release_queue = false;
    t->release_deferred = false;
    q->heap[t->sc->release_pos - 1].tcb = NULL;
}

/* The first entry comes no later than any other (what makes the release
 * loop's test of the first entry alone enough: when it is not due, no entry
 * is). The order names each slot and its parent only, so this is an
 * induction over the slots, written as a ghost loop: slot k's parent is an
 * earlier slot, whose key the first one's does not follow. */
/*@ ghost
  /@ requires \valid_read(q) && n <= CONFIG_MAX_SPORADIC_SCS;
     assigns \nothing;
     ensures order: ordered(q, n) ==> \forall integer i; 0 <= i < n ==> le_slot(q, 0, i); @/
  void first_is_earliest(struct release_queue *q, u32 n)
  {
      /@ loop invariant 1 <= k && (k <= n || n == 0);
         loop invariant order: ordered(q, n) ==> \forall integer i; 0 <= i < k && i < n ==> le_slot(q, 0, i);
         loop assigns k;
         loop variant n - k; @/
      for (u32 k = 1; k < n; k++) {
          /@ assert order: 0 <= parent(k) < k; @/
          /@ assert order: ordered(q, n) ==> le_slot(q, 0, parent(k)); @/
          /@ assert order: ordered(q, n) ==> le_slot(q, parent(k), k); @/
          /@ assert order: ordered(q, n) ==> le_slot(q, 0, k); @/
      }
  }
*/

/*@ requires heap_ok(q) && q->count >= 1;
    BACKPTR_ONLY(requires backptr: backptrs(q, q->count);)
    assigns q->count, q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1], q->heap[0].tcb->in_release_queue,
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures heap_ok(q) && q->count == \old(q->count) - 1;
    ensures \result == \old(q->heap[0].tcb);
    BACKPTR_ONLY(ensures backptr: backptrs(q, q->count);
                 ensures backptr: \old(q->heap[0].sc)->release_pos == 0;
                 ensures backptr: zeros_kept{Old, Post}(q, \null);)
    behavior ordered:
      assumes ordered(q, q->count);
      ensures order: ordered(q, q->count);
      ensures order: \forall integer i; 0 <= i < \old(q->count) ==>
          key_le(\old(q->heap[0].time), \old(q->heap[0].seq), \old(q->heap[i].time), \old(q->heap[i].seq)); */
struct tcb *release_queue_take_first(struct release_queue *q)
{
    //@ ghost first_is_earliest(q, q->count);
    struct tcb *t = q->heap[0].tcb;
    if (t)
        t->in_release_queue = false;
    take_out(q, 0);
    return t;
}

/*@ requires heap_ok(q) && q->count >= 1;
    BACKPTR_ONLY(requires backptr: backptrs(q, q->count);)
    assigns q->next_seq, q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1],
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures heap_ok(q) && q->count == \old(q->count);
    BACKPTR_ONLY(ensures backptr: backptrs(q, q->count);
                 ensures backptr: zeros_kept{Old, Post}(q, \null);)
    behavior ordered:
      assumes ordered(q, q->count);
      ensures order: ordered(q, q->count); */
void release_queue_requeue_first(struct release_queue *q, u64 time)
{
    struct release_entry *top = &q->heap[0];
    sink(q, 0, time, q->next_seq++, top->sc, top->tcb);
}

/*@ requires heap_ok(q) && q->count >= 1;
    requires \valid(q->heap[0].tcb) && \separated(q->heap[0].tcb, q);
    BACKPTR_ONLY(requires backptr: backptrs(q, q->count);)
    assigns q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1], q->heap[0].tcb->release_deferred,
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures heap_ok(q) && q->count == \old(q->count);
    BACKPTR_ONLY(ensures backptr: backptrs(q, q->count);
                 ensures backptr: zeros_kept{Old, Post}(q, \null);)
    behavior ordered:
      assumes ordered(q, q->count);
      ensures order: ordered(q, q->count); */
void release_queue_settle_first(struct release_queue *q)
{
    struct release_entry *top = &q->heap[0];
    struct tcb *t = top->tcb;
    t->release_deferred = false;
    sink(q, 0, t->release_time, t->release_seq, top->sc, t);
}

/*@ requires heap_ok(q) && \valid_read(sc) && sc->release_pos <= q->count;
    BACKPTR_ONLY(requires backptr: backptrs(q, q->count);)
    assigns q->count, q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1],
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures heap_ok(q);
    ensures q->count == \old(q->count) - (\old(sc->release_pos) != 0 ? 1 : 0);
    BACKPTR_ONLY(ensures backptr: backptrs(q, q->count);
                 ensures backptr: \old(sc->release_pos) == 0 || \old(q->heap[sc->release_pos - 1].sc) == sc ==>
                                  sc->release_pos == 0;
                 ensures backptr: zeros_kept{Old, Post}(q, \null);)
    behavior ordered:
      assumes ordered(q, q->count);
      ensures order: ordered(q, q->count); */
void release_queue_forget_sc(struct release_queue *q, struct sched_context *sc)
{
    if (sc->release_pos != 0)
        take_out(q, sc->release_pos - 1);
}

const char *release_queue_violation(const struct release_queue *q)
{
    if (q->count > CONFIG_MAX_SPORADIC_SCS)
        return "release queue: more entries than its capacity";
    if ((word_t)&q->heap[1] % RELEASE_QUEUE_LINE != 0)
        return "release queue: a node's children not on a cache line (slot_at's contract)";
    for (u32 i = 0; i < q->count; i++) {
        const struct release_entry *e = &q->heap[i];
        if (i > 0 && release_before(e, &q->heap[(i - 1) / RELEASE_QUEUE_ARITY]))
            return "release queue: an entry before its parent";
        if (e->sc->release_pos != i + 1)
            return "release queue: an SC's recorded slot";
        if (e->tcb && (!e->tcb->in_release_queue || e->tcb->sc != e->sc || e->sc->tcb != e->tcb))
            return "release queue: a queued thread not marked queued, or not bound to the slot's SC";
        if (!e->tcb && e->sc->tcb && e->sc->tcb->in_release_queue)
            return "release queue: a thread marked queued whose SC's slot is stale";
        if (e->tcb && e->tcb->release_deferred &&
            !release_before(e, &(struct release_entry){e->tcb->release_time, e->tcb->release_seq, e->sc, e->tcb}))
            return "release queue: a deferred thread's slot key not before its own key";
        if (e->sc->tcb && e->sc->tcb->release_deferred && !e->sc->tcb->in_release_queue)
            return "release queue: a thread deferred but not queued";
    }
    return NULL;
}
