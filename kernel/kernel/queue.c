/* Priority-ordered thread queues (queue.h). */
#include <kernel.h>
#include <object.h>
#include <queue.h>

/* The contracts (make prove, proof set `tqueue`; docs/proofs.md "Thread
 * queues") describe a queue by a ghost model: tq_m[0 .. tq_n - 1], its
 * threads from head to tail. One model suffices: the kernel is
 * single-threaded and each operation changes one queue, whose model the
 * caller keeps (the callers are not proved). tq_pos names a thread's place:
 * the one to remove (input of removal), the one inserted (output of
 * insertion). TQ_MODEL_CAP only sizes the ghost array (nothing exists at
 * run time): the members are distinct TCBs, so a queue is at most as long
 * as there are threads.
 * Distinct TCBs have distinct base addresses (each TCB is an object of its
 * own, and so is the endpoint or notification holding q): a write to one
 * thread's link then leaves every other thread's links as they were by the
 * memory model alone, which keeps the frame goals small. */
#define TQ_MODEL_CAP 65536
/*@ ghost struct tcb *tq_m[TQ_MODEL_CAP]; */
/*@ ghost unsigned tq_n; */
/*@ ghost unsigned tq_pos; */
/*@
  // x is a valid TCB, another object than the queue's header.
  predicate tq_thread(struct thread_queue *q, struct tcb *x) =
      \valid(x) && \base_addr(x) != \base_addr(q);
  // The ends: both NULL exactly when the model is empty; else its first
  // and last member, the head without predecessor, the tail without
  // successor.
  predicate tq_ends(struct thread_queue *q) =
      tq_n < TQ_MODEL_CAP &&
      (tq_n == 0 <==> q->head == \null) && (tq_n == 0 <==> q->tail == \null) &&
      (tq_n > 0 ==> q->head == tq_m[0] && q->tail == tq_m[tq_n - 1] &&
                    tq_m[0]->queue_prev == \null && tq_m[tq_n - 1]->queue_next == \null);
  predicate tq_members(struct thread_queue *q) =
      \forall integer i; 0 <= i < tq_n ==> tq_thread(q, tq_m[i]);
  // Neighbours point at each other. Two quantifiers, each about a field of
  // member i, so that a read of tq_m[x]->queue_next (queue_prev) is enough
  // for the provers to instantiate them.
  predicate tq_links =
      (\forall integer i; 0 <= i < tq_n - 1 ==> tq_m[i]->queue_next == tq_m[i + 1]) &&
      (\forall integer i; 0 < i < tq_n ==> tq_m[i]->queue_prev == tq_m[i - 1]);
  // No thread twice, so the list is acyclic.
  predicate tq_distinct =
      \forall integer i, j; 0 <= i < j < tq_n ==> \base_addr(tq_m[i]) != \base_addr(tq_m[j]);
  // The well-formed doubly-linked list q, whose members are tq_m[0 .. tq_n - 1].
  predicate tq_list(struct thread_queue *q) =
      \valid(q) && tq_ends(q) && tq_members(q) && tq_links && tq_distinct;
  // Highest priority first, but for the member at p (one whose priority
  // changed while it waited; p = tq_n: none).
  predicate tq_sorted_but(integer p) =
      \forall integer i, j; 0 <= i < j < tq_n && i != p && j != p ==>
          tq_m[i]->priority >= tq_m[j]->priority;
  predicate tq_sorted = tq_sorted_but(tq_n);
  // t is no member.
  predicate tq_outside(struct tcb *t) =
      \forall integer i; 0 <= i < tq_n ==> \base_addr(t) != \base_addr(tq_m[i]);
*/

/* The model's side of a removal, on its own (so its goals do not carry the
 * heap's): the members after tq_pos move down one. The members stay valid,
 * distinct and (the one at tq_pos gone) in order, and the removed one is
 * no member any more. */
/*@ ghost
  /@ requires \valid(q) && tq_n < TQ_MODEL_CAP && tq_pos < tq_n;
     requires tq_members(q) && tq_distinct && tq_sorted_but(tq_pos);
     assigns tq_m[tq_pos .. tq_n - 2], tq_n;
     ensures tq_n == \old(tq_n) - 1;
     ensures \forall integer j; 0 <= j < tq_pos ==> tq_m[j] == \old(tq_m[j]);
     ensures \forall integer j; tq_pos <= j < tq_n ==> tq_m[j] == \old(tq_m[j + 1]);
     ensures tq_members(q) && tq_distinct && tq_sorted && tq_outside(\old(tq_m[tq_pos])); @/
  void tq_model_remove(struct thread_queue *q)
  {
      unsigned i = tq_pos;
      /@ loop invariant tq_pos <= i <= tq_n - 1;
         loop invariant \forall integer j; 0 <= j < i ==> tq_m[j] == \at(tq_m[j < tq_pos ? j : j + 1], Pre);
         loop invariant \forall integer j; i <= j < tq_n ==> tq_m[j] == \at(tq_m[j], Pre);
         loop assigns i, tq_m[tq_pos .. tq_n - 2];
         loop variant tq_n - i; @/
      while (i + 1 < tq_n) {
          tq_m[i] = tq_m[i + 1];
          i++;
      }
      tq_n--;
  }
*/

/* The model's side of an insertion, on its own: t goes in at k, the
 * members from k on move up one. Given the priorities around k (those
 * before at least t's, those from k on below it), the members stay valid,
 * distinct and in order. */
/*@ ghost
  /@ requires \valid(q) && tq_n + 1 < TQ_MODEL_CAP && k <= tq_n;
     requires tq_members(q) && tq_distinct && tq_sorted;
     requires tq_thread(q, t) && tq_outside(t);
     requires \forall integer i; 0 <= i < k ==> tq_m[i]->priority >= t->priority;
     requires \forall integer i; k <= i < tq_n ==> tq_m[i]->priority < t->priority;
     assigns tq_m[k .. tq_n], tq_n, tq_pos;
     ensures tq_n == \old(tq_n) + 1 && tq_pos == k && tq_m[k] == t;
     ensures \forall integer j; 0 <= j < k ==> tq_m[j] == \old(tq_m[j]);
     ensures \forall integer j; k < j < tq_n ==> tq_m[j] == \old(tq_m[j - 1]);
     ensures tq_members(q) && tq_distinct && tq_sorted; @/
  void tq_model_insert(struct thread_queue *q, struct tcb *t, unsigned k)
  {
      unsigned i = tq_n;
      /@ loop invariant k <= i <= tq_n;
         loop invariant \forall integer j; 0 <= j < i ==> tq_m[j] == \at(tq_m[j], Pre);
         loop invariant \forall integer j; i < j <= tq_n ==> tq_m[j] == \at(tq_m[j - 1], Pre);
         loop assigns i, tq_m[k + 1 .. tq_n];
         loop variant i; @/
      while (i > k) {
          tq_m[i] = tq_m[i - 1];
          i--;
      }
      tq_m[k] = t;
      tq_n++;
      tq_pos = k;
  }
*/

/* The links of a model with a member at k whose links were checked apart
 * from the rest (insertion): the four cases around k make tq_links. A
 * function of its own so that its goal has no more than these facts (in
 * tqueue_insert's context the provers did not find the case split). */
/*@ ghost
  /@ requires k < tq_n;
     requires \forall integer i; 0 <= i && i + 1 < k ==> tq_m[i]->queue_next == tq_m[i + 1];
     requires 0 < k ==> tq_m[k - 1]->queue_next == tq_m[k];
     requires k + 1 < tq_n ==> tq_m[k]->queue_next == tq_m[k + 1];
     requires \forall integer i; k < i < tq_n - 1 ==> tq_m[i]->queue_next == tq_m[i + 1];
     requires \forall integer i; 0 < i < k ==> tq_m[i]->queue_prev == tq_m[i - 1];
     requires 0 < k ==> tq_m[k]->queue_prev == tq_m[k - 1];
     requires k + 1 < tq_n ==> tq_m[k + 1]->queue_prev == tq_m[k];
     requires \forall integer i; k + 1 < i < tq_n ==> tq_m[i]->queue_prev == tq_m[i - 1];
     assigns \nothing;
     ensures \forall integer i; 0 <= i < tq_n - 1 ==> tq_m[i]->queue_next == tq_m[i + 1];
     ensures \forall integer i; 0 < i < tq_n ==> tq_m[i]->queue_prev == tq_m[i - 1]; @/
  void tq_links_join(unsigned k)
  {
      /@ assert \forall integer i; 0 < i <= k ==> tq_m[i]->queue_prev == tq_m[i - 1]; @/
      /@ assert \forall integer i; k < i < tq_n ==> tq_m[i]->queue_prev == tq_m[i - 1]; @/
  }
*/

/*@ requires tq_list(q) && tq_sorted && tq_n + 1 < TQ_MODEL_CAP;
    requires tq_thread(q, t) && tq_outside(t);
    assigns q->head, q->tail, t->queue_next, t->queue_prev,
            tq_m[0 .. tq_n - 1]->queue_next, tq_m[0 .. tq_n - 1]->queue_prev,
            tq_m[0 .. tq_n], tq_n, tq_pos;
    ensures tq_n == \old(tq_n) + 1 && tq_pos < tq_n && tq_m[tq_pos] == t;
    ensures tq_list(q);
    ensures tq_sorted;
    // Where t goes: behind every member of its priority or higher (FIFO
    // among equals), before every member of lower priority; the others
    // keep their order.
    ensures \forall integer i; 0 <= i < tq_pos ==> tq_m[i] == \old(tq_m[i]) &&
                tq_m[i]->priority >= t->priority;
    ensures \forall integer i; tq_pos < i < tq_n ==> tq_m[i] == \old(tq_m[i - 1]) &&
                tq_m[i]->priority < t->priority; */
void tqueue_insert(struct thread_queue *q, struct tcb *t)
{
    /* Find the last queued thread of priority >= t's, walking from the
     * tail: FIFO among equals, and O(1) when t has the lowest priority.
     * Bounded by the queue length (queue.h): the walk's variant k, the
     * place behind `before`, starts at the queue's length and drops by one
     * per step (proved). */
    struct tcb *before = q->tail;
    /*@ ghost unsigned k = tq_n; */
    /*@ loop invariant 0 <= k <= tq_n;
        loop invariant k == 0 ==> before == \null;
        loop invariant k > 0 ==> before == tq_m[k - 1];
        loop invariant walked: \forall integer i; k <= i < tq_n ==> tq_m[i]->priority < t->priority;
        loop assigns before, k;
        loop variant k; */
    while (before && before->priority < t->priority) {
        before = before->queue_prev;
        /*@ ghost k--; */
    }
    struct tcb *after = before ? before->queue_next : q->head;
    /*@ assert after_k: k < tq_n ==> after == tq_m[k]; */
    /*@ assert after_end: k == tq_n ==> after == \null; */
    /*@ assert prio_before: \forall integer i; 0 <= i < k ==> tq_m[i]->priority >= t->priority; */
    /*@ assert apart_after: k < tq_n ==>
            \forall integer j; 0 <= j < tq_n && j != k ==> \base_addr(tq_m[j]) != \base_addr(tq_m[k]); */
    /*@ assert apart_before: k > 0 ==>
            \forall integer j; 0 <= j < tq_n && j != k - 1 ==> \base_addr(tq_m[j]) != \base_addr(tq_m[k - 1]); */
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
    /* The heap against the old model: every link but the two next to k is
     * as it was, and those two point at t. */
    /*@ assert kept_next: \forall integer j; 0 <= j < tq_n - 1 && j != k - 1 ==>
            tq_m[j]->queue_next == tq_m[j + 1]; */
    /*@ assert kept_prev: \forall integer j; 0 < j < tq_n && j != k ==>
            tq_m[j]->queue_prev == tq_m[j - 1]; */
    /*@ assert into_t: k > 0 ==> tq_m[k - 1]->queue_next == t; */
    /*@ assert back_t: k < tq_n ==> tq_m[k]->queue_prev == t; */
    /*@ assert t_prev: (k > 0 ==> t->queue_prev == tq_m[k - 1]) && (k == 0 ==> t->queue_prev == \null); */
    /*@ assert t_next: (k < tq_n ==> t->queue_next == tq_m[k]) && (k == tq_n ==> t->queue_next == \null); */
    /*@ assert old_head: k > 0 ==> q->head == tq_m[0] && tq_m[0]->queue_prev == \null; */
    /*@ assert new_head: k == 0 ==> q->head == t; */
    /*@ assert old_tail: k < tq_n ==> q->tail == tq_m[tq_n - 1] && tq_m[tq_n - 1]->queue_next == \null; */
    /*@ assert new_tail: k == tq_n ==> q->tail == t; */
    /*@ ghost tq_model_insert(q, t, k); */
    /* The links against the new model (t at k). */
    /*@ assert next_below: \forall integer i; 0 <= i && i + 1 < k ==> tq_m[i]->queue_next == tq_m[i + 1]; */
    /*@ assert next_into: 0 < k ==> tq_m[k - 1]->queue_next == tq_m[k]; */
    /*@ assert next_out: k + 1 < tq_n ==> tq_m[k]->queue_next == tq_m[k + 1]; */
    /*@ assert next_above: \forall integer i; k < i < tq_n - 1 ==> tq_m[i]->queue_next == tq_m[i + 1]; */
    /*@ assert prev_below: \forall integer i; 0 < i < k ==> tq_m[i]->queue_prev == tq_m[i - 1]; */
    /*@ assert prev_at: 0 < k ==> tq_m[k]->queue_prev == tq_m[k - 1]; */
    /*@ assert prev_after: k + 1 < tq_n ==> tq_m[k + 1]->queue_prev == tq_m[k]; */
    /*@ assert prev_above: \forall integer i; k + 1 < i < tq_n ==> tq_m[i]->queue_prev == tq_m[i - 1]; */
    /*@ assert ends_head: q->head == tq_m[0] && tq_m[0]->queue_prev == \null; */
    /*@ assert ends_tail: q->tail == tq_m[tq_n - 1] && tq_m[tq_n - 1]->queue_next == \null; */
    /*@ ghost tq_links_join(k); */
    /*@ assert ends: tq_ends(q); */
}

/*@ requires tq_list(q) && tq_sorted_but(tq_pos);
    requires tq_pos < tq_n && tq_m[tq_pos] == t;
    assigns q->head, q->tail, t->queue_next, t->queue_prev,
            t->queue_prev->queue_next, t->queue_next->queue_prev,
            tq_m[tq_pos .. tq_n - 2], tq_n;
    ensures tq_n == \old(tq_n) - 1;
    ensures tq_list(q);
    ensures tq_sorted;
    ensures tq_thread(q, t) && tq_outside(t);
    ensures t->queue_next == \null && t->queue_prev == \null;
    // The others keep their order.
    ensures \forall integer i; 0 <= i < tq_pos ==> tq_m[i] == \old(tq_m[i]);
    ensures \forall integer i; tq_pos <= i < tq_n ==> tq_m[i] == \old(tq_m[i + 1]); */
void tqueue_remove(struct thread_queue *q, struct tcb *t)
{
    /*@ assert tq_pos > 0 ==> t->queue_prev == tq_m[tq_pos - 1]; */
    /*@ assert tq_pos == 0 ==> t->queue_prev == \null && q->head == t; */
    /*@ assert tq_pos + 1 < tq_n ==> t->queue_next == tq_m[tq_pos + 1]; */
    /*@ assert tq_pos + 1 == tq_n ==> t->queue_next == \null && q->tail == t; */
    if (t->queue_prev)
        t->queue_prev->queue_next = t->queue_next;
    else
        q->head = t->queue_next;
    if (t->queue_next)
        t->queue_next->queue_prev = t->queue_prev;
    else
        q->tail = t->queue_prev;
    t->queue_next = t->queue_prev = NULL;
    /* The heap against the old model: every member's link but the two
     * around t is as it was (other objects), and those two skip t. */
    /*@ assert frame_next: \forall integer j; 0 <= j < tq_n && j != tq_pos - 1 && j != tq_pos ==>
            tq_m[j]->queue_next == \at(tq_m[j]->queue_next, Pre); */
    /*@ assert frame_prev: \forall integer j; 0 <= j < tq_n && j != tq_pos + 1 && j != tq_pos ==>
            tq_m[j]->queue_prev == \at(tq_m[j]->queue_prev, Pre); */
    /*@ assert kept_next: \forall integer j; 0 <= j < tq_n - 1 && j != tq_pos - 1 && j != tq_pos ==>
            tq_m[j]->queue_next == tq_m[j + 1]; */
    /*@ assert kept_prev: \forall integer j; 0 < j < tq_n && j != tq_pos + 1 && j != tq_pos ==>
            tq_m[j]->queue_prev == tq_m[j - 1]; */
    /*@ assert skip_next: 0 < tq_pos < tq_n - 1 ==> tq_m[tq_pos - 1]->queue_next == tq_m[tq_pos + 1]; */
    /*@ assert skip_prev: 0 < tq_pos < tq_n - 1 ==> tq_m[tq_pos + 1]->queue_prev == tq_m[tq_pos - 1]; */
    /*@ assert new_head: tq_pos == 0 && tq_n > 1 ==> q->head == tq_m[1] && tq_m[1]->queue_prev == \null; */
    /*@ assert new_tail: tq_pos == tq_n - 1 && tq_n > 1 ==>
            q->tail == tq_m[tq_n - 2] && tq_m[tq_n - 2]->queue_next == \null; */
    /*@ assert now_empty: tq_n == 1 ==> q->head == \null && q->tail == \null; */
    /*@ assert apart: \forall integer j; 0 <= j < tq_n && j != tq_pos ==> \base_addr(t) != \base_addr(tq_m[j]); */
    /*@ ghost tq_model_remove(q); */
    /* The links against the new model. */
    /*@ assert next_below: \forall integer i; 0 <= i && i + 1 < tq_pos ==> tq_m[i]->queue_next == tq_m[i + 1]; */
    /*@ assert next_at: 0 < tq_pos < tq_n ==> tq_m[tq_pos - 1]->queue_next == tq_m[tq_pos]; */
    /*@ assert next_above: \forall integer i; tq_pos <= i < tq_n - 1 ==> tq_m[i]->queue_next == tq_m[i + 1]; */
    /*@ assert prev_below: \forall integer i; 0 < i < tq_pos ==> tq_m[i]->queue_prev == tq_m[i - 1]; */
    /*@ assert prev_at: 0 < tq_pos < tq_n ==> tq_m[tq_pos]->queue_prev == tq_m[tq_pos - 1]; */
    /*@ assert prev_above: \forall integer i; tq_pos < i < tq_n ==> tq_m[i]->queue_prev == tq_m[i - 1]; */
    /*@ assert ends_empty: tq_n == 0 ==> q->head == \null && q->tail == \null; */
    /*@ assert ends_head: tq_n > 0 ==> q->head == tq_m[0] && tq_m[0]->queue_prev == \null; */
    /*@ assert ends_tail: tq_n > 0 ==> q->tail == tq_m[tq_n - 1] && tq_m[tq_n - 1]->queue_next == \null; */
}

/*@ requires tq_list(q) && tq_sorted;
    assigns q->head, q->tail, q->head->queue_next, q->head->queue_prev,
            q->head->queue_next->queue_prev, tq_m[0 .. tq_n - 2], tq_n, tq_pos;
    ensures \result == \old(q->head);
    ensures tq_list(q) && tq_sorted;
    ensures \old(tq_n) == 0 ==> tq_n == 0;
    ensures \old(tq_n) > 0 ==> tq_n == \old(tq_n) - 1 && tq_thread(q, \result) && tq_outside(\result) &&
        \result->queue_next == \null && \result->queue_prev == \null &&
        (\forall integer i; 0 <= i < tq_n ==> tq_m[i] == \old(tq_m[i + 1])); */
struct tcb *tqueue_pop(struct thread_queue *q)
{
    struct tcb *t = q->head;
    /*@ ghost tq_pos = 0; */
    if (t)
        tqueue_remove(q, t);
    return t;
}

/* t's priority changed while it waited (tq_pos is its place): it goes out
 * and back in at the place its new priority gives it. */
/*@ requires tq_list(q) && tq_sorted_but(tq_pos);
    requires tq_pos < tq_n && tq_m[tq_pos] == t;
    assigns q->head, q->tail, t->queue_next, t->queue_prev,
            tq_m[0 .. tq_n - 1]->queue_next, tq_m[0 .. tq_n - 1]->queue_prev,
            tq_m[0 .. tq_n - 1], tq_n, tq_pos;
    ensures tq_n == \old(tq_n) && tq_pos < tq_n && tq_m[tq_pos] == t;
    ensures tq_list(q);
    ensures tq_sorted; */
void tqueue_reorder(struct thread_queue *q, struct tcb *t)
{
    /* Removal writes the links of t's neighbours: members. */
    /*@ assert t_prev: (tq_pos > 0 ==> t->queue_prev == tq_m[tq_pos - 1]) &&
            (tq_pos == 0 ==> t->queue_prev == \null); */
    /*@ assert t_next: (tq_pos + 1 < tq_n ==> t->queue_next == tq_m[tq_pos + 1]) &&
            (tq_pos + 1 == tq_n ==> t->queue_next == \null); */
    tqueue_remove(q, t);
    /* Insertion writes the links of the members after the removal: each is
     * a member from before it, at the same place or one later (the
     * witnesses written out, so the assigns goals need not search). */
    /*@ assert was_below: \forall integer i; 0 <= i < \at(tq_pos, Pre) ==>
            tq_m[i] == \at(tq_m[i], Pre); */
    /*@ assert was_above: \forall integer i; \at(tq_pos, Pre) <= i < tq_n ==>
            tq_m[i] == \at(tq_m[i + 1], Pre); */
    /*@ assert in_old_next: \forall integer i; 0 <= i < tq_n ==> \exists integer j;
            0 <= j < \at(tq_n, Pre) && &tq_m[i]->queue_next == &\at(tq_m[j], Pre)->queue_next; */
    /*@ assert in_old_prev: \forall integer i; 0 <= i < tq_n ==> \exists integer j;
            0 <= j < \at(tq_n, Pre) && &tq_m[i]->queue_prev == &\at(tq_m[j], Pre)->queue_prev; */
    tqueue_insert(q, t);
}

#if CONFIG_INVARIANT_CHECKS
/* Check flavour (endpoint.c's ipc_invariant_violation, for every endpoint
 * and notification cap after every kernel entry; the host test
 * tests/test_thread_queue.py): the list well formed and in priority order,
 * the walk cut at `limit` members so that a cycle is reported. */
const char *tqueue_violation(const struct thread_queue *q, word_t limit)
{
    word_t steps = 0;
    const struct tcb *prev = NULL;
    for (const struct tcb *t = q->head; t; prev = t, t = t->queue_next) {
        if (++steps > limit)
            return "thread queue: a cycle";
        if (t->queue_prev != prev)
            return "thread queue: broken back link";
        if (prev && prev->priority < t->priority)
            return "thread queue: not in priority order";
    }
    return q->tail == prev ? NULL : "thread queue: wrong tail";
}
#endif
