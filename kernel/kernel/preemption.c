/* Preemption points and the kernel's debug counters. */
#include <arch/csr.h>
#include <preemption.h>

u64 debug_counters[NUM_DEBUG_COUNTERS];

bool preemption_point(void)
{
    /* The kernel runs with interrupts masked; sip shows what is waiting. */
    return (csr_read(sip) & csr_read(sie)) != 0;
}
