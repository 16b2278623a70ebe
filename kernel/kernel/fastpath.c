/* The IPC fastpath: Call and ReplyRecv between a client and a passive server
 * in straight-line C (docs/ipc.md "Fastpath"; Lyons' thesis, 2018, ch. 7,
 * for the MCS changes; Blackham's thesis, 2013, ch. 8, for C against
 * assembly).
 *
 * trap.S jumps here for the two system-call numbers. Each entry point first
 * checks every condition under which the slow path (syscall.c) would do
 * something other than the one common case, without changing anything; if
 * one fails it hands the untouched system call to handle_syscall. Otherwise
 * it performs exactly the state changes the slow path would make and
 * returns to the other thread directly. The conditions make the slow path's
 * extra work provably empty:
 *  - the SC does not change hands between running threads (it is lent with
 *    the Call and returned by the reply), so there is no SC switch, no
 *    refill arithmetic and no timer reprogramming;
 *  - the thread switched to has a priority strictly above every ready
 *    thread, so the slow path's scheduler would pick it too;
 *  - the budget is not about to run out and no release is due (the time
 *    is compared with what the timer is armed for), so the slow path's
 *    entry accounting would neither stop the call nor release a thread;
 *    the time since the last stamp is charged at the next slow entry to
 *    the same SC;
 *  - the message is at most four words in registers with no caps;
 *  - queue operations are O(1): the receiver is the endpoint queue's head,
 *    and a ReplyRecv appends the server at the tail (its priority is at most
 *    the tail's) or the queue is empty.
 * No loops except the CSpace walk (at most two levels) and the copy of at
 * most four message registers; no function pointers. The equivalence with
 * the slow path is tested by user/tests/test_fastpath.c, which runs the
 * same IPCs both ways. */
#include <abi.h>
#include <arch/context.h>
#include <arch/csr.h>
#include <cspace.h>
#include <endpoint.h>
#include <fastpath.h>
#include <kernel.h>
#include <preemption.h>
#include <refill.h>
#include <sched.h>
#include <thread.h>

bool fastpath_enabled = true;

void fastpath_init(bool enabled)
{
    fastpath_enabled = enabled && CONFIG_FASTPATH;
}

/* seL4's lookupCap for the fastpath: at most FASTPATH_CSPACE_LEVELS CNodes
 * (a deeper CSpace takes the slow path, which walks up to 64: this keeps
 * the fastpath's WCET bound small). NULL for any failure. */
#define FASTPATH_CSPACE_LEVELS 2
static ALWAYS_INLINE cte_t *fast_lookup(const struct tcb *t, cptr_t cptr)
{
    return cspace_walk(t->slots[TCB_SLOT_CSPACE].cap, cptr, FASTPATH_CSPACE_LEVELS);
}

/* The message may go the fast way: at most four words, no caps. */
static ALWAYS_INLINE bool fast_message(word_t info) { return (info & 0x1ff) <= NUM_MSG_REGISTERS; }

/* t is running on the SC being charged, with time to spare: the slow
 * path's entry would neither find the budget used up (it stops a call in
 * the last MIN_BUDGET) nor release a waiting thread (the release queue's
 * head is due no earlier than `armed`, and releases count from one kernel
 * WCET, less than MIN_BUDGET, before it). */
static ALWAYS_INLINE bool fast_time(const struct tcb *t)
{
    struct sched_node *n = NODE;
    return t->sc != NULL && t->sc == n->cur_sc && read_time() + refill_min_budget() < n->armed;
}

/* Copy the first `length` (<= 4) message registers, as copy_mrs does. */
static ALWAYS_INLINE void fast_copy_mrs(const struct tcb *from, struct tcb *to, word_t length)
{
    for (word_t i = 0; i < length && i < NUM_MSG_REGISTERS; i++)
        to->ctx.x[REG_A2 + i] = from->ctx.x[REG_A2 + i];
}

/* thread_activate_vspace, switching back to the address space left last
 * without re-checking the ASID table (arch/vspace.h). */
static ALWAYS_INLINE void fast_activate_vspace(cap_t vs)
{
    if (cap_type(vs) == CAP_PAGE_TABLE)
        vspace_activate_or_return(cap_obj(vs), cap_mapped_asid(vs));
    else
        vspace_activate_or_return(kptr_to_paddr(kernel_root_pt), 0);
}

/* Leave the kernel in next (kernel_exit's last part: the scheduler's
 * choice, the SC and the timer are known to be unchanged). */
static ALWAYS_INLINE NORETURN void fast_switch_to(struct tcb *next)
{
#if CONFIG_INVARIANT_CHECKS
    syscall_check_invariants();
#endif
    word_t fs = fpu_status_for(next);
    /* The same VSpace (root and ASID) as the thread leaving: already active. */
    cap_t from = current_thread->slots[TCB_SLOT_VSPACE].cap, to = next->slots[TCB_SLOT_VSPACE].cap;
    if (from.w0 != to.w0 || from.w1 != to.w1)
        fast_activate_vspace(to);
    current_thread = next;
    word_t s = next->ctx.sstatus;
    s &= ~(SSTATUS_SPP | SSTATUS_SIE | SSTATUS_FS);
    s |= SSTATUS_SPIE | fs;
    next->ctx.sstatus = s;
    restore_user_context(&next->ctx);
}

void fastpath_call(void)
{
    struct tcb *t = current_thread;
    word_t info = t->ctx.x[REG_A1];
    if (!fastpath_enabled || !fast_message(info) || t->fault.type != FAULT_NULL || !fast_time(t))
        handle_syscall((word_t)seL4_SysCall);
    cte_t *slot = fast_lookup(t, t->ctx.x[REG_A0]);
    if (!slot)
        handle_syscall((word_t)seL4_SysCall);
    cap_t c = slot->cap;
    word_t rights = cap_rights(c);
    /* Write to send; Grant or GrantReply for the caller to wait for a reply. */
    if (cap_type(c) != CAP_ENDPOINT || !(rights & RIGHT_WRITE) || !(rights & (RIGHT_GRANT | RIGHT_GRANT_REPLY)))
        handle_syscall((word_t)seL4_SysCall);
    struct endpoint *ep = endpoint_from_cap(c);
    struct tcb *dest = ep->queue.head;
    /* A passive receiver that gave a reply object, which outranks every
     * ready thread. */
    if (!dest || dest->state != THREAD_BLOCKED_ON_RECEIVE || dest->sc != NULL || dest->reply == NULL ||
        !ready_none_at_or_above(dest->priority))
        handle_syscall((word_t)seL4_SysCall);

    /* Perform: nothing below can fail. */
    entry_stamp_begin((word_t)seL4_SysCall, info >> 12);
#if CONFIG_DEBUG_BUILD
    debug_counters[KAIROS_COUNTER_FASTPATH_CALL]++;
#endif
    struct sched_context *sc = t->sc;
    struct reply *r = dest->reply;
    t->ctx.pc = t->ctx.fault_ip + 4;

    /* The receiver leaves the endpoint (it was the head). */
    struct tcb *second = dest->queue_next;
    ep->queue.head = second;
    if (second)
        second->queue_prev = NULL;
    else
        ep->queue.tail = NULL;
    dest->queue_next = NULL;
    dest->blocking_object = NULL;

    /* The message: badge, info without caps, the words. */
    word_t length = info & 0x7f;
    dest->ctx.x[REG_A0] = cap_badge(c);
    dest->ctx.x[REG_A1] = msginfo_new(msginfo_label(info), 0, 0, length);
    fast_copy_mrs(t, dest, length);

    /* The caller waits on the receiver's reply object, which goes on top of
     * the SC's call stack; the SC is lent to the receiver. */
    r->tcb = t;
    t->reply = r;
    t->state = THREAD_BLOCKED_ON_REPLY;
    reply_stack_push(sc, r);
    t->sc = NULL;
    sc->tcb = dest;
    dest->sc = sc;
    dest->reply = NULL;
    dest->state = THREAD_RUNNING;
    fast_switch_to(dest);
}

void fastpath_reply_recv(void)
{
    struct tcb *t = current_thread;
    word_t info = t->ctx.x[REG_A1];
    /* send_done: the call stopped after a send phase that was not a reply;
     * its re-execution is only the receive (syscall.c). */
    if (!fastpath_enabled || !fast_message(info) || t->fault.type != FAULT_NULL || t->bound_notification ||
        t->send_done || !fast_time(t))
        handle_syscall((word_t)seL4_SysReplyRecv);
    /* The reply: a caller without an SC of its own waits on r, and r is the
     * top of the call stack of the SC t runs on (the SC goes back). */
    cte_t *rslot = fast_lookup(t, t->ctx.x[REG_A6]);
    if (!rslot || cap_type(rslot->cap) != CAP_REPLY)
        handle_syscall((word_t)seL4_SysReplyRecv);
    struct reply *r = reply_from_cap(rslot->cap);
    struct tcb *caller = r->tcb;
    struct sched_context *sc = t->sc;
    if (!caller || caller->state != THREAD_BLOCKED_ON_REPLY || caller->fault.type != FAULT_NULL ||
        caller->sc != NULL || r->head_sc != sc || !ready_none_at_or_above(caller->priority))
        handle_syscall((word_t)seL4_SysReplyRecv);
    /* The receive: an endpoint with no senders, where t goes at the tail. */
    cte_t *eslot = fast_lookup(t, t->ctx.x[REG_A0]);
    if (!eslot || cap_type(eslot->cap) != CAP_ENDPOINT || !(cap_rights(eslot->cap) & RIGHT_READ))
        handle_syscall((word_t)seL4_SysReplyRecv);
    struct endpoint *ep = endpoint_from_cap(eslot->cap);
    struct tcb *tail = ep->queue.tail;
    if (tail && (tail->state != THREAD_BLOCKED_ON_RECEIVE || tail->priority < t->priority))
        handle_syscall((word_t)seL4_SysReplyRecv);

    /* Perform: nothing below can fail. */
    entry_stamp_begin((word_t)seL4_SysReplyRecv, info >> 12);
#if CONFIG_DEBUG_BUILD
    debug_counters[KAIROS_COUNTER_FASTPATH_REPLY_RECV]++;
#endif
    t->ctx.pc = t->ctx.fault_ip + 4;

    /* The reply message: badge 0, info without caps, the words. */
    word_t length = info & 0x7f;
    caller->ctx.x[REG_A0] = 0;
    caller->ctx.x[REG_A1] = msginfo_new(msginfo_label(info), 0, 0, length);
    fast_copy_mrs(t, caller, length);

    /* Pop r off the call stack; the SC goes back to the caller. */
    struct reply *prev = r->prev;
    sc->reply = prev;
    if (prev) {
        prev->next = NULL;
        prev->head_sc = sc;
    }
    r->prev = NULL;
    r->next = NULL;
    r->head_sc = NULL;
    t->sc = NULL;
    sc->tcb = caller;
    caller->sc = sc;
    caller->reply = NULL;
    caller->state = THREAD_RUNNING;

    /* t receives on the endpoint with r, at the tail of its queue. */
    r->tcb = t;
    t->reply = r;
    t->blocking_object = ep;
    t->state = THREAD_BLOCKED_ON_RECEIVE;
    t->queue_prev = tail;
    t->queue_next = NULL;
    if (tail)
        tail->queue_next = t;
    else
        ep->queue.head = t;
    ep->queue.tail = t;
    fast_switch_to(caller);
}
