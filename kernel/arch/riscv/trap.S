/* Kernel entry and exit. While a thread runs in user mode, sscratch holds the
 * address of its struct user_context; every trap saves all registers there,
 * switches to the kernel stack and dispatches on scause to one of three C
 * entry points, none of which returns: each leaves through
 * restore_user_context. The kernel itself runs with interrupts masked and never
 * traps (it polls for interrupts at its preemption points), so stvec points
 * here only for traps from user mode and for interrupts of the idle thread
 * (machine_idle_loop below, in supervisor mode), whose context is saved the
 * same way. */
#include <arch/context.h>
#include <config.h>

#define SAVE(n) sd x##n, CTX_X(n)(t6)
#define LOAD(n) ld x##n, CTX_X(n)(t6)

    .section .text
    .balign 4
    .globl trap_entry
    .type trap_entry, @function /* named so beside __itim_start, which kernel.ld puts at the same address */
trap_entry:
    csrrw t6, sscratch, t6
    SAVE(1); SAVE(2); SAVE(3); SAVE(4); SAVE(5); SAVE(6); SAVE(7); SAVE(8)
    SAVE(9); SAVE(10); SAVE(11); SAVE(12); SAVE(13); SAVE(14); SAVE(15); SAVE(16)
    SAVE(17); SAVE(18); SAVE(19); SAVE(20); SAVE(21); SAVE(22); SAVE(23); SAVE(24)
    SAVE(25); SAVE(26); SAVE(27); SAVE(28); SAVE(29); SAVE(30)
    csrr t0, sscratch
    sd t0, CTX_X(31)(t6)
    csrr t0, sepc
    sd t0, CTX_FAULT_IP(t6)
    sd t0, CTX_PC(t6)
    csrr t1, sstatus
    sd t1, CTX_SSTATUS(t6)
    la sp, kernel_stack_top

    csrr t0, scause
    bltz t0, 1f
    li t1, 8                    /* environment call from U-mode */
    bne t0, t1, 2f
#if CONFIG_FASTPATH
    /* Local targets: a conditional branch straight to the fastpath would be
     * out of range and rewritten by the assembler into a branch around a
     * jump, a shape the timing analyser's trace check does not expect. */
    li t1, -1                   /* seL4_SysCall */
    beq a7, t1, 3f
    li t1, -2                   /* seL4_SysReplyRecv */
    beq a7, t1, 4f
#endif
5:  mv a0, a7
    j handle_syscall
1:  mv a0, t0
    j handle_interrupt
2:  mv a0, t0
    csrr a1, stval
    j handle_exception
#if CONFIG_FASTPATH
    /* Only a message of at most four words and no caps (msginfo bits 0-8
     * at most 4) can take the fastpath. Tested here, before any C frame is
     * built, so that an object invocation by Call (caps or more words, as
     * Page_Map) reaches the slow path for three more instructions;
     * fastpath.c tests it again. */
3:  andi t2, a1, 0x1ff
    li t1, 4
    bgtu t2, t1, 5b
    j fastpath_call
4:  andi t2, a1, 0x1ff
    li t1, 4
    bgtu t2, t1, 5b
    j fastpath_reply_recv
#endif

/* The idle thread (machine_init_idle_context): wait for interrupts in
 * supervisor mode with interrupts enabled. An interrupt traps to
 * trap_entry, which saves this context (sscratch points at it) like a
 * user thread's; the kernel never returns into the middle of a wait, it
 * starts the loop again. */
    .globl machine_idle_loop
machine_idle_loop:
1:  wfi
    j 1b

    .globl restore_user_context
restore_user_context:
#ifdef KAIROS_FLAVOUR_CHECK
    mv s1, a0                   /* callee-saved: survives the call */
    call kernel_exit_stamp
    mv a0, s1
#endif
    csrw sscratch, a0
    ld t0, CTX_PC(a0)
    csrw sepc, t0
    ld t0, CTX_SSTATUS(a0)
    csrw sstatus, t0
    mv t6, a0
    LOAD(1); LOAD(2); LOAD(3); LOAD(4); LOAD(5); LOAD(6); LOAD(7); LOAD(8)
    LOAD(9); LOAD(10); LOAD(11); LOAD(12); LOAD(13); LOAD(14); LOAD(15); LOAD(16)
    LOAD(17); LOAD(18); LOAD(19); LOAD(20); LOAD(21); LOAD(22); LOAD(23); LOAD(24)
    LOAD(25); LOAD(26); LOAD(27); LOAD(28); LOAD(29); LOAD(30)
    LOAD(31)
    sret

/* FPU state moves only between thread contexts, never used by the kernel
 * itself (the kernel is built without floating point). sstatus.FS must be
 * non-off when these run; the caller arranges that. */
#define FSAVE(n) fsd f##n, (CTX_FP + (n) * 8)(a0)
#define FLOAD(n) fld f##n, (CTX_FP + (n) * 8)(a0)
    .globl fpu_save
fpu_save:
    FSAVE(0); FSAVE(1); FSAVE(2); FSAVE(3); FSAVE(4); FSAVE(5); FSAVE(6); FSAVE(7)
    FSAVE(8); FSAVE(9); FSAVE(10); FSAVE(11); FSAVE(12); FSAVE(13); FSAVE(14); FSAVE(15)
    FSAVE(16); FSAVE(17); FSAVE(18); FSAVE(19); FSAVE(20); FSAVE(21); FSAVE(22); FSAVE(23)
    FSAVE(24); FSAVE(25); FSAVE(26); FSAVE(27); FSAVE(28); FSAVE(29); FSAVE(30); FSAVE(31)
    frcsr t0
    sd t0, CTX_FCSR(a0)
    ret

    .globl fpu_restore
fpu_restore:
    FLOAD(0); FLOAD(1); FLOAD(2); FLOAD(3); FLOAD(4); FLOAD(5); FLOAD(6); FLOAD(7)
    FLOAD(8); FLOAD(9); FLOAD(10); FLOAD(11); FLOAD(12); FLOAD(13); FLOAD(14); FLOAD(15)
    FLOAD(16); FLOAD(17); FLOAD(18); FLOAD(19); FLOAD(20); FLOAD(21); FLOAD(22); FLOAD(23)
    FLOAD(24); FLOAD(25); FLOAD(26); FLOAD(27); FLOAD(28); FLOAD(29); FLOAD(30); FLOAD(31)
    ld t0, CTX_FCSR(a0)
    fscsr t0
    ret
