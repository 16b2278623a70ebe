/* The release queue's binary min-heap (release.h). */
#include <release.h>

static inline bool release_before(const struct release_entry *a, const struct release_entry *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static inline void place(struct release_queue *q, u32 i, struct release_entry e)
{
    q->heap[i] = e;
    e.tcb->release_pos = i + 1;
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

void release_queue_insert(struct release_queue *q, struct tcb *t, u64 time)
{
    struct release_entry e = {time, q->next_seq++, t};
    sift_up(q, q->count++, e);
}

void release_queue_remove(struct release_queue *q, struct tcb *t)
{
    u32 i = t->release_pos - 1;
    t->release_pos = 0;
    u32 last = --q->count;
    if (i == last)
        return;
    /* The last entry fills the hole, then moves up or down to its place. */
    struct release_entry e = q->heap[last];
    if (i > 0 && release_before(&e, &q->heap[(i - 1) / 2]))
        sift_up(q, i, e);
    else
        sift_down(q, i, e);
}

const char *release_queue_violation(const struct release_queue *q)
{
    if (q->count > CONFIG_MAX_SPORADIC_SCS)
        return "release queue: more entries than its capacity";
    for (u32 i = 0; i < q->count; i++) {
        if (i > 0 && release_before(&q->heap[i], &q->heap[(i - 1) / 2]))
            return "release queue: an entry before its parent";
        if (q->heap[i].tcb->release_pos != i + 1)
            return "release queue: a thread's recorded position";
    }
    return NULL;
}
