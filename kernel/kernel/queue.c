/* Priority-ordered thread queues (queue.h). */
#include <kernel.h>
#include <object.h>
#include <queue.h>

void tqueue_insert(struct thread_queue *q, struct tcb *t)
{
    /* Find the last queued thread of priority >= t's, walking from the
     * tail: FIFO among equals, and O(1) when t has the lowest priority.
     * Bounded by the queue length (queue.h). */
    struct tcb *before = q->tail;
    while (before && before->priority < t->priority)
        before = before->queue_prev;
    struct tcb *after = before ? before->queue_next : q->head;
    t->queue_prev = before;
    t->queue_next = after;
    if (before)
        before->queue_next = t;
    else
        q->head = t;
    if (after)
        after->queue_prev = t;
    else
        q->tail = t;
}

void tqueue_remove(struct thread_queue *q, struct tcb *t)
{
    if (t->queue_prev)
        t->queue_prev->queue_next = t->queue_next;
    else
        q->head = t->queue_next;
    if (t->queue_next)
        t->queue_next->queue_prev = t->queue_prev;
    else
        q->tail = t->queue_prev;
    t->queue_next = t->queue_prev = NULL;
}

struct tcb *tqueue_pop(struct thread_queue *q)
{
    struct tcb *t = q->head;
    if (t)
        tqueue_remove(q, t);
    return t;
}

void tqueue_reorder(struct thread_queue *q, struct tcb *t)
{
    tqueue_remove(q, t);
    tqueue_insert(q, t);
}
