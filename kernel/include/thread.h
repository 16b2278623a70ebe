/* Threads and the scheduler. */
#ifndef KAIROS_THREAD_H
#define KAIROS_THREAD_H

#include <object.h>

/* The thread whose context the kernel entered from (NULL while idle). */
extern struct tcb *current_thread;

static inline struct tcb *tcb_from_paddr(paddr_t p);
bool thread_is_runnable(const struct tcb *t);
void thread_set_state(struct tcb *t, enum thread_state s);
void sched_enqueue(struct tcb *t);
void sched_dequeue(struct tcb *t);
/* Suspend t: cancel what it was doing and make it inactive. */
void thread_suspend(struct tcb *t);
void thread_resume(struct tcb *t);
/* Leave the kernel: pick the thread to run and return to user mode in it. */
NORETURN void kernel_exit(void);
/* Handle whatever interrupts are pending (timer: end of a time slice). */
void handle_pending_interrupts(void);
void debug_register_thread(struct tcb *t);
void debug_dump_scheduler(void);
const char *thread_name(const struct tcb *t);
void thread_set_name(struct tcb *t, const char *name, word_t max_len);

#include <arch/memory.h>
static inline struct tcb *tcb_from_paddr(paddr_t p) { return (struct tcb *)paddr_to_kptr(p); }

#endif
