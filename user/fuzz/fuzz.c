/*
 * fuzz: an on-target fuzzer of the kernel's system-call interface
 * (`make fuzz`, docs/robustness.md).
 *
 *   thread        priority  scheduling context        does
 *   root          255       2 ms every 5 ms           supervises: kills and re-creates
 *                                                     workers, suspends, resumes and
 *                                                     rebinds them, arms the device
 *                                                     interrupt, detects hangs, reports
 *   irq           240       0.5 ms every 5 ms         takes the RTC interrupt, acks it
 *   fault handler 230       1 ms every 5 ms           takes every fault and timeout fault
 *   worker 0..5   50..200   0.2-1 ms every 1-4 ms     random system calls, hostile ones
 *
 * Each worker has a CSpace of its own (a 128-slot CNode) holding caps to
 * objects of every type: its CNode, TCB, an untyped to retype from, shared
 * endpoints and a notification, a reply object, its fault endpoint,
 * scheduling contexts and SchedControl, the RTC's IRQ handler, the TCBs of
 * two other workers, a frame, page tables and a VSpace of its own. Each
 * call is a random system call with random registers and IPC-buffer words,
 * mostly shaped like a valid invocation of the cap it names (the right
 * labels, slot numbers, depth 64, object types, budgets), otherwise hostile
 * (any label, length, cptr, depth, word). Some calls fault on purpose
 * (unmapped load, illegal instruction, breakpoint, unknown system call).
 * The fault handler restarts a faulting worker at the top of its loop and
 * resumes a worker after a timeout fault; the workers' own timeout faults
 * come from their budgets running out. Every object a worker has lives in
 * one untyped of the root's, so killing a worker is one Revoke, whatever
 * state the worker is in (running, blocked in IPC, suspended).
 *
 * Boot arguments: seed=N calls=N (stop after N system calls in all),
 * replay=N (print every call from the N-th on, before it is made). Under
 * -icount with sleep=off everything is deterministic: the same seed gives
 * the same run, which the final digest shows. A replay run is the same run
 * up to its first printed call (printing takes time, so later calls
 * interleave differently, while each thread's own sequence of calls stays
 * the same).
 *
 * The verdict: `kairos-result: PASS` once all the calls are made with every
 * worker making progress; a kernel panic or invariant violation stops the
 * machine (the runner reports it), a stall of all workers for HANG_TICKS
 * root periods is reported as a hang.
 */
#include <kairos/kairos.h>
#include <sel4/sel4.h>
#include <stdio.h>
#include <string.h>

#define ROOT seL4_CapInitThreadCNode
#define SELF seL4_CapInitThreadTCB
#define NWORKERS 6
#define HANG_TICKS 400

/* ---- configuration from the boot arguments ---------------------------- */

static uint64_t cfg_seed = 1, cfg_calls = 10000, cfg_replay = ~0ull;

static uint64_t parse_u64(const char *s)
{
    uint64_t v = 0;
    while (*s >= '0' && *s <= '9')
        v = v * 10 + (uint64_t)(*s++ - '0');
    return v;
}

static void read_bootargs(void)
{
    uint32_t len = 0;
    const void *fdt = kairos_bootinfo_fdt(kairos_bootinfo(), NULL);
    const char *args = fdt ? kairos_fdt_getprop(fdt, "/chosen", "bootargs", &len) : NULL;
    for (uint32_t i = 0; args && i < len && args[i]; i++) {
        if (i > 0 && args[i - 1] != ' ')
            continue;
        if (strncmp(&args[i], "seed=", 5) == 0)
            cfg_seed = parse_u64(&args[i + 5]);
        else if (strncmp(&args[i], "calls=", 6) == 0)
            cfg_calls = parse_u64(&args[i + 6]);
        else if (strncmp(&args[i], "replay=", 7) == 0)
            cfg_replay = parse_u64(&args[i + 7]);
    }
}

/* ---- random numbers: one stream per worker incarnation ------------------ */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t next(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ull;
    return mix(*s);
}

static uint64_t below(uint64_t *s, uint64_t n) { return next(s) % n; }

/* ---- shared state -------------------------------------------------------- */

/* The calls the workers have issued so far (amoadd: atomic under preemption). */
static volatile uint64_t total_calls;
static volatile bool stopping;

struct worker {
    uint64_t rng;           /* its stream; survives restarts by the fault handler */
    volatile uint64_t calls; /* calls made by this slot, all incarnations */
    volatile uint64_t gen_calls; /* by the current incarnation */
    volatile uint64_t digest;
    volatile uint64_t faults; /* deliberate faults, counted before they happen */
    uint64_t gen;
    uint64_t last_calls;    /* root's view, for progress */
    uint64_t stalled_ticks;
    seL4_Word *ipc;         /* its IPC buffer (one page, mapped by the root) */
};
static struct worker workers[NWORKERS];

static struct {
    uint64_t faults[8];     /* by seL4 fault label */
    uint64_t fault_msgs;    /* messages on the fault endpoint with a bogus label (hostile sends) */
    uint64_t irqs;
    uint64_t incarnations, incarnations_ran, kills, restarts, suspends, rebinds, sc_changes, alarms;
} stats;

/* Printing in replay mode: one line at a time (a lock taken with amoswap;
 * a waiter yields). Owner is worker index + 1; the root clears it when it
 * kills or restarts the owner. */
static volatile uint64_t print_lock;

/* ---- raw system calls ---------------------------------------------------- */

typedef struct {
    seL4_Word a0, a1, a2, a3, a4, a5, a6, t0;
} regs_t;

static regs_t raw_syscall(seL4_Word sys, regs_t in)
{
    register seL4_Word r_a0 __asm__("a0") = in.a0;
    register seL4_Word r_a1 __asm__("a1") = in.a1;
    register seL4_Word r_a2 __asm__("a2") = in.a2;
    register seL4_Word r_a3 __asm__("a3") = in.a3;
    register seL4_Word r_a4 __asm__("a4") = in.a4;
    register seL4_Word r_a5 __asm__("a5") = in.a5;
    register seL4_Word r_a6 __asm__("a6") = in.a6;
    register seL4_Word r_t0 __asm__("t0") = in.t0;
    register seL4_Word r_a7 __asm__("a7") = sys;
    __asm__ volatile("ecall"
                     : "+r"(r_a0), "+r"(r_a1), "+r"(r_a2), "+r"(r_a3), "+r"(r_a4), "+r"(r_a5), "+r"(r_a6),
                       "+r"(r_t0)
                     : "r"(r_a7)
                     : "memory");
    regs_t out = {r_a0, r_a1, r_a2, r_a3, r_a4, r_a5, r_a6, r_t0};
    return out;
}

static void raw_yield(void) { (void)raw_syscall((seL4_Word)seL4_SysYield, (regs_t){0}); }

static void raw_print(const char *s)
{
    for (; *s; s++)
        (void)raw_syscall((seL4_Word)seL4_SysDebugPutChar, (regs_t){.a0 = (seL4_Word)*s});
}

/* ---- the workers' CSpace --------------------------------------------------- */

#define W_CNODE_BITS 7
#define W_GUARD_BITS (64 - W_CNODE_BITS)
enum {
    W_CNODE = 1,
    W_TCB = 2,
    W_UNTYPED = 3,
    W_EP = 4,
    W_EP_BADGED = 5,
    W_NTFN = 6,
    W_REPLY = 7,
    W_FAULT_EP = 8,
    W_SC = 9,
    W_SC_SPARE = 10,
    W_SCHED_CONTROL = 11,
    W_IRQ = 12,
    W_VICTIM0 = 13,
    W_VICTIM1 = 14,
    W_FRAME = 15,
    W_PT = 16,
    W_VSPACE = 17,
    W_ASID_POOL = 18,
    W_FIRST_FREE = 20,
    W_SLOTS = 1 << W_CNODE_BITS,
};

/* Where the workers' toy VSpaces map frames: any address, mostly these. */
#define TOY_VA 0x4000000000ul

/* ---- one random call --------------------------------------------------------- */

/* Argument kinds for invocation templates. */
enum { K_ANY, K_SLOT, K_DEPTH, K_TYPE, K_BITS, K_COUNT, K_RIGHTS, K_BADGE, K_TIME, K_PRIO, K_VA, K_SMALL, K_IRQ };
/* Extra-cap kinds. */
enum { X_ANY, X_CNODE, X_TCB, X_SC, X_NTFN, X_EP, X_VSPACE, X_FRAME, X_UNTYPED };

struct tmpl {
    uint8_t label, cap; /* cap: the slot kind invoked (an X_ value) */
    uint8_t nmr, nextra;
    uint8_t mr[8], extra[3];
};

/* Plausible shapes of the invocations (labels of kernel/include/invocation.h,
 * argument order of the seL4 API). */
static const struct tmpl templates[] = {
    {1, X_UNTYPED, 6, 1, {K_TYPE, K_BITS, K_SLOT, K_SMALL, K_SLOT, K_COUNT}, {X_CNODE}},
    {2, X_TCB, 2, 0, {K_SMALL, K_COUNT}, {0}},
    {3, X_TCB, 8, 0, {K_SMALL, K_COUNT, K_ANY, K_ANY, K_ANY, K_ANY, K_ANY, K_ANY}, {0}},
    {4, X_TCB, 2, 1, {K_SMALL, K_SMALL}, {X_TCB}},
    {5, X_TCB, 4, 3, {K_ANY, K_SMALL, K_VA, K_SMALL}, {X_CNODE, X_VSPACE, X_FRAME}},
    {6, X_TCB, 1, 1, {K_PRIO}, {X_TCB}},
    {7, X_TCB, 1, 1, {K_PRIO}, {X_TCB}},
    {8, X_TCB, 2, 3, {K_PRIO, K_PRIO}, {X_TCB, X_SC, X_EP}},
    {9, X_TCB, 0, 1, {0}, {X_EP}},
    {10, X_TCB, 1, 1, {K_VA}, {X_FRAME}},
    {11, X_TCB, 2, 3, {K_ANY, K_SMALL}, {X_EP, X_CNODE, X_VSPACE}},
    {12, X_TCB, 0, 0, {0}, {0}},
    {13, X_TCB, 0, 0, {0}, {0}},
    {14, X_TCB, 0, 1, {0}, {X_NTFN}},
    {15, X_TCB, 0, 0, {0}, {0}},
    {16, X_TCB, 1, 0, {K_ANY}, {0}},
    {17, X_TCB, 2, 0, {K_SMALL, K_SMALL}, {0}},
    {18, X_CNODE, 2, 0, {K_SLOT, K_DEPTH}, {0}},
    {19, X_CNODE, 2, 0, {K_SLOT, K_DEPTH}, {0}},
    {20, X_CNODE, 2, 0, {K_SLOT, K_DEPTH}, {0}},
    {21, X_CNODE, 5, 1, {K_SLOT, K_DEPTH, K_SLOT, K_DEPTH, K_RIGHTS}, {X_CNODE}},
    {22, X_CNODE, 6, 1, {K_SLOT, K_DEPTH, K_SLOT, K_DEPTH, K_RIGHTS, K_BADGE}, {X_CNODE}},
    {23, X_CNODE, 4, 1, {K_SLOT, K_DEPTH, K_SLOT, K_DEPTH}, {X_CNODE}},
    {24, X_CNODE, 5, 1, {K_SLOT, K_DEPTH, K_SLOT, K_DEPTH, K_BADGE}, {X_CNODE}},
    {25, X_CNODE, 8, 2, {K_SLOT, K_DEPTH, K_BADGE, K_SLOT, K_DEPTH, K_BADGE, K_SLOT, K_DEPTH}, {X_CNODE, X_CNODE}},
    {27, X_ANY, 0, 0, {0}, {0}},
    {28, X_ANY, 0, 1, {0}, {X_NTFN}},
    {29, X_ANY, 0, 0, {0}, {0}},
    {31, X_ANY, 5, 1, {K_TIME, K_TIME, K_SMALL, K_BADGE, K_SMALL}, {X_SC}},
    {32, X_SC, 0, 1, {0}, {X_TCB}},
    {32, X_SC, 0, 1, {0}, {X_NTFN}},
    {33, X_SC, 0, 0, {0}, {0}},
    {34, X_SC, 0, 1, {0}, {X_TCB}},
    {35, X_SC, 0, 0, {0}, {0}},
    {36, X_SC, 0, 0, {0}, {0}},
    {37, X_VSPACE, 2, 1, {K_VA, K_SMALL}, {X_VSPACE}},
    {38, X_VSPACE, 0, 0, {0}, {0}},
    {39, X_FRAME, 3, 1, {K_VA, K_RIGHTS, K_SMALL}, {X_VSPACE}},
    {40, X_FRAME, 0, 0, {0}, {0}},
    {41, X_FRAME, 0, 0, {0}, {0}},
    {43, X_ANY, 0, 1, {0}, {X_VSPACE}},
};
#define N_TEMPLATES (sizeof(templates) / sizeof(templates[0]))

static seL4_Word slot_of(uint64_t *r, int kind)
{
    static const uint8_t tcbs[] = {W_TCB, W_VICTIM0, W_VICTIM1};
    static const uint8_t scs[] = {W_SC, W_SC_SPARE};
    static const uint8_t eps[] = {W_EP, W_EP_BADGED, W_FAULT_EP};
    static const uint8_t vs[] = {W_PT, W_VSPACE};
    if (below(r, 8) == 0) /* whatever lies in a slot, or no slot at all */
        return below(r, 16) == 0 ? next(r) : below(r, W_SLOTS);
    switch (kind) {
    case X_CNODE: return W_CNODE;
    case X_TCB: return tcbs[below(r, 3)];
    case X_SC: return scs[below(r, 2)];
    case X_NTFN: return W_NTFN;
    case X_EP: return eps[below(r, 3)];
    case X_VSPACE: return vs[below(r, 2)];
    case X_FRAME: return W_FRAME;
    case X_UNTYPED: return W_UNTYPED;
    default: return below(r, 3) == 0 ? W_FIRST_FREE + below(r, 12) : 1 + below(r, W_ASID_POOL);
    }
}

static seL4_Word word_of(uint64_t *r, int kind)
{
    if (below(r, 10) == 0)
        kind = K_ANY;
    switch (kind) {
    case K_SLOT: return below(r, 4) == 0 ? 1 + below(r, W_ASID_POOL) : W_FIRST_FREE + below(r, 24);
    case K_DEPTH: return below(r, 8) == 0 ? below(r, 70) : 64;
    case K_TYPE: return below(r, 15);
    case K_BITS: return below(r, 4) == 0 ? below(r, 64) : below(r, 14);
    case K_COUNT: return 1 + below(r, below(r, 4) == 0 ? 300 : 4);
    case K_RIGHTS: return below(r, 16);
    case K_BADGE: return below(r, 4) == 0 ? next(r) : below(r, 8);
    case K_TIME: return below(r, 4) == 0 ? next(r) >> below(r, 64) : 50 + below(r, 5000);
    case K_PRIO: return below(r, 4) == 0 ? below(r, 300) : 40 + below(r, 170);
    case K_VA: return below(r, 4) == 0 ? next(r) : TOY_VA + (below(r, 64) << (12 + 9 * below(r, 2)));
    case K_SMALL: return below(r, 4);
    case K_IRQ: return below(r, 64);
    default: {
        static const seL4_Word specials[] = {0, 1, ~0ul, 1ul << 63, 64, 4096, 0x7fffffffffull};
        return below(r, 2) ? next(r) : specials[below(r, 7)];
    }
    }
}

/* One replay line: the registers, then the IPC-buffer words a call of
 * that length may read (MR4-MR9, the three extra-cap cptrs). */
static void format_call(char *out, size_t n, int w, uint64_t seq, seL4_Word sys, const regs_t *in,
                        const seL4_Word *ipc)
{
    snprintf(out, n,
             "call %llu w%d sys %ld a0 %#lx a1 %#lx a2 %#lx a3 %#lx a4 %#lx a5 %#lx a6 %#lx t0 %#lx "
             "mr4-9 %#lx %#lx %#lx %#lx %#lx %#lx caps %#lx %#lx %#lx\n",
             (unsigned long long)seq, w, (long)sys, in->a0, in->a1, in->a2, in->a3, in->a4, in->a5, in->a6, in->t0,
             ipc[5], ipc[6], ipc[7], ipc[8], ipc[9], ipc[10], ipc[122], ipc[123], ipc[124]);
}

/* A deliberate fault of kind k: the fault handler restarts the worker at
 * the top of its loop, so these never return normally. */
static void deliberate_fault(uint64_t k)
{
    switch (k) {
    case 0:
        __asm__ volatile("ld t1, 16(zero)" ::: "t1", "memory"); /* address 16 is unmapped: VM fault */
        break;
    case 1:
        __asm__ volatile(".option push\n.option norvc\n.word 0\n.option pop"); /* illegal instruction */
        break;
    case 2:
        __asm__ volatile("ebreak");
        break;
    default:
        (void)raw_syscall((seL4_Word)-40, (regs_t){0}); /* no such system call */
        break;
    }
}

static void one_call(struct worker *w, int index)
{
    uint64_t *r = &w->rng;
    seL4_Word *ipc = w->ipc;
    regs_t in = {0};
    seL4_Word sys;
    uint64_t what = below(r, 100);

    if (what < 2) {
        w->faults++;
        deliberate_fault(below(r, 4));
        return;
    }
    /* The message: a template most of the time, random otherwise. */
    seL4_Word label, length, extra, unwrapped = below(r, 8) == 0 ? below(r, 8) : 0;
    seL4_Word mrs[16];
    seL4_Word cap;
    if (below(r, 5) != 0) {
        const struct tmpl *t = &templates[below(r, N_TEMPLATES)];
        label = t->label;
        cap = slot_of(r, t->cap);
        length = t->nmr;
        extra = t->nextra;
        for (int i = 0; i < 16; i++)
            mrs[i] = i < t->nmr ? word_of(r, t->mr[i]) : word_of(r, K_ANY);
        for (int i = 0; i < 3; i++)
            ipc[1 + 121 + i] = slot_of(r, i < t->nextra ? t->extra[i] : X_ANY);
        if (below(r, 8) == 0)
            length = below(r, 10);
        if (below(r, 8) == 0)
            extra = below(r, 4);
    } else {
        label = below(r, 8) == 0 ? next(r) : below(r, 50);
        cap = slot_of(r, X_ANY);
        length = below(r, 4) == 0 ? below(r, 128) : below(r, 9);
        extra = below(r, 4);
        for (int i = 0; i < 16; i++)
            mrs[i] = word_of(r, K_ANY);
        for (int i = 0; i < 3; i++)
            ipc[1 + 121 + i] = slot_of(r, X_ANY);
    }
    for (int i = 4; i < 16; i++)
        ipc[1 + i] = mrs[i];
    /* Where received caps go (cap transfer). */
    ipc[1 + 124] = W_CNODE;
    ipc[1 + 125] = W_FIRST_FREE + below(r, 24);
    ipc[1 + 126] = below(r, 8) == 0 ? below(r, 70) : 64;
    in.a1 = (label << 12) | ((unwrapped & 7) << 9) | ((extra & 3) << 7) | (length & 0x7f);
    in.a2 = mrs[0];
    in.a3 = mrs[1];
    in.a4 = mrs[2];
    in.a5 = mrs[3];

    static const uint8_t recv_from[] = {W_EP, W_EP_BADGED, W_NTFN, W_FAULT_EP, W_REPLY};
    if (what < 70) {
        sys = (seL4_Word)seL4_SysCall;
        in.a0 = cap;
    } else if (what < 74) {
        sys = (seL4_Word)(below(r, 2) ? seL4_SysSend : seL4_SysNBSend);
        in.a0 = below(r, 2) ? cap : slot_of(r, X_EP);
    } else if (what < 80) {
        /* IPC among the workers: a message to a shared endpoint or a signal. */
        sys = (seL4_Word)(below(r, 3) == 0 ? seL4_SysNBSend : seL4_SysCall);
        in.a0 = below(r, 3) == 0 ? W_NTFN : (below(r, 2) ? W_EP : W_EP_BADGED);
    } else if (what < 88) {
        static const int8_t recvs[] = {seL4_SysRecv, seL4_SysNBRecv, seL4_SysWait, seL4_SysNBWait, seL4_SysNBRecv};
        sys = (seL4_Word)(long)recvs[below(r, 5)];
        in.a0 = recv_from[below(r, 5)];
        in.a6 = below(r, 6) == 0 ? slot_of(r, X_ANY) : W_REPLY;
    } else if (what < 93) {
        static const int8_t sendrecvs[] = {seL4_SysReplyRecv, seL4_SysNBSendRecv, seL4_SysNBSendWait};
        sys = (seL4_Word)(long)sendrecvs[below(r, 3)];
        in.a0 = recv_from[below(r, 5)];
        in.a6 = below(r, 2) ? W_REPLY : slot_of(r, X_EP);
        in.t0 = slot_of(r, X_EP);
    } else if (what < 97) {
        sys = (seL4_Word)seL4_SysYield;
    } else {
        /* Debug calls that change no state or only a name, and numbers that
         * are no system call (an unknown-syscall fault). */
        static const long others[] = {seL4_SysDebugCapIdentify, seL4_SysDebugNameThread, seL4_SysDebugSnapshot,
                                      KAIROS_SYS_DEBUG_COUNTER, 12, -19};
        sys = (seL4_Word)others[below(r, 6)];
        in.a0 = cap;
    }

    uint64_t seq;
    if (total_calls >= cfg_replay) {
        /* Replaying: the number is taken under the print lock, so the
         * lines come out in call order, each before its call. */
        char line[400];
        while (__atomic_exchange_n(&print_lock, (uint64_t)index + 1, __ATOMIC_ACQUIRE) != 0)
            raw_yield();
        seq = __atomic_fetch_add(&total_calls, 1, __ATOMIC_RELAXED);
        format_call(line, sizeof(line), index, seq, sys, &in, ipc);
        raw_print(line);
        __atomic_store_n(&print_lock, 0, __ATOMIC_RELEASE);
    } else {
        seq = __atomic_fetch_add(&total_calls, 1, __ATOMIC_RELAXED);
    }
    regs_t out = raw_syscall(sys, in);
    w->calls++;
    w->gen_calls++;
    w->digest = mix(w->digest ^ out.a0 ^ (out.a1 << 1) ^ (seq << 32));
}

static void worker_main(seL4_Word index)
{
    struct worker *w = &workers[index];
    while (!stopping)
        one_call(w, (int)index);
    for (;;)
        raw_yield();
}

/* ---- the fault handler and the IRQ thread ------------------------------------- */

static seL4_CPtr fault_ep, fault_reply, irq_ntfn, irq_handler;
static seL4_CPtr worker_tcb[NWORKERS];
static seL4_Word stacks[NWORKERS + 2][2048] __attribute__((aligned(16)));
static seL4_Word root_gp, root_tp;

/* Registers a restarted worker starts with: the top of worker_main. */
static void restart_regs(int i, seL4_Word *pc, seL4_Word *sp)
{
    *pc = (seL4_Word)worker_main;
    *sp = (seL4_Word)&stacks[i][2048];
}

/* TCB_WriteRegisters of all 32 registers (resume as given) from a thread
 * with its own IPC buffer: the worker restarts at the top of its loop. */
static seL4_Word write_regs_raw(seL4_Word *ipc, seL4_CPtr tcb, bool resume, int i)
{
    seL4_Word pc, sp;
    restart_regs(i, &pc, &sp);
    /* Order: pc ra sp gp s0..s11 a0..a7 t0..t6 tp (seL4_UserContext). */
    seL4_Word regs[32] = {0};
    regs[0] = pc;
    regs[2] = sp;
    regs[3] = root_gp;
    regs[16] = (seL4_Word)i; /* a0 */
    regs[31] = root_tp;
    for (int k = 2; k < 32; k++)
        ipc[1 + 2 + k] = regs[k];
    regs_t in = {.a0 = tcb, .a1 = (3ul << 12) | 34, .a2 = resume ? 1 : 0, .a3 = 32, .a4 = regs[0], .a5 = regs[1]};
    return raw_syscall((seL4_Word)seL4_SysCall, in).a1 >> 12;
}

static seL4_CPtr kit(int i, int k);
enum { KIT_UT, KIT_TCB, KIT_CNODE, KIT_SC, KIT_SC2, KIT_REPLY, KIT_BUF, KIT_PT, KIT_VSPACE, KIT_FRAME, KIT_FEP, KIT_GUARDED, KIT_SLOTS };

/* TCB_SetSpace(worker i, its fault endpoint, its CNode, the root's VSpace). */
static void set_space_raw(seL4_Word *ipc, int i)
{
    ipc[122] = kit(i, KIT_FEP);
    ipc[123] = kit(i, KIT_GUARDED);
    ipc[124] = seL4_CapInitThreadVSpace;
    regs_t in = {.a0 = kit(i, KIT_TCB), .a1 = (11ul << 12) | (3ul << 7) | 2};
    (void)raw_syscall((seL4_Word)seL4_SysCall, in);
}

static void fault_handler_main(seL4_Word ipc_va)
{
    seL4_Word *ipc = (seL4_Word *)ipc_va;
    regs_t in = {.a0 = fault_ep, .a6 = fault_reply};
    regs_t m = raw_syscall((seL4_Word)seL4_SysRecv, in);
    for (;;) {
        seL4_Word badge = m.a0, label = m.a1 >> 12;
        int i = (int)badge - 1;
        if (label < 8 && label != 0 && label != 4)
            stats.faults[label]++;
        else
            stats.fault_msgs++;
        /* A timeout fault: the worker goes on where it was. Any other
         * message (a real fault, or a worker's hostile send to its fault
         * endpoint): restart the sender at the top of its loop. */
        if (label != seL4_Fault_Timeout && i >= 0 && i < NWORKERS) {
            (void)write_regs_raw(ipc, worker_tcb[i], false, i);
            /* Another worker may have put it in a VSpace where it cannot
             * run at all (TCB_SetSpace on a victim): back to the root's. */
            if (label == seL4_Fault_VMFault)
                set_space_raw(ipc, i);
        }
        regs_t reply = {.a0 = fault_ep, .a1 = 0, .a6 = fault_reply};
        m = raw_syscall((seL4_Word)seL4_SysReplyRecv, reply);
    }
}

static volatile uint32_t *rtc;
#define RTC_ALARM_LOW 0x08
#define RTC_ALARM_HIGH 0x0c
#define RTC_IRQ_ENABLED 0x10
#define RTC_CLEAR_INTERRUPT 0x1c

static void irq_main(seL4_Word ipc_va)
{
    (void)ipc_va;
    for (;;) {
        regs_t in = {.a0 = irq_ntfn};
        (void)raw_syscall((seL4_Word)seL4_SysWait, in);
        stats.irqs++;
        rtc[RTC_CLEAR_INTERRUPT / 4] = 1;
        regs_t ack = {.a0 = irq_handler, .a1 = 27ul << 12};
        (void)raw_syscall((seL4_Word)seL4_SysCall, ack);
    }
}

/* ---- root: setup ------------------------------------------------------------- */

static seL4_CPtr next_slot;
static seL4_CPtr pool;
static uint64_t root_rng;

static void check(seL4_Error e, const char *what)
{
    if (e != seL4_NoError) {
        printf("fuzz: setup failed: %s: error %d\n", what, (int)e);
        kairos_exit(false, "fuzz setup failed");
    }
}

static seL4_CPtr slot(void) { return next_slot++; }

static seL4_CPtr make_from(seL4_CPtr ut, seL4_Word type, seL4_Word bits)
{
    seL4_CPtr s = slot();
    check(seL4_Untyped_Retype(ut, type, bits, ROOT, 0, 0, s, 1), "retype");
    return s;
}

static seL4_CPtr make(seL4_Word type, seL4_Word bits) { return make_from(pool, type, bits); }

static void map_root(seL4_CPtr frame, seL4_Word va, seL4_CapRights_t rights)
{
    for (int k = 0; k < 4; k++) {
        seL4_Error e = seL4_RISCV_Page_Map(frame, seL4_CapInitThreadVSpace, va, rights, 0);
        if (e == seL4_NoError)
            return;
        if (e != seL4_FailedLookup)
            check(e, "map");
        check(seL4_RISCV_PageTable_Map(make(seL4_RISCV_PageTableObject, 0), seL4_CapInitThreadVSpace, va,
                                       seL4_RISCV_Default_VMAttributes),
              "page table");
    }
    check(seL4_FailedLookup, "map");
}

static seL4_Word fdt_reg(const char *node, const char *prop)
{
    uint32_t len = 0;
    const void *p = kairos_fdt_getprop(kairos_bootinfo_fdt(kairos_bootinfo(), NULL), node, prop, &len);
    if (!p)
        check(seL4_FailedLookup, node);
    return kairos_fdt_cells(p, len >= 8 && strcmp(prop, "reg") == 0 ? 2 : 1);
}

/* The RTC page from the device untyped that covers it (filling the gap
 * below it with untypeds, each aligned to its size). */
static seL4_CPtr device_frame_at(seL4_Word pa)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    for (seL4_Word i = 0; i < bi->untyped.end - bi->untyped.start; i++) {
        const seL4_UntypedDesc *d = &bi->untypedList[i];
        if (!d->isDevice || pa < d->paddr || pa - d->paddr >= (1ul << d->sizeBits))
            continue;
        seL4_CPtr ut = bi->untyped.start + i;
        seL4_Word cur = d->paddr;
        while (cur < pa) {
            seL4_Word bits = 12;
            while (bits < 38 && (cur & ((1ul << (bits + 1)) - 1)) == 0 && cur + (1ul << (bits + 1)) <= pa)
                bits++;
            (void)make_from(ut, seL4_UntypedObject, bits);
            cur += 1ul << bits;
        }
        return make_from(ut, seL4_RISCV_4K_Page, 0);
    }
    check(seL4_FailedLookup, "no device untyped for the RTC");
    return 0;
}

#define BUF_VA 0x3000000000ul /* GiB 192: the workers' IPC buffers */
#define RTC_VA 0x3100000000ul

static seL4_CPtr ep, ep_badged_src, ntfn, sched_control;

/* Per worker: the root's slots for its kit (KIT_ offsets from kit_first). */
static seL4_CPtr kit_first;
static seL4_CPtr kit(int i, int k) { return kit_first + (seL4_CPtr)(i * KIT_SLOTS + k); }

static void sched_params(int i)
{
    uint64_t *r = &root_rng;
    seL4_Word period = 1000 + below(r, 3000), budget = 200 + below(r, 800);
    (void)seL4_SchedControl_ConfigureFlags(sched_control, kit(i, KIT_SC), budget, period, 0, (seL4_Word)i + 1, 0);
    (void)seL4_TCB_SetSchedParams(kit(i, KIT_TCB), SELF, 200, 50 + below(r, 151), kit(i, KIT_SC), kit(i, KIT_FEP));
}

/* Start (or re-start) worker i at the top of its loop. */
static void start_worker(int i)
{
    seL4_UserContext regs = {0};
    restart_regs(i, &regs.pc, &regs.sp);
    regs.gp = root_gp;
    regs.tp = root_tp;
    regs.a0 = (seL4_Word)i;
    (void)seL4_TCB_WriteRegisters(kit(i, KIT_TCB), true, 0, sizeof(regs) / sizeof(seL4_Word), &regs);
}

/* Copy a root cap into worker i's CNode at slot s (errors ignored: the
 * worker may have put something there). */
static void give(int i, seL4_Word s, seL4_CPtr src, seL4_CapRights_t rights, seL4_Word badge)
{
    (void)seL4_CNode_Mint(kit(i, KIT_CNODE), s, W_CNODE_BITS, ROOT, src, 64, rights, badge);
}

/* Create worker i's objects from its untyped and start it. */
static void create_worker(int i)
{
    struct worker *w = &workers[i];
    seL4_CPtr ut = kit(i, KIT_UT);
    static const seL4_Word types[KIT_SLOTS] = {
        [KIT_TCB] = seL4_TCBObject, [KIT_CNODE] = seL4_CapTableObject, [KIT_SC] = seL4_SchedContextObject,
        [KIT_SC2] = seL4_SchedContextObject, [KIT_REPLY] = seL4_ReplyObject, [KIT_BUF] = seL4_RISCV_4K_Page,
        [KIT_PT] = seL4_RISCV_PageTableObject, [KIT_VSPACE] = seL4_RISCV_PageTableObject, [KIT_FRAME] = seL4_RISCV_4K_Page};
    static const seL4_Word bits[KIT_SLOTS] = {[KIT_CNODE] = W_CNODE_BITS, [KIT_SC] = 8, [KIT_SC2] = 8};
    for (int k = KIT_TCB; k <= KIT_FRAME; k++)
        check(seL4_Untyped_Retype(ut, types[k], bits[k], ROOT, 0, 0, kit(i, k), 1), "worker object");
    check(seL4_Untyped_Retype(ut, seL4_UntypedObject, 18, ROOT, kit(i, KIT_CNODE), 64, W_UNTYPED, 1), "worker untyped");
    check(seL4_CNode_Mint(ROOT, kit(i, KIT_FEP), 64, ROOT, fault_ep, 64, seL4_AllRights, (seL4_Word)i + 1),
          "fault endpoint");
    check(seL4_CNode_Mint(ROOT, kit(i, KIT_GUARDED), 64, ROOT, kit(i, KIT_CNODE), 64, seL4_AllRights,
                          seL4_CNode_CapData_new(0, W_GUARD_BITS).words[0]),
          "guarded cnode");
    /* The workers share the ASID pool and may have used it up: a toy
     * VSpace without an ASID is fine. */
    (void)seL4_RISCV_ASIDPool_Assign(seL4_CapInitThreadASIDPool, kit(i, KIT_VSPACE));
    map_root(kit(i, KIT_BUF), BUF_VA + (seL4_Word)i * 4096, seL4_ReadWrite);
    w->ipc = (seL4_Word *)(BUF_VA + (seL4_Word)i * 4096);

    give(i, W_CNODE, kit(i, KIT_GUARDED), seL4_AllRights, 0);
    give(i, W_TCB, kit(i, KIT_TCB), seL4_AllRights, 0);
    give(i, W_EP, ep, seL4_AllRights, 0);
    give(i, W_EP_BADGED, ep_badged_src, seL4_AllRights, (seL4_Word)i + 1);
    give(i, W_NTFN, ntfn, seL4_AllRights, 0);
    give(i, W_REPLY, kit(i, KIT_REPLY), seL4_AllRights, 0);
    give(i, W_FAULT_EP, fault_ep, seL4_CapRights_new(1, 0, 0, 1), (seL4_Word)i + 1);
    give(i, W_SC, kit(i, KIT_SC), seL4_AllRights, 0);
    give(i, W_SC_SPARE, kit(i, KIT_SC2), seL4_AllRights, 0);
    give(i, W_SCHED_CONTROL, sched_control, seL4_AllRights, 0);
    give(i, W_IRQ, irq_handler, seL4_AllRights, 0);
    /* Each worker holds the TCBs of the next two (a Revoke of the victim's
     * untyped took the old caps): fill whichever slots are free. */
    for (int j = 0; j < NWORKERS; j++) {
        give(j, W_VICTIM0, kit((j + 1) % NWORKERS, KIT_TCB), seL4_AllRights, 0);
        give(j, W_VICTIM1, kit((j + 2) % NWORKERS, KIT_TCB), seL4_AllRights, 0);
    }
    give(i, W_FRAME, kit(i, KIT_FRAME), seL4_AllRights, 0);
    give(i, W_PT, kit(i, KIT_PT), seL4_AllRights, 0);
    give(i, W_VSPACE, kit(i, KIT_VSPACE), seL4_AllRights, 0);
    give(i, W_ASID_POOL, seL4_CapInitThreadASIDPool, seL4_AllRights, 0);

    check(seL4_TCB_SetSpace(kit(i, KIT_TCB), kit(i, KIT_FEP), kit(i, KIT_GUARDED), 0, seL4_CapInitThreadVSpace, 0),
          "worker space");
    check(seL4_TCB_SetIPCBuffer(kit(i, KIT_TCB), BUF_VA + (seL4_Word)i * 4096, kit(i, KIT_BUF)), "worker buffer");
    check(seL4_TCB_SetTimeoutEndpoint(kit(i, KIT_TCB), kit(i, KIT_FEP)), "timeout endpoint");
    worker_tcb[i] = kit(i, KIT_TCB);
    w->gen++;
    w->gen_calls = 0;
    w->rng = mix(cfg_seed * 1000003u + (uint64_t)i * 7919u + w->gen);
    w->stalled_ticks = 0;
    stats.incarnations++;
    sched_params(i);
    start_worker(i);
}

/* Kill worker i whatever it is doing: one Revoke of its untyped deletes its
 * TCB (running, blocked or suspended), its CNode, SCs, and every cap to
 * them the other workers hold. */
static void kill_worker(int i)
{
    if (workers[i].gen_calls > 0)
        stats.incarnations_ran++;
    stats.kills++;
    check(seL4_CNode_Revoke(ROOT, kit(i, KIT_UT), 64), "revoke worker");
    check(seL4_CNode_Delete(ROOT, kit(i, KIT_FEP), 64), "delete fault endpoint");
    if (print_lock == (uint64_t)i + 1)
        print_lock = 0;
}

static void helper_thread(void (*fn)(seL4_Word), int index, seL4_Word prio, seL4_Word budget)
{
    seL4_CPtr tcb = make(seL4_TCBObject, 0), sc = make(seL4_SchedContextObject, 8);
    check(seL4_SchedControl_ConfigureFlags(sched_control, sc, budget, 5000, 0, 0, 0), "helper sc");
    /* Its IPC buffer: a quarter of the root's buffer page the root does not use. */
    seL4_Word page = (seL4_Word)seL4_GetIPCBuffer();
    seL4_Word buf = page + 1024ul * (seL4_Word)(index + 1);
    check(seL4_TCB_Configure(tcb, ROOT, 0, seL4_CapInitThreadVSpace, 0, buf, seL4_CapInitThreadIPCBuffer),
          "helper configure");
    check(seL4_TCB_SetSchedParams(tcb, SELF, prio, prio, sc, 0), "helper sched");
    seL4_UserContext regs = {0};
    regs.pc = (seL4_Word)fn;
    regs.sp = (seL4_Word)&stacks[NWORKERS + index][2048];
    regs.gp = root_gp;
    regs.tp = root_tp;
    regs.a0 = buf;
    check(seL4_TCB_WriteRegisters(tcb, true, 0, sizeof(regs) / sizeof(seL4_Word), &regs), "helper start");
}

/* ---- root: supervision --------------------------------------------------------- */

static void arm_rtc(void)
{
    rtc[RTC_IRQ_ENABLED / 4] = 1;
    rtc[RTC_ALARM_HIGH / 4] = 0;
    rtc[RTC_ALARM_LOW / 4] = 0; /* in the past: fires at once */
    stats.alarms++;
}

static void chaos(void)
{
    uint64_t *r = &root_rng;
    int i = (int)below(r, NWORKERS);
    switch (below(r, 10)) {
    case 0:
        kill_worker(i);
        create_worker(i);
        break;
    case 1:
        (void)seL4_TCB_Suspend(kit(i, KIT_TCB));
        stats.suspends++;
        break;
    case 2:
    case 3:
        /* Rebind: its SC away (whatever it is doing) and back. */
        (void)seL4_SchedContext_Unbind(kit(i, KIT_SC));
        (void)seL4_SchedContext_Bind(kit(i, KIT_SC), kit(i, KIT_TCB));
        stats.rebinds++;
        break;
    case 4:
        sched_params(i);
        stats.sc_changes++;
        break;
    case 5:
        arm_rtc();
        (void)seL4_IRQHandler_SetNotification(irq_handler, irq_ntfn);
        break;
    default:
        break;
    }
}

/* A worker that made no call for a while is restarted (it may be blocked
 * for good, suspended, unbound, or configured into a corner by others). */
static void supervise(void)
{
    for (int i = 0; i < NWORKERS; i++) {
        struct worker *w = &workers[i];
        if (w->calls != w->last_calls) {
            w->last_calls = w->calls;
            w->stalled_ticks = 0;
            continue;
        }
        if (++w->stalled_ticks < 8)
            continue;
        w->stalled_ticks = 0;
        stats.restarts++;
        (void)seL4_TCB_Suspend(kit(i, KIT_TCB));
        if (print_lock == (uint64_t)i + 1)
            print_lock = 0;
        if (below(&root_rng, 4) == 0) {
            kill_worker(i);
            create_worker(i);
            continue;
        }
        /* Its own caps may be gone: give them back where the slot is free. */
        give(i, W_CNODE, kit(i, KIT_GUARDED), seL4_AllRights, 0);
        give(i, W_VICTIM0, kit((i + 1) % NWORKERS, KIT_TCB), seL4_AllRights, 0);
        give(i, W_VICTIM1, kit((i + 2) % NWORKERS, KIT_TCB), seL4_AllRights, 0);
        (void)seL4_TCB_SetSpace(kit(i, KIT_TCB), kit(i, KIT_FEP), kit(i, KIT_GUARDED), 0, seL4_CapInitThreadVSpace, 0);
        (void)seL4_TCB_SetIPCBuffer(kit(i, KIT_TCB), BUF_VA + (seL4_Word)i * 4096, kit(i, KIT_BUF));
        (void)seL4_TCB_SetTimeoutEndpoint(kit(i, KIT_TCB), kit(i, KIT_FEP));
        (void)seL4_SchedContext_Unbind(kit(i, KIT_SC));
        sched_params(i);
        start_worker(i);
    }
}

int main(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    read_bootargs();
    __asm__ volatile("mv %0, gp" : "=r"(root_gp));
    __asm__ volatile("mv %0, tp" : "=r"(root_tp));
    root_rng = mix(cfg_seed);
    next_slot = bi->empty.start;
    sched_control = bi->schedcontrol.start;
    seL4_Word best = ~0ul;
    for (seL4_Word i = 0; i < bi->untyped.end - bi->untyped.start; i++)
        if (!bi->untypedList[i].isDevice && (best == ~0ul || bi->untypedList[i].sizeBits > bi->untypedList[best].sizeBits))
            best = i;
    pool = bi->untyped.start + best;
    printf("fuzz: seed %llu, %llu calls, %d workers%s\n", (unsigned long long)cfg_seed,
           (unsigned long long)cfg_calls, NWORKERS, cfg_replay != ~0ull ? ", replay" : "");

    check(seL4_SchedControl_ConfigureFlags(sched_control, seL4_CapInitThreadSC, 2000, 5000, 0, 0, 0), "root sc");
    ep = make(seL4_EndpointObject, 0);
    ep_badged_src = make(seL4_EndpointObject, 0);
    ntfn = make(seL4_NotificationObject, 0);
    fault_ep = make(seL4_EndpointObject, 0);
    fault_reply = make(seL4_ReplyObject, 0);
    irq_ntfn = make(seL4_NotificationObject, 0);

    /* The RTC: its page mapped here, its interrupt to the IRQ thread. */
    seL4_Word rtc_pa = fdt_reg("/soc/rtc", "reg");
    map_root(device_frame_at(rtc_pa & ~0xffful), RTC_VA, seL4_ReadWrite);
    rtc = (volatile uint32_t *)(RTC_VA + (rtc_pa & 0xfff));
    irq_handler = slot();
    check(seL4_IRQControl_Get(seL4_CapIRQControl, fdt_reg("/soc/rtc", "interrupts"), ROOT, irq_handler, 64), "irq");
    check(seL4_IRQHandler_SetNotification(irq_handler, irq_ntfn), "irq notification");

    helper_thread(fault_handler_main, 0, 230, 1000);
    helper_thread(irq_main, 1, 240, 500);

    kit_first = next_slot;
    next_slot += NWORKERS * KIT_SLOTS;
    for (int i = 0; i < NWORKERS; i++)
        check(seL4_Untyped_Retype(pool, seL4_UntypedObject, 20, ROOT, 0, 0, kit(i, KIT_UT), 1), "worker untyped");
    for (int i = 0; i < NWORKERS; i++)
        create_worker(i);

    uint64_t last_total = 0, still = 0, ticks = 0;
    bool hang = false;
    while (total_calls < cfg_calls) {
        seL4_Yield(); /* until the next period: the workers run meanwhile */
        ticks++;
        chaos();
        supervise();
        if (total_calls == last_total) {
            if (++still >= HANG_TICKS) {
                hang = true;
                break;
            }
        } else {
            still = 0;
            last_total = total_calls;
        }
        if (cfg_replay == ~0ull && ticks % 2000 == 0)
            printf("fuzz: %llu calls\n", (unsigned long long)total_calls);
    }
    stopping = true;
    for (int i = 0; i < NWORKERS; i++) {
        (void)seL4_TCB_Suspend(kit(i, KIT_TCB));
        if (workers[i].gen_calls > 0)
            stats.incarnations_ran++;
    }

    uint64_t worker_calls = 0, digest = 0, faults = 0;
    for (int i = 0; i < NWORKERS; i++) {
        worker_calls += workers[i].calls;
        digest = mix(digest ^ workers[i].digest);
    }
    for (int i = 0; i < NWORKERS; i++)
        faults += workers[i].faults;
    /* Every worker is suspended: a replay line cut short ends here. */
    print_lock = 0;
    printf("\nfuzz: calls %llu issued by the workers, %llu returned to them (the others faulted, or their thread "
           "was restarted or killed), root periods %llu\n",
           (unsigned long long)total_calls, (unsigned long long)worker_calls, (unsigned long long)ticks);
    printf("fuzz: calls returned per worker slot:");
    bool all_ran = true;
    for (int i = 0; i < NWORKERS; i++) {
        printf(" %llu", (unsigned long long)workers[i].calls);
        all_ran = all_ran && workers[i].calls > 0;
    }
    printf("\n");
    printf("fuzz: threads run %llu of %llu worker incarnations (+ root, fault handler, irq thread), kills %llu, "
           "restarts %llu, suspends %llu, rebinds %llu, sc changes %llu\n",
           (unsigned long long)stats.incarnations_ran, (unsigned long long)stats.incarnations,
           (unsigned long long)stats.kills, (unsigned long long)stats.restarts, (unsigned long long)stats.suspends,
           (unsigned long long)stats.rebinds, (unsigned long long)stats.sc_changes);
    printf("fuzz: deliberate faults %llu; fault messages handled: cap %llu, unknown syscall %llu, user exception "
           "%llu, vm %llu, timeout %llu, other labels %llu\n",
           (unsigned long long)faults, (unsigned long long)stats.faults[1],
           (unsigned long long)stats.faults[2], (unsigned long long)stats.faults[3], (unsigned long long)stats.faults[6],
           (unsigned long long)stats.faults[seL4_Fault_Timeout], (unsigned long long)stats.fault_msgs);
    printf("fuzz: device interrupts delivered %llu (alarms armed %llu), kernel entries %lu, invariant checks %lu, "
           "preemption restarts %lu\n",
           (unsigned long long)stats.irqs, (unsigned long long)stats.alarms, (unsigned long)kairos_debug_counter(KAIROS_COUNTER_KERNEL_ENTRIES),
           (unsigned long)kairos_debug_counter(KAIROS_COUNTER_INVARIANT_CHECKS), (unsigned long)kairos_debug_counter(KAIROS_COUNTER_PREEMPTION_RESTARTS));
    printf("fuzz: digest %016llx\n", (unsigned long long)digest);
    printf("fuzz: crashes 0, hangs %d, invariant violations 0\n", hang ? 1 : 0);
    if (hang)
        kairos_exit(false, "hang: no call made for 400 root periods");
    if (!all_ran)
        kairos_exit(false, "a worker made no call");
    kairos_exit(true, NULL);
}
