/*
 * isolation: temporal isolation under attack (docs/robustness.md). A
 * critical periodic thread keeps every deadline while threads of higher
 * priority attack the kernel as hard as their own budgets let them.
 *
 *   thread         priority  scheduling context       does
 *   monitor (root) 255       1 ms every 10 ms         releases a job each period, measures
 *   handler        210       0.5 ms every 10 ms       takes the attackers' faults, restarts them
 *   attacker 0-2   200       0.6 ms every 3 ms each   IPC, faults, yields, SC reconfiguration,
 *                                                     object creation and deletion, nonstop
 *   critical       100       2 ms every 10 ms         one job (about 0.5 ms) per period
 *
 * Attacker 0 is also an IPC server the others call. Each attacker may
 * reconfigure its own scheduling context through SchedControl, within its
 * share (budget at most 0.6 ms per 3 ms): SchedControl is the authority to
 * hand out processor time, and a thread holding it without limit is not an
 * attacker but the system's scheduler. The attackers' processor demand
 * (3 x 20 % + the handler's 5 %, plus the monitor's 10 %) leaves the
 * critical thread a quarter of the processor for its 0.5 ms job: it must
 * finish every job before the next release, whatever the attackers do in
 * the kernel.
 *
 * Per period the monitor prints the critical job's completion time after
 * its release and the margin to its deadline (the next release); after 100
 * periods `isolation verdict: PASS` if every deadline was met, and the worst
 * margin. The boot argument attack=off runs the same system without the
 * attackers (the baseline). Deterministic under -icount sleep=off.
 */
#include <kairos/kairos.h>
#include <sel4/sel4.h>
#include <stdio.h>
#include <string.h>

#define ROOT seL4_CapInitThreadCNode
#define SELF seL4_CapInitThreadTCB
#define PERIODS 100
#define PERIOD_US 10000ul
#define ATTACKERS 3
#define ATTACKER_BUDGET_US 600ul
#define ATTACKER_PERIOD_US 3000ul
#define JOB_ITERATIONS 125000ul
#define ATTACKER_SLOTS 16 /* per attacker, for the objects it makes and deletes */

static seL4_CPtr next_slot, pool, sched_control;

static void check(seL4_Error e, const char *what)
{
    if (e != seL4_NoError) {
        printf("isolation: setup failed: %s: error %d\n", what, (int)e);
        kairos_exit(false, "isolation setup failed");
    }
}

static seL4_CPtr make(seL4_CPtr ut, seL4_Word type, seL4_Word bits)
{
    seL4_CPtr s = next_slot++;
    check(seL4_Untyped_Retype(ut, type, bits, ROOT, 0, 0, s, 1), "retype");
    return s;
}

static inline uint64_t rdtime(void)
{
    uint64_t v;
    __asm__ volatile("rdtime %0" : "=r"(v));
    return v;
}

/* ---- raw system calls with a thread's own IPC buffer ---------------------- */

typedef struct {
    seL4_Word a0, a1, a2, a3, a4, a5, a6;
} regs_t;

static regs_t sys(seL4_Word n, regs_t in)
{
    register seL4_Word a0 __asm__("a0") = in.a0, a1 __asm__("a1") = in.a1, a2 __asm__("a2") = in.a2;
    register seL4_Word a3 __asm__("a3") = in.a3, a4 __asm__("a4") = in.a4, a5 __asm__("a5") = in.a5;
    register seL4_Word a6 __asm__("a6") = in.a6, a7 __asm__("a7") = n;
    __asm__ volatile("ecall" : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4), "+r"(a5), "+r"(a6) : "r"(a7) : "memory");
    regs_t out = {a0, a1, a2, a3, a4, a5, a6};
    return out;
}

/* Call `cap` with `label`, message words mr[0..n) and extra caps. */
static seL4_Word invoke(seL4_Word *ipc, seL4_CPtr cap, seL4_Word label, const seL4_Word *mr, int n,
                        const seL4_CPtr *caps, int n_caps)
{
    for (int i = 4; i < n; i++)
        ipc[1 + i] = mr[i];
    for (int i = 0; i < n_caps; i++)
        ipc[122 + i] = caps[i];
    regs_t in = {cap, (label << 12) | ((seL4_Word)n_caps << 7) | (seL4_Word)n, n > 0 ? mr[0] : 0, n > 1 ? mr[1] : 0,
                 n > 2 ? mr[2] : 0, n > 3 ? mr[3] : 0, 0};
    return sys((seL4_Word)seL4_SysCall, in).a1 >> 12;
}

/* ---- the threads ----------------------------------------------------------- */

static seL4_Word stacks[ATTACKERS + 2][2048] __attribute__((aligned(16)));
static seL4_Word root_gp, root_tp;

static seL4_CPtr job_ntfn, ep, ntfn, fault_ep, handler_reply, server_reply;
static seL4_CPtr attacker_tcb[ATTACKERS], attacker_sc[ATTACKERS], attacker_ut[ATTACKERS];
static seL4_CPtr attacker_slots[ATTACKERS];
static seL4_Word *attacker_ipc[ATTACKERS];

static volatile uint64_t job_done_at, jobs_done, job_sink;
static volatile uint64_t attack_ops, attack_faults, attack_ipc, attack_yields, attack_sc, attack_objects;
static uint64_t attacker_rng[ATTACKERS];

static void critical_main(seL4_Word a0)
{
    (void)a0;
    for (;;) {
        (void)sys((seL4_Word)seL4_SysWait, (regs_t){.a0 = job_ntfn});
        uint64_t x = job_sink;
        for (seL4_Word i = 0; i < JOB_ITERATIONS; i++)
            x = x * 6364136223846793005ull + i;
        job_sink = x;
        job_done_at = rdtime();
        jobs_done++;
    }
}

static uint64_t next_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* One hostile operation of attacker k. */
static void attack_once(int k)
{
    seL4_Word *ipc = attacker_ipc[k];
    uint64_t *r = &attacker_rng[k];
    seL4_CPtr slots = attacker_slots[k];
    attack_ops++;
    uint64_t op = next_rand(r) % 100;
    if (op < 5) { /* a fault: the handler restarts this attacker */
        attack_faults++;
        __asm__ volatile("ld t1, 16(zero)" ::: "t1", "memory");
        return;
    }
    if (op < 8) { /* gives up the rest of its budget until the next refill */
        attack_yields++;
        (void)sys((seL4_Word)seL4_SysYield, (regs_t){0});
        return;
    }
    switch (op % 10) {
    case 0:
    case 1:
    case 2: { /* SC reconfiguration within its share */
        seL4_Word budget = 200 + next_rand(r) % (ATTACKER_BUDGET_US - 199);
        seL4_Word mr[5] = {budget, ATTACKER_PERIOD_US, next_rand(r) % 4, (seL4_Word)k, 0};
        seL4_CPtr sc = attacker_sc[k];
        attack_sc++;
        (void)invoke(ipc, sched_control, 31, mr, 5, &sc, 1);
        break;
    }
    case 3: { /* SchedContext_Consumed, Unbind-free queries */
        attack_sc++;
        (void)invoke(ipc, attacker_sc[k], 35, NULL, 0, NULL, 0);
        break;
    }
    case 4:
    case 5: { /* object creation: any type into its slots */
        static const seL4_Word types[] = {seL4_EndpointObject, seL4_NotificationObject, seL4_TCBObject,
                                          seL4_CapTableObject, seL4_ReplyObject, seL4_SchedContextObject,
                                          seL4_RISCV_4K_Page, seL4_RISCV_PageTableObject};
        seL4_Word t = types[next_rand(r) % 8];
        seL4_Word bits = t == seL4_CapTableObject ? 4 : t == seL4_SchedContextObject ? 8 : 0;
        seL4_Word mr[6] = {t, bits, 0, 0, slots + next_rand(r) % ATTACKER_SLOTS, 1 + next_rand(r) % 2};
        seL4_CPtr root = ROOT;
        attack_objects++;
        (void)invoke(ipc, attacker_ut[k], 1, mr, 6, &root, 1);
        break;
    }
    case 6: { /* object deletion: one slot, or all of its objects at once */
        attack_objects++;
        if (next_rand(r) % 4 == 0) {
            seL4_Word mr[2] = {attacker_ut[k], 64};
            (void)invoke(ipc, ROOT, 18, mr, 2, NULL, 0); /* CNode_Revoke */
        } else {
            seL4_Word mr[2] = {slots + next_rand(r) % ATTACKER_SLOTS, 64};
            (void)invoke(ipc, ROOT, 19, mr, 2, NULL, 0); /* CNode_Delete */
        }
        break;
    }
    default: /* IPC: calls to the server, signals, sends nobody takes */
        attack_ipc++;
        if (k != 0 && next_rand(r) % 8 == 0)
            (void)sys((seL4_Word)seL4_SysCall, (regs_t){.a0 = ep, .a1 = 2, .a2 = 1, .a3 = 2});
        else if (next_rand(r) % 2)
            (void)sys((seL4_Word)seL4_SysNBSend, (regs_t){.a0 = ntfn, .a1 = 0});
        else
            (void)sys((seL4_Word)seL4_SysNBRecv, (regs_t){.a0 = ntfn});
        break;
    }
}

static void attacker_main(seL4_Word k)
{
    if (k == 0) {
        /* The server: takes a call if one is waiting, answers it on its
         * reply object (a no-op when nobody called), attacks, again. */
        for (;;) {
            (void)sys((seL4_Word)seL4_SysNBRecv, (regs_t){.a0 = ep, .a6 = server_reply});
            (void)sys((seL4_Word)seL4_SysNBSend, (regs_t){.a0 = server_reply, .a1 = 1, .a2 = 7});
            attack_once(0);
        }
    }
    for (;;)
        attack_once((int)k);
}

static void restart_regs(seL4_Word *ipc, int k)
{
    /* TCB_WriteRegisters, 32 registers: pc, ra, sp, gp, s0-s11, a0-a7, t0-t6, tp. */
    seL4_Word mr[34] = {0, 32, (seL4_Word)attacker_main, 0, (seL4_Word)&stacks[k][2048], root_gp};
    mr[2 + 4 + 12] = (seL4_Word)k; /* a0 */
    mr[2 + 31] = root_tp;
    (void)invoke(ipc, attacker_tcb[k], 3, mr, 34, NULL, 0);
}

static void handler_main(seL4_Word ipc_va)
{
    seL4_Word *ipc = (seL4_Word *)ipc_va;
    regs_t m = sys((seL4_Word)seL4_SysRecv, (regs_t){.a0 = fault_ep, .a6 = handler_reply});
    for (;;) {
        int k = (int)m.a0 - 1;
        if (k >= 0 && k < ATTACKERS)
            restart_regs(ipc, k);
        m = sys((seL4_Word)seL4_SysReplyRecv, (regs_t){.a0 = fault_ep, .a1 = 0, .a6 = handler_reply});
    }
}

static seL4_CPtr spawn(void (*fn)(seL4_Word), int index, seL4_Word prio, seL4_Word budget, seL4_Word period, seL4_Word arg,
                       seL4_Word buf_va, seL4_CPtr buf_frame, seL4_CPtr fault, seL4_CPtr *sc_out)
{
    seL4_CPtr tcb = make(pool, seL4_TCBObject, 0), sc = make(pool, seL4_SchedContextObject, 8);
    check(seL4_TCB_Configure(tcb, ROOT, 0, seL4_CapInitThreadVSpace, 0, buf_va, buf_frame), "configure");
    check(seL4_SchedControl_ConfigureFlags(sched_control, sc, budget, period, 0, 0, seL4_SchedContext_Sporadic),
          "sched context");
    check(seL4_TCB_SetSchedParams(tcb, SELF, prio, prio, sc, fault), "sched params");
    seL4_UserContext regs = {0};
    regs.pc = (seL4_Word)fn;
    regs.sp = (seL4_Word)&stacks[index][2048];
    regs.gp = root_gp;
    regs.tp = root_tp;
    regs.a0 = arg;
    check(seL4_TCB_WriteRegisters(tcb, true, 0, sizeof(regs) / sizeof(seL4_Word), &regs), "start");
    if (sc_out)
        *sc_out = sc;
    return tcb;
}

static bool attack_enabled(void)
{
    uint32_t len = 0;
    const void *fdt = kairos_bootinfo_fdt(kairos_bootinfo(), NULL);
    const char *args = fdt ? kairos_fdt_getprop(fdt, "/chosen", "bootargs", &len) : NULL;
    return !(args && strstr(args, "attack=off"));
}

static uint64_t ticks_per_us(void)
{
    uint32_t len = 0;
    const void *p = kairos_fdt_getprop(kairos_bootinfo_fdt(kairos_bootinfo(), NULL), "/cpus", "timebase-frequency", &len);
    uint64_t tpu = (p && len == 4) ? kairos_fdt32(p) / 1000000 : 10;
    return tpu ? tpu : 1;
}

int main(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    bool attack = attack_enabled();
    __asm__ volatile("mv %0, gp" : "=r"(root_gp));
    __asm__ volatile("mv %0, tp" : "=r"(root_tp));
    seL4_Word best = ~0ul;
    for (seL4_Word i = 0; i < bi->untyped.end - bi->untyped.start; i++)
        if (!bi->untypedList[i].isDevice && (best == ~0ul || bi->untypedList[i].sizeBits > bi->untypedList[best].sizeBits))
            best = i;
    pool = bi->untyped.start + best;
    next_slot = bi->empty.start;
    sched_control = bi->schedcontrol.start;
    uint64_t tpu = ticks_per_us();
    printf("isolation: critical 2 ms / 10 ms at priority 100, %s\n",
           attack ? "3 attackers at priority 200 (0.6 ms / 3 ms each) and their fault handler at 210"
                  : "no attackers (baseline)");

    check(seL4_SchedControl_ConfigureFlags(sched_control, seL4_CapInitThreadSC, 1000, PERIOD_US, 0, 0, 0), "root sc");
    job_ntfn = make(pool, seL4_NotificationObject, 0);
    ep = make(pool, seL4_EndpointObject, 0);
    ntfn = make(pool, seL4_NotificationObject, 0);
    fault_ep = make(pool, seL4_EndpointObject, 0);
    handler_reply = make(pool, seL4_ReplyObject, 0);
    server_reply = make(pool, seL4_ReplyObject, 0);
    /* The attackers' and the handler's IPC buffers: quarters of one page. */
    seL4_CPtr page = make(pool, seL4_RISCV_4K_Page, 0);
    seL4_Word page_va = 0x3000000000ul;
    for (int level = 0; level < 4; level++) {
        seL4_Error e = seL4_RISCV_Page_Map(page, seL4_CapInitThreadVSpace, page_va, seL4_ReadWrite, 0);
        if (e == seL4_NoError)
            break;
        check(seL4_RISCV_PageTable_Map(make(pool, seL4_RISCV_PageTableObject, 0), seL4_CapInitThreadVSpace, page_va,
                                       seL4_RISCV_Default_VMAttributes),
              "page table");
    }

    (void)spawn(critical_main, ATTACKERS, 100, 2000, PERIOD_US, 0, 0, seL4_CapNull, seL4_CapNull, NULL);
    if (attack) {
        (void)spawn(handler_main, ATTACKERS + 1, 210, 500, PERIOD_US, page_va + 3 * 1024, page_va + 3 * 1024, page,
                    seL4_CapNull, NULL);
        for (int k = 0; k < ATTACKERS; k++) {
            attacker_ut[k] = make(pool, seL4_UntypedObject, 16);
            attacker_slots[k] = next_slot;
            next_slot += ATTACKER_SLOTS;
            attacker_ipc[k] = (seL4_Word *)(page_va + (seL4_Word)k * 1024);
            attacker_rng[k] = 0x1234567ull * (uint64_t)(k + 1);
            seL4_CPtr badged = next_slot++;
            check(seL4_CNode_Mint(ROOT, badged, 64, ROOT, fault_ep, 64, seL4_AllRights, (seL4_Word)k + 1), "mint");
            attacker_tcb[k] = spawn(attacker_main, k, 200, ATTACKER_BUDGET_US, ATTACKER_PERIOD_US, (seL4_Word)k,
                                    page_va + (seL4_Word)k * 1024, page, badged, &attacker_sc[k]);
        }
    }

    /* The monitor: each period (Yield returns when the refill is back),
     * check the last job, release the next one. */
    long worst_margin = (long)PERIOD_US, worst_finish = 0;
    int missed = 0;
    uint64_t release = 0, jobs_before = 0;
    seL4_Yield();
    for (int p = 0; p <= PERIODS; p++) {
        uint64_t now = rdtime();
        if (p > 0) {
            bool done = jobs_done == jobs_before + 1;
            long finish = done ? (long)((job_done_at - release) / tpu) : -1;
            long margin = done ? (long)((release + PERIOD_US * tpu - job_done_at) / tpu) : -1;
            if (!done || job_done_at > release + PERIOD_US * tpu)
                missed++;
            if (done && margin < worst_margin)
                worst_margin = margin;
            if (finish > worst_finish)
                worst_finish = finish;
            printf("period %3d: critical job done %5ld us after release, margin %5ld us%s\n", p, finish, margin,
                   done ? "" : ": deadline MISSED");
        }
        if (p == PERIODS)
            break;
        jobs_before = jobs_done;
        release = rdtime();
        (void)now;
        seL4_Signal(job_ntfn);
        seL4_Yield();
    }
    if (attack)
        printf("isolation: attack operations %llu (ipc %llu, faults %llu, yields %llu, sc %llu, objects %llu)\n",
               (unsigned long long)attack_ops, (unsigned long long)attack_ipc, (unsigned long long)attack_faults,
               (unsigned long long)attack_yields, (unsigned long long)attack_sc, (unsigned long long)attack_objects);
    printf("isolation: worst completion %ld us after release, worst margin %ld us of %lu, %d deadlines missed\n",
           worst_finish, worst_margin, PERIOD_US, missed);
    if (missed) {
        printf("isolation verdict: FAIL (%d deadlines missed)\n", missed);
        kairos_exit(false, "deadline missed");
    }
    printf("isolation verdict: PASS\n");
    kairos_exit(true, NULL);
}
