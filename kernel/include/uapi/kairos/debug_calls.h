/* Kairos's own debug system calls and the kernel counters they read (debug
 * and check builds; docs/kernel.md "Debug system calls"). The one home of
 * these numbers: the kernel includes this file (abi.h, preemption.h,
 * thread.h) and so does the user library (user/lib/lib.mk adds
 * kernel/include/uapi to its include path; <kairos/kairos.h>). Plain
 * macros only, so that both sides can include it. */
#ifndef KAIROS_UAPI_DEBUG_CALLS_H
#define KAIROS_UAPI_DEBUG_CALLS_H

/* System-call numbers (a7), below seL4's range. */
#define KAIROS_SYS_DEBUG_COUNTER (-100)  /* a0 = counter id; returns its value in a0 */
#define KAIROS_SYS_DEBUG_FASTPATH (-101) /* a0 = 1 on, 0 off; returns the previous setting */

/* Counter ids for KAIROS_SYS_DEBUG_COUNTER. 0-15: kernel entries and
 * preemption (kernel/kernel/preemption.c and its callers). */
#define KAIROS_COUNTER_PREEMPTION_RESTARTS 0    /* system calls stopped at a preemption point */
#define KAIROS_COUNTER_KERNEL_ENTRIES 1
#define KAIROS_COUNTER_LONGEST_ENTRY_INSTRET 2  /* longest stretch without a preemption point (check) */
#define KAIROS_COUNTER_LONGEST_ENTRY_SYSCALL 3  /* the system call of that stretch (0: not a syscall) */
#define KAIROS_COUNTER_INVARIANT_CHECKS 4
#define KAIROS_COUNTER_LONGEST_WHOLE_ENTRY 5    /* longest entry, ecall to sret (check) */
#define KAIROS_COUNTER_LONGEST_ENTRY_LABEL 6    /* message label (a1 >> 12) of that system call */
#define KAIROS_COUNTER_FASTPATH_CALL 7          /* Calls done by the fastpath */
#define KAIROS_COUNTER_FASTPATH_REPLY_RECV 8    /* ReplyRecvs done by the fastpath */
#define KAIROS_COUNTER_RELEASE_BATCH_MAX 9      /* most threads released by one release_ready_threads */
#define KAIROS_COUNTER_RELEASE_STOPPED 10       /* releases left for the next entry at a preemption point */
#define KAIROS_NUM_ENTRY_COUNTERS 11
/* 16 on: scheduler measurements (docs/scheduling.md "Measurements");
 * instruction counts are of the last occurrence unless named MAX. */
#define KAIROS_COUNTER_TIMER_REPROGRAMS 16
#define KAIROS_COUNTER_TIMER_REPROGRAM_INSTRET 17
#define KAIROS_COUNTER_SC_SWITCHES 18
#define KAIROS_COUNTER_SC_SWITCH_INSTRET 19
#define KAIROS_COUNTER_SC_SWITCH_MAX_INSTRET 20
#define KAIROS_COUNTER_SSTC 21
#define KAIROS_COUNTER_OVERRUN_MAX_TICKS 22     /* longest use past a head refill seen at an entry */
/* Thread admission (docs/object-model.md "Thread limit"). */
#define KAIROS_COUNTER_THREADS 23               /* TCBs in existence, the root thread's included */
#define KAIROS_COUNTER_THREADS_MAX 24           /* the most that existed at once since boot */

#endif
