/* Fault delivery: a fault is a Call from the faulting thread to the fault
 * handler endpoint in its TCB (seL4's src/api/faults.c and
 * src/kernel/faulthandler.c). A thread with no handler is
 * reported and made inactive; the kernel itself carries on. */
#include <arch/context.h>
#include <endpoint.h>
#include <fault.h>
#include <invocation.h>
#include <kernel.h>
#include <refill.h>
#include <thread.h>
#include <timer.h>

static const char *fault_name(enum fault_label t)
{
    switch (t) {
    case FAULT_CAP: return "capability fault";
    case FAULT_UNKNOWN_SYSCALL: return "unknown system call";
    case FAULT_USER_EXCEPTION: return "user exception";
    case FAULT_TIMEOUT: return "timeout fault";
    case FAULT_VM: return "VM fault";
    case FAULT_NULL: break;
    }
    return "fault";
}

static const char *exception_name(word_t scause)
{
    switch (scause) {
    case 0: return "instruction address misaligned";
    case 2: return "illegal instruction";
    case 3: return "breakpoint";
    case 4: return "load address misaligned";
    case 6: return "store address misaligned";
    default: return "exception";
    }
}

static void report_fault(struct tcb *t, const struct fault *f)
{
    kprintf("\nKAIROS FAULT: thread \"%s\": %s", thread_name(t), fault_name(f->type));
    switch (f->type) {
    case FAULT_VM:
        kprintf(" (%s) at pc %p, address %p\n",
                f->prefetch ? "instruction fetch" : (f->fsr == 7 ? "store" : "load"), (void *)f->ip,
                (void *)f->addr);
        break;
    case FAULT_USER_EXCEPTION:
        kprintf(" (%s, scause %lu) at pc %p, address %p\n", exception_name(f->number), f->number,
                (void *)f->ip, (void *)f->addr);
        break;
    case FAULT_UNKNOWN_SYSCALL:
        kprintf(" (number %ld) at pc %p\n", (long)f->number, (void *)f->ip);
        break;
    case FAULT_CAP:
        kprintf(" (cptr %p%s) at pc %p\n", (void *)f->addr, f->in_recv_phase ? ", receive phase" : "",
                (void *)f->ip);
        break;
    default:
        kprintf(" at pc %p\n", (void *)f->ip);
        break;
    }
    kprintf("  sp %p ra %p; no fault handler: thread suspended\n", (void *)t->ctx.x[REG_SP],
            (void *)t->ctx.x[REG_RA]);
}

/* Handlers are checked when installed (tcb.c); a cap that lost its rights
 * since cannot exist, but a null handler can. */
static bool valid_handler(cap_t c)
{
    return cap_type(c) == CAP_ENDPOINT && (cap_rights(c) & RIGHT_WRITE) &&
           (cap_rights(c) & (RIGHT_GRANT | RIGHT_GRANT_REPLY));
}

void handle_fault(struct tcb *t, const struct fault *f)
{
    /* The thread restarts at the faulting instruction (the ecall for
     * system-call faults) unless the handler's reply says otherwise. */
    t->ctx.pc = t->ctx.fault_ip;
    cap_t h = t->slots[TCB_SLOT_FAULT_HANDLER].cap;
    if (valid_handler(h)) {
        /* seL4's sendFaultIPC: a blocking send that counts as a Call and
         * may lend the thread's SC to a passive handler. */
        t->fault = *f;
        endpoint_send_fault(t, h, true);
        return;
    }
    /* The release kernel prints nothing: a fault costs no console time there,
     * which keeps its worst-case execution time meaningful. */
    if (CONFIG_PRINTING)
        report_fault(t, f);
    thread_set_state_unqueued(t, THREAD_INACTIVE); /* faulting: in no queue (thread.h) */
}

bool timeout_fault_due(const struct tcb *t)
{
    return valid_handler(t->slots[TCB_SLOT_TIMEOUT_HANDLER].cap) && t->sc && !refill_round_robin(t->sc);
}

void handle_timeout_fault(struct tcb *t)
{
    /* A running thread continues where it is (after its ecall if the
     * system call was done) when the handler restarts it. */
    TRACE(TRACE_TIMEOUT, t, 0);
    if (t->state == THREAD_RUNNING)
        t->ctx.fault_ip = t->ctx.pc;
    struct fault f = fault_new(FAULT_TIMEOUT, t->ctx.fault_ip);
    t->fault = f;
    /* Never donates (h): the handler runs on its own time. */
    endpoint_send_timeout_fault(t, t->slots[TCB_SLOT_TIMEOUT_HANDLER].cap);
}

/* A timeout fault's words: the SC's badge and what it used since the last
 * report (µs), which is then reset; 1 word (0) if the thread lost its SC.
 * Returns the length. */
static word_t timeout_fault_words(struct tcb *sender, word_t *w0, word_t *w1)
{
    if (!sender->sc) {
        *w0 = 0;
        return 1;
    }
    *w0 = sender->sc->badge;
    *w1 = ticks_to_us(sender->sc->consumed);
    sender->sc->consumed = 0;
    return 2;
}

void timeout_fault_transfer(struct tcb *sender, word_t badge, struct tcb *receiver)
{
    word_t w0, w1 = 0;
    word_t n = timeout_fault_words(sender, &w0, &w1);
    receiver->ctx.x[REG_A2] = w0;
    if (n > 1)
        receiver->ctx.x[REG_A3] = w1;
    receiver->ctx.x[REG_A0] = badge;
    receiver->ctx.x[REG_A1] = msginfo_new(FAULT_TIMEOUT, 0, 0, n);
}

/* seL4_UserContext order: the registers a timeout-fault reply writes. */
static const u8 user_context_regs[32] = {
    0,      REG_RA, REG_SP, REG_GP, REG_S0, REG_S1, REG_S2,  REG_S3,  REG_S4, REG_S5, REG_S6,
    REG_S7, REG_S8, REG_S9, REG_S10, REG_S11, REG_A0, REG_A1, REG_A2, REG_A3, REG_A4, REG_A5,
    REG_A6, REG_A7, REG_T0, REG_T1, REG_T2, REG_T3, REG_T4, REG_T5, REG_T6, REG_TP,
};

void fault_transfer(struct tcb *sender, word_t badge, struct tcb *receiver)
{
    const struct fault *f = &sender->fault;
    word_t mr[11] = {0};
    word_t n = 0;
    switch (f->type) {
    case FAULT_CAP:
        /* MCS records no lookup failure: MR3 is always 1 (InvalidRoot). */
        mr[0] = f->ip;
        mr[1] = f->addr;
        mr[2] = f->in_recv_phase;
        mr[3] = 1;
        n = 4;
        break;
    case FAULT_UNKNOWN_SYSCALL:
        mr[0] = sender->ctx.fault_ip;
        mr[1] = sender->ctx.x[REG_SP];
        mr[2] = sender->ctx.x[REG_RA];
        /* A0-A6, written out: mr is then indexed by constants only, and
         * gcc keeps it in registers (see the copy below). */
        mr[3] = sender->ctx.x[REG_A0];
        mr[4] = sender->ctx.x[REG_A0 + 1];
        mr[5] = sender->ctx.x[REG_A0 + 2];
        mr[6] = sender->ctx.x[REG_A0 + 3];
        mr[7] = sender->ctx.x[REG_A0 + 4];
        mr[8] = sender->ctx.x[REG_A0 + 5];
        mr[9] = sender->ctx.x[REG_A0 + 6];
        mr[10] = f->number;
        n = 11;
        break;
    case FAULT_USER_EXCEPTION:
        mr[0] = sender->ctx.fault_ip;
        mr[1] = sender->ctx.x[REG_SP];
        mr[2] = f->number; /* scause */
        mr[3] = 0;
        n = 4;
        break;
    case FAULT_VM:
        mr[0] = f->ip;
        mr[1] = f->addr;
        mr[2] = f->prefetch;
        mr[3] = f->fsr;
        n = 4;
        break;
    case FAULT_TIMEOUT:
        n = timeout_fault_words(sender, &mr[0], &mr[1]);
        break;
    default:
        break;
    }
    /* Beyond MR3 the words need the handler's IPC buffer (h). The first
     * four go to registers; the buffer is found once for the rest. */
    word_t *buf = n > NUM_MSG_REGISTERS ? ipc_buffer_kptr(receiver) : NULL;
    if (!buf && n > NUM_MSG_REGISTERS)
        n = NUM_MSG_REGISTERS;
    /* Every word is read from mr (on the stack) before any is written,
     * then the registers and the buffer are written, each in one run: a
     * loop that moved word by word would switch between the stack and
     * the receiver at every word, and the WCET analysis charges a miss at
     * every switch between objects it cannot place (docs/processor-model.md
     * §3 "Symbolic lines"). mr is zeroed, so the words past n read here are
     * defined; they are not written. */
    _Static_assert(NUM_MSG_REGISTERS == 4 && sizeof mr / sizeof mr[0] == 11, "four registers, seven buffer words");
    word_t r0 = mr[0], r1 = mr[1], r2 = mr[2], r3 = mr[3];
    word_t b4 = mr[4], b5 = mr[5], b6 = mr[6], b7 = mr[7], b8 = mr[8], b9 = mr[9], b10 = mr[10];
    word_t *x = &receiver->ctx.x[REG_A2];
    if (n > 0)
        x[0] = r0;
    if (n > 1)
        x[1] = r1;
    if (n > 2)
        x[2] = r2;
    if (n > 3)
        x[3] = r3;
    if (n > 4) {
        buf[BUF_MSG + 4] = b4;
        if (n > 5)
            buf[BUF_MSG + 5] = b5;
        if (n > 6)
            buf[BUF_MSG + 6] = b6;
        if (n > 7)
            buf[BUF_MSG + 7] = b7;
        if (n > 8)
            buf[BUF_MSG + 8] = b8;
        if (n > 9)
            buf[BUF_MSG + 9] = b9;
        if (n > 10)
            buf[BUF_MSG + 10] = b10;
    }
    receiver->ctx.x[REG_A0] = badge;
    receiver->ctx.x[REG_A1] = msginfo_new(f->type, 0, 0, n);
}

/* Reply word i of a fault reply. Out of line on purpose: with get_mr
 * inlined, gcc splits each copy loop below into a register loop and a
 * buffer loop, and the WCET analyser could then bound neither by the
 * annotation on its source line. A fault reply is not a hot path. */
static NOINLINE word_t reply_word(struct tcb *replier, word_t i) { return get_mr(replier, i); }

bool fault_handle_reply(struct tcb *t, struct tcb *replier)
{
    word_t info = replier->ctx.x[REG_A1];
    word_t label = msginfo_label(info);
    word_t len = msginfo_length(info);
    /* Registers written by the reply make a call stopped between its
     * phases (send_done, syscall.c) a new call, as any write from outside
     * does (tcb.c set_user_reg). */
    if (len > 0)
        t->send_done = false;
    switch (t->fault.type) {
    case FAULT_UNKNOWN_SYSCALL: {
        /* FaultIP, SP, RA, A0-A6 in that order. */
        word_t n = len < 10 ? len : 10;
        for (word_t i = 0; i < n; i++) {
            word_t v = reply_word(replier, i);
            if (i == 0)
                t->ctx.fault_ip = v;
            else if (i == 1)
                t->ctx.x[REG_SP] = v;
            else if (i == 2)
                t->ctx.x[REG_RA] = v;
            else
                t->ctx.x[REG_A0 + (i - 3)] = v;
        }
        return label == 0;
    }
    case FAULT_USER_EXCEPTION: {
        word_t n = len < 2 ? len : 2;
        if (n > 0)
            t->ctx.fault_ip = get_mr(replier, 0);
        if (n > 1)
            t->ctx.x[REG_SP] = get_mr(replier, 1);
        return label == 0;
    }
    case FAULT_TIMEOUT: {
        word_t n = len < 32 ? len : 32;
        for (word_t i = 0; i < n; i++) {
            word_t v = reply_word(replier, i);
            if (i == 0)
                t->ctx.fault_ip = v;
            else
                t->ctx.x[user_context_regs[i]] = v;
        }
        return label == 0;
    }
    default:
        /* Cap and VM faults restart the instruction whatever the reply. */
        return true;
    }
}
