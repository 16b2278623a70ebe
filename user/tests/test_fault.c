/*
 * Faults delivered as IPC (issue 5 item 6): capability fault (send and
 * receive phase), unknown system call, user exception and VM fault (load
 * and store) go to the fault endpoint installed in the TCB with seL4's
 * labels, lengths and message words; a reply with label 0 restarts or
 * resumes the thread with the registers sent, another label leaves an
 * unknown-syscall or exception thread inactive; a handler receiving with
 * Wait leaves the faulting thread inactive; a passive handler runs on the
 * faulting thread's SC and gives it back. (seL4 MCS; docs/ipc.md "Faults").
 *
 * The root is the handler (it has an IPC buffer, so it sees whole
 * messages) unless a test says otherwise; children from framework/threads.h.
 */
#include <ktest.h>
#include <stdio.h>
#include <threads.h>

#define ROOT KT_ROOT
#define SELF KT_SELF
#define FAULT_BADGE 0xf17

static volatile seL4_Word flag;
static volatile seL4_Word result;

static seL4_Word info(seL4_Word label, seL4_Word len) { return (label << 12) | len; }

/* A child at prio 150 whose faults go to a badged copy of ep. */
static kt_thread_t *faulting_child(seL4_CPtr ep, bool ipc_buffer)
{
    kt_thread_t *t = kt_thread_new(150, true, ipc_buffer);
    seL4_CPtr h = kt_mint(ep, seL4_CapRights_new(0, 1, 0, 1), FAULT_BADGE);
    KASSERT_EQ(seL4_TCB_SetSpace(t->tcb, h, ROOT, 0, seL4_CapInitThreadVSpace, 0), seL4_NoError);
    return t;
}

static void reset(void)
{
    kt_threads_cleanup();
    flag = 0;
    result = 0;
    kt_root_prio(100);
}

static seL4_UserContext read_regs(seL4_CPtr tcb)
{
    seL4_UserContext r;
    KASSERT_EQ(seL4_TCB_ReadRegisters(tcb, 0, 0, sizeof(r) / sizeof(seL4_Word), &r), seL4_NoError);
    return r;
}

static void write_regs(seL4_CPtr tcb, seL4_UserContext *r)
{
    KASSERT_EQ(seL4_TCB_WriteRegisters(tcb, 0, 0, sizeof(*r) / sizeof(seL4_Word), r), seL4_NoError);
}

/* ---- unknown system call ------------------------------------------------ */

static void child_unknown_syscall(seL4_Word self, seL4_Word unused1, seL4_Word unused2)
{
    (void)unused1;
    (void)unused2;
    kt_regs_t in = {0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0};
    kt_regs_t r = kt_syscall((seL4_Word)-50, in);
    result = r.a0;
    flag = 1;
    kt_thread_exit(self);
}

KTEST(fault, unknown_syscall_goes_to_the_handler_and_label_0_resumes)
{
    reset();
    seL4_CPtr ep = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr reply = kt_make(seL4_ReplyObject, 0);
    kt_thread_t *c = faulting_child(ep, false);
    kt_thread_start(c, child_unknown_syscall, c->tcb, 0, 0);
    seL4_Word badge = 0;
    seL4_MessageInfo_t m = seL4_Recv(ep, &badge, reply);
    KASSERT_EQ(badge, FAULT_BADGE);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_UnknownSyscall);
    KASSERT_EQ(seL4_MessageInfo_get_length(m), 11);
    seL4_Word mr[11];
    for (int i = 0; i < 11; i++)
        mr[i] = seL4_GetMR(i);
    /* MR4-MR9 = a1-a6 */
    for (int i = 4; i < 10; i++)
        KASSERT_EQ(mr[i], 0xa1 + (seL4_Word)(i - 4));
    KASSERT_EQ(mr[3], 0xa0);
    KASSERT_EQ(mr[10], (seL4_Word)-50);
    seL4_UserContext regs = read_regs(c->tcb); /* (its reply overwrites the MRs) */
    KASSERT_EQ(mr[0], regs.pc);                /* the ecall */
    KASSERT_EQ(mr[1], regs.sp);
    KASSERT_EQ(mr[2], regs.ra);
    /* Resume after the ecall with a0 = 0x77, the rest as they were. */
    for (int i = 0; i < 10; i++)
        seL4_SetMR(i, mr[i]);
    seL4_SetMR(0, mr[0] + 4);
    seL4_SetMR(3, 0x77);
    seL4_Send(reply, seL4_MessageInfo_new(0, 0, 0, 10));
    KASSERT_EQ(flag, 1);
    KASSERT_EQ(result, 0x77);
    kt_threads_cleanup();
}

KTEST(fault, unknown_syscall_reply_with_nonzero_label_leaves_the_thread_inactive)
{
    reset();
    seL4_CPtr ep = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr reply = kt_make(seL4_ReplyObject, 0);
    kt_thread_t *c = faulting_child(ep, false);
    kt_thread_start(c, child_unknown_syscall, c->tcb, 0, 0);
    seL4_MessageInfo_t m = seL4_Recv(ep, NULL, reply);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_UnknownSyscall);
    seL4_Word ip = seL4_GetMR(0);
    seL4_SetMR(0, ip + 4);
    seL4_Send(reply, seL4_MessageInfo_new(1, 0, 0, 1));
    kt_yield_n(3);
    KASSERT_EQ(flag, 0);
    /* The registers were written all the same: FaultIP moved on. */
    KASSERT_EQ(read_regs(c->tcb).pc, ip + 4);
    kt_threads_cleanup();
}

KTEST(fault, handler_receiving_with_wait_leaves_the_thread_inactive)
{
    reset();
    seL4_CPtr ep = kt_make(seL4_EndpointObject, 0);
    kt_thread_t *c = faulting_child(ep, false);
    kt_thread_start(c, child_unknown_syscall, c->tcb, 0, 0);
    seL4_MessageInfo_t m = seL4_Wait(ep, NULL);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_UnknownSyscall);
    kt_yield_n(3);
    KASSERT_EQ(flag, 0);
    kt_threads_cleanup();
}

/* ---- user exception ------------------------------------------------------- */

static void child_illegal(seL4_Word self, seL4_Word unused1, seL4_Word unused2)
{
    (void)unused1;
    (void)unused2;
    __asm__ volatile(".word 0"); /* the all-zero instruction is illegal */
    flag = 1;
    kt_thread_exit(self);
}

KTEST(fault, user_exception_goes_to_the_handler_and_resumes_where_told)
{
    reset();
    seL4_CPtr ep = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr reply = kt_make(seL4_ReplyObject, 0);
    kt_thread_t *c = faulting_child(ep, false);
    kt_thread_start(c, child_illegal, c->tcb, 0, 0);
    seL4_Word badge = 0;
    seL4_MessageInfo_t m = seL4_Recv(ep, &badge, reply);
    KASSERT_EQ(badge, FAULT_BADGE);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_UserException);
    KASSERT_EQ(seL4_MessageInfo_get_length(m), 4);
    seL4_Word ip = seL4_GetMR(0);
    seL4_Word sp = seL4_GetMR(1);
    KASSERT_EQ(seL4_GetMR(2), 2); /* scause: illegal instruction */
    KASSERT_EQ(seL4_GetMR(3), 0);
    KASSERT_EQ(*(volatile unsigned int *)ip, 0);
    KASSERT_EQ(sp, read_regs(c->tcb).sp);
    seL4_SetMR(0, ip + 4);
    seL4_SetMR(1, sp);
    seL4_Send(reply, seL4_MessageInfo_new(0, 0, 0, 2));
    KASSERT_EQ(flag, 1);
    kt_threads_cleanup();
}

/* ---- VM faults -------------------------------------------------------------- */

static volatile seL4_Word good_word = 0x600d;

static void child_bad_load_store(seL4_Word self, seL4_Word bad, seL4_Word unused)
{
    (void)unused;
    register seL4_Word addr __asm__("t1") = bad;
    register seL4_Word val __asm__("t2");
    __asm__ volatile("ld t2, 0(t1)" : "=r"(val) : "r"(addr) : "memory");
    result = val;
    /* A different register, so that the handler's fix of t1 above does
     * not carry over (the compiler may keep `bad` in t1). */
    register seL4_Word addr2 __asm__("t3") = bad;
    __asm__ volatile("sd zero, 0(t3)" : : "r"(addr2) : "memory");
    flag = 1;
    kt_thread_exit(self);
}

KTEST(fault, vm_faults_go_to_the_handler_and_restart_the_instruction)
{
    reset();
    seL4_CPtr ep = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr reply = kt_make(seL4_ReplyObject, 0);
    kt_thread_t *c = faulting_child(ep, false);
    seL4_Word bad = 0x10;
    kt_thread_start(c, child_bad_load_store, c->tcb, bad, 0);
    /* The load. */
    seL4_MessageInfo_t m = seL4_Recv(ep, NULL, reply);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_VMFault);
    KASSERT_EQ(seL4_MessageInfo_get_length(m), 4);
    KASSERT_EQ(seL4_GetMR(1), bad);
    KASSERT_EQ(seL4_GetMR(2), 0); /* not an instruction fetch */
    KASSERT_EQ(seL4_GetMR(3), 5); /* load */
    seL4_Word ip = seL4_GetMR(0);
    seL4_UserContext regs = read_regs(c->tcb);
    KASSERT_EQ(ip, regs.pc);
    /* Point t1 at a good word; the restarted load reads it. */
    regs.t1 = (seL4_Word)&good_word;
    write_regs(c->tcb, &regs);
    seL4_Send(reply, seL4_MessageInfo_new(0, 0, 0, 0));
    /* The store (t1 = bad again). */
    m = seL4_Recv(ep, NULL, reply);
    KASSERT_EQ(result, 0x600d);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_VMFault);
    KASSERT_EQ(seL4_GetMR(1), bad);
    KASSERT_EQ(seL4_GetMR(3), 7); /* store */
    regs = read_regs(c->tcb);
    regs.t3 = (seL4_Word)&result;
    write_regs(c->tcb, &regs);
    /* Any label restarts a VM fault. */
    seL4_Send(reply, seL4_MessageInfo_new(9, 0, 0, 0));
    KASSERT_EQ(flag, 1);
    KASSERT_EQ(result, 0);
    kt_threads_cleanup();
}

/* ---- capability faults -------------------------------------------------------- */

static void child_call_bad_cptr(seL4_Word self, seL4_Word cptr, seL4_Word unused)
{
    (void)unused;
    kt_regs_t in = {cptr, 0, 0, 0, 0, 0, 0, 0};
    kt_regs_t r = kt_syscall(seL4_SysCall, in);
    result = r.a1 + 1; /* the empty reply of a Call on a notification: info 0 */
    flag = 1;
    kt_thread_exit(self);
}

#define BAD_CPTR (1ul << 63) /* fails the root CNode's guard */

KTEST(fault, cap_fault_in_the_send_phase_restarts_the_call)
{
    reset();
    seL4_CPtr ep = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr reply = kt_make(seL4_ReplyObject, 0);
    seL4_CPtr ntfn = kt_make(seL4_NotificationObject, 0);
    kt_thread_t *c = faulting_child(ep, false);
    kt_thread_start(c, child_call_bad_cptr, c->tcb, BAD_CPTR, 0);
    seL4_MessageInfo_t m = seL4_Recv(ep, NULL, reply);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_CapFault);
    KASSERT_EQ(seL4_MessageInfo_get_length(m), 4);
    seL4_Word ip = seL4_GetMR(0);
    KASSERT_EQ(seL4_GetMR(1), BAD_CPTR);
    KASSERT_EQ(seL4_GetMR(2), 0);
    KASSERT_EQ(seL4_GetMR(3), 1); /* MCS: always InvalidRoot + 1 */
    seL4_UserContext regs = read_regs(c->tcb);
    KASSERT_EQ(ip, regs.pc);
    regs.a0 = ntfn;
    write_regs(c->tcb, &regs);
    seL4_Send(reply, seL4_MessageInfo_new(0, 0, 0, 0));
    KASSERT_EQ(flag, 1);
    KASSERT_EQ(result, 1);
    kt_threads_cleanup();
}

static void child_recv_without_reply(seL4_Word self, seL4_Word ep, seL4_Word unused)
{
    (void)unused;
    kt_regs_t in = {ep, 0, 0, 0, 0, 0, 0, 0};
    kt_regs_t r = kt_syscall(seL4_SysRecv, in);
    result = r.a0;
    flag = 1;
    kt_thread_exit(self);
}

KTEST(fault, receive_without_a_reply_cap_is_a_receive_phase_cap_fault)
{
    reset();
    seL4_CPtr ep = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr reply = kt_make(seL4_ReplyObject, 0);
    seL4_CPtr other = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr ntfn = kt_make(seL4_NotificationObject, 0);
    kt_thread_t *c = faulting_child(ep, false);
    kt_thread_start(c, child_recv_without_reply, c->tcb, other, 0);
    seL4_MessageInfo_t m = seL4_Recv(ep, NULL, reply);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_CapFault);
    KASSERT_EQ(seL4_GetMR(1), 0); /* a6, the missing reply cap */
    KASSERT_EQ(seL4_GetMR(2), 1); /* in the receive phase */
    /* Receive on a signalled notification instead (a6 is ignored there). */
    seL4_CPtr badged = kt_mint(ntfn, seL4_AllRights, 0x4d);
    seL4_Signal(badged);
    seL4_UserContext regs = read_regs(c->tcb);
    regs.a0 = ntfn;
    write_regs(c->tcb, &regs);
    seL4_Send(reply, seL4_MessageInfo_new(0, 0, 0, 0));
    KASSERT_EQ(flag, 1);
    KASSERT_EQ(result, 0x4d);
    /* An endpoint cap without Read: cap fault at the endpoint's cptr. */
    kt_thread_t *d = faulting_child(ep, false);
    flag = 0;
    seL4_CPtr wo = kt_mint(other, seL4_CapRights_new(0, 0, 0, 1), 0);
    kt_thread_start(d, child_recv_without_reply, d->tcb, wo, 0);
    m = seL4_Recv(ep, NULL, reply);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_CapFault);
    KASSERT_EQ(seL4_GetMR(1), wo);
    KASSERT_EQ(seL4_GetMR(2), 1);
    kt_threads_cleanup();
}

/* ---- a fault cancelled, then Resume -------------------------------------------- */

static void child_send_label(seL4_Word self, seL4_Word ep, seL4_Word label)
{
    kt_regs_t in = {ep, info(label, 1), 0x5e5e, 0, 0, 0, 0, 0};
    kt_syscall(seL4_SysSend, in);
    flag = 1;
    kt_thread_exit(self);
}

/* A fault message taken with Wait leaves the thread Inactive. Resuming it
 * (here with new registers) cancels that fault, as seL4 MCS's cancelIPC
 * does: its next Send is a plain message, not the old fault again with the
 * sender waiting for a reply. (Found by stress/random_ipc_*.) */
KTEST(fault, resume_cancels_a_fault_left_after_a_wait)
{
    reset();
    seL4_CPtr ep = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr ep2 = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr reply = kt_make(seL4_ReplyObject, 0);
    kt_thread_t *c = faulting_child(ep, false);
    kt_thread_start(c, child_recv_without_reply, c->tcb, ep2, 0);
    seL4_Word badge = 0;
    seL4_MessageInfo_t m = seL4_Wait(ep, &badge);
    KASSERT_EQ(badge, FAULT_BADGE);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_CapFault);
    kt_thread_start(c, child_send_label, c->tcb, ep2, 0x33); /* WriteRegisters + resume */
    KASSERT_EQ(flag, 0); /* blocked in its Send */
    m = seL4_Recv(ep2, &badge, reply);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), 0x33);
    KASSERT_EQ(seL4_MessageInfo_get_length(m), 1);
    KASSERT_EQ(seL4_GetMR(0), 0x5e5e);
    KASSERT_EQ(flag, 1); /* a Send: not waiting for a reply */
    kt_threads_cleanup();
}

/* ---- a passive handler -------------------------------------------------------- */

/* Handler thread: Recv faults on ep; answer unknown syscalls by resuming
 * after the ecall with a0 = 0x99. Counts faults in result. */
static void passive_handler(seL4_Word ep, seL4_Word reply, seL4_Word unused)
{
    (void)unused;
    kt_regs_t in = {ep, 0, 0, 0, 0, 0, reply, 0};
    kt_regs_t r = kt_syscall(seL4_SysRecv, in);
    for (;;) {
        result++;
        /* MR0 = FaultIP, MR1 = SP, MR2 = RA, MR3 = a0 (no handler buffer:
         * 4 words); reply 4 words: FaultIP + 4, SP, RA, a0 = 0x99. */
        kt_regs_t out = {ep, info(0, 4), r.a2 + 4, r.a3, r.a4, 0x99, reply, 0};
        r = kt_syscall(seL4_SysReplyRecv, out);
    }
}

KTEST(fault, passive_handler_runs_on_the_faulting_threads_sc)
{
    reset();
    seL4_CPtr ep = kt_make(seL4_EndpointObject, 0);
    kt_thread_t *h = kt_thread_new(160, true, false);
    kt_thread_start(h, passive_handler, ep, kt_make(seL4_ReplyObject, 0), 0);
    KASSERT_EQ(seL4_SchedContext_UnbindObject(h->sc, h->tcb), seL4_NoError);
    kt_thread_t *c = faulting_child(ep, false);
    kt_thread_start(c, child_unknown_syscall, c->tcb, 0, 0);
    KASSERT_EQ(result, 0x99); /* the child's a0 after the fault ... */
    KASSERT_EQ(flag, 1);
    kt_threads_cleanup();
}

/* ---- timeout faults ----------------------------------------------------------- */

static volatile seL4_Word spins;

static void child_spin(seL4_Word unused0, seL4_Word unused1, seL4_Word unused2)
{
    (void)unused0;
    (void)unused1;
    (void)unused2;
    for (;;)
        spins++;
}

/* A child spinning on a sporadic SC (1 ms every 10 ms, badge 0x5c) whose
 * timeout faults go to ep. */
/* Booted with timing=host (tests/test_ktest.py, runs without -icount): QEMU's
 * timer follows the host clock, so a busy host stretches any interval. */
static bool host_clock(void)
{
    char v[8];
    return kairos_arg_get(kairos_bootargs(), "timing", v, sizeof(v)) && v[0] == 'h';
}

static kt_thread_t *timeout_child(seL4_CPtr ep, bool sporadic)
{
    kt_thread_t *t = kt_thread_new(150, true, false);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(kt_sched_control(), t->sc, 1000, sporadic ? 10000 : 1000, 0, 0x5c,
                                                sporadic ? seL4_SchedContext_Sporadic : 0),
               seL4_NoError);
    KASSERT_EQ(seL4_TCB_SetTimeoutEndpoint(t->tcb, kt_mint(ep, seL4_CapRights_new(0, 1, 0, 1), 0x70)),
               seL4_NoError);
    return t;
}

KTEST(fault, timeout_fault_on_budget_exhaustion_and_label_0_resumes)
{
    reset();
    spins = 0;
    seL4_CPtr ep = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr reply = kt_make(seL4_ReplyObject, 0);
    kt_thread_t *c = timeout_child(ep, true);
    kt_thread_start(c, child_spin, 0, 0, 0);
    seL4_Word used_before = 0;
    for (int round = 0; round < 2; round++) {
        seL4_Word badge = 0;
        seL4_MessageInfo_t m = seL4_Recv(ep, &badge, reply);
        KASSERT_EQ(badge, 0x70);
        KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_Timeout);
        KASSERT_EQ(seL4_MessageInfo_get_length(m), 2);
        KASSERT_EQ(seL4_GetMR(0), 0x5c);
        seL4_Word used = seL4_GetMR(1);
        /* About the 1 ms budget. With the host clock (tests/test_ktest.py
         * boots with timing=host) a host stall can make a period overrun,
         * and the sporadic rule takes the overrun off the next refill: then
         * only the two periods together are about two budgets. */
        if (round == 0 || !host_clock())
            KASSERT_MSG(used >= 900, "round %d consumed %lu us", round, (unsigned long)used);
        else
            KASSERT_MSG(used_before + used >= 1800, "consumed %lu + %lu us", (unsigned long)used_before,
                        (unsigned long)used);
        used_before = used;
        seL4_Word before = spins;
        KASSERT(before > 0);
        /* Label 0, no registers: it resumes where it was, next period. */
        seL4_Send(reply, seL4_MessageInfo_new(0, 0, 0, 0));
        if (round == 1) {
            kt_yield_n(1);
            KASSERT(spins >= before);
        }
    }
    kt_threads_cleanup();
}

KTEST(fault, timeout_fault_reply_with_registers_and_round_robin_gets_none)
{
    reset();
    spins = 0;
    seL4_CPtr ep = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr reply = kt_make(seL4_ReplyObject, 0);
    kt_thread_t *c = timeout_child(ep, true);
    kt_thread_start(c, child_spin, 0, 0, 0);
    seL4_MessageInfo_t m = seL4_Recv(ep, NULL, reply);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_Timeout);
    /* Reply label 1 with FaultIP = child_exit-like target: the thread
     * stays inactive (registers written all the same). */
    seL4_SetMR(0, 0x1234);
    seL4_Send(reply, seL4_MessageInfo_new(1, 0, 0, 1));
    seL4_Word s0 = spins;
    KASSERT_EQ(seL4_TCB_SetPriority(SELF, SELF, 140), seL4_NoError); /* below the child */
    kt_yield_n(2);
    KASSERT_EQ(seL4_TCB_SetPriority(SELF, SELF, 100), seL4_NoError);
    KASSERT_EQ(spins, s0);
    KASSERT_EQ(read_regs(c->tcb).pc, 0x1234);
    kt_threads_cleanup();
    /* A round-robin SC never raises timeout faults: the root's NBRecv
     * finds nothing after the child used several budgets. */
    reset();
    kt_thread_t *rr = timeout_child(ep, false);
    KASSERT_EQ(seL4_TCB_SetPriority(rr->tcb, SELF, 100), seL4_NoError); /* shares the CPU with the root */
    kt_thread_start(rr, child_spin, 0, 0, 0);
    for (int i = 0; i < 5; i++)
        seL4_Yield();
    seL4_Word badge = 1;
    (void)seL4_NBRecv(ep, &badge, reply);
    KASSERT_EQ(badge, 0);
    kt_threads_cleanup();
}

/* ---- measurement ----------------------------------------------------------------- */

static void child_unknown_loop(seL4_Word unused0, seL4_Word unused1, seL4_Word unused2)
{
    (void)unused0;
    (void)unused1;
    (void)unused2;
    kt_regs_t in = {0, 0, 0, 0, 0, 0, 0, 0};
    for (;;)
        kt_syscall((seL4_Word)-50, in);
}

/* A fault round trip: the handler's ReplyRecv resumes the thread after its
 * ecall, which faults again at once and is delivered back (two kernel
 * entries). Fewest instructions of 20; docs/ipc.md. */
KTEST(fault, report_fault_round_trip_instructions)
{
    reset();
    seL4_CPtr ep = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr reply = kt_make(seL4_ReplyObject, 0);
    kt_thread_t *c = faulting_child(ep, false);
    kt_thread_start(c, child_unknown_loop, 0, 0, 0);
    seL4_MessageInfo_t m = seL4_Recv(ep, NULL, reply);
    seL4_Word best = ~0ul;
    for (int i = 0; i < 20; i++) {
        KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_UnknownSyscall);
        seL4_SetMR(0, seL4_GetMR(0) + 4);
        seL4_Word t0, t1;
        __asm__ volatile("rdinstret %0" : "=r"(t0));
        m = seL4_ReplyRecv(ep, seL4_MessageInfo_new(0, 0, 0, 1), NULL, reply);
        __asm__ volatile("rdinstret %0" : "=r"(t1));
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    printf("fault-round-trip: %lu instructions (unknown syscall, handler ReplyRecv)\n", (unsigned long)best);
    kt_threads_cleanup();
}

/* ---- a timeout fault inside a passive server: the "extend" recipe -------------- */

static volatile seL4_Word may_finish;
static volatile seL4_Word client_got;

/* Passive server: takes a request, works until told it may finish (far
 * longer than the client's budget), replies MR0 + 1. */
static void slow_server(seL4_Word ep, seL4_Word reply, seL4_Word unused)
{
    (void)unused;
    kt_regs_t in = {ep, 0, 0, 0, 0, 0, reply, 0};
    kt_regs_t r = kt_syscall(seL4_SysRecv, in);
    for (;;) {
        while (!may_finish)
            spins++;
        kt_regs_t out = {ep, info(0, 1), r.a2 + 1, 0, 0, 0, reply, 0};
        r = kt_syscall(seL4_SysReplyRecv, out);
    }
}

static void timed_client(seL4_Word ep, seL4_Word x, seL4_Word self)
{
    kt_regs_t in = {ep, info(0, 1), x, 0, 0, 0, 0, 0};
    client_got = kt_syscall(seL4_SysCall, in).a2;
    flag = 1;
    kt_thread_exit(self);
}

KTEST(fault, timeout_in_a_passive_server_extend_recipe)
{
    reset();
    spins = 0;
    may_finish = 0;
    client_got = 0;
    seL4_CPtr ep1 = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr ep2 = kt_make(seL4_EndpointObject, 0); /* timeout faults, to the root (T) */
    seL4_CPtr r2 = kt_make(seL4_ReplyObject, 0);
    kt_thread_t *s = kt_thread_new(160, true, false);
    KASSERT_EQ(seL4_TCB_SetTimeoutEndpoint(s->tcb, kt_mint(ep2, seL4_CapRights_new(0, 1, 0, 1), 0x5)),
               seL4_NoError);
    kt_thread_start(s, slow_server, ep1, kt_make(seL4_ReplyObject, 0), 0);
    KASSERT_EQ(seL4_SchedContext_UnbindObject(s->sc, s->tcb), seL4_NoError); /* passive */
    /* The client: a sporadic SC of 1 ms every 100 ms, badge 0xc1. */
    kt_thread_t *c = kt_thread_new(150, true, false);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(kt_sched_control(), c->sc, 1000, 100000, 0, 0xc1,
                                                seL4_SchedContext_Sporadic),
               seL4_NoError);
    kt_thread_start(c, timed_client, ep1, 41, c->tcb);
    /* The server runs out of the client's budget: T gets its timeout fault,
     * with the client SC's badge (the SC it ran on). */
    seL4_Word badge = 0;
    seL4_MessageInfo_t m = seL4_Recv(ep2, &badge, r2);
    KASSERT_EQ(badge, 0x5);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_Timeout);
    KASSERT_EQ(seL4_GetMR(0), 0xc1);
    KASSERT(spins > 0);
    KASSERT_EQ(flag, 0);
    /* Extend: a bigger budget for the client's SC, then resume the server. */
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(kt_sched_control(), c->sc, 50000, 100000, 0, 0xc1,
                                                seL4_SchedContext_Sporadic),
               seL4_NoError);
    may_finish = 1;
    seL4_Send(r2, seL4_MessageInfo_new(0, 0, 0, 0));
    /* The server finished on the client's (extended) SC and replied. */
    KASSERT_EQ(flag, 1);
    KASSERT_EQ(client_got, 42);
    kt_threads_cleanup();
}

/* ---- the "kill" recipe: suspend the client, roll the server back --------------- */

KTEST(fault, timeout_in_a_passive_server_kill_recipe)
{
    reset();
    spins = 0;
    may_finish = 0;
    client_got = 0;
    seL4_CPtr ep1 = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr ep2 = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr r2 = kt_make(seL4_ReplyObject, 0);
    kt_thread_t *s = kt_thread_new(160, true, false);
    KASSERT_EQ(seL4_TCB_SetTimeoutEndpoint(s->tcb, kt_mint(ep2, seL4_CapRights_new(0, 1, 0, 1), 0x5)),
               seL4_NoError);
    kt_thread_start(s, slow_server, ep1, kt_make(seL4_ReplyObject, 0), 0);
    /* Checkpoint: the server blocked in its first receive (restart pc = the
     * ecall, argument registers as they were). */
    seL4_UserContext checkpoint = read_regs(s->tcb);
    KASSERT_EQ(seL4_SchedContext_UnbindObject(s->sc, s->tcb), seL4_NoError);
    kt_thread_t *c = kt_thread_new(150, true, false);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(kt_sched_control(), c->sc, 1000, 100000, 0, 0xc1,
                                                seL4_SchedContext_Sporadic),
               seL4_NoError);
    kt_thread_start(c, timed_client, ep1, 41, c->tcb);
    seL4_MessageInfo_t m = seL4_Recv(ep2, NULL, r2);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_Timeout);
    /* Kill: suspend the client (it leaves the call stack; its SC stays with
     * the server), take the SC from the server, give the server its own SC
     * for the way back, and restart it at the checkpoint through the fault
     * reply (32 registers, seL4_UserContext order). */
    KASSERT_EQ(seL4_TCB_Suspend(c->tcb), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_UnbindObject(c->sc, s->tcb), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(s->sc, s->tcb), seL4_NoError);
    const seL4_Word *w = (const seL4_Word *)&checkpoint;
    for (int i = 0; i < 32; i++)
        seL4_SetMR(i, w[i]);
    seL4_Send(r2, seL4_MessageInfo_new(0, 0, 0, 32));
    /* The server is back in its receive: passive again. */
    KASSERT_EQ(read_regs(s->tcb).pc, checkpoint.pc);
    KASSERT_EQ(seL4_SchedContext_UnbindObject(s->sc, s->tcb), seL4_NoError);
    KASSERT_EQ(flag, 0); /* the killed client never got a reply */
    /* It serves the next client. */
    may_finish = 1;
    KASSERT_EQ(seL4_SchedContext_Bind(c->sc, c->tcb), seL4_NoError);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(kt_sched_control(), c->sc, 20000, 100000, 0, 0xc1,
                                                seL4_SchedContext_Sporadic),
               seL4_NoError);
    kt_thread_start(c, timed_client, ep1, 99, c->tcb);
    KASSERT_EQ(flag, 1);
    KASSERT_EQ(client_got, 100);
    kt_threads_cleanup();
}

/* ---- the "emergency budget" recipe ------------------------------------------------ */

KTEST(fault, timeout_in_a_passive_server_emergency_recipe)
{
    reset();
    spins = 0;
    may_finish = 0;
    client_got = 0;
    seL4_CPtr ep1 = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr ep2 = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr r2 = kt_make(seL4_ReplyObject, 0);
    kt_thread_t *s = kt_thread_new(160, true, false);
    KASSERT_EQ(seL4_TCB_SetTimeoutEndpoint(s->tcb, kt_mint(ep2, seL4_CapRights_new(0, 1, 0, 1), 0x5)),
               seL4_NoError);
    kt_thread_start(s, slow_server, ep1, kt_make(seL4_ReplyObject, 0), 0);
    KASSERT_EQ(seL4_SchedContext_UnbindObject(s->sc, s->tcb), seL4_NoError);
    kt_thread_t *c = kt_thread_new(150, true, false);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(kt_sched_control(), c->sc, 1000, 100000, 0, 0xc1,
                                                seL4_SchedContext_Sporadic),
               seL4_NoError);
    kt_thread_start(c, timed_client, ep1, 7, c->tcb);
    seL4_MessageInfo_t m = seL4_Recv(ep2, NULL, r2);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_Timeout);
    /* Emergency: the client's SC off the server, an emergency SC (the
     * server's own, round robin) on, resume the server. */
    KASSERT_EQ(seL4_SchedContext_UnbindObject(c->sc, s->tcb), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(s->sc, s->tcb), seL4_NoError);
    may_finish = 1;
    seL4_Send(r2, seL4_MessageInfo_new(0, 0, 0, 0));
    /* The server finished on the emergency SC and replied; the reply
     * returned the client's SC (still on the call stack) to the client,
     * which runs once its budget is back. */
    KASSERT(!flag || client_got == 8);
    /* Make the server passive again (it is back in its receive). */
    KASSERT_EQ(seL4_SchedContext_UnbindObject(s->sc, s->tcb), seL4_NoError);
    /* The client's SC came back to it: binding it elsewhere fails. */
    KASSERT_EQ(seL4_SchedContext_Bind(c->sc, s->tcb), seL4_IllegalOperation);
    /* Give it budget now rather than at its next refill in 100 ms: a
     * runnable thread's SC keeps its refills when reconfigured, so suspend
     * it first (it resumes after its Call, with the reply). */
    KASSERT_EQ(seL4_TCB_Suspend(c->tcb), seL4_NoError);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(kt_sched_control(), c->sc, 20000, 100000, 0, 0xc1,
                                                seL4_SchedContext_Sporadic),
               seL4_NoError);
    KASSERT_EQ(seL4_TCB_Resume(c->tcb), seL4_NoError);
    KASSERT_EQ(flag, 1);
    KASSERT_EQ(client_got, 8);
    kt_threads_cleanup();
}

/* ---- the "rollback" and "error" recipes ---------------------------------------- */

/* A timeout-handling recipe (Lyons' thesis, 2018, §6.4; docs/ipc.md): handler T (the root) waits
 * on E2, passive server S serves on E1. S is transactional: a request
 * (MR0 = x, MR1 = n) adds x + i for i = 0 .. n-1, one block at a time; each
 * block is computed into the dirty buffer and a single store makes it the
 * clean one, so one of the two is always consistent. Its reply is MR0 =
 * blocks done, MR1 = the sum. Everything S keeps between requests is in
 * rb_srv (its globals) and its stack. */
#define RB_READY 0x7ead /* label of S's "initialised, waiting on E1" message to T */
#define RB_PARTIAL 1    /* T's reply after a rollback: MR0, MR1 = the last clean state */
#define RB_ERROR 2      /* T's reply in the "error" recipe: no data */
#define RB_CORRUPT 3    /* S's reply when it finds a request half done */
#define RB_X 1000
#define RB_STACK_WORDS 256

struct rb_state {
    seL4_Word done, sum;
};
struct rb_globals {
    struct rb_state buf[2];
    volatile seL4_Word clean; /* index of the clean buffer */
    volatile seL4_Word busy;  /* a request in progress */
    seL4_Word served;         /* requests answered */
};
static struct rb_globals rb_srv;
static volatile seL4_Word rb_inits; /* (the test's) times S ran its initialisation */
static seL4_CPtr rb_done;           /* clients signal it when they have their answer */
static volatile seL4_Word rb_label, rb_len, rb_mr0, rb_mr1;

static seL4_Word rb_sum(seL4_Word x, seL4_Word n) { return n * x + n * (n - 1) / 2; }

static void rb_server(seL4_Word e1, seL4_Word e2, seL4_Word reply)
{
    volatile seL4_Word in_request = 0; /* on S's stack: a request in progress */
    rb_inits++;
    /* Passive-server init protocol: tell T we are ready (the send phase to
     * E2) and wait on E1; T takes its checkpoint while S waits here. */
    kt_regs_t ready = {e1, info(RB_READY, 0), 0, 0, 0, 0, reply, e2};
    kt_regs_t r = kt_syscall(seL4_SysNBSendRecv, ready);
    for (;;) {
        seL4_Word x = r.a2, n = r.a3;
        kt_regs_t out = {e1, info(RB_CORRUPT, 0), 0, 0, 0, 0, reply, 0};
        if (!rb_srv.busy && !in_request) {
            rb_srv.busy = 1;
            in_request = 1;
            rb_srv.buf[rb_srv.clean] = (struct rb_state){0, 0};
            for (seL4_Word i = 0; i < n; i++) {
                const struct rb_state *c = &rb_srv.buf[rb_srv.clean];
                struct rb_state *d = &rb_srv.buf[1 - rb_srv.clean];
                for (int k = 0; k < 200; k++) /* the block's work */
                    spins++;
                d->done = c->done + 1;
                d->sum = c->sum + x + c->done;
                rb_srv.clean = 1 - rb_srv.clean; /* commit */
            }
            const struct rb_state *c = &rb_srv.buf[rb_srv.clean];
            rb_srv.busy = 0;
            in_request = 0;
            rb_srv.served++;
            out = (kt_regs_t){e1, info(0, 2), c->done, c->sum, 0, 0, reply, 0};
        }
        r = kt_syscall(seL4_SysReplyRecv, out);
    }
}

/* Calls S with (RB_X, n), keeps the answer, signals rb_done, stops. */
static void rb_client(seL4_Word e1, seL4_Word n, seL4_Word self)
{
    kt_regs_t in = {e1, info(0, 2), RB_X, n, 0, 0, 0, 0};
    kt_regs_t r = kt_syscall(seL4_SysCall, in);
    rb_label = r.a1 >> 12;
    rb_len = r.a1 & 0x7f;
    rb_mr0 = r.a2;
    rb_mr1 = r.a3;
    flag = 1;
    kt_regs_t sig = {rb_done, 0, 0, 0, 0, 0, 0, 0};
    kt_syscall(seL4_SysSend, sig);
    kt_thread_exit(self);
}

/* Is t (blocked) without an SC? Binding a spare SC succeeds only then (and
 * is undone). Is sc bound to some thread? Binding it to a spare TCB fails
 * then. */
static seL4_CPtr rb_spare_sc, rb_spare_tcb;
static bool rb_has_no_sc(kt_thread_t *t)
{
    if (seL4_SchedContext_Bind(rb_spare_sc, t->tcb) != seL4_NoError)
        return false;
    KASSERT_EQ(seL4_SchedContext_UnbindObject(rb_spare_sc, t->tcb), seL4_NoError);
    return true;
}
static bool rb_sc_is_bound(seL4_CPtr sc)
{
    if (seL4_SchedContext_Bind(sc, rb_spare_tcb) != seL4_NoError)
        return true;
    KASSERT_EQ(seL4_SchedContext_UnbindObject(sc, rb_spare_tcb), seL4_NoError);
    return false;
}

static void rb_send_registers(const seL4_UserContext *regs)
{
    const seL4_Word *w = (const seL4_Word *)regs;
    for (int i = 0; i < 32; i++)
        seL4_SetMR(i, w[i]);
}

/* Both recipes. rollback: S goes back to the checkpoint taken in its
 * NBSendRecv and the client gets the last clean state; otherwise ("error")
 * S starts again from its initial state and the client gets RB_ERROR. */
static void timeout_recipe_rollback_or_error(bool rollback)
{
    reset();
    spins = 0;
    rb_inits = 0;
    rb_label = rb_len = rb_mr0 = rb_mr1 = 0;
    rb_srv = (struct rb_globals){0};
    rb_spare_sc = kt_make_sc();
    rb_spare_tcb = kt_make(seL4_TCBObject, 0);
    rb_done = kt_make(seL4_NotificationObject, 0);
    seL4_CPtr e1 = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr e2 = kt_make(seL4_EndpointObject, 0);
    seL4_CPtr r2 = kt_make(seL4_ReplyObject, 0);     /* T's: S's faults */
    seL4_CPtr s_reply = kt_make(seL4_ReplyObject, 0); /* S's: its clients; T holds it too */
    /* T and S above every client, T above S (the init handshake). */
    kt_root_prio(170);
    kt_thread_t *s = kt_thread_new(160, true, false);
    KASSERT_EQ(seL4_TCB_SetTimeoutEndpoint(s->tcb, kt_mint(e2, seL4_CapRights_new(0, 1, 0, 1), 0x5)),
               seL4_NoError);
    seL4_CPtr s_e2 = kt_mint(e2, seL4_CapRights_new(0, 0, 0, 1), 0xe2); /* S's "ready" messages */
    kt_thread_start(s, rb_server, e1, s_e2, s_reply);
    /* S's initial state: the registers it starts with, its globals. */
    seL4_UserContext initial = read_regs(s->tcb);
    const struct rb_globals initial_globals = rb_srv;
    /* Init protocol: S runs on its own SC, NBSendRecv tells T it is ready
     * and blocks on E1. Checkpoint: registers (restart pc = that ecall),
     * the stack in use, the globals. Then S becomes passive. */
    seL4_Word badge = 0;
    seL4_MessageInfo_t m = seL4_Recv(e2, &badge, r2);
    KASSERT_EQ(badge, 0xe2);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), RB_READY);
    KASSERT_EQ(rb_inits, 1);
    seL4_UserContext checkpoint = read_regs(s->tcb);
    KASSERT(checkpoint.sp < initial.sp && initial.sp - checkpoint.sp <= RB_STACK_WORDS * sizeof(seL4_Word));
    seL4_Word stack_words = (initial.sp - checkpoint.sp) / sizeof(seL4_Word);
    static seL4_Word stack_copy[RB_STACK_WORDS];
    const seL4_Word *stack = (const seL4_Word *)checkpoint.sp;
    for (seL4_Word i = 0; i < stack_words; i++)
        stack_copy[i] = stack[i];
    const struct rb_globals checkpoint_globals = rb_srv;
    KASSERT_EQ(seL4_SchedContext_UnbindObject(s->sc, s->tcb), seL4_NoError);
    KASSERT(rb_has_no_sc(s));

    /* A client whose request needs far more than its budget (2 ms every
     * 10 ms, sporadic, badge 0xc1). */
    kt_thread_t *c = kt_thread_new(150, true, false);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(kt_sched_control(), c->sc, 2000, 10000, 0, 0xc1,
                                                seL4_SchedContext_Sporadic),
               seL4_NoError);
    kt_thread_start(c, rb_client, e1, 1ul << 40, c->tcb);
    /* 1. The timeout fault of S, on the client's SC, reaches T. */
    m = seL4_Recv(e2, &badge, r2);
    KASSERT_EQ(badge, 0x5);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), seL4_Fault_Timeout);
    KASSERT_EQ(seL4_GetMR(0), 0xc1);
    KASSERT_EQ(flag, 0);
    KASSERT_EQ(rb_srv.busy, 1); /* caught in the middle of the request */
    const struct rb_state clean = rb_srv.buf[rb_srv.clean];
    KASSERT(clean.done >= 1); /* it got somewhere on the client's budget ... */
    KASSERT_EQ(clean.sum, rb_sum(RB_X, clean.done)); /* ... and the clean state is consistent */
    /* 2. T answers the client through S's reply object: the last clean
     * state (rollback) or an error. The reply pops the call stack and
     * returns the client's SC. */
    if (rollback) {
        seL4_SetMR(0, clean.done);
        seL4_SetMR(1, clean.sum);
        seL4_Send(s_reply, seL4_MessageInfo_new(RB_PARTIAL, 0, 0, 2));
    } else {
        seL4_Send(s_reply, seL4_MessageInfo_new(RB_ERROR, 0, 0, 0));
    }
    KASSERT(rb_has_no_sc(s));      /* S, still blocked on its fault, has no SC now */
    KASSERT(!rb_has_no_sc(c));     /* the client has one ... */
    KASSERT(rb_sc_is_bound(c->sc)); /* ... and its SC is bound: to the client */
    /* 3. Restore S: the checkpoint (globals, the stack in use, registers)
     * or its initial state (globals, registers at its entry). */
    if (rollback) {
        rb_srv = checkpoint_globals;
        seL4_Word *live = (seL4_Word *)checkpoint.sp;
        for (seL4_Word i = 0; i < stack_words; i++)
            live[i] = stack_copy[i];
        rb_send_registers(&checkpoint);
    } else {
        rb_srv = initial_globals;
        rb_send_registers(&initial);
    }
    /* 4. An SC for S; the fault reply (label 0, 32 registers) resumes it
     * there, and T waits on E2. 5. S (re)runs its NBSendRecv: the ready
     * message reaches T, S blocks on E1. 6. T makes S passive again. */
    KASSERT_EQ(seL4_SchedContext_Bind(s->sc, s->tcb), seL4_NoError);
    m = seL4_ReplyRecv(e2, seL4_MessageInfo_new(0, 0, 0, 32), &badge, r2);
    KASSERT_EQ(badge, 0xe2);
    KASSERT_EQ(seL4_MessageInfo_get_label(m), RB_READY);
    KASSERT_EQ(rb_inits, rollback ? 1 : 2); /* rollback: no re-initialisation */
    KASSERT_EQ(read_regs(s->tcb).pc, checkpoint.pc);
    KASSERT_EQ(seL4_SchedContext_UnbindObject(s->sc, s->tcb), seL4_NoError);
    KASSERT(rb_has_no_sc(s));
    /* The client runs again on its own SC once its budget is back, with
     * T's answer. */
    KASSERT_EQ(flag, 0);
    seL4_Wait(rb_done, NULL);
    KASSERT_EQ(flag, 1);
    if (rollback) {
        KASSERT_EQ(rb_label, RB_PARTIAL);
        KASSERT_EQ(rb_len, 2);
        KASSERT_EQ(rb_mr0, clean.done);
        KASSERT_EQ(rb_mr1, clean.sum);
    } else {
        KASSERT_EQ(rb_label, RB_ERROR);
        /* Length 0: MR0 and MR1 (a2, a3) still hold the request. */
        KASSERT_EQ(rb_len, 0);
        KASSERT_EQ(rb_mr0, RB_X);
        KASSERT_EQ(rb_mr1, 1ul << 40);
    }
    /* S serves the next client, within that client's budget (20 ms every
     * 100 ms), and is passive again afterwards. */
    flag = 0;
    rb_label = rb_len = rb_mr0 = rb_mr1 = 0x99;
    kt_thread_t *c2 = kt_thread_new(150, true, false);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(kt_sched_control(), c2->sc, 20000, 100000, 0, 0xc2,
                                                seL4_SchedContext_Sporadic),
               seL4_NoError);
    kt_thread_start(c2, rb_client, e1, 5, c2->tcb);
    seL4_Wait(rb_done, NULL);
    KASSERT_EQ(flag, 1);
    KASSERT_EQ(rb_label, 0);
    KASSERT_EQ(rb_len, 2);
    KASSERT_EQ(rb_mr0, 5);
    KASSERT_EQ(rb_mr1, rb_sum(RB_X, 5));
    KASSERT_EQ(rb_srv.served, 1);
    KASSERT(rb_has_no_sc(s));
    printf("timeout-recipe %s: the client got %s after %lu blocks\n", rollback ? "rollback" : "error",
           rollback ? "the partial result" : "an error", (unsigned long)clean.done);
    kt_threads_cleanup();
}

KTEST(fault, timeout_in_a_passive_server_rollback_recipe) { timeout_recipe_rollback_or_error(true); }

KTEST(fault, timeout_in_a_passive_server_error_recipe) { timeout_recipe_rollback_or_error(false); }
