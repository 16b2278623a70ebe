/* Priority-ordered thread queues (queue.h). */
#include <kernel.h>
#include <object.h>
#include <queue.h>

/* The contracts of removal (make prove, proof set `tqueue`; docs/proofs.md
 * "Thread queues"): the queue's ends stay consistent, both NULL or both
 * threads, the head without predecessor and the tail without successor.
 * Two TCB pointers are the same thread or disjoint memory (each TCB is an
 * object of its own). */
/*@
  predicate tq_apart(struct tcb *a, struct tcb *b) =
      a == \null || b == \null || a == b || \separated(a, b);
  predicate tq_ends(struct thread_queue *q) =
      (q->head == \null <==> q->tail == \null) &&
      (q->head != \null ==>
          \valid(q->head) && \valid(q->tail) && \separated(q, q->head) && \separated(q, q->tail) &&
          q->head->queue_prev == \null && q->tail->queue_next == \null);
  // t is in q as far as its neighbours tell: they point back at it, and it
  // has no predecessor (successor) exactly when it is the head (tail).
  predicate tq_linked(struct thread_queue *q, struct tcb *t) =
      \valid(t) && \separated(q, t) &&
      (t->queue_prev == \null <==> q->head == t) && (t->queue_next == \null <==> q->tail == t) &&
      (t->queue_prev != \null ==> \valid(t->queue_prev) && t->queue_prev->queue_next == t &&
                                 \separated(t->queue_prev, t, q)) &&
      (t->queue_next != \null ==> \valid(t->queue_next) && t->queue_next->queue_prev == t &&
                                 \separated(t->queue_next, t, q)) &&
      tq_apart(t->queue_prev, t->queue_next) &&
      tq_apart(t->queue_prev, q->head) && tq_apart(t->queue_prev, q->tail) &&
      tq_apart(t->queue_next, q->head) && tq_apart(t->queue_next, q->tail) &&
      tq_apart(t, q->head) && tq_apart(t, q->tail);
*/

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

/*@ requires \valid(q) && tq_ends(q) && tq_linked(q, t);
    assigns q->head, q->tail, t->queue_next, t->queue_prev,
            t->queue_prev->queue_next, t->queue_next->queue_prev;
    ensures tq_ends(q);
    ensures t->queue_next == \null && t->queue_prev == \null;
    ensures \old(q->head) == t ==> q->head == \old(t->queue_next);
    ensures \old(q->head) != t ==> q->head == \old(q->head); */
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

/*@ requires \valid(q) && tq_ends(q);
    requires q->head != \null ==> tq_linked(q, q->head);
    assigns q->head, q->tail, q->head->queue_next, q->head->queue_prev, q->head->queue_next->queue_prev;
    ensures \result == \old(q->head) && tq_ends(q);
    ensures \result != \null ==> \result->queue_next == \null && \result->queue_prev == \null;
    ensures \result != \null ==> q->head == \old(q->head->queue_next); */
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
