/* critical: high criticality, priority 150, 2 ms / 10 ms. Each notification
 * on channel 0 (from the monitor) releases one job: a fixed amount of work
 * (about 0.5 ms under -icount); its completion time goes to job_state. */
#include <kairos/pd.h>

#include "job_state.h"

#define JOB_ITERATIONS 125000ul

uint64_t job_state; /* its vaddr, set by kairos build (setvar_vaddr) */
static volatile uint64_t job_sink;

void init(void)
{
}

void notified(kairos_channel ch)
{
    (void)ch;
    struct job_state *s = (struct job_state *)job_state;
    uint64_t x = job_sink;
    for (seL4_Word i = 0; i < JOB_ITERATIONS; i++)
        x = x * 6364136223846793005ull + i;
    job_sink = x;
    s->job_done_at = demo_rdtime();
    s->jobs_done++;
}
