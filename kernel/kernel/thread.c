/* Thread states and the scheduler: one FIFO ready queue per priority and a
 * two-level bitmap over the priorities, so the highest runnable priority is
 * found with two count-leading-zeros instead of a scan ("Benno" scheduling:
 * the running thread is not in any queue, and only schedulable threads are).
 *
 * MCS: a thread is schedulable when it is runnable and bound to a configured
 * scheduling context. Time is charged to the running context at every kernel
 * exit; a round-robin context whose slice drops below MIN_BUDGET is refilled
 * and its thread moves to the tail of its priority (schedcontext.h). */
#include <arch/context.h>
#include <arch/csr.h>
#include <arch/machine.h>
#include <arch/vspace.h>
#include <kernel.h>
#include <notification.h>
#include <schedcontext.h>
#include <string.h>
#include <thread.h>
#include <timer.h>

struct tcb *current_thread;

#define PRIO_WORDS (CONFIG_NUM_PRIORITIES / 64)
static struct tcb *ready_head[CONFIG_NUM_PRIORITIES];
static struct tcb *ready_tail[CONFIG_NUM_PRIORITIES];
static word_t ready_bitmap_top;              /* bit i: ready_bitmap[i] non-zero */
static word_t ready_bitmap[PRIO_WORDS];      /* bit p%64 of word p/64: queue p non-empty */

/* The context being charged for the time since `charged_until` (the one the
 * last kernel exit armed the timer for), or NULL while idle. */
static struct sched_context *running_sc;
static u64 charged_until;

/* Eager FP switching: the FP registers hold fpu_owner's state; fpu_loaded
 * says whether it was loaded with the FPU enabled (a thread that re-enables
 * its own FPU keeps FS off until it is next switched in, as seL4 does). */
static struct tcb *fpu_owner;
static bool fpu_loaded;

bool thread_is_runnable(const struct tcb *t)
{
    return t->state == THREAD_RUNNING || t->state == THREAD_RESTART;
}

bool thread_is_schedulable(const struct tcb *t)
{
    return thread_is_runnable(t) && t->sc != NULL && sc_configured(t->sc);
}

bool thread_is_blocked(const struct tcb *t)
{
    switch (t->state) {
    case THREAD_BLOCKED_ON_RECEIVE:
    case THREAD_BLOCKED_ON_SEND:
    case THREAD_BLOCKED_ON_REPLY:
    case THREAD_BLOCKED_ON_NOTIFICATION:
        return true;
    default:
        return false;
    }
}

static void queue_insert(struct tcb *t, bool at_head)
{
    u32 p = t->priority;
    if (at_head) {
        t->ready_prev = NULL;
        t->ready_next = ready_head[p];
        if (ready_head[p])
            ready_head[p]->ready_prev = t;
        else
            ready_tail[p] = t;
        ready_head[p] = t;
    } else {
        t->ready_next = NULL;
        t->ready_prev = ready_tail[p];
        if (ready_tail[p])
            ready_tail[p]->ready_next = t;
        else
            ready_head[p] = t;
        ready_tail[p] = t;
    }
    ready_bitmap[p / 64] |= BIT(p % 64);
    ready_bitmap_top |= BIT(p / 64);
    t->in_ready_queue = true;
}

static u64 min_budget_ticks(void) { return us_to_ticks(MIN_BUDGET_US); }

static struct refill *sc_head(struct sched_context *sc) { return &sc_refills(sc)[sc->refill_head]; }

void sched_commit_time(void)
{
    u64 now = machine_time();
    if (running_sc) {
        u64 used = now - charged_until;
        struct refill *h = sc_head(running_sc);
        running_sc->consumed += used;
        h->amount = used >= h->amount ? 0 : h->amount - used;
    }
    charged_until = now;
}

void sched_forget_sc(struct sched_context *sc)
{
    if (running_sc == sc) {
        sched_commit_time();
        running_sc = NULL;
    }
}

/* End of a round-robin time slice: the full budget is available again.
 * (Non-round-robin contexts are treated the same way until the release
 * queue exists: they get their budget back at once instead of one period
 * later. The scheduling issue replaces this.) */
static void refill_slice(struct sched_context *sc)
{
    struct refill *h = sc_head(sc);
    h->amount = sc->budget;
    h->release_time = machine_time();
}

void sched_enqueue(struct tcb *t)
{
    if (t->in_ready_queue || !thread_is_schedulable(t))
        return;
    if (t == current_thread) {
        /* Yield: charge what was used so far, then start a fresh slice. */
        sched_commit_time();
        refill_slice(t->sc);
    }
    queue_insert(t, false);
}

void sched_yield_to(struct tcb *target)
{
    struct tcb *cur = current_thread;
    if (target == cur || !thread_is_schedulable(target))
        return;
    sched_dequeue(target);
    /* At or above the caller's priority the target runs first and the
     * caller right after it (both at the heads of their queues); below it,
     * the target is merely first among its equals. */
    if (cur && target->priority >= cur->priority && !cur->in_ready_queue && thread_is_schedulable(cur))
        queue_insert(cur, true);
    queue_insert(target, true);
}

void sched_dequeue(struct tcb *t)
{
    if (!t->in_ready_queue)
        return;
    u32 p = t->priority;
    if (t->ready_prev)
        t->ready_prev->ready_next = t->ready_next;
    else
        ready_head[p] = t->ready_next;
    if (t->ready_next)
        t->ready_next->ready_prev = t->ready_prev;
    else
        ready_tail[p] = t->ready_prev;
    if (!ready_head[p]) {
        ready_bitmap[p / 64] &= ~BIT(p % 64);
        if (ready_bitmap[p / 64] == 0)
            ready_bitmap_top &= ~BIT(p / 64);
    }
    t->ready_next = t->ready_prev = NULL;
    t->in_ready_queue = false;
}

/* Index of the most significant set bit of a non-zero word, by binary search:
 * six steps, no loop, no library call (the base ISA has no clz instruction). */
static int msb_index(word_t w)
{
    int n = 0;
    if (w >> 32) { n += 32; w >>= 32; }
    if (w >> 16) { n += 16; w >>= 16; }
    if (w >> 8) { n += 8; w >>= 8; }
    if (w >> 4) { n += 4; w >>= 4; }
    if (w >> 2) { n += 2; w >>= 2; }
    if (w >> 1) { n += 1; }
    return n;
}

/* Highest priority with a non-empty queue, or -1. */
static int highest_ready_priority(void)
{
    if (ready_bitmap_top == 0)
        return -1;
    int word = msb_index(ready_bitmap_top);
    int bit = msb_index(ready_bitmap[word]);
    return word * 64 + bit;
}

void thread_set_state(struct tcb *t, enum thread_state s)
{
    t->state = s;
    if (!thread_is_runnable(t))
        sched_dequeue(t);
}

void thread_schedule(struct tcb *t)
{
    if (t != current_thread && !t->in_ready_queue && thread_is_schedulable(t))
        queue_insert(t, false);
}

/* Take t out of whatever it is blocked on (seL4's cancelIPC); t is left
 * inactive. Notifications hook in here; endpoint and reply queues arrive
 * with the IPC work, which adds its cases. */
void thread_cancel_blocking(struct tcb *t)
{
    if (t->state == THREAD_BLOCKED_ON_NOTIFICATION)
        notification_cancel_signal(t);
}

void thread_suspend(struct tcb *t)
{
    thread_cancel_blocking(t);
    /* A running thread that is suspended resumes after its ecall (or at the
     * instruction it was interrupted at) later: FaultIP := NextIP. */
    if (t->state == THREAD_RUNNING)
        t->ctx.fault_ip = t->ctx.pc;
    thread_set_state(t, THREAD_INACTIVE);
}

void thread_resume(struct tcb *t)
{
    if (t->state != THREAD_INACTIVE && !thread_is_blocked(t))
        return;
    thread_cancel_blocking(t);
    /* Restart: on its next exit to user mode it continues at FaultIP, which
     * re-executes an interrupted system call (kernel_exit sets NextIP). */
    t->state = THREAD_RESTART;
    thread_schedule(t);
}

void thread_set_priority(struct tcb *t, u32 prio)
{
    if (t->in_ready_queue) {
        sched_dequeue(t);
        t->priority = prio;
        queue_insert(t, false);
    } else {
        t->priority = prio;
        /* Wait queues are ordered by priority (seL4's reorderNTFN). */
        if (t->state == THREAD_BLOCKED_ON_NOTIFICATION)
            notification_reorder(t);
    }
}

void thread_set_flags(struct tcb *t, word_t flags)
{
    if ((flags & TCB_FLAG_FPU_DISABLED) && t == fpu_owner && fpu_loaded) {
        /* The FP registers hold t's live state: keep it in the TCB so that
         * re-enabling finds it intact. The kernel never uses FP itself. */
        csr_set(sstatus, SSTATUS_FS_INITIAL);
        fpu_save(&t->ctx);
        csr_clear(sstatus, SSTATUS_FS);
        fpu_loaded = false;
    }
    t->flags = flags;
}

void thread_forget(struct tcb *t)
{
    sched_dequeue(t);
    if (fpu_owner == t) {
        fpu_owner = NULL; /* its state dies with it; nothing to save */
        fpu_loaded = false;
    }
    if (current_thread == t)
        current_thread = NULL;
}

/* Choose the thread to run: the current one keeps the CPU unless a strictly
 * higher priority is ready (equal priorities rotate only on Yield or budget
 * expiry). A preempted thread goes to the head of its queue, keeping the
 * rest of its slice. */
static struct tcb *choose_thread(void)
{
    struct tcb *cur = current_thread;
    int best = highest_ready_priority();
    if (cur && !cur->in_ready_queue && thread_is_schedulable(cur)) {
        if (best < 0 || (u32)best <= cur->priority)
            return cur;
        queue_insert(cur, true);
    }
    best = highest_ready_priority();
    if (best < 0)
        return NULL;
    struct tcb *next = ready_head[best];
    sched_dequeue(next);
    return next;
}

/* Load next's FP state if it is not already in the registers, saving the
 * previous owner's if it changed it. Returns the sstatus.FS value next runs
 * with. */
static word_t switch_fpu(struct tcb *next)
{
    bool disabled = (next->flags & TCB_FLAG_FPU_DISABLED) != 0;
    if (next == fpu_owner) {
        if (disabled || !fpu_loaded)
            return SSTATUS_FS_OFF;
        /* Keep Dirty across kernel entries so the change is saved on the
         * next switch. */
        return (next->ctx.sstatus & SSTATUS_FS) == SSTATUS_FS_DIRTY ? SSTATUS_FS_DIRTY : SSTATUS_FS_CLEAN;
    }
    csr_set(sstatus, SSTATUS_FS_INITIAL); /* FS must be on to move FP state */
    if (fpu_owner && fpu_loaded && (fpu_owner->ctx.sstatus & SSTATUS_FS) == SSTATUS_FS_DIRTY)
        fpu_save(&fpu_owner->ctx);
    if (!disabled)
        fpu_restore(&next->ctx); /* a new thread's zeroed TCB gives f0-f31 = 0, fcsr = 0 */
    csr_clear(sstatus, SSTATUS_FS);
    fpu_owner = next;
    fpu_loaded = !disabled;
    return disabled ? SSTATUS_FS_OFF : SSTATUS_FS_CLEAN;
}

static void activate_vspace(struct tcb *t)
{
    cap_t vs = t->slots[TCB_SLOT_VSPACE].cap;
    if (cap_type(vs) == CAP_PAGE_TABLE)
        vspace_activate(cap_obj(vs), cap_mapped_asid(vs));
    else
        vspace_activate(kptr_to_paddr(kernel_root_pt), 0);
}

void handle_pending_interrupts(void)
{
    (void)machine_handle_pending_interrupts();
}

void kernel_exit(void)
{
    /* Charge the time since the last exit; a slice that has run out is
     * refilled and its thread goes behind the others of its priority. */
    sched_commit_time();
    if (running_sc && sc_head(running_sc)->amount < min_budget_ticks()) {
        struct tcb *t = running_sc->tcb;
        refill_slice(running_sc);
        if (t && t == current_thread && !t->in_ready_queue && thread_is_schedulable(t))
            queue_insert(t, false);
    }
    struct tcb *next = choose_thread();
    while (!next) {
        /* Idle: nothing to run until an interrupt makes something runnable.
         * Bounded per interrupt; idle time is charged to no context. */
        current_thread = NULL;
        running_sc = NULL;
        machine_disable_timeout();
        machine_wait_for_interrupt();
        handle_pending_interrupts();
        next = choose_thread();
    }
    running_sc = next->sc;
    charged_until = machine_time();
    machine_set_timeout(charged_until + sc_head(running_sc)->amount);

    word_t fs = switch_fpu(next);
    current_thread = next;
    activate_vspace(next);
    if (next->state == THREAD_RESTART) {
        /* seL4's activateThread: a restarted thread continues at FaultIP. */
        next->ctx.pc = next->ctx.fault_ip;
        next->state = THREAD_RUNNING;
    }
    word_t s = next->ctx.sstatus;
    s &= ~(SSTATUS_SPP | SSTATUS_SIE | SSTATUS_FS);
    s |= SSTATUS_SPIE | fs;
    next->ctx.sstatus = s;
    restore_user_context(&next->ctx);
}

#if CONFIG_DEBUG_BUILD
static struct tcb *debug_threads;

void debug_register_thread(struct tcb *t)
{
    t->debug_prev = NULL;
    t->debug_next = debug_threads;
    if (debug_threads)
        debug_threads->debug_prev = t;
    debug_threads = t;
}

void debug_unregister_thread(struct tcb *t)
{
    if (t->debug_prev)
        t->debug_prev->debug_next = t->debug_next;
    else if (debug_threads == t)
        debug_threads = t->debug_next;
    if (t->debug_next)
        t->debug_next->debug_prev = t->debug_prev;
    t->debug_next = t->debug_prev = NULL;
}

static const char *state_name(enum thread_state s)
{
    switch (s) {
    case THREAD_INACTIVE: return "inactive";
    case THREAD_RUNNING: return "running";
    case THREAD_RESTART: return "restart";
    case THREAD_BLOCKED_ON_RECEIVE: return "blocked on recv";
    case THREAD_BLOCKED_ON_SEND: return "blocked on send";
    case THREAD_BLOCKED_ON_REPLY: return "blocked on reply";
    case THREAD_BLOCKED_ON_NOTIFICATION: return "blocked on ntfn";
    case THREAD_IDLE: return "idle";
    }
    return "?";
}

void debug_dump_scheduler(void)
{
    kprintf("Dumping all tcbs!\nName                                    State           IP                  Prio\n");
    kprintf("-------------------------------------------------------------------------------\n");
    /* Bounded by the number of TCBs in existence, which is bounded by memory. */
    for (struct tcb *t = debug_threads; t; t = t->debug_next)
        kprintf("%s  %s  %p  %u%s\n", t->name, state_name(t->state), (void *)t->ctx.pc, t->priority,
                t == current_thread ? "  (current)" : "");
}

const char *thread_name(const struct tcb *t) { return t->name[0] ? t->name : "(unnamed)"; }

void thread_set_name(struct tcb *t, const char *name, word_t max_len)
{
    word_t i = 0;
    for (; i + 1 < sizeof(t->name) && i < max_len && name[i]; i++)
        t->name[i] = name[i];
    t->name[i] = '\0';
}
#else
void debug_register_thread(struct tcb *t) { (void)t; }
void debug_unregister_thread(struct tcb *t) { (void)t; }
void debug_dump_scheduler(void) {}
const char *thread_name(const struct tcb *t) { (void)t; return ""; }
void thread_set_name(struct tcb *t, const char *name, word_t max_len) { (void)t; (void)name; (void)max_len; }
#endif
