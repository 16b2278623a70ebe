/*
 * client_hi: high criticality, priority 150, 2 ms / 10 ms. One ppcall a
 * period (then Yield until the next refill); after 20 it checks
 *   - every reply was right,
 *   - the server's own scheduling context consumed nothing while serving
 *     (passive: every call ran on the caller's donated context),
 *   - this PD's context was charged at least the server's work for its calls,
 *   - client_lo was served too,
 * prints `passive verdict: PASS` or `... FAIL (reason)` and ends the run.
 */
#include <kairos/kairos.h>
#include <kairos/pd.h>
#include <stdio.h>

#include "stats.h"

#define JOBS 20
#define SC_SERVER 0
#define SC_SELF 1
#define CH_SERVER 0
#define SERVER_CH_HI 1 /* the channel ids as the server names them */
#define SERVER_CH_LO 2
/* The server's work per call: 25000 iterations of ~5 instructions, at
 * least 80 µs under -icount (1 instruction = 1 ns). */
#define SERVER_WORK_MIN_US 80ul

uint64_t stats; /* set by kairos build (setvar_vaddr) */

void init(void)
{
    struct server_stats *s = (struct server_stats *)stats;
    seL4_Yield(); /* start on a fresh period, after the server's init */
    (void)kairos_sc_consumed(SC_SERVER);
    (void)kairos_sc_consumed(SC_SELF);
    seL4_Word wrong = 0, self_total = 0;
    for (seL4_Word job = 0; job < JOBS; job++) {
        kairos_mr_set(0, job);
        kairos_mr_set(1, 7);
        seL4_MessageInfo_t r = kairos_ppcall(CH_SERVER, kairos_msginfo_new(SERVER_OP_ADD, 2));
        if (kairos_msginfo_get_label(r) != SERVER_OP_ADD || kairos_mr_get(0) != job + 7)
            wrong++;
        seL4_Word self = kairos_sc_consumed(SC_SELF);
        self_total += self;
        printf("passive: job %2lu: reply %lu, calls hi %lu lo %lu, client_hi consumed %lu us\n", (unsigned long)job,
               (unsigned long)kairos_mr_get(0), (unsigned long)s->calls[SERVER_CH_HI],
               (unsigned long)s->calls[SERVER_CH_LO], (unsigned long)self);
        seL4_Yield();
    }
    seL4_Word server_used = kairos_sc_consumed(SC_SERVER);
    seL4_Word lo_calls = s->calls[SERVER_CH_LO], hi_calls = s->calls[SERVER_CH_HI];
    printf("passive: %lu calls from client_hi, %lu from client_lo; server's own context consumed %lu us; "
           "client_hi consumed %lu us in all\n",
           (unsigned long)hi_calls, (unsigned long)lo_calls, (unsigned long)server_used, (unsigned long)self_total);
    const char *reason = NULL;
    if (wrong)
        reason = "a reply was wrong";
    else if (hi_calls != JOBS)
        reason = "the server did not count every call of client_hi";
    else if (lo_calls == 0)
        reason = "client_lo was never served";
    else if (server_used != 0)
        reason = "the passive server consumed time of its own";
    else if (self_total < JOBS * SERVER_WORK_MIN_US)
        reason = "client_hi was not charged for the server's work";
    if (reason) {
        printf("passive verdict: FAIL (%s)\n", reason);
        kairos_exit(false, reason);
    }
    printf("passive verdict: PASS\n");
    kairos_exit(true, NULL);
}
