/*
 * Notifications (issue 4 item 6): Signal, Wait, NBWait/Poll and the
 * receive phase of Recv/NBRecv/ReplyRecv/NBSendRecv/NBSendWait on a
 * notification, badge OR-ing, the registers each call writes (a0 only),
 * priority order of waiters (FIFO among equals, re-queued on a priority
 * change), bound notifications, a passive thread woken by its bound
 * notification running on the notification's scheduling context, the cap
 * faults of a bad receive, cancellation by Suspend/Resume (restart) and by
 * deleting the notification (waiters re-execute their Wait), and the error
 * checks of TCB_BindNotification, SchedContext_Bind/UnbindObject with
 * notifications. seL4 MCS notification semantics (docs/ipc.md).
 *
 * Memory: objects come from the largest RAM untyped (which keeps children,
 * so it is never reset). Slots: empty root-CNode slots from five eighths
 * into the BootInfo's empty region, skipping occupied ones.
 *
 * Children share the root's image and CSpace, have no IPC buffer and use
 * only register-only system calls (raw_recv below, seL4_Signal).
 */
#include <ktest.h>
#include <threads.h>
#include <sel4/sel4.h>

#define ROOT seL4_CapInitThreadCNode
#define SELF seL4_CapInitThreadTCB

enum { TAG_NULL = 0, TAG_NOTIFICATION = 6 };

/* ---- slots and objects --------------------------------------------- */

static seL4_CPtr slot_cursor;

static seL4_CPtr alloc_slot(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    if (slot_cursor == 0)
        slot_cursor = bi->empty.start + 5 * (bi->empty.end - bi->empty.start) / 8;
    for (seL4_CPtr s = slot_cursor; s < bi->empty.end; s++) {
        if (seL4_DebugCapIdentify(s) == TAG_NULL) {
            slot_cursor = s + 1;
            return s;
        }
    }
    KFAIL("out of empty slots");
}

static seL4_CPtr pool(void) { return kt_pool(); }

static seL4_CPtr make(seL4_Word type, seL4_Word size_bits)
{
    seL4_CPtr s = alloc_slot();
    seL4_Error e = seL4_Untyped_Retype(pool(), type, size_bits, ROOT, 0, 0, s, 1);
    KASSERT_MSG(e == seL4_NoError, "retype of type %lu failed: %d", (unsigned long)type, (int)e);
    return s;
}

static seL4_CPtr make_ntfn(void) { return make(seL4_NotificationObject, 0); }
static seL4_CPtr make_sc(void) { return make(seL4_SchedContextObject, 8); }

/* A copy of `src` with a badge and rights. */
static seL4_CPtr mint(seL4_CPtr src, seL4_CapRights_t rights, seL4_Word badge)
{
    seL4_CPtr s = alloc_slot();
    KASSERT_EQ(seL4_CNode_Mint(ROOT, s, 64, ROOT, src, 64, rights, badge), seL4_NoError);
    return s;
}

static seL4_CapRights_t rw(void) { return seL4_CapRights_new(0, 0, 1, 1); }
static seL4_CapRights_t write_only(void) { return seL4_CapRights_new(0, 0, 0, 1); }
static seL4_CapRights_t read_only(void) { return seL4_CapRights_new(0, 0, 1, 0); }

static seL4_CPtr sched_control(void) { return kairos_bootinfo()->schedcontrol.start; }

/* ---- raw system calls ------------------------------------------------ */

/* Registers around a receive: what goes in and what comes back. */
typedef struct {
    seL4_Word a0, a1, a2, a3, a4, a5, a6, t0, t1;
} regs_t;

#define IN_A1 0x1111000000000001ul
#define IN_A2 0x2222000000000002ul
#define IN_A3 0x3333000000000003ul
#define IN_A4 0x4444000000000004ul
#define IN_A5 0x5555000000000005ul
#define IN_T1 0x7777000000000007ul

/* The system call `sys` with a0 = a0, a6 = a6, t0 = t0 and recognisable
 * values in a1-a5 and t1; every register that may come back is returned. */
static regs_t raw_syscall(seL4_Word sys, seL4_Word a0, seL4_Word a6, seL4_Word t0)
{
    register seL4_Word r_a0 __asm__("a0") = a0;
    register seL4_Word r_a1 __asm__("a1") = IN_A1;
    register seL4_Word r_a2 __asm__("a2") = IN_A2;
    register seL4_Word r_a3 __asm__("a3") = IN_A3;
    register seL4_Word r_a4 __asm__("a4") = IN_A4;
    register seL4_Word r_a5 __asm__("a5") = IN_A5;
    register seL4_Word r_a6 __asm__("a6") = a6;
    register seL4_Word r_t0 __asm__("t0") = t0;
    register seL4_Word r_t1 __asm__("t1") = IN_T1;
    register seL4_Word r_a7 __asm__("a7") = sys;
    __asm__ volatile("ecall"
                     : "+r"(r_a0), "+r"(r_a1), "+r"(r_a2), "+r"(r_a3), "+r"(r_a4), "+r"(r_a5), "+r"(r_a6),
                       "+r"(r_t0), "+r"(r_t1)
                     : "r"(r_a7)
                     : "memory");
    regs_t r = {r_a0, r_a1, r_a2, r_a3, r_a4, r_a5, r_a6, r_t0, r_t1};
    return r;
}

/* A receive that returns a0 only (usable from children: no IPC buffer). */
static seL4_Word raw_recv(seL4_Word sys, seL4_CPtr src) { return raw_syscall(sys, src, 0, 0).a0; }
static seL4_Word wait_on(seL4_CPtr n) { return raw_recv(seL4_SysWait, n); }
static seL4_Word poll(seL4_CPtr n) { return raw_recv(seL4_SysNBWait, n); }

/* Only a0 may have changed. */
static void expect_only_a0(regs_t r, seL4_Word a6, seL4_Word t0)
{
    KASSERT_EQ(r.a1, IN_A1);
    KASSERT_EQ(r.a2, IN_A2);
    KASSERT_EQ(r.a3, IN_A3);
    KASSERT_EQ(r.a4, IN_A4);
    KASSERT_EQ(r.a5, IN_A5);
    KASSERT_EQ(r.a6, a6);
    KASSERT_EQ(r.t0, t0);
    KASSERT_EQ(r.t1, IN_T1);
}

/* Call `cap` with label and up to one extra cap: reply label and length. */
typedef struct {
    seL4_Word badge, label, length, mr0;
} reply_t;

static reply_t call(seL4_CPtr cap, seL4_Word label, seL4_Word n_caps, seL4_CPtr c0)
{
    if (n_caps)
        seL4_SetCap(0, c0);
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    seL4_MessageInfo_t out = seL4_CallWithMRs(cap, seL4_MessageInfo_new(label, 0, n_caps, 0), &m0, &m1, &m2, &m3);
    reply_t r = {0, seL4_MessageInfo_get_label(out), seL4_MessageInfo_get_length(out), m0};
    return r;
}

#define EXPECT_REPLY(r, code, len)                                                                     \
    do {                                                                                               \
        reply_t r_ = (r);                                                                              \
        KASSERT_MSG(r_.label == (seL4_Word)(code) && r_.length == (seL4_Word)(len),                    \
                    "reply label %lu length %lu, expected %lu length %lu", (unsigned long)r_.label,    \
                    (unsigned long)r_.length, (unsigned long)(code), (unsigned long)(len));            \
    } while (0)

/* ---- child threads -------------------------------------------------- */

#define CHILD_STACK_WORDS 1024
#define MAX_CHILDREN 6
static seL4_Word child_stacks[MAX_CHILDREN][CHILD_STACK_WORDS] __attribute__((aligned(16)));

typedef struct {
    seL4_CPtr tcb, sc;
} child_t;

static child_t children[MAX_CHILDREN];
static int n_children;

static void root_prio(seL4_Word p) { KASSERT_EQ(seL4_TCB_SetPriority(SELF, SELF, p), seL4_NoError); }

/* Stop every child of this file (also after a failed test) and put the
 * root back at 255. */
static void cleanup(void)
{
    root_prio(255);
    for (int i = 0; i < n_children; i++) {
        seL4_TCB_Suspend(children[i].tcb);
        seL4_TCB_UnbindNotification(children[i].tcb);
        seL4_SchedContext_Unbind(children[i].sc);
    }
    n_children = 0;
}

/* A child in the root's CSpace and VSpace at `prio`, on its own
 * round-robin SC of 1 ms, not yet started. */
static child_t *new_child(seL4_Word prio)
{
    KASSERT(n_children < MAX_CHILDREN);
    child_t *c = &children[n_children++];
    c->tcb = make(seL4_TCBObject, 0);
    c->sc = make_sc();
    KASSERT_EQ(seL4_TCB_Configure(c->tcb, ROOT, 0, seL4_CapInitThreadVSpace, 0, 0, seL4_CapNull), seL4_NoError);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(sched_control(), c->sc, 1000, 1000, 0, 0, 0), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(c->sc, c->tcb), seL4_NoError);
    KASSERT_EQ(seL4_TCB_SetPriority(c->tcb, SELF, prio), seL4_NoError);
    return c;
}

static void start(child_t *c, void (*fn)(seL4_Word, seL4_Word, seL4_Word), seL4_Word a0, seL4_Word a1,
                  seL4_Word a2)
{
    seL4_UserContext regs = {0};
    regs.pc = (seL4_Word)fn;
    regs.sp = (seL4_Word)&child_stacks[c - children][CHILD_STACK_WORDS];
    regs.gp = kt_read_gp();
    regs.tp = kt_read_tp();
    regs.a0 = a0;
    regs.a1 = a1;
    regs.a2 = a2;
    KASSERT_EQ(seL4_TCB_WriteRegisters(c->tcb, 1, 0, sizeof(regs) / sizeof(seL4_Word), &regs), seL4_NoError);
}

static __attribute__((noreturn)) void child_exit(seL4_CPtr self)
{
    seL4_TCB_Suspend(self);
    for (;;)
        seL4_Yield();
}

/* What children saw, for the root to check. */
#define LOG_MAX 16
static volatile seL4_Word wake_log[LOG_MAX];
static volatile seL4_Word wake_badge[LOG_MAX];
static volatile seL4_Word wake_n;
static volatile seL4_Word before_flag, after_flag;

static void log_reset(void)
{
    wake_n = 0;
    before_flag = after_flag = 0;
}

/* Wait once on `ntfn`, log (id, badge), exit. */
static void child_wait_once(seL4_Word ntfn, seL4_Word id, seL4_Word self)
{
    before_flag++;
    seL4_Word b = wait_on(ntfn);
    seL4_Word i = wake_n;
    if (i < LOG_MAX) {
        wake_log[i] = id;
        wake_badge[i] = b;
    }
    wake_n = i + 1;
    after_flag++;
    child_exit(self);
}

/* Wait forever on `ntfn`, logging every wake-up. */
static void child_wait_loop(seL4_Word ntfn, seL4_Word id, seL4_Word unused)
{
    (void)unused;
    for (;;) {
        seL4_Word b = wait_on(ntfn);
        seL4_Word i = wake_n;
        if (i < LOG_MAX) {
            wake_log[i] = id;
            wake_badge[i] = b;
        }
        wake_n = i + 1;
    }
}

/* A receive that faults (or not): before_flag, then the call, then after_flag. */
static void child_recv(seL4_Word sys, seL4_Word src, seL4_Word self)
{
    before_flag = 1;
    raw_recv(sys, src);
    after_flag = 1;
    child_exit(self);
}

/* Signal `ntfn` (a badged cap) once and exit: a lower-priority watchdog
 * that ends a wait which would otherwise block the root for ever. */
static void child_signal(seL4_Word ntfn, seL4_Word unused, seL4_Word self)
{
    (void)unused;
    seL4_Signal(ntfn);
    child_exit(self);
}

static seL4_UserContext read_regs(seL4_CPtr tcb)
{
    seL4_UserContext r;
    KASSERT_EQ(seL4_TCB_ReadRegisters(tcb, 0, 0, sizeof(r) / sizeof(seL4_Word), &r), seL4_NoError);
    return r;
}

static void yield_n(int n)
{
    for (int i = 0; i < n; i++)
        seL4_Yield();
}

/* ================================================================== */
/* Signal, Wait, Poll                                                   */

KTEST(notification, poll_of_a_fresh_notification_returns_zero_and_writes_only_a0)
{
    seL4_CPtr n = make_ntfn();
    regs_t r = raw_syscall(seL4_SysNBWait, n, 0x66, 0x70);
    KASSERT_EQ(r.a0, 0);
    expect_only_a0(r, 0x66, 0x70);
    /* NBRecv likewise, with any value in the reply register (ignored). */
    r = raw_syscall(seL4_SysNBRecv, n, 0xdead, 0x71);
    KASSERT_EQ(r.a0, 0);
    expect_only_a0(r, 0xdead, 0x71);
}

KTEST(notification, signal_then_poll_returns_the_badge_once)
{
    seL4_CPtr n = make_ntfn();
    seL4_CPtr b5 = mint(n, rw(), 5);
    seL4_Signal(b5);
    regs_t r = raw_syscall(seL4_SysNBWait, n, 0, 0);
    KASSERT_EQ(r.a0, 5);
    expect_only_a0(r, 0, 0);
    KASSERT_EQ(poll(n), 0); /* cleared */
    seL4_Poll(n, NULL);
}

KTEST(notification, badges_accumulate_by_or)
{
    seL4_CPtr n = make_ntfn();
    seL4_Signal(mint(n, rw(), 0x1));
    seL4_Signal(mint(n, rw(), 0x4));
    seL4_CPtr b10 = mint(n, rw(), 0x10);
    seL4_Signal(b10);
    seL4_Signal(b10);
    /* Wait on an active notification returns at once with the word. */
    regs_t r = raw_syscall(seL4_SysWait, n, 0x99, 0x98);
    KASSERT_EQ(r.a0, 0x15);
    expect_only_a0(r, 0x99, 0x98);
    KASSERT_EQ(poll(n), 0);
}

KTEST(notification, signal_with_badge_zero_still_wakes)
{
    cleanup();
    seL4_CPtr n = make_ntfn();
    seL4_Signal(n); /* unbadged cap: the notification becomes active with word 0 */
    /* If Wait blocked, a lower-priority watchdog would end it with 0x80. */
    child_t *w = new_child(10);
    start(w, child_signal, mint(n, rw(), 0x80), 0, w->tcb);
    KASSERT_EQ(wait_on(n), 0);
    KASSERT_EQ(poll(n), 0);
    cleanup();
}

KTEST(notification, every_receive_call_works_on_a_notification)
{
    seL4_CPtr n = make_ntfn();
    seL4_CPtr b = mint(n, rw(), 0x21);
    static const seL4_Word sys[] = {seL4_SysRecv, seL4_SysNBRecv, seL4_SysWait, seL4_SysNBWait};
    for (unsigned i = 0; i < 4; i++) {
        seL4_Signal(b);
        /* the reply register (a6) is ignored for notifications */
        regs_t r = raw_syscall(sys[i], n, 12345 + i, 0x40 + i);
        KASSERT_EQ(r.a0, 0x21);
        expect_only_a0(r, 12345 + i, 0x40 + i);
    }
}

KTEST(notification, call_on_a_notification_signals_and_replies_empty)
{
    seL4_CPtr n = make_ntfn();
    seL4_CPtr b = mint(n, rw(), 0x300);
    seL4_Word m0 = 1, m1 = 2, m2 = 3, m3 = 4;
    seL4_MessageInfo_t out = seL4_CallWithMRs(b, seL4_MessageInfo_new(7, 0, 0, 4), &m0, &m1, &m2, &m3);
    KASSERT_EQ(out.words[0], 0);
    KASSERT_EQ(poll(n), 0x300);
    /* Send and NBSend signal too (and write nothing). */
    seL4_Send(b, seL4_MessageInfo_new(0, 0, 0, 0));
    KASSERT_EQ(poll(n), 0x300);
    seL4_NBSend(b, seL4_MessageInfo_new(0, 0, 0, 0));
    KASSERT_EQ(poll(n), 0x300);
}

KTEST(notification, signal_needs_the_write_right)
{
    seL4_CPtr n = make_ntfn();
    seL4_CPtr ro = mint(n, read_only(), 9);
    reply_t r = call(ro, 0, 0, 0);
    EXPECT_REPLY(r, seL4_InvalidCapability, 1);
    KASSERT_EQ(r.mr0, 0);
    seL4_Signal(ro); /* Send: no reply, no signal */
    KASSERT_EQ(poll(n), 0);
    /* Polling through a read-only cap is fine. */
    seL4_Signal(mint(n, write_only(), 3));
    KASSERT_EQ(poll(ro), 3);
}

/* ================================================================== */
/* Blocking, priorities, restarts                                       */

KTEST(notification, wait_blocks_until_a_signal)
{
    cleanup();
    seL4_CPtr n = make_ntfn();
    child_t *w = new_child(10);
    start(w, child_signal, mint(n, rw(), 0x77), 0, w->tcb);
    /* The child (priority 10) runs only once the root blocks. */
    regs_t r = raw_syscall(seL4_SysWait, n, 0x5, 0x6);
    KASSERT_EQ(r.a0, 0x77);
    expect_only_a0(r, 0x5, 0x6);
    cleanup();
}

KTEST(notification, waiters_wake_in_priority_order_fifo_among_equals)
{
    cleanup();
    log_reset();
    seL4_CPtr n = make_ntfn();
    seL4_CPtr b = mint(n, rw(), 0xb);
    root_prio(50);
    /* Each child runs (above the root) as soon as it is started and blocks. */
    static const seL4_Word prio[5] = {100, 150, 120, 150, 100};
    for (seL4_Word i = 0; i < 5; i++) {
        child_t *c = new_child(prio[i]);
        start(c, child_wait_once, n, i, c->tcb);
    }
    KASSERT_EQ(before_flag, 5);
    KASSERT_EQ(after_flag, 0);
    /* Every signal wakes the best waiter, which runs at once and logs. */
    for (seL4_Word k = 0; k < 5; k++) {
        seL4_Signal(b);
        KASSERT_EQ(wake_n, k + 1);
    }
    static const seL4_Word expect[5] = {1, 3, 2, 0, 4};
    for (seL4_Word k = 0; k < 5; k++) {
        KASSERT_EQ(wake_log[k], expect[k]);
        KASSERT_EQ(wake_badge[k], 0xb);
    }
    KASSERT_EQ(poll(n), 0); /* no signal left over */
    cleanup();
}

KTEST(notification, a_waiter_whose_priority_changes_is_requeued)
{
    cleanup();
    log_reset();
    seL4_CPtr n = make_ntfn();
    root_prio(50);
    child_t *a = new_child(100);
    start(a, child_wait_once, n, 1, a->tcb);
    child_t *c = new_child(120);
    start(c, child_wait_once, n, 2, c->tcb);
    child_t *d = new_child(125);
    start(d, child_wait_once, n, 3, d->tcb);
    /* Queued d, c, a. a moves from last to first; d from first to last. */
    KASSERT_EQ(seL4_TCB_SetPriority(a->tcb, SELF, 130), seL4_NoError);
    KASSERT_EQ(seL4_TCB_SetPriority(d->tcb, SELF, 90), seL4_NoError);
    /* raised above the root's priority, but still waiting */
    KASSERT_EQ(after_flag, 0);
    for (int k = 0; k < 3; k++)
        seL4_Signal(n);
    KASSERT_EQ(wake_n, 3);
    KASSERT_EQ(wake_log[0], 1);
    KASSERT_EQ(wake_log[1], 2);
    KASSERT_EQ(wake_log[2], 3);
    cleanup();
}

KTEST(notification, suspending_a_waiter_removes_it_and_resume_restarts_the_wait)
{
    cleanup();
    log_reset();
    seL4_CPtr n = make_ntfn();
    seL4_CPtr b = mint(n, rw(), 0x42);
    root_prio(50);
    child_t *c = new_child(100);
    start(c, child_wait_once, n, 7, c->tcb);
    KASSERT_EQ(before_flag, 1);
    KASSERT_EQ(seL4_TCB_Suspend(c->tcb), seL4_NoError);
    /* Nobody waits now: the signal stays pending. */
    seL4_Signal(b);
    KASSERT_EQ(after_flag, 0);
    KASSERT_EQ(poll(n), 0x42);
    /* Resume re-executes the Wait (pc at the ecall, a0 = the cptr): it
     * blocks again rather than returning. */
    seL4_UserContext r = read_regs(c->tcb);
    KASSERT_EQ(r.a0, n);
    KASSERT_EQ(r.a7, (seL4_Word)seL4_SysWait);
    KASSERT_EQ(seL4_TCB_Resume(c->tcb), seL4_NoError);
    KASSERT_EQ(after_flag, 0);
    KASSERT_EQ(before_flag, 1);
    seL4_Signal(b);
    KASSERT_EQ(after_flag, 1);
    KASSERT_EQ(wake_badge[0], 0x42);
    cleanup();
}

KTEST(notification, resume_of_a_waiting_thread_restarts_its_wait)
{
    cleanup();
    log_reset();
    seL4_CPtr n = make_ntfn();
    root_prio(50);
    child_t *c = new_child(100);
    start(c, child_wait_once, n, 1, c->tcb);
    /* Resume on a blocked thread cancels the wait and restarts the call. */
    KASSERT_EQ(seL4_TCB_Resume(c->tcb), seL4_NoError);
    KASSERT_EQ(after_flag, 0);
    KASSERT_EQ(before_flag, 1);
    seL4_Signal(mint(n, rw(), 0x9));
    KASSERT_EQ(after_flag, 1);
    KASSERT_EQ(wake_n, 1);
    KASSERT_EQ(wake_badge[0], 0x9);
    cleanup();
}

KTEST(notification, deleting_a_notification_restarts_its_waiters)
{
    cleanup();
    log_reset();
    seL4_CPtr n = make_ntfn();
    /* The children are below the root, so they only run when it lets them. */
    child_t *a = new_child(100);
    start(a, child_wait_loop, n, 1, 0);
    child_t *c = new_child(100);
    start(c, child_wait_loop, n, 2, 0);
    root_prio(50);
    root_prio(255);
    KASSERT_EQ(wake_n, 0);
    /* Delete the only cap: both waiters restart, i.e. re-execute Wait on
     * the same cptr. Put a fresh notification there first, so the restarted
     * waits block on it. */
    KASSERT_EQ(seL4_CNode_Delete(ROOT, n, 64), seL4_NoError);
    KASSERT_EQ(seL4_Untyped_Retype(pool(), seL4_NotificationObject, 0, ROOT, 0, 0, n, 1), seL4_NoError);
    root_prio(50);
    KASSERT_EQ(wake_n, 0); /* restarted, not woken */
    seL4_CPtr b = mint(n, rw(), 0x55);
    seL4_Signal(b);
    seL4_Signal(b);
    KASSERT_EQ(wake_n, 2);
    KASSERT_EQ(wake_log[0], 1); /* FIFO: a blocked first again */
    KASSERT_EQ(wake_log[1], 2);
    KASSERT_EQ(wake_badge[0], 0x55);
    KASSERT_EQ(wake_badge[1], 0x55);
    cleanup();
}

KTEST(notification, deleting_a_notification_with_waiters_whose_slot_stays_empty)
{
    cleanup();
    log_reset();
    seL4_CPtr n = make_ntfn();
    root_prio(50);
    child_t *c = new_child(100);
    start(c, child_recv, seL4_SysWait, n, c->tcb);
    KASSERT_EQ(before_flag, 1);
    /* The restarted Wait finds an empty slot: a cap fault (receive phase),
     * no handler, so the thread stops in its Wait. */
    KASSERT_EQ(seL4_CNode_Delete(ROOT, n, 64), seL4_NoError);
    KASSERT_EQ(after_flag, 0);
    seL4_UserContext r = read_regs(c->tcb);
    KASSERT_EQ(r.a7, (seL4_Word)seL4_SysWait);
    KASSERT_EQ(r.a0, n);
    cleanup();
}

/* ================================================================== */
/* Receive-phase cap faults (seL4's handleRecv)                         */

static void expect_recv_fault(seL4_Word sys, seL4_CPtr src)
{
    cleanup();
    log_reset();
    root_prio(50);
    child_t *c = new_child(100);
    start(c, child_recv, sys, src, c->tcb);
    KASSERT_EQ(before_flag, 1);
    KASSERT_EQ(after_flag, 0);
    /* Stopped in the system call (restart pc at the ecall, arguments kept). */
    seL4_UserContext r = read_regs(c->tcb);
    KASSERT_EQ(r.a0, src);
    KASSERT_EQ(r.a7, sys);
    cleanup();
}

KTEST(notification, receive_needs_the_read_right)
{
    seL4_CPtr n = make_ntfn();
    expect_recv_fault(seL4_SysWait, mint(n, write_only(), 0));
    expect_recv_fault(seL4_SysNBWait, mint(n, write_only(), 0));
    expect_recv_fault(seL4_SysRecv, mint(n, write_only(), 0));
}

KTEST(notification, receive_on_other_caps_empty_slots_or_bad_cptrs_faults)
{
    expect_recv_fault(seL4_SysWait, seL4_CapInitThreadTCB);
    expect_recv_fault(seL4_SysNBWait, ROOT);
    expect_recv_fault(seL4_SysWait, alloc_slot()); /* empty */
    expect_recv_fault(seL4_SysNBRecv, 0);          /* slot 0 is empty */
    expect_recv_fault(seL4_SysWait, ~0ul);         /* guard mismatch: lookup fails */
}

KTEST(notification, only_the_bound_thread_may_receive_on_a_bound_notification)
{
    seL4_CPtr n = make_ntfn();
    seL4_CPtr t = make(seL4_TCBObject, 0);
    KASSERT_EQ(seL4_TCB_BindNotification(t, n), seL4_NoError);
    expect_recv_fault(seL4_SysWait, n);
    expect_recv_fault(seL4_SysNBWait, n);
    /* Signalling it is still allowed. */
    seL4_Signal(n);
    KASSERT_EQ(seL4_TCB_UnbindNotification(t), seL4_NoError);
    KASSERT_EQ(poll(n), 0);
}

/* ================================================================== */
/* Bound notifications                                                  */

KTEST(notification, a_bound_thread_waits_on_its_notification)
{
    cleanup();
    log_reset();
    seL4_CPtr n = make_ntfn();
    root_prio(50);
    child_t *c = new_child(100);
    KASSERT_EQ(seL4_TCB_BindNotification(c->tcb, n), seL4_NoError);
    start(c, child_wait_once, n, 1, c->tcb);
    KASSERT_EQ(before_flag, 1);
    KASSERT_EQ(after_flag, 0);
    /* Binding a notification threads wait on is refused. */
    seL4_CPtr n2 = make_ntfn();
    child_t *d = new_child(100);
    start(d, child_wait_once, n2, 2, d->tcb);
    KASSERT_EQ(seL4_TCB_BindNotification(make(seL4_TCBObject, 0), n2), seL4_IllegalOperation);
    seL4_Signal(mint(n, rw(), 0x31));
    KASSERT_EQ(after_flag, 1);
    KASSERT_EQ(wake_badge[0], 0x31);
    seL4_Signal(n2);
    KASSERT_EQ(after_flag, 2);
    cleanup();
}

KTEST(notification, a_bound_thread_waiting_elsewhere_is_not_woken)
{
    cleanup();
    log_reset();
    seL4_CPtr bound = make_ntfn();
    seL4_CPtr other = make_ntfn();
    root_prio(50);
    child_t *c = new_child(100);
    KASSERT_EQ(seL4_TCB_BindNotification(c->tcb, bound), seL4_NoError);
    start(c, child_wait_once, other, 1, c->tcb);
    /* Only an endpoint receive is interrupted by the bound notification;
     * a wait on another notification is not: the signal stays pending. */
    seL4_Signal(mint(bound, rw(), 0x8));
    KASSERT_EQ(after_flag, 0);
    KASSERT_EQ(seL4_TCB_UnbindNotification(c->tcb), seL4_NoError);
    KASSERT_EQ(poll(bound), 0x8);
    seL4_Signal(mint(other, rw(), 0x4));
    KASSERT_EQ(after_flag, 1);
    KASSERT_EQ(wake_badge[0], 0x4);
    cleanup();
}

KTEST(notification, bind_notification_checks)
{
    seL4_CPtr t = make(seL4_TCBObject, 0);
    seL4_CPtr n = make_ntfn();
    KASSERT_EQ(seL4_TCB_BindNotification(t, mint(n, write_only(), 0)), seL4_IllegalOperation); /* no Read */
    KASSERT_EQ(seL4_TCB_BindNotification(t, ROOT), seL4_IllegalOperation);
    KASSERT_EQ(seL4_TCB_BindNotification(t, mint(n, read_only(), 0)), seL4_NoError);
    KASSERT_EQ(seL4_TCB_BindNotification(t, make_ntfn()), seL4_IllegalOperation); /* t already bound */
    KASSERT_EQ(seL4_TCB_BindNotification(make(seL4_TCBObject, 0), n), seL4_IllegalOperation); /* n bound */
    KASSERT_EQ(seL4_TCB_UnbindNotification(t), seL4_NoError);
    KASSERT_EQ(seL4_TCB_UnbindNotification(t), seL4_IllegalOperation);
}

KTEST(notification, deleting_a_bound_notification_unbinds_thread_and_sc)
{
    seL4_CPtr t = make(seL4_TCBObject, 0);
    seL4_CPtr sc = make_sc();
    seL4_CPtr n = make_ntfn();
    KASSERT_EQ(seL4_TCB_BindNotification(t, n), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(sc, n), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, n, 64), seL4_NoError);
    KASSERT_EQ(seL4_TCB_UnbindNotification(t), seL4_IllegalOperation); /* nothing bound any more */
    seL4_CPtr n2 = make_ntfn();
    KASSERT_EQ(seL4_TCB_BindNotification(t, n2), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(sc, n2), seL4_NoError);
    /* deleting the TCB unbinds the notification too */
    KASSERT_EQ(seL4_CNode_Delete(ROOT, t, 64), seL4_NoError);
    KASSERT_EQ(seL4_TCB_BindNotification(make(seL4_TCBObject, 0), n2), seL4_NoError);
    /* deleting the SC unbinds it from the notification */
    KASSERT_EQ(seL4_CNode_Delete(ROOT, sc, 64), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(make_sc(), n2), seL4_NoError);
}

KTEST(notification, sched_context_bind_and_unbind_object_checks)
{
    seL4_CPtr sc = make_sc();
    seL4_CPtr sc2 = make_sc();
    seL4_CPtr n = make_ntfn();
    seL4_CPtr n2 = make_ntfn();
    KASSERT_EQ(seL4_SchedContext_UnbindObject(sc, n), seL4_IllegalOperation); /* not bound */
    KASSERT_EQ(seL4_SchedContext_Bind(sc, mint(n, read_only(), 0)), seL4_NoError); /* any rights */
    KASSERT_EQ(seL4_SchedContext_Bind(sc, n2), seL4_IllegalOperation);  /* SC has a notification */
    KASSERT_EQ(seL4_SchedContext_Bind(sc2, n), seL4_IllegalOperation);  /* notification has an SC */
    KASSERT_EQ(seL4_SchedContext_UnbindObject(sc2, n), seL4_IllegalOperation);
    KASSERT_EQ(seL4_SchedContext_UnbindObject(sc, n2), seL4_IllegalOperation);
    KASSERT_EQ(seL4_SchedContext_UnbindObject(sc, n), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(sc2, n), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Unbind(sc2), seL4_NoError); /* unbinds the notification too */
    KASSERT_EQ(seL4_SchedContext_Bind(sc, n), seL4_NoError);
}

/* ================================================================== */
/* Passive threads and the notification's scheduling context            */

static volatile seL4_Word passive_runs;

/* Wait on n for ever; count wake-ups (the badge in wake_badge). */
static void child_passive_server(seL4_Word ntfn, seL4_Word unused1, seL4_Word unused2)
{
    (void)unused1;
    (void)unused2;
    for (;;) {
        seL4_Word b = wait_on(ntfn);
        wake_badge[0] = b;
        passive_runs++;
        /* some work, so the time charged is measurable */
        for (volatile int i = 0; i < 20000; i++)
            ;
    }
}

KTEST(notification, passive_thread_runs_on_its_bound_notifications_sc)
{
    cleanup();
    log_reset();
    passive_runs = 0;
    seL4_CPtr n = make_ntfn();
    seL4_CPtr nsc = make_sc();
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(sched_control(), nsc, 1000, 1000, 0, 0, 0), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(nsc, n), seL4_NoError);
    root_prio(50);
    child_t *c = new_child(100);
    KASSERT_EQ(seL4_TCB_BindNotification(c->tcb, n), seL4_NoError);
    start(c, child_passive_server, n, 0, 0);
    /* It blocked on its own SC; take that away: it is passive now. */
    KASSERT_EQ(seL4_SchedContext_Unbind(c->sc), seL4_NoError);
    KASSERT_EQ(passive_runs, 0);
    KASSERT_EQ(seL4_SchedContext_Consumed(c->sc).error, seL4_NoError); /* reset */
    /* The signal lends it the notification's SC: it runs at once (above
     * the root) and, blocking again, gives the SC back. */
    seL4_Signal(mint(n, rw(), 0x5));
    KASSERT_EQ(passive_runs, 1);
    KASSERT_EQ(wake_badge[0], 0x5);
    KASSERT_EQ(seL4_SchedContext_UnbindObject(nsc, c->tcb), seL4_IllegalOperation); /* returned */
    KASSERT_EQ(seL4_SchedContext_Consumed(nsc).error, seL4_NoError);
    KASSERT(seL4_SchedContext_Consumed(nsc).consumed == 0); /* just reset */
    seL4_Signal(mint(n, rw(), 0x6));
    KASSERT_EQ(passive_runs, 2);
    KASSERT_EQ(wake_badge[0], 0x6);
    seL4_SchedContext_Consumed_t used = seL4_SchedContext_Consumed(nsc);
    KASSERT_EQ(used.error, seL4_NoError);
    KASSERT_MSG(used.consumed > 0, "the notification's SC was not charged");
    /* Its own SC was not used. */
    KASSERT_EQ(seL4_SchedContext_Consumed(c->sc).consumed, 0);
    cleanup();
}

static void child_wait_then_stop(seL4_Word ntfn, seL4_Word unused, seL4_Word self)
{
    (void)unused;
    wake_badge[0] = wait_on(ntfn);
    passive_runs++;
    child_exit(self); /* inactive, still holding the SC it was lent */
}

KTEST(notification, woken_passive_thread_keeps_the_sc_until_it_blocks_again)
{
    cleanup();
    log_reset();
    passive_runs = 0;
    seL4_CPtr n = make_ntfn();
    seL4_CPtr nsc = make_sc();
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(sched_control(), nsc, 1000, 1000, 0, 0, 0), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(nsc, n), seL4_NoError);
    root_prio(50);
    child_t *c = new_child(100);
    KASSERT_EQ(seL4_TCB_BindNotification(c->tcb, n), seL4_NoError);
    /* Run on the notification's own SC from the start: blocking on the
     * notification hands it back (the thread becomes passive). */
    KASSERT_EQ(seL4_SchedContext_Unbind(c->sc), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(nsc, c->tcb), seL4_NoError);
    start(c, child_wait_then_stop, n, 0, c->tcb);
    KASSERT_EQ(seL4_SchedContext_UnbindObject(nsc, c->tcb), seL4_IllegalOperation); /* given back */
    root_prio(255);
    seL4_Signal(mint(n, rw(), 0x3));
    KASSERT_EQ(passive_runs, 0); /* below the root now */
    /* It holds the notification's SC while it runs: the SC has a thread. */
    KASSERT_EQ(seL4_SchedContext_Bind(nsc, make(seL4_TCBObject, 0)), seL4_IllegalOperation);
    root_prio(50);
    KASSERT_EQ(passive_runs, 1);
    KASSERT_EQ(wake_badge[0], 0x3);
    root_prio(255);
    KASSERT_EQ(seL4_SchedContext_UnbindObject(nsc, c->tcb), seL4_NoError);
    cleanup();
}

KTEST(notification, woken_thread_without_any_sc_runs_once_it_gets_one)
{
    cleanup();
    log_reset();
    passive_runs = 0;
    seL4_CPtr n = make_ntfn();
    root_prio(50);
    child_t *c = new_child(100);
    start(c, child_passive_server, n, 0, 0);
    KASSERT_EQ(seL4_SchedContext_Unbind(c->sc), seL4_NoError);
    /* No SC on the notification: woken but passive, it cannot run. */
    seL4_Signal(mint(n, rw(), 0x11));
    yield_n(3);
    KASSERT_EQ(passive_runs, 0);
    /* Giving it an SC lets it continue with the badge already received. */
    KASSERT_EQ(seL4_SchedContext_Bind(c->sc, c->tcb), seL4_NoError);
    KASSERT_EQ(passive_runs, 1);
    KASSERT_EQ(wake_badge[0], 0x11);
    cleanup();
}

/* ================================================================== */
/* Send phases: ReplyRecv, NBSendRecv, NBSendWait                       */

KTEST(notification, reply_recv_with_no_reply_cap_receives_on_the_notification)
{
    seL4_CPtr n = make_ntfn();
    seL4_Signal(mint(n, rw(), 0x12));
    /* a6 = 0: the send phase targets an empty slot and is dropped. */
    regs_t r = raw_syscall(seL4_SysReplyRecv, n, 0, 0x44);
    KASSERT_EQ(r.a0, 0x12);
    expect_only_a0(r, 0, 0x44);
}

KTEST(notification, nbsend_wait_and_nbsend_recv_signal_then_receive)
{
    seL4_CPtr src = make_ntfn();
    seL4_CPtr dest = make_ntfn();
    seL4_CPtr dest_b = mint(dest, rw(), 0x70);
    seL4_Signal(mint(src, rw(), 0x1));
    /* NBSendWait: destination in a6. */
    regs_t r = raw_syscall(seL4_SysNBSendWait, src, dest_b, 0x5);
    KASSERT_EQ(r.a0, 0x1);
    expect_only_a0(r, dest_b, 0x5);
    KASSERT_EQ(poll(dest), 0x70);
    /* NBSendRecv: destination in t0, reply object in a6 (ignored here). */
    seL4_Signal(mint(src, rw(), 0x2));
    r = raw_syscall(seL4_SysNBSendRecv, src, 0x1234, dest_b);
    KASSERT_EQ(r.a0, 0x2);
    expect_only_a0(r, 0x1234, dest_b);
    KASSERT_EQ(poll(dest), 0x70);
    /* A send phase that fails (read-only cap, bad cptr) is silent. */
    seL4_Signal(mint(src, rw(), 0x4));
    r = raw_syscall(seL4_SysNBSendWait, src, mint(dest, read_only(), 0), 0);
    KASSERT_EQ(r.a0, 0x4);
    seL4_Signal(mint(src, rw(), 0x8));
    r = raw_syscall(seL4_SysNBSendRecv, src, 0, ~0ul);
    KASSERT_EQ(r.a0, 0x8);
    KASSERT_EQ(poll(dest), 0);
}

KTEST(notification, send_phase_refuses_tcb_caps)
{
    cleanup();
    log_reset();
    seL4_CPtr src = make_ntfn();
    child_t *c = new_child(100);
    start(c, child_wait_once, make_ntfn(), 1, c->tcb);
    KASSERT_EQ(seL4_TCB_Suspend(c->tcb), seL4_NoError);
    root_prio(50);
    KASSERT_EQ(before_flag, 0);
    /* A Resume sent in the send phase of NBSendWait is refused: the child
     * stays suspended (a plain Send would resume it). */
    seL4_Signal(src);
    register seL4_Word r_a0 __asm__("a0") = src;
    register seL4_Word r_a1 __asm__("a1") = seL4_MessageInfo_new(TCBResume, 0, 0, 0).words[0];
    register seL4_Word r_a6 __asm__("a6") = c->tcb;
    register seL4_Word r_a7 __asm__("a7") = (seL4_Word)seL4_SysNBSendWait;
    __asm__ volatile("ecall" : "+r"(r_a0), "+r"(r_a1) : "r"(r_a6), "r"(r_a7) : "a2", "a3", "a4", "a5", "memory");
    KASSERT_EQ(before_flag, 0);
    seL4_Send(c->tcb, seL4_MessageInfo_new(TCBResume, 0, 0, 0));
    KASSERT_EQ(before_flag, 1);
    cleanup();
}

/* ================================================================== */
/* Random operations against a model                                    */

#define RND_CHILDREN 5
#define RND_OPS 400

static uint64_t rnd_state = 0x2545f4914f6cdd1dul;

static seL4_Word rnd(seL4_Word n)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return (seL4_Word)(rnd_state % n);
}

/* The model of the notification and its waiters: who waits (by priority,
 * then by the order in which it started waiting), the word while active. */
typedef struct {
    bool waiting, suspended;
    seL4_Word prio, seq;
} model_child_t;

static model_child_t model[RND_CHILDREN];
static seL4_Word model_seq, model_word;
static bool model_active;

static int model_best(void)
{
    int best = -1;
    for (int i = 0; i < RND_CHILDREN; i++) {
        if (!model[i].waiting)
            continue;
        if (best < 0 || model[i].prio > model[best].prio ||
            (model[i].prio == model[best].prio && model[i].seq < model[best].seq))
            best = i;
    }
    return best;
}

/* Child i starts (or restarts) its Wait: it takes a pending word at once,
 * logs it and waits again; otherwise it queues. */
static void model_enter(int i, seL4_Word *expect_id, seL4_Word *expect_badge, seL4_Word *n_expect)
{
    if (model_active) {
        expect_id[*n_expect] = (seL4_Word)i;
        expect_badge[*n_expect] = model_word;
        (*n_expect)++;
        model_active = false;
        model_word = 0;
    }
    model[i].waiting = true;
    model[i].seq = model_seq++;
}

KTEST(notification, random_signals_priorities_suspends_and_resumes_match_a_model)
{
    cleanup();
    log_reset();
    seL4_CPtr n = make_ntfn();
    root_prio(50);
    model_seq = model_word = 0;
    model_active = false;
    child_t *c[RND_CHILDREN];
    seL4_Word expect_id[1], expect_badge[1], n_expect;
    for (int i = 0; i < RND_CHILDREN; i++) {
        model[i].prio = 60 + rnd(4) * 10;
        model[i].suspended = false;
        c[i] = new_child(model[i].prio);
        start(c[i], child_wait_loop, n, (seL4_Word)i, 0);
        n_expect = 0;
        model_enter(i, expect_id, expect_badge, &n_expect);
    }
    seL4_CPtr badged[8];
    for (int b = 0; b < 8; b++)
        badged[b] = mint(n, rw(), 1ul << b);
    seL4_Word checked = 0;
    for (int op = 0; op < RND_OPS; op++) {
        seL4_Word before = wake_n;
        n_expect = 0;
        int i = (int)rnd(RND_CHILDREN);
        switch (rnd(4)) {
        case 0:
        case 1: { /* signal with a random one-bit badge */
            seL4_Word bit = rnd(8), badge = 1ul << bit;
            seL4_Signal(badged[bit]);
            int w = model_best();
            if (w >= 0) {
                model[w].waiting = false;
                expect_id[n_expect] = (seL4_Word)w;
                expect_badge[n_expect++] = badge;
                model_enter(w, expect_id, expect_badge, &n_expect); /* waits again */
            } else {
                model_active = true;
                model_word |= badge;
            }
            break;
        }
        case 2: { /* new priority (possibly the same): re-queued behind equals */
            seL4_Word p = 60 + rnd(4) * 10;
            KASSERT_EQ(seL4_TCB_SetPriority(c[i]->tcb, SELF, p), seL4_NoError);
            model[i].prio = p;
            if (model[i].waiting)
                model[i].seq = model_seq++;
            break;
        }
        default: /* suspend, or resume (which restarts the Wait) */
            if (!model[i].suspended) {
                KASSERT_EQ(seL4_TCB_Suspend(c[i]->tcb), seL4_NoError);
                model[i].suspended = true;
                model[i].waiting = false;
            } else {
                KASSERT_EQ(seL4_TCB_Resume(c[i]->tcb), seL4_NoError);
                model[i].suspended = false;
                model_enter(i, expect_id, expect_badge, &n_expect);
            }
            break;
        }
        KASSERT_MSG(wake_n == before + n_expect, "op %d: %lu wake-ups, expected %lu", op,
                    (unsigned long)(wake_n - before), (unsigned long)n_expect);
        if (n_expect == 1 && before < LOG_MAX) {
            KASSERT_MSG(wake_log[before] == expect_id[0] && wake_badge[before] == expect_badge[0],
                        "op %d: woke child %lu with %lx, expected child %lu with %lx", op,
                        (unsigned long)wake_log[before], (unsigned long)wake_badge[before],
                        (unsigned long)expect_id[0], (unsigned long)expect_badge[0]);
            checked++;
        }
        /* keep the log short: only the latest wake-up matters */
        if (wake_n >= LOG_MAX - 1)
            wake_n = 0;
    }
    KASSERT_MSG(checked > 50, "only %lu wake-ups checked", (unsigned long)checked);
    KASSERT_EQ(poll(n), model_active ? model_word : 0);
    cleanup();
}
