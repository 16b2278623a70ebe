/* Threads and the scheduler. */
#ifndef KAIROS_THREAD_H
#define KAIROS_THREAD_H

#include <object.h>

/* The thread whose context the kernel entered from (NULL while idle, or once
 * the current thread's TCB has been finalised during this kernel entry). */
extern struct tcb *current_thread;

static inline struct tcb *tcb_from_paddr(paddr_t p);
/* Running or Restart: the thread wants the CPU. */
bool thread_is_runnable(const struct tcb *t);
/* Runnable and bound to a configured scheduling context: the thread may be
 * chosen to run (MCS: a thread without time never runs). */
bool thread_is_schedulable(const struct tcb *t);
/* Blocked on send, receive, reply or notification. */
bool thread_is_blocked(const struct tcb *t);
void thread_set_state(struct tcb *t, enum thread_state s);
/* Append t to its priority's ready queue if it is schedulable. Used on the
 * current thread it ends its time slice (Yield): a round-robin context gets
 * its full budget back and others of equal priority run first. */
void sched_enqueue(struct tcb *t);
void sched_dequeue(struct tcb *t);
/* SchedContext_YieldTo: put target at the head of its queue; if its
 * priority is at least the current thread's, the current thread yields to
 * it (and runs right after it). */
void sched_yield_to(struct tcb *target);
/* Take t out of whatever it is blocked on (seL4's cancelIPC): a
 * notification's queue now, endpoint and reply queues with the IPC work.
 * t is left inactive. */
void thread_cancel_blocking(struct tcb *t);
/* seL4's suspend: cancel what t was doing and make it inactive. A running
 * thread continues after its ecall (or interrupted instruction) if resumed. */
void thread_suspend(struct tcb *t);
/* seL4's restart (TCB_Resume): if t is inactive or blocked, cancel the
 * blocking operation and make it runnable again at its restart pc (FaultIP). */
void thread_resume(struct tcb *t);
/* Change t's priority; a queued thread is re-queued at the new priority. */
void thread_set_priority(struct tcb *t, u32 prio);
/* Make t schedulable-state changes take effect: enqueue it if it can run
 * now and is neither current nor queued (after binding or configuring). */
void thread_schedule(struct tcb *t);
/* Set t's seL4_TCBFlag bits, saving its live FP state first if the FPU
 * becomes disabled (behaviour.md (i)). */
void thread_set_flags(struct tcb *t, word_t flags);
/* Forget every scheduler reference to t (its TCB is being finalised). */
void thread_forget(struct tcb *t);
/* Charge the time since the last accounting point to the running context
 * (so Consumed and reconfiguration see up-to-date numbers). */
void sched_commit_time(void);
/* The scheduler must stop charging sc (it is being unbound or deleted). */
void sched_forget_sc(struct sched_context *sc);
/* Leave the kernel: pick the thread to run and return to user mode in it. */
NORETURN void kernel_exit(void);
/* Handle whatever interrupts are pending. Budget expiry itself is noticed by
 * kernel_exit, which charges time and re-arms the timer on every exit. */
void handle_pending_interrupts(void);
void debug_register_thread(struct tcb *t);
void debug_unregister_thread(struct tcb *t);
void debug_dump_scheduler(void);
const char *thread_name(const struct tcb *t);
void thread_set_name(struct tcb *t, const char *name, word_t max_len);

#include <arch/memory.h>
static inline struct tcb *tcb_from_paddr(paddr_t p) { return (struct tcb *)paddr_to_kptr(p); }

#endif
