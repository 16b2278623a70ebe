/* Schedule trace (trace.h, docs/schedule-traces.md). The buffer keeps the
 * first TRACE_EVENTS events of a run and counts the rest; recording is a
 * bounded constant amount of work, printing happens once, at halt. */
#include <kernel.h>
#include <thread.h>
#include <timer.h>
#include <trace.h>

#if CONFIG_DEBUG_BUILD

#define TRACE_EVENTS 16384

struct trace_event {
    u64 time;               /* machine_time() ticks */
    const struct tcb *tcb;  /* NULL: idle */
    u32 kind;
    u32 arg;
};

bool trace_on;
static struct trace_event events[TRACE_EVENTS];
static word_t n_events, n_dropped;

void trace_record(enum trace_kind kind, const struct tcb *t, word_t arg)
{
    if (n_events == TRACE_EVENTS) {
        n_dropped++;
        return;
    }
    struct trace_event *e = &events[n_events++];
    e->time = machine_time();
    e->tcb = t;
    e->kind = kind;
    e->arg = (u32)arg;
}

/* One line per event, then one per thread that still exists (its name);
 * bounded by TRACE_EVENTS and by the number of TCBs. */
void trace_dump(void)
{
    if (!trace_on)
        return;
    kprintf("ktrace-begin: %lu events, %lu dropped, %lu ticks per ms\n", (unsigned long)n_events,
            (unsigned long)n_dropped, (unsigned long)timer_ticks_per_ms);
    for (word_t i = 0; i < n_events; i++)
        kprintf("kt %lx %u %lx %x\n", (unsigned long)events[i].time, events[i].kind,
                (unsigned long)(word_t)events[i].tcb, events[i].arg);
    debug_dump_thread_names();
    kprintf("ktrace-end\n");
}

#endif
