/* Scheduling contexts: processor time as an object. This file holds what boot
 * needs; the invocations and the sporadic-server refills build on it. */
#include <boot.h>
#include <invocation.h>
#include <thread.h>
#include <timer.h>
#include <arch/machine.h>

/* Refills a context of 2^size_bits bytes can hold after its header. */
static u32 refill_capacity(u32 size_bits) { return (u32)(((1ul << size_bits) - 96) / sizeof(struct refill)); }

void sched_context_boot_init(struct sched_context *sc, u32 size_bits, struct tcb *t)
{
    u64 budget = CONFIG_BOOT_THREAD_TIME_SLICE_MS * timer_ticks_per_ms;
    sc->size_bits = size_bits;
    sc->refill_max = refill_capacity(size_bits);
    sc->period = 0; /* round robin, as seL4 stores the boot context */
    sc->budget = budget;
    sc->sporadic = false;
    sc->refill_head = 0;
    sc->refill_count = 1;
    sc_refills(sc)[0].release_time = machine_time();
    sc_refills(sc)[0].amount = budget;
    sc->tcb = t;
    t->sc = sc;
}

/* SchedContext invocations: not implemented yet (refused with IllegalOperation). */
struct syscall_error decode_sched_context_invocation(struct invocation *inv)
{
    (void)inv;
    return error0(ERR_ILLEGAL_OPERATION);
}
