/* Notifications (notification.h): signal, wait, poll, binding, cancellation.
 * Follows seL4's src/object/notification.c (MCS) state by state; every
 * function is O(1) except queue insertion (queue.h) and the restart of all
 * waiters when the notification is deleted (notification_finalise), both
 * bounded by the number of threads waiting. */
#include <arch/context.h>
#include <kernel.h>
#include <notification.h>
#include <preemption.h>
#include <queue.h>
#include <schedcontext.h>
#include <thread.h>

/* seL4's maybeDonateSchedContext: a thread without a context that the
 * notification wakes runs on the notification's context, if no thread
 * has it (a passive thread woken by its bound notification, or a passive
 * waiter). Only the binding: the caller makes the thread runnable and
 * schedules it once (thread_schedule does seL4's refill_unblock_check), or
 * it is the receiving thread itself, which runs on. */
static void maybe_donate_sc(struct tcb *t, struct notification *n)
{
    struct sched_context *sc = n->sc;
    if (t->sc || !sc || sc->tcb)
        return;
    sched_context_link_tcb(sc, t);
}

void notification_maybe_return_sc(struct notification *n, struct tcb *t)
{
    /* seL4's maybeReturnSchedContext: the context stays bound to the
     * notification, the thread becomes passive again. If t is current, the
     * scheduler picks another thread at kernel exit. */
    if (n->sc && n->sc == t->sc)
        sched_context_unbind_tcb(n->sc);
}

/* Make a blocked thread runnable with the badge in a0: it continues after
 * its ecall (NextIP), like a receive that found the word. */
static void wake(struct tcb *t, struct notification *n, word_t badge)
{
    thread_set_state(t, THREAD_RUNNING);
    t->ctx.x[REG_A0] = badge;
    maybe_donate_sc(t, n);
    thread_schedule(t); /* the only one of this wake-up; a higher priority than the caller's runs first */
}

void notification_signal(struct notification *n, word_t badge)
{
    switch (n->state) {
    case NTFN_IDLE: {
        struct tcb *t = n->bound_tcb;
        /* A bound thread is woken only from an endpoint receive (it may also
         * wait on n itself, which is the NTFN_WAITING case); a thread in a
         * Call (blocked on reply) or waiting on another notification is not
         * interrupted, and the signal stays pending. */
        if (t && t->state == THREAD_BLOCKED_ON_RECEIVE) {
            thread_cancel_blocking(t); /* out of the endpoint queue (IPC work) */
            wake(t, n, badge);
        } else {
            n->state = NTFN_ACTIVE;
            n->word = badge;
        }
        return;
    }
    case NTFN_WAITING: {
        struct tcb *t = tqueue_pop(&n->queue);
        kassert(t != NULL);
        if (tqueue_empty(&n->queue))
            n->state = NTFN_IDLE;
        t->blocking_object = NULL;
        wake(t, n, badge);
        return;
    }
    case NTFN_ACTIVE:
        n->word |= badge;
        return;
    }
}

void notification_receive(struct tcb *t, struct notification *n, bool blocking)
{
    if (n->state == NTFN_ACTIVE) {
        notification_complete_signal(n, t);
        return;
    }
    if (!blocking) {
        t->ctx.x[REG_A0] = 0; /* seL4's doNBRecvFailedTransfer: badge 0, nothing else */
        return;
    }
    /* Block: a0 and the other registers stay as they are, so a thread whose
     * wait is cancelled (notification deleted, Resume) re-executes the same
     * system call (seL4's Restart state). */
    t->blocking_object = n;
    thread_set_state_unqueued(t, THREAD_BLOCKED_ON_NOTIFICATION); /* the current thread */
    tqueue_insert(&n->queue, t);
    n->state = NTFN_WAITING;
    notification_maybe_return_sc(n, t);
}

void notification_complete_signal(struct notification *n, struct tcb *t)
{
    t->ctx.x[REG_A0] = n->word;
    n->word = 0;
    n->state = NTFN_IDLE;
    maybe_donate_sc(t, n);
}

void notification_cancel_signal(struct tcb *t)
{
    struct notification *n = (struct notification *)t->blocking_object;
    tqueue_remove(&n->queue, t);
    if (tqueue_empty(&n->queue))
        n->state = NTFN_IDLE;
    t->blocking_object = NULL;
    thread_set_state_unqueued(t, THREAD_INACTIVE); /* it was blocked on n */
}

void notification_reorder(struct tcb *t)
{
    tqueue_reorder(&((struct notification *)t->blocking_object)->queue, t);
}

/* seL4's cancelAllSignals: every waiter restarts (re-executes its Wait/Recv,
 * which then faults or finds another object in the slot). Unlike seL4 it
 * is preemptible, one waiter per step (waking one can cost a refill merge
 * and a release-queue walk): finalisation then reports itself preempted,
 * the cap stays, and the re-executed delete resumes with the waiters left.
 * Returns false if a pending interrupt stopped it. */
static bool cancel_all_signals(struct notification *n)
{
    if (n->state != NTFN_WAITING)
        return true;
    /* One waiter at a time from the head, each followed by a preemption
     * point (as endpoint_finalise): stopped early, the notification still
     * has its shorter queue and the re-executed delete goes on. */
    for (;;) {
        struct tcb *t = n->queue.head;
        n->queue.head = t->queue_next;
        if (t->queue_next) {
            t->queue_next->queue_prev = NULL;
        } else {
            n->queue.tail = NULL;
            n->state = NTFN_IDLE;
        }
        t->queue_next = t->queue_prev = NULL;
        t->blocking_object = NULL;
        thread_set_state(t, THREAD_RESTART);
        thread_schedule(t);
        /* A pending interrupt stops the operation even when this was the
         * last waiter: the re-executed delete then finds the notification
         * idle and completes. Going on to complete it here would put the
         * rest of the invocation (a TCB configure's later steps, say)
         * between the interrupt and its handler. */
        if (preemption_point())
            return false;
        if (!n->queue.head)
            return true;
    }
}

void notification_bind_tcb(struct notification *n, struct tcb *t)
{
    n->bound_tcb = t;
    t->bound_notification = n;
}

void notification_unbind_tcb(struct tcb *t)
{
    struct notification *n = t->bound_notification;
    if (!n)
        return;
    n->bound_tcb = NULL;
    t->bound_notification = NULL;
}

bool notification_finalise(struct notification *n)
{
    if (n->sc)
        sched_context_unbind_notification(n->sc);
    if (n->bound_tcb)
        notification_unbind_tcb(n->bound_tcb);
    return cancel_all_signals(n);
}
