/* Notifications: a word of badges and a queue of waiting threads
 * (kernel/object/notification.c). seL4 MCS semantics (seL4's
 * src/object/notification.c; Lyons' thesis, 2018, ch. 5 and 7):
 *  - Signal ORs the cap's badge into the word, or hands it to the waiter of
 *    highest priority (FIFO among equals), or to the bound thread if it is
 *    blocked in an endpoint receive; signalling never blocks.
 *  - Wait/Recv returns the word in a0 and clears it, or blocks; NBWait/NBRecv
 *    (Poll) returns the word, or 0 if nothing is pending. Nothing but a0 is
 *    ever written.
 *  - A thread without a scheduling context that a signal wakes takes the
 *    notification's context (SchedContext_Bind on the notification) if that
 *    context is free, and gives it back when it blocks on the notification
 *    again: a passive thread woken by its bound notification runs on the
 *    notification's time.
 *  - Deleting the notification restarts its waiters (they re-execute their
 *    system call); suspending a waiter takes it out of the queue. */
#ifndef KAIROS_NOTIFICATION_H
#define KAIROS_NOTIFICATION_H

#include <arch/memory.h>
#include <object.h>

static inline struct notification *notification_from_cap(cap_t c)
{
    return (struct notification *)paddr_to_kptr(cap_obj(c));
}

/* Signal n with a badge (a notification cap's badge, or an IRQ's). */
void notification_signal(struct notification *n, word_t badge);
/* The receive side for thread t (which is running, in a system call): the
 * caller has checked the cap (Read right; n unbound or bound to t). */
void notification_receive(struct tcb *t, struct notification *n, bool blocking);
/* t is blocked on a notification: take it out of the queue; it becomes
 * inactive (seL4's cancelSignal; the suspend and resume paths call this). */
void notification_cancel_signal(struct tcb *t);
/* t, blocked on a notification, has a new priority: re-queue it. */
void notification_reorder(struct tcb *t);
/* The last cap to n is going: unbind its scheduling context and thread and
 * restart every waiter (seL4: schedContext_unbindNtfn, unbindMaybeNotification,
 * cancelAllSignals). */
bool notification_finalise(struct notification *n); /* false: preempted, as endpoint_finalise */

/* TCB_BindNotification / UnbindNotification (after their checks). */
void notification_bind_tcb(struct notification *n, struct tcb *t);
void notification_unbind_tcb(struct tcb *t);

/* For the endpoint receive path (IPC work): a receive by a thread whose bound
 * notification is active returns the word instead of a message (seL4's
 * completeSignal), and a thread blocking in a receive while it runs on its
 * bound notification's context gives the context back. */
static inline bool notification_is_active(const struct notification *n) { return n->state == NTFN_ACTIVE; }
void notification_complete_signal(struct notification *n, struct tcb *t);
void notification_maybe_return_sc(struct notification *n, struct tcb *t);

#endif
