/*
 * mcs_demo: the default Kairos system (`make run`). A mixed-criticality
 * system on one core, showing processor time as a capability:
 *
 *   thread      criticality  priority  scheduling context
 *   monitor     (this root)  255       sporadic  1 ms / 10 ms
 *   greedy      low          200       sporadic  3 ms / 10 ms, spins forever
 *   critical    high         150       sporadic  2 ms / 10 ms, one job per period
 *   background  best effort    10       round robin 1 ms
 *
 * The monitor is periodic by seL4_Yield on its sporadic context: Yield gives
 * up the rest of its refill, so it runs again when the refill comes back one
 * period after it began (every 10 ms). Each time it wakes it
 *   - reads, for every thread, the time its context consumed in the period
 *     just ended (SchedContext_Consumed, µs),
 *   - checks that the critical thread finished the job it released at the
 *     start of that period (its deadline is the next release),
 *   - releases the next job by signalling the critical thread's notification,
 *   - prints one line for the period.
 *
 * The greedy thread has a higher priority than the critical one and never
 * stops: without budgets it would starve everything below it. Its context
 * throttles it to 3 ms in any 10 ms window, so the critical job (about
 * 0.5 ms of work, well inside its 2 ms budget) always completes, and the
 * background thread gets what is left.
 *
 * After 100 periods the last line is `demo verdict: PASS` or
 * `demo verdict: FAIL (<reason>)`, then kairos_exit reports the result.
 * Under QEMU's -icount shift=0 every figure is deterministic.
 */
#include <kairos/kairos.h>
#include <sel4/sel4.h>
#include <stdio.h>

#define ROOT seL4_CapInitThreadCNode
#define SELF seL4_CapInitThreadTCB

#define PERIODS 100
#define PERIOD_US 10000ul
#define MONITOR_BUDGET_US 1000ul
#define GREEDY_BUDGET_US 3000ul
#define CRITICAL_BUDGET_US 2000ul
#define BACKGROUND_SLICE_US 1000ul
/* The greedy thread may exceed its budget in a window by one kernel entry:
 * the entry that notices the expiry runs past it (docs/scheduling.md,
 * "Budget enforcement"). seL4's kernel WCET constant is 10 µs. */
#define GREEDY_TOLERANCE_US 10ul
/* The critical job: a fixed amount of work (about 0.5 ms under -icount). */
#define JOB_ITERATIONS 125000ul

/* ---- objects -------------------------------------------------------- */

static seL4_CPtr next_slot;
static seL4_CPtr pool;

static bool setup_failed;
static const char *setup_error = "";

static void check(seL4_Error e, const char *what)
{
    if (e != seL4_NoError && !setup_failed) {
        setup_failed = true;
        setup_error = what;
        printf("demo: %s failed: error %d\n", what, (int)e);
    }
}

static seL4_CPtr make(seL4_Word type, seL4_Word bits)
{
    seL4_CPtr s = next_slot++;
    check(seL4_Untyped_Retype(pool, type, bits, ROOT, 0, 0, s, 1), "Untyped_Retype");
    return s;
}

static void find_pool(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    seL4_Word best = ~0ul;
    for (seL4_Word i = 0; i < bi->untyped.end - bi->untyped.start; i++) {
        const seL4_UntypedDesc *u = &bi->untypedList[i];
        if (u->isDevice || u->sizeBits < 16)
            continue;
        if (best == ~0ul || u->sizeBits < bi->untypedList[best].sizeBits)
            best = i; /* the smallest that is big enough: 64 KiB covers everything */
    }
    if (best == ~0ul)
        kairos_exit(false, "no RAM untyped of 64 KiB");
    pool = bi->untyped.start + best;
    next_slot = bi->empty.start;
}

static inline uint64_t rdtime(void)
{
    uint64_t v;
    __asm__ volatile("rdtime %0" : "=r"(v));
    return v;
}

/* Timer ticks per µs, from the device tree (10 on QEMU virt). */
static uint64_t ticks_per_us(void)
{
    const void *fdt = kairos_bootinfo_fdt(kairos_bootinfo(), NULL);
    uint32_t len = 0;
    const void *p = fdt ? kairos_fdt_getprop(fdt, "/cpus", "timebase-frequency", &len) : NULL;
    uint64_t tpu = (p && len == 4) ? kairos_fdt32(p) / 1000000 : 10;
    return tpu ? tpu : 1;
}

/* ---- the threads ---------------------------------------------------- */

#define STACK_WORDS 1024
static seL4_Word stacks[3][STACK_WORDS] __attribute__((aligned(16)));

typedef struct {
    const char *name;
    seL4_CPtr tcb, sc;
} thread_t;

static thread_t greedy = {"greedy", 0, 0}, critical = {"critical", 0, 0}, background = {"background", 0, 0};
static seL4_CPtr job_ntfn;

/* Shared with the monitor. Written by one thread each. */
static volatile seL4_Word jobs_done;
static volatile uint64_t job_done_at;
static volatile uint64_t greedy_spins, background_spins;
static volatile uint64_t job_sink;

static void greedy_main(seL4_Word a0, seL4_Word a1)
{
    (void)a0;
    (void)a1;
    for (;;)
        greedy_spins++; /* wants the whole CPU */
}

static void critical_main(seL4_Word ntfn, seL4_Word a1)
{
    (void)a1;
    for (;;) {
        seL4_Word badge;
        seL4_Wait(ntfn, &badge); /* the next release */
        uint64_t x = job_sink;
        for (seL4_Word i = 0; i < JOB_ITERATIONS; i++)
            x = x * 6364136223846793005ull + i;
        job_sink = x;
        job_done_at = rdtime();
        jobs_done++;
    }
}

static void background_main(seL4_Word a0, seL4_Word a1)
{
    (void)a0;
    (void)a1;
    for (;;)
        background_spins++;
}

static seL4_Word reg_gp(void)
{
    seL4_Word v;
    __asm__ volatile("mv %0, gp" : "=r"(v));
    return v;
}

static seL4_Word reg_tp(void)
{
    seL4_Word v;
    __asm__ volatile("mv %0, tp" : "=r"(v));
    return v;
}

static void spawn(thread_t *t, int index, seL4_Word prio, seL4_Word budget, seL4_Word period, seL4_Word extra,
                  void (*fn)(seL4_Word, seL4_Word), seL4_Word arg)
{
    seL4_CPtr ctl = kairos_bootinfo()->schedcontrol.start;
    t->tcb = make(seL4_TCBObject, 0);
    t->sc = make(seL4_SchedContextObject, 8);
    check(seL4_TCB_Configure(t->tcb, ROOT, 0, seL4_CapInitThreadVSpace, 0, 0, seL4_CapNull), "TCB_Configure");
    check(seL4_SchedControl_ConfigureFlags(ctl, t->sc, budget, period, extra, 0,
                                           budget < period ? seL4_SchedContext_Sporadic : 0),
          "SchedControl_ConfigureFlags");
    check(seL4_TCB_SetSchedParams(t->tcb, SELF, 0, prio, t->sc, seL4_CapNull), "TCB_SetSchedParams");
#ifdef CONFIG_DEBUG_BUILD
    seL4_DebugNameThread(t->tcb, t->name);
#endif
    seL4_UserContext regs = {0};
    regs.pc = (seL4_Word)fn;
    regs.sp = (seL4_Word)&stacks[index][STACK_WORDS];
    regs.gp = reg_gp();
    regs.tp = reg_tp();
    regs.a0 = arg;
    check(seL4_TCB_WriteRegisters(t->tcb, true, 0, sizeof(regs) / sizeof(seL4_Word), &regs), "TCB_WriteRegisters");
}

static seL4_Word consumed(seL4_CPtr sc)
{
    seL4_SchedContext_Consumed_t r = seL4_SchedContext_Consumed(sc);
    return r.error == seL4_NoError ? r.consumed : ~0ul;
}

#ifdef CONFIG_DEBUG_BUILD
#endif

int main(void)
{
    printf("Kairos MCS demo: time as a capability\n");
    printf("  critical   (high criticality) prio 150, sporadic %lu us / %lu us, one job per period\n",
           CRITICAL_BUDGET_US, PERIOD_US);
    printf("  greedy     (low criticality)  prio 200, sporadic %lu us / %lu us, spins forever\n", GREEDY_BUDGET_US,
           PERIOD_US);
    printf("  background (best effort)      prio  10, round robin %lu us\n", BACKGROUND_SLICE_US);
    printf("  monitor    (this root task)   prio 255, sporadic %lu us / %lu us, periodic by Yield\n",
           MONITOR_BUDGET_US, PERIOD_US);

    find_pool();
    uint64_t tpu = ticks_per_us();
    seL4_CPtr ctl = kairos_bootinfo()->schedcontrol.start;
    job_ntfn = make(seL4_NotificationObject, 0);
    /* The monitor first: from here on it runs 1 ms in every 10 ms. */
    check(seL4_SchedControl_ConfigureFlags(ctl, seL4_CapInitThreadSC, MONITOR_BUDGET_US, PERIOD_US, 0, 0,
                                           seL4_SchedContext_Sporadic),
          "ConfigureFlags (monitor)");
    spawn(&background, 0, 10, BACKGROUND_SLICE_US, BACKGROUND_SLICE_US, 0, background_main, 0);
    spawn(&critical, 1, 150, CRITICAL_BUDGET_US, PERIOD_US, 4, critical_main, job_ntfn);
    spawn(&greedy, 2, 200, GREEDY_BUDGET_US, PERIOD_US, 4, greedy_main, 0);
    if (setup_failed) {
        printf("demo verdict: FAIL (setup: %s)\n", setup_error);
        kairos_exit(false, "demo setup failed");
    }

    /* Period 0 starts at the monitor's next release. */
    seL4_Yield();
    (void)consumed(greedy.sc);
    (void)consumed(critical.sc);
    (void)consumed(background.sc);
    (void)consumed(seL4_CapInitThreadSC);

    seL4_Word misses = 0, over_budget = 0, starved = 0;
    seL4_Word greedy_worst = 0, critical_worst = 0, background_min = ~0ul;
    uint64_t release = rdtime();
    seL4_Signal(job_ntfn); /* job 0 */
    seL4_Yield();
    for (seL4_Word p = 0; p < PERIODS; p++) {
        /* The monitor's refill is back: period p has ended. */
        uint64_t now = rdtime();
        seL4_Word g = consumed(greedy.sc), c = consumed(critical.sc), b = consumed(background.sc);
        seL4_Word m = consumed(seL4_CapInitThreadSC);
        bool met = jobs_done == p + 1 && job_done_at <= now;
        uint64_t done_after = met ? job_done_at - release : 0;
        /* Release the next job before printing (the critical thread runs
         * once the monitor yields). */
        release = now;
        if (p + 1 < PERIODS)
            seL4_Signal(job_ntfn);
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
               (unsigned long)(done_after / tpu), met ? "met" : "MISSED");
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
           kairos_debug_counter(16), kairos_debug_counter(17), kairos_debug_counter(18), kairos_debug_counter(19), kairos_debug_counter(20), kairos_debug_counter(22),
           kairos_debug_counter(21) ? "yes" : "no");
#endif
    seL4_TCB_Suspend(greedy.tcb);
    seL4_TCB_Suspend(critical.tcb);
    seL4_TCB_Suspend(background.tcb);

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
