/* Endpoints (endpoint.h): send, receive, message transfer, cancellation.
 * Follows seL4's src/object/endpoint.c (MCS) and the transfer functions of
 * src/kernel/thread.c. Every function is O(1) except queue insertion
 * (queue.h), the copy of a message (at most MSG_MAX_LENGTH words) and the
 * restart of every queued thread when the endpoint is deleted, bounded by
 * the number of queued threads. */
#include <arch/context.h>
#include <cspace.h>
#include <endpoint.h>
#include <fault.h>
#include <invocation.h>
#include <kernel.h>
#include <notification.h>
#include <objecttype.h>
#include <preemption.h>
#include <queue.h>
#include <string.h>
#include <thread.h>

/* The queue holds senders if its head is a sender (all its threads are the
 * same kind: a send meets any queued receiver before it can queue). */
static bool ep_has_senders(const struct endpoint *ep)
{
    return ep->queue.head && ep->queue.head->state == THREAD_BLOCKED_ON_SEND;
}
static bool ep_has_receivers(const struct endpoint *ep)
{
    return ep->queue.head && ep->queue.head->state == THREAD_BLOCKED_ON_RECEIVE;
}

static void block_on(struct tcb *t, struct endpoint *ep, enum thread_state s)
{
    /* The argument registers stay as they are: a cancelled wait (endpoint
     * deleted, Resume) re-executes the same system call (seL4's Restart
     * state). t is the current thread or a faulting one (fault.c): in no
     * queue (thread.h). */
    t->blocking_object = ep;
    thread_set_state_unqueued(t, s);
    tqueue_insert(&ep->queue, t);
}

/* Copy the last 1 <= n < 8 words of a message from s to d, each at the
 * start of a 64-byte line: the seven words of s read (all in that line of
 * the sender's buffer, so reading past the message is harmless), then the
 * n written, the first on every path, so that for the WCET analysis the
 * others find d's line cached whichever of them run. Out of line for the
 * reason copy_8_words is: its pointers are new to the analysis, one line
 * of each buffer, where the loop this replaces indexed both buffers by a
 * count the analysis does not know, a miss per word. */
static NOINLINE void copy_below_8_words(word_t *d, const word_t *s, word_t n)
{
    word_t w0 = s[0], w1 = s[1], w2 = s[2], w3 = s[3], w4 = s[4], w5 = s[5], w6 = s[6];
    d[0] = w0;
    if (n > 1)
        d[1] = w1;
    if (n > 2)
        d[2] = w2;
    if (n > 3)
        d[3] = w3;
    if (n > 4)
        d[4] = w4;
    if (n > 5)
        d[5] = w5;
    if (n > 6)
        d[6] = w6;
}

/* Copy n message words: MR0-3 register to register; the rest buffer to
 * buffer if both threads have one: MR4-MR6 (buffer words 5-7) one by one,
 * then eight words at a time from buffer word 8, then the last up to seven
 * (copy_below_8_words). An IPC buffer is aligned to 2^IPC_BUFFER_SIZE_BITS
 * (ipc_buffer_kptr), so each eight-word run from byte 64 is one cache line
 * of each buffer, and the WCET analysis charges it as one line, not two.
 * Returns the words transferred. At most (MSG_MAX_LENGTH - 7) / 8 = 14
 * calls and 7 single words (n is a clamped length). */
static word_t copy_mrs(struct tcb *from, struct tcb *to, word_t n)
{
    word_t i = 0;
    for (; i < n && i < NUM_MSG_REGISTERS; i++)
        to->ctx.x[REG_A2 + i] = from->ctx.x[REG_A2 + i];
    if (i == n)
        return n;
    word_t *sb = ipc_buffer_kptr(from);
    word_t *rb = ipc_buffer_kptr(to);
    if (!sb || !rb)
        return i;
    _Static_assert(BUF_MSG + NUM_MSG_REGISTERS == 5, "MR4 is buffer word 5");
    _Static_assert(IPC_BUFFER_SIZE_BITS >= 6, "an IPC buffer starts a 64-byte line");
    rb[5] = sb[5];
    if (n > 5)
        rb[6] = sb[6];
    if (n > 6)
        rb[7] = sb[7];
    if (n <= 7)
        return n;
    const word_t *s = sb + 8;
    word_t *d = rb + 8;
    word_t left = n - 7;
    word_t lines = left / 8;
    /* The calls are written out, not looped: the WCET analysis bounds a
     * loop whose body is a call only by a trusted annotation. */
    _Static_assert((MSG_MAX_LENGTH - 7) / 8 == 14, "fourteen eight-word calls cover the buffer part");
    if (lines > 0)
        copy_8_words(d + 0, s + 0);
    if (lines > 1)
        copy_8_words(d + 8, s + 8);
    if (lines > 2)
        copy_8_words(d + 16, s + 16);
    if (lines > 3)
        copy_8_words(d + 24, s + 24);
    if (lines > 4)
        copy_8_words(d + 32, s + 32);
    if (lines > 5)
        copy_8_words(d + 40, s + 40);
    if (lines > 6)
        copy_8_words(d + 48, s + 48);
    if (lines > 7)
        copy_8_words(d + 56, s + 56);
    if (lines > 8)
        copy_8_words(d + 64, s + 64);
    if (lines > 9)
        copy_8_words(d + 72, s + 72);
    if (lines > 10)
        copy_8_words(d + 80, s + 80);
    if (lines > 11)
        copy_8_words(d + 88, s + 88);
    if (lines > 12)
        copy_8_words(d + 96, s + 96);
    if (lines > 13)
        copy_8_words(d + 104, s + 104);
    word_t done = 8 * lines, tail = left % 8;
    /* s + done + 6 is at most buffer word 8 + 112 + 6 = 126: the seven
     * words read are in the buffer (128 words) */
    _Static_assert(8 + 8 * 14 + 6 < (1 << IPC_BUFFER_SIZE_BITS) / 8, "the tail's reads stay in the buffer");
    if (tail)
        copy_below_8_words(d + done, s + done, tail);
    return n;
}

/* seL4's getReceiveSlots: the empty slot the receiver named in its IPC
 * buffer (receiveCNode looked up at 64 bits, then receiveIndex at
 * receiveDepth in it), or NULL. */
static cte_t *receive_slot(struct tcb *t, const word_t *rb)
{
    struct lookup_result r = lookup_cap_slot(t, rb[BUF_RECEIVE_CNODE]);
    if (!r.slot)
        return NULL;
    cap_t root = r.slot->cap;
    word_t depth = rb[BUF_RECEIVE_DEPTH];
    if (cap_type(root) != CAP_CNODE || depth < 1 || depth > 64)
        return NULL;
    struct lookup_result d = lookup_slot_for_cnode_op(root, rb[BUF_RECEIVE_INDEX], depth);
    if (!d.slot || !cap_is_null(d.slot->cap))
        return NULL;
    return d.slot;
}

/* seL4's lookupExtraCaps + transferCaps: the sender's
 * extra caps, looked up now (a blocked sender's cptrs may have changed:
 * any failure means no caps at all). Caps to `ep` are unwrapped into
 * badges; the first other cap is derived into the receive slot; processing
 * stops at the next one, or at a derive failure. Returns the received info's
 * extraCaps | capsUnwrapped << 2. At most MSG_MAX_EXTRA_CAPS iterations. */
static word_t transfer_caps(struct tcb *sender, word_t info, struct endpoint *ep, struct tcb *receiver)
{
    word_t *sb = ipc_buffer_kptr(sender);
    word_t *rb = ipc_buffer_kptr(receiver);
    word_t n = sb ? msginfo_extra_caps(info) : 0;
    if (n == 0 || !rb)
        return 0;
    cte_t *slots[MSG_MAX_EXTRA_CAPS];
    for (word_t i = 0; i < n; i++) {
        slots[i] = lookup_slot(sender, sb[BUF_CAPS + i]);
        if (!slots[i])
            return 0;
    }
    cte_t *dest = receive_slot(receiver, rb);
    word_t unwrapped = 0;
    word_t i = 0;
    for (; i < n; i++) {
        cap_t c = slots[i]->cap;
        if (ep && cap_type(c) == CAP_ENDPOINT && endpoint_from_cap(c) == ep) {
            rb[BUF_CAPS + i] = cap_badge(c);
            unwrapped |= 1ul << i;
            continue;
        }
        if (!dest)
            break;
        struct derive_result d = derive_cap(slots[i], c);
        if (d.status != ERR_NONE || cap_is_null(d.cap))
            break;
        cte_insert(d.cap, slots[i], dest);
        dest = NULL; /* only the first non-unwrapped cap moves */
    }
    return i | (unwrapped << 2);
}

/* seL4's doNormalTransfer: caps only with grant. */
static void do_normal_transfer(struct tcb *sender, struct endpoint *ep, word_t badge, bool grant,
                               struct tcb *receiver)
{
    word_t info = sender->ctx.x[REG_A1];
    word_t caps = grant ? transfer_caps(sender, info, ep, receiver) : 0;
    word_t n = copy_mrs(sender, receiver, msginfo_length(info));
    receiver->ctx.x[REG_A1] = msginfo_new(msginfo_label(info), caps >> 2, caps & 3, n);
    receiver->ctx.x[REG_A0] = badge;
}

void do_ipc_transfer(struct tcb *sender, struct endpoint *ep, word_t badge, bool grant, struct tcb *receiver)
{
    if (sender->fault.type == FAULT_NULL)
        do_normal_transfer(sender, ep, badge, grant, receiver);
    else
        fault_transfer(sender, badge, receiver);
}

/* A woken sender or receiver continues after its ecall. */
static void wake(struct tcb *t)
{
    thread_set_state(t, THREAD_RUNNING);
    thread_schedule(t); /* a higher priority than the current thread's runs first */
}

/* A blocking send finds no receiver: t waits in the queue with what the
 * receive will need (badge, Call, the cap's grant rights). */
static void block_sender(struct tcb *t, struct endpoint *ep, cap_t c, bool call)
{
    word_t rights = cap_rights(c);
    t->ipc_badge = cap_badge(c);
    t->ipc_flags = (call ? IPC_IS_CALL : 0) | ((rights & RIGHT_GRANT) ? IPC_CAN_GRANT : 0) |
                   ((rights & RIGHT_GRANT_REPLY) ? IPC_CAN_GRANT_REPLY : 0);
    block_on(t, ep, THREAD_BLOCKED_ON_SEND);
}

/* The first waiting receiver, out of the queue; *r is the reply object it
 * held, which it no longer holds (reply_push may bind it again). */
static struct tcb *take_receiver(struct endpoint *ep, struct reply **r)
{
    struct tcb *dest = tqueue_pop(&ep->queue);
    dest->blocking_object = NULL;
    *r = dest->reply;
    if (*r)
        reply_unlink(*r, dest);
    return dest;
}

/* After a Call or fault message: the sender waits for the reply if the
 * receiver gave a reply object and the cap grants (or grants replies),
 * else it has no way back (k.3). */
static void await_reply(struct tcb *t, struct tcb *dest, struct reply *r, word_t rights, bool can_donate)
{
    if (r && (rights & (RIGHT_GRANT | RIGHT_GRANT_REPLY)))
        reply_push(t, dest, r, can_donate);
    else
        thread_set_state_unqueued(t, THREAD_INACTIVE); /* current or faulting: in no queue */
}

bool endpoint_send(struct tcb *t, cap_t c, bool blocking, bool call, bool can_donate)
{
    struct endpoint *ep = endpoint_from_cap(c);
    word_t rights = cap_rights(c);
    if (!ep_has_receivers(ep)) {
        if (blocking)
            block_sender(t, ep, c, call);
        return false; /* NBSend with nobody waiting: dropped (k.4) */
    }
#if CONFIG_INVARIANT_CHECKS
    kassert(t->fault.type == FAULT_NULL); /* a running thread has no fault: sends are normal */
#endif
    struct reply *r;
    struct tcb *dest = take_receiver(ep, &r);
    do_normal_transfer(t, ep, cap_badge(c), rights & RIGHT_GRANT, dest);
    bool lent = false;
    if (call) {
        await_reply(t, dest, r, rights, can_donate);
    } else if (can_donate && !dest->sc && t->sc) {
        /* NBSendRecv / NBSendWait handing its SC to a passive server (k.4). */
        sched_context_donate(t->sc, dest);
        lent = true;
    }
    wake(dest);
    return lent;
}

/* The first half of seL4's sendFaultIPC: a blocking send that counts as a
 * Call. t waits on the endpoint if nobody receives (the message is then
 * built when a receiver takes it, do_ipc_transfer); else the receiver, now
 * out of the queue, with its reply object in *r. Inlined on purpose: the
 * callers' test of the NULL is then the same branch as the one here, where
 * a call would leave the WCET analysis a path that blocks and then sends
 * (it ties a returned value to its returns only where the return site runs
 * once per entry, docs/wcet.md "Returned values"; the fault sends also run
 * in shared and looped contexts). */
static ALWAYS_INLINE struct tcb *fault_receiver(struct tcb *t, cap_t c, struct reply **r)
{
    struct endpoint *ep = endpoint_from_cap(c);
    if (!ep_has_receivers(ep)) {
        block_sender(t, ep, c, false);
        return NULL;
    }
    return take_receiver(ep, r);
}

void endpoint_send_fault(struct tcb *t, cap_t c, bool can_donate)
{
    /* the message is the fault's (fault_transfer), never a normal one */
    struct reply *r;
    struct tcb *dest = fault_receiver(t, c, &r);
    if (!dest)
        return;
    fault_transfer(t, cap_badge(c), dest);
    await_reply(t, dest, r, cap_rights(c), can_donate);
    wake(dest);
}

void endpoint_send_timeout_fault(struct tcb *t, cap_t c)
{
    struct reply *r;
    struct tcb *dest = fault_receiver(t, c, &r);
    if (!dest)
        return;
    timeout_fault_transfer(t, cap_badge(c), dest);
    await_reply(t, dest, r, cap_rights(c), false);
    wake(dest);
}

void endpoint_receive(struct tcb *t, cap_t c, struct reply *r, bool blocking)
{
    struct endpoint *ep = endpoint_from_cap(c);
    /* An active reply object given to a receive: whoever it was bound to
     * (an unanswered caller, or a thread receiving with it) is cancelled
     * (mainline seL4's receiveIPC and reply_remove). */
    if (r && r->tcb)
        thread_cancel_blocking(r->tcb);
    struct notification *n = t->bound_notification;
    if (n && notification_is_active(n)) {
        notification_complete_signal(n, t); /* a0 = the word, nothing else */
        return;
    }
    if (!ep_has_senders(ep)) {
        if (!blocking) {
            t->ctx.x[REG_A0] = 0; /* seL4's doNBRecvFailedTransfer */
            return;
        }
        if (n)
            notification_maybe_return_sc(n, t); /* a passive thread gives back the notification's SC */
        t->reply = r;
        if (r)
            r->tcb = t;
        block_on(t, ep, THREAD_BLOCKED_ON_RECEIVE);
        return;
    }
    struct tcb *sender = tqueue_pop(&ep->queue);
    sender->blocking_object = NULL;
    u32 flags = sender->ipc_flags;
    bool grant = flags & IPC_CAN_GRANT;
    do_ipc_transfer(sender, ep, sender->ipc_badge, grant, t);
    if ((flags & IPC_IS_CALL) || sender->fault.type != FAULT_NULL) {
        if (r && (grant || (flags & IPC_CAN_GRANT_REPLY))) {
            /* Timeout faults never donate (h). */
            bool can_donate = sender->sc && sender->fault.type != FAULT_TIMEOUT;
            reply_push(sender, t, r, can_donate);
        } else {
            thread_set_state_unqueued(sender, THREAD_INACTIVE); /* it was blocked on ep */
        }
    } else {
        wake(sender);
    }
}

void endpoint_cancel_ipc(struct tcb *t)
{
    struct endpoint *ep = (struct endpoint *)t->blocking_object;
    tqueue_remove(&ep->queue, t);
    t->blocking_object = NULL;
    if (t->state == THREAD_BLOCKED_ON_RECEIVE && t->reply)
        reply_unlink(t->reply, t);
    thread_set_state_unqueued(t, THREAD_INACTIVE); /* it was blocked on ep */
}

void endpoint_reorder(struct tcb *t)
{
    tqueue_reorder(&((struct endpoint *)t->blocking_object)->queue, t);
}

/* seL4's cancelAllIPC, preemptible (seL4 does it in one go): one O(1)
 * iteration per queued thread, each followed by a preemption point.
 * Returns false if a pending interrupt stopped it. */
bool endpoint_finalise(struct endpoint *ep)
{
    /* One thread at a time from the head, each followed by a preemption
     * point: waking a thread can cost a refill merge and a release-queue
     * walk, so a long queue is not done in one go. Stopped early, the
     * endpoint is still valid with a shorter queue; the re-executed delete
     * finalises it again and goes on. */
    for (;;) {
        struct tcb *t = ep->queue.head;
        if (!t)
            return true;
        ep->queue.head = t->queue_next;
        if (t->queue_next)
            t->queue_next->queue_prev = NULL;
        else
            ep->queue.tail = NULL;
        t->queue_next = t->queue_prev = NULL;
        t->blocking_object = NULL;
        if (t->state == THREAD_BLOCKED_ON_RECEIVE && t->reply)
            reply_unlink(t->reply, t);
        if (t->fault.type == FAULT_NULL) {
            thread_set_state(t, THREAD_RESTART); /* re-executes its system call */
            thread_schedule(t);
        } else {
            thread_set_state_unqueued(t, THREAD_INACTIVE); /* a fault message is not re-sent */
        }
        /* Stopped even after the last waiter (as notification_finalise):
         * the re-executed delete finds the queue empty. */
        if (preemption_point())
            return false;
    }
}

/* The first of t and the senders queued after it with `badge`, or NULL: an
 * O(1) step per sender passed. A function of its own so that the timing
 * analyser sees this walk as the only loop inside the one below (inlined,
 * gcc merges the two into one loop whose every iteration could restart a
 * thread). */
static NOINLINE struct tcb *sender_with_badge(struct tcb *t, word_t badge)
{
    while (t && t->ipc_badge != badge)
        t = t->queue_next;
    return t;
}

/* seL4's cancelBadgedSends, preemptible: every queued sender with `badge`
 * restarts (or becomes inactive if it was sending a fault). After each
 * thread taken out, a pending interrupt stops the walk; the invocation is
 * re-executed and walks the (shorter) queue again, so every restart makes
 * progress. One O(1) iteration per queued thread (WCET annotation). */
bool endpoint_cancel_badged_sends(struct endpoint *ep, word_t badge)
{
    if (!ep_has_senders(ep))
        return false;
    /* One sender with the badge per iteration (restarting it can cost a
     * refill merge and a release-queue walk), then a preemption point. */
    struct tcb *t = ep->queue.head;
    for (;;) {
        t = sender_with_badge(t, badge);
        if (!t)
            return false;
        struct tcb *next = t->queue_next;
        tqueue_remove(&ep->queue, t);
        t->blocking_object = NULL;
        if (t->fault.type == FAULT_NULL) {
            thread_set_state(t, THREAD_RESTART);
            thread_schedule(t);
        } else {
            thread_set_state_unqueued(t, THREAD_INACTIVE); /* it was blocked on ep */
        }
        /* Stopped even after the last sender with the badge: the
         * re-executed invocation finds none and returns. */
        if (preemption_point())
            return true;
        t = next;
    }
}

#if CONFIG_INVARIANT_CHECKS
/* Check flavour (invariants.c, for every cap after every system call): the
 * IPC links an object's cap leads to are consistent. Walks are cut at
 * WALK_LIMIT steps, so a corrupted (cyclic) queue is reported, not looped
 * on. */
#define WALK_LIMIT 100000ul
const char *ipc_invariant_violation(cap_t c)
{
    switch (cap_type(c)) {
    case CAP_ENDPOINT: {
        struct endpoint *ep = endpoint_from_cap(c);
        struct tcb *prev = NULL;
        word_t steps = 0;
        for (struct tcb *t = ep->queue.head; t; t = t->queue_next) {
            if (++steps > WALK_LIMIT)
                return "endpoint queue: a cycle";
            if (t->queue_prev != prev)
                return "endpoint queue: broken back link";
            if (t->blocking_object != ep)
                return "endpoint queue: a thread blocked on another object";
            if (t->state != ep->queue.head->state ||
                (t->state != THREAD_BLOCKED_ON_SEND && t->state != THREAD_BLOCKED_ON_RECEIVE))
                return "endpoint queue: a thread neither all-send nor all-receive";
            if (prev && prev->priority < t->priority)
                return "endpoint queue: not in priority order";
            prev = t;
        }
        if (ep->queue.tail != prev)
            return "endpoint queue: wrong tail";
        return NULL;
    }
    case CAP_NOTIFICATION:
        return tqueue_violation(&notification_from_cap(c)->queue, WALK_LIMIT);
    case CAP_REPLY: {
        struct reply *r = reply_from_cap(c);
        if (r->tcb) {
            if (r->tcb->reply != r)
                return "reply object: its thread does not point back";
            if (r->tcb->state != THREAD_BLOCKED_ON_REPLY && r->tcb->state != THREAD_BLOCKED_ON_RECEIVE)
                return "reply object: its thread is neither waiting for a reply nor receiving";
        }
        if (r->head_sc && ((struct reply *)r->head_sc->reply != r || r->next))
            return "reply object: head of a call stack the SC does not point at";
        if (r->prev && r->prev->next != r)
            return "reply object: call stack back link broken";
        if (r->next && r->next->prev != r)
            return "reply object: call stack forward link broken";
        return NULL;
    }
    case CAP_THREAD: {
        struct tcb *t = tcb_from_paddr(cap_obj(c));
        switch (t->state) {
        case THREAD_BLOCKED_ON_REPLY:
            if (!t->reply || t->reply->tcb != t)
                return "thread waiting for a reply: its reply object does not name it";
            return NULL;
        case THREAD_BLOCKED_ON_SEND:
        case THREAD_BLOCKED_ON_RECEIVE:
            if (!t->blocking_object)
                return "thread blocked on an endpoint: no endpoint";
            if (t->state == THREAD_BLOCKED_ON_RECEIVE && t->reply && t->reply->tcb != t)
                return "receiving thread: its reply object does not name it";
            return NULL;
        default:
            if (t->reply)
                return "thread not blocked in IPC still names a reply object";
            return NULL;
        }
    }
    default:
        return NULL;
    }
}
#endif
