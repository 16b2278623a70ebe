/* Thread states and the scheduler: one FIFO ready queue per priority and a
 * two-level bitmap over the priorities, so the highest runnable priority is
 * found with two count-leading-zeros instead of a scan ("Benno" scheduling:
 * the running thread is not in any queue, and only runnable threads are). */
#include <arch/context.h>
#include <arch/csr.h>
#include <arch/machine.h>
#include <arch/vspace.h>
#include <kernel.h>
#include <string.h>
#include <thread.h>

struct tcb *current_thread;

#define PRIO_WORDS (CONFIG_NUM_PRIORITIES / 64)
static struct tcb *ready_head[CONFIG_NUM_PRIORITIES];
static struct tcb *ready_tail[CONFIG_NUM_PRIORITIES];
static word_t ready_bitmap_top;              /* bit i: ready_bitmap[i] non-zero */
static word_t ready_bitmap[PRIO_WORDS];      /* bit p%64 of word p/64: queue p non-empty */

bool thread_is_runnable(const struct tcb *t)
{
    return t->state == THREAD_RUNNING || t->state == THREAD_RESTART;
}

void sched_enqueue(struct tcb *t)
{
    if (t->in_ready_queue)
        return;
    u32 p = t->priority;
    t->ready_next = NULL;
    t->ready_prev = ready_tail[p];
    if (ready_tail[p])
        ready_tail[p]->ready_next = t;
    else
        ready_head[p] = t;
    ready_tail[p] = t;
    ready_bitmap[p / 64] |= BIT(p % 64);
    ready_bitmap_top |= BIT(p / 64);
    t->in_ready_queue = true;
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

void thread_suspend(struct tcb *t)
{
    /* A running thread that is suspended resumes after its ecall later. */
    if (t->state == THREAD_RUNNING)
        t->ctx.fault_ip = t->ctx.pc;
    thread_set_state(t, THREAD_INACTIVE);
}

void thread_resume(struct tcb *t)
{
    if (t->state != THREAD_INACTIVE)
        return;
    t->state = THREAD_RESTART;
    t->ctx.pc = t->ctx.fault_ip;
    if (t != current_thread && t->sc)
        sched_enqueue(t);
}

/* Choose the thread to run: the current one keeps the CPU unless a strictly
 * higher priority is ready (equal priorities rotate only on Yield or budget
 * expiry). */
static struct tcb *choose_thread(void)
{
    struct tcb *cur = current_thread;
    int best = highest_ready_priority();
    /* A thread that yielded is already back in its queue. */
    if (cur && thread_is_runnable(cur) && cur->sc && !cur->in_ready_queue) {
        if (best < 0 || (u32)best <= cur->priority)
            return cur;
        sched_enqueue(cur);
    }
    best = highest_ready_priority();
    if (best < 0)
        return NULL;
    struct tcb *next = ready_head[best];
    sched_dequeue(next);
    return next;
}

static void switch_fpu(struct tcb *from, struct tcb *to)
{
    if (from == to)
        return;
    /* Eager switch: save the outgoing thread's FP state if it may have changed
     * it, load the incoming one's. FS must be on while doing so. */
    csr_set(sstatus, SSTATUS_FS_INITIAL);
    if (from && (from->ctx.sstatus & SSTATUS_FS) == SSTATUS_FS_DIRTY)
        fpu_save(&from->ctx);
    if (to && !(to->flags & TCB_FLAG_FPU_DISABLED))
        fpu_restore(&to->ctx);
    csr_clear(sstatus, SSTATUS_FS);
}

static void activate_vspace(struct tcb *t)
{
    cap_t vs = t->slots[TCB_SLOT_VSPACE].cap;
    if (cap_type(vs) == CAP_PAGE_TABLE)
        vspace_activate(cap_obj(vs), cap_mapped_asid(vs));
    else
        vspace_activate(kptr_to_paddr(kernel_root_pt), 0);
}

static struct tcb *last_fpu_owner;

/* Round-robin time slices: a thread switched in runs for its scheduling
 * context's budget, then goes to the tail of its priority's queue. (Sporadic
 * servers and refills replace this with budgets in the scheduling work.) */
static struct tcb *slice_owner;
static u64 slice_end;

void handle_pending_interrupts(void)
{
    unsigned kinds = machine_handle_pending_interrupts();
    if (!(kinds & MACHINE_IRQ_TIMER) || !slice_owner)
        return;
    if (machine_time() < slice_end) {
        machine_set_timeout(slice_end); /* early: the handler disarmed it, re-arm */
        return;
    }
    if (slice_owner == current_thread && thread_is_runnable(slice_owner))
        sched_enqueue(slice_owner);
    slice_owner = NULL;
}

static void start_slice(struct tcb *t)
{
    if (t == slice_owner)
        return;
    slice_owner = t;
    slice_end = machine_time() + t->sc->budget;
    machine_set_timeout(slice_end);
}

void kernel_exit(void)
{
    struct tcb *next = choose_thread();
    while (!next) {
        /* Idle: nothing to run until an interrupt makes something runnable. */
        current_thread = NULL;
        slice_owner = NULL;
        machine_disable_timeout();
        machine_wait_for_interrupt();
        handle_pending_interrupts();
        next = choose_thread();
    }
    start_slice(next);
    if (next != last_fpu_owner) {
        switch_fpu(last_fpu_owner, next);
        last_fpu_owner = next;
    }
    current_thread = next;
    activate_vspace(next);
    if (next->state == THREAD_RESTART)
        next->state = THREAD_RUNNING;
    word_t s = next->ctx.sstatus;
    s &= ~(SSTATUS_SPP | SSTATUS_SIE | SSTATUS_FS);
    s |= SSTATUS_SPIE;
    s |= (next->flags & TCB_FLAG_FPU_DISABLED) ? SSTATUS_FS_OFF : SSTATUS_FS_CLEAN;
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
void debug_dump_scheduler(void) {}
const char *thread_name(const struct tcb *t) { (void)t; return ""; }
void thread_set_name(struct tcb *t, const char *name, word_t max_len) { (void)t; (void)name; (void)max_len; }
#endif
