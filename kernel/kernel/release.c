/* The release queue's 4-ary min-heap (release.h). */
#include <release.h>

static inline bool release_before(const struct release_entry *a, const struct release_entry *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

/* Write e into slot i. The slot's address is computed from i here, not
 * carried over from an earlier level: a pointer from the previous
 * iteration of a sift loop would be an older value of a redefined address,
 * which the WCET analysis cannot place (docs/wcet.md "Data addresses"). */
static inline void place(struct release_queue *q, u32 i, struct release_entry e)
{
    q->heap[i] = e;
    e.sc->release_pos = i + 1;
}

/* All ones if key (ta, sa) comes before (tb, sb), else zero; computed
 * without branches (see sink). */
static ALWAYS_INLINE u64 before_mask(u64 ta, u64 sa, u64 tb, u64 sb)
{
    return -(u64)((ta < tb) | ((ta == tb) & (sa < sb)));
}

/* mask ? a : b, mask all ones or zero. */
static ALWAYS_INLINE u64 pick(u64 mask, u64 a, u64 b) { return b ^ ((a ^ b) & mask); }

/* Move the entries above slot i that key (time, seq) comes before down one
 * level each; returns the slot where that key belongs (i if none moved).
 * The key is passed by value so that it stays in registers across the
 * stores (a key read through a pointer would be read again after each,
 * one more line per level for the WCET analysis). Nothing is written at
 * the returned slot: the caller places the entry there. */
static u32 rise(struct release_queue *q, u32 i, u64 time, u64 seq)
{
    for (u32 level = 0; level < RELEASE_QUEUE_LEVELS && i > 0; level++) {
        u32 parent = (i - 1) / RELEASE_QUEUE_ARITY;
        struct release_entry p = q->heap[parent];
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
static void sink(struct release_queue *q, u32 i, u64 time, u64 seq, struct sched_context *sc, struct tcb *tcb)
{
    u32 count = q->count;
    for (u32 level = 0; level < RELEASE_QUEUE_LEVELS; level++) {
        u32 first = RELEASE_QUEUE_ARITY * i + 1;
        if (first >= count)
            break;
        const struct release_entry *c = &q->heap[first];
        u64 n = count - first; /* children present, at least 1 */
        struct choice ch = {c[0].time, c[0].seq, (u64)(word_t)c[0].sc, (u64)(word_t)c[0].tcb, 0};
        consider(&ch, c, 1, n);
        consider(&ch, c, 2, n);
        consider(&ch, c, 3, n);
        if (!before_mask(ch.time, ch.seq, time, seq))
            break;
        place(q, i, (struct release_entry){ch.time, ch.seq, (struct sched_context *)(word_t)ch.sc,
                                           (struct tcb *)(word_t)ch.tcb});
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
static void sift(struct release_queue *q, u32 i, struct release_entry e)
{
    if (i > 0 && before_mask(e.time, e.seq, q->heap[(i - 1) / RELEASE_QUEUE_ARITY].time,
                             q->heap[(i - 1) / RELEASE_QUEUE_ARITY].seq))
        place(q, rise(q, i, e.time, e.seq), e);
    else
        sink(q, i, e.time, e.seq, e.sc, e.tcb);
}

/* The entry at slot i leaves the heap: the last one fills the hole. */
static void take_out(struct release_queue *q, u32 i)
{
    q->heap[i].sc->release_pos = 0;
    u32 last = --q->count;
    if (i != last)
        sift(q, i, q->heap[last]);
}

void release_queue_insert(struct release_queue *q, struct tcb *t, u64 time)
{
    struct release_entry e = {time, q->next_seq++, t->sc, t};
    t->in_release_queue = true;
    if (t->sc->release_pos != 0) {
        sift(q, t->sc->release_pos - 1, e); /* reuse the SC's stale slot */
    } else {
        u32 i = q->count++;
        place(q, rise(q, i, e.time, e.seq), e);
    }
}

void release_queue_remove(struct release_queue *q, struct tcb *t)
{
    t->in_release_queue = false;
    q->heap[t->sc->release_pos - 1].tcb = NULL;
}

struct tcb *release_queue_take_first(struct release_queue *q)
{
    struct tcb *t = q->heap[0].tcb;
    if (t)
        t->in_release_queue = false;
    take_out(q, 0);
    return t;
}

void release_queue_requeue_first(struct release_queue *q, u64 time)
{
    struct release_entry *top = &q->heap[0];
    sink(q, 0, time, q->next_seq++, top->sc, top->tcb);
}

void release_queue_forget_sc(struct release_queue *q, struct sched_context *sc)
{
    if (sc->release_pos != 0)
        take_out(q, sc->release_pos - 1);
}

const char *release_queue_violation(const struct release_queue *q)
{
    if (q->count > CONFIG_MAX_SPORADIC_SCS)
        return "release queue: more entries than its capacity";
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
    }
    return NULL;
}
