/* Priority-ordered thread queues (queue.h). */
#include <kernel.h>
#include <object.h>
#include <queue.h>
#include <sched.h>

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
/*@ ghost unsigned tq_k; */
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

/* The index.
 *
 * Finding where a thread goes must not walk the waiters: the kernel does
 * not bound how many threads wait on one object. The list stays as it is
 * (the proofs above are about it); an index over its priorities finds the
 * place in a constant number of steps. The endpoint or notification has
 * room for the list's two ends only (seL4's 16-byte endpoint), so the index
 * lives in TCBs, in the members that stay put while the others come and go:
 *
 *   group g = priorities 16g .. 16g + 15 (TQ_GROUP), slot = p mod 16;
 *   the queue's head H:          H->tq_group_mask has bit g exactly when a
 *                                member's priority is in group g, and then
 *                                H->tq_group_head[g] is the first such member;
 *   each group's first member G: G->tq_run_mask has bit s exactly when a
 *                                member has priority 16g + s, and then
 *                                G->tq_run_tail[s] is the last such member.
 *
 * This holds whenever the queue holds two or more priorities; with one
 * (empty, or every waiter at the same priority, the common case and the
 * fastpath's) the index is not read and need not be right, so the
 * fastpath's one-waiter steps stay as they were. Members of a group are
 * consecutive (the list is sorted), so a group's first member only changes
 * when it leaves or a thread of a higher priority of the group arrives;
 * then the group's slots move to the new first member (16 words), and the
 * head's groups move likewise when the head changes. Every operation is a
 * constant number of steps: no loop but the 16-word copies. */

/* A TCB pointer read from the index, with the TCB's 2^TCB_BITS alignment
 * made visible: a no-op at run time (every TCB is a naturally aligned
 * object), it tells the timing analysis which cache sets the fields read
 * through it fall into (as tcb_from_paddr does; docs/wcet.md "Interrupt
 * latency"). */
static ALWAYS_INLINE struct tcb *tq_tcb(struct tcb *p)
{
    return (struct tcb *)((word_t)p & ~(word_t)MASK(TCB_BITS));
}

/* Index of the lowest set bit of a non-zero mask. */
static ALWAYS_INLINE u32 lowest_bit(word_t w) { return (u32)msb_index(w & (~w + 1)); }

/* The queue holds at least two priorities (the index is kept), given the
 * priority `key` of member t whose priority field may already be its new
 * one (tqueue_reorder). */
static ALWAYS_INLINE bool tq_indexed(const struct thread_queue *q, const struct tcb *t, u32 key)
{
    if (q->head == q->tail)
        return false; /* empty, or one member */
    u32 hp = q->head == t ? key : q->head->priority;
    u32 tp = q->tail == t ? key : q->tail->priority;
    return hp != tp;
}

static ALWAYS_INLINE void tq_copy_groups(struct tcb *to, const struct tcb *from)
{
    /* Unrolled, every word read before the first is written: one block of
     * accesses at fixed offsets from two TCBs, so the timing analysis
     * charges the lines of each once, and no write to `to` can evict a
     * line of `from` still to be read (as copy_8_words, endpoint.c). */
    struct tcb *v[TQ_SLOTS];
#pragma GCC unroll 16
    for (u32 i = 0; i < TQ_SLOTS; i++)
        v[i] = from->tq_group_head[i];
    u16 mask = from->tq_group_mask;
#pragma GCC unroll 16
    for (u32 i = 0; i < TQ_SLOTS; i++)
        to->tq_group_head[i] = v[i];
    to->tq_group_mask = mask;
}

static ALWAYS_INLINE void tq_copy_runs(struct tcb *to, const struct tcb *from)
{
    struct tcb *v[TQ_SLOTS];
#pragma GCC unroll 16
    for (u32 i = 0; i < TQ_SLOTS; i++)
        v[i] = from->tq_run_tail[i];
    u16 mask = from->tq_run_mask;
#pragma GCC unroll 16
    for (u32 i = 0; i < TQ_SLOTS; i++)
        to->tq_run_tail[i] = v[i];
    to->tq_run_mask = mask;
}

/* Where a thread of priority p goes: behind the last member of priority
 * >= p, or at the head (NULL). At most three TCBs read: the head (and the
 * tail), a group's first member, the run's last member.
 * Not proved (make prove takes the contract as given; docs/proofs.md
 * "Assumptions"): the index is no part of the ghost model. The check
 * flavour compares the index with the list after every kernel entry
 * (tqueue_violation), and tests/test_thread_queue.py drives it against a
 * reference list. */
/*@ requires tq_list(q) && tq_sorted;
    assigns tq_k;
    ensures 0 <= tq_k <= tq_n;
    ensures tq_k == 0 ==> \result == \null;
    ensures tq_k > 0 ==> \result == tq_m[tq_k - 1] && \result->priority >= p;
    ensures \forall integer i; tq_k <= i < tq_n ==> tq_m[i]->priority < p; */
static ALWAYS_INLINE struct tcb *tq_find_before(const struct thread_queue *q, u32 p)
{
    struct tcb *h = q->head;
    if (!h)
        return NULL;
    struct tcb *last = q->tail;
    if (h->priority == last->priority)
        return last->priority >= p ? last : NULL;
    u32 g = TQ_GROUP(p);
    word_t groups = h->tq_group_mask;
    if (groups & BIT(g)) {
        /* The lowest run of g at or above p, if any. */
        const struct tcb *first = tq_tcb(h->tq_group_head[g]);
        word_t runs = (word_t)first->tq_run_mask >> TQ_SLOT(p);
        if (runs)
            return tq_tcb(first->tq_run_tail[TQ_SLOT(p) + lowest_bit(runs)]);
    }
    /* Else the lowest run of the lowest group above g. */
    word_t above = groups >> g >> 1;
    if (!above)
        return NULL;
    const struct tcb *first = tq_tcb(h->tq_group_head[g + 1 + lowest_bit(above)]);
    return tq_tcb(first->tq_run_tail[lowest_bit(first->tq_run_mask)]);
}

/* The index after t (priority p) was linked into q behind `before`; h and
 * last are the ends before (NULL: the queue was empty). Not proved, like
 * tq_find_before: its contract says what it leaves alone. */
/*@ assigns tq_m[0 .. tq_n - 1]->tq_group_mask, tq_m[0 .. tq_n - 1]->tq_run_mask,
            tq_m[0 .. tq_n - 1]->tq_group_head[0 .. TQ_SLOTS - 1],
            tq_m[0 .. tq_n - 1]->tq_run_tail[0 .. TQ_SLOTS - 1],
            t->tq_group_mask, t->tq_run_mask, t->tq_group_head[0 .. TQ_SLOTS - 1],
            t->tq_run_tail[0 .. TQ_SLOTS - 1];
    // Only index fields are written (`assigns`), stated for what the list
    // proofs read: the links, the priorities and the ends.
    ensures \forall integer i; 0 <= i < tq_n ==> tq_m[i]->queue_next == \old(tq_m[i]->queue_next) &&
                tq_m[i]->queue_prev == \old(tq_m[i]->queue_prev) && tq_m[i]->priority == \old(tq_m[i]->priority);
    ensures q->head == \old(q->head) && q->tail == \old(q->tail);
    ensures t->queue_next == \old(t->queue_next) && t->queue_prev == \old(t->queue_prev) &&
            t->priority == \old(t->priority); */
static ALWAYS_INLINE void tq_index_insert(const struct thread_queue *q, struct tcb *h, struct tcb *last,
                                          struct tcb *t, struct tcb *before)
{
    (void)q; /* named by the contract */
    u32 p = t->priority;
    if (!h)
        return;
    if (h->priority == last->priority) {
        if (h->priority == p)
            return; /* still one priority */
        /* Two priorities from now on: the index of the one run h .. last. */
        u32 r = h->priority;
        h->tq_group_mask = (u16)BIT(TQ_GROUP(r));
        h->tq_group_head[TQ_GROUP(r)] = h;
        h->tq_run_mask = (u16)BIT(TQ_SLOT(r));
        h->tq_run_tail[TQ_SLOT(r)] = last;
    }
    u32 g = TQ_GROUP(p), s = TQ_SLOT(p);
    struct tcb *first;
    if (h->tq_group_mask & BIT(g)) {
        first = tq_tcb(h->tq_group_head[g]);
        /* No run of g at or above p: t is the group's new first member. */
        if (((word_t)first->tq_run_mask >> s) == 0) {
            tq_copy_runs(t, first);
            first = t;
            h->tq_group_head[g] = t;
        }
    } else {
        first = t;
        t->tq_run_mask = 0;
        h->tq_group_mask = (u16)(h->tq_group_mask | BIT(g));
        h->tq_group_head[g] = t;
    }
    /* t is the last of its priority (FIFO among equals). */
    first->tq_run_mask = (u16)(first->tq_run_mask | BIT(s));
    first->tq_run_tail[s] = t;
    if (!before)
        tq_copy_groups(t, h); /* t is the new head */
}

/* The index before member t leaves; t's priority in the index is key (its
 * priority field may already hold a new one: tqueue_reorder). */
/*@ assigns tq_m[0 .. tq_n - 1]->tq_group_mask, tq_m[0 .. tq_n - 1]->tq_run_mask,
            tq_m[0 .. tq_n - 1]->tq_group_head[0 .. TQ_SLOTS - 1],
            tq_m[0 .. tq_n - 1]->tq_run_tail[0 .. TQ_SLOTS - 1];
    // Only index fields are written (`assigns`), stated for what the list
    // proofs read: the links, the priorities and the ends.
    ensures \forall integer i; 0 <= i < tq_n ==> tq_m[i]->queue_next == \old(tq_m[i]->queue_next) &&
                tq_m[i]->queue_prev == \old(tq_m[i]->queue_prev) && tq_m[i]->priority == \old(tq_m[i]->priority);
    ensures q->head == \old(q->head) && q->tail == \old(q->tail); */
static ALWAYS_INLINE void tq_index_remove(struct thread_queue *q, struct tcb *t, u32 key)
{
    if (!tq_indexed(q, t, key))
        return;
    struct tcb *h = q->head;
    u32 g = TQ_GROUP(key), s = TQ_SLOT(key);
    struct tcb *first = tq_tcb(h->tq_group_head[g]);
    if (first->tq_run_tail[s] == t) {
        /* Its predecessor is of a priority >= key (sorted), and of key
         * exactly when it is in t's run. */
        struct tcb *prev = t->queue_prev;
        if (prev && prev->priority == key) {
            first->tq_run_tail[s] = prev;
        } else {
            first->tq_run_mask = (u16)(first->tq_run_mask & ~BIT(s));
            if (!first->tq_run_mask)
                h->tq_group_mask = (u16)(h->tq_group_mask & ~BIT(g));
        }
    }
    /* The group's members are consecutive: if any stay, the first is t's
     * successor. */
    if (first == t && first->tq_run_mask) {
        tq_copy_runs(t->queue_next, t);
        h->tq_group_head[g] = t->queue_next;
    }
    /* Two priorities queued, so the head has a successor. */
    if (h == t)
        tq_copy_groups(t->queue_next, t);
}

/*@ requires tq_list(q) && tq_sorted && tq_n + 1 < TQ_MODEL_CAP;
    requires tq_thread(q, t) && tq_outside(t);
    assigns q->head, q->tail, t->queue_next, t->queue_prev,
            tq_m[0 .. tq_n - 1]->queue_next, tq_m[0 .. tq_n - 1]->queue_prev,
            tq_m[0 .. tq_n - 1]->tq_group_mask, tq_m[0 .. tq_n - 1]->tq_run_mask,
            tq_m[0 .. tq_n - 1]->tq_group_head[0 .. TQ_SLOTS - 1],
            tq_m[0 .. tq_n - 1]->tq_run_tail[0 .. TQ_SLOTS - 1],
            t->tq_group_mask, t->tq_run_mask, t->tq_group_head[0 .. TQ_SLOTS - 1],
            t->tq_run_tail[0 .. TQ_SLOTS - 1],
            tq_m[0 .. tq_n], tq_n, tq_pos, tq_k;
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
    /* The last queued thread of priority >= t's (FIFO among equals):
     * found by the index in a constant number of steps. */
    struct tcb *h = q->head, *last = q->tail;
    struct tcb *before = tq_find_before(q, t->priority);
    /*@ ghost unsigned k = tq_k; */
    /* Stepping stones for the head's goals (old_head below). */
    /*@ assert head_was: tq_n > 0 ==> h == tq_m[0] && tq_m[0]->queue_prev == \null; */
    /*@ assert before_k: (k == 0 ==> before == \null) && (k > 0 ==> before == tq_m[k - 1] && before != \null); */
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
    /*@ assert head_kept: k > 0 ==> q->head == h; */
    /*@ assert m0_prev_kept: k > 0 ==> tq_m[0]->queue_prev == \at(tq_m[0]->queue_prev, Pre); */
    /*@ assert old_head: k > 0 ==> q->head == tq_m[0] && tq_m[0]->queue_prev == \null; */
    /*@ assert new_head: k == 0 ==> q->head == t; */
    /*@ assert old_tail: k < tq_n ==> q->tail == tq_m[tq_n - 1] && tq_m[tq_n - 1]->queue_next == \null; */
    /*@ assert new_tail: k == tq_n ==> q->tail == t; */
    tq_index_insert(q, h, last, t, before);
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
static ALWAYS_INLINE void tq_unlink(struct thread_queue *q, struct tcb *t)
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

/* The list half of removal (above) after the index's. */
/*@ requires tq_list(q) && tq_sorted_but(tq_pos);
    requires tq_pos < tq_n && tq_m[tq_pos] == t;
    assigns q->head, q->tail, t->queue_next, t->queue_prev,
            t->queue_prev->queue_next, t->queue_next->queue_prev,
            tq_m[0 .. tq_n - 1]->tq_group_mask, tq_m[0 .. tq_n - 1]->tq_run_mask,
            tq_m[0 .. tq_n - 1]->tq_group_head[0 .. TQ_SLOTS - 1],
            tq_m[0 .. tq_n - 1]->tq_run_tail[0 .. TQ_SLOTS - 1],
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
    tq_index_remove(q, t, t->priority);
    tq_unlink(q, t);
}

/*@ requires tq_list(q) && tq_sorted;
    assigns q->head, q->tail, q->head->queue_next, q->head->queue_prev,
            q->head->queue_next->queue_prev,
            tq_m[0 .. tq_n - 1]->tq_group_mask, tq_m[0 .. tq_n - 1]->tq_run_mask,
            tq_m[0 .. tq_n - 1]->tq_group_head[0 .. TQ_SLOTS - 1],
            tq_m[0 .. tq_n - 1]->tq_run_tail[0 .. TQ_SLOTS - 1],
            tq_m[0 .. tq_n - 2], tq_n, tq_pos;
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
    if (t) {
        tq_index_remove(q, t, t->priority);
        tq_unlink(q, t);
    }
    return t;
}

/* t's priority changed while it waited (tq_pos is its place; old_priority
 * the one it was queued with, which the index knows it by): it goes out and
 * back in at the place its new priority gives it. */
/*@ requires tq_list(q) && tq_sorted_but(tq_pos);
    requires tq_pos < tq_n && tq_m[tq_pos] == t;
    assigns q->head, q->tail, t->queue_next, t->queue_prev,
            tq_m[0 .. tq_n - 1]->queue_next, tq_m[0 .. tq_n - 1]->queue_prev,
            tq_m[0 .. tq_n - 1]->tq_group_mask, tq_m[0 .. tq_n - 1]->tq_run_mask,
            tq_m[0 .. tq_n - 1]->tq_group_head[0 .. TQ_SLOTS - 1],
            tq_m[0 .. tq_n - 1]->tq_run_tail[0 .. TQ_SLOTS - 1],
            tq_m[0 .. tq_n - 1], tq_n, tq_pos, tq_k;
    ensures tq_n == \old(tq_n) && tq_pos < tq_n && tq_m[tq_pos] == t;
    ensures tq_list(q);
    ensures tq_sorted; */
void tqueue_reorder(struct thread_queue *q, struct tcb *t, u32 old_priority)
{
    /* Removal writes the links of t's neighbours: members. */
    /*@ assert t_prev: (tq_pos > 0 ==> t->queue_prev == tq_m[tq_pos - 1]) &&
            (tq_pos == 0 ==> t->queue_prev == \null); */
    /*@ assert t_next: (tq_pos + 1 < tq_n ==> t->queue_next == tq_m[tq_pos + 1]) &&
            (tq_pos + 1 == tq_n ==> t->queue_next == \null); */
    tq_index_remove(q, t, old_priority);
    tq_unlink(q, t);
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
    /* ... and their index fields (t's too: it was a member). */
    /*@ assert in_old: \forall integer i; 0 <= i < tq_n ==> \exists integer j;
            0 <= j < \at(tq_n, Pre) && tq_m[i] == \at(tq_m[j], Pre); */
    /*@ assert t_old: t == \at(tq_m[tq_pos], Pre); */
    tqueue_insert(q, t);
}

#if CONFIG_INVARIANT_CHECKS
/* Check flavour (endpoint.c's ipc_invariant_violation, for every endpoint
 * and notification cap after every kernel entry): the list in priority
 * order and, when it holds two or more priorities, the index exactly as
 * "The index" above says: the head's group mask and first members, each
 * group's run mask and last members. The walk is cut at `limit` members. */
const char *tqueue_violation(const struct thread_queue *q, word_t limit)
{
    const struct tcb *h = q->head;
    if (!h)
        return q->tail ? "thread queue: a tail without a head" : NULL;
    bool indexed = h->priority != q->tail->priority;
    word_t groups = 0, runs = 0, steps = 0;
    const struct tcb *first = NULL;
    for (const struct tcb *t = h, *prev = NULL; t; prev = t, t = t->queue_next) {
        if (++steps > limit)
            return "thread queue: a cycle";
        if (t->queue_prev != prev)
            return "thread queue: broken back link";
        if (prev && prev->priority < t->priority)
            return "thread queue: not in priority order";
        if (!t->queue_next && q->tail != t)
            return "thread queue: wrong tail";
        if (!indexed)
            continue;
        u32 p = t->priority, g = TQ_GROUP(p), s = TQ_SLOT(p);
        if (!prev || TQ_GROUP(prev->priority) != g) {
            first = t;
            runs = 0;
            groups |= BIT(g);
            if (!(h->tq_group_mask & BIT(g)) || h->tq_group_head[g] != t)
                return "thread queue index: a group's first member not recorded";
        }
        const struct tcb *next = t->queue_next;
        if (!next || next->priority != p) {
            runs |= BIT(s);
            if (!(first->tq_run_mask & BIT(s)) || first->tq_run_tail[s] != t)
                return "thread queue index: a priority's last member not recorded";
        }
        if ((!next || TQ_GROUP(next->priority) != g) && first->tq_run_mask != runs)
            return "thread queue index: a group's priorities wrong";
    }
    if (indexed && h->tq_group_mask != groups)
        return "thread queue index: the groups wrong";
    return NULL;
}
#endif
