/* System-call entry: dispatch on the number in a7 (seL4_Syscall_ID,
 * seL4's MCS numbering, plus Kairos's debug calls; both in uapi/), the
 * lookup of the invoked cap and its extra caps, and the invocation reply.
 * Reading and writing message words is message.c's. */
#include <abi.h>
#include <arch/memory.h>
#include <endpoint.h>
#include <fastpath.h>
#include <fault.h>
#include <invariants.h>
#include <invocation.h>
#include <kernel.h>
#include <message.h>
#include <notification.h>
#include <preemption.h>
#include <arch/machine.h>
#include <thread.h>

static void unknown_syscall(struct tcb *t, word_t number);

static void cap_fault(struct tcb *t, cptr_t cptr, bool recv_phase)
{
    struct fault f = fault_new(FAULT_CAP, t->ctx.fault_ip);
    f.addr = cptr;
    f.in_recv_phase = recv_phase;
    handle_fault(t, &f);
}

/* Notification_Signal (Send, NBSend; Call also gets an empty reply): the
 * only invocation of a notification cap. Decoding checks the Write right;
 * performing it is notification_signal, which cannot fail. */
static struct syscall_error decode_signal(const struct invocation *inv)
{
    if (!(cap_rights(inv->cap) & RIGHT_WRITE))
        return error1(ERR_INVALID_CAPABILITY, 0);
    return no_error();
}

static struct syscall_error invoke_notification(struct invocation *inv)
{
    struct syscall_error e = decode_signal(inv);
    if (e.code != ERR_NONE)
        return e;
    notification_signal(notification_from_cap(inv->cap), cap_badge(inv->cap));
    return no_error();
}

/* The invocation of the cap by its type. first_phase: the send phase of
 * ReplyRecv, NBSendRecv and NBSendWait, where seL4 refuses TCB, Domain,
 * CNode, SchedControl and SchedContext caps (seL4's handleInvocation with
 * firstPhase; nothing is replied in that phase). */
static struct syscall_error invoke_by_type(struct invocation *inv, bool first_phase)
{
    if (first_phase) {
        switch (cap_type(inv->cap)) {
        case CAP_THREAD:
        case CAP_DOMAIN:
        case CAP_CNODE:
        case CAP_SCHED_CONTROL:
        case CAP_SCHED_CONTEXT:
            return error1(ERR_INVALID_CAPABILITY, 0);
        default:
            break;
        }
    }
    switch (cap_type(inv->cap)) {
    case CAP_NULL:
    case CAP_ZOMBIE:
        return error1(ERR_INVALID_CAPABILITY, 0);
    case CAP_CNODE:
        return invoke_cnode(inv);
    case CAP_UNTYPED:
        return invoke_untyped(inv);
    case CAP_THREAD:
        return invoke_tcb(inv);
    case CAP_SCHED_CONTROL:
        return invoke_sched_control(inv);
    case CAP_SCHED_CONTEXT:
        return invoke_sched_context(inv);
    case CAP_DOMAIN:
        return invoke_domain(inv);
    case CAP_IRQ_CONTROL:
        return invoke_irq_control(inv);
    case CAP_IRQ_HANDLER:
        return invoke_irq_handler(inv);
    case CAP_FRAME:
    case CAP_PAGE_TABLE:
    case CAP_ASID_CONTROL:
    case CAP_ASID_POOL:
        return arch_invoke_invocation(inv);
    case CAP_NOTIFICATION:
        return invoke_notification(inv);
    case CAP_ENDPOINT:
    case CAP_REPLY:
        break; /* IPC: handle_invocation does it before decoding */
    }
    return error1(ERR_INVALID_CAPABILITY, 0);
}

/* How handle_invocation was reached (one word: fewer live registers). */
enum invocation_flags {
    INVOKE_CALL = 1,        /* Call: a reply is expected */
    INVOKE_BLOCKING = 2,    /* Call and Send: a failed lookup is a cap fault */
    INVOKE_FIRST_PHASE = 4, /* the send phase of ReplyRecv, NBSendRecv, NBSendWait */
    INVOKE_CAN_DONATE = 8,  /* an endpoint send may donate the caller's SC */
};

/* A preemption point found an interrupt pending: the call stops here and
 * t re-executes its ecall once the interrupt has been handled. */
static void stop_for_interrupt(struct tcb *t)
{
    t->ctx.pc = t->ctx.fault_ip;
    debug_counters[KAIROS_COUNTER_PREEMPTION_RESTARTS]++;
    handle_pending_interrupts();
}

/* The invocation proper, once the caps are looked up and the cap is not an
 * IPC object: decode and perform (invoke_by_type), then the reply. Returns
 * false if a long operation was preempted. */
static bool invoke_object(struct invocation *inv, unsigned flags)
{
    struct tcb *t = inv->caller;
    struct syscall_error err = cap_type(inv->cap) == CAP_ENDPOINT
                                   ? error1(ERR_INVALID_CAPABILITY, 0)
                                   : invoke_by_type(inv, flags & INVOKE_FIRST_PHASE);
    if (unlikely(err.code == ERR_PREEMPTED)) {
        stop_for_interrupt(t);
        return false;
    }
    if (!(flags & INVOKE_CALL))
        return true;
    if (err.code != ERR_NONE)
        reply_error(t, err);
    else if (t->state == THREAD_RUNNING || t->state == THREAD_RESTART)
        reply_success(t, inv->n_reply);
    return true;
}

/* The preemption point between the send and the receive phase of
 * ReplyRecv, NBSendRecv and NBSendWait, after any send phase but a reply
 * or an endpoint send that lent the caller's SC (Blackham's preemption
 * points, RTSS 2011: a composed call is two regions, not one). Returns true
 * if the receive follows now. If an interrupt is pending the call stops
 * here, as a preempted operation does: the thread re-executes its ecall
 * later, and `send_done` makes that do only the receive, so the send is
 * done once. A reply or a lending send is not followed by this poll: the
 * caller (a passive server) has given its SC away and could not run again
 * to do its receive. The choice is by the path the send took (the cap's
 * type, the send's result), so the WCET analysis sees it as two paths. A
 * send phase that takes the caller's SC some other way (an invocation that
 * unbinds or deletes its own SC) is followed by the poll: if it is taken,
 * the caller waits, stopped before its receive, until it has an SC again
 * (docs/ipc.md "Preemption between the phases"). */
static bool poll_between_phases(struct tcb *t)
{
    if (likely(!preemption_point()))
        return true;
    t->send_done = true;
    stop_for_interrupt(t);
    return false;
}

/* The caps of an invocation of the cap at cptr with the message in a1-a5
 * (and the IPC buffer): the invoked slot, and the extra caps with the
 * message's length and label in inv. Returns NULL if a lookup failed (a
 * cap fault if blocking; nothing for NBSend and send phases). */
static ALWAYS_INLINE cte_t *invocation_caps(struct tcb *t, cptr_t cptr, unsigned flags, struct invocation *inv)
{
    word_t info = t->ctx.x[REG_A1];
    cte_t *slot = cspace_walk(t->slots[TCB_SLOT_CSPACE].cap, cptr, CONFIG_MAX_CSPACE_DEPTH); /* lookup_slot, inline */
    if (!slot) {
        if (flags & INVOKE_BLOCKING)
            cap_fault(t, cptr, false);
        return NULL;
    }
    /* Every field is set once, here or in invocation_finish (a
     * zero-initialiser would be a memset of the whole structure on every
     * invocation); IPC sends and replies stop before the second part. The
     * IPC buffer is found
     * only when the message needs it: extra caps or more than the register
     * words. Without a buffer there are no extra caps and at most the
     * register words. */
    inv->caller = t;
    inv->label = msginfo_label(info);
    inv->length = msginfo_length(info);
    /* The extra-cap count lives in a local: inv's address is taken, so a
     * count kept only in inv would be reloaded after every lookup call and
     * the two loops below would lose their visible bound (at most
     * MSG_MAX_EXTRA_CAPS, from the message info's two bits). */
    word_t n_extra = msginfo_extra_caps(info);
    word_t *buf = NULL;
    if (n_extra != 0 || inv->length > NUM_MSG_REGISTERS) {
        buf = ipc_buffer_kptr(t);
        if (!buf) {
            n_extra = 0;
            if (inv->length > NUM_MSG_REGISTERS)
                inv->length = NUM_MSG_REGISTERS;
        }
    }
    /* Extra caps are looked up before decoding, as seL4 does: a failed
     * lookup is a cap fault (or nothing for NBSend), an empty slot is passed
     * on as a null cap for the decoder to reject. */
    inv->n_extra = n_extra;
    for (word_t i = 0; i < n_extra; i++) {
        cptr_t extra = buf[BUF_CAPS + i]; /* caps_or_badges[i] */
        cte_t *s = lookup_slot(t, extra);
        if (!s) {
            if (flags & INVOKE_BLOCKING)
                cap_fault(t, extra, false);
            return NULL;
        }
        inv->extra_slot[i] = s;
        inv->extra[i] = s->cap;
    }
    return slot;
}

/* The rest of inv for an object invocation (invoke_object); IPC sends and
 * replies do not read it, so they return before it is written. */
static ALWAYS_INLINE void invocation_finish(struct invocation *inv, cte_t *slot, unsigned flags)
{
    for (word_t i = inv->n_extra; i < MSG_MAX_EXTRA_CAPS; i++) {
        inv->extra_slot[i] = NULL;
        inv->extra[i] = cap_null();
    }
    inv->slot = slot;
    inv->cap = slot->cap;
    inv->call = flags & INVOKE_CALL;
    inv->n_reply = 0;
}

/* Invoke the cap at cptr (Call, Send, NBSend). Returns false if a long
 * operation was preempted: the system call will be re-executed. */
static bool handle_invocation(struct tcb *t, cptr_t cptr, unsigned flags)
{
    struct invocation inv;
    cte_t *slot = invocation_caps(t, cptr, flags, &inv);
    if (!slot)
        return true;
    /* IPC (G5): an endpoint send, or a reply. Neither writes an invocation
     * reply, except the empty success of Call on a reply cap (c.2). */
    cap_t c = slot->cap;
    if (cap_type(c) == CAP_ENDPOINT && (cap_rights(c) & RIGHT_WRITE)) {
        endpoint_send(t, c, flags & INVOKE_BLOCKING, flags & INVOKE_CALL, flags & INVOKE_CAN_DONATE);
        return true;
    }
    if (cap_type(c) == CAP_REPLY) {
        do_reply_transfer(t, reply_from_cap(c), reply_cap_can_grant(c));
        if (flags & INVOKE_CALL)
            reply_success(t, 0);
        return true;
    }
    invocation_finish(&inv, slot, flags);
    return invoke_object(&inv, flags);
}

/* The receive phase (seL4's handleRecv) on the cap at a0. A notification
 * needs Read and must be unbound or bound to the receiver; the reply
 * register is ignored for it (seL4's handleRecv). An endpoint needs Read
 * and, except for Wait, NBWait and NBSendWait, a reply cap in a6. Anything
 * else, an empty slot or a failed lookup is a cap fault in the receive
 * phase (Addr = the cptr that failed). */
static void handle_recv(struct tcb *t, word_t number, bool blocking)
{
    cptr_t cptr = t->ctx.x[REG_A0];
    cte_t *slot = lookup_slot(t, cptr);
    if (!slot) {
        cap_fault(t, cptr, true);
        return;
    }
    cap_t c = slot->cap;
    switch (cap_type(c)) {
    case CAP_NOTIFICATION: {
        struct notification *n = notification_from_cap(c);
        if (!(cap_rights(c) & RIGHT_READ) || (n->bound_tcb && n->bound_tcb != t)) {
            cap_fault(t, cptr, true);
            return;
        }
        notification_receive(t, n, blocking);
        return;
    }
    case CAP_ENDPOINT: {
        if (!(cap_rights(c) & RIGHT_READ)) {
            cap_fault(t, cptr, true);
            return;
        }
        struct reply *reply = NULL;
        bool with_reply = (sword_t)number != seL4_SysWait && (sword_t)number != seL4_SysNBWait &&
                          (sword_t)number != seL4_SysNBSendWait;
        if (with_reply) {
            cptr_t rptr = t->ctx.x[REG_A6];
            cte_t *rslot = lookup_slot(t, rptr);
            if (!rslot || cap_type(rslot->cap) != CAP_REPLY) {
                cap_fault(t, rptr, true);
                return;
            }
            reply = reply_from_cap(rslot->cap);
        }
        endpoint_receive(t, c, reply, blocking);
        return;
    }
    default:
        cap_fault(t, cptr, true);
        return;
    }
}

/* ReplyRecv, NBSendRecv and NBSendWait: the send phase on the cap at cptr
 * (handle_invocation's cases for a non-blocking send that never replies),
 * then the receive. The poll between the phases follows every send phase
 * that completed, except a reply and an endpoint send that lent the
 * caller's SC. The reply and the endpoint send are done here rather than
 * in handle_invocation, and each way into the receive is its own branch,
 * so that which sends skip the poll is a matter of the path taken: the
 * WCET analysis may share one analysis of handle_invocation among its
 * callers (losing which call it serves) and does not tie a returned value
 * to the path that returned it. Any other object is invoked through
 * handle_invocation, which looks its caps up again (rare in a send phase),
 * so that the large tree of object invocations keeps a single caller. A
 * thread whose call stopped at the poll (send_done) goes straight to its
 * receive. A failed lookup or a refused cap does nothing, as in seL4's
 * first phase, and the receive follows. */
static void send_receive(struct tcb *t, word_t number, cptr_t cptr)
{
    const unsigned flags = INVOKE_FIRST_PHASE | INVOKE_CAN_DONATE;
    struct invocation inv;
    cte_t *slot = NULL;
    if (unlikely(t->send_done))
        t->send_done = false;
    else
        slot = invocation_caps(t, cptr, flags, &inv);
    bool receive = true;
    if (slot) { /* none: the send was done before the poll, or a lookup failed */
        cap_t c = slot->cap;
        if (cap_type(c) == CAP_REPLY)
            do_reply_transfer(t, reply_from_cap(c), reply_cap_can_grant(c));
        else if (cap_type(c) == CAP_ENDPOINT && (cap_rights(c) & RIGHT_WRITE))
            receive = endpoint_send(t, c, false, false, true) || poll_between_phases(t);
        else
            receive = handle_invocation(t, cptr, flags) && poll_between_phases(t);
    }
    if (receive)
        handle_recv(t, number, true);
}

static void unknown_syscall(struct tcb *t, word_t number)
{
    struct fault f = fault_new(FAULT_UNKNOWN_SYSCALL, t->ctx.fault_ip);
    f.number = number;
    handle_fault(t, &f);
}

#if CONFIG_DEBUG_BUILD
static void debug_name_thread(struct tcb *t)
{
    struct lookup_result r = lookup_cap_slot(t, t->ctx.x[REG_A0]);
    word_t *buf = ipc_buffer_kptr(t);
    /* seL4 halts the system on a bad request; Kairos ignores it instead. */
    if (!r.slot || cap_type(r.slot->cap) != CAP_THREAD || !buf)
        return;
    thread_set_name(tcb_from_paddr(cap_obj(r.slot->cap)), (const char *)&buf[BUF_MSG], MSG_MAX_LENGTH * sizeof(word_t) - 1);
}
#endif

void handle_syscall(word_t number)
{
    struct tcb *t = current_thread;
    entry_stamp_begin(number, t->ctx.x[REG_A1] >> 12);
    if ((sword_t)number >= seL4_SysYield) /* not the debug calls: a printf is one per character */
        TRACE(TRACE_SYSCALL, t, number);
    /* Budget used up: the entry ends here, the thread goes off the CPU and
     * re-executes the ecall (pc is still FaultIP) once its budget is
     * replenished. */
    sched_entry();
    t->ctx.pc = t->ctx.fault_ip + 4; /* NextIP: past the ecall */
    switch ((sword_t)number) {
    case seL4_SysCall:
        handle_invocation(t, t->ctx.x[REG_A0], INVOKE_CALL | INVOKE_BLOCKING | INVOKE_CAN_DONATE);
        break;
    case seL4_SysSend:
        handle_invocation(t, t->ctx.x[REG_A0], INVOKE_BLOCKING);
        break;
    case seL4_SysNBSend:
        handle_invocation(t, t->ctx.x[REG_A0], 0);
        break;
    case seL4_SysRecv:
    case seL4_SysWait:
        handle_recv(t, number, true);
        break;
    case seL4_SysNBRecv:
    case seL4_SysNBWait:
        handle_recv(t, number, false);
        break;
    /* Send phase, then receive (seL4's handleSyscall): the send is non-blocking
     * and never replies (a failed lookup or a decode error is silent). A
     * preempted send restarts the whole call; a send that completed is
     * followed by a preemption point unless it was a reply or lent the SC,
     * and a call stopped there does only its receive when re-executed
     * (send_receive). */
    case seL4_SysReplyRecv:
    case seL4_SysNBSendWait:
        send_receive(t, number, t->ctx.x[REG_A6]);
        break;
    case seL4_SysNBSendRecv:
        send_receive(t, number, t->ctx.x[REG_T0]);
        break;
    case seL4_SysYield:
        sched_yield(t); /* round robin: behind its equals; sporadic: gives up the head refill */
        break;
#if CONFIG_DEBUG_BUILD
    case seL4_SysDebugPutChar:
        kputc((char)t->ctx.x[REG_A0]);
        break;
    case seL4_SysDebugDumpScheduler:
        debug_dump_scheduler();
        break;
    case seL4_SysDebugHalt:
        trace_dump();
        kprintf("halting: debug halt requested by thread \"%s\"\n", thread_name(t));
        kernel_halt(false);
    case seL4_SysDebugCapIdentify: {
        struct lookup_result r = lookup_cap_slot(t, t->ctx.x[REG_A0]);
        t->ctx.x[REG_A0] = r.slot ? (word_t)cap_type(r.slot->cap) : 0;
        break;
    }
    case seL4_SysDebugSnapshot:
        break; /* no capDL dump; the call is accepted and changes nothing */
    case seL4_SysDebugNameThread:
        debug_name_thread(t);
        break;
    case KAIROS_SYS_DEBUG_FASTPATH: {
        /* Kairos-specific, debug builds only: a0 = 1 on, 0 off; returns the
         * previous setting (the equivalence tests run IPCs both ways). */
        bool was = fastpath_enabled;
        fastpath_enabled = CONFIG_FASTPATH && t->ctx.x[REG_A0] != 0;
        t->ctx.x[REG_A0] = was;
        break;
    }
    case KAIROS_SYS_DEBUG_COUNTER:
        /* Kairos-specific, debug builds only: a0 = counter id, returns its value. */
        t->ctx.x[REG_A0] = t->ctx.x[REG_A0] < NUM_DEBUG_COUNTERS ? debug_counters[t->ctx.x[REG_A0]]
                                                                 : sched_debug_counter(t->ctx.x[REG_A0]);
        break;
#endif
    default:
        /* DebugSendIPI, which a single-core seL4 does not compile, and
         * every number outside the ABI. */
        unknown_syscall(t, number);
        break;
    }
    /* DebugPutChar and DebugCapIdentify change no kernel state; skipping
     * them keeps the check flavour usable for programs that print a lot. */
    if ((sword_t)number != seL4_SysDebugPutChar && (sword_t)number != seL4_SysDebugCapIdentify)
        syscall_check_invariants();
    kernel_exit();
}

void syscall_check_invariants(void)
{
#if CONFIG_INVARIANT_CHECKS
    entry_stamp_pause();
    u64 check_start = machine_time();
    invariants_check("a system call");
    /* The checker (check flavour only) is not part of the kernel's work:
     * its time is charged to no scheduling context. */
    sched_skip_time(machine_time() - check_start);
    entry_stamp_resume();
#endif
}
