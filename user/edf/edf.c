/*
 * edf: earliest-deadline-first scheduling at user level on Kairos
 * (docs/timed-automata.md "User-level EDF and criticality switch";
 * Lyons' thesis §8.4: a user-level scheduler over MCS scheduling contexts).
 *
 *   thread     priority        scheduling context
 *   scheduler  255             sporadic 100 us / 10 ms; periodic by seL4_Yield
 *   task A, B  199 or 200      sporadic, budget = its WCET per period
 *                              (25 / 50 ms, 35 / 70 ms), 6 extra refills
 *
 * The reservations bound what a task can take whatever the scheduler does;
 * a job preempted at ticks and releases splits its budget into refills, and
 * with 6 extra refills (within the kernel's cap of 8, CONFIG_MAX_REFILLS)
 * the budget is never deferred past a deadline. Without extra refills the
 * kernel merges them, defers the budget (the sporadic rule) and EDF misses.
 *
 * Once a time unit (10 ms) the scheduler releases the jobs due (seL4_Signal on the
 * task's notification) and, when it released any, gives the two tasks
 * priorities in order of their absolute deadlines (TCB_SetPriority): the
 * earliest deadline gets 200. Between releases the EDF order cannot change,
 * and a job that completes blocks, so the kernel's fixed-priority choice
 * is EDF's choice.
 *
 * The workload: A does 21 ms of work every 50 ms, B 30 ms every 70 ms
 * (WCETs 25 and 35 ms, utilisation 1.0; the work alone 0.849). Under
 * rate-monotonic priorities B's response time is 30 + 2 * 21 = 72 ms > 70 ms,
 * so fixed priorities by rate miss; EDF (U <= 1) meets every deadline. A job
 * does its work in loop iterations calibrated at start-up and then reads
 * rdtime: that is its completion time, checked against its absolute
 * deadline. Phase 1 runs EDF for 100 periods of B; phase 2 runs the same
 * jobs with rate-monotonic priorities for 20 periods of B, which must miss
 * (else EDF was not needed).
 *
 * Time is the test's clock: under QEMU -icount with sleep=on an idle guest's
 * virtual time runs with the host's clock, so a loaded host that runs QEMU
 * late makes the scheduler wake late and its jobs miss deadlines that EDF
 * met (27 of B's 100 once). The test runs with sleep=off (idle time skipped
 * exactly); the scheduler reports its worst wake-up lateness so that a late
 * clock shows as such and is not blamed on the policy.
 */
#include <kairos/kairos.h>
#include <kairos/roottask.h>
#include <sel4/sel4.h>
#include <stdio.h>

#define ROOT seL4_CapInitThreadCNode
#define SELF seL4_CapInitThreadTCB

#define TASK_EXTRA_REFILLS 6
#define TICK_US 10000ul /* one time unit: every release falls on one */
#define SCHED_BUDGET_US 100ul
#define NTASKS 2
#define EDF_PERIODS 100
#define RM_PERIODS 20

static const char *const task_name[NTASKS] = {"A", "B"};
static const unsigned long task_wcet_ms[NTASKS] = {25, 35};
static const unsigned long task_work_ms[NTASKS] = {21, 30}; /* what a job does */
static const unsigned long task_period_ms[NTASKS] = {50, 70};
#define LONGEST_PERIOD_MS 70ul
#define TICK_MS (TICK_US / 1000)

static inline uint64_t rdtime(void)
{
    uint64_t v;
    __asm__ volatile("rdtime %0" : "=r"(v));
    return v;
}

/* Timer ticks per µs: QEMU virt's timebase is 10 MHz. */
#define TICKS_PER_US 10ul

/* ---- the tasks ---- */

#define STACK_WORDS 512
static seL4_Word stacks[NTASKS][STACK_WORDS] __attribute__((aligned(16)));
static seL4_CPtr task_tcb[NTASKS], task_ntfn[NTASKS];
static unsigned long work_iters[NTASKS];
static volatile uint64_t release_at[NTASKS], deadline_at[NTASKS]; /* rdtime ticks */
static volatile unsigned long released[NTASKS], done[NTASKS], missed[NTASKS];
static volatile uint64_t max_response[NTASKS];                  /* rdtime ticks */
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
        uint64_t release = release_at[k], deadline = deadline_at[k];
        work(work_iters[k]);
        uint64_t end = rdtime();
        if (end > deadline)
            missed[k]++;
        if (end - release > max_response[k])
            max_response[k] = end - release;
        done[k]++;
    }
}

static void spawn(int k)
{
    seL4_CPtr ctl = kairos_bootinfo()->schedcontrol.start;
    seL4_CPtr tcb = kairos_rt_make(seL4_TCBObject, 0), sc = kairos_rt_make(seL4_SchedContextObject, 10);
    task_ntfn[k] = kairos_rt_make(seL4_NotificationObject, 0);
    kairos_rt_check(seL4_TCB_Configure(tcb, ROOT, 0, seL4_CapInitThreadVSpace, 0, 0, seL4_CapNull), "TCB_Configure");
    kairos_rt_check(seL4_SchedControl_ConfigureFlags(ctl, sc, task_wcet_ms[k] * 1000, task_period_ms[k] * 1000,
                                                     TASK_EXTRA_REFILLS, k, seL4_SchedContext_Sporadic),
                    "ConfigureFlags (task)");
    kairos_rt_check(seL4_TCB_SetSchedParams(tcb, SELF, 200, 100, sc, seL4_CapNull), "TCB_SetSchedParams");
    seL4_UserContext regs = kairos_rt_thread_regs(task_main, (seL4_Word)k, &stacks[k][STACK_WORDS]);
    kairos_rt_check(seL4_TCB_WriteRegisters(tcb, true, 0, sizeof(regs) / sizeof(seL4_Word), &regs), "TCB_WriteRegisters");
    task_tcb[k] = tcb;
}

/* Loop iterations per WORK_PERCENT of each task's WCET, measured on this
 * CPU (exact and repeatable under QEMU -icount). */
static void calibrate(void)
{
    const unsigned long n = 200000;
    uint64_t t = rdtime();
    work(n);
    uint64_t ticks = rdtime() - t;
    if (ticks == 0)
        kairos_exit(false, "calibration measured no time");
    for (int k = 0; k < NTASKS; k++)
        work_iters[k] = n * (task_work_ms[k] * 1000 * TICKS_PER_US) / ticks;
    printf("edf: calibration: %lu iterations in %lu us\n", n, (unsigned long)(ticks / TICKS_PER_US));
}

/* ---- the scheduler ---- */

enum policy { EDF, RATE_MONOTONIC };
static int prio_now[NTASKS];

/* Earliest absolute deadline (EDF) or shortest period (RM) first; ties to
 * the lower index. */
static void assign_priorities(enum policy p)
{
    for (int k = 0; k < NTASKS; k++) {
        int rank = 0;
        for (int j = 0; j < NTASKS; j++) {
            bool before = p == EDF ? deadline_at[j] < deadline_at[k] || (deadline_at[j] == deadline_at[k] && j < k)
                                   : task_period_ms[j] < task_period_ms[k] || (task_period_ms[j] == task_period_ms[k] && j < k);
            rank += before;
        }
        int prio = 200 - rank;
        if (prio != prio_now[k]) {
            kairos_rt_check(seL4_TCB_SetPriority(task_tcb[k], SELF, prio), "TCB_SetPriority");
            prio_now[k] = prio;
        }
    }
}

/* Run ms ticks under policy p; returns the deadline misses: jobs that
 * completed late plus jobs not complete at their deadline (the next
 * release, or the end). */
static unsigned long run_phase(enum policy p, unsigned long ms, const char *name)
{
    unsigned long late_at_release[NTASKS] = {0};
    for (int k = 0; k < NTASKS; k++) {
        released[k] = done[k] = missed[k] = 0;
        max_response[k] = 0;
    }
    seL4_Yield(); /* start at the beginning of a scheduler period */
    uint64_t t0 = rdtime();
    int64_t max_late = 0, max_early = 0;
    for (unsigned long n = 0; n <= ms; n += TICK_MS) {
        /* How late this wake-up is: the releases below are due at t0 + n,
         * and a late scheduler makes jobs late that EDF did not. */
        int64_t late = (int64_t)(rdtime() - (t0 + n * 1000 * TICKS_PER_US));
        if (late > max_late)
            max_late = late;
        if (-late > max_early)
            max_early = -late;
        bool any = false;
        for (int k = 0; k < NTASKS; k++) {
            if (n % task_period_ms[k] != 0)
                continue;
            if (done[k] < released[k])
                late_at_release[k]++;
            if (n == ms)
                continue;
            release_at[k] = t0 + n * 1000 * TICKS_PER_US;
            deadline_at[k] = release_at[k] + task_period_ms[k] * 1000 * TICKS_PER_US;
            released[k]++;
            any = true;
        }
        if (n == ms)
            break;
        if (any) {
            assign_priorities(p);
            for (int k = 0; k < NTASKS; k++)
                if (n % task_period_ms[k] == 0)
                    seL4_Signal(task_ntfn[k]);
        }
        seL4_Yield();
    }
    /* Let late jobs drain so the next phase starts clean. */
    for (int i = 0; i < 50; i++) {
        bool idle = true;
        for (int k = 0; k < NTASKS; k++)
            idle = idle && done[k] >= released[k];
        if (idle)
            break;
        seL4_Yield();
    }
    printf("edf: %s scheduler: wake-ups at most %lu us late, %lu us early\n", name,
           (unsigned long)(max_late / (int64_t)TICKS_PER_US), (unsigned long)(max_early / (int64_t)TICKS_PER_US));
    unsigned long total = 0;
    for (int k = 0; k < NTASKS; k++) {
        unsigned long misses = missed[k] + late_at_release[k];
        printf("edf: %s task %s: released %lu, completed %lu, max response %lu us, deadline %lu us, missed %lu\n",
               name, task_name[k], released[k], done[k], (unsigned long)(max_response[k] / TICKS_PER_US),
               task_period_ms[k] * 1000, misses);
        total += misses;
    }
    return total;
}

int main(void)
{
    kairos_rt_init();
    calibrate();
    printf("edf: workload");
    for (int k = 0; k < NTASKS; k++)
        printf(" %s=%lu/%lu/%lu", task_name[k], task_work_ms[k], task_wcet_ms[k], task_period_ms[k]);
    printf(" (work/WCET/period ms); tick %lu us\n", TICK_US);
    seL4_CPtr ctl = kairos_bootinfo()->schedcontrol.start;
    kairos_rt_check(seL4_SchedControl_ConfigureFlags(ctl, seL4_CapInitThreadSC, SCHED_BUDGET_US, TICK_US, 0, 0,
                                           seL4_SchedContext_Sporadic),
          "ConfigureFlags (scheduler)");
    for (int k = 0; k < NTASKS; k++) {
        spawn(k);
        prio_now[k] = 100;
    }
    if (kairos_rt_failed())
        kairos_exit(false, "setup failed");

    unsigned long edf_ms = EDF_PERIODS * LONGEST_PERIOD_MS, rm_ms = RM_PERIODS * LONGEST_PERIOD_MS;
    unsigned long edf_misses = run_phase(EDF, edf_ms, "EDF");
    unsigned long rm_misses = run_phase(RATE_MONOTONIC, rm_ms, "RM");
    for (int k = 0; k < NTASKS; k++)
        seL4_TCB_Suspend(task_tcb[k]);
    printf("edf: EDF %lu ms: %lu misses; rate-monotonic %lu ms: %lu misses\n", edf_ms, edf_misses, rm_ms,
           rm_misses);
    if (kairos_rt_failed())
        kairos_exit(false, "an invocation failed");
    if (edf_misses != 0)
        kairos_exit(false, "EDF missed a deadline");
    if (rm_misses == 0)
        kairos_exit(false, "rate-monotonic priorities met every deadline: the workload does not need EDF");
    printf("edf verdict: PASS (%d periods of the longest task under EDF, every deadline met; rate-monotonic "
           "missed)\n",
           EDF_PERIODS);
    kairos_exit(true, NULL);
}
