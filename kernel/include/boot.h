/* Boot entry and what boot measured. */
#ifndef KAIROS_BOOT_H
#define KAIROS_BOOT_H

#include <object.h>

struct boot_stats {
    u64 boot_object_bytes;   /* RAM taken by the root task's objects and image */
    u64 untyped_ram_bytes;   /* RAM handed to the root task as untyped */
    u64 untyped_count;
    u64 first_user_instret;  /* instret when the root task is first entered */
};
extern struct boot_stats boot_stats;

NORETURN void boot_kernel(word_t hart_id, paddr_t dtb_pa);

/* Set up the ASID table with the boot pool and the root task's VSpace. */
void asid_boot_init(paddr_t pool_pa, word_t asid, paddr_t vspace_pa);
/* Round-robin context of CONFIG_BOOT_THREAD_TIME_SLICE_MS for the root thread. */
void sched_context_boot_init(struct sched_context *sc, u32 size_bits, struct tcb *t);
void timer_init(u64 timebase_hz);

#if defined(KAIROS_FLAVOUR_DEBUG)
#define KAIROS_FLAVOUR_NAME "debug"
#elif defined(KAIROS_FLAVOUR_CHECK)
#define KAIROS_FLAVOUR_NAME "check"
#else
#define KAIROS_FLAVOUR_NAME "release"
#endif

#endif
