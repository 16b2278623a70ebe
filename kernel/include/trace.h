/* Schedule trace: a buffer of timestamped scheduling events, in the debug and
 * check flavours only (compiled out of release), recording only when booted
 * with "trace=on". The kernel prints it when a thread halts the machine
 * (seL4_DebugHalt); `kairos trace schedule` reads it from the console
 * (docs/schedule-traces.md). Each hook is one TRACE() line at the place the
 * event happens. */
#ifndef KAIROS_TRACE_H
#define KAIROS_TRACE_H

#include "config.h"
#include "types.h"

struct tcb;

enum trace_kind {
    TRACE_SWITCH = 1,   /* thread starts running; arg: the state the previous one left in */
    TRACE_THROTTLE = 2, /* thread's budget is used up: to the release queue */
    TRACE_RELEASE = 3,  /* thread's refill is ready: from the release queue to its ready queue */
    TRACE_IRQ = 4,      /* interrupt entry; arg: the machine's pending-interrupt mask */
    TRACE_SYSCALL = 5,  /* system call by thread; arg: its number */
    TRACE_TIMEOUT = 6,  /* timeout fault of thread */
    TRACE_WAKE = 7,     /* thread becomes runnable (a message, a signal, a reply, Resume) */
};

#if CONFIG_DEBUG_BUILD
extern bool trace_on;
void trace_record(enum trace_kind kind, const struct tcb *t, word_t arg);
void trace_dump(void);
void debug_dump_thread_names(void); /* thread.c: "ktrace-thread: <tcb> <name>" per thread */
#define TRACE(kind, t, arg)                  \
    do {                                     \
        if (unlikely(trace_on))              \
            trace_record((kind), (t), (arg)); \
    } while (0)
#else
#define TRACE(kind, t, arg) \
    do {                    \
    } while (0)
static inline void trace_dump(void) {}
#endif

#endif
