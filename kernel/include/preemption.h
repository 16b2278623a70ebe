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
#include <uapi/kairos/debug_calls.h>

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
 * Kairos-specific system call KAIROS_SYS_DEBUG_COUNTER (docs/kernel.md);
 * the ids are uapi/kairos/debug_calls.h's. */
#define NUM_DEBUG_COUNTERS KAIROS_NUM_ENTRY_COUNTERS /* ids 0-10: KAIROS_COUNTER_* */
extern u64 debug_counters[NUM_DEBUG_COUNTERS];

/* Kernel-entry length measurement (check flavour): instret is stamped at
 * entry, at every preemption point and at exit; time in the invariant checker
 * is left out (idling is not kernel time: the idle thread waits outside the
 * kernel). KAIROS_COUNTER_LONGEST_ENTRY_INSTRET keeps the
 * longest stretch with no chance to take an interrupt (entry to first
 * preemption point, between points, last point to exit): the non-preemptible
 * length that bounds interrupt latency. KAIROS_COUNTER_LONGEST_ENTRY_SYSCALL is the
 * system call of that entry (0 for an exception or interrupt).
 * KAIROS_COUNTER_LONGEST_WHOLE_ENTRY is the longest entry from ecall to sret, which
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
