/* Runs last (link order follows file names): reports the kernel's debug
 * counters for the whole suite, read with Kairos's debug-only system call
 * (KAIROS_SYS_DEBUG_COUNTER). Under `-icount shift=0` the longest entry is exact. */
#include <ktest.h>
#include <stdio.h>

KTEST(zz_report, kernel_counters)
{
    unsigned long entries = kairos_debug_counter(KAIROS_COUNTER_KERNEL_ENTRIES);
    printf("kernel-counters: entries %lu preemption-restarts %lu longest-entry %lu longest-syscall %ld "
           "invariant-checks %lu longest-whole-entry %lu longest-entry-label %lu threads %lu threads-max %lu\n",
           entries, kairos_debug_counter(KAIROS_COUNTER_PREEMPTION_RESTARTS),
           kairos_debug_counter(KAIROS_COUNTER_LONGEST_ENTRY_INSTRET),
           (long)kairos_debug_counter(KAIROS_COUNTER_LONGEST_ENTRY_SYSCALL),
           kairos_debug_counter(KAIROS_COUNTER_INVARIANT_CHECKS), kairos_debug_counter(KAIROS_COUNTER_LONGEST_WHOLE_ENTRY),
           kairos_debug_counter(KAIROS_COUNTER_LONGEST_ENTRY_LABEL), kairos_debug_counter(KAIROS_COUNTER_THREADS),
           kairos_debug_counter(KAIROS_COUNTER_THREADS_MAX));
    /* The check flavour counts every entry and checks after every call. */
    KASSERT(entries > 0);
    KASSERT(kairos_debug_counter(KAIROS_COUNTER_INVARIANT_CHECKS) > 0);
    /* The root thread at least, and never more than the limit. */
    KASSERT(kairos_debug_counter(KAIROS_COUNTER_THREADS) >= 1);
    KASSERT(kairos_debug_counter(KAIROS_COUNTER_THREADS_MAX) <= KAIROS_MAX_THREADS);
}
