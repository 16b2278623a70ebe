/*
 * victim: priority 100, 6 ms / 10 ms, 5 ms of work each period
 * (examples/infeasible/system.xml). Periodic by Yield; times each job from
 * its start to its end (a lower bound on its response time) and prints
 * whether it fit in the 10 ms deadline. After 5 jobs:
 * `infeasible verdict: MISSED (n of 5 jobs)` and a passing run, because
 * the system behaved as `kairos analyze` predicts; a run without a miss
 * fails.
 */
#include <kairos/kairos.h>
#include <kairos/pd.h>
#include <stdio.h>

#define JOBS 5
#define DEADLINE_US 10000ul
#define TICKS_PER_US 10ul          /* QEMU virt's timebase: 10 MHz */
#define WORK_ITERATIONS 1250000ul  /* about 5 ms under -icount (4 instructions each) */

static volatile uint64_t sink;

static inline uint64_t rdtime(void)
{
    uint64_t v;
    __asm__ volatile("rdtime %0" : "=r"(v));
    return v;
}

void init(void)
{
    seL4_Word misses = 0;
    seL4_Yield();
    for (seL4_Word job = 0; job < JOBS; job++) {
        uint64_t start = rdtime();
        uint64_t x = sink;
        for (seL4_Word i = 0; i < WORK_ITERATIONS; i++)
            x = x * 6364136223846793005ull + i;
        sink = x;
        uint64_t took = (rdtime() - start) / TICKS_PER_US;
        bool missed = took > DEADLINE_US;
        misses += missed;
        printf("victim: job %lu: %lu us from start to end: deadline %s\n", (unsigned long)job, (unsigned long)took,
               missed ? "MISSED" : "met");
        seL4_Yield();
    }
    printf("infeasible verdict: MISSED (%lu of %d jobs)\n", (unsigned long)misses, JOBS);
    kairos_exit(misses > 0, "no deadline was missed, though the analysis says the victim cannot make it");
}
