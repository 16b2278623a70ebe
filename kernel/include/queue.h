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
 * Cost: removal and taking the head are O(1). Insertion walks from the tail
 * towards the head past the threads of lower priority, so it is O(1) when the
 * newcomer's priority is the lowest queued (the common case of equal
 * priorities) and O(n) at worst. n is at most the number of threads that
 * exist, which the kernel bounds by CONFIG_MAX_THREADS (Untyped_Retype makes
 * no TCB beyond it). seL4 bounds threads only by memory and leaves the length
 * of a queue to the system's design (Lyons' thesis, 2018, ch. 7); a system
 * may still state a shorter queue for its analysis (the WCET annotations'
 * queue_length). */
#ifndef KAIROS_QUEUE_H
#define KAIROS_QUEUE_H

#include <config.h>
#include <types.h>

struct tcb;

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
/* t, which is in q, changed priority: move it to its new place. */
void tqueue_reorder(struct thread_queue *q, struct tcb *t);

#if CONFIG_INVARIANT_CHECKS
/* The check flavour's test of q (links, ends, priority order) walking at
 * most limit members: NULL, or what is wrong. */
const char *tqueue_violation(const struct thread_queue *q, word_t limit);
#endif

#endif
