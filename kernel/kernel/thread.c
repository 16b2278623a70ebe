/* Thread states and the scheduler (docs/scheduling.md "Scheduler").
 *
 * Fixed priorities, 256 of them, round robin within a priority: one FIFO
 * ready queue per priority and a two-level bitmap over the priorities, so the
 * highest runnable priority is found with two most-significant-bit searches
 * instead of a scan. "Benno" scheduling: the running thread is in no queue,
 * and only threads that may run now are in a ready queue.
 *
 * MCS (Lyons et al., "Scheduling-context capabilities", EuroSys 2018): a thread runs only on a
 * configured scheduling context (SC) whose head refill is released and holds
 * at least MIN_BUDGET. A runnable thread whose SC has no such refill waits in
 * the release queue, ordered by the head refill's release time, until the
 * timer releases it (to the tail of its priority's queue).
 *
 * Accounting: time is stamped once per kernel entry (sched_entry). The time
 * since the previous stamp belongs to the SC that was current at the previous
 * exit, so all time from an entry to the next one, kernel time included, is
 * charged to the SC current at that entry's exit. It accumulates in
 * `consumed` and is charged to the refills (refill_budget_check) only when
 * the SC stops running (SC switch, block, yield) or its budget runs out, in
 * one place, kernel_exit, once per entry at most (charge_current, below); an
 * entry that finds the budget used up goes straight there (no system call).
 *
 * Timer: tickless, one shot, programmed at exit for the earlier of the
 * running SC's budget expiry and the release-queue head's release; written
 * to the hardware only when that time changes.
 *
 * The state is per core (struct sched_node), so SMP can follow: every SC
 * belongs to one core, and nothing here is shared between cores. */
#include <arch/context.h>
#include <arch/csr.h>
#include <arch/machine.h>
#include <arch/vspace.h>
#include <endpoint.h>
#include <fault.h>
#include <kernel.h>
#include <notification.h>
#include <objecttype.h>
#include <preemption.h>
#include <refill.h>
#include <sched.h>
#include <schedcontext.h>
#include <string.h>
#include <thread.h>
#include <timer.h>

struct tcb *current_thread;

struct sched_node sched_nodes[CONFIG_MAX_NUM_NODES];

struct tcb *fpu_owner;
bool fpu_loaded;

bool thread_is_runnable(const struct tcb *t)
{
    return t->state == THREAD_RUNNING || t->state == THREAD_RESTART;
}

bool thread_is_schedulable(const struct tcb *t)
{
    return thread_is_runnable(t) && t->sc != NULL && sc_configured(t->sc);
}

bool thread_is_blocked(const struct tcb *t)
{
    switch (t->state) {
    case THREAD_BLOCKED_ON_RECEIVE:
    case THREAD_BLOCKED_ON_SEND:
    case THREAD_BLOCKED_ON_REPLY:
    case THREAD_BLOCKED_ON_NOTIFICATION:
        return true;
    default:
        return false;
    }
}

u64 sched_now(void) { return NODE->stamp; }

/* The SC's head refill may be used now, with `used` of it already used. */
/* Only reads (taken as given by the ready-callers set: the two tests are
 * refill.h's). */
//@ assigns \nothing;
static ALWAYS_INLINE bool sc_can_run(struct sched_context *sc, u64 used)
{
    return refill_ready(sc, NODE->stamp) && refill_sufficient(sc, used);
}

bool sc_released(const struct sched_context *sc)
{
    return sc_configured(sc) && sc_can_run((struct sched_context *)sc, 0);
}

/* ---- ready queues ---- */

/* The bitmap half of a ready-queue change, apart so that its proof (make
 * prove, set `ready`) needs no list memory: queue p became non-empty
 * (set) or empty (clear). Always inlined: the same code as written in
 * place. */
/*@ requires n == &sched_nodes[0] && p < CONFIG_NUM_PRIORITIES;
    requires ACSL_BITMAP_WORDS(n) && ACSL_BITMAP_TOP_CLEAR(n);
    assigns n->bitmap[p / 64], n->bitmap_top;
    ensures ACSL_PRIO_BIT(n, p);
    ensures \forall integer q; 0 <= q < CONFIG_NUM_PRIORITIES && q != p ==>
                (ACSL_PRIO_BIT(n, q) <==> \old(ACSL_PRIO_BIT(n, q)));
    ensures ACSL_BITMAP_WORDS(n) && ACSL_BITMAP_TOP_CLEAR(n); */
static ALWAYS_INLINE void ready_bitmap_set(struct sched_node *n, u32 p)
{
    n->bitmap[p / 64] |= BIT(p % 64);
    /* The steps of the proof (make prove; each an instance of a sched.h lemma). */
    /*@ assert \forall integer w; 0 <= w < PRIO_WORDS && w != p / 64
            ==> n->bitmap[w] == \at(n->bitmap[w], Pre); */
    /*@ assert n->bitmap[p / 64] ==
            ((unsigned long)(1 << (unsigned int)(p % 64)) | \at(n->bitmap[p / 64], Pre)); */
    /*@ assert \forall integer q; 0 <= q < CONFIG_NUM_PRIORITIES && q / 64 != p / 64
            ==> (ACSL_PRIO_BIT(n, q) <==> \at(ACSL_PRIO_BIT(n, q), Pre)); */
    /*@ assert \forall integer q; 0 <= q < CONFIG_NUM_PRIORITIES && q != p && q / 64 == p / 64
            ==> ((n->bitmap[p / 64] & (1 << (q % 64))) != 0
            <==> (\at(n->bitmap[p / 64], Pre) & (1 << (q % 64))) != 0); */
    /*@ assert \forall integer q; 0 <= q < CONFIG_NUM_PRIORITIES && q / 64 == p / 64
            ==> (ACSL_PRIO_BIT(n, q) <==> (n->bitmap[p / 64] & (1 << (q % 64))) != 0); */
    /*@ assert \forall integer q; 0 <= q < CONFIG_NUM_PRIORITIES && q / 64 == p / 64
            ==> (\at(ACSL_PRIO_BIT(n, q), Pre)
            <==> (\at(n->bitmap[p / 64], Pre) & (1 << (q % 64))) != 0); */
    n->bitmap_top |= BIT(p / 64);
    /*@ assert \forall integer w; 0 <= w < 64 && w != p / 64
            ==> (ACSL_TOP_BIT(n, w) <==> \at(ACSL_TOP_BIT(n, w), Pre)); */
    //@ assert ACSL_TOP_BIT(n, p / 64) && n->bitmap[p / 64] != 0;
}

/*@ requires n == &sched_nodes[0] && p < CONFIG_NUM_PRIORITIES;
    requires ACSL_BITMAP_WORDS(n) && ACSL_BITMAP_TOP_CLEAR(n);
    assigns n->bitmap[p / 64], n->bitmap_top;
    ensures !ACSL_PRIO_BIT(n, p);
    ensures \forall integer q; 0 <= q < CONFIG_NUM_PRIORITIES && q != p ==>
                (ACSL_PRIO_BIT(n, q) <==> \old(ACSL_PRIO_BIT(n, q)));
    ensures ACSL_BITMAP_WORDS(n) && ACSL_BITMAP_TOP_CLEAR(n); */
static ALWAYS_INLINE void ready_bitmap_clear(struct sched_node *n, u32 p)
{
    n->bitmap[p / 64] &= ~BIT(p % 64);
    /*@ assert \forall integer w; 0 <= w < PRIO_WORDS && w != p / 64
            ==> n->bitmap[w] == \at(n->bitmap[w], Pre); */
    /*@ assert n->bitmap[p / 64] ==
            (\at(n->bitmap[p / 64], Pre) & (unsigned long)~(unsigned long)(1 << (unsigned int)(p % 64))); */
    /*@ assert \forall integer q; 0 <= q < CONFIG_NUM_PRIORITIES && q / 64 != p / 64
            ==> (ACSL_PRIO_BIT(n, q) <==> \at(ACSL_PRIO_BIT(n, q), Pre)); */
    /*@ assert \forall integer q; 0 <= q < CONFIG_NUM_PRIORITIES && q != p && q / 64 == p / 64
            ==> ((n->bitmap[p / 64] & (1 << (q % 64))) != 0
            <==> (\at(n->bitmap[p / 64], Pre) & (1 << (q % 64))) != 0); */
    /*@ assert \forall integer q; 0 <= q < CONFIG_NUM_PRIORITIES && q != p && q / 64 == p / 64
            ==> (ACSL_PRIO_BIT(n, q) <==> \at(ACSL_PRIO_BIT(n, q), Pre)); */
    //@ assert !ACSL_PRIO_BIT(n, p);
    //@ assert n->bitmap[p / 64] != 0 ==> \at(n->bitmap[p / 64], Pre) != 0;
    if (n->bitmap[p / 64] == 0)
        n->bitmap_top &= ~BIT(p / 64);
    /*@ assert \forall integer w; 0 <= w < 64 && w != p / 64
            ==> (ACSL_TOP_BIT(n, w) <==> \at(ACSL_TOP_BIT(n, w), Pre)); */
    //@ assert top_iff: ACSL_TOP_BIT(n, p / 64) <==> n->bitmap[p / 64] != 0;
}

/* The changed queue as a whole list (make prove, set `ready`; docs/proofs.md
 * "Ready queues"), described by a ghost model as the thread queues are
 * (queue.c): rq_m[0 .. rq_n - 1], the threads of the one queue an operation
 * changes, from head to tail. One model suffices: the kernel is
 * single-threaded and each operation changes one queue, whose model the
 * caller keeps (proved for sched_dequeue and park, set `ready-callers`;
 * not for the callers that change two queues). rq_pos is the place of the
 * thread to remove. RQ_MODEL_CAP only sizes the ghost array (nothing of it
 * exists at run time). Distinct TCBs have distinct base addresses (each
 * TCB is an object of its own, and so is the scheduler's node): a write to
 * one thread's link leaves every other thread's links alone by the memory
 * model alone. */
#define RQ_MODEL_CAP 65536
/*@ ghost struct tcb *rq_m[RQ_MODEL_CAP]; */
/*@ ghost unsigned rq_n; */
/*@ ghost unsigned rq_pos; */
/*@
  // x is a valid TCB of priority p, another object than the scheduler's node.
  predicate rq_thread(struct tcb *x, integer p) =
      \valid(x) && \base_addr(x) != \base_addr(&sched_nodes[0]) && x->priority == p;
  // The ends of queue p: both NULL exactly when the model is empty; else its
  // first and last member, the head without predecessor, the tail without
  // successor.
  predicate rq_ends(integer p) =
      rq_n < RQ_MODEL_CAP &&
      (rq_n == 0 <==> sched_nodes[0].ready_head[p] == \null) &&
      (rq_n == 0 <==> sched_nodes[0].ready_tail[p] == \null) &&
      (rq_n > 0 ==> sched_nodes[0].ready_head[p] == rq_m[0] &&
                    sched_nodes[0].ready_tail[p] == rq_m[rq_n - 1] &&
                    rq_m[0]->ready_prev == \null && rq_m[rq_n - 1]->ready_next == \null);
  predicate rq_members(integer p) =
      \forall integer i; 0 <= i < rq_n ==> rq_thread(rq_m[i], p);
  // Neighbours point at each other, pointwise (one quantifier per field).
  predicate rq_links =
      (\forall integer i; 0 <= i < rq_n - 1 ==> rq_m[i]->ready_next == rq_m[i + 1]) &&
      (\forall integer i; 0 < i < rq_n ==> rq_m[i]->ready_prev == rq_m[i - 1]);
  // No thread twice, so the list is acyclic and at most as long as there
  // are threads.
  predicate rq_distinct =
      \forall integer i, j; 0 <= i < j < rq_n ==> \base_addr(rq_m[i]) != \base_addr(rq_m[j]);
  // Queue p is a well-formed doubly-linked list whose members are
  // rq_m[0 .. rq_n - 1], each of priority p.
  predicate rq_list(integer p) = rq_ends(p) && rq_members(p) && rq_links && rq_distinct;
  // t is no member.
  predicate rq_outside(struct tcb *t) =
      \forall integer i; 0 <= i < rq_n ==> \base_addr(t) != \base_addr(rq_m[i]);
*/

/* The ready-queue flag tied to membership (make prove, set `ready-callers`;
 * docs/proofs.md "Ready queues"): the callers test t->in_ready_queue to
 * decide whether t is in its priority's queue, so the preconditions of
 * ready_remove (t in the queue) and ready_insert (t in no queue) must
 * follow from the flag. rq_flag(t): t's flag says whether it is a member
 * of the model (the queue of its priority). rq_flagged: every member has
 * the flag set, for every thread of the queue at once (one quantifier,
 * over the model's places). */
/*@
  predicate rq_flag(struct tcb *t) =
      (t->in_ready_queue ==> \exists integer i; 0 <= i < rq_n && rq_m[i] == t) &&
      (!t->in_ready_queue ==> rq_outside(t));
  predicate rq_flagged = \forall integer i; 0 <= i < rq_n ==> rq_m[i]->in_ready_queue;
*/

/* The model's side of the operations, each on its own (their goals carry
 * no heap): t goes in at the tail, or at the head with the others moving
 * up one; the member at rq_pos goes out with the ones after it moving
 * down one. Members and distinctness carry over. */
/*@ ghost
  /@ requires rq_n + 1 < RQ_MODEL_CAP;
     requires rq_members(p) && rq_distinct && rq_thread(t, p) && rq_outside(t);
     assigns rq_m[rq_n], rq_n;
     ensures rq_n == \old(rq_n) + 1 && rq_m[rq_n - 1] == t;
     ensures \forall integer j; 0 <= j < rq_n - 1 ==> rq_m[j] == \old(rq_m[j]);
     ensures rq_members(p) && rq_distinct; @/
  void rq_model_push_tail(struct tcb *t, u32 p)
  {
      rq_m[rq_n] = t;
      rq_n++;
  }
*/
/*@ ghost
  /@ requires rq_n + 1 < RQ_MODEL_CAP;
     requires rq_members(p) && rq_distinct && rq_thread(t, p) && rq_outside(t);
     assigns rq_m[0 .. rq_n], rq_n;
     ensures rq_n == \old(rq_n) + 1 && rq_m[0] == t;
     ensures \forall integer j; 0 < j < rq_n ==> rq_m[j] == \old(rq_m[j - 1]);
     ensures rq_members(p) && rq_distinct; @/
  void rq_model_push_head(struct tcb *t, u32 p)
  {
      unsigned i = rq_n;
      /@ loop invariant 0 <= i <= rq_n;
         loop invariant \forall integer j; 0 <= j < i ==> rq_m[j] == \at(rq_m[j], Pre);
         loop invariant \forall integer j; i < j <= rq_n ==> rq_m[j] == \at(rq_m[j - 1], Pre);
         loop assigns i, rq_m[1 .. rq_n];
         loop variant i; @/
      while (i > 0) {
          rq_m[i] = rq_m[i - 1];
          i--;
      }
      rq_m[0] = t;
      rq_n++;
  }
*/
/*@ ghost
  /@ requires rq_n < RQ_MODEL_CAP && rq_pos < rq_n;
     requires rq_members(p) && rq_distinct;
     assigns rq_m[rq_pos .. rq_n - 2], rq_n;
     ensures rq_n == \old(rq_n) - 1;
     ensures \forall integer j; 0 <= j < rq_pos ==> rq_m[j] == \old(rq_m[j]);
     ensures \forall integer j; rq_pos <= j < rq_n ==> rq_m[j] == \old(rq_m[j + 1]);
     ensures rq_members(p) && rq_distinct && rq_outside(\old(rq_m[rq_pos])); @/
  void rq_model_remove(u32 p)
  {
      unsigned i = rq_pos;
      /@ loop invariant rq_pos <= i <= rq_n - 1;
         loop invariant \forall integer j; 0 <= j < i ==> rq_m[j] == \at(rq_m[j < rq_pos ? j : j + 1], Pre);
         loop invariant \forall integer j; i <= j < rq_n ==> rq_m[j] == \at(rq_m[j], Pre);
         loop assigns i, rq_m[rq_pos .. rq_n - 2];
         loop variant rq_n - i; @/
      while (i + 1 < rq_n) {
          rq_m[i] = rq_m[i + 1];
          i++;
      }
      rq_n--;
  }
*/

/* The links of a model with a member at k (t, just inserted) whose links
 * were checked apart from the rest: the cases around k make rq_links (a
 * function of its own, as tq_links_join in queue.c). */
/*@ ghost
  /@ requires rq_n <= RQ_MODEL_CAP && k < rq_n;
     requires \forall integer i; 0 <= i && i + 1 < k ==> rq_m[i]->ready_next == rq_m[i + 1];
     requires 0 < k ==> rq_m[k - 1]->ready_next == rq_m[k];
     requires k + 1 < rq_n ==> rq_m[k]->ready_next == rq_m[k + 1];
     requires \forall integer i; k < i < rq_n - 1 ==> rq_m[i]->ready_next == rq_m[i + 1];
     requires \forall integer i; 0 < i < k ==> rq_m[i]->ready_prev == rq_m[i - 1];
     requires 0 < k ==> rq_m[k]->ready_prev == rq_m[k - 1];
     requires k + 1 < rq_n ==> rq_m[k + 1]->ready_prev == rq_m[k];
     requires \forall integer i; k + 1 < i < rq_n ==> rq_m[i]->ready_prev == rq_m[i - 1];
     assigns \nothing;
     ensures rq_links; @/
  void rq_links_join(unsigned k)
  {
      /@ assert \forall integer i; 0 <= i < rq_n - 1 ==> rq_m[i]->ready_next == rq_m[i + 1]; @/
      /@ assert \forall integer i; 0 < i <= k ==> rq_m[i]->ready_prev == rq_m[i - 1]; @/
      /@ assert \forall integer i; k < i < rq_n ==> rq_m[i]->ready_prev == rq_m[i - 1]; @/
  }
*/

/* Contracts (make prove, set `ready`): the bitmap stays exact for every
 * priority and the queue's ends stay consistent; t (in no queue) becomes
 * its head or tail; the queue stays a well-formed list (rq_list), t at its
 * head or tail and the others in their order. */
/*@ requires \valid(t) && \separated(t, &sched_nodes[0]) && t->priority < CONFIG_NUM_PRIORITIES;
    requires ACSL_BITMAP_PRIOS(&sched_nodes[0]) && ACSL_BITMAP_WORDS(&sched_nodes[0]) &&
             ACSL_BITMAP_TOP_CLEAR(&sched_nodes[0]) && queue_ends(&sched_nodes[0], t->priority);
    requires t != sched_nodes[0].ready_head[t->priority] && t != sched_nodes[0].ready_tail[t->priority];
    requires tcb_apart(t, sched_nodes[0].ready_head[t->priority]) &&
             tcb_apart(t, sched_nodes[0].ready_tail[t->priority]) &&
             tcb_apart(sched_nodes[0].ready_head[t->priority], sched_nodes[0].ready_tail[t->priority]);
    requires list: rq_list(t->priority) && rq_n + 1 < RQ_MODEL_CAP;
    requires rq_thread(t, t->priority) && rq_outside(t);
    assigns t->ready_prev, t->ready_next, t->in_ready_queue,
            sched_nodes[0].ready_head[t->priority], sched_nodes[0].ready_tail[t->priority],
            sched_nodes[0].bitmap[t->priority / 64], sched_nodes[0].bitmap_top,
            sched_nodes[0].ready_head[t->priority]->ready_prev,
            sched_nodes[0].ready_tail[t->priority]->ready_next,
            rq_m[0 .. rq_n], rq_n;
    ensures ACSL_BITMAP_PRIOS(&sched_nodes[0]);
    ensures ACSL_BITMAP_WORDS(&sched_nodes[0]);
    ensures ACSL_BITMAP_TOP_CLEAR(&sched_nodes[0]);
    ensures queue_ends(&sched_nodes[0], t->priority);
    ensures t->in_ready_queue;
    ensures at_head ==> sched_nodes[0].ready_head[t->priority] == t;
    ensures at_head ==> t->ready_next == \old(sched_nodes[0].ready_head[t->priority]);
    ensures !at_head ==> sched_nodes[0].ready_tail[t->priority] == t;
    ensures !at_head ==> t->ready_prev == \old(sched_nodes[0].ready_tail[t->priority]);
    ensures list: rq_list(t->priority) && rq_n == \old(rq_n) + 1;
    ensures at_head ==> rq_m[0] == t &&
                (\forall integer i; 0 < i < rq_n ==> rq_m[i] == \old(rq_m[i - 1]));
    ensures !at_head ==> rq_m[rq_n - 1] == t &&
                (\forall integer i; 0 <= i < rq_n - 1 ==> rq_m[i] == \old(rq_m[i]));
    ensures flag: rq_flag(t);
    ensures flagged: \old(rq_flagged) ==> rq_flagged; */
static void ready_insert(struct tcb *t, bool at_head)
{
    struct sched_node *n = NODE;
    u32 p = t->priority;
    if (at_head) {
        t->ready_prev = NULL;
        t->ready_next = n->ready_head[p];
        if (n->ready_head[p])
            n->ready_head[p]->ready_prev = t;
        else
            n->ready_tail[p] = t;
        n->ready_head[p] = t;
        /*@ assert h_heads: \forall integer q; 0 <= q < CONFIG_NUM_PRIORITIES && q != p
                ==> n->ready_head[q] == \at(sched_nodes[0].ready_head[q], Pre); */
        /* The heap against the old model: every link but the old head's
         * predecessor as it was, and that one t. */
        /*@ assert h_kept_next: \forall integer j; 0 <= j < rq_n - 1 ==> rq_m[j]->ready_next == rq_m[j + 1]; */
        /*@ assert h_kept_prev: \forall integer j; 0 < j < rq_n ==> rq_m[j]->ready_prev == rq_m[j - 1]; */
        /*@ assert h_back_t: rq_n > 0 ==> rq_m[0]->ready_prev == t; */
        /*@ assert h_t: t->ready_prev == \null && n->ready_head[p] == t &&
                (rq_n > 0 ==> t->ready_next == rq_m[0]) && (rq_n == 0 ==> t->ready_next == \null); */
        /*@ assert h_tail: (rq_n > 0 ==> n->ready_tail[p] == rq_m[rq_n - 1] && rq_m[rq_n - 1]->ready_next == \null) &&
                (rq_n == 0 ==> n->ready_tail[p] == t); */
        /*@ ghost rq_model_push_head(t, p); */
        /* Against the new model (t at 0). */
        /*@ assert h_next_0: rq_n > 1 ==> rq_m[0]->ready_next == rq_m[1]; */
        /*@ assert h_next_above: \forall integer i; 0 < i < rq_n - 1 ==> rq_m[i]->ready_next == rq_m[i + 1]; */
        /*@ assert h_prev_1: rq_n > 1 ==> rq_m[1]->ready_prev == rq_m[0]; */
        /*@ assert h_prev_above: \forall integer i; 1 < i < rq_n ==> rq_m[i]->ready_prev == rq_m[i - 1]; */
        /*@ ghost rq_links_join(0); */
        /*@ assert h_ends_head: n->ready_head[p] == rq_m[0] && rq_m[0]->ready_prev == \null; */
        /*@ assert h_ends_tail: n->ready_tail[p] == rq_m[rq_n - 1] && rq_m[rq_n - 1]->ready_next == \null; */
        /*@ assert h_ends: rq_ends(p); */
    } else {
        t->ready_next = NULL;
        t->ready_prev = n->ready_tail[p];
        if (n->ready_tail[p])
            n->ready_tail[p]->ready_next = t;
        else
            n->ready_head[p] = t;
        n->ready_tail[p] = t;
        /*@ assert t_heads: \forall integer q; 0 <= q < CONFIG_NUM_PRIORITIES && q != p
                ==> n->ready_head[q] == \at(sched_nodes[0].ready_head[q], Pre); */
        /* The heap against the old model: every link but the old tail's
         * successor as it was, and that one t. */
        /*@ assert t_kept_next: \forall integer j; 0 <= j < rq_n - 1 ==> rq_m[j]->ready_next == rq_m[j + 1]; */
        /*@ assert t_kept_prev: \forall integer j; 0 < j < rq_n ==> rq_m[j]->ready_prev == rq_m[j - 1]; */
        /*@ assert t_into_t: rq_n > 0 ==> rq_m[rq_n - 1]->ready_next == t; */
        /*@ assert t_t: t->ready_next == \null && n->ready_tail[p] == t &&
                (rq_n > 0 ==> t->ready_prev == rq_m[rq_n - 1]) && (rq_n == 0 ==> t->ready_prev == \null); */
        /*@ assert t_head: (rq_n > 0 ==> n->ready_head[p] == rq_m[0] && rq_m[0]->ready_prev == \null) &&
                (rq_n == 0 ==> n->ready_head[p] == t); */
        /*@ ghost rq_model_push_tail(t, p); */
        /* Against the new model (t at rq_n - 1). */
        /*@ assert t_next_below: \forall integer i; 0 <= i < rq_n - 2 ==> rq_m[i]->ready_next == rq_m[i + 1]; */
        /*@ assert t_next_into: rq_n > 1 ==> rq_m[rq_n - 2]->ready_next == rq_m[rq_n - 1]; */
        /*@ assert t_prev_below: \forall integer i; 0 < i < rq_n - 1 ==> rq_m[i]->ready_prev == rq_m[i - 1]; */
        /*@ assert t_prev_at: rq_n > 1 ==> rq_m[rq_n - 1]->ready_prev == rq_m[rq_n - 2]; */
        /*@ ghost rq_links_join(rq_n - 1); */
        /*@ assert t_ends_head: n->ready_head[p] == rq_m[0] && rq_m[0]->ready_prev == \null; */
        /*@ assert t_ends_tail: n->ready_tail[p] == rq_m[rq_n - 1] && rq_m[rq_n - 1]->ready_next == \null; */
        /*@ assert t_ends: rq_ends(p); */
    }
    /* Proof steps (make prove): queue p is not empty, no other head changed. */
    //@ assert n->ready_head[p] != \null && queue_ends(&sched_nodes[0], p);
    /*@ assert \forall integer q; 0 <= q < CONFIG_NUM_PRIORITIES && q != p
            ==> n->ready_head[q] == \at(sched_nodes[0].ready_head[q], Pre); */
    /*@ assert list_before: rq_list(p); */
    ready_bitmap_set(n, p);
    /* The bitmap is another object than the members (their priorities). */
    /*@ assert members_bitmap: rq_members(p); */
    t->in_ready_queue = true;
    /*@ assert members_flag: rq_members(p); */
}

/* t is in its priority's queue: its neighbours point back at it, and it
 * has no predecessor (successor) exactly when it is the head (tail); it is
 * the member at rq_pos of the well-formed list, which stays one without
 * it, the others in their order. */
/*@ requires \valid(t) && \separated(t, &sched_nodes[0]) && t->priority < CONFIG_NUM_PRIORITIES;
    requires ACSL_BITMAP_PRIOS(&sched_nodes[0]) && ACSL_BITMAP_WORDS(&sched_nodes[0]) &&
             ACSL_BITMAP_TOP_CLEAR(&sched_nodes[0]) && queue_ends(&sched_nodes[0], t->priority);
    requires t->ready_prev == \null <==> sched_nodes[0].ready_head[t->priority] == t;
    requires t->ready_next == \null <==> sched_nodes[0].ready_tail[t->priority] == t;
    requires t->ready_prev != \null ==> \valid(t->ready_prev) && t->ready_prev->ready_next == t &&
             \separated(t->ready_prev, t, &sched_nodes[0]);
    requires t->ready_next != \null ==> \valid(t->ready_next) && t->ready_next->ready_prev == t &&
             \separated(t->ready_next, t, &sched_nodes[0]);
    requires tcb_apart(t->ready_prev, t->ready_next) &&
             tcb_apart(t->ready_prev, sched_nodes[0].ready_head[t->priority]) &&
             tcb_apart(t->ready_prev, sched_nodes[0].ready_tail[t->priority]) &&
             tcb_apart(t->ready_next, sched_nodes[0].ready_head[t->priority]) &&
             tcb_apart(t->ready_next, sched_nodes[0].ready_tail[t->priority]) &&
             tcb_apart(t, sched_nodes[0].ready_head[t->priority]) &&
             tcb_apart(t, sched_nodes[0].ready_tail[t->priority]);
    requires list: rq_list(t->priority) && rq_pos < rq_n && rq_m[rq_pos] == t;
    assigns t->ready_prev, t->ready_next, t->in_ready_queue,
            sched_nodes[0].ready_head[t->priority], sched_nodes[0].ready_tail[t->priority],
            sched_nodes[0].bitmap[t->priority / 64], sched_nodes[0].bitmap_top,
            t->ready_prev->ready_next, t->ready_next->ready_prev,
            rq_m[rq_pos .. rq_n - 2], rq_n;
    ensures prios: ACSL_BITMAP_PRIOS(&sched_nodes[0]);
    ensures ACSL_BITMAP_WORDS(&sched_nodes[0]);
    ensures ACSL_BITMAP_TOP_CLEAR(&sched_nodes[0]);
    ensures queue_ends(&sched_nodes[0], t->priority);
    ensures !t->in_ready_queue && t->ready_prev == \null && t->ready_next == \null;
    ensures list: rq_list(t->priority) && rq_n == \old(rq_n) - 1;
    ensures rq_thread(t, t->priority) && rq_outside(t);
    ensures \forall integer i; 0 <= i < rq_pos ==> rq_m[i] == \old(rq_m[i]);
    ensures \forall integer i; rq_pos <= i < rq_n ==> rq_m[i] == \old(rq_m[i + 1]);
    ensures flag: rq_flag(t);
    ensures flagged: \old(rq_flagged) ==> rq_flagged; */
static void ready_remove(struct tcb *t)
{
    struct sched_node *n = NODE;
    u32 p = t->priority;
    /*@ assert rq_pos > 0 ==> t->ready_prev == rq_m[rq_pos - 1]; */
    /*@ assert rq_pos == 0 ==> t->ready_prev == \null && n->ready_head[p] == t; */
    /*@ assert rq_pos + 1 < rq_n ==> t->ready_next == rq_m[rq_pos + 1]; */
    /*@ assert rq_pos + 1 == rq_n ==> t->ready_next == \null && n->ready_tail[p] == t; */
    if (t->ready_prev)
        t->ready_prev->ready_next = t->ready_next;
    else
        n->ready_head[p] = t->ready_next;
    if (t->ready_next)
        t->ready_next->ready_prev = t->ready_prev;
    else
        n->ready_tail[p] = t->ready_prev;
    if (!n->ready_head[p])
        ready_bitmap_clear(n, p);
    t->ready_next = t->ready_prev = NULL;
    /* The heap against the old model: every member's link but the two
     * around t as it was, and those two skip t. */
    /*@ assert kept_next: \forall integer j; 0 <= j < rq_n - 1 && j != rq_pos - 1 && j != rq_pos ==>
            rq_m[j]->ready_next == rq_m[j + 1]; */
    /*@ assert kept_prev: \forall integer j; 0 < j < rq_n && j != rq_pos + 1 && j != rq_pos ==>
            rq_m[j]->ready_prev == rq_m[j - 1]; */
    /*@ assert skip_next: 0 < rq_pos < rq_n - 1 ==> rq_m[rq_pos - 1]->ready_next == rq_m[rq_pos + 1]; */
    /*@ assert skip_prev: 0 < rq_pos < rq_n - 1 ==> rq_m[rq_pos + 1]->ready_prev == rq_m[rq_pos - 1]; */
    /*@ assert new_head: rq_pos == 0 && rq_n > 1 ==> n->ready_head[p] == rq_m[1] && rq_m[1]->ready_prev == \null; */
    /*@ assert new_tail: rq_pos == rq_n - 1 && rq_n > 1 ==>
            n->ready_tail[p] == rq_m[rq_n - 2] && rq_m[rq_n - 2]->ready_next == \null; */
    /*@ assert now_empty: rq_n == 1 ==> n->ready_head[p] == \null && n->ready_tail[p] == \null; */
    /*@ assert kept_head: rq_pos > 0 ==> n->ready_head[p] == rq_m[0] && rq_m[0]->ready_prev == \null; */
    /*@ assert kept_tail: rq_pos < rq_n - 1 ==>
            n->ready_tail[p] == rq_m[rq_n - 1] && rq_m[rq_n - 1]->ready_next == \null; */
    /*@ ghost rq_model_remove(p); */
    /* The links against the new model. */
    /*@ assert next_below: \forall integer i; 0 <= i && i + 1 < rq_pos ==> rq_m[i]->ready_next == rq_m[i + 1]; */
    /*@ assert next_at: 0 < rq_pos < rq_n ==> rq_m[rq_pos - 1]->ready_next == rq_m[rq_pos]; */
    /*@ assert next_above: \forall integer i; rq_pos <= i < rq_n - 1 ==> rq_m[i]->ready_next == rq_m[i + 1]; */
    /*@ assert prev_below: \forall integer i; 0 < i < rq_pos ==> rq_m[i]->ready_prev == rq_m[i - 1]; */
    /*@ assert prev_at: 0 < rq_pos < rq_n ==> rq_m[rq_pos]->ready_prev == rq_m[rq_pos - 1]; */
    /*@ assert prev_above: \forall integer i; rq_pos < i < rq_n ==> rq_m[i]->ready_prev == rq_m[i - 1]; */
    /*@ assert ends_empty: rq_n == 0 ==> n->ready_head[p] == \null && n->ready_tail[p] == \null; */
    /*@ assert ends_head: rq_n > 0 ==> n->ready_head[p] == rq_m[0] && rq_m[0]->ready_prev == \null; */
    /*@ assert ends_tail: rq_n > 0 ==> n->ready_tail[p] == rq_m[rq_n - 1] && rq_m[rq_n - 1]->ready_next == \null; */
    t->in_ready_queue = false;
}

/* A member's place in the model, for ready_remove's rq_pos: the caller
 * knows t is a member (its flag), not where. */
/*@ ghost
  /@ requires rq_n < RQ_MODEL_CAP && (\exists integer i; 0 <= i < rq_n && rq_m[i] == t);
     assigns rq_pos;
     ensures rq_pos < rq_n && rq_m[rq_pos] == t; @/
  void rq_find(struct tcb *t)
  {
      rq_pos = 0;
      /@ loop invariant 0 <= rq_pos < rq_n;
         loop invariant \exists integer i; rq_pos <= i < rq_n && rq_m[i] == t;
         loop assigns rq_pos;
         loop variant rq_n - rq_pos; @/
      while (rq_m[rq_pos] != t)
          rq_pos++;
  }
*/

/* A member of the well-formed list is linked in it locally, as
 * ready_remove requires: its neighbours are the members beside it (or
 * NULL at the ends) and point back at it; all of them distinct objects. */
/*@ ghost
  /@ requires rq_list(p) && rq_pos < rq_n && rq_m[rq_pos] == t;
     assigns \nothing;
     ensures queue_ends(&sched_nodes[0], p);
     ensures t->ready_prev == \null <==> sched_nodes[0].ready_head[p] == t;
     ensures t->ready_next == \null <==> sched_nodes[0].ready_tail[p] == t;
     ensures t->ready_prev != \null ==> \valid(t->ready_prev) && t->ready_prev->ready_next == t &&
             \separated(t->ready_prev, t, &sched_nodes[0]);
     ensures t->ready_next != \null ==> \valid(t->ready_next) && t->ready_next->ready_prev == t &&
             \separated(t->ready_next, t, &sched_nodes[0]);
     ensures tcb_apart(t->ready_prev, t->ready_next) &&
             tcb_apart(t->ready_prev, sched_nodes[0].ready_head[p]) &&
             tcb_apart(t->ready_prev, sched_nodes[0].ready_tail[p]) &&
             tcb_apart(t->ready_next, sched_nodes[0].ready_head[p]) &&
             tcb_apart(t->ready_next, sched_nodes[0].ready_tail[p]) &&
             tcb_apart(t, sched_nodes[0].ready_head[p]) &&
             tcb_apart(t, sched_nodes[0].ready_tail[p]); @/
  void rq_local(struct tcb *t, u32 p)
  {
      /@ assert prev_m: rq_pos > 0 ==> t->ready_prev == rq_m[rq_pos - 1]; @/
      /@ assert prev_0: rq_pos == 0 ==> t->ready_prev == \null && sched_nodes[0].ready_head[p] == t; @/
      /@ assert next_m: rq_pos + 1 < rq_n ==> t->ready_next == rq_m[rq_pos + 1]; @/
      /@ assert next_n: rq_pos + 1 == rq_n ==> t->ready_next == \null && sched_nodes[0].ready_tail[p] == t; @/
      /@ assert not_head: rq_pos > 0 ==> \base_addr(rq_m[0]) != \base_addr(t); @/
      /@ assert not_tail: rq_pos + 1 < rq_n ==> \base_addr(rq_m[rq_n - 1]) != \base_addr(t); @/
  }
*/

/* For a caller that tests the flag: when it is set, t's place (rq_find)
 * and its local links (rq_local). One unconditional ghost call, so that
 * the caller's paths are its own branches only (with a ghost `if` in
 * sched_dequeue, two bitmap postconditions timed out at 20 s). */
/*@ ghost
  /@ requires rq_list(p) && \valid_read(t) && rq_flag(t) && t->priority == p;
     assigns rq_pos;
     ensures t->in_ready_queue ==> rq_pos < rq_n && rq_m[rq_pos] == t;
     ensures t->in_ready_queue ==> queue_ends(&sched_nodes[0], p);
     ensures t->in_ready_queue ==> (t->ready_prev == \null <==> sched_nodes[0].ready_head[p] == t);
     ensures t->in_ready_queue ==> (t->ready_next == \null <==> sched_nodes[0].ready_tail[p] == t);
     ensures t->in_ready_queue ==> (t->ready_prev != \null ==> \valid(t->ready_prev) &&
             t->ready_prev->ready_next == t && \separated(t->ready_prev, t, &sched_nodes[0]));
     ensures t->in_ready_queue ==> (t->ready_next != \null ==> \valid(t->ready_next) &&
             t->ready_next->ready_prev == t && \separated(t->ready_next, t, &sched_nodes[0]));
     ensures t->in_ready_queue ==> tcb_apart(t->ready_prev, t->ready_next) &&
             tcb_apart(t->ready_prev, sched_nodes[0].ready_head[p]) &&
             tcb_apart(t->ready_prev, sched_nodes[0].ready_tail[p]) &&
             tcb_apart(t->ready_next, sched_nodes[0].ready_head[p]) &&
             tcb_apart(t->ready_next, sched_nodes[0].ready_tail[p]) &&
             tcb_apart(t, sched_nodes[0].ready_head[p]) &&
             tcb_apart(t, sched_nodes[0].ready_tail[p]); @/
  void rq_where(struct tcb *t, u32 p)
  {
      if (t->in_ready_queue) {
          rq_find(t);
          rq_local(t, p);
      }
  }
*/

/* A thread of priority p in no queue (outside the model) is neither end
 * of queue p, and the ends are other objects than it: ready_insert's
 * preconditions. */
/*@ ghost
  /@ requires rq_list(p) && rq_thread(t, p) && rq_outside(t);
     assigns \nothing;
     ensures queue_ends(&sched_nodes[0], p);
     ensures t != sched_nodes[0].ready_head[p] && t != sched_nodes[0].ready_tail[p];
     ensures tcb_apart(t, sched_nodes[0].ready_head[p]) &&
             tcb_apart(t, sched_nodes[0].ready_tail[p]) &&
             tcb_apart(sched_nodes[0].ready_head[p], sched_nodes[0].ready_tail[p]); @/
  void rq_fresh(struct tcb *t, u32 p)
  {
      /@ assert rq_n > 0 ==> \base_addr(t) != \base_addr(rq_m[0]) &&
             \base_addr(t) != \base_addr(rq_m[rq_n - 1]); @/
      /@ assert rq_n > 1 ==> \base_addr(rq_m[0]) != \base_addr(rq_m[rq_n - 1]); @/
  }
*/

/* ---- release queue ---- */

#ifdef __FRAMAC__
/* The release heap's operations as the ready-callers set takes them (make
 * prove; docs/proofs.md "Assumptions"): what they write, the assigns
 * clauses the release set proves for them (release.c) under preconditions
 * this set does not state (heap_ok, t's slot), but for one narrowing: the
 * SCs whose release_pos insertion writes are other objects than the
 * threads (rq_sc_apart), as every SC and TCB is an object of its own; the
 * typed model would otherwise let an SC's u32 field be a thread's
 * priority. A panic does not return.
 * ACSL_READY_KEPT(t): the release side left the ready queues alone (the
 * heads, tails and bitmap, t's links, flag and priority), stated in each
 * release function's own small proof so that its callers need not find
 * the frame (in park and sched_dequeue, with the bitmap in context, CVC4
 * and Z3 timed out on it at 20 s). */
/*@ predicate rq_sc_apart(struct sched_context *s, struct tcb *t) =
      \base_addr(s) != \base_addr(t) && \base_addr(s) != \base_addr(&sched_nodes[0]) &&
      \forall integer i; 0 <= i < rq_n ==> \base_addr(s) != \base_addr(rq_m[i]); */
#define ACSL_READY_KEPT(t) \
    ((\forall integer q; 0 <= q < CONFIG_NUM_PRIORITIES ==> \
          sched_nodes[0].ready_head[q] == \old(sched_nodes[0].ready_head[q]) && \
          sched_nodes[0].ready_tail[q] == \old(sched_nodes[0].ready_tail[q])) && \
     (\forall integer w; 0 <= w < PRIO_WORDS ==> sched_nodes[0].bitmap[w] == \old(sched_nodes[0].bitmap[w])) && \
     sched_nodes[0].bitmap_top == \old(sched_nodes[0].bitmap_top) && \
     (t)->priority == \old((t)->priority) && (t)->in_ready_queue == \old((t)->in_ready_queue) && \
     (t)->ready_next == \old((t)->ready_next) && (t)->ready_prev == \old((t)->ready_prev))
/* The members' fields the model reads, as before (a step of the proofs of
 * the two functions below: the members are other objects than the node). */
#define ACSL_MEMBERS_KEPT(p) \
    (\at(rq_members(p), Pre) ==> \forall integer i; 0 <= i < rq_n ==> \
         rq_m[i]->ready_next == \at(rq_m[i]->ready_next, Pre) && \
         rq_m[i]->ready_prev == \at(rq_m[i]->ready_prev, Pre) && \
         rq_m[i]->priority == \at(rq_m[i]->priority, Pre) && \
         rq_m[i]->in_ready_queue == \at(rq_m[i]->in_ready_queue, Pre))
/*@ requires \valid(t);
    assigns q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1], t->in_release_queue, t->release_deferred; */
void release_queue_remove(struct release_queue *q, struct tcb *t);
/*@ requires \valid(t);
    assigns q->next_seq, q->count, q->heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1], t->in_release_queue,
            t->release_deferred, t->release_time, t->release_seq,
            { s->release_pos | struct sched_context *s; \separated(s, q) && rq_sc_apart(s, t) }; */
void release_queue_insert(struct release_queue *q, struct tcb *t, u64 time);
/*@ assigns \nothing;
    ensures \false; */
void kernel_panic(const char *file, int line, const char *msg);
#endif

/* Ordered by the head refill's release time (release.h: a heap, O(log n)
 * per insertion, O(1) per removal, FIFO among equal times as in seL4).
 * Only reads (taken as given by the ready-callers set: refill_head is
 * refill.h's). */
//@ assigns \nothing;
static u64 release_time(struct tcb *t) { return refill_head(t->sc)->release_time; }

/*@ requires \valid_read(t);
    assigns \nothing;
    ensures \result == t->in_release_queue; */
static bool in_release_queue(const struct tcb *t) { return release_queue_holds(t); }

static bool queued(const struct tcb *t) { return t->in_ready_queue || in_release_queue(t); }

#if CONFIG_INVARIANT_CHECKS
bool sched_holds(const struct tcb *t) { return queued(t); }
#endif

/* The frame the ready-queue callers need: the release queue and t's
 * release fields, nothing of the ready queues. */
/*@ requires \valid(t) && \base_addr(t) != \base_addr(&sched_nodes[0]) && rq_outside(t) &&
             t->priority < CONFIG_NUM_PRIORITIES && \valid_read(t->sc);
    assigns sched_nodes[0].release.next_seq, sched_nodes[0].release.count,
            sched_nodes[0].release.heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1], t->in_release_queue,
            t->release_deferred, t->release_time, t->release_seq,
            { s->release_pos | struct sched_context *s;
              \separated(s, &sched_nodes[0].release) && rq_sc_apart(s, t) };
    ensures ACSL_READY_KEPT(t);
    ensures \old(rq_list(t->priority)) ==> rq_list(t->priority);
    ensures \old(rq_list(t->priority) && rq_flagged) ==> rq_flagged; */
static void release_insert(struct tcb *t)
{
    struct sched_node *n = NODE;
    /* Room: t's SC is sporadic (a round-robin head is always released),
     * each entry belongs to its own sporadic SC, and at most
     * CONFIG_MAX_SPORADIC_SCS are sporadic (sched_admit_sporadic). */
    kassert(t->sc->release_pos != 0 || n->release.count < CONFIG_MAX_SPORADIC_SCS);
    release_queue_insert(&n->release, t, release_time(t));
    //@ assert members: ACSL_MEMBERS_KEPT(t->priority);
    /*@ assert heads: t->priority == \at(t->priority, Pre) &&
            sched_nodes[0].ready_head[t->priority] == \at(sched_nodes[0].ready_head[t->priority], Pre) &&
            sched_nodes[0].ready_tail[t->priority] == \at(sched_nodes[0].ready_tail[t->priority], Pre); */
    //@ assert ends: \at(rq_list(t->priority), Pre) ==> rq_ends(t->priority);
    //@ assert links: \at(rq_list(t->priority), Pre) ==> rq_links;
    //@ assert thread: \at(rq_list(t->priority), Pre) ==> rq_members(t->priority);
    TRACE(TRACE_THROTTLE, t, 0);
}

/*@ requires \valid(t) && \base_addr(t) != \base_addr(&sched_nodes[0]) && rq_outside(t) &&
             t->priority < CONFIG_NUM_PRIORITIES;
    assigns sched_nodes[0].release.heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1], t->in_release_queue,
            t->release_deferred;
    ensures ACSL_READY_KEPT(t);
    ensures \old(rq_list(t->priority)) ==> rq_list(t->priority);
    ensures \old(rq_list(t->priority) && rq_flagged) ==> rq_flagged; */
static void release_remove(struct tcb *t)
{
    release_queue_remove(&NODE->release, t);
    //@ assert members: ACSL_MEMBERS_KEPT(t->priority);
    /*@ assert heads: t->priority == \at(t->priority, Pre) &&
            sched_nodes[0].ready_head[t->priority] == \at(sched_nodes[0].ready_head[t->priority], Pre) &&
            sched_nodes[0].ready_tail[t->priority] == \at(sched_nodes[0].ready_tail[t->priority], Pre); */
    //@ assert ends: \at(rq_list(t->priority), Pre) ==> rq_ends(t->priority);
    //@ assert links: \at(rq_list(t->priority), Pre) ==> rq_links;
    //@ assert thread: \at(rq_list(t->priority), Pre) ==> rq_members(t->priority);
}

/* The earliest queued release is due at the time stamped at this entry
 * (within the ready slack of refill_ready). */
static ALWAYS_INLINE bool release_due(const struct sched_node *n)
{
    return n->release.count != 0 && n->release.heap[0].time <= n->stamp + refill_wcet();
}

bool sched_admit_sporadic(void) { return NODE->sporadic_scs < CONFIG_MAX_SPORADIC_SCS; }

void sched_count_sporadic(struct sched_context *sc, bool was, bool is)
{
    struct sched_node *n = NODE;
    if (was && !is)
        release_queue_forget_sc(&n->release, sc);
    n->sporadic_scs += (u32)is - (u32)was;
}

#if CONFIG_INVARIANT_CHECKS
const char *sched_invariant_violation(void)
{
    struct sched_node *n = NODE;
    if (n->release.count > n->sporadic_scs || n->sporadic_scs > CONFIG_MAX_SPORADIC_SCS)
        return "release queue: more entries than sporadic SCs, or too many sporadic SCs";
    const char *why = release_queue_violation(&n->release);
    if (why)
        return why;
    for (u32 i = 0; i < n->release.count; i++) {
        const struct release_entry *e = &n->release.heap[i];
        if (!sc_waits_for_release(e->sc))
            return "release queue: a slot of an SC that is not sporadic";
        if (e->tcb && (e->tcb->in_ready_queue || !thread_is_schedulable(e->tcb)))
            return "release queue: a thread also ready, or not schedulable";
    }
    return debug_threads_violation();
}
#endif

/* Contract (make prove, set `ready-callers`): given the bitmap exact, the
 * model of t's queue a well-formed list whose members are flagged, and
 * t's flag telling whether it is a member, t leaves the ready queue if
 * its flag says it is in it, and all of that holds again (t unflagged, no
 * member). */
/*@ requires rq_thread(t, t->priority) && t->priority < CONFIG_NUM_PRIORITIES;
    requires ACSL_BITMAP_PRIOS(&sched_nodes[0]) && ACSL_BITMAP_WORDS(&sched_nodes[0]) &&
             ACSL_BITMAP_TOP_CLEAR(&sched_nodes[0]);
    requires list: rq_list(t->priority);
    requires flag: rq_flag(t) && rq_flagged;
    assigns t->ready_prev, t->ready_next, t->in_ready_queue,
            sched_nodes[0].ready_head[t->priority], sched_nodes[0].ready_tail[t->priority],
            sched_nodes[0].bitmap[t->priority / 64], sched_nodes[0].bitmap_top,
            t->ready_prev->ready_next, t->ready_next->ready_prev,
            rq_m[0 .. rq_n - 2], rq_n, rq_pos,
            sched_nodes[0].release.heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1], t->in_release_queue,
            t->release_deferred;
    ensures list: rq_list(t->priority) && rq_n == \old(rq_n) - (\old(t->in_ready_queue) ? 1 : 0);
    ensures flag: !t->in_ready_queue && rq_flag(t) && rq_flagged;
    // The bitmap per branch: stated for both paths at once, CVC4 and Z3
    // timed out (20 s) on two of the three.
    behavior queued:
      assumes t->in_ready_queue;
      ensures ACSL_BITMAP_PRIOS(&sched_nodes[0]);
      ensures ACSL_BITMAP_WORDS(&sched_nodes[0]);
      ensures ACSL_BITMAP_TOP_CLEAR(&sched_nodes[0]);
    behavior not_queued:
      assumes !t->in_ready_queue;
      ensures ACSL_BITMAP_PRIOS(&sched_nodes[0]);
      ensures ACSL_BITMAP_WORDS(&sched_nodes[0]);
      ensures ACSL_BITMAP_TOP_CLEAR(&sched_nodes[0]);
    complete behaviors;
    disjoint behaviors; */
void sched_dequeue(struct tcb *t)
{
    /* Where t is, for ready_remove, when its flag says it is queued. */
    //@ ghost rq_where(t, t->priority);
    if (t->in_ready_queue)
        ready_remove(t);
    else if (in_release_queue(t))
        release_remove(t);
    /* Unqueued or in the release queue, the bitmap words are as they were
     * (the release side's frame; the bitmap postconditions from it took
     * CVC4 16 s without this step). */
    /*@ assert kept: !\at(t->in_ready_queue, Pre) ==>
            sched_nodes[0].bitmap_top == \at(sched_nodes[0].bitmap_top, Pre) &&
            (\forall integer w; 0 <= w < PRIO_WORDS ==>
                sched_nodes[0].bitmap[w] == \at(sched_nodes[0].bitmap[w], Pre)); */
}

/* A schedulable thread that is not running and in no queue: to the tail of
 * its priority if its SC may run now, else to the release queue. */
/*@ requires rq_thread(t, t->priority) && t->priority < CONFIG_NUM_PRIORITIES && \valid_read(t->sc);
    requires ACSL_BITMAP_PRIOS(&sched_nodes[0]) && ACSL_BITMAP_WORDS(&sched_nodes[0]) &&
             ACSL_BITMAP_TOP_CLEAR(&sched_nodes[0]);
    requires list: rq_list(t->priority) && rq_n + 1 < RQ_MODEL_CAP;
    requires flag: !t->in_ready_queue && rq_outside(t) && rq_flagged;
    assigns t->ready_prev, t->ready_next, t->in_ready_queue,
            sched_nodes[0].ready_head[t->priority], sched_nodes[0].ready_tail[t->priority],
            sched_nodes[0].bitmap[t->priority / 64], sched_nodes[0].bitmap_top,
            sched_nodes[0].ready_head[t->priority]->ready_prev,
            sched_nodes[0].ready_tail[t->priority]->ready_next,
            rq_m[0 .. rq_n], rq_n,
            sched_nodes[0].release.next_seq, sched_nodes[0].release.count,
            sched_nodes[0].release.heap[0 .. CONFIG_MAX_SPORADIC_SCS - 1], t->in_release_queue,
            t->release_deferred, t->release_time, t->release_seq,
            { s->release_pos | struct sched_context *s;
              \separated(s, &sched_nodes[0].release) && rq_sc_apart(s, t) };
    ensures ACSL_BITMAP_PRIOS(&sched_nodes[0]);
    ensures ACSL_BITMAP_WORDS(&sched_nodes[0]);
    ensures ACSL_BITMAP_TOP_CLEAR(&sched_nodes[0]);
    ensures list: rq_list(t->priority) && rq_n == \old(rq_n) + (t->in_ready_queue ? 1 : 0);
    ensures flag: rq_flag(t) && rq_flagged; */
static void park(struct tcb *t)
{
    /* t, in no queue, is neither end of its own (ready_insert). */
    //@ ghost rq_fresh(t, t->priority);
    if (sc_can_run(t->sc, 0))
        ready_insert(t, false);
    else
        release_insert(t);
}

/* ---- accounting ---- */

/* The one charge of a kernel entry (kernel_exit calls it, at most once;
 * the check flavour asserts it). The entry only notices an exhausted budget
 * (and does no system call then: sched_entry_budget_exhausted goes to
 * kernel_exit, and the call is re-executed after replenishment), Yield only
 * asks for the charge, and unbinding leaves the SC current until the exit
 * charges it. Only reconfiguring or deleting the running SC settles its
 * usage on the spot, without a charge (sched_stop_charging).
 *
 * What the current SC used since it was last charged goes to its refills
 * (refill_budget_check: whole refills used go one period on, a partly used
 * head is split, an overrun delays the next refill); after a Yield the rest
 * of the head refill is given up as well (refill_yield_usage). The SC stops
 * being the current one: the exit calls refill_unblock_check when it runs
 * again. */
static void charge_current(struct sched_node *n, bool yielded)
{
    struct sched_context *sc = n->cur_sc;
#if CONFIG_INVARIANT_CHECKS
    kassert(!n->charged_this_entry); /* once per entry, by construction */
    n->charged_this_entry = true;
#endif
    if (sc && sc_configured(sc)) {
        u64 usage = yielded ? refill_yield_usage(sc, n->consumed, n->stamp) : n->consumed;
        (void)refill_budget_check(sc, usage, n->stamp);
    }
    n->consumed = 0;
    n->cur_sc = NULL;
    n->yielded = false;
}

/* New time stamp: the time since the last one was used by cur_sc. */
static ALWAYS_INLINE void update_timestamp(void)
{
    struct sched_node *n = NODE;
    u64 now = machine_time();
    u64 delta = now - n->stamp;
    n->stamp = now;
    if (n->cur_sc) {
        n->cur_sc->consumed += delta;
        n->consumed += delta;
    }
}

void sched_skip_time(u64 ticks)
{
    /* Stamps are taken at entry (and at a timer interrupt handled mid-way),
     * so the skipped time lies after the last stamp: move it on. */
    NODE->stamp += ticks;
}

void sched_note_overrun(void)
{
    /* The budget ran out (the timer, or an entry in its last MIN_BUDGET):
     * record how far past the head refill it ran; kernel_exit charges it
     * and moves the thread off the CPU. */
    struct sched_node *n = NODE;
    u64 head = refill_head(n->cur_sc)->amount;
    if (n->consumed > head && n->consumed - head > n->overrun_max)
        n->overrun_max = n->consumed - head;
}

void sched_entry_budget_exhausted(void)
{
    sched_note_overrun();
    kernel_exit(); /* the entry's work is not done: the ecall or instruction is re-executed */
}

u64 sched_stop_charging(struct sched_context *sc)
{
    struct sched_node *n = NODE;
    if (n->cur_sc != sc)
        return 0;
    u64 used = n->consumed;
    n->consumed = 0;
    n->cur_sc = NULL;
    return used;
}

void sched_yield(struct tcb *t)
{
    struct sched_node *n = NODE;
    struct sched_context *sc = t->sc;
    /* Round robin: the slice is refilled and the thread goes behind its
     * equals. Sporadic: the rest of the head refill is given up; the thread
     * waits for the next one in the release queue unless it is ready. Both
     * happen at the exit, with the entry's one charge. */
    if (sc && sc_configured(sc) && sc == n->cur_sc)
        n->yielded = true;
}

void sched_yield_to(struct tcb *target)
{
    struct tcb *cur = current_thread;
    /* Only a thread that could run now (in a ready queue) is affected. */
    if (target == cur || !target->in_ready_queue)
        return;
    ready_remove(target);
    /* At or above the caller's priority the target runs first and the
     * caller right after it (both at the heads of their queues); below it,
     * the target is merely first among its equals. */
    if (cur && target->priority >= cur->priority && !queued(cur) && thread_is_schedulable(cur) &&
        sc_can_run(cur->sc, cur->sc == NODE->cur_sc ? NODE->consumed : 0))
        ready_insert(cur, true);
    ready_insert(target, true);
}

bool sched_yield_to_runs_first(const struct tcb *target, const struct tcb *caller)
{
    return target->in_ready_queue && target->priority >= caller->priority;
}

void thread_schedule(struct tcb *t)
{
    if (t == current_thread || queued(t) || !thread_is_schedulable(t))
        return;
    /* Wake-up: a released head starts being used now. */
    if (t->sc != NODE->cur_sc)
        (void)refill_unblock_check(t->sc, NODE->stamp);
    TRACE(TRACE_WAKE, t, 0);
    park(t);
}

/* Take t out of whatever it is blocked on (seL4's cancelIPC); t is left
 * inactive. */
void thread_cancel_blocking(struct tcb *t)
{
    /* Cancelling IPC cancels any fault (seL4 MCS cancelIPC), also the one
     * of a thread left Inactive while sending it: a resumed thread must
     * not send its next message as a fault. */
    t->fault.type = FAULT_NULL;
    switch (t->state) {
    case THREAD_BLOCKED_ON_NOTIFICATION:
        notification_cancel_signal(t);
        break;
    case THREAD_BLOCKED_ON_SEND:
    case THREAD_BLOCKED_ON_RECEIVE:
        endpoint_cancel_ipc(t);
        break;
    case THREAD_BLOCKED_ON_REPLY:
        reply_remove_tcb(t);
        break;
    default:
        break;
    }
}

void thread_suspend(struct tcb *t)
{
    thread_cancel_blocking(t);
    sched_context_cancel_yield_to(t); /* as seL4's suspend: no answer */
    /* A running thread that is suspended resumes after its ecall (or at the
     * instruction it was interrupted at) later: FaultIP := NextIP. */
    if (t->state == THREAD_RUNNING)
        t->ctx.fault_ip = t->ctx.pc;
    /* A call stopped between its phases is re-executed whole once resumed,
     * as seL4 restarts a thread suspended in its receive phase. */
    t->send_done = false;
    thread_set_state(t, THREAD_INACTIVE);
}

void thread_resume(struct tcb *t)
{
    if (t->state != THREAD_INACTIVE && !thread_is_blocked(t))
        return;
    thread_cancel_blocking(t);
    /* Restart: on its next exit to user mode it continues at FaultIP, which
     * re-executes an interrupted system call (kernel_exit sets NextIP). A
     * thread whose head refill is not ready waits in the release queue. */
    t->state = THREAD_RESTART;
    thread_schedule(t);
}

void thread_set_priority(struct tcb *t, u32 prio)
{
    if (t->in_ready_queue) {
        ready_remove(t);
        t->priority = prio;
        ready_insert(t, false);
    } else {
        /* The release queue is ordered by time, not priority; the running
         * thread is compared with the ready ones at exit. */
        t->priority = prio;
        /* Wait queues are ordered by priority (seL4's reorderNTFN). */
        if (t->state == THREAD_BLOCKED_ON_NOTIFICATION)
            notification_reorder(t);
        else if (t->state == THREAD_BLOCKED_ON_SEND || t->state == THREAD_BLOCKED_ON_RECEIVE)
            endpoint_reorder(t);
    }
}

void thread_set_flags(struct tcb *t, word_t flags)
{
    if ((flags & TCB_FLAG_FPU_DISABLED) && t == fpu_owner && fpu_loaded) {
        /* The FP registers hold t's live state: keep it in the TCB so that
         * re-enabling finds it intact. The kernel never uses FP itself. */
        csr_set(sstatus, SSTATUS_FS_INITIAL);
        fpu_save(&t->ctx);
        csr_clear(sstatus, SSTATUS_FS);
        fpu_loaded = false;
    }
    t->flags = flags;
}

void thread_forget(struct tcb *t)
{
    sched_dequeue(t);
    sched_context_cancel_yield_to(t);
    if (fpu_owner == t) {
        fpu_owner = NULL; /* its state dies with it; nothing to save */
        fpu_loaded = false;
    }
    if (current_thread == t)
        current_thread = NULL;
}

/* Threads whose head refill is now ready go to the tail of their priority,
 * earliest release first. A preemption point after each due entry: with an
 * interrupt pending the rest stay queued, and since the earliest of them is
 * due the exit arms the timer for a time already passed, so the next entry
 * (the pending interrupt, or that timer interrupt) goes on releasing. A
 * stale entry (its thread was taken out, release.h) just leaves the heap. A
 * thread whose SC's head moved after it was queued (the key is read at
 * insertion) goes back with its new release time, re-keyed in its slot. A
 * deferred first entry (release.h) first gets its thread's own key, one
 * sift per loop step like the others. Out of line: the WCET
 * annotation bounds its loop by function name. */
static NOINLINE void release_ready_threads(void)
{
    struct sched_node *n = NODE;
    u32 k = 0;
    while (k < CONFIG_MAX_SPORADIC_SCS && release_due(n)) {
        struct tcb *t = release_queue_first(&n->release);
        if (t && t->release_deferred) {
            release_queue_settle_first(&n->release);
        } else if (t && !refill_ready(t->sc, n->stamp)) {
            /* Back with its new release time: re-keyed where it is (one
             * sift; taking it out and queueing it again were two). */
            TRACE(TRACE_RELEASE, t, 0);
            release_queue_requeue_first(&n->release, release_time(t));
            TRACE(TRACE_THROTTLE, t, 0);
        } else {
            release_queue_take_first(&n->release);
            if (t) {
                TRACE(TRACE_RELEASE, t, 0);
                ready_insert(t, false);
            }
        }
        k++;
        if (preemption_point()) {
            if (CONFIG_DEBUG_BUILD && release_due(n))
                debug_counters[KAIROS_COUNTER_RELEASE_STOPPED]++;
            break;
        }
    }
    if (CONFIG_DEBUG_BUILD && k > debug_counters[KAIROS_COUNTER_RELEASE_BATCH_MAX])
        debug_counters[KAIROS_COUNTER_RELEASE_BATCH_MAX] = k;
}

/* After the charge: a thread that yielded goes behind its equals (or to
 * the release queue); one whose budget ran out goes to its timeout handler
 * if it has one, else the same way. */
static void leave_cpu(struct tcb *cur, bool yielded)
{
    if (!yielded && timeout_fault_due(cur))
        handle_timeout_fault(cur); /* to its timeout handler (fault.c) */
    else
        park(cur);
}

/* The thread to run, or NULL. The current thread `cur` (if not NULL: it
 * may and can still run, in no queue) keeps the CPU unless a strictly
 * higher priority is ready (equal priorities rotate only on Yield or budget
 * expiry); if preempted it goes to the head of its queue, keeping its
 * place. */
static ALWAYS_INLINE struct tcb *choose_thread(struct tcb *cur)
{
    struct sched_node *n = NODE;
    if (cur) {
        int best = highest_ready_priority();
        if (best < 0 || (u32)best <= cur->priority)
            return cur;
        ready_insert(cur, true);
    }
    int best = highest_ready_priority();
    if (best < 0)
        return NULL;
    struct tcb *next = n->ready_head[best];
    ready_remove(next);
    return next;
}

/* The time of the next event: the running SC's budget expiry or the
 * earliest release, whichever is first. */
static ALWAYS_INLINE u64 next_timeout(const struct sched_node *n)
{
    u64 when = NO_TIMEOUT;
    if (n->cur_sc) {
        /* consumed < head amount: the SC could run (sc_can_run). */
        when = n->stamp + (refill_head(n->cur_sc)->amount - n->consumed);
    }
    if (n->release.count != 0 && n->release.heap[0].time < when)
        when = n->release.heap[0].time;
    return when;
}

static void program_timer(struct sched_node *n, u64 when)
{
    u64 i0 = read_instret();
    machine_set_timeout(when);
    n->reprogram_instret = read_instret() - i0;
    n->n_reprograms++;
    n->armed = when;
}

/* Program the timer for the next event. Only a changed time touches the
 * hardware (an entry that changed nothing about the schedule leaves it). */
static ALWAYS_INLINE void set_next_timeout(void)
{
    struct sched_node *n = NODE;
    u64 when = next_timeout(n);
    if (when != n->armed)
        program_timer(n, when);
}

/* Lazy FP switching (sched.h): t, whose FPU is enabled, executed an FP
 * instruction with sstatus.FS off. Its state goes into the registers (the
 * previous owner's is saved first if it changed it) and the instruction is
 * re-executed. An instruction that is illegal for another reason traps again
 * with FS on and becomes a user exception. */
bool fpu_take(struct tcb *t)
{
    if ((t->flags & TCB_FLAG_FPU_DISABLED) || (t->ctx.sstatus & SSTATUS_FS) != SSTATUS_FS_OFF ||
        (t == fpu_owner && fpu_loaded))
        return false;
    csr_set(sstatus, SSTATUS_FS_INITIAL); /* FS must be on to move FP state */
    if (fpu_owner && fpu_loaded && (fpu_owner->ctx.sstatus & SSTATUS_FS) == SSTATUS_FS_DIRTY)
        fpu_save(&fpu_owner->ctx);
    fpu_restore(&t->ctx); /* a new thread's zeroed TCB gives f0-f31 = 0, fcsr = 0 */
    csr_clear(sstatus, SSTATUS_FS);
    fpu_owner = t;
    fpu_loaded = true;
    t->ctx.sstatus = (t->ctx.sstatus & ~SSTATUS_FS) | SSTATUS_FS_CLEAN;
    return true;
}


void handle_pending_interrupts(void)
{
    /* Stamp first: a thread the interrupt wakes (refill_unblock_check) must
     * see the current time, also after an idle wait or in the middle of a
     * long operation (which is charged up to here). */
    update_timestamp();
    word_t handled = machine_handle_pending_interrupts();
    TRACE(TRACE_IRQ, current_thread, handled);
    if (handled & MACHINE_IRQ_TIMER)
        NODE->armed = NO_TIMEOUT; /* the machine disarmed the timer */
}

u64 sched_debug_counter(word_t id)
{
    struct sched_node *n = NODE;
    switch (id) {
    case KAIROS_COUNTER_TIMER_REPROGRAMS: return n->n_reprograms;
    case KAIROS_COUNTER_TIMER_REPROGRAM_INSTRET: return n->reprogram_instret;
    case KAIROS_COUNTER_SC_SWITCHES: return n->n_sc_switches;
    case KAIROS_COUNTER_SC_SWITCH_INSTRET: return n->sc_switch_instret;
    case KAIROS_COUNTER_SC_SWITCH_MAX_INSTRET: return n->sc_switch_max;
    case KAIROS_COUNTER_SSTC: return machine_has_sstc();
    case KAIROS_COUNTER_OVERRUN_MAX_TICKS: return n->overrun_max;
    case KAIROS_COUNTER_THREADS:
    case KAIROS_COUNTER_THREADS_MAX: return tcb_debug_counter(id);
    default: return 0;
    }
}

/* The idle thread (seL4's): a TCB of the kernel's own, in no queue and
 * with no SC, whose context waits for interrupts in supervisor mode with
 * interrupts enabled (machine_init_idle_context). kernel_exit switches to
 * it when nothing can run, so no kernel path contains a wait: the wait is
 * outside the kernel, and an interrupt is a kernel entry like any other.
 * While it runs, current_thread is NULL (no thread of the system runs) and
 * no SC is charged. */
static struct tcb idle_thread;

void thread_init_idle(void)
{
    idle_thread.state = THREAD_IDLE;
    machine_init_idle_context(&idle_thread.ctx);
    thread_set_name(&idle_thread, "idle", 4);
}

/* Nothing can run: leave the kernel into the idle thread, with the timer
 * armed for the earliest release. Idle time is charged to no context
 * (cur_sc is NULL: kernel_exit charged it before coming here). It runs on
 * the kernel's own address space (its VSpace slot is empty), so the one of
 * a thread deleted meanwhile is never in use. Every wait starts the loop
 * afresh. */
static NORETURN NOINLINE void switch_to_idle(void)
{
    struct tcb *idle = &idle_thread;
    if (current_thread != NULL)
        TRACE(TRACE_SWITCH, NULL, current_thread->state);
    current_thread = NULL;
    set_next_timeout();
    thread_activate_vspace(idle);
    machine_init_idle_context(&idle->ctx);
    restore_user_context(&idle->ctx);
}

/* SC switch, after the outgoing SC was charged: the incoming one starts
 * being used now (a released head moves up to now and absorbs refills due
 * before it runs out). `since`: where the switch began (instret), so that
 * the measurement covers the charge and the start together. */
static void start_sc(struct sched_node *n, struct sched_context *sc, u64 since)
{
    (void)refill_unblock_check(sc, n->stamp);
    n->cur_sc = sc;
    u64 cost = read_instret() - since;
    n->sc_switch_instret = cost;
    if (cost > n->sc_switch_max)
        n->sc_switch_max = cost;
    n->n_sc_switches++;
}

/* Leave the kernel: pick the thread to run, charge and arm the timer for
 * its SC, and restore it. Written for the common case of a system call
 * after which the caller simply continues: then the release queue has
 * nothing due, the same SC runs on, the timer keeps its time and the
 * address space stays, and each of those costs one inline test.
 *
 * The current SC is charged here and nowhere else, at most once: when its
 * thread must leave the CPU for lack of budget (or yielded), before that
 * thread is queued again by its new refills; otherwise when the chosen
 * thread runs on another SC (or none). */
void kernel_exit(void)
{
    struct sched_node *n = NODE;
    if (unlikely(n->stamp == 0)) /* the exit that ends boot: time starts now */
        n->stamp = machine_time();
    if (release_due(n))
        release_ready_threads();
    /* The current thread is a candidate if it may run and is in no queue;
     * it leaves the CPU if its SC cannot run now (budget used up, or an SC
     * changed during this entry) or it yielded. */
    struct tcb *cur = current_thread;
    if (cur && (queued(cur) || !thread_is_schedulable(cur)))
        cur = NULL;
    bool yielded = n->yielded;
    bool leaves = cur && (yielded || !sc_can_run(cur->sc, cur->sc == n->cur_sc ? n->consumed : 0));
    /* Two branches, each with its own choice of thread: no path (the WCET
     * analysis's included) both keeps cur as a candidate and moves it off. */
    struct tcb *next;
    if (unlikely(leaves)) {
        u64 since = read_instret();
        charge_current(n, yielded); /* the entry's only charge */
        leave_cpu(cur, yielded);
        next = choose_thread(NULL);
        if (likely(next))
            start_sc(n, next->sc, since);
    } else {
        next = choose_thread(cur);
        if ((next ? next->sc : NULL) != n->cur_sc) {
            u64 since = read_instret();
            charge_current(n, yielded); /* the entry's only charge */
            if (likely(next))
                start_sc(n, next->sc, since);
        }
    }
    if (unlikely(!next))
        switch_to_idle();
    set_next_timeout();

    if (unlikely(next->yield_to != NULL))
        sched_context_complete_yield_to(next); /* it yielded; now it runs again */
    word_t fs = fpu_status_for(next);
    if (next != current_thread)
        TRACE(TRACE_SWITCH, next, current_thread ? current_thread->state : 0xff);
    current_thread = next;
    thread_activate_vspace(next);
    if (next->state == THREAD_RESTART) {
        /* seL4's activateThread: a restarted thread continues at FaultIP. */
        next->ctx.pc = next->ctx.fault_ip;
        next->state = THREAD_RUNNING;
    }
    word_t s = next->ctx.sstatus;
    s &= ~(SSTATUS_SPP | SSTATUS_SIE | SSTATUS_FS);
    s |= SSTATUS_SPIE | fs;
    next->ctx.sstatus = s;
    restore_user_context(&next->ctx);
}

#if CONFIG_DEBUG_BUILD
static struct tcb *debug_threads;

void debug_register_thread(struct tcb *t)
{
    t->debug_prev = NULL;
    t->debug_next = debug_threads;
    if (debug_threads)
        debug_threads->debug_prev = t;
    debug_threads = t;
}

void debug_unregister_thread(struct tcb *t)
{
    if (t->debug_prev)
        t->debug_prev->debug_next = t->debug_next;
    else if (debug_threads == t)
        debug_threads = t->debug_next;
    if (t->debug_next)
        t->debug_next->debug_prev = t->debug_prev;
    t->debug_next = t->debug_prev = NULL;
}

#if CONFIG_INVARIANT_CHECKS
/* The thread count (tcb.c) is the number of TCBs on the debug list, which
 * holds every TCB from its creation to its finalisation, and within the
 * limit. The walk stops one past the limit. */
const char *debug_threads_violation(void)
{
    word_t n = 0;
    for (const struct tcb *t = debug_threads; t && n <= CONFIG_MAX_THREADS; t = t->debug_next)
        n++;
    if (n > CONFIG_MAX_THREADS)
        return "more than CONFIG_MAX_THREADS threads";
    if (n != tcb_debug_counter(KAIROS_COUNTER_THREADS))
        return "thread count differs from the TCBs in existence";
    return NULL;
}
#endif

static const char *state_name(enum thread_state s)
{
    switch (s) {
    case THREAD_INACTIVE: return "inactive";
    case THREAD_RUNNING: return "running";
    case THREAD_RESTART: return "restart";
    case THREAD_BLOCKED_ON_RECEIVE: return "blocked on recv";
    case THREAD_BLOCKED_ON_SEND: return "blocked on send";
    case THREAD_BLOCKED_ON_REPLY: return "blocked on reply";
    case THREAD_BLOCKED_ON_NOTIFICATION: return "blocked on ntfn";
    case THREAD_IDLE: return "idle";
    }
    return "?";
}

void debug_dump_scheduler(void)
{
    kprintf("Dumping all tcbs!\nName                                    State           IP                  Prio\n");
    kprintf("-------------------------------------------------------------------------------\n");
    /* Bounded by the number of TCBs in existence, at most CONFIG_MAX_THREADS. */
    for (struct tcb *t = debug_threads; t; t = t->debug_next)
        kprintf("%s  %s  %p  %u%s\n", t->name, state_name(t->state), (void *)t->ctx.pc, t->priority,
                t == current_thread ? "  (current)" : "");
}

const char *thread_name(const struct tcb *t) { return t->name[0] ? t->name : "(unnamed)"; }

void debug_dump_thread_names(void)
{
    for (struct tcb *t = debug_threads; t; t = t->debug_next)
        kprintf("ktrace-thread: %lx %s\n", (unsigned long)(word_t)t, thread_name(t));
}

void thread_set_name(struct tcb *t, const char *name, word_t max_len)
{
    word_t i = 0;
    for (; i + 1 < sizeof(t->name) && i < max_len && name[i]; i++)
        t->name[i] = name[i];
    t->name[i] = '\0';
}
#else
void debug_register_thread(struct tcb *t) { (void)t; }
void debug_unregister_thread(struct tcb *t) { (void)t; }
void debug_dump_scheduler(void) {}
const char *thread_name(const struct tcb *t) { (void)t; return ""; }
void thread_set_name(struct tcb *t, const char *name, word_t max_len) { (void)t; (void)name; (void)max_len; }
#endif
