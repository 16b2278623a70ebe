/* Preemption points and the kernel's debug counters. */
#include <arch/csr.h>
#include <preemption.h>

u64 debug_counters[NUM_DEBUG_COUNTERS];

#if CONFIG_INVARIANT_CHECKS
bool preemption_forced;
static u32 forced_count;
#endif

bool preemption_point_unforced(void)
{
    entry_stamp_mark();
    /* The kernel runs with interrupts masked; sip shows what is waiting. */
    return (csr_read(sip) & csr_read(sie)) != 0;
}

bool preemption_point(void)
{
#if CONFIG_INVARIANT_CHECKS
    if (preemption_forced && ++forced_count % FORCED_PREEMPTION_PERIOD == 0) {
        entry_stamp_mark();
        return true;
    }
#endif
    return preemption_point_unforced();
}

#if CONFIG_INVARIANT_CHECKS
static u64 entry_instret, segment_instret, excluded, segment_excluded, paused_at;
static word_t entry_syscall, entry_label;

void entry_stamp_begin(word_t syscall, word_t label)
{
    entry_label = label;
    entry_instret = segment_instret = read_instret();
    excluded = segment_excluded = 0;
    entry_syscall = syscall;
    debug_counters[KAIROS_COUNTER_KERNEL_ENTRIES]++;
}

void entry_stamp_pause(void) { paused_at = read_instret(); }

void entry_stamp_resume(void)
{
    u64 idle = read_instret() - paused_at;
    excluded += idle;
    segment_excluded += idle;
}

/* End of a non-preemptible stretch: a preemption point or the exit. */
void entry_stamp_mark(void)
{
    if (entry_instret == 0)
        return;
    u64 now = read_instret();
    u64 length = now - segment_instret - segment_excluded;
    if (length > debug_counters[KAIROS_COUNTER_LONGEST_ENTRY_INSTRET]) {
        debug_counters[KAIROS_COUNTER_LONGEST_ENTRY_INSTRET] = length;
        debug_counters[KAIROS_COUNTER_LONGEST_ENTRY_SYSCALL] = entry_syscall;
        debug_counters[KAIROS_COUNTER_LONGEST_ENTRY_LABEL] = entry_label;
    }
    segment_instret = now;
    segment_excluded = 0;
}

/* Called by trap.S on the way out, just before the user registers are loaded. */
void kernel_exit_stamp(void);
void kernel_exit_stamp(void)
{
    if (entry_instret == 0)
        return; /* the first exit ends boot, not a kernel entry */
    entry_stamp_mark();
    u64 length = read_instret() - entry_instret - excluded;
    if (length > debug_counters[KAIROS_COUNTER_LONGEST_WHOLE_ENTRY])
        debug_counters[KAIROS_COUNTER_LONGEST_WHOLE_ENTRY] = length;
}
#endif
