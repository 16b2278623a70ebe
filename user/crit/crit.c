/*
 * crit: a criticality-mode switch on timeout faults, at user level on Kairos
 * (docs/timed-automata.md "User-level EDF and criticality switch"; Lyons'
 * thesis §8.4: mixed criticality over MCS scheduling contexts).
 *
 *   thread     priority  scheduling context
 *   releaser   255       sporadic 100 us / 10 ms; periodic by seL4_Yield
 *   handler    254       round robin 10 ms; waits for timeout faults
 *   L1 (LO)    140       sporadic 50 ms / 100 ms
 *   H  (HI)    130       sporadic 60 ms / 200 ms (its LO budget); timeout
 *                        faults to the handler
 *   L2 (LO)    120       sporadic 80 ms / 400 ms
 *
 * Priorities are by rate. H normally does 50 ms of work; its job number
 * OVERRUN_JOB does 140 ms (its HI budget is 160 ms). That job runs out of
 * its LO budget: the kernel sends H's timeout fault to the handler, which
 * switches the system to HI mode: it gives H's SC its HI budget
 * (SchedControl_ConfigureFlags), suspends L1 and L2, and resumes H (a reply
 * with label 0). Without the switch H is throttled to its next refill, or
 * L1 preempts it for 40 ms, and the overrun job misses its deadline.
 * Every job reads rdtime when done; H must meet every deadline, and the
 * low tasks are counted by the mode their jobs completed in.
 */
#include <kairos/kairos.h>
#include <kairos/roottask.h>
#include <sel4/sel4.h>
#include <stdio.h>

#define ROOT seL4_CapInitThreadCNode
#define SELF seL4_CapInitThreadTCB

#define TICK_MS 10ul
#define TICKS_PER_US 10ul /* QEMU virt's timebase is 10 MHz */
#define NTASKS 3
#define HI_TASK 1
#define OVERRUN_JOB 5     /* H's job 5 (from 0) overruns */
#define RUN_MS 4000ul     /* 20 periods of H, 10 of L2 */

static const char *const task_name[NTASKS] = {"L1", "H", "L2"};
static const bool task_hi[NTASKS] = {false, true, false};
static const unsigned long task_prio[NTASKS] = {140, 130, 120};
static const unsigned long task_period_ms[NTASKS] = {100, 200, 400};
static const unsigned long task_budget_ms[NTASKS] = {50, 60, 80};  /* LO budgets */
static const unsigned long task_work_ms[NTASKS] = {40, 50, 60};
#define HI_BUDGET_MS 160ul
#define OVERRUN_WORK_MS 140ul

static inline uint64_t rdtime(void)
{
    uint64_t v;
    __asm__ volatile("rdtime %0" : "=r"(v));
    return v;
}

/* ---- the tasks ---- */

#define STACK_WORDS 512
static seL4_Word stacks[NTASKS + 1][STACK_WORDS] __attribute__((aligned(16)));
static seL4_CPtr task_tcb[NTASKS], task_sc[NTASKS], task_ntfn[NTASKS], fault_ep, fault_reply;
static unsigned long iters_per_ms;
static volatile uint64_t release_at[NTASKS], deadline_at[NTASKS];
static volatile unsigned long released[NTASKS], done[NTASKS], missed[NTASKS], done_in_mode[NTASKS][2];
static volatile bool hi_mode;
static volatile uint64_t switch_at; /* rdtime of the switch */
static volatile unsigned long timeout_faults, switch_job;
static volatile unsigned long sink;

static void work(unsigned long iters)
{
    for (unsigned long i = 0; i < iters; i++)
        sink++;
}

static void task_main(seL4_Word k, seL4_Word a1)
{
    (void)a1;
    for (;;) {
        seL4_Wait(task_ntfn[k], NULL);
        uint64_t deadline = deadline_at[k];
        unsigned long ms = k == HI_TASK && done[k] == OVERRUN_JOB ? OVERRUN_WORK_MS : task_work_ms[k];
        work(ms * iters_per_ms);
        if (rdtime() > deadline)
            missed[k]++;
        done_in_mode[k][hi_mode]++;
        done[k]++;
    }
}

/* The timeout-fault handler: the first fault of H switches to HI mode. */
static void handler_main(seL4_Word a0, seL4_Word a1)
{
    (void)a0;
    (void)a1;
    seL4_CPtr ctl = kairos_bootinfo()->schedcontrol.start;
    for (;;) {
        seL4_Word badge = 0;
        seL4_MessageInfo_t m = seL4_Recv(fault_ep, &badge, fault_reply);
        if (seL4_MessageInfo_get_label(m) != seL4_Fault_Timeout)
            continue;
        timeout_faults++;
        if (!hi_mode && seL4_GetMR(0) == HI_TASK) {
            switch_at = rdtime();
            switch_job = done[HI_TASK];
            hi_mode = true;
            kairos_rt_check(seL4_SchedControl_ConfigureFlags(ctl, task_sc[HI_TASK], HI_BUDGET_MS * 1000,
                                                   task_period_ms[HI_TASK] * 1000, 6, HI_TASK,
                                                   seL4_SchedContext_Sporadic),
                  "ConfigureFlags (HI budget)");
            for (int k = 0; k < NTASKS; k++)
                if (!task_hi[k])
                    kairos_rt_check(seL4_TCB_Suspend(task_tcb[k]), "TCB_Suspend");
        }
        seL4_Send(fault_reply, seL4_MessageInfo_new(0, 0, 0, 0));
    }
}

static seL4_CPtr spawn(int slot, void (*entry)(seL4_Word, seL4_Word), seL4_Word prio, seL4_Word budget_us,
                       seL4_Word period_us, seL4_Word flags, seL4_CPtr *sc_out)
{
    seL4_CPtr ctl = kairos_bootinfo()->schedcontrol.start;
    seL4_CPtr tcb = kairos_rt_make(seL4_TCBObject, 0), sc = kairos_rt_make(seL4_SchedContextObject, 10);
    /* The handler needs an IPC buffer (fault message, the SC cap it
     * reconfigures): it shares the root's (same tp, so the same TLS
     * pointer), which the releaser never uses for message words (it only
     * signals and yields while the handler runs). */
    bool handler = slot == NTASKS;
    kairos_rt_check(seL4_TCB_Configure(tcb, ROOT, 0, seL4_CapInitThreadVSpace, 0, handler ? (seL4_Word)seL4_GetIPCBuffer() : 0,
                             handler ? seL4_CapInitThreadIPCBuffer : seL4_CapNull),
          "TCB_Configure");
    kairos_rt_check(seL4_SchedControl_ConfigureFlags(ctl, sc, budget_us, period_us, 6, (seL4_Word)slot, flags),
          "ConfigureFlags");
    kairos_rt_check(seL4_TCB_SetSchedParams(tcb, SELF, 254, prio, sc, seL4_CapNull), "TCB_SetSchedParams");
    seL4_UserContext regs = kairos_rt_thread_regs(entry, (seL4_Word)slot, &stacks[slot][STACK_WORDS]);
    *sc_out = sc;
    if (slot < NTASKS && task_hi[slot])
        kairos_rt_check(seL4_TCB_SetTimeoutEndpoint(tcb, fault_ep), "TCB_SetTimeoutEndpoint");
    kairos_rt_check(seL4_TCB_WriteRegisters(tcb, true, 0, sizeof(regs) / sizeof(seL4_Word), &regs), "TCB_WriteRegisters");
    return tcb;
}

int main(void)
{
    kairos_rt_init();
    const unsigned long n = 200000;
    uint64_t t = rdtime();
    work(n);
    uint64_t ticks = rdtime() - t;
    if (ticks == 0)
        kairos_exit(false, "calibration measured no time");
    iters_per_ms = n * 1000 * TICKS_PER_US / ticks;
    printf("crit: workload");
    for (int k = 0; k < NTASKS; k++)
        printf(" %s=%s/%lu/%lu/%lu", task_name[k], task_hi[k] ? "HI" : "LO", task_work_ms[k], task_budget_ms[k],
               task_period_ms[k]);
    printf(" (criticality/work/LO budget/period ms); H HI budget %lu, job %d works %lu ms\n", HI_BUDGET_MS,
           OVERRUN_JOB, OVERRUN_WORK_MS);

    seL4_CPtr ctl = kairos_bootinfo()->schedcontrol.start;
    kairos_rt_check(seL4_SchedControl_ConfigureFlags(ctl, seL4_CapInitThreadSC, 100, TICK_MS * 1000, 0, 0,
                                           seL4_SchedContext_Sporadic),
          "ConfigureFlags (releaser)");
    fault_ep = kairos_rt_make(seL4_EndpointObject, 0);
    fault_reply = kairos_rt_make(seL4_ReplyObject, 0);
    seL4_CPtr handler_sc;
    spawn(NTASKS, handler_main, 254, TICK_MS * 1000, TICK_MS * 1000, 0, &handler_sc);
    for (int k = 0; k < NTASKS; k++) {
        task_ntfn[k] = kairos_rt_make(seL4_NotificationObject, 0);
        task_tcb[k] = spawn(k, task_main, task_prio[k], task_budget_ms[k] * 1000, task_period_ms[k] * 1000,
                            seL4_SchedContext_Sporadic, &task_sc[k]);
    }
    if (kairos_rt_failed())
        kairos_exit(false, "setup failed");

    unsigned long late_at_release[NTASKS] = {0}, skipped[NTASKS] = {0};
    seL4_Yield();
    uint64_t t0 = rdtime();
    for (unsigned long now = 0; now <= RUN_MS; now += TICK_MS) {
        for (int k = 0; k < NTASKS; k++) {
            if (now % task_period_ms[k] != 0)
                continue;
            if (done[k] < released[k] && !(hi_mode && !task_hi[k]))
                late_at_release[k]++;
            if (now == RUN_MS)
                continue;
            if (hi_mode && !task_hi[k]) {
                skipped[k]++; /* suspended in HI mode: the job is dropped */
                continue;
            }
            release_at[k] = t0 + now * 1000 * TICKS_PER_US;
            deadline_at[k] = release_at[k] + task_period_ms[k] * 1000 * TICKS_PER_US;
            released[k]++;
            seL4_Signal(task_ntfn[k]);
        }
        if (now < RUN_MS)
            seL4_Yield();
    }
    for (int k = 0; k < NTASKS; k++)
        seL4_TCB_Suspend(task_tcb[k]);

    unsigned long hi_misses = 0;
    for (int k = 0; k < NTASKS; k++) {
        unsigned long misses = missed[k] + late_at_release[k];
        printf("crit: task %s: released %lu, completed %lu (LO mode %lu, HI mode %lu), dropped %lu, missed %lu\n",
               task_name[k], released[k], done[k], done_in_mode[k][0], done_in_mode[k][1], skipped[k], misses);
        if (task_hi[k])
            hi_misses += misses;
    }
    if (hi_mode)
        printf("crit: switch to HI mode at %lu ms, in H job %lu; %lu timeout faults\n",
               (unsigned long)((switch_at - t0) / TICKS_PER_US / 1000), switch_job, timeout_faults);
    else
        printf("crit: no switch; %lu timeout faults\n", timeout_faults);
    if (kairos_rt_failed())
        kairos_exit(false, "an invocation failed");
    if (!hi_mode || switch_job != OVERRUN_JOB)
        kairos_exit(false, "no switch at the planted overrun");
    if (hi_misses)
        kairos_exit(false, "a HI task missed a deadline");
    printf("crit verdict: PASS (switch at H's overrun, every HI deadline met, LO tasks dropped in HI mode)\n");
    kairos_exit(true, NULL);
}
