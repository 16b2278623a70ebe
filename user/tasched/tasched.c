/*
 * tasched: a reservation scheduler generated from a verified timed-automata
 * model, running at user level on Kairos (docs/timed-automata.md
 * "On Kairos").
 *
 * The model is the library's `tasched-3x6` (kairos ta library): three servers
 * (periodic 2/5, deferrable 2/8, polling 2/10 time units, fixed priorities)
 * over six periodic tasks, model-checked with SPIN; `kairos tatoc` turns it
 * into ta_sched.c at build time. This root task is the global scheduler in
 * the style of Åsberg, Pettersson and Nolte: once per time unit (1 ms) it
 * lets the model take one step of time (ta_tick) and then gives the CPU to
 * the one task the model chose (run_t), by TCB_Resume of that task and
 * TCB_Suspend of the one before; no task runs when the model idles.
 *
 *   thread     priority  scheduling context
 *   scheduler  255       sporadic 200 us / 1 ms; periodic by seL4_Yield
 *   task A..F  100       round robin 1 ms; runnable only when chosen
 *
 * What is checked, every time unit, against what really ran: each task
 * spins on a counter of its own, so the scheduler sees who ran in the unit
 * just ended. That must be exactly the task the model chose for it (or
 * nobody). From those observations alone (not from the model's own
 * variables) it then checks, over 100 periods of the longest server period:
 * no server's tasks ran more units than its budget within one of its
 * periods, and every job of every task ran its execution time before its
 * deadline. The model's state must stay error-free and its observer
 * (`missed`) clear. Under QEMU -icount the run is deterministic.
 */
#include <kairos/kairos.h>
#include <kairos/roottask.h>
#include <sel4/sel4.h>
#include <stdio.h>

#include "ta_sched.h"

#define ROOT seL4_CapInitThreadCNode
#define SELF seL4_CapInitThreadTCB

#define UNIT_US 1000ul     /* one model time unit */
#define SCHED_BUDGET_US 200ul
#define NTASKS 6
#define NSERVERS 3
#define LONGEST_PERIOD 10  /* units: the polling server */
#define PERIODS 100
#define UNITS (PERIODS * LONGEST_PERIOD)

/* The workload, as in the model (kairos/ta/library.py "tasched-3x6"). */
static const char *const task_name[NTASKS] = {"A", "B", "C", "D", "E", "F"};
static const int task_server[NTASKS] = {0, 0, 1, 1, 2, 2};
static const int task_wcet[NTASKS] = {1, 1, 1, 1, 1, 1};
static const int task_period[NTASKS] = {5, 10, 8, 16, 10, 20};
static const int server_budget[NSERVERS] = {2, 2, 2};
static const int server_period[NSERVERS] = {5, 8, 10};

/* ---- the tasks ---- */

#define STACK_WORDS 512
static seL4_Word stacks[NTASKS][STACK_WORDS] __attribute__((aligned(16)));
static volatile uint64_t spins[NTASKS];
static seL4_CPtr task_tcb[NTASKS];

static void task_main(seL4_Word k, seL4_Word a1)
{
    (void)a1;
    for (;;)
        spins[k]++;
}

static void spawn(int k)
{
    seL4_CPtr ctl = kairos_bootinfo()->schedcontrol.start;
    seL4_CPtr tcb = kairos_rt_make(seL4_TCBObject, 0), sc = kairos_rt_make(seL4_SchedContextObject, 8);
    kairos_rt_check(seL4_TCB_Configure(tcb, ROOT, 0, seL4_CapInitThreadVSpace, 0, 0, seL4_CapNull), "TCB_Configure");
    kairos_rt_check(seL4_SchedControl_ConfigureFlags(ctl, sc, UNIT_US, UNIT_US, 0, 0, 0), "ConfigureFlags (task)");
    kairos_rt_check(seL4_TCB_SetSchedParams(tcb, SELF, 0, 100, sc, seL4_CapNull), "TCB_SetSchedParams");
    seL4_UserContext regs = kairos_rt_thread_regs(task_main, (seL4_Word)k, &stacks[k][STACK_WORDS]);
    /* Written, not started: a task runs only when the model chooses it. */
    kairos_rt_check(seL4_TCB_WriteRegisters(tcb, false, 0, sizeof(regs) / sizeof(seL4_Word), &regs), "TCB_WriteRegisters");
    task_tcb[k] = tcb;
}

/* ---- observations ---- */

static uint64_t last_spins[NTASKS];
static int server_used[NSERVERS];   /* units its tasks ran in its current period */
static int job_done[NTASKS];        /* units the current job has run */
static seL4_Word violations;

static void fail(const char *what, unsigned long unit, const char *who)
{
    if (violations++ < 10)
        printf("tasched: unit %lu: %s %s\n", unit, what, who);
}

int main(void)
{
    printf("tasched: generated scheduler (model tasched-3x6: 3 servers, 6 tasks), %d units of %lu us\n", UNITS,
           UNIT_US);
    kairos_rt_init();
    seL4_CPtr ctl = kairos_bootinfo()->schedcontrol.start;
    kairos_rt_check(seL4_SchedControl_ConfigureFlags(ctl, seL4_CapInitThreadSC, SCHED_BUDGET_US, UNIT_US, 0, 0,
                                           seL4_SchedContext_Sporadic),
          "ConfigureFlags (scheduler)");
    for (int k = 0; k < NTASKS; k++)
        spawn(k);
    if (kairos_rt_failed())
        kairos_exit(false, "setup failed");

    static struct ta_state s;
    ta_init(&s);
    ta_settle(&s); /* instant 0: the model's choice for unit 0 */
    int running = TA_NPROC; /* no task resumed yet */
    int units_run[NTASKS] = {0};
    seL4_Yield(); /* start at the beginning of the scheduler's period */
    for (unsigned long unit = 0;; unit++) {
        /* Hand the CPU for this unit to the model's choice. */
        int next = (int)s.v_run_t;
        if (next != running) {
            if (running < NTASKS)
                kairos_rt_check(seL4_TCB_Suspend(task_tcb[running]), "TCB_Suspend");
            if (next < NTASKS)
                kairos_rt_check(seL4_TCB_Resume(task_tcb[next]), "TCB_Resume");
            running = next;
        }
        seL4_Yield(); /* the rest of the unit belongs to the task */

        /* Who ran in the unit that just ended. */
        int ran = -1, ran_count = 0;
        for (int k = 0; k < NTASKS; k++) {
            if (spins[k] != last_spins[k]) {
                ran = k;
                ran_count++;
            }
            last_spins[k] = spins[k];
        }
        int chosen = running < NTASKS ? running : -1;
        if (ran_count > 1 || ran != chosen)
            fail("ran something else than the model chose:", unit, ran >= 0 ? task_name[ran] : "nobody");
        if (ran >= 0 && ran_count == 1) {
            units_run[ran]++;
            job_done[ran]++;
            server_used[task_server[ran]]++;
            if (server_used[task_server[ran]] > server_budget[task_server[ran]])
                fail("server over budget, task", unit, task_name[ran]);
        }
        /* Time unit + 1: deadlines and replenishments fall here (tasks and
         * servers all start at time 0). */
        unsigned long now = unit + 1;
        for (int k = 0; k < NTASKS; k++)
            if (now % (unsigned long)task_period[k] == 0) {
                if (job_done[k] < task_wcet[k])
                    fail("deadline missed by task", unit, task_name[k]);
                job_done[k] = 0;
            }
        for (int i = 0; i < NSERVERS; i++)
            if (now % (unsigned long)server_period[i] == 0)
                server_used[i] = 0;
        if (now == UNITS || s.error != 0)
            break;
        ta_tick(&s); /* one model step of time: the choice for the next unit */
    }
    for (int k = 0; k < NTASKS; k++)
        seL4_TCB_Suspend(task_tcb[k]);

    printf("tasched: units run:");
    for (int k = 0; k < NTASKS; k++)
        printf(" %s=%d", task_name[k], units_run[k]);
    printf("; model error %d, missed %d; violations %lu\n", (int)s.error, (int)s.v_missed,
           (unsigned long)violations);
    if (s.error != 0 || s.v_missed != 0)
        kairos_exit(false, "the model reported an error or a miss");
    if (kairos_rt_failed() || violations)
        kairos_exit(false, "what ran differs from the verified schedule");
    printf("tasched verdict: PASS (%d periods of the longest server, every deadline met, no server over budget)\n",
           PERIODS);
    kairos_exit(true, NULL);
}
