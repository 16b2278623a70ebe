/* Thread control blocks: the invocations on a TCB cap (labels 2-17) and TCB
 * finalisation. Every decoder makes seL4's checks in seL4's order (seL4's
 * decodeTCBInvocation and the decode functions it calls) and changes
 * nothing; the perform steps cannot fail, except that deleting a cap the TCB
 * held may be preempted, in which case the whole invocation is restarted and
 * re-decoded (as in seL4). */
#include <arch/vspace.h>
#include <cdt.h>
#include <invocation.h>
#include <kernel.h>
#include <notification.h>
#include <objecttype.h>
#include <preemption.h>
#include <schedcontext.h>
#include <thread.h>

/* seL4_UserContext order: 16 "frame" registers (pc, ra, sp, gp, s0-s11),
 * then 16 "integer" registers (a0-a7, t0-t6, tp). Index 0 stands for the
 * restart pc (FaultIP), which is not a general register. */
#define NUM_FRAME_REGS 16
#define NUM_GP_REGS 16
#define NUM_USER_REGS (NUM_FRAME_REGS + NUM_GP_REGS)
static const u8 user_reg_order[NUM_USER_REGS] = {
    0,      REG_RA, REG_SP, REG_GP, REG_S0, REG_S1, REG_S2, REG_S3,  REG_S4,  REG_S5, REG_S6,
    REG_S7, REG_S8, REG_S9, REG_S10, REG_S11, REG_A0, REG_A1, REG_A2, REG_A3, REG_A4, REG_A5,
    REG_A6, REG_A7, REG_T0, REG_T1, REG_T2, REG_T3, REG_T4, REG_T5,  REG_T6,  REG_TP,
};

/* TCBs in existence, the root thread's included: at most CONFIG_MAX_THREADS
 * (tcb_room, below). */
static word_t threads_alive;
#if CONFIG_DEBUG_BUILD
static word_t threads_alive_max; /* KAIROS_COUNTER_THREADS_MAX */
#endif

static word_t get_user_reg(const struct tcb *t, word_t k)
{
    return k == 0 ? t->ctx.fault_ip : t->ctx.x[user_reg_order[k]];
}

/* A register written from outside: a call stopped between its phases
 * (send_done) is re-executed whole with what is now in the registers, as
 * in seL4, where the thread would have been waiting in its receive. */
static void set_user_reg(struct tcb *t, word_t k, word_t v)
{
    t->send_done = false;
    if (k == 0)
        t->ctx.fault_ip = v;
    else
        t->ctx.x[user_reg_order[k]] = v;
}

/* seL4's setNextPC(getRestartPC()): after its registers were written, a
 * thread continues at the (possibly new) restart pc. */
static void restart_at_fault_ip(struct tcb *t) { t->ctx.pc = t->ctx.fault_ip; }

static struct tcb *cap_tcb(cap_t c) { return tcb_from_paddr(cap_obj(c)); }

/* A fault or timeout handler must be an endpoint we may send to with Grant
 * or GrantReply (so the reply can come back), or nothing. */
static bool valid_fault_handler(cap_t c)
{
    switch (cap_type(c)) {
    case CAP_NULL:
        return true;
    case CAP_ENDPOINT:
        return (cap_rights(c) & RIGHT_WRITE) && (cap_rights(c) & (RIGHT_GRANT | RIGHT_GRANT_REPLY));
    default:
        return false;
    }
}

/* seL4's slotCapLongRunningDelete: would deleting this slot's cap start a
 * long (preemptible) deletion? Such slots cannot be replaced by
 * Configure/SetSpace. */
static bool long_running_delete(const cte_t *slot)
{
    cap_t c = slot->cap;
    if (cap_is_null(c) || !cdt_is_final_cap(slot))
        return false;
    switch (cap_type(c)) {
    case CAP_THREAD:
    case CAP_CNODE:
    case CAP_ZOMBIE:
        return true;
    default:
        return false;
    }
}

static bool valid_vtable_root(cap_t c) { return cap_type(c) == CAP_PAGE_TABLE && cap_is_mapped(c); }

/* The decoded form of the caps Configure, SetSpace, SetIPCBuffer,
 * SetTimeoutEndpoint and SetSchedParams install into a TCB. A source slot of
 * NULL means "leave that TCB slot alone". */
struct tcb_caps {
    cte_t *cspace_src, *vspace_src, *buffer_src, *fault_src, *timeout_src;
    cap_t cspace, vspace, buffer, fault, timeout;
    bool set_space, set_buffer, set_fault, set_timeout;
    vaddr_t buffer_addr;
};

/* A TCB invocation, decoded: the target and what the perform step needs.
 * Which fields are set depends on the label (each decoder says). */
struct tcb_op {
    struct tcb *target;
    word_t flags;       /* Read/Write/CopyRegisters: the flags word */
    word_t count;       /* Read/WriteRegisters: registers to transfer */
    struct tcb *src;    /* CopyRegisters: the source thread */
    word_t value;       /* SetPriority/SetMCPriority, SetTLSBase, SetFlags (the new flags) */
    word_t mcp, prio;   /* SetSchedParams */
    struct sched_context *sc;           /* SetSchedParams: NULL unbinds */
    struct notification *notification;  /* BindNotification */
    struct tcb_caps caps;               /* Configure, SetSpace, SetIPCBuffer, SetTimeoutEndpoint, SetSchedParams */
};

/* No cap to install: only the flags and the buffer address are read
 * unconditionally by perform_tcb_caps; each other field is read only under
 * its flag. Clearing the whole struct made GCC call memset, whose byte loop
 * the WCET analysis charges on every TCB-configure path (docs/wcet.md). */
static void tcb_caps_none(struct tcb_caps *tc)
{
    tc->set_space = tc->set_buffer = tc->set_fault = tc->set_timeout = false;
    tc->buffer_addr = 0;
}

/* Derive and check an IPC-buffer frame cap (Configure step 2, SetIPCBuffer). */
static struct syscall_error decode_ipc_buffer(struct tcb_caps *tc, vaddr_t addr, cte_t *slot, cap_t c)
{
    tc->set_buffer = true;
    tc->buffer_addr = addr;
    if (addr == 0) {
        tc->buffer_src = NULL; /* no buffer: the cap is not looked at */
        return no_error();
    }
    struct derive_result d = derive_cap(slot, c);
    if (d.status != ERR_NONE)
        return error0(d.status);
    if (!frame_cap_ok_for_ipc_buffer(d.cap))
        return error0(ERR_ILLEGAL_OPERATION);
    if (!IS_ALIGNED(addr, IPC_BUFFER_SIZE_BITS))
        return error0(ERR_ALIGNMENT_ERROR);
    tc->buffer_src = slot;
    tc->buffer = d.cap;
    return no_error();
}

/* CSpace and VSpace roots (Configure steps 3-5, SetSpace steps 2-4). */
static struct syscall_error decode_space(struct tcb_caps *tc, struct tcb *target, word_t cspace_data,
                                         cte_t *cslot, cap_t ccap, cte_t *vslot, cap_t vcap)
{
    if (long_running_delete(&target->slots[TCB_SLOT_CSPACE]) || long_running_delete(&target->slots[TCB_SLOT_VSPACE]))
        return error0(ERR_ILLEGAL_OPERATION);
    if (cspace_data != 0)
        ccap = update_cap_data(false, cspace_data, ccap);
    struct derive_result d = derive_cap(cslot, ccap);
    if (d.status != ERR_NONE)
        return error0(d.status);
    if (cap_type(d.cap) != CAP_CNODE)
        return error0(ERR_ILLEGAL_OPERATION);
    tc->cspace = d.cap;
    tc->cspace_src = cslot;
    /* The VSpace data word has no effect on RISC-V page-table caps. */
    d = derive_cap(vslot, vcap);
    if (d.status != ERR_NONE)
        return error0(d.status);
    if (!valid_vtable_root(d.cap))
        return error0(ERR_ILLEGAL_OPERATION);
    tc->vspace = d.cap;
    tc->vspace_src = vslot;
    tc->set_space = true;
    return no_error();
}

/* One slot a TCB-caps invocation changes: the new cap and its source
 * (NULL: the slot is only emptied), in seL4's order (fault handler, timeout
 * handler, CSpace root, VSpace root, IPC buffer). */
struct tcb_cap_step {
    enum tcb_slot index;
    cap_t cap;
    cte_t *src;
};

/* Did a run of this call that stopped at a preemption point already do this
 * step? The slot holds the new cap, right after its source in the
 * derivation list where the insertion put it (or is empty, for a step that
 * only empties it), and for the IPC buffer the address is set. */
static bool step_done(const struct tcb *target, const struct tcb_cap_step *st, vaddr_t buffer_addr)
{
    const cte_t *dest = &target->slots[st->index];
    if (st->index == TCB_SLOT_IPC_BUFFER && target->ipc_buffer != buffer_addr)
        return false;
    if (!st->src || cap_is_null(st->cap))
        return cap_is_null(dest->cap);
    return dest->cap.w0 == st->cap.w0 && dest->cap.w1 == st->cap.w1 && mdb_prev(dest) == st->src;
}

/* Add a step to the list, unless it and every step before it are done: a
 * re-executed call goes on after the last step done. Inlined: as a call its
 * pointer arguments (the list, its count, the flag, the step) would be four
 * objects of unknown address to the WCET analysis, each access a possible
 * miss, where inside perform_tcb_caps they are lines of its own stack frame
 * (docs/wcet.md "Interrupt latency"). */
static ALWAYS_INLINE void add_step(struct tcb_cap_step *steps, u32 *n, bool *skipping, const struct tcb *target,
                     struct tcb_cap_step st, vaddr_t buffer_addr)
{
    if (*skipping && step_done(target, &st, buffer_addr))
        return;
    *skipping = false;
    steps[(*n)++] = st;
}

/* seL4's installTCBCap: empty the TCB's slot, then copy the new cap in as a
 * child of its source, unless deleting the old cap removed the source cap or
 * the TCB cap being invoked (then the TCB keeps an empty slot). */
static struct syscall_error install_tcb_cap(const struct invocation *inv, struct tcb *target, enum tcb_slot index,
                                            cap_t new_cap, cte_t *src)
{
    cte_t *dest = &target->slots[index];
    struct syscall_error e = cte_delete(dest, true);
    if (e.code != ERR_NONE)
        return e;
    if (src && !cap_is_null(new_cap) && same_object_as(new_cap, src->cap) && same_object_as(inv->cap, inv->slot->cap))
        cte_insert(new_cap, src, dest);
    return no_error();
}

/* The perform step of the cap-installing invocations: the steps one after
 * the other, with a preemption point between two steps (Blackham ch. 5):
 * each step may finalise the last cap to an object, so without it one
 * region would hold up to five finalisations. Can stop only there (or in a
 * preempted delete); the call is then re-executed as any preempted one and
 * re-decoded; it skips the steps already done (step_done), so every stop
 * follows a step that stays done and the call always gets further. */
static struct syscall_error perform_tcb_caps(const struct invocation *inv, struct tcb *target, const struct tcb_caps *tc)
{
    struct tcb_cap_step steps[5];
    u32 n = 0;
    bool skipping = true;
    vaddr_t addr = tc->buffer_addr;
    if (tc->set_fault)
        add_step(steps, &n, &skipping, target, (struct tcb_cap_step){TCB_SLOT_FAULT_HANDLER, tc->fault, tc->fault_src},
                 addr);
    if (tc->set_timeout)
        add_step(steps, &n, &skipping, target,
                 (struct tcb_cap_step){TCB_SLOT_TIMEOUT_HANDLER, tc->timeout, tc->timeout_src}, addr);
    if (tc->set_space) {
        add_step(steps, &n, &skipping, target, (struct tcb_cap_step){TCB_SLOT_CSPACE, tc->cspace, tc->cspace_src},
                 addr);
        add_step(steps, &n, &skipping, target, (struct tcb_cap_step){TCB_SLOT_VSPACE, tc->vspace, tc->vspace_src},
                 addr);
    }
    if (tc->set_buffer)
        add_step(steps, &n, &skipping, target,
                 (struct tcb_cap_step){TCB_SLOT_IPC_BUFFER, tc->buffer, tc->buffer_src}, addr);
    if (n == 0)
        return no_error();
    /* n <= 5; the constant in the condition shows the bound to the analyser. */
    for (u32 k = 0; k < 5;) {
        const struct tcb_cap_step *st = &steps[k];
        struct syscall_error e;
        if (st->index == TCB_SLOT_IPC_BUFFER) {
            e = cte_delete(&target->slots[TCB_SLOT_IPC_BUFFER], true);
            if (e.code != ERR_NONE)
                return e;
            target->ipc_buffer = tc->buffer_addr;
            if (st->src && same_object_as(st->cap, st->src->cap) && same_object_as(inv->cap, inv->slot->cap))
                cte_insert(st->cap, st->src, &target->slots[TCB_SLOT_IPC_BUFFER]);
        } else {
            e = install_tcb_cap(inv, target, st->index, st->cap, st->src);
            if (e.code != ERR_NONE)
                return e;
        }
        if (++k == n)
            break;
        if (preemption_point())
            return preempted();
    }
    return no_error();
}

/* ---- one decoder and one perform step per label ---- */

static struct syscall_error decode_read_registers(const struct invocation *inv, struct tcb_op *op)
{
    if (inv->length < 2)
        return error0(ERR_TRUNCATED_MESSAGE);
    op->flags = get_mr(inv->caller, 0);
    op->count = get_mr(inv->caller, 1);
    if (op->count < 1 || op->count > NUM_USER_REGS)
        return range_error(1, NUM_USER_REGS);
    if (op->target == inv->caller)
        return error0(ERR_ILLEGAL_OPERATION);
    return no_error();
}

/* Cannot fail. */
static void perform_read_registers(struct invocation *inv, const struct tcb_op *op)
{
    struct tcb *caller = inv->caller, *target = op->target;
    word_t count = op->count;
    if (op->flags & 1)
        thread_suspend(target);
    if (inv->call) {
        /* Without an IPC buffer only MR0-MR3 exist; reply_success then
         * reports length 4. */
        /* count <= 32 was checked; the constant bound makes it visible to the analyser. */
        for (word_t k = 0; k < NUM_USER_REGS && k < count; k++)
            set_mr(caller, k, get_user_reg(target, k));
        inv->n_reply = count;
    }
}

static struct syscall_error decode_write_registers(const struct invocation *inv, struct tcb_op *op)
{
    if (inv->length < 2)
        return error0(ERR_TRUNCATED_MESSAGE);
    op->flags = get_mr(inv->caller, 0);
    op->count = get_mr(inv->caller, 1);
    if (inv->length - 2 < op->count)
        return error0(ERR_TRUNCATED_MESSAGE);
    if (op->target == inv->caller)
        return error0(ERR_ILLEGAL_OPERATION);
    return no_error();
}

/* Cannot fail. */
static void perform_write_registers(const struct invocation *inv, const struct tcb_op *op)
{
    struct tcb *target = op->target, *caller = inv->caller;
    word_t count = op->count; /* a local: the stores below cannot change it */
    /* seL4 writes at most the 32 registers it knows (count > 32 is no error). */
    for (word_t r = 0; r < NUM_USER_REGS && r < count; r++)
        set_user_reg(target, r, get_mr(caller, 2 + r));
    restart_at_fault_ip(target);
    if (op->flags & 1)
        thread_resume(target);
}

static struct syscall_error decode_copy_registers(const struct invocation *inv, struct tcb_op *op)
{
    if (inv->length < 1 || inv->n_extra < 1)
        return error0(ERR_TRUNCATED_MESSAGE);
    if (cap_type(inv->extra[0]) != CAP_THREAD)
        return error1(ERR_INVALID_CAPABILITY, 1);
    op->src = cap_tcb(inv->extra[0]);
    op->flags = get_mr(inv->caller, 0);
    return no_error();
}

/* Cannot fail. seL4's order: suspend source, resume target, frame, integer. */
static void perform_copy_registers(const struct tcb_op *op)
{
    struct tcb *src = op->src, *dest = op->target;
    if (op->flags & 1)
        thread_suspend(src);
    if (op->flags & 2)
        thread_resume(dest);
    if (op->flags & 4) {
        for (word_t k = 0; k < NUM_FRAME_REGS; k++)
            set_user_reg(dest, k, get_user_reg(src, k));
        restart_at_fault_ip(dest);
    }
    if (op->flags & 8) {
        for (word_t k = NUM_FRAME_REGS; k < NUM_USER_REGS; k++)
            set_user_reg(dest, k, get_user_reg(src, k));
    }
}

static struct syscall_error decode_configure(const struct invocation *inv, struct tcb_op *op)
{
    struct tcb *caller = inv->caller;
    if (inv->length < 3 || inv->n_extra < 3)
        return error0(ERR_TRUNCATED_MESSAGE);
    word_t cspace_data = get_mr(caller, 0);
    word_t buffer = get_mr(caller, 2);
    tcb_caps_none(&op->caps);
    struct syscall_error e = decode_ipc_buffer(&op->caps, buffer, inv->extra_slot[2], inv->extra[2]);
    if (e.code != ERR_NONE)
        return e;
    return decode_space(&op->caps, op->target, cspace_data, inv->extra_slot[0], inv->extra[0], inv->extra_slot[1],
                        inv->extra[1]);
}

static struct syscall_error decode_set_space(const struct invocation *inv, struct tcb_op *op)
{
    if (inv->length < 2 || inv->n_extra < 3)
        return error0(ERR_TRUNCATED_MESSAGE);
    word_t cspace_data = get_mr(inv->caller, 0);
    tcb_caps_none(&op->caps);
    struct syscall_error e = decode_space(&op->caps, op->target, cspace_data, inv->extra_slot[1], inv->extra[1],
                                          inv->extra_slot[2], inv->extra[2]);
    if (e.code != ERR_NONE)
        return e;
    if (!valid_fault_handler(inv->extra[0]))
        return error1(ERR_INVALID_CAPABILITY, 1);
    op->caps.set_fault = true;
    op->caps.fault = inv->extra[0];
    op->caps.fault_src = inv->extra_slot[0];
    return no_error();
}

static struct syscall_error decode_set_ipc_buffer(const struct invocation *inv, struct tcb_op *op)
{
    if (inv->length < 1 || inv->n_extra < 1)
        return error0(ERR_TRUNCATED_MESSAGE);
    tcb_caps_none(&op->caps);
    return decode_ipc_buffer(&op->caps, get_mr(inv->caller, 0), inv->extra_slot[0], inv->extra[0]);
}

static struct syscall_error decode_set_timeout_endpoint(const struct invocation *inv, struct tcb_op *op)
{
    if (inv->n_extra < 1)
        return error0(ERR_TRUNCATED_MESSAGE);
    if (!valid_fault_handler(inv->extra[0]))
        return error1(ERR_INVALID_CAPABILITY, 1);
    tcb_caps_none(&op->caps);
    op->caps.set_timeout = true;
    op->caps.timeout = inv->extra[0];
    op->caps.timeout_src = inv->extra_slot[0];
    return no_error();
}

/* Priority and MCP are limited by an explicitly named authority thread's
 * MCP (no confused deputy: the caller's own MCP is not what counts). */
static struct syscall_error check_prio(word_t prio, const struct tcb *auth)
{
    if (prio > auth->mcp)
        return range_error(0, auth->mcp);
    return no_error();
}

/* SetPriority and SetMCPriority: the value in op->value. */
static struct syscall_error decode_set_priority(const struct invocation *inv, struct tcb_op *op)
{
    if (inv->length < 1 || inv->n_extra < 1)
        return error0(ERR_TRUNCATED_MESSAGE);
    if (cap_type(inv->extra[0]) != CAP_THREAD)
        return error1(ERR_INVALID_CAPABILITY, 1);
    op->value = get_mr(inv->caller, 0);
    return check_prio(op->value, cap_tcb(inv->extra[0]));
}

static struct syscall_error decode_set_sched_params(const struct invocation *inv, struct tcb_op *op)
{
    struct tcb *caller = inv->caller;
    struct tcb *target = op->target;
    if (inv->length < 2 || inv->n_extra < 3)
        return error0(ERR_TRUNCATED_MESSAGE);
    if (cap_type(inv->extra[0]) != CAP_THREAD)
        return error1(ERR_INVALID_CAPABILITY, 1);
    struct tcb *auth = cap_tcb(inv->extra[0]);
    op->mcp = get_mr(caller, 0);
    op->prio = get_mr(caller, 1);
    struct syscall_error e = check_prio(op->mcp, auth);
    if (e.code != ERR_NONE)
        return e;
    e = check_prio(op->prio, auth);
    if (e.code != ERR_NONE)
        return e;
    op->sc = NULL;
    cap_t sc_cap = inv->extra[1];
    switch (cap_type(sc_cap)) {
    case CAP_SCHED_CONTEXT:
        op->sc = sc_from_cap(sc_cap);
        if (op->sc != target->sc) {
            if (target->sc || op->sc->tcb)
                return error0(ERR_ILLEGAL_OPERATION);
            if (thread_is_blocked(target) && !sc_released(op->sc))
                return error0(ERR_ILLEGAL_OPERATION);
        }
        break;
    case CAP_NULL:
        if (target == caller)
            return error0(ERR_ILLEGAL_OPERATION);
        break;
    default:
        return error1(ERR_INVALID_CAPABILITY, 2);
    }
    if (!valid_fault_handler(inv->extra[2]))
        return error1(ERR_INVALID_CAPABILITY, 3);
    tcb_caps_none(&op->caps);
    op->caps.set_fault = true;
    op->caps.fault = inv->extra[2];
    op->caps.fault_src = inv->extra_slot[2];
    return no_error();
}

/* Can stop only at a preemption point (perform_tcb_caps), before the
 * priorities and the binding change. */
static struct syscall_error perform_set_sched_params(const struct invocation *inv, const struct tcb_op *op)
{
    struct tcb *target = op->target;
    struct syscall_error e = perform_tcb_caps(inv, target, &op->caps);
    if (e.code != ERR_NONE)
        return e;
    target->mcp = (u32)op->mcp;
    thread_set_priority(target, (u32)op->prio);
    if (op->sc && op->sc != target->sc)
        sched_context_bind_tcb(op->sc, target);
    else if (!op->sc && target->sc)
        sched_context_unbind_tcb(target->sc);
    return no_error();
}

static struct syscall_error decode_bind_notification(const struct invocation *inv, struct tcb_op *op)
{
    if (inv->n_extra < 1)
        return error0(ERR_TRUNCATED_MESSAGE);
    if (op->target->bound_notification)
        return error0(ERR_ILLEGAL_OPERATION);
    cap_t c = inv->extra[0];
    if (cap_type(c) != CAP_NOTIFICATION)
        return error0(ERR_ILLEGAL_OPERATION);
    if (!(cap_rights(c) & RIGHT_READ))
        return error0(ERR_ILLEGAL_OPERATION);
    struct notification *n = notification_from_cap(c);
    if (!tqueue_empty(&n->queue) || n->bound_tcb)
        return error0(ERR_ILLEGAL_OPERATION);
    op->notification = n;
    return no_error();
}

static struct syscall_error decode_unbind_notification(const struct tcb_op *op)
{
    if (!op->target->bound_notification)
        return error0(ERR_ILLEGAL_OPERATION);
    return no_error();
}

static struct syscall_error decode_set_tls_base(const struct invocation *inv, struct tcb_op *op)
{
    if (inv->length < 1)
        return error0(ERR_TRUNCATED_MESSAGE);
    op->value = get_mr(inv->caller, 0);
    return no_error();
}

/* SetFlags: op->value is the thread's new flags word. */
static struct syscall_error decode_set_flags(const struct invocation *inv, struct tcb_op *op)
{
    if (inv->length < 2)
        return error0(ERR_TRUNCATED_MESSAGE);
    word_t clear = get_mr(inv->caller, 0);
    word_t set = get_mr(inv->caller, 1);
    op->value = (op->target->flags & ~clear) | (set & TCB_FLAG_FPU_DISABLED);
    return no_error();
}

/* Cannot fail. */
static void perform_set_flags(struct invocation *inv, const struct tcb_op *op)
{
    thread_set_flags(op->target, op->value);
    if (inv->call) { /* Send and NBSend write nothing back */
        set_mr(inv->caller, 0, op->value);
        inv->n_reply = 1;
    }
}

/* Each label: its decoder, then (if that succeeded) its perform step, in
 * one switch so that an invocation costs one dispatch. */
struct syscall_error invoke_tcb(struct invocation *inv)
{
    struct tcb_op op;
    struct syscall_error e;
    op.target = cap_tcb(inv->cap);
    switch (inv->label) {
    case INV_TCB_READ_REGISTERS:
        e = decode_read_registers(inv, &op);
        if (e.code == ERR_NONE)
            perform_read_registers(inv, &op);
        return e;
    case INV_TCB_WRITE_REGISTERS:
        e = decode_write_registers(inv, &op);
        if (e.code == ERR_NONE)
            perform_write_registers(inv, &op);
        return e;
    case INV_TCB_COPY_REGISTERS:
        e = decode_copy_registers(inv, &op);
        if (e.code == ERR_NONE)
            perform_copy_registers(&op);
        return e;
    case INV_TCB_CONFIGURE:
        e = decode_configure(inv, &op);
        break;
    case INV_TCB_SET_PRIORITY:
        e = decode_set_priority(inv, &op);
        if (e.code == ERR_NONE)
            thread_set_priority(op.target, (u32)op.value);
        return e;
    case INV_TCB_SET_MC_PRIORITY:
        e = decode_set_priority(inv, &op);
        if (e.code == ERR_NONE)
            op.target->mcp = (u32)op.value;
        return e;
    case INV_TCB_SET_SCHED_PARAMS:
        e = decode_set_sched_params(inv, &op);
        if (e.code == ERR_NONE)
            e = perform_set_sched_params(inv, &op);
        return e;
    case INV_TCB_SET_TIMEOUT_ENDPOINT:
        e = decode_set_timeout_endpoint(inv, &op);
        break;
    case INV_TCB_SET_IPC_BUFFER:
        e = decode_set_ipc_buffer(inv, &op);
        break;
    case INV_TCB_SET_SPACE:
        e = decode_set_space(inv, &op);
        break;
    case INV_TCB_SUSPEND:
        thread_suspend(op.target); /* nothing to check */
        return no_error();
    case INV_TCB_RESUME:
        thread_resume(op.target); /* nothing to check */
        return no_error();
    case INV_TCB_BIND_NOTIFICATION:
        e = decode_bind_notification(inv, &op);
        if (e.code == ERR_NONE)
            notification_bind_tcb(op.notification, op.target);
        return e;
    case INV_TCB_UNBIND_NOTIFICATION:
        e = decode_unbind_notification(&op);
        if (e.code == ERR_NONE)
            notification_unbind_tcb(op.target);
        return e;
    case INV_TCB_SET_TLS_BASE:
        e = decode_set_tls_base(inv, &op);
        if (e.code == ERR_NONE)
            op.target->ctx.x[REG_TP] = op.value;
        return e;
    case INV_TCB_SET_FLAGS:
        e = decode_set_flags(inv, &op);
        if (e.code == ERR_NONE)
            perform_set_flags(inv, &op);
        return e;
    default:
        return error0(ERR_ILLEGAL_OPERATION);
    }
    /* Configure, SetTimeoutEndpoint, SetIPCBuffer, SetSpace: the caps. */
    if (e.code != ERR_NONE)
        return e;
    return perform_tcb_caps(inv, op.target, &op.caps);
}

/* The last cap to t is going away: take it out of the scheduler and unbind
 * everything that points at it. The caps in t->slots[] are NOT deleted here:
 * they may be the last caps to large objects, so finalise_cap hands them back
 * (zombie-style) for preemptible deletion by the CDT code. */
void tcb_finalise(struct tcb *t)
{
    thread_suspend(t);
    notification_unbind_tcb(t);
    if (t->sc)
        sched_context_unbind_tcb(t->sc);
    thread_forget(t);
    debug_unregister_thread(t);
    /* Out of every queue for good (a zombie is never finalised again), so
     * its place under the thread limit is free. */
    threads_alive--;
}

/* Thread admission. Every TCB is counted from its creation (tcb_count_new:
 * Untyped_Retype makes one object per step, boot the root thread) to the
 * finalisation of its last cap, so a retype stopped part way counts exactly
 * the TCBs it made. The idle thread is the kernel's own and never queued. */
word_t tcb_room(void) { return CONFIG_MAX_THREADS - threads_alive; }

void tcb_count_new(void)
{
    threads_alive++;
#if CONFIG_DEBUG_BUILD
    if (threads_alive > threads_alive_max)
        threads_alive_max = threads_alive;
#endif
}

u64 tcb_debug_counter(word_t id)
{
#if CONFIG_DEBUG_BUILD
    if (id == KAIROS_COUNTER_THREADS)
        return threads_alive;
    if (id == KAIROS_COUNTER_THREADS_MAX)
        return threads_alive_max;
#endif
    (void)id;
    return 0;
}
