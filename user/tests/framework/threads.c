/* Shared child-thread helpers for tests (threads.h). */
#include <ktest.h>
#include <threads.h>

static seL4_CPtr slot_cursor;

seL4_CPtr kt_slot(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    if (slot_cursor == 0)
        slot_cursor = bi->empty.start + 3 * (bi->empty.end - bi->empty.start) / 4;
    for (seL4_CPtr s = slot_cursor; s < bi->empty.end; s++) {
        if (seL4_DebugCapIdentify(s) == 0) {
            slot_cursor = s + 1;
            return s;
        }
    }
    KFAIL("out of empty slots");
}

static seL4_CPtr pool_cap;

seL4_CPtr kt_pool(void)
{
    if (pool_cap)
        return pool_cap;
    seL4_BootInfo *bi = kairos_bootinfo();
    seL4_Word best = ~0ul;
    for (seL4_Word i = 0; i < bi->untyped.end - bi->untyped.start; i++) {
        if (bi->untypedList[i].isDevice)
            continue;
        if (best == ~0ul || bi->untypedList[i].sizeBits > bi->untypedList[best].sizeBits)
            best = i;
    }
    KASSERT_MSG(best != ~0ul, "no RAM untyped");
    pool_cap = bi->untyped.start + best;
    return pool_cap;
}

seL4_CPtr kt_make(seL4_Word type, seL4_Word size_bits)
{
    seL4_CPtr s = kt_slot();
    seL4_Error e = seL4_Untyped_Retype(kt_pool(), type, size_bits, KT_ROOT, 0, 0, s, 1);
    KASSERT_MSG(e == seL4_NoError, "retype of type %lu failed: %d", (unsigned long)type, (int)e);
    return s;
}

seL4_CPtr kt_sched_control(void) { return kairos_bootinfo()->schedcontrol.start; }

seL4_CPtr kt_mint(seL4_CPtr src, seL4_CapRights_t rights, seL4_Word badge)
{
    seL4_CPtr s = kt_slot();
    KASSERT_EQ(seL4_CNode_Mint(KT_ROOT, s, 64, KT_ROOT, src, 64, rights, badge), seL4_NoError);
    return s;
}

seL4_CPtr kt_make_sc(void)
{
    seL4_CPtr sc = kt_make(seL4_SchedContextObject, 8);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(kt_sched_control(), sc, 1000, 1000, 0, 0, 0), seL4_NoError);
    return sc;
}

#define STACK_WORDS 2048
static seL4_Word stacks[KT_MAX_THREADS][STACK_WORDS] __attribute__((aligned(16)));
static kt_thread_t threads[KT_MAX_THREADS];
static int n_threads;
static bool buffer_used[KT_NUM_IPC_BUFFERS];

void kt_root_prio(seL4_Word prio) { KASSERT_EQ(seL4_TCB_SetPriority(KT_SELF, KT_SELF, prio), seL4_NoError); }

void kt_yield_n(int n)
{
    for (int i = 0; i < n; i++)
        seL4_Yield();
}

void kt_threads_cleanup(void)
{
    kt_root_prio(255);
    for (int i = 0; i < n_threads; i++) {
        seL4_TCB_Suspend(threads[i].tcb);
        /* Whatever SC the child holds now (its own or a lent one) goes. */
        seL4_SchedContext_Unbind(threads[i].sc);
        /* The TCB too: the kernel keeps at most KAIROS_MAX_THREADS. */
        seL4_CNode_Delete(KT_ROOT, threads[i].tcb, 64);
    }
    n_threads = 0;
    for (int i = 0; i < KT_NUM_IPC_BUFFERS; i++)
        buffer_used[i] = false;
}

bool kt_suite_cleanup(void)
{
    if (!pool_cap)
        return true; /* the suite made nothing from the pool */
    (void)seL4_TCB_SetPriority(KT_SELF, KT_SELF, 255);
    n_threads = 0;
    for (int i = 0; i < KT_NUM_IPC_BUFFERS; i++)
        buffer_used[i] = false;
    if (seL4_CNode_Revoke(KT_ROOT, pool_cap, 64) != seL4_NoError)
        return false;
    /* The pool is childless now, so its next retype zeroes what the suite
     * used (a preemptible reset). Done here, between suites, with one
     * endpoint made and deleted, so that no test of the next suite pays
     * for it in the middle of a timed step; the next reset is one chunk. */
    seL4_CPtr s = kt_slot();
    if (seL4_Untyped_Retype(pool_cap, seL4_EndpointObject, 0, KT_ROOT, 0, 0, s, 1) != seL4_NoError)
        return false;
    return seL4_CNode_Delete(KT_ROOT, s, 64) == seL4_NoError;
}

kt_thread_t *kt_thread_new(seL4_Word prio, bool with_sc, bool ipc_buffer)
{
    KASSERT(n_threads < KT_MAX_THREADS);
    kt_thread_t *t = &threads[n_threads];
    t->index = n_threads++;
    t->tcb = kt_make(seL4_TCBObject, 0);
    t->sc = kt_make_sc();
    t->ipc_buf = 0;
    seL4_Word buf_va = 0;
    seL4_CPtr buf_frame = seL4_CapNull;
    if (ipc_buffer) {
        /* The root's buffer is the first quarter of its page (boot.c puts
         * it at a page boundary); the other three are free. */
        seL4_Word page = (seL4_Word)seL4_GetIPCBuffer() & ~0xffful;
        KASSERT_EQ((seL4_Word)seL4_GetIPCBuffer() & 0xffful, 0);
        int k = 0;
        while (k < KT_NUM_IPC_BUFFERS && buffer_used[k])
            k++;
        KASSERT_MSG(k < KT_NUM_IPC_BUFFERS, "out of child IPC buffers");
        buffer_used[k] = true;
        buf_va = page + 1024ul * (seL4_Word)(k + 1);
        buf_frame = seL4_CapInitThreadIPCBuffer;
        t->ipc_buf = (seL4_Word *)buf_va;
        for (int i = 0; i < 128; i++)
            t->ipc_buf[i] = 0;
    }
    KASSERT_EQ(seL4_TCB_Configure(t->tcb, KT_ROOT, 0, seL4_CapInitThreadVSpace, 0, buf_va, buf_frame),
               seL4_NoError);
    if (with_sc)
        KASSERT_EQ(seL4_SchedContext_Bind(t->sc, t->tcb), seL4_NoError);
    KASSERT_EQ(seL4_TCB_SetPriority(t->tcb, KT_SELF, prio), seL4_NoError);
    return t;
}

void kt_thread_start(kt_thread_t *t, void (*fn)(seL4_Word, seL4_Word, seL4_Word), seL4_Word a0, seL4_Word a1,
                     seL4_Word a2)
{
    seL4_UserContext regs = {0};
    regs.pc = (seL4_Word)fn;
    regs.sp = (seL4_Word)&stacks[t->index][STACK_WORDS];
    regs.gp = kt_read_gp();
    regs.tp = kt_read_tp();
    regs.a0 = a0;
    regs.a1 = a1;
    regs.a2 = a2;
    KASSERT_EQ(seL4_TCB_WriteRegisters(t->tcb, 1, 0, sizeof(regs) / sizeof(seL4_Word), &regs), seL4_NoError);
}

void kt_thread_exit(seL4_CPtr self)
{
    seL4_TCB_Suspend(self);
    for (;;)
        seL4_Yield();
}

kt_regs_t kt_syscall(seL4_Word sys, kt_regs_t in)
{
    register seL4_Word r_a0 __asm__("a0") = in.a0;
    register seL4_Word r_a1 __asm__("a1") = in.a1;
    register seL4_Word r_a2 __asm__("a2") = in.a2;
    register seL4_Word r_a3 __asm__("a3") = in.a3;
    register seL4_Word r_a4 __asm__("a4") = in.a4;
    register seL4_Word r_a5 __asm__("a5") = in.a5;
    register seL4_Word r_a6 __asm__("a6") = in.a6;
    register seL4_Word r_t0 __asm__("t0") = in.t0;
    register seL4_Word r_a7 __asm__("a7") = sys;
    __asm__ volatile("ecall"
                     : "+r"(r_a0), "+r"(r_a1), "+r"(r_a2), "+r"(r_a3), "+r"(r_a4), "+r"(r_a5), "+r"(r_a6),
                       "+r"(r_t0)
                     : "r"(r_a7)
                     : "memory");
    kt_regs_t out = {r_a0, r_a1, r_a2, r_a3, r_a4, r_a5, r_a6, r_t0};
    return out;
}
