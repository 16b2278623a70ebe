/*
 * monitor: the observer of the default system (examples/demo/system.xml).
 * Periodic by seL4_Yield on its sporadic context (1 ms / 10 ms): Yield
 * gives up the rest of its refill, so it runs again when the refill comes
 * back one period after it began. Each time it wakes it
 *   - reads, for every PD, the time its context consumed in the period just
 *     ended (SchedContext_Consumed, µs, through <schedcontext> capabilities),
 *   - checks that the critical PD finished the job released at the start of
 *     that period (its deadline is the next release),
 *   - releases the next job (a notification on channel 0),
 *   - prints one line for the period.
 * After 100 periods: `demo verdict: PASS` or `demo verdict: FAIL (reason)`,
 * then kairos_exit. Under QEMU's -icount shift=0 every figure is
 * deterministic.
 */
#include <kairos/kairos.h>
#include <kairos/pd.h>
#include <stdio.h>

#include "job_state.h"

#define PERIODS 100
#define PERIOD_US 10000ul
#define MONITOR_BUDGET_US 1000ul
#define GREEDY_BUDGET_US 3000ul
#define CRITICAL_BUDGET_US 2500ul
#define BACKGROUND_SLICE_US 1000ul
/* The greedy PD may exceed its budget in a window by one kernel entry: the
 * entry that notices the expiry runs past it (docs/scheduling.md, "Budget
 * enforcement"). seL4's kernel WCET constant is 10 µs. */
#define GREEDY_TOLERANCE_US 10ul
/* QEMU virt's timebase-frequency: 10 MHz (a PD has no device tree). */
#define TICKS_PER_US 10ul

#define CH_CRITICAL 0
#define SC_GREEDY 0
#define SC_CRITICAL 1
#define SC_BACKGROUND 2
#define SC_MONITOR 3

uint64_t job_state; /* its vaddr, set by kairos build (setvar_vaddr) */

void init(void)
{
    struct job_state *s = (struct job_state *)job_state;
    printf("Kairos MCS demo: time as a capability (a system description: examples/demo/system.xml)\n");
    printf("  critical   (high criticality) prio 150, sporadic %lu us / %lu us, one job per period\n",
           CRITICAL_BUDGET_US, PERIOD_US);
    printf("  greedy     (low criticality)  prio 200, sporadic %lu us / %lu us, spins forever\n", GREEDY_BUDGET_US,
           PERIOD_US);
    printf("  background (best effort)      prio  10, round robin %lu us\n", BACKGROUND_SLICE_US);
    printf("  monitor    (observer)         prio 254, sporadic %lu us / %lu us, periodic by Yield\n",
           MONITOR_BUDGET_US, PERIOD_US);

    /* Period 0 starts at the monitor's next release. */
    seL4_Yield();
    for (seL4_Word sc = SC_GREEDY; sc <= SC_MONITOR; sc++)
        (void)kairos_sc_consumed(sc);

    seL4_Word misses = 0, over_budget = 0, starved = 0;
    seL4_Word greedy_worst = 0, critical_worst = 0, background_min = ~0ul;
    uint64_t release = demo_rdtime();
    kairos_notify(CH_CRITICAL); /* job 0 */
    seL4_Yield();
    for (seL4_Word p = 0; p < PERIODS; p++) {
        /* The monitor's refill is back: period p has ended. */
        uint64_t now = demo_rdtime();
        seL4_Word g = kairos_sc_consumed(SC_GREEDY), c = kairos_sc_consumed(SC_CRITICAL);
        seL4_Word b = kairos_sc_consumed(SC_BACKGROUND), m = kairos_sc_consumed(SC_MONITOR);
        bool met = s->jobs_done == p + 1 && s->job_done_at <= now;
        uint64_t done_after = met ? s->job_done_at - release : 0;
        /* Release the next job before printing (critical runs once the
         * monitor yields). */
        release = now;
        if (p + 1 < PERIODS)
            kairos_notify(CH_CRITICAL);
        if (!met)
            misses++;
        if (g > GREEDY_BUDGET_US + GREEDY_TOLERANCE_US)
            over_budget++;
        if (b == 0)
            starved++;
        if (g > greedy_worst)
            greedy_worst = g;
        if (c > critical_worst)
            critical_worst = c;
        if (b < background_min)
            background_min = b;
        printf("period %3lu: critical %4lu us  greedy %4lu us  background %4lu us  monitor %3lu us  "
               "critical job done at +%lu us: deadline %s\n",
               (unsigned long)p, (unsigned long)c, (unsigned long)g, (unsigned long)b, (unsigned long)m,
               (unsigned long)(done_after / TICKS_PER_US), met ? "met" : "MISSED");
        seL4_Yield(); /* until the next period */
    }

    printf("demo: %lu periods; critical worst %lu us of %lu us budget, deadlines missed %lu; greedy worst %lu us "
           "of %lu us budget (+%lu us tolerance), over budget %lu; background least %lu us\n",
           (unsigned long)PERIODS, (unsigned long)critical_worst, CRITICAL_BUDGET_US, (unsigned long)misses,
           (unsigned long)greedy_worst, GREEDY_BUDGET_US, GREEDY_TOLERANCE_US, (unsigned long)over_budget,
           (unsigned long)background_min);
#ifdef CONFIG_DEBUG_BUILD
    printf("demo: kernel: timer reprograms %lu (last %lu instructions), SC switches %lu (last %lu, longest %lu "
           "instructions), longest overrun %lu ticks, Sstc %s\n",
           kairos_debug_counter(16), kairos_debug_counter(17), kairos_debug_counter(18), kairos_debug_counter(19),
           kairos_debug_counter(20), kairos_debug_counter(22), kairos_debug_counter(21) ? "yes" : "no");
#endif
    const char *reason = NULL;
    if (misses)
        reason = "the critical thread missed a deadline";
    else if (over_budget)
        reason = "the greedy thread exceeded its budget";
    else if (starved)
        reason = "the background thread got no time in some period";
    if (reason) {
        printf("demo verdict: FAIL (%s)\n", reason);
        kairos_exit(false, reason);
    }
    printf("demo verdict: PASS\n");
    kairos_exit(true, NULL);
}
