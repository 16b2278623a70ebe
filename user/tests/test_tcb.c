/*
 * Threads and the minimal MCS path: every check of the TCB invocations
 * (labels 2-17), DomainSet_Set (30), SchedControl_ConfigureFlags (31) and
 * the SchedContext invocations (32-36) in seL4's order with their error
 * payloads (seL4's decodeTCBInvocation), and second threads in the
 * root task's CSpace and VSpace: running, registers, suspend/resume,
 * priorities and MCP, per-thread FP state with the FPU disabled and enabled.
 *
 * Memory: objects come from child untypeds carved out of the largest RAM
 * untyped. Slots: runs of empty root-CNode slots from three quarters into
 * the BootInfo's empty region (other suites start lower).
 *
 * Child threads share the root's image: each has its own stack here and
 * runs code that needs no IPC buffer (at most 4 message words, no caps).
 */
#include <ktest.h>
#include <threads.h>
#include <sel4/sel4.h>
#include <stdio.h>

enum {
    TAG_NULL = 0,
    TAG_FRAME = 1,
    TAG_UNTYPED = 2,
    TAG_PAGE_TABLE = 3,
    TAG_ENDPOINT = 4,
    TAG_NOTIFICATION = 6,
    TAG_CNODE = 10,
    TAG_THREAD = 12,
    TAG_ZOMBIE = 18,
    TAG_SCHED_CONTEXT = 22,
};

#define ROOT seL4_CapInitThreadCNode
#define SELF seL4_CapInitThreadTCB
#define MAX_PERIOD_US 230584300921369395ul

/* ---- slots and memory ---------------------------------------------- */

static seL4_CPtr slot_cursor;

static seL4_CPtr alloc_slots(seL4_Word n)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    if (slot_cursor == 0)
        slot_cursor = bi->empty.start + 3 * (bi->empty.end - bi->empty.start) / 4;
    seL4_CPtr start = slot_cursor;
    for (seL4_CPtr s = slot_cursor; s < bi->empty.end; s++) {
        if (seL4_DebugCapIdentify(s) != TAG_NULL) {
            start = s + 1;
            continue;
        }
        if (s + 1 - start == n) {
            slot_cursor = s + 1;
            return start;
        }
    }
    KFAIL("out of empty slots (wanted %lu)", (unsigned long)n);
}

static seL4_CPtr alloc_slot(void) { return alloc_slots(1); }

static seL4_CPtr ut_slot(seL4_Word i) { return kairos_bootinfo()->untyped.start + i; }

static seL4_CPtr pool(void) { return kt_pool(); }

/* One new object of the given type in a fresh slot. */
static seL4_CPtr make(seL4_Word type, seL4_Word size_bits)
{
    seL4_CPtr s = alloc_slot();
    seL4_Error e = seL4_Untyped_Retype(pool(), type, size_bits, ROOT, 0, 0, s, 1);
    KASSERT_MSG(e == seL4_NoError, "retype of type %lu failed: %d", (unsigned long)type, (int)e);
    return s;
}

static seL4_CPtr make_tcb(void) { return make(seL4_TCBObject, 0); }
static seL4_CPtr make_sc(seL4_Word bits) { return make(seL4_SchedContextObject, bits); }

/* A device frame: the first page of the device untyped covering the UART. */
static seL4_CPtr make_device_frame(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    for (seL4_Word i = 0; i < bi->untyped.end - bi->untyped.start; i++) {
        const seL4_UntypedDesc *d = &bi->untypedList[i];
        if (!d->isDevice || d->sizeBits < 12)
            continue;
        seL4_CPtr s = alloc_slot();
        if (seL4_Untyped_Retype(ut_slot(i), seL4_RISCV_4K_Page, 0, ROOT, 0, 0, s, 1) == seL4_NoError)
            return s;
    }
    KFAIL("no device frame");
}

static seL4_CPtr sched_control(void) { return kairos_bootinfo()->schedcontrol.start; }

/* ---- raw invocations with the reply's label, length and MRs ---------- */

typedef struct {
    seL4_Word label, length;
    seL4_Word mr[5];
} reply_t;

/* Call `cap` with label, `length` message words w[0..] and `n_caps` extra caps. */
static reply_t invoke(seL4_CPtr cap, seL4_Word label, seL4_Word length, const seL4_Word *w, seL4_Word n_caps,
                      const seL4_CPtr *caps)
{
    seL4_Word m[4] = {0, 0, 0, 0};
    for (seL4_Word i = 0; i < length; i++) {
        if (i < 4)
            m[i] = w[i];
        else
            seL4_SetMR(i, w[i]);
    }
    for (seL4_Word i = 0; i < n_caps; i++)
        seL4_SetCap(i, caps[i]);
    seL4_MessageInfo_t out =
        seL4_CallWithMRs(cap, seL4_MessageInfo_new(label, 0, n_caps, length), &m[0], &m[1], &m[2], &m[3]);
    reply_t r = {seL4_MessageInfo_get_label(out), seL4_MessageInfo_get_length(out), {m[0], m[1], m[2], m[3], 0}};
    r.mr[4] = seL4_GetMR(4);
    return r;
}

#define W(...) ((const seL4_Word[]){__VA_ARGS__})
#define C(...) ((const seL4_CPtr[]){__VA_ARGS__})
#define NOW ((const seL4_Word *)0)
#define NOC ((const seL4_CPtr *)0)

#define EXPECT_REPLY(r, code, len)                                                                     \
    do {                                                                                               \
        reply_t r_ = (r);                                                                              \
        KASSERT_MSG(r_.label == (seL4_Word)(code) && r_.length == (seL4_Word)(len),                    \
                    "reply label %lu length %lu, expected %lu length %lu (MR0 %lu MR1 %lu)",            \
                    (unsigned long)r_.label, (unsigned long)r_.length, (unsigned long)(code),            \
                    (unsigned long)(len), (unsigned long)r_.mr[0], (unsigned long)r_.mr[1]);            \
    } while (0)

#define EXPECT_OK(r) EXPECT_REPLY(r, seL4_NoError, 0)
#define EXPECT_TRUNC(r) EXPECT_REPLY(r, seL4_TruncatedMessage, 0)
#define EXPECT_ILLEGAL(r) EXPECT_REPLY(r, seL4_IllegalOperation, 0)

static void expect_inv_cap(reply_t r, seL4_Word n)
{
    EXPECT_REPLY(r, seL4_InvalidCapability, 1);
    KASSERT_EQ(r.mr[0], n);
}

static void expect_inv_arg(reply_t r, seL4_Word n)
{
    EXPECT_REPLY(r, seL4_InvalidArgument, 1);
    KASSERT_EQ(r.mr[0], n);
}

static void expect_range(reply_t r, seL4_Word lo, seL4_Word hi)
{
    EXPECT_REPLY(r, seL4_RangeError, 2);
    KASSERT_EQ(r.mr[0], lo);
    KASSERT_EQ(r.mr[1], hi);
}

/* ---- child threads ------------------------------------------------- */

#define CHILD_STACK_WORDS 2048
#define MAX_CHILDREN 4
static seL4_Word child_stacks[MAX_CHILDREN][CHILD_STACK_WORDS] __attribute__((aligned(16)));

typedef struct {
    seL4_CPtr tcb, sc;
    seL4_Word *stack_top;
} child_t;

static child_t children[MAX_CHILDREN];
static int n_children;

/* Stop every child an earlier test left behind (also after a failure). */
static void stop_children(void)
{
    for (int i = 0; i < n_children; i++) {
        seL4_TCB_Suspend(children[i].tcb);
        seL4_SchedContext_Unbind(children[i].sc);
    }
    n_children = 0;
}

/* A configured child in the root's CSpace and VSpace (no IPC buffer), at
 * `prio`, bound to a round-robin SC of 1 ms, not yet started. */
static child_t *new_child(seL4_Word prio)
{
    KASSERT(n_children < MAX_CHILDREN);
    child_t *c = &children[n_children];
    c->stack_top = &child_stacks[n_children][CHILD_STACK_WORDS];
    n_children++;
    c->tcb = make_tcb();
    c->sc = make_sc(8);
    KASSERT_EQ(seL4_TCB_Configure(c->tcb, ROOT, 0, seL4_CapInitThreadVSpace, 0, 0, seL4_CapNull), seL4_NoError);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(sched_control(), c->sc, 1000, 1000, 0, 0, 0), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(c->sc, c->tcb), seL4_NoError);
    KASSERT_EQ(seL4_TCB_SetPriority(c->tcb, SELF, prio), seL4_NoError);
    return c;
}

/* Point the child at fn(a0, a1) on its own stack and (optionally) start it. */
static void start_child(child_t *c, void (*fn)(seL4_Word, seL4_Word), seL4_Word a0, seL4_Word a1, bool resume)
{
    seL4_UserContext regs = {0};
    regs.pc = (seL4_Word)fn;
    regs.sp = (seL4_Word)c->stack_top;
    regs.gp = kt_read_gp();
    regs.tp = kt_read_tp();
    regs.a0 = a0;
    regs.a1 = a1;
    KASSERT_EQ(seL4_TCB_WriteRegisters(c->tcb, resume, 0, sizeof(regs) / sizeof(seL4_Word), &regs), seL4_NoError);
}

/* Yield until *flag == value (children of equal priority run meanwhile). */
static bool wait_for(volatile seL4_Word *flag, seL4_Word value)
{
    for (int i = 0; i < 2000; i++) {
        if (*flag == value)
            return true;
        seL4_Yield();
    }
    return *flag == value;
}

static void yield_n(int n)
{
    for (int i = 0; i < n; i++)
        seL4_Yield();
}

/* Children get 1 ms slices and QEMU's timer follows the host clock, so on a
 * busy host a child may need several turns to make progress: tests wait for
 * what they need to see instead of yielding a fixed number of times. */
static volatile seL4_Word counter;

static bool wait_counter_above(seL4_Word v)
{
    for (int i = 0; i < 2000; i++) {
        if (counter > v)
            return true;
        seL4_Yield();
    }
    return counter > v;
}

/* Yield until the (running) thread's restart pc is `pc`. */
static bool wait_pc(seL4_CPtr tcb, seL4_Word pc)
{
    for (int i = 0; i < 2000; i++) {
        seL4_UserContext r;
        if (seL4_TCB_ReadRegisters(tcb, false, 0, 1, &r) == seL4_NoError && r.pc == pc)
            return true;
        seL4_Yield();
    }
    return false;
}

/* Children end by suspending themselves (as seL4 programs do). */
static __attribute__((noreturn)) void child_exit(seL4_CPtr self)
{
    seL4_TCB_Suspend(self);
    for (;;)
        seL4_Yield();
}

static volatile seL4_Word flag_word;

static void child_set_flag(seL4_Word value, seL4_Word self)
{
    flag_word = value;
    child_exit(self);
}

static void child_count(seL4_Word unused, seL4_Word self)
{
    (void)unused;
    (void)self;
    for (;;) {
        counter++;
        seL4_Yield();
    }
}

/* ================================================================== */
/* A second thread runs                                                */

KTEST(tcb, second_thread_runs)
{
    stop_children();
    child_t *c = new_child(255);
    flag_word = 0;
    start_child(c, child_set_flag, 0x5eed, c->tcb, true);
    KASSERT(wait_for(&flag_word, 0x5eed));
    stop_children();
}

KTEST(tcb, new_thread_is_inactive_until_resumed)
{
    stop_children();
    child_t *c = new_child(255);
    flag_word = 0;
    start_child(c, child_set_flag, 7, c->tcb, false);
    yield_n(20);
    KASSERT_EQ(flag_word, 0);
    KASSERT_EQ(seL4_TCB_Resume(c->tcb), seL4_NoError);
    KASSERT(wait_for(&flag_word, 7));
    stop_children();
}

KTEST(tcb, thread_without_sc_does_not_run)
{
    stop_children();
    child_t *c = new_child(255);
    KASSERT_EQ(seL4_SchedContext_Unbind(c->sc), seL4_NoError);
    flag_word = 0;
    start_child(c, child_set_flag, 9, c->tcb, true);
    yield_n(20);
    KASSERT_EQ(flag_word, 0);
    /* Binding an SC lets it run. */
    KASSERT_EQ(seL4_SchedContext_Bind(c->sc, c->tcb), seL4_NoError);
    KASSERT(wait_for(&flag_word, 9));
    stop_children();
}

KTEST(tcb, unconfigured_sc_gives_no_time)
{
    stop_children();
    child_t *c = new_child(255);
    KASSERT_EQ(seL4_SchedContext_Unbind(c->sc), seL4_NoError);
    seL4_CPtr fresh = make_sc(7);
    /* Binding a never-configured SC to a thread that is not blocked is allowed. */
    KASSERT_EQ(seL4_SchedContext_Bind(fresh, c->tcb), seL4_NoError);
    flag_word = 0;
    start_child(c, child_set_flag, 11, c->tcb, true);
    yield_n(20);
    KASSERT_EQ(flag_word, 0);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(sched_control(), fresh, 20, 20, 0, 0, 0), seL4_NoError);
    KASSERT(wait_for(&flag_word, 11));
    KASSERT_EQ(seL4_SchedContext_Unbind(fresh), seL4_NoError);
    stop_children();
}

KTEST(tcb, suspend_and_resume)
{
    stop_children();
    child_t *c = new_child(255);
    counter = 0;
    start_child(c, child_count, 0, c->tcb, true);
    KASSERT(wait_counter_above(0));
    KASSERT_EQ(seL4_TCB_Suspend(c->tcb), seL4_NoError);
    seL4_Word at = counter;
    yield_n(20);
    KASSERT_EQ(counter, at);
    /* Resuming an inactive thread; resuming a runnable one changes nothing. */
    KASSERT_EQ(seL4_TCB_Resume(c->tcb), seL4_NoError);
    KASSERT_EQ(seL4_TCB_Resume(c->tcb), seL4_NoError);
    KASSERT(wait_counter_above(at));
    stop_children();
}

/* ---- priorities ---------------------------------------------------- */

static volatile seL4_Word order_log[4];
static volatile seL4_Word order_n;

static void child_log(seL4_Word id, seL4_Word self)
{
    order_log[order_n++ & 3] = id;
    child_exit(self);
}

KTEST(tcb, higher_priority_runs_first)
{
    stop_children();
    child_t *low = new_child(100);
    child_t *high = new_child(200);
    order_n = 0;
    start_child(low, child_log, 1, low->tcb, true);
    start_child(high, child_log, 2, high->tcb, true);
    /* Both wait while the root (255) runs; lowering the root lets them run
     * in priority order before it gets the CPU back. */
    yield_n(3);
    KASSERT_EQ(order_n, 0);
    KASSERT_EQ(seL4_TCB_SetPriority(SELF, SELF, 10), seL4_NoError);
    KASSERT_EQ(order_n, 2);
    KASSERT_EQ(order_log[0], 2);
    KASSERT_EQ(order_log[1], 1);
    KASSERT_EQ(seL4_TCB_SetPriority(SELF, SELF, 255), seL4_NoError);
    stop_children();
}

KTEST(tcb, raising_a_thread_above_the_caller_preempts_it)
{
    stop_children();
    child_t *c = new_child(100);
    flag_word = 0;
    start_child(c, child_set_flag, 3, c->tcb, true);
    yield_n(3);
    KASSERT_EQ(flag_word, 0);
    /* The root lowers itself below the child's new priority via SetSchedParams. */
    KASSERT_EQ(seL4_TCB_SetPriority(SELF, SELF, 150), seL4_NoError);
    KASSERT_EQ(flag_word, 0);
    KASSERT_EQ(seL4_TCB_SetPriority(c->tcb, SELF, 200), seL4_NoError);
    KASSERT_EQ(flag_word, 3); /* ran before SetPriority returned */
    KASSERT_EQ(seL4_TCB_SetPriority(SELF, SELF, 255), seL4_NoError);
    stop_children();
}

KTEST(tcb, equal_priorities_share_by_round_robin)
{
    stop_children();
    child_t *c = new_child(255);
    counter = 0;
    start_child(c, child_count, 0, c->tcb, true);
    /* The child yields after every increment; the root spins without
     * yielding and still sees it run: its slice ends after 5 ms. */
    seL4_Word t0 = counter;
    for (volatile long i = 0; i < 20000000 && counter == t0; i++)
        ;
    KASSERT(counter != t0);
    stop_children();
}

KTEST(tcb, mcp_limits_priority_and_mcp)
{
    stop_children();
    child_t *c = new_child(0);
    /* A new thread has MCP 0: as an authority it allows only 0. */
    expect_range(invoke(c->tcb, TCBSetPriority, 1, W(1), 1, C(c->tcb)), 0, 0);
    EXPECT_OK(invoke(c->tcb, TCBSetPriority, 1, W(0), 1, C(c->tcb)));
    EXPECT_OK(invoke(c->tcb, TCBSetMCPriority, 1, W(100), 1, C(SELF)));
    expect_range(invoke(c->tcb, TCBSetPriority, 1, W(101), 1, C(c->tcb)), 0, 100);
    expect_range(invoke(c->tcb, TCBSetMCPriority, 1, W(101), 1, C(c->tcb)), 0, 100);
    EXPECT_OK(invoke(c->tcb, TCBSetPriority, 1, W(100), 1, C(c->tcb)));
    EXPECT_OK(invoke(c->tcb, TCBSetMCPriority, 1, W(50), 1, C(c->tcb)));
    expect_range(invoke(SELF, TCBSetPriority, 1, W(51), 1, C(c->tcb)), 0, 50);
    /* The root's MCP is 255. */
    expect_range(invoke(c->tcb, TCBSetPriority, 1, W(256), 1, C(SELF)), 0, 255);
    stop_children();
}

/* ---- registers ----------------------------------------------------- */

/* Sets every register of the seL4_UserContext order to a known value
 * (0x1000 + index) except pc, sp, gp and tp, then spins in place. */
extern char reg_child[], reg_child_spin[];
__asm__(".text\n.balign 4\n.global reg_child\nreg_child:\n"
        "li ra, 0x1001\n"
        "li s0, 0x1004\n li s1, 0x1005\n li s2, 0x1006\n li s3, 0x1007\n li s4, 0x1008\n li s5, 0x1009\n"
        "li s6, 0x100a\n li s7, 0x100b\n li s8, 0x100c\n li s9, 0x100d\n li s10, 0x100e\n li s11, 0x100f\n"
        "li a0, 0x1010\n li a1, 0x1011\n li a2, 0x1012\n li a3, 0x1013\n li a4, 0x1014\n li a5, 0x1015\n"
        "li a6, 0x1016\n li a7, 0x1017\n li t0, 0x1018\n li t1, 0x1019\n li t2, 0x101a\n li t3, 0x101b\n"
        "li t4, 0x101c\n li t5, 0x101d\n li t6, 0x101e\n"
        ".global reg_child_spin\nreg_child_spin:\n j reg_child_spin\n");

/* Stores the 32 registers in seL4_UserContext order (pc slot: its own
 * address) to reg_dump, sets reg_dump_done, then spins. */
seL4_Word reg_dump[32];
volatile seL4_Word reg_dump_done;
extern char reg_record[];
__asm__(".text\n.balign 4\n.global reg_record\nreg_record:\n"
        "addi sp, sp, -16\n sd t6, 0(sp)\n"
        "la t6, reg_dump\n"
        "sd ra, 8(t6)\n sd gp, 24(t6)\n"
        "sd s0, 32(t6)\n sd s1, 40(t6)\n sd s2, 48(t6)\n sd s3, 56(t6)\n sd s4, 64(t6)\n sd s5, 72(t6)\n"
        "sd s6, 80(t6)\n sd s7, 88(t6)\n sd s8, 96(t6)\n sd s9, 104(t6)\n sd s10, 112(t6)\n sd s11, 120(t6)\n"
        "sd a0, 128(t6)\n sd a1, 136(t6)\n sd a2, 144(t6)\n sd a3, 152(t6)\n sd a4, 160(t6)\n sd a5, 168(t6)\n"
        "sd a6, 176(t6)\n sd a7, 184(t6)\n sd t0, 192(t6)\n sd t1, 200(t6)\n sd t2, 208(t6)\n sd t3, 216(t6)\n"
        "sd t4, 224(t6)\n sd t5, 232(t6)\n sd tp, 248(t6)\n"
        "ld t5, 0(sp)\n sd t5, 240(t6)\n addi sp, sp, 16\n sd sp, 16(t6)\n"
        "la t5, reg_record\n sd t5, 0(t6)\n"
        "fence\n li t5, 1\n la t4, reg_dump_done\n sd t5, 0(t4)\n"
        "1: j 1b\n");

static seL4_Word ctx_reg(const seL4_UserContext *r, int i) { return ((const seL4_Word *)r)[i]; }

KTEST(tcb, read_registers_of_a_suspended_thread)
{
    stop_children();
    child_t *c = new_child(255);
    start_child(c, (void (*)(seL4_Word, seL4_Word))reg_child, 0, 0, true);
    KASSERT(wait_pc(c->tcb, (seL4_Word)reg_child_spin)); /* preempted in its spin loop */
    seL4_UserContext r;
    KASSERT_EQ(seL4_TCB_ReadRegisters(c->tcb, true, 0, 32, &r), seL4_NoError);
    KASSERT_EQ(r.pc, (seL4_Word)reg_child_spin);
    KASSERT_EQ(r.ra, 0x1001);
    KASSERT_EQ(r.sp, (seL4_Word)c->stack_top);
    KASSERT_EQ(r.gp, kt_read_gp());
    KASSERT_EQ(r.tp, kt_read_tp());
    for (int i = 4; i < 31; i++)
        KASSERT_MSG(ctx_reg(&r, i) == 0x1000ul + (seL4_Word)i, "register %d = %#lx", i,
                    (unsigned long)ctx_reg(&r, i));
    /* It is suspended: a second read still sees the same pc. */
    seL4_UserContext r2;
    yield_n(3);
    KASSERT_EQ(seL4_TCB_ReadRegisters(c->tcb, false, 0, 1, &r2), seL4_NoError);
    KASSERT_EQ(r2.pc, (seL4_Word)reg_child_spin);
    stop_children();
}

KTEST(tcb, read_registers_reply_length_is_count)
{
    stop_children();
    child_t *c = new_child(255);
    start_child(c, (void (*)(seL4_Word, seL4_Word))reg_child, 0, 0, true);
    KASSERT(wait_pc(c->tcb, (seL4_Word)reg_child_spin));
    reply_t r = invoke(c->tcb, TCBReadRegisters, 2, W(1, 5), 0, NOC);
    EXPECT_REPLY(r, seL4_NoError, 5);
    KASSERT_EQ(r.mr[0], (seL4_Word)reg_child_spin);
    KASSERT_EQ(r.mr[1], 0x1001);
    KASSERT_EQ(r.mr[4], 0x1004);
    r = invoke(c->tcb, TCBReadRegisters, 2, W(0, 32), 0, NOC);
    EXPECT_REPLY(r, seL4_NoError, 32);
    KASSERT_EQ(seL4_GetMR(31), kt_read_tp());
    KASSERT_EQ(seL4_GetMR(16), 0x1010);
    stop_children();
}

KTEST(tcb, write_registers_and_resume)
{
    stop_children();
    child_t *c = new_child(255);
    reg_dump_done = 0;
    seL4_UserContext w;
    seL4_Word *wv = (seL4_Word *)&w;
    for (int i = 0; i < 32; i++)
        wv[i] = 0x2000 + (seL4_Word)i;
    w.pc = (seL4_Word)reg_record;
    w.sp = (seL4_Word)c->stack_top;
    w.gp = kt_read_gp();
    w.tp = 0x201f;
    KASSERT_EQ(seL4_TCB_WriteRegisters(c->tcb, true, 0, 32, &w), seL4_NoError);
    KASSERT(wait_for(&reg_dump_done, 1));
    KASSERT_EQ(reg_dump[0], (seL4_Word)reg_record);
    KASSERT_EQ(reg_dump[2], (seL4_Word)c->stack_top);
    KASSERT_EQ(reg_dump[3], kt_read_gp());
    KASSERT_EQ(reg_dump[1], 0x2001);
    for (int i = 4; i < 32; i++)
        KASSERT_MSG(reg_dump[i] == 0x2000ul + (seL4_Word)i, "register %d = %#lx", i, (unsigned long)reg_dump[i]);
    /* Reading it back gives what was written (pc where it now spins aside). */
    seL4_UserContext r;
    KASSERT_EQ(seL4_TCB_ReadRegisters(c->tcb, true, 0, 32, &r), seL4_NoError);
    KASSERT_EQ(r.s11, 0x200f);
    KASSERT_EQ(r.a7, 0x2017);
    stop_children();
}

KTEST(tcb, write_registers_count_above_32_writes_32)
{
    stop_children();
    child_t *c = new_child(255);
    seL4_Word w[42];
    for (int i = 0; i < 42; i++)
        w[i] = 0x3000 + (seL4_Word)i;
    w[0] = 0; /* flags: no resume */
    w[1] = 40;
    EXPECT_OK(invoke(c->tcb, TCBWriteRegisters, 42, w, 0, NOC));
    seL4_UserContext r;
    KASSERT_EQ(seL4_TCB_ReadRegisters(c->tcb, false, 0, 32, &r), seL4_NoError);
    KASSERT_EQ(r.pc, 0x3002);
    KASSERT_EQ(r.tp, 0x3000 + 33);
    stop_children();
}

KTEST(tcb, copy_registers)
{
    stop_children();
    child_t *a = new_child(255);
    child_t *b = new_child(255);
    start_child(a, (void (*)(seL4_Word, seL4_Word))reg_child, 0, 0, true);
    KASSERT(wait_pc(a->tcb, (seL4_Word)reg_child_spin));
    /* b gets distinct values first. */
    seL4_UserContext w;
    seL4_Word *wv = (seL4_Word *)&w;
    for (int i = 0; i < 32; i++)
        wv[i] = 0x4000 + (seL4_Word)i;
    KASSERT_EQ(seL4_TCB_WriteRegisters(b->tcb, false, 0, 32, &w), seL4_NoError);
    /* Frame only (and suspend the source): pc..s11 copied, a0..tp kept. */
    KASSERT_EQ(seL4_TCB_CopyRegisters(b->tcb, a->tcb, true, false, true, false, 0), seL4_NoError);
    seL4_UserContext rb;
    KASSERT_EQ(seL4_TCB_ReadRegisters(b->tcb, false, 0, 32, &rb), seL4_NoError);
    KASSERT_EQ(rb.pc, (seL4_Word)reg_child_spin);
    KASSERT_EQ(rb.ra, 0x1001);
    KASSERT_EQ(rb.sp, (seL4_Word)a->stack_top);
    KASSERT_EQ(rb.s11, 0x100f);
    KASSERT_EQ(rb.a0, 0x4010);
    KASSERT_EQ(rb.tp, 0x401f);
    /* Integer only. */
    KASSERT_EQ(seL4_TCB_CopyRegisters(b->tcb, a->tcb, false, false, false, true, 0), seL4_NoError);
    KASSERT_EQ(seL4_TCB_ReadRegisters(b->tcb, false, 0, 32, &rb), seL4_NoError);
    KASSERT_EQ(rb.a0, 0x1010);
    KASSERT_EQ(rb.t6, 0x101e);
    KASSERT_EQ(rb.tp, kt_read_tp());
    /* The source is suspended: its pc stays. Resume the target (flag 2):
     * b runs a's spin loop on a's stack (a is stopped). */
    KASSERT_EQ(seL4_TCB_CopyRegisters(b->tcb, a->tcb, false, true, false, false, 0), seL4_NoError);
    yield_n(3);
    KASSERT_EQ(seL4_TCB_ReadRegisters(b->tcb, true, 0, 1, &rb), seL4_NoError);
    KASSERT_EQ(rb.pc, (seL4_Word)reg_child_spin);
    stop_children();
}

KTEST(tcb, set_tls_base_sets_tp)
{
    stop_children();
    child_t *c = new_child(255);
    KASSERT_EQ(seL4_TCB_SetTLSBase(c->tcb, 0xabc0), seL4_NoError);
    seL4_UserContext r;
    KASSERT_EQ(seL4_TCB_ReadRegisters(c->tcb, false, 0, 32, &r), seL4_NoError);
    KASSERT_EQ(r.tp, 0xabc0);
    stop_children();
}

/* ---- FPU ----------------------------------------------------------- */

seL4_Word fp_init[33], fp_in[33], fp_out[33];
volatile seL4_Word fp_phase, fp_go;

/* Stores its initial FP state to fp_init, loads fp_in (f0-f31, fcsr), then
 * yields until fp_go; then stores the FP state to fp_out (the first store is
 * the FP instruction that faults while its FPU is disabled). */
extern char fpu_child[], fpu_child_store[];
#define FREGS(op, base)                                                                                    \
    op " f0, 0(" base ")\n" op " f1, 8(" base ")\n" op " f2, 16(" base ")\n" op " f3, 24(" base ")\n" op     \
       " f4, 32(" base ")\n" op " f5, 40(" base ")\n" op " f6, 48(" base ")\n" op " f7, 56(" base ")\n" op   \
       " f8, 64(" base ")\n" op " f9, 72(" base ")\n" op " f10, 80(" base ")\n" op " f11, 88(" base ")\n" op \
       " f12, 96(" base ")\n" op " f13, 104(" base ")\n" op " f14, 112(" base ")\n" op " f15, 120(" base     \
       ")\n" op " f16, 128(" base ")\n" op " f17, 136(" base ")\n" op " f18, 144(" base ")\n" op             \
       " f19, 152(" base ")\n" op " f20, 160(" base ")\n" op " f21, 168(" base ")\n" op " f22, 176(" base   \
       ")\n" op " f23, 184(" base ")\n" op " f24, 192(" base ")\n" op " f25, 200(" base ")\n" op             \
       " f26, 208(" base ")\n" op " f27, 216(" base ")\n" op " f28, 224(" base ")\n" op " f29, 232(" base   \
       ")\n" op " f30, 240(" base ")\n" op " f31, 248(" base ")\n"
__asm__(".text\n.balign 4\n.global fpu_child\nfpu_child:\n"
        "la t0, fp_init\n" FREGS("fsd", "t0") "frcsr t1\n sd t1, 256(t0)\n"
        "la t0, fp_in\n" FREGS("fld", "t0") "ld t1, 256(t0)\n fscsr t1\n"
        "la t0, fp_phase\n li t1, 1\n sd t1, 0(t0)\n"
        "1: la t0, fp_go\n ld t1, 0(t0)\n bnez t1, 2f\n li a7, -11\n ecall\n j 1b\n"
        "2: la t0, fp_out\n"
        ".global fpu_child_store\nfpu_child_store:\n" FREGS("fsd", "t0") "frcsr t1\n sd t1, 256(t0)\n"
        "la t0, fp_phase\n li t1, 2\n sd t1, 0(t0)\n"
        "3: li a7, -11\n ecall\n j 3b\n");

/* The root's own FP register fa0 survives other threads' FP use. */
static seL4_Word root_fp_survives_yields(seL4_Word pattern)
{
    seL4_Word out;
    __asm__ volatile("fmv.d.x fa0, %1\n"
                     "li a7, -11\n ecall\n ecall\n ecall\n ecall\n"
                     "fmv.x.d %0, fa0\n"
                     : "=r"(out)
                     : "r"(pattern)
                     : "a7", "fa0", "memory");
    return out;
}

KTEST(tcb, fpu_state_is_per_thread_and_survives_disable)
{
    stop_children();
    child_t *c = new_child(255);
    for (int i = 0; i < 32; i++)
        fp_in[i] = 0x4000000000000000ul + 0x123456789ul * (seL4_Word)(i + 1);
    fp_in[32] = 0x65; /* frm = 3, fflags = NX | OF */
    for (int i = 0; i < 33; i++)
        fp_init[i] = fp_out[i] = 0xdead;
    fp_phase = fp_go = 0;
    start_child(c, (void (*)(seL4_Word, seL4_Word))fpu_child, 0, 0, true);
    KASSERT(wait_for(&fp_phase, 1));
    /* A new thread starts with f0-f31 = 0 and fcsr = 0. */
    for (int i = 0; i < 33; i++)
        KASSERT_MSG(fp_init[i] == 0, "initial FP word %d = %#lx", i, (unsigned long)fp_init[i]);
    /* Both threads use the FPU; neither sees the other's registers. */
    KASSERT_EQ(root_fp_survives_yields(0x3ff0000000000000ul), 0x3ff0000000000000ul);

    /* Disable the child's FPU: its state is saved; its next FP instruction
     * is an illegal instruction (no fault handler: it becomes inactive). */
    seL4_TCB_SetFlags_t f = seL4_TCB_SetFlags(c->tcb, 0, seL4_TCBFlag_fpuDisabled);
    KASSERT_EQ(f.error, seL4_NoError);
    KASSERT_EQ(f.flags, seL4_TCBFlag_fpuDisabled);
    fp_go = 1;
    /* it faults at its first FP store and stays there (inactive) */
    KASSERT(wait_pc(c->tcb, (seL4_Word)fpu_child_store));
    yield_n(5);
    KASSERT_EQ(fp_phase, 1);
    seL4_UserContext r;
    KASSERT_EQ(seL4_TCB_ReadRegisters(c->tcb, false, 0, 1, &r), seL4_NoError);
    KASSERT_EQ(r.pc, (seL4_Word)fpu_child_store);
    /* Meanwhile the root clobbers its own FP registers. */
    KASSERT_EQ(root_fp_survives_yields(0x7ff8000000000001ul), 0x7ff8000000000001ul);

    /* Re-enable and resume at the faulting instruction: the state is intact. */
    f = seL4_TCB_SetFlags(c->tcb, seL4_TCBFlag_fpuDisabled, 0);
    KASSERT_EQ(f.error, seL4_NoError);
    KASSERT_EQ(f.flags, 0);
    KASSERT_EQ(seL4_TCB_Resume(c->tcb), seL4_NoError);
    KASSERT(wait_for(&fp_phase, 2));
    for (int i = 0; i < 33; i++)
        KASSERT_MSG(fp_out[i] == fp_in[i], "FP word %d = %#lx, want %#lx", i, (unsigned long)fp_out[i],
                    (unsigned long)fp_in[i]);
    stop_children();
}

KTEST(tcb, set_flags_reply_and_mask)
{
    stop_children();
    child_t *c = new_child(255);
    reply_t r = invoke(c->tcb, TCBSetFlags, 2, W(0, ~0ul), 0, NOC);
    EXPECT_REPLY(r, seL4_NoError, 1);
    KASSERT_EQ(r.mr[0], 1); /* only bit 0 exists */
    r = invoke(c->tcb, TCBSetFlags, 2, W(0, 0), 0, NOC);
    EXPECT_REPLY(r, seL4_NoError, 1);
    KASSERT_EQ(r.mr[0], 1);
    r = invoke(c->tcb, TCBSetFlags, 2, W(1, 0), 0, NOC);
    EXPECT_REPLY(r, seL4_NoError, 1);
    KASSERT_EQ(r.mr[0], 0);
    EXPECT_TRUNC(invoke(c->tcb, TCBSetFlags, 1, W(0), 0, NOC));
    stop_children();
}

/* ================================================================== */
/* TCB checks in seL4's order                                          */

KTEST(tcb, unknown_labels_are_illegal)
{
    seL4_CPtr t = make_tcb();
    EXPECT_ILLEGAL(invoke(t, 0, 0, NOW, 0, NOC));
    EXPECT_ILLEGAL(invoke(t, 1, 0, NOW, 0, NOC));
    EXPECT_ILLEGAL(invoke(t, 18, 2, W(0, 0), 0, NOC));
    EXPECT_ILLEGAL(invoke(t, 31, 0, NOW, 0, NOC));
}

KTEST(tcb, read_registers_checks)
{
    seL4_CPtr t = make_tcb();
    EXPECT_TRUNC(invoke(t, TCBReadRegisters, 1, W(0), 0, NOC));
    expect_range(invoke(t, TCBReadRegisters, 2, W(0, 0), 0, NOC), 1, 32);
    expect_range(invoke(t, TCBReadRegisters, 2, W(0, 33), 0, NOC), 1, 32);
    /* count before the self check */
    expect_range(invoke(SELF, TCBReadRegisters, 2, W(0, 0), 0, NOC), 1, 32);
    EXPECT_ILLEGAL(invoke(SELF, TCBReadRegisters, 2, W(0, 1), 0, NOC));
    EXPECT_REPLY(invoke(t, TCBReadRegisters, 2, W(0, 1), 0, NOC), seL4_NoError, 1);
}

KTEST(tcb, write_registers_checks)
{
    seL4_CPtr t = make_tcb();
    EXPECT_TRUNC(invoke(t, TCBWriteRegisters, 1, W(0), 0, NOC));
    EXPECT_TRUNC(invoke(t, TCBWriteRegisters, 2, W(0, 1), 0, NOC));
    EXPECT_TRUNC(invoke(t, TCBWriteRegisters, 4, W(0, 3, 0, 0), 0, NOC));
    /* truncation before the self check */
    EXPECT_TRUNC(invoke(SELF, TCBWriteRegisters, 2, W(0, 1), 0, NOC));
    EXPECT_ILLEGAL(invoke(SELF, TCBWriteRegisters, 2, W(0, 0), 0, NOC));
    EXPECT_OK(invoke(t, TCBWriteRegisters, 3, W(0, 1, 0x1234), 0, NOC));
    seL4_UserContext r;
    KASSERT_EQ(seL4_TCB_ReadRegisters(t, false, 0, 1, &r), seL4_NoError);
    KASSERT_EQ(r.pc, 0x1234);
}

KTEST(tcb, copy_registers_checks)
{
    seL4_CPtr t = make_tcb();
    EXPECT_TRUNC(invoke(t, TCBCopyRegisters, 0, NOW, 1, C(t)));
    EXPECT_TRUNC(invoke(t, TCBCopyRegisters, 1, W(0), 0, NOC));
    expect_inv_cap(invoke(t, TCBCopyRegisters, 1, W(0), 1, C(ROOT)), 1);
    expect_inv_cap(invoke(t, TCBCopyRegisters, 1, W(0), 1, C(seL4_CapNull)), 1);
    /* No self check: copying from oneself to oneself with no flags is fine. */
    EXPECT_OK(invoke(SELF, TCBCopyRegisters, 1, W(0), 1, C(SELF)));
    EXPECT_OK(invoke(t, TCBCopyRegisters, 1, W(0), 1, C(t)));
}

/* An untyped with children (RevokeFirst when derived). */
static seL4_CPtr untyped_with_children(void)
{
    seL4_CPtr ut = make(seL4_UntypedObject, 16);
    seL4_CPtr s = alloc_slot();
    KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_EndpointObject, 0, ROOT, 0, 0, s, 1), seL4_NoError);
    return ut;
}

KTEST(tcb, configure_checks)
{
    seL4_CPtr t = make_tcb();
    seL4_CPtr frame = make(seL4_RISCV_4K_Page, 0);
    seL4_CPtr pt = make(seL4_RISCV_PageTableObject, 0); /* not mapped */
    seL4_CPtr busy = untyped_with_children();
    seL4_CPtr dev = make_device_frame();
    seL4_CPtr vs = seL4_CapInitThreadVSpace;
    /* 1. length and extra caps */
    EXPECT_TRUNC(invoke(t, TCBConfigure, 2, W(0, 0), 3, C(ROOT, vs, frame)));
    EXPECT_TRUNC(invoke(t, TCBConfigure, 3, W(0, 0, 0x1000), 2, C(ROOT, vs)));
    /* 2. the buffer (checked first, only when the address is non-zero) */
    EXPECT_REPLY(invoke(t, TCBConfigure, 3, W(0, 0, 0x1000), 3, C(pt, pt, busy)), seL4_RevokeFirst, 0);
    EXPECT_ILLEGAL(invoke(t, TCBConfigure, 3, W(0, 0, 0x1000), 3, C(pt, pt, pt)));
    EXPECT_ILLEGAL(invoke(t, TCBConfigure, 3, W(0, 0, 0x1000), 3, C(pt, pt, ROOT)));
    EXPECT_ILLEGAL(invoke(t, TCBConfigure, 3, W(0, 0, 0x1000), 3, C(pt, pt, dev)));
    EXPECT_ILLEGAL(invoke(t, TCBConfigure, 3, W(0, 0, 0x1000), 3, C(pt, pt, seL4_CapNull)));
    EXPECT_REPLY(invoke(t, TCBConfigure, 3, W(0, 0, 0x1200), 3, C(pt, pt, frame)), seL4_AlignmentError, 0);
    /* 4. CSpace */
    EXPECT_ILLEGAL(invoke(t, TCBConfigure, 3, W(0, 0, 0x1400), 3, C(pt, pt, frame)));
    EXPECT_ILLEGAL(invoke(t, TCBConfigure, 3, W(0, 0, 0), 3, C(SELF, vs, frame)));
    EXPECT_REPLY(invoke(t, TCBConfigure, 3, W(0, 0, 0), 3, C(busy, vs, frame)), seL4_RevokeFirst, 0);
    /* guard size 52 + radix 13 > 64: the guard data gives a null cap */
    EXPECT_ILLEGAL(invoke(t, TCBConfigure, 3, W(52, 0, 0), 3, C(ROOT, vs, frame)));
    /* 5. VSpace: must be a mapped page table */
    EXPECT_ILLEGAL(invoke(t, TCBConfigure, 3, W(0, 0, 0), 3, C(ROOT, pt, frame)));
    EXPECT_ILLEGAL(invoke(t, TCBConfigure, 3, W(0, 0, 0), 3, C(ROOT, frame, frame)));
    EXPECT_REPLY(invoke(t, TCBConfigure, 3, W(0, 0, 0), 3, C(ROOT, busy, frame)), seL4_RevokeFirst, 0);
    /* success, with a buffer and with a guard that fits */
    EXPECT_OK(invoke(t, TCBConfigure, 3, W(0, 0, 0x1400), 3, C(ROOT, vs, frame)));
    EXPECT_OK(invoke(t, TCBConfigure, 3, W(51 | (0ul << 6), 0, 0), 3, C(ROOT, vs, frame)));
}

KTEST(tcb, set_space_checks)
{
    seL4_CPtr t = make_tcb();
    seL4_CPtr pt = make(seL4_RISCV_PageTableObject, 0);
    seL4_CPtr busy = untyped_with_children();
    seL4_CPtr ep = make(seL4_EndpointObject, 0); /* all rights */
    seL4_CPtr vs = seL4_CapInitThreadVSpace;
    EXPECT_TRUNC(invoke(t, TCBSetSpace, 1, W(0), 3, C(seL4_CapNull, ROOT, vs)));
    EXPECT_TRUNC(invoke(t, TCBSetSpace, 2, W(0, 0), 2, C(seL4_CapNull, ROOT)));
    EXPECT_ILLEGAL(invoke(t, TCBSetSpace, 2, W(0, 0), 3, C(ROOT, SELF, vs)));
    EXPECT_REPLY(invoke(t, TCBSetSpace, 2, W(0, 0), 3, C(ROOT, busy, vs)), seL4_RevokeFirst, 0);
    EXPECT_ILLEGAL(invoke(t, TCBSetSpace, 2, W(0, 0), 3, C(ROOT, ROOT, pt)));
    EXPECT_REPLY(invoke(t, TCBSetSpace, 2, W(0, 0), 3, C(ROOT, ROOT, busy)), seL4_RevokeFirst, 0);
    /* the fault endpoint last */
    expect_inv_cap(invoke(t, TCBSetSpace, 2, W(0, 0), 3, C(ROOT, ROOT, vs)), 1);
    expect_inv_cap(invoke(t, TCBSetSpace, 2, W(0, 0), 3, C(SELF, ROOT, vs)), 1);
    EXPECT_OK(invoke(t, TCBSetSpace, 2, W(0, 0), 3, C(seL4_CapNull, ROOT, vs)));
    EXPECT_OK(invoke(t, TCBSetSpace, 2, W(0, 0), 3, C(ep, ROOT, vs)));
}

/* An endpoint cap with only the given rights (needs CNode_Mint). */
static seL4_CPtr endpoint_with_rights(seL4_CPtr ep, seL4_CapRights_t rights)
{
    seL4_CPtr s = alloc_slot();
    seL4_Error e = seL4_CNode_Mint(ROOT, s, 64, ROOT, ep, 64, rights, 0);
    KASSERT_MSG(e == seL4_NoError, "CNode_Mint failed: %d", (int)e);
    return s;
}

KTEST(tcb, fault_handler_needs_send_and_grant_or_grant_reply)
{
    seL4_CPtr t = make_tcb();
    seL4_CPtr ep = make(seL4_EndpointObject, 0);
    seL4_CPtr vs = seL4_CapInitThreadVSpace;
    seL4_CPtr send_only = endpoint_with_rights(ep, seL4_CapRights_new(0, 0, 0, 1));
    seL4_CPtr send_grant = endpoint_with_rights(ep, seL4_CapRights_new(0, 1, 0, 1));
    seL4_CPtr send_grant_reply = endpoint_with_rights(ep, seL4_CapRights_new(1, 0, 0, 1));
    seL4_CPtr grant_no_send = endpoint_with_rights(ep, seL4_CapRights_new(1, 1, 1, 0));
    expect_inv_cap(invoke(t, TCBSetSpace, 2, W(0, 0), 3, C(send_only, ROOT, vs)), 1);
    expect_inv_cap(invoke(t, TCBSetSpace, 2, W(0, 0), 3, C(grant_no_send, ROOT, vs)), 1);
    EXPECT_OK(invoke(t, TCBSetSpace, 2, W(0, 0), 3, C(send_grant, ROOT, vs)));
    EXPECT_OK(invoke(t, TCBSetSpace, 2, W(0, 0), 3, C(send_grant_reply, ROOT, vs)));
    expect_inv_cap(invoke(t, TCBSetTimeoutEndpoint, 0, NOW, 1, C(send_only)), 1);
    EXPECT_OK(invoke(t, TCBSetTimeoutEndpoint, 0, NOW, 1, C(send_grant_reply)));
    expect_inv_cap(invoke(t, TCBSetSchedParams, 2, W(0, 0), 3, C(SELF, seL4_CapNull, send_only)), 3);
    EXPECT_OK(invoke(t, TCBSetSchedParams, 2, W(0, 0), 3, C(SELF, seL4_CapNull, send_grant)));
}

KTEST(tcb, set_ipc_buffer_checks)
{
    seL4_CPtr t = make_tcb();
    seL4_CPtr frame = make(seL4_RISCV_4K_Page, 0);
    seL4_CPtr pt = make(seL4_RISCV_PageTableObject, 0);
    seL4_CPtr busy = untyped_with_children();
    seL4_CPtr dev = make_device_frame();
    EXPECT_TRUNC(invoke(t, TCBSetIPCBuffer, 0, NOW, 1, C(frame)));
    EXPECT_TRUNC(invoke(t, TCBSetIPCBuffer, 1, W(0x1000), 0, NOC));
    EXPECT_REPLY(invoke(t, TCBSetIPCBuffer, 1, W(0x1000), 1, C(busy)), seL4_RevokeFirst, 0);
    EXPECT_ILLEGAL(invoke(t, TCBSetIPCBuffer, 1, W(0x1000), 1, C(pt)));
    EXPECT_ILLEGAL(invoke(t, TCBSetIPCBuffer, 1, W(0x1000), 1, C(ROOT)));
    EXPECT_ILLEGAL(invoke(t, TCBSetIPCBuffer, 1, W(0x1000), 1, C(dev)));
    EXPECT_REPLY(invoke(t, TCBSetIPCBuffer, 1, W(0x1010), 1, C(frame)), seL4_AlignmentError, 0);
    /* address 0: no buffer, the cap is not examined */
    EXPECT_OK(invoke(t, TCBSetIPCBuffer, 1, W(0), 1, C(busy)));
    EXPECT_OK(invoke(t, TCBSetIPCBuffer, 1, W(0x1c00), 1, C(frame)));
}

KTEST(tcb, set_priority_checks)
{
    seL4_CPtr t = make_tcb();
    for (int mcp = 0; mcp < 2; mcp++) {
        seL4_Word label = mcp ? TCBSetMCPriority : TCBSetPriority;
        EXPECT_TRUNC(invoke(t, label, 0, NOW, 1, C(SELF)));
        EXPECT_TRUNC(invoke(t, label, 1, W(0), 0, NOC));
        expect_inv_cap(invoke(t, label, 1, W(0), 1, C(ROOT)), 1);
        expect_inv_cap(invoke(t, label, 1, W(0), 1, C(seL4_CapNull)), 1);
        expect_range(invoke(t, label, 1, W(1), 1, C(t)), 0, 0);
        expect_range(invoke(t, label, 1, W(300), 1, C(SELF)), 0, 255);
        EXPECT_OK(invoke(t, label, 1, W(255), 1, C(SELF)));
    }
}

KTEST(tcb, set_sched_params_checks)
{
    stop_children();
    seL4_CPtr t = make_tcb();
    seL4_CPtr sc = make_sc(7);
    seL4_CPtr sc2 = make_sc(7);
    seL4_CPtr other = make_tcb();
    EXPECT_TRUNC(invoke(t, TCBSetSchedParams, 1, W(0), 3, C(SELF, sc, seL4_CapNull)));
    EXPECT_TRUNC(invoke(t, TCBSetSchedParams, 2, W(0, 0), 2, C(SELF, sc)));
    expect_inv_cap(invoke(t, TCBSetSchedParams, 2, W(0, 0), 3, C(ROOT, sc, seL4_CapNull)), 1);
    expect_range(invoke(t, TCBSetSchedParams, 2, W(1, 0), 3, C(t, sc, seL4_CapNull)), 0, 0);
    expect_range(invoke(t, TCBSetSchedParams, 2, W(0, 1), 3, C(t, sc, seL4_CapNull)), 0, 0);
    expect_range(invoke(t, TCBSetSchedParams, 2, W(256, 0), 3, C(SELF, sc, seL4_CapNull)), 0, 255);
    expect_range(invoke(t, TCBSetSchedParams, 2, W(0, 256), 3, C(SELF, sc, seL4_CapNull)), 0, 255);
    expect_inv_cap(invoke(t, TCBSetSchedParams, 2, W(0, 0), 3, C(SELF, ROOT, seL4_CapNull)), 2);
    /* the SC before the fault endpoint */
    expect_inv_cap(invoke(t, TCBSetSchedParams, 2, W(0, 0), 3, C(SELF, ROOT, ROOT)), 2);
    expect_inv_cap(invoke(t, TCBSetSchedParams, 2, W(0, 0), 3, C(SELF, sc, ROOT)), 3);
    /* null SC on oneself */
    EXPECT_ILLEGAL(invoke(SELF, TCBSetSchedParams, 2, W(255, 255), 3, C(SELF, seL4_CapNull, seL4_CapNull)));
    /* bind sc to t; again with the same sc is fine */
    EXPECT_OK(invoke(t, TCBSetSchedParams, 2, W(10, 5), 3, C(SELF, sc, seL4_CapNull)));
    EXPECT_OK(invoke(t, TCBSetSchedParams, 2, W(10, 5), 3, C(SELF, sc, seL4_CapNull)));
    /* t already has an SC; sc is bound to another TCB */
    EXPECT_ILLEGAL(invoke(t, TCBSetSchedParams, 2, W(0, 0), 3, C(SELF, sc2, seL4_CapNull)));
    EXPECT_ILLEGAL(invoke(other, TCBSetSchedParams, 2, W(0, 0), 3, C(SELF, sc, seL4_CapNull)));
    /* the values took effect: t's MCP is 10 now */
    expect_range(invoke(t, TCBSetPriority, 1, W(11), 1, C(t)), 0, 10);
    /* null SC unbinds */
    EXPECT_OK(invoke(t, TCBSetSchedParams, 2, W(0, 0), 3, C(SELF, seL4_CapNull, seL4_CapNull)));
    EXPECT_OK(invoke(other, TCBSetSchedParams, 2, W(0, 0), 3, C(SELF, sc, seL4_CapNull)));
    EXPECT_OK(invoke(other, TCBSetSchedParams, 2, W(0, 0), 3, C(SELF, seL4_CapNull, seL4_CapNull)));
}

KTEST(tcb, set_timeout_endpoint_checks)
{
    seL4_CPtr t = make_tcb();
    EXPECT_TRUNC(invoke(t, TCBSetTimeoutEndpoint, 0, NOW, 0, NOC));
    expect_inv_cap(invoke(t, TCBSetTimeoutEndpoint, 0, NOW, 1, C(ROOT)), 1);
    EXPECT_OK(invoke(t, TCBSetTimeoutEndpoint, 0, NOW, 1, C(seL4_CapNull)));
}

KTEST(tcb, suspend_and_resume_have_no_checks)
{
    seL4_CPtr t = make_tcb();
    EXPECT_OK(invoke(t, TCBResume, 0, NOW, 0, NOC));
    EXPECT_OK(invoke(t, TCBSuspend, 0, NOW, 0, NOC));
    EXPECT_OK(invoke(t, TCBSuspend, 0, NOW, 0, NOC));
}

KTEST(tcb, bind_notification_checks)
{
    seL4_CPtr t = make_tcb();
    seL4_CPtr t2 = make_tcb();
    seL4_CPtr n = make(seL4_NotificationObject, 0);
    seL4_CPtr n2 = make(seL4_NotificationObject, 0);
    EXPECT_TRUNC(invoke(t, TCBBindNotification, 0, NOW, 0, NOC));
    EXPECT_ILLEGAL(invoke(t, TCBBindNotification, 0, NOW, 1, C(ROOT)));
    EXPECT_ILLEGAL(invoke(t, TCBBindNotification, 0, NOW, 1, C(seL4_CapNull)));
    EXPECT_ILLEGAL(invoke(t, TCBUnbindNotification, 0, NOW, 0, NOC));
    EXPECT_OK(invoke(t, TCBBindNotification, 0, NOW, 1, C(n)));
    /* t already bound (checked before the cap type) */
    EXPECT_ILLEGAL(invoke(t, TCBBindNotification, 0, NOW, 1, C(ROOT)));
    EXPECT_ILLEGAL(invoke(t, TCBBindNotification, 0, NOW, 1, C(n2)));
    /* n bound to another TCB */
    EXPECT_ILLEGAL(invoke(t2, TCBBindNotification, 0, NOW, 1, C(n)));
    EXPECT_OK(invoke(t, TCBUnbindNotification, 0, NOW, 0, NOC));
    EXPECT_ILLEGAL(invoke(t, TCBUnbindNotification, 0, NOW, 0, NOC));
    EXPECT_OK(invoke(t2, TCBBindNotification, 0, NOW, 1, C(n)));
    EXPECT_OK(invoke(t2, TCBUnbindNotification, 0, NOW, 0, NOC));
}

KTEST(tcb, bind_notification_needs_receive_right)
{
    seL4_CPtr t = make_tcb();
    seL4_CPtr n = make(seL4_NotificationObject, 0);
    seL4_CPtr s = alloc_slot();
    KASSERT_EQ(seL4_CNode_Mint(ROOT, s, 64, ROOT, n, 64, seL4_CapRights_new(0, 0, 0, 1), 0), seL4_NoError);
    EXPECT_ILLEGAL(invoke(t, TCBBindNotification, 0, NOW, 1, C(s)));
    EXPECT_OK(invoke(t, TCBBindNotification, 0, NOW, 1, C(n)));
}

KTEST(tcb, set_tls_base_checks)
{
    seL4_CPtr t = make_tcb();
    EXPECT_TRUNC(invoke(t, TCBSetTLSBase, 0, NOW, 0, NOC));
    EXPECT_OK(invoke(t, TCBSetTLSBase, 1, W(0x1234), 0, NOC));
}

/* ================================================================== */
/* DomainSet_Set                                                       */

KTEST(tcb, domain_set_checks)
{
    seL4_CPtr d = seL4_CapDomain;
    seL4_CPtr t = make_tcb();
    EXPECT_ILLEGAL(invoke(d, 31, 1, W(0), 1, C(t)));
    EXPECT_TRUNC(invoke(d, DomainSetSet, 0, NOW, 1, C(t)));
    expect_inv_arg(invoke(d, DomainSetSet, 1, W(1), 1, C(t)), 0);
    expect_inv_arg(invoke(d, DomainSetSet, 1, W(1), 0, NOC), 0); /* domain before the cap */
    EXPECT_TRUNC(invoke(d, DomainSetSet, 1, W(0), 0, NOC));
    expect_inv_arg(invoke(d, DomainSetSet, 1, W(0), 1, C(ROOT)), 1);
    expect_inv_arg(invoke(d, DomainSetSet, 1, W(0), 1, C(seL4_CapNull)), 1);
    EXPECT_OK(invoke(d, DomainSetSet, 1, W(0), 1, C(t)));
    KASSERT_EQ(seL4_DomainSet_Set(d, 0, SELF), seL4_NoError);
}

/* ================================================================== */
/* SchedControl_ConfigureFlags                                          */

KTEST(sched, configure_flags_checks)
{
    seL4_CPtr ctl = sched_control();
    seL4_CPtr sc7 = make_sc(7);
    seL4_CPtr sc8 = make_sc(8);
    EXPECT_ILLEGAL(invoke(ctl, 32, 5, W(1000, 1000, 0, 0, 0), 1, C(sc7)));
    EXPECT_TRUNC(invoke(ctl, SchedControlConfigureFlags, 5, W(1000, 1000, 0, 0, 0), 0, NOC));
    EXPECT_TRUNC(invoke(ctl, SchedControlConfigureFlags, 0, NOW, 0, NOC));
    EXPECT_TRUNC(invoke(ctl, SchedControlConfigureFlags, 4, W(1000, 1000, 0, 0), 1, C(sc7)));
    expect_inv_cap(invoke(ctl, SchedControlConfigureFlags, 5, W(1000, 1000, 0, 0, 0), 1, C(ROOT)), 1);
    expect_inv_cap(invoke(ctl, SchedControlConfigureFlags, 5, W(1, 1, 0, 0, 0), 1, C(seL4_CapNull)), 1);
    /* budget */
    expect_range(invoke(ctl, SchedControlConfigureFlags, 5, W(19, 1000, 0, 0, 0), 1, C(sc7)), 20, MAX_PERIOD_US);
    expect_range(invoke(ctl, SchedControlConfigureFlags, 5, W(1, 1000, 0, 0, 0), 1, C(sc7)), 20, MAX_PERIOD_US);
    expect_range(invoke(ctl, SchedControlConfigureFlags, 5, W(MAX_PERIOD_US + 1, 1000, 0, 0, 0), 1, C(sc7)), 20,
                 MAX_PERIOD_US);
    /* period */
    expect_range(invoke(ctl, SchedControlConfigureFlags, 5, W(20, 19, 0, 0, 0), 1, C(sc7)), 20, MAX_PERIOD_US);
    expect_range(invoke(ctl, SchedControlConfigureFlags, 5, W(20, MAX_PERIOD_US + 1, 0, 0, 0), 1, C(sc7)), 20,
                 MAX_PERIOD_US);
    /* budget > period */
    expect_range(invoke(ctl, SchedControlConfigureFlags, 5, W(1001, 1000, 0, 0, 0), 1, C(sc7)), 20, 1000);
    /* refills: a 2^7 SC holds exactly 2, a 2^8 SC 10; Kairos takes at most
     * KAIROS_MAX_REFILLS (8) and reports the range for that bound */
    seL4_Word max8 = kairos_max_extra_refills(8);
    KASSERT_EQ(max8, (10 < KAIROS_MAX_REFILLS ? 10 : KAIROS_MAX_REFILLS) - 2);
    expect_range(invoke(ctl, SchedControlConfigureFlags, 5, W(500, 1000, 1, 0, 0), 1, C(sc7)), 0, 0);
    expect_range(invoke(ctl, SchedControlConfigureFlags, 5, W(500, 1000, 9, 0, 0), 1, C(sc8)), 0, max8);
    expect_range(invoke(ctl, SchedControlConfigureFlags, 5, W(500, 1000, max8 + 1, 0, 0), 1, C(sc8)), 0, max8);
    expect_range(invoke(ctl, SchedControlConfigureFlags, 5, W(500, 1000, ~0ul, 0, 0), 1, C(sc8)), 0, max8);
    EXPECT_OK(invoke(ctl, SchedControlConfigureFlags, 5, W(500, 1000, max8, 0, 0), 1, C(sc8)));
    EXPECT_OK(invoke(ctl, SchedControlConfigureFlags, 5, W(500, 1000, 0, 0, 1), 1, C(sc7)));
    /* limits are inclusive; round robin ignores extra refills */
    EXPECT_OK(invoke(ctl, SchedControlConfigureFlags, 5, W(20, 20, 0, 0, 0), 1, C(sc7)));
    EXPECT_OK(invoke(ctl, SchedControlConfigureFlags, 5, W(20, MAX_PERIOD_US, 0, 0, 0), 1, C(sc7)));
    EXPECT_OK(invoke(ctl, SchedControlConfigureFlags, 5, W(MAX_PERIOD_US, MAX_PERIOD_US, 0, 7, 0), 1, C(sc7)));
    /* periods of hours */
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(ctl, sc8, 1000000, 3600000000ul * 5, 2, 0, seL4_SchedContext_Sporadic),
               seL4_NoError);
}

/* ================================================================== */
/* SchedContext invocations                                             */

KTEST(sched, sched_context_label_checks)
{
    seL4_CPtr sc = make_sc(7);
    EXPECT_ILLEGAL(invoke(sc, 31, 0, NOW, 0, NOC));
    EXPECT_ILLEGAL(invoke(sc, 37, 0, NOW, 0, NOC));
    EXPECT_ILLEGAL(invoke(sc, 0, 0, NOW, 0, NOC));
}

KTEST(sched, bind_checks)
{
    seL4_CPtr sc = make_sc(7);
    seL4_CPtr sc2 = make_sc(7);
    seL4_CPtr t = make_tcb();
    seL4_CPtr t2 = make_tcb();
    seL4_CPtr n = make(seL4_NotificationObject, 0);
    seL4_CPtr n2 = make(seL4_NotificationObject, 0);
    EXPECT_TRUNC(invoke(sc, SchedContextBind, 0, NOW, 0, NOC));
    expect_inv_cap(invoke(sc, SchedContextBind, 0, NOW, 1, C(ROOT)), 1);
    expect_inv_cap(invoke(sc, SchedContextBind, 0, NOW, 1, C(seL4_CapNull)), 1);
    EXPECT_OK(invoke(sc, SchedContextBind, 0, NOW, 1, C(t)));
    EXPECT_ILLEGAL(invoke(sc, SchedContextBind, 0, NOW, 1, C(t2)));  /* SC already bound */
    EXPECT_ILLEGAL(invoke(sc2, SchedContextBind, 0, NOW, 1, C(t)));  /* TCB already has one */
    EXPECT_ILLEGAL(invoke(sc2, SchedContextBind, 0, NOW, 1, C(SELF)));
    /* notifications: an SC may have one TCB and one notification */
    EXPECT_OK(invoke(sc, SchedContextBind, 0, NOW, 1, C(n)));
    EXPECT_ILLEGAL(invoke(sc, SchedContextBind, 0, NOW, 1, C(n2)));
    EXPECT_ILLEGAL(invoke(sc2, SchedContextBind, 0, NOW, 1, C(n)));
    EXPECT_OK(invoke(sc, SchedContextUnbind, 0, NOW, 0, NOC));
    EXPECT_OK(invoke(sc2, SchedContextBind, 0, NOW, 1, C(t)));
    EXPECT_OK(invoke(sc2, SchedContextBind, 0, NOW, 1, C(n)));
    EXPECT_OK(invoke(sc2, SchedContextUnbind, 0, NOW, 0, NOC));
}

KTEST(sched, unbind_checks)
{
    seL4_CPtr sc = make_sc(7);
    EXPECT_OK(invoke(sc, SchedContextUnbind, 0, NOW, 0, NOC)); /* unbound: not an error */
    EXPECT_ILLEGAL(invoke(seL4_CapInitThreadSC, SchedContextUnbind, 0, NOW, 0, NOC));
}

KTEST(sched, unbind_object_checks)
{
    seL4_CPtr sc = make_sc(7);
    seL4_CPtr t = make_tcb();
    seL4_CPtr t2 = make_tcb();
    seL4_CPtr n = make(seL4_NotificationObject, 0);
    EXPECT_TRUNC(invoke(sc, SchedContextUnbindObject, 0, NOW, 0, NOC));
    expect_inv_cap(invoke(sc, SchedContextUnbindObject, 0, NOW, 1, C(ROOT)), 1);
    EXPECT_ILLEGAL(invoke(sc, SchedContextUnbindObject, 0, NOW, 1, C(t)));
    EXPECT_ILLEGAL(invoke(sc, SchedContextUnbindObject, 0, NOW, 1, C(n)));
    EXPECT_OK(invoke(sc, SchedContextBind, 0, NOW, 1, C(t)));
    EXPECT_ILLEGAL(invoke(sc, SchedContextUnbindObject, 0, NOW, 1, C(t2)));
    EXPECT_OK(invoke(sc, SchedContextUnbindObject, 0, NOW, 1, C(t)));
    EXPECT_ILLEGAL(invoke(sc, SchedContextUnbindObject, 0, NOW, 1, C(t)));
    EXPECT_OK(invoke(sc, SchedContextBind, 0, NOW, 1, C(n)));
    EXPECT_OK(invoke(sc, SchedContextUnbindObject, 0, NOW, 1, C(n)));
    /* the caller's own TCB */
    EXPECT_ILLEGAL(invoke(seL4_CapInitThreadSC, SchedContextUnbindObject, 0, NOW, 1, C(SELF)));
}

KTEST(sched, consumed_counts_and_resets)
{
    reply_t r = invoke(seL4_CapInitThreadSC, SchedContextConsumed, 0, NOW, 0, NOC);
    EXPECT_REPLY(r, seL4_NoError, 1);
    for (volatile long i = 0; i < 200000; i++)
        ;
    seL4_SchedContext_Consumed_t c = seL4_SchedContext_Consumed(seL4_CapInitThreadSC);
    KASSERT_EQ(c.error, seL4_NoError);
    KASSERT(c.consumed > 0);
    KASSERT(c.consumed < 10000000);
    /* a never-used SC has consumed nothing */
    c = seL4_SchedContext_Consumed(make_sc(7));
    KASSERT_EQ(c.error, seL4_NoError);
    KASSERT_EQ(c.consumed, 0);
}

KTEST(sched, yield_to_checks)
{
    seL4_CPtr sc = make_sc(7);
    EXPECT_ILLEGAL(invoke(sc, SchedContextYieldTo, 0, NOW, 0, NOC));
    EXPECT_ILLEGAL(invoke(seL4_CapInitThreadSC, SchedContextYieldTo, 0, NOW, 0, NOC));
    seL4_CPtr t = make_tcb();
    EXPECT_OK(invoke(sc, SchedContextBind, 0, NOW, 1, C(t)));
    reply_t r = invoke(sc, SchedContextYieldTo, 0, NOW, 0, NOC);
    EXPECT_REPLY(r, seL4_NoError, 1);
    EXPECT_OK(invoke(sc, SchedContextUnbind, 0, NOW, 0, NOC));
}

KTEST(sched, bind_to_running_thread_schedules_it)
{
    stop_children();
    child_t *c = new_child(255);
    flag_word = 0;
    start_child(c, child_set_flag, 21, c->tcb, true);
    KASSERT(wait_for(&flag_word, 21));
    /* after it suspended itself, rebinding a different SC works */
    KASSERT_EQ(seL4_SchedContext_UnbindObject(c->sc, c->tcb), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(c->sc, c->tcb), seL4_NoError);
    stop_children();
}

/* ================================================================== */
/* Priority changes of queued threads, deletion                        */

KTEST(tcb, priority_change_requeues_a_ready_thread)
{
    stop_children();
    child_t *a = new_child(100);
    child_t *b = new_child(200);
    order_n = 0;
    start_child(a, child_log, 1, a->tcb, true);
    start_child(b, child_log, 2, b->tcb, true);
    /* a is queued at 100; moving it to 250 must move it to that queue. */
    KASSERT_EQ(seL4_TCB_SetPriority(a->tcb, SELF, 250), seL4_NoError);
    KASSERT_EQ(seL4_TCB_SetPriority(SELF, SELF, 10), seL4_NoError);
    KASSERT_EQ(order_n, 2);
    KASSERT_EQ(order_log[0], 1);
    KASSERT_EQ(order_log[1], 2);
    KASSERT_EQ(seL4_TCB_SetPriority(SELF, SELF, 255), seL4_NoError);
    stop_children();
}

/* Forget a child whose caps were deleted (stop_children must not touch them). */
static void drop_child(child_t *c)
{
    for (int i = 0; i < n_children; i++) {
        if (&children[i] == c) {
            children[i] = children[n_children - 1];
            n_children--;
            return;
        }
    }
}

KTEST(tcb, deleting_a_running_thread_stops_it)
{
    stop_children();
    child_t *c = new_child(255);
    counter = 0;
    start_child(c, child_count, 0, c->tcb, true);
    KASSERT(wait_counter_above(0));
    KASSERT_EQ(seL4_CNode_Delete(ROOT, c->tcb, 64), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(c->tcb), TAG_NULL);
    seL4_Word at = counter;
    yield_n(20);
    KASSERT_EQ(counter, at);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, c->sc, 64), seL4_NoError);
    drop_child(c);
}

static void child_delete_self(seL4_Word unused, seL4_Word self)
{
    (void)unused;
    flag_word = 1;
    seL4_CNode_Delete(ROOT, self, 64);
    flag_word = 0xbad; /* never reached: the thread no longer exists */
    for (;;)
        seL4_Yield();
}

KTEST(tcb, thread_deletes_its_own_tcb)
{
    stop_children();
    child_t *c = new_child(255);
    flag_word = 0;
    start_child(c, child_delete_self, 0, c->tcb, true);
    KASSERT(wait_for(&flag_word, 1));
    for (int i = 0; i < 2000 && seL4_DebugCapIdentify(c->tcb) != TAG_NULL; i++)
        seL4_Yield();
    /* As in seL4, the first step of deleting a TCB suspends its thread. If
     * a preemption point then finds an interrupt pending (under the host
     * clock the check flavour's invariant checker can outlast the child's
     * 1 ms slice), the delete stops with the cap a zombie and the thread,
     * now inactive, never re-executes its call: the zombie stays until
     * someone deletes the cap again, which finishes the job. */
    if (seL4_DebugCapIdentify(c->tcb) == TAG_ZOMBIE) {
        printf("ktest: tcb/thread_deletes_its_own_tcb: self-delete preempted, finished from the root\n");
        KASSERT_EQ(seL4_CNode_Delete(ROOT, c->tcb, 64), seL4_NoError);
    }
    KASSERT_EQ(seL4_DebugCapIdentify(c->tcb), TAG_NULL);
    yield_n(20);
    KASSERT_EQ(flag_word, 1);
    /* its SC is unbound and can be given to another thread */
    child_t *d = new_child(255);
    KASSERT_EQ(seL4_SchedContext_Unbind(d->sc), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(c->sc, d->tcb), seL4_NoError);
    flag_word = 0;
    start_child(d, child_set_flag, 5, d->tcb, true);
    KASSERT(wait_for(&flag_word, 5));
    KASSERT_EQ(seL4_SchedContext_Unbind(c->sc), seL4_NoError);
    drop_child(c);
    stop_children();
}

KTEST(sched, deleting_a_bound_sc_stops_its_thread)
{
    stop_children();
    child_t *c = new_child(255);
    counter = 0;
    start_child(c, child_count, 0, c->tcb, true);
    KASSERT(wait_counter_above(0));
    KASSERT_EQ(seL4_CNode_Delete(ROOT, c->sc, 64), seL4_NoError);
    seL4_Word at = counter;
    yield_n(20);
    KASSERT_EQ(counter, at);
    /* A new SC lets it continue. */
    c->sc = make_sc(7);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(sched_control(), c->sc, 500, 500, 0, 0, 0), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(c->sc, c->tcb), seL4_NoError);
    KASSERT(wait_counter_above(at));
    stop_children();
}

KTEST(tcb, configure_refuses_to_replace_the_last_cap_to_a_cnode)
{
    seL4_CPtr t = make_tcb();
    seL4_CPtr cn = make(seL4_CapTableObject, 4);
    seL4_CPtr vs = seL4_CapInitThreadVSpace;
    /* The TCB's CSpace slot gets a copy; then the original goes away. */
    KASSERT_EQ(seL4_TCB_Configure(t, cn, 60, vs, 0, 0, seL4_CapNull), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, cn, 64), seL4_NoError);
    EXPECT_ILLEGAL(invoke(t, TCBConfigure, 3, W(0, 0, 0), 3, C(ROOT, vs, seL4_CapNull)));
    EXPECT_ILLEGAL(invoke(t, TCBSetSpace, 2, W(0, 0), 3, C(seL4_CapNull, ROOT, vs)));
    /* the buffer is checked before it */
    EXPECT_REPLY(invoke(t, TCBConfigure, 3, W(0, 0, 0x1010), 3, C(ROOT, vs, make(seL4_RISCV_4K_Page, 0))),
                 seL4_AlignmentError, 0);
    /* Deleting the TCB deletes the CNode with it. */
    KASSERT_EQ(seL4_CNode_Delete(ROOT, t, 64), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(t), TAG_NULL);
}

KTEST(tcb, configured_caps_are_copies)
{
    /* The TCB keeps its own copies: deleting the caps it was configured
     * with leaves it able to run. */
    stop_children();
    child_t *c = new_child(255);
    seL4_CPtr cn = alloc_slot();
    KASSERT_EQ(seL4_CNode_Copy(ROOT, cn, 64, ROOT, ROOT, 64, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_TCB_Configure(c->tcb, cn, 0, seL4_CapInitThreadVSpace, 0, 0, seL4_CapNull), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, cn, 64), seL4_NoError);
    flag_word = 0;
    start_child(c, child_set_flag, 13, c->tcb, true);
    KASSERT(wait_for(&flag_word, 13));
    stop_children();
}

/* The child disables its own FPU: that takes effect at once. */
extern char fpu_self_child[], fpu_self_fault[];
__asm__(".text\n.balign 4\n.global fpu_self_child\nfpu_self_child:\n"
        "mv s0, a0\n"
        "la t0, fp_in\n fld f1, 8(t0)\n"
        "mv a0, s0\n li a1, (17 << 12) | 2\n li a2, 0\n li a3, 1\n li a7, -1\n ecall\n"
        "la t0, fp_phase\n li t1, 1\n sd t1, 0(t0)\n"
        ".global fpu_self_fault\nfpu_self_fault:\n"
        "fmv.x.d t1, f1\n"
        "la t0, fp_out\n sd t1, 8(t0)\n"
        "la t0, fp_phase\n li t1, 2\n sd t1, 0(t0)\n"
        "3: li a7, -11\n ecall\n j 3b\n");

KTEST(tcb, disabling_own_fpu_takes_effect_at_once)
{
    stop_children();
    child_t *c = new_child(255);
    fp_in[1] = 0x400921fb54442d18ul;
    fp_out[1] = 0;
    fp_phase = 0;
    start_child(c, (void (*)(seL4_Word, seL4_Word))fpu_self_child, c->tcb, 0, true);
    KASSERT(wait_for(&fp_phase, 1));
    KASSERT(wait_pc(c->tcb, (seL4_Word)fpu_self_fault));
    yield_n(5);
    KASSERT_EQ(fp_phase, 1);
    seL4_UserContext r;
    KASSERT_EQ(seL4_TCB_ReadRegisters(c->tcb, false, 0, 1, &r), seL4_NoError);
    KASSERT_EQ(r.pc, (seL4_Word)fpu_self_fault);
    seL4_TCB_SetFlags_t f = seL4_TCB_SetFlags(c->tcb, seL4_TCBFlag_fpuDisabled, 0);
    KASSERT_EQ(f.flags, 0);
    KASSERT_EQ(seL4_TCB_Resume(c->tcb), seL4_NoError);
    KASSERT(wait_for(&fp_phase, 2));
    KASSERT_EQ(fp_out[1], fp_in[1]);
    stop_children();
}

/* ---- children that invoke ------------------------------------------ */

static volatile seL4_Word result_word;

/* YieldTo needs the caller's MCP to be at least the target's priority. */
static void child_yield_to(seL4_Word sc, seL4_Word self)
{
    seL4_SchedContext_YieldTo_t r = seL4_SchedContext_YieldTo(sc);
    result_word = (seL4_Word)r.error + 1;
    child_exit(self);
}

KTEST(sched, yield_to_needs_mcp_of_the_target_priority)
{
    stop_children();
    child_t *c = new_child(255); /* MCP 0 */
    seL4_CPtr t = make_tcb();
    seL4_CPtr sc = make_sc(7);
    KASSERT_EQ(seL4_TCB_SetPriority(t, SELF, 5), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(sc, t), seL4_NoError);
    result_word = 0;
    start_child(c, child_yield_to, sc, c->tcb, true);
    KASSERT(wait_for(&result_word, seL4_IllegalOperation + 1));
    /* with MCP 5 it is allowed */
    KASSERT_EQ(seL4_TCB_SetMCPriority(c->tcb, SELF, 5), seL4_NoError);
    result_word = 0;
    start_child(c, child_yield_to, sc, c->tcb, true);
    KASSERT(wait_for(&result_word, seL4_NoError + 1));
    KASSERT_EQ(seL4_SchedContext_Unbind(sc), seL4_NoError);
    stop_children();
}

static seL4_UserContext child_read_out;

/* Reads all 32 registers of another thread: MR4 and up arrive in the IPC
 * buffer the kernel knows for this thread. */
static void child_read_registers(seL4_Word target, seL4_Word self)
{
    seL4_Error e = seL4_TCB_ReadRegisters(target, true, 0, 32, &child_read_out);
    result_word = (seL4_Word)e + 1;
    child_exit(self);
}

KTEST(tcb, thread_with_an_ipc_buffer_gets_long_replies)
{
    stop_children();
    child_t *spin = new_child(255);
    child_t *reader = new_child(255);
    start_child(spin, (void (*)(seL4_Word, seL4_Word))reg_child, 0, 0, true);
    KASSERT(wait_pc(spin->tcb, (seL4_Word)reg_child_spin));
    /* The reader shares the root's IPC buffer (the library's buffer pointer
     * is a global); the root does not use it while the reader runs. */
    KASSERT_EQ(seL4_TCB_SetIPCBuffer(reader->tcb, (seL4_Word)kairos_bootinfo()->ipcBuffer, seL4_CapInitThreadIPCBuffer),
               seL4_NoError);
    result_word = 0;
    start_child(reader, child_read_registers, spin->tcb, reader->tcb, true);
    KASSERT(wait_for(&result_word, seL4_NoError + 1));
    KASSERT_EQ(child_read_out.pc, (seL4_Word)reg_child_spin);
    KASSERT_EQ(child_read_out.s0, 0x1004);
    KASSERT_EQ(child_read_out.a0, 0x1010);
    KASSERT_EQ(child_read_out.t6, 0x101e);
    stop_children();
}

KTEST(sched, yield_to_runs_an_equal_priority_target_first)
{
    stop_children();
    child_t *eq = new_child(255);
    child_t *low = new_child(100);
    flag_word = 0;
    start_child(low, child_set_flag, 1, low->tcb, true);
    start_child(eq, child_set_flag, 2, eq->tcb, false);
    /* The root's 5 ms slice could end between two of its calls (in the
     * check flavour the invariant checker after every call is charged to
     * it) and let the equal-priority child run; the child's 1 ms slice could
     * end before its first instruction when the host is busy (QEMU's timer
     * follows the host clock). Slices of 1 s avoid both. */
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(sched_control(), seL4_CapInitThreadSC, 1000000, 1000000, 0, 0, 0),
               seL4_NoError);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(sched_control(), eq->sc, 1000000, 1000000, 0, 0, 0), seL4_NoError);
    /* a lower-priority target only moves to the head of its queue */
    seL4_SchedContext_YieldTo_t r = seL4_SchedContext_YieldTo(low->sc);
    KASSERT_EQ(r.error, seL4_NoError);
    KASSERT_EQ(flag_word, 0);
    /* an equal-priority one runs before the call returns */
    KASSERT_EQ(seL4_TCB_Resume(eq->tcb), seL4_NoError);
    KASSERT_EQ(flag_word, 0);
    r = seL4_SchedContext_YieldTo(eq->sc);
    KASSERT_EQ(r.error, seL4_NoError);
    KASSERT_EQ(flag_word, 2);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(sched_control(), seL4_CapInitThreadSC, 5000, 5000, 0, 0, 0),
               seL4_NoError);
    stop_children();
}

KTEST(tcb, threads_reuse_memory_after_revoke)
{
    /* Create, run and destroy a thread (with its SC) many times in the same
     * memory: finalisation leaves nothing behind in the scheduler, the FPU
     * owner or the debug thread list. */
    stop_children();
    seL4_CPtr ut = make(seL4_UntypedObject, 14);
    seL4_CPtr slots = alloc_slots(2);
    for (int round = 0; round < 20; round++) {
        KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_TCBObject, 0, ROOT, 0, 0, slots, 1), seL4_NoError);
        KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_SchedContextObject, 8, ROOT, 0, 0, slots + 1, 1), seL4_NoError);
        child_t *c = &children[0];
        n_children = 1;
        c->tcb = slots;
        c->sc = slots + 1;
        c->stack_top = &child_stacks[0][CHILD_STACK_WORDS];
        KASSERT_EQ(seL4_TCB_Configure(c->tcb, ROOT, 0, seL4_CapInitThreadVSpace, 0, 0, seL4_CapNull), seL4_NoError);
        KASSERT_EQ(seL4_SchedControl_ConfigureFlags(sched_control(), c->sc, 1000, 1000, 0, 0, 0), seL4_NoError);
        KASSERT_EQ(seL4_SchedContext_Bind(c->sc, c->tcb), seL4_NoError);
        KASSERT_EQ(seL4_TCB_SetPriority(c->tcb, SELF, 255), seL4_NoError);
        if (round % 2) {
            /* odd rounds: the thread uses the FPU and is still running when deleted */
            for (int i = 0; i < 33; i++)
                fp_in[i] = (seL4_Word)round << 8 | (seL4_Word)i;
            fp_in[32] = 0;
            fp_phase = fp_go = 0;
            start_child(c, (void (*)(seL4_Word, seL4_Word))fpu_child, 0, 0, true);
            KASSERT(wait_for(&fp_phase, 1));
            for (int i = 0; i < 33; i++)
                KASSERT_EQ(fp_init[i], 0);
        } else {
            flag_word = 0;
            start_child(c, child_set_flag, 100 + (seL4_Word)round, c->tcb, true);
            KASSERT(wait_for(&flag_word, 100 + (seL4_Word)round));
        }
        KASSERT_EQ(seL4_CNode_Revoke(ROOT, ut, 64), seL4_NoError);
        KASSERT_EQ(seL4_DebugCapIdentify(slots), TAG_NULL);
        KASSERT_EQ(seL4_DebugCapIdentify(slots + 1), TAG_NULL);
        n_children = 0;
    }
}

static volatile seL4_Word read4_pc;

/* ReadRegisters(count 32) from a thread without an IPC buffer: 4 MRs. */
static void child_read_without_buffer(seL4_Word target, seL4_Word self)
{
    seL4_Word m0 = 1, m1 = 32, m2 = 0, m3 = 0;
    seL4_MessageInfo_t info =
        seL4_CallWithMRs(target, seL4_MessageInfo_new(TCBReadRegisters, 0, 0, 2), &m0, &m1, &m2, &m3);
    read4_pc = m0;
    result_word = (seL4_MessageInfo_get_label(info) << 8) | (seL4_MessageInfo_get_length(info) + 1);
    child_exit(self);
}

KTEST(tcb, read_registers_without_ipc_buffer_gives_four)
{
    stop_children();
    child_t *spin = new_child(255);
    child_t *reader = new_child(255);
    start_child(spin, (void (*)(seL4_Word, seL4_Word))reg_child, 0, 0, true);
    KASSERT(wait_pc(spin->tcb, (seL4_Word)reg_child_spin));
    result_word = 0;
    start_child(reader, child_read_without_buffer, spin->tcb, reader->tcb, true);
    KASSERT(wait_for(&result_word, 4 + 1));
    KASSERT_EQ(read4_pc, (seL4_Word)reg_child_spin);
    stop_children();
}

KTEST(tcb, invocations_by_send_reply_nothing)
{
    stop_children();
    child_t *c = new_child(255);
    counter = 0;
    start_child(c, child_count, 0, c->tcb, true);
    KASSERT(wait_counter_above(0));
    /* Send performs the invocation and writes no reply (a1-a5 keep their values). */
    seL4_Word m0 = 0x77, m1 = 0x88, m2 = 0x99, m3 = 0xaa;
    seL4_SendWithMRs(c->tcb, seL4_MessageInfo_new(TCBSuspend, 0, 0, 0), &m0, &m1, &m2, &m3);
    seL4_Word at = counter;
    yield_n(10);
    KASSERT_EQ(counter, at);
    /* NBSend too; an error is dropped silently. */
    seL4_NBSend(c->tcb, seL4_MessageInfo_new(TCBResume, 0, 0, 0));
    KASSERT(wait_counter_above(at));
    seL4_NBSend(c->tcb, seL4_MessageInfo_new(TCBReadRegisters, 0, 0, 0)); /* Trunc, not reported */
    stop_children();
}

/* Send (a7 = -5) on cap with info and MR0..MR1 = m0, m1; returns a1 and a2 after it. */
static void send_snapshot(seL4_CPtr cap, seL4_Word info, seL4_Word m0, seL4_Word m1, seL4_Word out[2])
{
    register seL4_Word a0 __asm__("a0") = cap;
    register seL4_Word a1 __asm__("a1") = info;
    register seL4_Word a2 __asm__("a2") = m0;
    register seL4_Word a3 __asm__("a3") = m1;
    register seL4_Word a7 __asm__("a7") = (seL4_Word)seL4_SysSend;
    __asm__ volatile("ecall" : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3) : "r"(a7) : "memory");
    out[0] = a1;
    out[1] = a2;
}

KTEST(tcb, replies_with_words_are_only_for_call)
{
    seL4_CPtr t = make_tcb();
    seL4_Word out[2];
    seL4_Word info = seL4_MessageInfo_new(TCBSetFlags, 0, 0, 2).words[0];
    send_snapshot(t, info, 0, 1, out);
    KASSERT_EQ(out[0], info);
    KASSERT_EQ(out[1], 0);
    seL4_TCB_SetFlags_t f = seL4_TCB_SetFlags(t, 0, 0);
    KASSERT_EQ(f.flags, 1); /* the Send did set the flag */
    info = seL4_MessageInfo_new(SchedContextConsumed, 0, 0, 0).words[0];
    send_snapshot(seL4_CapInitThreadSC, info, 0x1234, 0, out);
    KASSERT_EQ(out[0], info);
    KASSERT_EQ(out[1], 0x1234);
}
