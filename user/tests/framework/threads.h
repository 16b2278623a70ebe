/*
 * Shared test helpers for tests that run child threads (test_ipc.c,
 * test_fault.c, test_notification.c, test_tcb.c, test_sched.c).
 *
 * Children share the root's image, CSpace and VSpace, run at a chosen
 * priority on an optional round-robin SC of 1 ms, and optionally have an
 * IPC buffer of their own: one of the three unused 1 KiB quarters of the
 * root's IPC-buffer page. The library's IPC-buffer pointer is the root's
 * (a global), so children must not use libsel4's message functions: they
 * use kt_syscall and their kt_thread_t's ipc_buf.
 *
 * Objects come from the largest RAM untyped; slots are empty root-CNode
 * slots from three quarters into the BootInfo's empty region.
 */
#ifndef KTEST_THREADS_H
#define KTEST_THREADS_H

#include <stdbool.h>
#include <sel4/sel4.h>

#define KT_ROOT seL4_CapInitThreadCNode
#define KT_SELF seL4_CapInitThreadTCB
#define KT_MAX_THREADS 6
#define KT_NUM_IPC_BUFFERS 3

/* The root's gp and tp: a child that shares the root's image needs both. */
static inline seL4_Word kt_read_gp(void)
{
    seL4_Word v;
    __asm__ volatile("mv %0, gp" : "=r"(v));
    return v;
}
static inline seL4_Word kt_read_tp(void)
{
    seL4_Word v;
    __asm__ volatile("mv %0, tp" : "=r"(v));
    return v;
}

seL4_CPtr kt_slot(void);
/* The largest RAM untyped, which every test file retypes from: it keeps
 * children, so retypes from it never reset it again. */
seL4_CPtr kt_pool(void);
seL4_CPtr kt_make(seL4_Word type, seL4_Word size_bits);
seL4_CPtr kt_sched_control(void);
/* A copy of src with rights (grant_reply, grant, read, write) and a badge. */
seL4_CPtr kt_mint(seL4_CPtr src, seL4_CapRights_t rights, seL4_Word badge);
/* A new round-robin SC of 1 ms, configured. */
seL4_CPtr kt_make_sc(void);

typedef struct kt_thread {
    seL4_CPtr tcb;
    seL4_CPtr sc;       /* its own SC, even if not bound (passive threads) */
    seL4_Word *ipc_buf; /* the seL4_IPCBuffer words, or NULL */
    int index;
} kt_thread_t;

/* A child at prio; with_sc: bound to its SC; ipc_buffer: give it one. */
kt_thread_t *kt_thread_new(seL4_Word prio, bool with_sc, bool ipc_buffer);
/* Start fn(a0, a1, a2) on the child's stack (it runs when it may). */
void kt_thread_start(kt_thread_t *t, void (*fn)(seL4_Word, seL4_Word, seL4_Word), seL4_Word a0, seL4_Word a1,
                     seL4_Word a2);
/* Suspend every child, unbind their SCs, root back at priority 255. Call
 * at the start and end of every test (a failed test skips its end). */
void kt_threads_cleanup(void);
/* Between two suites (areas; ktest.c): the root back at priority 255 and
 * every object made from the pool deleted, the children's TCBs with them.
 * The kernel keeps at most KAIROS_MAX_THREADS TCBs at once
 * (docs/object-model.md "Thread limit"), so threads a suite leaves behind
 * must not add up over the run. False if the revoke failed. Outside a test:
 * asserts nothing. */
bool kt_suite_cleanup(void);
__attribute__((noreturn)) void kt_thread_exit(seL4_CPtr self);
void kt_root_prio(seL4_Word prio);
void kt_yield_n(int n);

/* A raw system call: a0-a6 and t0 in, the same registers out. */
typedef struct {
    seL4_Word a0, a1, a2, a3, a4, a5, a6, t0;
} kt_regs_t;
kt_regs_t kt_syscall(seL4_Word sys, kt_regs_t in);

#endif
