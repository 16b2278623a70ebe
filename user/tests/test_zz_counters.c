/* Runs last (link order follows file names): reports the kernel's debug
 * counters for the whole suite, read with Kairos's debug-only system call
 * (a7 = -100). Under `-icount shift=0` the longest entry is exact. */
#include <ktest.h>
#include <stdio.h>

KTEST(zz_report, kernel_counters)
{
    unsigned long entries = kairos_debug_counter(1);
    printf("kernel-counters: entries %lu preemption-restarts %lu longest-entry %lu longest-syscall %ld "
           "invariant-checks %lu longest-whole-entry %lu longest-entry-label %lu\n",
           entries, kairos_debug_counter(0), kairos_debug_counter(2), (long)kairos_debug_counter(3), kairos_debug_counter(4),
           kairos_debug_counter(5), kairos_debug_counter(6));
    /* The check flavour counts every entry and checks after every call. */
    KASSERT(entries > 0);
    KASSERT(kairos_debug_counter(4) > 0);
}
