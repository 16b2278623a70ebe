/* The release queue's order: a 4-ary min-heap of the runnable threads that
 * wait for their scheduling context's next refill (docs/scheduling.md
 * "Release queue"; thread.c decides who goes in and when they leave).
 *
 * Entries are ordered by (release time, insertion number), so the earliest
 * release is at the top and threads with equal release times leave in the
 * order they came, the order of seL4's sorted release list (tcbReleaseEnqueue
 * queues a thread behind the equal times). Each entry carries its key, so
 * ordering compares entries in the array and never follows a TCB or SC
 * pointer.
 *
 * An entry belongs to a scheduling context, not to a thread: a sporadic SC
 * has at most one (its slot, release_pos), which holds the SC's thread while
 * it is queued. Taking a thread out only empties the slot's thread field:
 * O(1), whatever the slot's place in the heap. The empty ("stale") entry
 * keeps its key and place; it is reused, with a new key, when a thread on
 * that SC is queued again, and leaves the heap when it reaches the top
 * (release_queue_take_first, which the release loop calls with a
 * preemption point after each entry) or when its SC is deleted or stops
 * being sporadic (release_queue_forget_sc). So the heap never holds more
 * entries than there are sporadic SCs, and insertion, reuse, taking the
 * first entry and forgetting an SC move one entry per level: at most
 * RELEASE_QUEUE_LEVELS, the depth of a heap of CONFIG_MAX_SPORADIC_SCS.
 *
 * A thread queued again into its SC's stale slot with a key that comes
 * later than the slot's is "deferred": the slot keeps its earlier key and
 * the thread's own key is kept in its TCB (release_time, release_seq). A
 * slot's key thus never comes after its thread's own key, and a first
 * entry that is not deferred holds the earliest own key of all; the
 * release loop re-keys a deferred first entry (release_queue_settle_first)
 * before it takes anything, so threads leave in the order of their own
 * keys. The heap's first time is then a lower bound of the earliest
 * release, which is what the timer needs (an early interrupt only re-keys).
 *
 * Nothing here needs more than object.h, so the host tests
 * (tests/test_release_queue.py) run it natively. */
#ifndef KAIROS_RELEASE_H
#define KAIROS_RELEASE_H

#include <config.h>
#include <object.h>

/* Four children per node: half the levels of a binary heap. A sift pays a
 * few cache lines per level (the entries it reads and writes are at
 * indices the WCET analysis cannot know, and the moved entry's SC is a
 * third object), and reading four adjacent children costs about what
 * reading two does, so fewer levels is fewer misses (docs/wcet.md
 * "Interrupt latency"). Slot i's children are 4i+1 .. 4i+4. */
#define RELEASE_QUEUE_ARITY 4
/* Levels below the root: 1 + 4 + 16 + 64 + 256 = 341 slots. */
#define RELEASE_QUEUE_LEVELS 4
_Static_assert(CONFIG_MAX_SPORADIC_SCS <= ((1u << (2 * (RELEASE_QUEUE_LEVELS + 1))) - 1) / 3,
               "the heap's depth covers its capacity");

struct release_entry {
    u64 time; /* the head refill's release time when the thread was queued */
    u64 seq;  /* insertion number: first come, first released among equal times */
    struct sched_context *sc; /* whose slot this is (sc->release_pos) */
    struct tcb *tcb;          /* sc's thread while queued; NULL: stale */
};

/* 64: the U54's L1 data-cache line (docs/processor-model.md). The queue
 * starts on a line and its heap 32 bytes into one, so that a node's four
 * children (slots 4i+1 .. 4i+4, 128 bytes) are exactly two lines and no
 * entry straddles two (release.c slot_at). */
#define RELEASE_QUEUE_LINE 64
struct release_queue {
    u32 count; /* entries, live or stale */
    u64 next_seq;
    u8 pad[32 - sizeof(u64) - sizeof(u64)];
    /* CONFIG_MAX_SPORADIC_SCS slots, then padding: a sift reads a node's
     * four child slots together, and the last node's may run past the
     * capacity (release.c sink). */
    struct release_entry heap[CONFIG_MAX_SPORADIC_SCS + RELEASE_QUEUE_ARITY - 1];
} __attribute__((aligned(RELEASE_QUEUE_LINE)));
_Static_assert(sizeof(struct release_entry) == 32 &&
                   __builtin_offsetof(struct release_queue, heap) % RELEASE_QUEUE_LINE == 32,
               "a node's children start on a cache line");

/* Queue t (not queued; bound to t->sc, whose slot holds no thread) to be
 * released at time: in t->sc's slot if it has one (with the new key if
 * that comes first, else deferred), else in a new entry (count <
 * CONFIG_MAX_SPORADIC_SCS then). */
void release_queue_insert(struct release_queue *q, struct tcb *t, u64 time);
/* Take t (queued) out: its entry stays, stale. */
void release_queue_remove(struct release_queue *q, struct tcb *t);
/* Take the first entry (count > 0) out of the heap: its thread (now not
 * queued), or NULL if the entry was stale. */
struct tcb *release_queue_take_first(struct release_queue *q);
/* The first entry's thread (count > 0), or NULL if the entry is stale. */
static inline struct tcb *release_queue_first(const struct release_queue *q) { return q->heap[0].tcb; }
/* The first entry's thread is deferred (release_deferred): its slot gets
 * the thread's own key. One sink; call again for the next first entry. */
void release_queue_settle_first(struct release_queue *q);
/* The first entry (count > 0, its thread queued, not deferred) gets the new release time
 * and the next insertion number: the order release_queue_take_first then
 * release_queue_insert would give, with one sift instead of two. */
void release_queue_requeue_first(struct release_queue *q, u64 time);
/* sc's slot, if it has one (stale: its thread is not queued), leaves the
 * heap. */
void release_queue_forget_sc(struct release_queue *q, struct sched_context *sc);
/*@ requires \valid_read(t);
    assigns \nothing;
    ensures \result == t->in_release_queue; */
static inline bool release_queue_holds(const struct tcb *t) { return t->in_release_queue; }
/* What is wrong with the heap (order, slots, queued threads), or NULL. */
const char *release_queue_violation(const struct release_queue *q);

#endif
