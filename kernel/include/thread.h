/* Threads and the scheduler. */
#ifndef KAIROS_THREAD_H
#define KAIROS_THREAD_H

#include <arch/machine.h>
#include <arch/vspace.h>
#include <kernel.h>
#include <object.h>
#include <refill.h>
#include <sched.h>
#include <trace.h>
#include <uapi/kairos/debug_calls.h>

/* The thread whose context the kernel entered from (NULL while idle, or once
 * the current thread's TCB has been finalised during this kernel entry). */
extern struct tcb *current_thread;

static inline struct tcb *tcb_from_paddr(paddr_t p);
/* The current SC's budget ran out (the timer, or an entry in its last
 * MIN_BUDGET): record the overrun (KAIROS_COUNTER_OVERRUN_MAX_TICKS). */
void sched_note_overrun(void);
/* The same, noticed at a system call or exception: the entry's work is not
 * done; kernel_exit charges the SC and moves the thread off the CPU (to its
 * ready queue's tail, its timeout handler or the release queue), and the
 * ecall or instruction is re-executed when the thread runs again. */
NORETURN void sched_entry_budget_exhausted(void);
/* Running or Restart: the thread wants the CPU. */
bool thread_is_runnable(const struct tcb *t);
/* Runnable and bound to a configured scheduling context: the thread may be
 * chosen to run (MCS: a thread without time never runs). */
bool thread_is_schedulable(const struct tcb *t);
/* Blocked on send, receive, reply or notification. */
bool thread_is_blocked(const struct tcb *t);
/* Take t out of the ready or release queue it is in (if any). */
void sched_dequeue(struct tcb *t);
#if CONFIG_INVARIANT_CHECKS
/* t is in a ready queue or the release queue (the check flavour's asserts). */
bool sched_holds(const struct tcb *t);
#endif
/* A new state for t. Leaving Running/Restart takes t out of the ready or
 * release queue it may be in (only a runnable thread is ever queued). Inline
 * so that the state is a constant at almost every call: making a thread
 * runnable is the store alone, with no queue code on its path for the WCET
 * analysis (which does not follow a state through memory). */
static ALWAYS_INLINE void thread_set_state(struct tcb *t, enum thread_state s)
{
    t->state = s;
    if (s != THREAD_RUNNING && s != THREAD_RESTART)
        sched_dequeue(t);
}
/* The same for a thread that is in no queue by construction. A blocked
 * thread (on an endpoint, a notification or a reply) is in none. Nor is the
 * current thread while it makes a system call or takes an exception:
 * kernel_exit takes the thread it chooses out of its ready queue, thread
 * wake-ups skip the current thread, and YieldTo, which queues its caller,
 * is an invocation that does not block. Nor is a thread that gets a timeout
 * fault (kernel_exit and do_reply_transfer find it in none). Only the state
 * changes; the check flavour asserts the premise. */
static ALWAYS_INLINE void thread_set_state_unqueued(struct tcb *t, enum thread_state s)
{
#if CONFIG_INVARIANT_CHECKS
    kassert(!sched_holds(t));
#endif
    t->state = s;
}
/* Every kernel entry first: stamp the time, adding what passed since the
 * last entry to the SC that ran (it is charged to its refills at an exit,
 * once), and check that SC's budget. Returns false if it is used up. */
static ALWAYS_INLINE bool sched_stamp_entry(void)
{
    struct sched_node *n = NODE;
    u64 now = machine_time();
    u64 delta = now - n->stamp;
    n->stamp = now;
#if CONFIG_INVARIANT_CHECKS
    n->charged_this_entry = false;
#endif
    struct sched_context *sc = n->cur_sc;
    if (!sc)
        return true;
    sc->consumed += delta;
    n->consumed += delta;
    struct tcb *t = current_thread;
    return !t || t->sc != sc || (refill_ready(sc, now) && refill_sufficient(sc, n->consumed));
}
/* Kernel entry by a system call or exception: with the budget used up the
 * entry ends here (sched_entry_budget_exhausted does not return). */
static ALWAYS_INLINE void sched_entry(void)
{
    if (!sched_stamp_entry())
        sched_entry_budget_exhausted();
}
/* Charge the last `ticks` of this kernel entry to no context (the check
 * flavour's invariant checker). */
void sched_skip_time(u64 ticks);
/* The time stamped at this kernel entry (ticks). */
u64 sched_now(void);
/* seL4_Yield by the current thread t: a round-robin SC is refilled and t goes
 * behind its equals; a sporadic SC gives up the rest of its head refill and t
 * waits in the release queue unless the next refill is ready. Done by
 * kernel_exit, with the entry's charge. */
void sched_yield(struct tcb *t);
/* SchedContext_YieldTo: put target at the head of its queue; if its
 * priority is at least the current thread's, the current thread yields to
 * it (and runs right after it). */
void sched_yield_to(struct tcb *target);
/* Would sched_yield_to(target) by caller run target first? */
bool sched_yield_to_runs_first(const struct tcb *target, const struct tcb *caller);
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
 * becomes disabled (seL4's invokeSetFlags). */
void thread_set_flags(struct tcb *t, word_t flags);
/* Lazy FP switching: t trapped on an FP instruction with its FP state not
 * loaded; load it. Returns false if that was not the reason for the trap
 * (FPU disabled, or already loaded): the trap is a user exception. */
bool fpu_take(struct tcb *t);
/* Run on t's VSpace (the kernel's root if its VSpace cap is not a page
 * table; vspace_activate refuses a table that is not a registered root). */
static ALWAYS_INLINE void thread_activate_vspace(struct tcb *t)
{
    cap_t vs = t->slots[TCB_SLOT_VSPACE].cap;
    if (cap_type(vs) == CAP_PAGE_TABLE)
        vspace_activate(cap_obj(vs), cap_mapped_asid(vs));
    else
        vspace_activate(kptr_to_paddr(kernel_root_pt), 0);
}
/* Boot: prepare the idle thread, which runs when no thread can (thread.c). */
void thread_init_idle(void);
/* Release-queue admission (docs/scheduling.md "Release queue"): may one
 * more SC of this core become sporadic? sched_count_sporadic records sc's
 * change from was to is (sc_waits_for_release before and after); an SC that
 * stops being sporadic (or is deleted: is = false) gives up its slot in the
 * release queue (its thread is not queued then). */
bool sched_admit_sporadic(void);
void sched_count_sporadic(struct sched_context *sc, bool was, bool is);
#if CONFIG_INVARIANT_CHECKS
/* What is wrong with the release queue (heap order, positions, admission
 * count), or NULL: for the invariant checker. */
const char *sched_invariant_violation(void);
/* The thread count against the TCBs in existence (debug list). */
const char *debug_threads_violation(void);
#endif
/* Forget every scheduler reference to t (its TCB is being finalised). */
void thread_forget(struct tcb *t);
/* sc is being reconfigured or deleted: if it is the current SC it stops
 * being charged, and what it used since its last charge is returned for the
 * caller to account (refill_update) or drop (a deleted SC). 0 otherwise. */
u64 sched_stop_charging(struct sched_context *sc);
/* Leave the kernel: pick the thread to run and return to user mode in it. */
NORETURN void kernel_exit(void);
/* Handle whatever interrupts are pending, after stamping the time. Budget
 * expiry is noticed by sched_entry and kernel_exit, which re-arms the timer
 * when the next event's time changed. */
void handle_pending_interrupts(void);
/* Scheduler measurements for KAIROS_SYS_DEBUG_COUNTER (KAIROS_COUNTER_*
 * ids from 16 on, uapi/kairos/debug_calls.h; docs/scheduling.md
 * "Measurements"). */
u64 sched_debug_counter(word_t id);
void debug_register_thread(struct tcb *t);
void debug_unregister_thread(struct tcb *t);
void debug_dump_scheduler(void);
const char *thread_name(const struct tcb *t);
void thread_set_name(struct tcb *t, const char *name, word_t max_len);

#include <arch/memory.h>
/* A TCB object is aligned to its size (2^TCB_BITS, like every object), so
 * the mask changes nothing; it shows the WCET analysis that the TCB a cap
 * names is 2048-aligned, so each of its fields falls into a known cache set
 * or two instead of any (docs/wcet.md "Interrupt latency"; the same fact
 * the annotations give for TCB pointers loaded from fields). */
static inline struct tcb *tcb_from_paddr(paddr_t p)
{
    return (struct tcb *)((word_t)paddr_to_kptr(p) & ~(word_t)MASK(TCB_BITS));
}

#endif
