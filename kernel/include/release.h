/* The release queue's order: a binary min-heap of the runnable threads that
 * wait for their scheduling context's next refill (docs/scheduling.md
 * "Release queue"; thread.c decides who goes in and when they leave).
 *
 * Entries are ordered by (release time, insertion number), so the earliest
 * release is at the top and threads with equal release times leave in the
 * order they came, the order of seL4's sorted release list (tcbReleaseEnqueue
 * queues a thread behind the equal times). Each entry carries its key, so
 * ordering compares entries in the array and never follows a TCB or SC
 * pointer; a TCB records its position (release_pos) so that it can be taken
 * out from anywhere. Insertion and removal move one entry per level: at most
 * RELEASE_QUEUE_LEVELS, the depth of a heap of CONFIG_MAX_SPORADIC_SCS.
 *
 * Nothing here needs more than object.h, so the host tests
 * (tests/test_release_queue.py) run it natively. */
#ifndef KAIROS_RELEASE_H
#define KAIROS_RELEASE_H

#include <config.h>
#include <object.h>

#define RELEASE_QUEUE_LEVELS 8
_Static_assert(CONFIG_MAX_SPORADIC_SCS <= (1u << RELEASE_QUEUE_LEVELS), "the heap's depth covers its capacity");

struct release_entry {
    u64 time; /* the head refill's release time when the thread was queued */
    u64 seq;  /* insertion number: first come, first released among equal times */
    struct tcb *tcb;
};

struct release_queue {
    struct release_entry heap[CONFIG_MAX_SPORADIC_SCS];
    u32 count;
    u64 next_seq;
};

/* Queue t (not queued, count < CONFIG_MAX_SPORADIC_SCS) to be released at time. */
void release_queue_insert(struct release_queue *q, struct tcb *t, u64 time);
/* Take t (queued) out. */
void release_queue_remove(struct release_queue *q, struct tcb *t);
static inline bool release_queue_holds(const struct tcb *t) { return t->release_pos != 0; }
/* What is wrong with the heap (order, positions), or NULL. */
const char *release_queue_violation(const struct release_queue *q);

#endif
