/* Synchronous IPC: endpoints (kernel/object/endpoint.c) and reply objects
 * (kernel/object/reply.c), with seL4 MCS semantics (the seL4 reference manual, "IPC"; Lyons et al.,
 * EuroSys 2018; docs/ipc.md):
 *  - An endpoint queues senders or receivers, by priority, FIFO among
 *    equals (queue.h). A send meets the first receiver, or blocks (Send,
 *    Call) or is dropped (NBSend, send phases); a receive takes the first
 *    sender, or blocks (Recv, Wait) or returns badge 0 (NBRecv, NBWait).
 *  - Call (and a fault message) to a receiver that gave a reply object,
 *    on a cap with Grant or GrantReply, blocks the caller on that reply
 *    object; a receiver without an SC is lent the caller's (donation) and
 *    the reply gives it back. Otherwise the caller becomes inactive.
 *  - A reply is Send/NBSend (or a send phase) on the reply cap; it reaches
 *    only a caller waiting on that reply object. */
#ifndef KAIROS_ENDPOINT_H
#define KAIROS_ENDPOINT_H

#include <arch/memory.h>
#include <config.h>
#include <object.h>

static inline struct endpoint *endpoint_from_cap(cap_t c) { return (struct endpoint *)paddr_to_kptr(cap_obj(c)); }
static inline struct reply *reply_from_cap(cap_t c) { return (struct reply *)paddr_to_kptr(cap_obj(c)); }
static inline bool reply_cap_can_grant(cap_t c) { return cap_field_a(c) & 1; }

/* The send side for thread t (running, or raising a fault) on endpoint cap
 * c (which has Write): seL4's sendIPC. call: a reply is wanted; can_donate:
 * t's SC may go to a receiver without one (Call, NBSendRecv, NBSendWait,
 * fault messages). Returns true if t's SC went with a non-call message to
 * a passive receiver (t then has none). */
bool endpoint_send(struct tcb *t, cap_t c, bool blocking, bool call, bool can_donate);
/* Send t's fault (t->fault, not FAULT_NULL) to the handler endpoint cap c:
 * blocking, like a Call; the receiver gets the fault message directly
 * (fault_transfer), the normal-message path is not involved. can_donate:
 * a passive handler may run on t's SC (not for timeout faults). */
void endpoint_send_fault(struct tcb *t, cap_t c, bool can_donate);
/* The same for t's timeout fault (handle_timeout_fault), which never
 * donates: the message through timeout_fault_transfer. */
void endpoint_send_timeout_fault(struct tcb *t, cap_t c);
/* The receive side (seL4's receiveIPC) for running thread t on endpoint
 * cap c (which has Read), with reply object r (NULL for Wait/NBWait). */
void endpoint_receive(struct tcb *t, cap_t c, struct reply *r, bool blocking);
/* t is blocked on send or receive: take it out of its endpoint (seL4's
 * cancelIPC for those states); t becomes inactive. */
void endpoint_cancel_ipc(struct tcb *t);
/* t, blocked on an endpoint, changed priority: re-queue it. */
void endpoint_reorder(struct tcb *t);
/* The last cap to ep is going: every queued thread restarts (re-executes
 * its system call), or becomes inactive if it was sending a fault. Returns
 * false if it stopped at a preemption point with threads still queued (the
 * delete is re-executed and continues). */
bool endpoint_finalise(struct endpoint *ep);
/* CNode_CancelBadgedSends (badge != 0): queued senders with that badge
 * restart. Returns true if it stopped at a pending interrupt (the
 * invocation is re-executed; what was done stays done). */
bool endpoint_cancel_badged_sends(struct endpoint *ep, word_t badge);
/* Message transfer from sender to receiver: the sender's message (or its
 * fault) with `badge` in the receiver's a0. ep: the endpoint it went
 * through (NULL for a reply), for unwrapping caps to it. */
void do_ipc_transfer(struct tcb *sender, struct endpoint *ep, word_t badge, bool grant, struct tcb *receiver);

#if CONFIG_INVARIANT_CHECKS
/* Check flavour: what is wrong with the IPC state c's object is in, or NULL. */
const char *ipc_invariant_violation(cap_t c);
#endif

/* ---- reply objects (reply.c) ---- */

/* Push r on sc's call stack (sc->reply is the newest call's reply, whose
 * head_sc is sc): the reply that will return sc. reply_push and the
 * fastpath's Call both do it. */
static inline void reply_stack_push(struct sched_context *sc, struct reply *r)
{
    struct reply *old = (struct reply *)sc->reply;
    r->prev = old;
    r->next = NULL;
    if (old) {
        old->next = r;
        old->head_sc = NULL;
    }
    r->head_sc = sc;
    sc->reply = r;
}
/* caller blocks on r for a reply from callee; with can_donate, a callee
 * without an SC is lent caller's, recorded on the SC's call stack. */
void reply_push(struct tcb *caller, struct tcb *callee, struct reply *r, bool can_donate);
/* Detach r from caller (waiting on it): the call stack closes over r; if r
 * was its head, the SC goes back to caller (when caller has none). caller
 * becomes inactive. */
void reply_remove(struct reply *r, struct tcb *caller);
/* Cancel t's wait on its reply object (seL4's reply_remove_tcb: the stack
 * is cut at the reply; the SC stays where it is); t becomes inactive. */
void reply_remove_tcb(struct tcb *t);
/* r stops referring to t (and t to r); t becomes inactive. */
void reply_unlink(struct reply *r, struct tcb *t);
/* A reply from `replier` through r (grant: the reply cap's Grant): reaches
 * the caller waiting on r, if any, else does nothing. */
void do_reply_transfer(struct tcb *replier, struct reply *r, bool grant);
/* The last cap to r is going (seL4's finaliseCap for a reply). */
void reply_finalise(struct reply *r);
/* The SC is deleted or reconfigured away: forget its call stack. */
void reply_clear_sc_stack(struct sched_context *sc);
/* Move sc to thread `to` (which has none); its previous thread, if any,
 * loses it. The caller makes `to` runnable and schedules it as needed. */
void sched_context_donate(struct sched_context *sc, struct tcb *to);

#endif
