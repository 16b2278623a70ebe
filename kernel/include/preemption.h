/* Preemption points: long kernel operations (revoking a subtree, deleting a
 * big CNode, zeroing untyped memory, unmapping a page table) call
 * preemption_point() after each bounded unit of work. If an interrupt is
 * pending, the operation leaves its object in a consistent intermediate state
 * and returns ERR_PREEMPTED; the system call is restarted after the interrupt
 * is handled (Blackham ch. 4-5). */
#ifndef KAIROS_PREEMPTION_H
#define KAIROS_PREEMPTION_H

#include <config.h>
#include <types.h>

bool preemption_point(void);

#if CONFIG_INVARIANT_CHECKS
/* Test aid, check flavour only (boot argument `preempt=force`): every
 * FORCED_PREEMPTION_PERIOD-th preemption point reports an interrupt pending
 * whether or not one is, so every long operation is stopped and restarted
 * many times at every kind of point (tests/test_ktest.py runs the suites
 * that delete, revoke and retype this way). */
#define FORCED_PREEMPTION_PERIOD 3
extern bool preemption_forced;
#endif
/* preemption_point without that test aid, for the untyped reset: its
 * 256-byte chunks would make a forced run restart a big reset hundreds of
 * thousands of times (real interrupts exercise its restart path in the
 * long-reset tests). Otherwise the same. */
bool preemption_point_unforced(void);

/* Debug counters, readable from user mode in debug builds through the
 * Kairos-specific system call SYS_KAIROS_DEBUG_COUNTER (docs/kernel.md). */
enum debug_counter {
    COUNTER_PREEMPTION_RESTARTS = 0,
    COUNTER_KERNEL_ENTRIES = 1,
    COUNTER_LONGEST_ENTRY_INSTRET = 2,
    COUNTER_LONGEST_ENTRY_SYSCALL = 3,
    COUNTER_INVARIANT_CHECKS = 4,
    COUNTER_LONGEST_WHOLE_ENTRY = 5,
    COUNTER_LONGEST_ENTRY_LABEL = 6, /* message label (a1 >> 12) of that system call */
    COUNTER_FASTPATH_CALL = 7,       /* Calls done by the fastpath (debug builds) */
    COUNTER_FASTPATH_REPLY_RECV = 8, /* ReplyRecvs done by the fastpath (debug builds) */
    COUNTER_RELEASE_BATCH_MAX = 9,   /* most threads released by one release_ready_threads (debug builds) */
    COUNTER_RELEASE_STOPPED = 10,    /* releases left for the next entry at a preemption point (debug builds) */
    NUM_DEBUG_COUNTERS,
};
extern u64 debug_counters[NUM_DEBUG_COUNTERS];

/* Kernel-entry length measurement (check flavour): instret is stamped at
 * entry, at every preemption point and at exit; time in the invariant checker
 * is left out (idling is not kernel time: the idle thread waits outside the
 * kernel). COUNTER_LONGEST_ENTRY_INSTRET keeps the
 * longest stretch with no chance to take an interrupt (entry to first
 * preemption point, between points, last point to exit): the non-preemptible
 * length that bounds interrupt latency. COUNTER_LONGEST_ENTRY_SYSCALL is the
 * system call of that entry (0 for an exception or interrupt).
 * COUNTER_LONGEST_WHOLE_ENTRY is the longest entry from ecall to sret, which
 * for a preemptible operation lasts until an interrupt arrives. */
#if CONFIG_INVARIANT_CHECKS
void entry_stamp_begin(word_t syscall, word_t label);
void entry_stamp_pause(void);
void entry_stamp_resume(void);
void entry_stamp_mark(void);
#else
static inline void entry_stamp_mark(void) {}
static inline void entry_stamp_begin(word_t syscall, word_t label) { (void)syscall; (void)label; }
static inline void entry_stamp_pause(void) {}
static inline void entry_stamp_resume(void) {}
#endif

#endif
