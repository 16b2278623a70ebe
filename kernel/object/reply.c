/* Reply objects and scheduling-context donation (endpoint.h). Follows
 * seL4's src/object/reply.c and doReplyTransfer (MCS). Every function is
 * O(1): the call stack is a doubly linked list and only its ends or one
 * element are touched. */
#include <arch/context.h>
#include <endpoint.h>
#include <fault.h>
#include <kernel.h>
#include <schedcontext.h>
#include <thread.h>

void sched_context_donate(struct sched_context *sc, struct tcb *to)
{
    /* seL4's schedContext_donate. The SC keeps being charged if it is the
     * running one: the time is the same budget whoever uses it, so the
     * scheduler's current SC does not change (no SC switch). */
    struct tcb *from = sc->tcb;
    if (from) {
        sched_dequeue(from);
        from->sc = NULL;
    }
    sc->tcb = to;
    to->sc = sc;
}

void reply_unlink(struct reply *r, struct tcb *t)
{
    r->tcb = NULL;
    t->reply = NULL;
    /* t holds r for a receive or waits on it for a reply: blocked. */
    thread_set_state_unqueued(t, THREAD_INACTIVE);
}

void reply_push(struct tcb *caller, struct tcb *callee, struct reply *r, bool can_donate)
{
    struct sched_context *sc = caller->sc;
    r->tcb = caller;
    caller->reply = r;
    /* The caller is the current thread, a faulting one or a sender taken
     * from an endpoint's queue: in no scheduler queue (thread.h). */
    thread_set_state_unqueued(caller, THREAD_BLOCKED_ON_REPLY);
    if (sc && can_donate && !callee->sc) {
        reply_stack_push(sc, r);
        /* sched_context_donate without its dequeue: the SC's thread is the
         * caller, in no queue. */
#if CONFIG_INVARIANT_CHECKS
        kassert(sc->tcb == caller);
#endif
        caller->sc = NULL;
        sc->tcb = callee;
        callee->sc = sc;
    }
}

void reply_remove(struct reply *r, struct tcb *caller)
{
    struct sched_context *sc = r->head_sc;
    if (sc) {
        /* The newest call on the stack: pop it and return the SC. */
        sc->reply = r->prev;
        if (r->prev) {
            r->prev->next = NULL;
            r->prev->head_sc = sc;
        }
        if (!caller->sc)
            sched_context_donate(sc, caller);
    } else {
        /* A reply in the middle (or on no stack): close the stack over it. */
        if (r->next)
            r->next->prev = r->prev;
        if (r->prev)
            r->prev->next = r->next;
    }
    r->prev = r->next = NULL;
    r->head_sc = NULL;
    reply_unlink(r, caller);
}

void reply_remove_tcb(struct tcb *t)
{
    struct reply *r = t->reply;
    /* Cut the stack at r: the SC stays with whoever has it now. */
    if (r->head_sc)
        r->head_sc->reply = NULL;
    else if (r->next)
        r->next->prev = NULL;
    if (r->prev) {
        r->prev->next = NULL;
        r->prev->head_sc = NULL;
    }
    r->prev = r->next = NULL;
    r->head_sc = NULL;
    t->fault.type = FAULT_NULL; /* a cancelled fault is not answered */
    reply_unlink(r, t);
}

void do_reply_transfer(struct tcb *replier, struct reply *r, bool grant)
{
    struct tcb *caller = r->tcb;
    /* Nobody waiting (or the object is held by a receiver): nothing (k.1). */
    if (!caller || caller->state != THREAD_BLOCKED_ON_REPLY)
        return;
    bool was_timeout = caller->fault.type == FAULT_TIMEOUT;
    if (caller->fault.type == FAULT_NULL) {
        do_ipc_transfer(replier, NULL, 0, grant, caller);
        reply_remove(r, caller);
        thread_set_state(caller, THREAD_RUNNING);
    } else {
        reply_remove(r, caller);
        bool restart = fault_handle_reply(caller, replier);
        caller->fault.type = FAULT_NULL;
        thread_set_state_unqueued(caller, restart ? THREAD_RESTART : THREAD_INACTIVE);
    }
    /* Ready now, or in the release queue until its SC's head refill is
     * due; a thread with a timeout handler gets a timeout fault instead of
     * waiting (seL4's doReplyTransfer; not after a timeout fault). */
    if (caller->sc && thread_is_runnable(caller) && !sc_released(caller->sc) && !was_timeout &&
        timeout_fault_due(caller))
        handle_timeout_fault(caller);
    else
        thread_schedule(caller);
}

void reply_finalise(struct reply *r)
{
    struct tcb *t = r->tcb;
    if (!t)
        return;
    if (t->state == THREAD_BLOCKED_ON_REPLY)
        reply_remove(r, t); /* the SC goes back if r was the head (k.3) */
    else
        endpoint_cancel_ipc(t); /* held by a blocked receive */
}

void reply_clear_sc_stack(struct sched_context *sc)
{
    struct reply *r = (struct reply *)sc->reply;
    if (r)
        r->head_sc = NULL;
    sc->reply = NULL;
}
