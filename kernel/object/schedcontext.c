/* Scheduling contexts: processor time as an object (MCS). Creation, boot
 * setup, configuration (the refills: refill.h), binding to threads, the
 * SchedContext invocations and finalisation. The scheduler (thread.c) does
 * the charging, the release queue and the timer. */
#include <boot.h>
#include <endpoint.h>
#include <invocation.h>
#include <kernel.h>
#include <notification.h>
#include <objecttype.h>
#include <refill.h>
#include <schedcontext.h>
#include <thread.h>
#include <timer.h>
#include <arch/machine.h>

void sched_context_init(struct sched_context *sc, u32 size_bits)
{
    /* The memory is zero (untyped.c, boot_alloc): budget 0 (unconfigured),
     * no refills, unbound. Only the non-zero fields are written, which for
     * a Retype of many contexts is most of the work. */
    sc->size_bits = size_bits;
    sc->refill_max = refill_max_for_size(size_bits); /* until configured: the most it may hold */
}

void sched_context_boot_init(struct sched_context *sc, u32 size_bits, struct tcb *t)
{
    u64 budget = CONFIG_BOOT_THREAD_TIME_SLICE_MS * timer_ticks_per_ms;
    sched_context_init(sc, size_bits);
    sc->period = 0; /* round robin, as seL4 stores the boot context */
    sc->budget = budget;
    sc->sporadic = false;
    sc->refill_head = 0;
    sc->refill_count = 1;
    sc_refills(sc)[0].release_time = machine_time();
    sc_refills(sc)[0].amount = budget;
    sc->tcb = t;
    t->sc = sc;
}

void sched_context_link_tcb(struct sched_context *sc, struct tcb *t)
{
    sc->tcb = t;
    t->sc = sc;
}

void sched_context_bind_tcb(struct sched_context *sc, struct tcb *t)
{
    sched_context_link_tcb(sc, t);
    thread_schedule(t);
}

void sched_context_unbind_tcb(struct sched_context *sc)
{
    struct tcb *t = sc->tcb;
    if (!t)
        return;
    /* If sc is running it stays the current SC until the exit charges it
     * (its thread no longer runs on it, so the exit switches away). */
    sched_dequeue(t);
    t->sc = NULL;
    sc->tcb = NULL;
}

void sched_context_unbind_notification(struct sched_context *sc)
{
    struct notification *n = sc->notification;
    if (!n)
        return;
    n->sc = NULL;
    sc->notification = NULL;
}

void sched_context_finalise(struct sched_context *sc)
{
    reply_clear_sc_stack(sc); /* the calls it was lent through lose their way back */
    sched_context_unbind_tcb(sc);
    sched_context_unbind_notification(sc);
    sched_context_complete_yield_to(sc->yield_from); /* as seL4: the yielder gets the time so far */
    (void)sched_stop_charging(sc); /* its refills die with it: nothing to charge */
    sched_count_sporadic(sc, sc_waits_for_release(sc), false);
}

/* SchedControl_ConfigureFlags, after its checks (schedcontrol.c). */
void sched_context_configure(struct sched_context *sc, u64 budget_us, u64 period_us, word_t extra_refills,
                             word_t badge, word_t flags)
{
    u64 now = sched_now();
    u64 budget = us_to_ticks(budget_us);
    /* Round robin when budget == period (refill.h stores it as period 0). */
    u64 period = budget_us == period_us ? budget : us_to_ticks(period_us);
    word_t max_refills = extra_refills + REFILL_MIN_REFILLS; /* checked: refill_max_for_size */
    struct tcb *t = sc->tcb;
    bool was_sporadic = sc_waits_for_release(sc);
    /* If it is running, what it used so far is taken off its head under the
     * old parameters (the entry found the head ready and sufficient for it);
     * the next exit re-checks its budget and, if it still runs, starts it
     * again (refill_unblock_check). A queued thread is re-queued below,
     * since its head refill may change. */
    u64 used = sched_stop_charging(sc);
    if (t)
        sched_dequeue(t);
    if (t && thread_is_runnable(t) && sc_configured(sc) && budget_us != period_us)
        /* In use: keep the bandwidth it had (no more at once than the old
         * head; extra budget one new period later). */
        refill_update(sc, period, budget, max_refills, used, now);
    else
        refill_new(sc, max_refills, budget, period, now);
    sc->badge = badge;
    sc->sporadic = (flags & SC_FLAG_SPORADIC) != 0;
    sched_count_sporadic(sc, was_sporadic, sc_waits_for_release(sc));
    if (t)
        thread_schedule(t); /* ready, or the release queue until its head is due */
}

/* The consumed time in µs (rounded down), reset. sc->consumed is up to
 * date: every kernel entry adds the time since the previous one to the SC
 * that ran. */
static word_t take_consumed_us(struct sched_context *sc)
{
    word_t us = ticks_to_us(sc->consumed);
    sc->consumed = 0;
    return us;
}

/* Report the consumed time in MR0. Only a Call gets the reply: Send and
 * NBSend write nothing back (seL4's invokeSchedContext_Consumed). */
static void reply_consumed(struct sched_context *sc, struct invocation *inv)
{
    word_t us = take_consumed_us(sc);
    if (inv->call) {
        set_mr(inv->caller, 0, us);
        inv->n_reply = 1;
    }
}

void sched_context_complete_yield_to(struct tcb *yielder)
{
    if (!yielder || !yielder->yield_to)
        return;
    struct sched_context *sc = yielder->yield_to;
    set_mr(yielder, 0, take_consumed_us(sc));
    reply_success(yielder, 1); /* as seL4's YieldTo: also after a Send */
    sched_context_cancel_yield_to(yielder);
}

void sched_context_cancel_yield_to(struct tcb *yielder)
{
    if (!yielder->yield_to)
        return;
    yielder->yield_to->yield_from = NULL;
    yielder->yield_to = NULL;
}

/* ---- invocations ---- */

/* A SchedContext invocation, decoded: the object it acts on and, for
 * Bind and UnbindObject, the thread or notification named by extra cap 0
 * (exactly one of the two is set). */
struct sched_context_op {
    word_t label;
    struct sched_context *sc;
    struct tcb *tcb;
    struct notification *notification;
};

/* Bind (seL4's decodeSchedContext_Bind): a thread or a notification, both
 * unbound; a blocked thread only to a released context. */
static struct syscall_error decode_bind(const struct invocation *inv, struct sched_context_op *op)
{
    struct sched_context *sc = op->sc;
    if (inv->n_extra < 1)
        return error0(ERR_TRUNCATED_MESSAGE);
    cap_t c = inv->extra[0];
    switch (cap_type(c)) {
    case CAP_THREAD: {
        struct tcb *t = tcb_from_paddr(cap_obj(c));
        if (sc->tcb || t->sc)
            return error0(ERR_ILLEGAL_OPERATION);
        if (thread_is_blocked(t) && !sc_released(sc))
            return error0(ERR_ILLEGAL_OPERATION);
        op->tcb = t;
        return no_error();
    }
    case CAP_NOTIFICATION: {
        struct notification *n = notification_from_cap(c);
        if (sc->notification || n->sc)
            return error0(ERR_ILLEGAL_OPERATION);
        op->notification = n;
        return no_error();
    }
    default:
        return error1(ERR_INVALID_CAPABILITY, 1);
    }
}

/* UnbindObject: the thread (not the caller) or notification bound to sc. */
static struct syscall_error decode_unbind_object(const struct invocation *inv, struct sched_context_op *op)
{
    struct sched_context *sc = op->sc;
    if (inv->n_extra < 1)
        return error0(ERR_TRUNCATED_MESSAGE);
    cap_t c = inv->extra[0];
    switch (cap_type(c)) {
    case CAP_THREAD: {
        struct tcb *t = tcb_from_paddr(cap_obj(c));
        if (sc->tcb != t || t == inv->caller)
            return error0(ERR_ILLEGAL_OPERATION);
        op->tcb = t;
        return no_error();
    }
    case CAP_NOTIFICATION:
        if (sc->notification != notification_from_cap(c))
            return error0(ERR_ILLEGAL_OPERATION);
        op->notification = sc->notification;
        return no_error();
    default:
        return error1(ERR_INVALID_CAPABILITY, 1);
    }
}

/* Validates the invocation in seL4's order and fills *op; changes nothing. */
static struct syscall_error decode_sched_context(const struct invocation *inv, struct sched_context_op *op)
{
    op->label = inv->label;
    op->sc = sc_from_cap(inv->cap);
    op->tcb = NULL;
    op->notification = NULL;
    switch (inv->label) {
    case INV_SCHED_CONTEXT_BIND:
        return decode_bind(inv, op);
    case INV_SCHED_CONTEXT_UNBIND:
        if (op->sc->tcb == inv->caller)
            return error0(ERR_ILLEGAL_OPERATION);
        return no_error();
    case INV_SCHED_CONTEXT_UNBIND_OBJECT:
        return decode_unbind_object(inv, op);
    case INV_SCHED_CONTEXT_CONSUMED:
        return no_error();
    case INV_SCHED_CONTEXT_YIELD_TO: {
        struct tcb *t = op->sc->tcb;
        if (!t || t == inv->caller || t->priority > inv->caller->mcp)
            return error0(ERR_ILLEGAL_OPERATION);
        op->tcb = t;
        return no_error();
    }
    default:
        return error0(ERR_ILLEGAL_OPERATION);
    }
}

/* Directed yield to op->tcb, the thread bound to op->sc: a target that
 * could run now (in a ready queue) goes to the head of its queue and, at
 * the caller's priority or above, runs before the caller. A target waiting
 * for its refill or blocked is not affected. An earlier yielder to this
 * context gets its answer first. If the target runs first, the caller is
 * told the consumed time when it next runs (kernel_exit; seL4's
 * activateThread), so it includes the target's run; a Call gets its empty
 * success reply now and the words then. Otherwise the answer is
 * immediate. */
static void perform_yield_to(struct invocation *inv, const struct sched_context_op *op)
{
    struct sched_context *sc = op->sc;
    struct tcb *caller = inv->caller;
    sched_context_complete_yield_to(sc->yield_from);
    bool yields = sched_yield_to_runs_first(op->tcb, caller);
    sched_yield_to(op->tcb);
    if (yields) {
        caller->yield_to = sc;
        sc->yield_from = caller;
    } else {
        reply_consumed(sc, inv);
    }
}

/* Does what the decoded invocation asks; cannot fail. */
static void perform_sched_context(struct invocation *inv, const struct sched_context_op *op)
{
    struct sched_context *sc = op->sc;
    switch (op->label) {
    case INV_SCHED_CONTEXT_BIND:
        if (op->tcb) {
            sched_context_bind_tcb(sc, op->tcb);
        } else {
            sc->notification = op->notification;
            op->notification->sc = sc;
        }
        return;
    case INV_SCHED_CONTEXT_UNBIND:
        sched_context_unbind_tcb(sc);
        sched_context_unbind_notification(sc);
        return;
    case INV_SCHED_CONTEXT_UNBIND_OBJECT:
        if (op->tcb)
            sched_context_unbind_tcb(sc);
        else
            sched_context_unbind_notification(sc);
        return;
    case INV_SCHED_CONTEXT_CONSUMED:
        reply_consumed(sc, inv);
        return;
    default: /* INV_SCHED_CONTEXT_YIELD_TO */
        perform_yield_to(inv, op);
        return;
    }
}

struct syscall_error invoke_sched_context(struct invocation *inv)
{
    struct sched_context_op op;
    struct syscall_error e = decode_sched_context(inv, &op);
    if (e.code != ERR_NONE)
        return e;
    perform_sched_context(inv, &op);
    return no_error();
}
