/*
 * tabench: what a user-level reservation scheduler costs per time unit, for
 * 2 to 7 servers, generated from a verified model (kairos tatoc) against
 * hand-written C (docs/timed-automata.md "Overhead").
 *
 * The workloads are the library's `paper-N` models (kairos/ta/library.py):
 * N periodic servers under fixed priorities, server i with budget 1 every
 * N + 1 + i units and one task of one unit per period, the shape Åsberg,
 * Pettersson and Nolte measured on seL4 (2 to 7 servers, one task each).
 * For each N the generated scheduler (prefix taN) and the hand-written one
 * (hw_tick below) run the same UNITS time units side by side; every unit,
 * both must choose the same server and task, else the run fails.
 *
 * Counted: instructions of one time unit of the scheduler (the model's
 * ta_tick: releases and replenishments, then the decision, then the
 * execution bookkeeping), read with rdcycle, which counts retired
 * instructions under QEMU -icount (docs/benchmarks.md "Method"). A unit at
 * which some server is replenished is a *release* unit, the others are
 * *decision* units (the decision alone). Each pass is run twice from the
 * initial state and the smaller count of each unit kept, so that a timer
 * interrupt falling into one pass cannot inflate a figure (the code is
 * deterministic: both passes execute the same instructions).
 *
 * Output: one line per scheduler and N,
 *   TABENCH {"impl": "gen", "servers": N, "decision_median": .., "decision_max": ..,
 *            "release_median": .., "release_max": .., "units": ..}
 * then "tabench verdict: PASS".
 */
#include <kairos/kairos.h>
#include <kairos/roottask.h>
#include <sel4/sel4.h>
#include <stdbool.h>
#include <stdio.h>

#include "ta2_sched.h"
#include "ta3_sched.h"
#include "ta4_sched.h"
#include "ta5_sched.h"
#include "ta6_sched.h"
#include "ta7_sched.h"

#define MIN_SERVERS 2
#define MAX_SERVERS 7
#define UNITS 240 /* more than one period of every server, for every N */

static inline uint64_t rdcycle(void)
{
    uint64_t v;
    __asm__ volatile("rdcycle %0" : "=r"(v));
    return v;
}

/* ---- the hand-written scheduler ----
 * (noipa: measured, and bounded by kairos wcet, as functions of their own,
 * as the generated taN_tick are)
 * The same policy as the model, written directly: arrays indexed by server,
 * servers in priority order (index 0 highest, as the paper-N priorities).
 * It keeps only what the decision needs (no observers). */
struct hw {
    int n;
    int budget[MAX_SERVERS], next_rel[MAX_SERVERS];
    int rem[MAX_SERVERS], trel[MAX_SERVERS];
    int period[MAX_SERVERS];
    int run_s, run_t; /* n: none */
};

static void hw_init(struct hw *h, int n)
{
    h->n = n;
    for (int i = 0; i < n; i++) {
        h->period[i] = n + 1 + i;
        h->budget[i] = 1;
        h->next_rel[i] = h->period[i];
        h->rem[i] = 1;
        h->trel[i] = h->period[i];
    }
    h->run_s = h->run_t = n;
}

/* The decision and one unit of execution (the model's decide and execute). */
__attribute__((noipa)) static void hw_decide(struct hw *h)
{
    int s = h->n;
    for (int i = 0; i < h->n; i++)
        if (h->budget[i] > 0) {
            s = i;
            break;
        }
    h->run_s = s;
    h->run_t = (s < h->n && h->rem[s] > 0) ? s : h->n;
    if (s < h->n)
        h->budget[s]--;
    if (h->run_t < h->n)
        h->rem[h->run_t]--;
}

/* One time unit: replenishments and releases due now, then the decision.
 * Returns whether some server was replenished. */
__attribute__((noipa)) static bool hw_tick(struct hw *h)
{
    bool released = false;
    for (int i = 0; i < h->n; i++) {
        if (h->next_rel[i] == 1) {
            h->budget[i] = 1;
            h->next_rel[i] = h->period[i];
            released = true;
        } else {
            h->next_rel[i]--;
        }
        if (h->trel[i] == 1) {
            h->rem[i] = 1;
            h->trel[i] = h->period[i];
        } else {
            h->trel[i]--;
        }
    }
    hw_decide(h);
    return released;
}

/* ---- the measurement ---- */

static uint32_t gen_cost[2][UNITS], hw_cost[2][UNITS];
static bool release_unit[UNITS];
static int gen_choice[UNITS][2];
static unsigned failures;

static void fail(int n, int unit, const char *what)
{
    printf("tabench: FAIL: %d servers, unit %d: %s\n", n, unit, what);
    failures++;
}

/* The generated scheduler for N servers, one pass: the instructions of each
 * unit, and the choices. Written once per prefix by a macro: the functions
 * and types differ only in their prefix. */
#define GEN_PASS(P, n, pass)                                                                 \
    do {                                                                                     \
        static struct P##_state st;                                                          \
        P##_init(&st);                                                                       \
        if (P##_settle(&st) != 0)                                                            \
            fail(n, 0, "generated: model error at the first instant");                      \
        for (int u = 0; u < UNITS; u++) {                                                    \
            uint64_t t0 = rdcycle();                                                         \
            int rc = P##_tick(&st);                                                          \
            uint64_t t1 = rdcycle();                                                         \
            gen_cost[pass][u] = (uint32_t)(t1 - t0);                                         \
            if (rc != 0 || st.v_missed)                                                      \
                fail(n, u, "generated: model error or deadline missed");                    \
            gen_choice[u][0] = st.v_run_s;                                                   \
            gen_choice[u][1] = st.v_run_t;                                                   \
        }                                                                                    \
    } while (0)

static void gen_pass(int n, int pass)
{
    switch (n) {
    case 2: GEN_PASS(ta2, 2, pass); break;
    case 3: GEN_PASS(ta3, 3, pass); break;
    case 4: GEN_PASS(ta4, 4, pass); break;
    case 5: GEN_PASS(ta5, 5, pass); break;
    case 6: GEN_PASS(ta6, 6, pass); break;
    case 7: GEN_PASS(ta7, 7, pass); break;
    default: fail(n, 0, "no generated scheduler"); break;
    }
}

static void hw_pass(int n, int pass)
{
    static struct hw h;
    hw_init(&h, n);
    hw_decide(&h); /* the first instant, as the model's ta_settle */
    for (int u = 0; u < UNITS; u++) {
        uint64_t t0 = rdcycle();
        bool rel = hw_tick(&h);
        uint64_t t1 = rdcycle();
        hw_cost[pass][u] = (uint32_t)(t1 - t0);
        release_unit[u] = rel;
        if (h.run_s != gen_choice[u][0] || h.run_t != gen_choice[u][1])
            fail(n, u, "hand-written and generated schedulers chose differently");
    }
}

/* Median and maximum over the units of one kind (insertion sort: at most
 * UNITS values). */
static void stats(uint32_t cost[2][UNITS], bool release, uint32_t *median, uint32_t *max, int *count)
{
    static uint32_t v[UNITS];
    int m = 0;
    for (int u = 0; u < UNITS; u++) {
        if (release_unit[u] != release)
            continue;
        uint32_t c = cost[0][u] < cost[1][u] ? cost[0][u] : cost[1][u];
        int j = m++;
        for (; j > 0 && v[j - 1] > c; j--)
            v[j] = v[j - 1];
        v[j] = c;
    }
    *count = m;
    *median = m ? v[m / 2] : 0;
    *max = m ? v[m - 1] : 0;
}

static void report(const char *impl, int n, uint32_t cost[2][UNITS])
{
    uint32_t dmed, dmax, rmed, rmax;
    int dn, rn;
    stats(cost, false, &dmed, &dmax, &dn);
    stats(cost, true, &rmed, &rmax, &rn);
    if (dn == 0 || rn == 0)
        fail(n, 0, "a kind of unit never occurred");
    printf("TABENCH {\"impl\": \"%s\", \"servers\": %d, \"decision_median\": %u, \"decision_max\": %u, "
           "\"release_median\": %u, \"release_max\": %u, \"decision_units\": %d, \"release_units\": %d}\n",
           impl, n, (unsigned)dmed, (unsigned)dmax, (unsigned)rmed, (unsigned)rmax, dn, rn);
}

int main(void)
{
    printf("tabench: user-level reservation schedulers, %d units per run, instructions per unit\n", UNITS);
    for (int n = MIN_SERVERS; n <= MAX_SERVERS; n++) {
        for (int pass = 0; pass < 2; pass++) {
            gen_pass(n, pass);
            hw_pass(n, pass);
        }
        report("gen", n, gen_cost);
        report("hand", n, hw_cost);
    }
    if (failures != 0) {
        printf("tabench verdict: FAIL (%u)\n", failures);
        kairos_exit(false, "the schedulers failed or disagreed");
    }
    printf("tabench verdict: PASS\n");
    kairos_exit(true, NULL);
}
