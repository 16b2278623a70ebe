/* The page the critical PD and the monitor share (memory region job_state). */
#ifndef DEMO_JOB_STATE_H
#define DEMO_JOB_STATE_H
#include <stdint.h>

struct job_state {
    volatile uint64_t jobs_done;   /* written by critical */
    volatile uint64_t job_done_at; /* rdtime when the last job finished */
};

static inline uint64_t demo_rdtime(void)
{
    uint64_t v;
    __asm__ volatile("rdtime %0" : "=r"(v));
    return v;
}
#endif
