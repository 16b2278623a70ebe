/* Thread queues ordered by priority: the threads blocked on one notification
 * (and, with the IPC work, on one endpoint). MCS orders them by TCB priority,
 * highest first, FIFO among equal priorities (Lyons' thesis, 2018, ch. 7;
 * seL4's tcbEPAppend), and a thread whose priority changes while it waits is
 * re-queued.
 *
 * The links live in the TCB (queue_next/queue_prev, object.h): a thread is
 * blocked on at most one object at a time, so one pair of links serves every
 * kind of queue. The queue itself is two words, embedded in the object.
 *
 * Cost: every operation takes a constant number of steps, whatever the
 * queue's length (which the kernel does not bound: every TCB is 2 KiB of
 * memory given out by untyped). seL4 walks the queue to insert; here an
 * index over the queue's priorities, kept in TCBs (queue.c, "The index"),
 * finds the place: no operation walks the waiters, and no WCET bound
 * depends on how many there are. */
#ifndef KAIROS_QUEUE_H
#define KAIROS_QUEUE_H

#include <config.h>
#include <types.h>

struct tcb;

/* The index over a queue's priorities (queue.c): 16 groups of 16. */
#define TQ_SLOTS 16u
#define TQ_GROUP(p) ((p) >> 4)
#define TQ_SLOT(p) ((p) & (TQ_SLOTS - 1u))

struct thread_queue {
    struct tcb *head; /* highest priority, longest waiting */
    struct tcb *tail;
};

static inline bool tqueue_empty(const struct thread_queue *q) { return q->head == NULL; }

/* Insert t (not in any queue) behind every queued thread of equal or
 * higher priority. */
void tqueue_insert(struct thread_queue *q, struct tcb *t);
/* Remove t, which must be in q. */
void tqueue_remove(struct thread_queue *q, struct tcb *t);
/* Remove and return the head, or NULL if q is empty. */
struct tcb *tqueue_pop(struct thread_queue *q);
/* t, which is in q, changed priority from old_priority: move it to its new
 * place. */
void tqueue_reorder(struct thread_queue *q, struct tcb *t, u32 old_priority);

#if CONFIG_INVARIANT_CHECKS
/* The check flavour's test of q (list, order, index) walking at most limit
 * members: NULL, or what is wrong. */
const char *tqueue_violation(const struct thread_queue *q, word_t limit);
#endif

#endif
