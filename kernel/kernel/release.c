/* The release queue's binary min-heap (release.h). */
#include <release.h>

static inline bool release_before(const struct release_entry *a, const struct release_entry *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static inline void place(struct release_queue *q, u32 i, struct release_entry e)
{
    q->heap[i] = e;
    e.sc->release_pos = i + 1;
}

/* Put e at index i or above it: the entries on the way up that e comes
 * before move down one level each. */
static void sift_up(struct release_queue *q, u32 i, struct release_entry e)
{
    for (u32 level = 0; level < RELEASE_QUEUE_LEVELS && i > 0; level++) {
        u32 parent = (i - 1) / 2;
        if (!release_before(&e, &q->heap[parent]))
            break;
        place(q, i, q->heap[parent]);
        i = parent;
    }
    place(q, i, e);
}

/* Put e at index i or below it: the earlier child moves up while it comes
 * before e. */
static void sift_down(struct release_queue *q, u32 i, struct release_entry e)
{
    for (u32 level = 0; level < RELEASE_QUEUE_LEVELS; level++) {
        u32 child = 2 * i + 1;
        if (child >= q->count)
            break;
        if (child + 1 < q->count && release_before(&q->heap[child + 1], &q->heap[child]))
            child++;
        if (!release_before(&q->heap[child], &e))
            break;
        place(q, i, q->heap[child]);
        i = child;
    }
    place(q, i, e);
}

/* Put e, whose old entry was at index i, where its key belongs. */
static void sift(struct release_queue *q, u32 i, struct release_entry e)
{
    if (i > 0 && release_before(&e, &q->heap[(i - 1) / 2]))
        sift_up(q, i, e);
    else
        sift_down(q, i, e);
}

/* The entry at index i leaves the heap: the last one fills the hole. */
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
    if (t->sc->release_pos != 0)
        sift(q, t->sc->release_pos - 1, e); /* reuse the SC's stale slot */
    else
        sift_up(q, q->count++, e);
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
        if (i > 0 && release_before(e, &q->heap[(i - 1) / 2]))
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
