/* The release queue's 4-ary min-heap (release.h). */
#include <release.h>

/* The contracts (make prove, proof set `release`; docs/proofs.md "Release
 * queue"): every operation keeps each entry's SC valid memory apart from
 * the queue and its thread NULL or likewise, reads and writes only slots
 * of the heap (and its count within CONFIG_MAX_SPORADIC_SCS), and
 * terminates; the branch-free choice of the earliest child (consider)
 * picks a present child whose key comes no later than any other present
 * one. A "hole" h is the slot a sift is moving through: its contents do
 * not count. The heap order itself is not proved yet (docs/proofs.md "Not
 * proved yet"). */
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
/*@ requires \valid(q) && i < CONFIG_MAX_SPORADIC_SCS && \valid(e.sc) && \separated(e.sc, q);
    assigns q->heap[i], e.sc->release_pos;
    ensures q->heap[i] == e; */
static inline void place(struct release_queue *q, u32 i, struct release_entry e)
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
    assigns q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1],
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures \result <= i;
    ensures entries_ok_but(q, q->count, \result); */
static ALWAYS_INLINE u32 rise(struct release_queue *q, u32 i, u64 time, u64 seq)
{
    /*@ loop invariant 0 <= level <= RELEASE_QUEUE_LEVELS;
        loop invariant i <= \at(i, Pre);
        loop invariant entries_ok_but(q, q->count, i);
        loop assigns level, i, q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1],
                     { s->release_pos | struct sched_context *s; \separated(s, q) };
        loop variant RELEASE_QUEUE_LEVELS - level; */
    for (u32 level = 0; level < RELEASE_QUEUE_LEVELS && i > 0; level++) {
        u32 parent = (i - 1) / RELEASE_QUEUE_ARITY;
        struct release_entry p = *slot_at(q, parent, sizeof(struct release_entry));
        if (!before_mask(time, seq, p.time, p.seq))
            break;
        place(q, i, p);
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
    requires 1 <= j < RELEASE_QUEUE_ARITY && 1 <= n;
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
    assigns q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1],
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures entries_ok(q, q->count); */
static void sink(struct release_queue *q, u32 i, u64 time, u64 seq, struct sched_context *sc, struct tcb *tcb)
{
    u32 count = q->count;
    /*@ loop invariant 0 <= level <= RELEASE_QUEUE_LEVELS;
        loop invariant i < count;
        loop invariant entries_ok_but(q, count, i);
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
        if (!before_mask(ch.time, ch.seq, time, seq))
            break;
        place(q, i, (struct release_entry){ch.time, ch.seq, (struct sched_context *)(word_t)ch.sc,
                                           (struct tcb *)(word_t)ch.tcb});
        //@ ghost u32 w = first + (u32)ch.k;
        //@ assert entries_ok_but(q, count, w);
        i = first + (u32)ch.k;
    }
    place(q, i, (struct release_entry){time, seq, sc, tcb});
}

/* Put e, whose old entry was at slot i, where its key belongs. The
 * direction is decided first, on the parent, so that the code has a rise
 * path and a sink path and no path through both (deciding by whether rise
 * moved anything saves that one read, but the WCET analysis cannot tell
 * that a rise that moved entries is never followed by a sink, and charged
 * both). */
/*@ requires \valid(q) && q->count <= CONFIG_MAX_SPORADIC_SCS && i < q->count;
    requires entries_ok_but(q, q->count, i) && entry_ok(q, e);
    assigns q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1],
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures entries_ok(q, q->count); */
static void sift(struct release_queue *q, u32 i, struct release_entry e)
{
    const struct release_entry *p = slot_at(q, (i - (i > 0)) / RELEASE_QUEUE_ARITY, sizeof(struct release_entry));
    if (i > 0 && before_mask(e.time, e.seq, p->time, p->seq))
        place(q, rise(q, i, e.time, e.seq), e);
    else
        sink(q, i, e.time, e.seq, e.sc, e.tcb);
}

/* The entry at slot i leaves the heap: the last one fills the hole. */
/*@ requires heap_ok(q) && i < q->count;
    assigns q->count, q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1],
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures heap_ok(q);
    ensures q->count == \old(q->count) - 1; */
static void take_out(struct release_queue *q, u32 i)
{
    q->heap[i].sc->release_pos = 0;
    //@ assert entries_ok(q, q->count) && q->count == \at(q->count, Pre);
    u32 last = --q->count;
    //@ assert entries_ok_but(q, q->count, i);
    if (i != last)
        sift(q, i, q->heap[last]);
    //@ assert entries_ok(q, q->count);
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
    assigns q->next_seq, q->count, q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1], t->in_release_queue,
            t->release_deferred, t->release_time, t->release_seq,
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures heap_ok(q);
    ensures q->count == \old(q->count) + (\old(t->sc->release_pos) == 0 ? 1 : 0); */
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
            return;
        }
    } else {
        i = q->count++;
    }
    /* One rise for both ways in, inlined: insertion then needs no frame
     * for the entry across a call. */
    //@ assert entries_ok_but(q, q->count, i);
    place(q, rise(q, i, e.time, e.seq), e);
    //@ assert entries_ok(q, q->count);
}

/*@ requires heap_ok(q);
    requires \valid(t) && \separated(t, q) && \valid_read(t->sc) && 1 <= t->sc->release_pos <= q->count;
    assigns t->in_release_queue, t->release_deferred, q->heap[t->sc->release_pos - 1].tcb;
    ensures heap_ok(q) && q->count == \old(q->count);
    ensures q->heap[\old(t->sc->release_pos) - 1].tcb == \null; */
void release_queue_remove(struct release_queue *q, struct tcb *t)
{
    t->in_release_queue = false;
    t->release_deferred = false;
    q->heap[t->sc->release_pos - 1].tcb = NULL;
}

/*@ requires heap_ok(q) && q->count >= 1;
    assigns q->count, q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1], q->heap[0].tcb->in_release_queue,
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures heap_ok(q) && q->count == \old(q->count) - 1;
    ensures \result == \old(q->heap[0].tcb); */
struct tcb *release_queue_take_first(struct release_queue *q)
{
    struct tcb *t = q->heap[0].tcb;
    if (t)
        t->in_release_queue = false;
    take_out(q, 0);
    return t;
}

/*@ requires heap_ok(q) && q->count >= 1;
    assigns q->next_seq, q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1],
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures heap_ok(q) && q->count == \old(q->count); */
void release_queue_requeue_first(struct release_queue *q, u64 time)
{
    struct release_entry *top = &q->heap[0];
    sink(q, 0, time, q->next_seq++, top->sc, top->tcb);
}

/*@ requires heap_ok(q) && q->count >= 1;
    requires \valid(q->heap[0].tcb) && \separated(q->heap[0].tcb, q);
    assigns q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1], q->heap[0].tcb->release_deferred,
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures heap_ok(q) && q->count == \old(q->count); */
void release_queue_settle_first(struct release_queue *q)
{
    struct release_entry *top = &q->heap[0];
    struct tcb *t = top->tcb;
    t->release_deferred = false;
    sink(q, 0, t->release_time, t->release_seq, top->sc, t);
}

/*@ requires heap_ok(q) && \valid_read(sc) && sc->release_pos <= q->count;
    assigns q->count, q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1],
            { s->release_pos | struct sched_context *s; \separated(s, q) };
    ensures heap_ok(q);
    ensures q->count == \old(q->count) - (\old(sc->release_pos) != 0 ? 1 : 0); */
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
