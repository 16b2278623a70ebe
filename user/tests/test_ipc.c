/*
 * Synchronous IPC (issue 5): Send, NBSend, Call, Recv, NBRecv, Wait,
 * NBWait, ReplyRecv, NBSendRecv and NBSendWait on endpoints and reply
 * objects; message transfer (info, MR0-3 in a2-a5, the rest through the
 * IPC buffers, badges); priority-ordered queues; deletion, suspension and
 * resumption of blocked threads (restart); reply objects (only the caller
 * gets the reply, an active reply object given to Recv cancels its caller,
 * deleting a reply); scheduling-context donation to passive servers,
 * nested, and a message to a server without an SC.
 * seL4 MCS IPC semantics as docs/ipc.md states them.
 *
 * Children come from framework/threads.h. The root drops to a low
 * priority so that children it wakes run at once.
 */
#include <ktest.h>
#include <stdio.h>
#include <threads.h>

#define ROOT KT_ROOT
#define SELF KT_SELF

enum { TAG_NULL = 0 };

static seL4_Word info(seL4_Word label, seL4_Word len) { return (label << 12) | len; }

static seL4_CPtr make_ep(void) { return kt_make(seL4_EndpointObject, 0); }
static seL4_CPtr make_reply(void) { return kt_make(seL4_ReplyObject, 0); }
static seL4_CPtr make_ntfn(void) { return kt_make(seL4_NotificationObject, 0); }

static seL4_CapRights_t all_rights(void) { return seL4_CapRights_new(1, 1, 1, 1); }
static seL4_CapRights_t send_only(void) { return seL4_CapRights_new(0, 0, 0, 1); }
static seL4_CapRights_t recv_only(void) { return seL4_CapRights_new(0, 0, 1, 0); }

#define S1 0x5151515151515151ul
#define S2 0x5252525252525252ul
#define S3 0x5353535353535353ul
#define S4 0x5454545454545454ul
#define S5 0x5555555555555555ul

static kt_regs_t sentinel_regs(seL4_Word a0, seL4_Word a6)
{
    kt_regs_t r = {a0, S1, S2, S3, S4, S5, a6, 0x70};
    return r;
}

/* What children saw, for the root to check. */
static volatile kt_regs_t got[8];
static volatile seL4_Word n_got;
static volatile seL4_Word flag;
static volatile seL4_Word order[8];
static volatile seL4_Word n_order;

static void reset_log(void)
{
    n_got = 0;
    flag = 0;
    n_order = 0;
}

static void log_regs(kt_regs_t r)
{
    seL4_Word i = n_got;
    if (i < 8) {
        got[i].a0 = r.a0;
        got[i].a1 = r.a1;
        got[i].a2 = r.a2;
        got[i].a3 = r.a3;
        got[i].a4 = r.a4;
        got[i].a5 = r.a5;
        got[i].a6 = r.a6;
        got[i].t0 = r.t0;
    }
    n_got = i + 1;
}

static kt_regs_t got_at(int i)
{
    kt_regs_t r = {got[i].a0, got[i].a1, got[i].a2, got[i].a3, got[i].a4, got[i].a5, got[i].a6, got[i].t0};
    return r;
}

/* ---- children ---------------------------------------------------------- */

/* Recv once on (ep, reply), log the registers, exit. */
static void child_recv_once(seL4_Word ep, seL4_Word reply, seL4_Word self)
{
    log_regs(kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply)));
    flag = 1;
    kt_thread_exit(self);
}

/* Send (label 9, MR0 = id, length 1) on ep, then log id in order[] and exit. */
static void child_send_id(seL4_Word ep, seL4_Word id, seL4_Word self)
{
    kt_regs_t r = {ep, info(9, 1), id, 0, 0, 0, 0, 0};
    kt_syscall(seL4_SysSend, r);
    seL4_Word i = n_order;
    if (i < 8)
        order[i] = id;
    n_order = i + 1;
    kt_thread_exit(self);
}

/* Call ep with MR0 = x (label 4, length 1); log the reply; set flag. */
static void child_call(seL4_Word ep, seL4_Word x, seL4_Word self)
{
    kt_regs_t r = {ep, info(4, 1), x, S3, S4, S5, 0, 0};
    log_regs(kt_syscall(seL4_SysCall, r));
    flag = 1;
    kt_thread_exit(self);
}

/* Server: Recv on (ep, reply), then ReplyRecv for ever: reply label 0,
 * MR0 = MR0 + MR1 + 1 of the request, length 1; counts requests in flag. */
static void server_add(seL4_Word ep, seL4_Word reply, seL4_Word unused)
{
    (void)unused;
    kt_regs_t r = kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply));
    for (;;) {
        log_regs(r);
        flag++;
        kt_regs_t out = {ep, info(0, 1), r.a2 + r.a3 + 1, 0, 0, 0, reply, 0};
        r = kt_syscall(seL4_SysReplyRecv, out);
    }
}

/* ================================================================== */

KTEST(ipc, send_to_waiting_receiver_transfers_message_and_badge)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    seL4_CPtr badged = kt_mint(ep, all_rights(), 0xbad6e);
    kt_thread_t *c = kt_thread_new(150, true, false);
    kt_thread_start(c, child_recv_once, ep, make_reply(), c->tcb);
    KASSERT_EQ(n_got, 0); /* blocked in Recv */
    kt_regs_t s = {badged, info(7, 3), 11, 22, 33, 44, 0x66, 0x77};
    kt_regs_t out = kt_syscall(seL4_SysSend, s);
    /* Send writes nothing back. */
    KASSERT_EQ(out.a0, badged);
    KASSERT_EQ(out.a1, info(7, 3));
    KASSERT_EQ(out.a2, 11);
    KASSERT_EQ(out.a5, 44);
    KASSERT_EQ(n_got, 1);
    kt_regs_t g = got_at(0);
    KASSERT_EQ(g.a0, 0xbad6e);
    KASSERT_EQ(g.a1, info(7, 3));
    KASSERT_EQ(g.a2, 11);
    KASSERT_EQ(g.a3, 22);
    KASSERT_EQ(g.a4, 33);
    KASSERT_EQ(g.a5, S5); /* beyond the length: untouched */
    KASSERT_EQ(g.t0, 0x70);
    kt_threads_cleanup();
}

KTEST(ipc, recv_takes_a_blocked_sender_and_wakes_it)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    seL4_CPtr reply = make_reply();
    kt_thread_t *c = kt_thread_new(150, true, false);
    kt_thread_start(c, child_send_id, kt_mint(ep, all_rights(), 5), 0x1d, c->tcb);
    KASSERT_EQ(n_order, 0); /* blocked in Send */
    kt_regs_t r = kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply));
    KASSERT_EQ(r.a0, 5);
    KASSERT_EQ(r.a1, info(9, 1));
    KASSERT_EQ(r.a2, 0x1d);
    KASSERT_EQ(r.a3, S3);
    KASSERT_EQ(r.a6, reply);
    KASSERT_EQ(n_order, 1); /* the sender ran on */
    kt_threads_cleanup();
}

KTEST(ipc, nonblocking_send_and_receive)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    seL4_CPtr reply = make_reply();
    /* NBSend with nobody waiting: dropped. */
    kt_regs_t s = {ep, info(1, 1), 42, 0, 0, 0, 0, 0};
    kt_syscall(seL4_SysNBSend, s);
    /* NBRecv/NBWait with nobody sending: a0 = 0, nothing else written. */
    kt_regs_t r = kt_syscall(seL4_SysNBRecv, sentinel_regs(ep, reply));
    KASSERT_EQ(r.a0, 0);
    KASSERT_EQ(r.a1, S1);
    KASSERT_EQ(r.a2, S2);
    KASSERT_EQ(r.a5, S5);
    r = kt_syscall(seL4_SysNBWait, sentinel_regs(ep, 0));
    KASSERT_EQ(r.a0, 0);
    KASSERT_EQ(r.a1, S1);
    /* NBRecv with a blocked sender receives; NBWait likewise. */
    kt_thread_t *c = kt_thread_new(150, true, false);
    kt_thread_start(c, child_send_id, kt_mint(ep, all_rights(), 3), 0x31, c->tcb);
    r = kt_syscall(seL4_SysNBRecv, sentinel_regs(ep, reply));
    KASSERT_EQ(r.a0, 3);
    KASSERT_EQ(r.a2, 0x31);
    kt_thread_t *d = kt_thread_new(150, true, false);
    kt_thread_start(d, child_send_id, kt_mint(ep, all_rights(), 4), 0x41, d->tcb);
    r = kt_syscall(seL4_SysNBWait, sentinel_regs(ep, 0));
    KASSERT_EQ(r.a0, 4);
    KASSERT_EQ(r.a2, 0x41);
    KASSERT_EQ(n_order, 2);
    /* NBSend to a waiting receiver delivers. */
    kt_thread_t *e = kt_thread_new(150, true, false);
    kt_thread_start(e, child_recv_once, ep, make_reply(), e->tcb);
    s.a2 = 0x99;
    kt_syscall(seL4_SysNBSend, s);
    KASSERT_EQ(n_got, 1);
    KASSERT_EQ(got_at(0).a2, 0x99);
    kt_threads_cleanup();
}

KTEST(ipc, call_and_replyrecv_round_trips)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    seL4_CPtr reply = make_reply();
    kt_thread_t *srv = kt_thread_new(150, true, false);
    kt_thread_start(srv, server_add, ep, reply, 0);
    seL4_CPtr badged = kt_mint(ep, all_rights(), 0x77);
    for (seL4_Word i = 0; i < 5; i++) {
        kt_regs_t c = {badged, info(3, 2), i, 10 * i, S4, S5, 0x66, 0x70};
        kt_regs_t r = kt_syscall(seL4_SysCall, c);
        KASSERT_EQ(r.a0, 0); /* replies carry badge 0 */
        KASSERT_EQ(r.a1, info(0, 1));
        KASSERT_EQ(r.a2, 11 * i + 1);
        KASSERT_EQ(r.a3, 10 * i); /* beyond the reply's length: untouched */
        KASSERT_EQ(r.a6, 0x66);
        KASSERT_EQ(flag, i + 1);
        KASSERT_EQ(got_at((int)i).a0, 0x77);
        KASSERT_EQ(got_at((int)i).a1, info(3, 2));
    }
    kt_threads_cleanup();
}

/* Server with an IPC buffer: receive, check, reply 120 words 3*i+1. Once
 * it has replied (long_filled), the words past a request's length must
 * still hold that reply: the kernel copied no more than the length. */
static kt_thread_t *long_srv;
static volatile int long_filled;
static void server_long(seL4_Word ep, seL4_Word reply, seL4_Word unused)
{
    (void)unused;
    seL4_Word *buf = long_srv->ipc_buf;
    kt_regs_t r = kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply));
    for (;;) {
        log_regs(r);
        seL4_Word len = r.a1 & 0x7f;
        seL4_Word ok = 1;
        for (seL4_Word i = 4; i < len; i++)
            if (buf[1 + i] != 1000 + i)
                ok = 0;
        if (r.a2 != 1000 || r.a5 != 1003)
            ok = 0;
        if (long_filled)
            for (seL4_Word i = len > 4 ? len : 4; i < 120; i++)
                if (buf[1 + i] != 3 * i + 1)
                    ok = 0;
        flag = ok ? len : 0xbad;
        for (seL4_Word i = 4; i < 120; i++)
            buf[1 + i] = 3 * i + 1;
        long_filled = 1;
        kt_regs_t out = {ep, info(0, 120), 1, 4, 7, 10, reply, 0};
        r = kt_syscall(seL4_SysReplyRecv, out);
    }
}

/* A fresh endpoint with server_long waiting on it (priority 150, above the
 * root task's 100); returns the endpoint. */
static seL4_CPtr start_long_server(void)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    seL4_CPtr reply = make_reply();
    long_filled = 0;
    long_srv = kt_thread_new(150, true, true);
    kt_thread_start(long_srv, server_long, ep, reply, 0);
    return ep;
}

KTEST(ipc, long_messages_go_through_the_ipc_buffers)
{
    seL4_CPtr ep = start_long_server();
    for (seL4_Word i = 0; i < 120; i++)
        seL4_SetMR((int)i, 1000 + i);
    seL4_MessageInfo_t out = seL4_Call(ep, seL4_MessageInfo_new(0, 0, 0, 120));
    KASSERT_EQ(flag, 120);
    KASSERT_EQ(seL4_MessageInfo_get_length(out), 120);
    for (seL4_Word i = 0; i < 120; i++)
        KASSERT_EQ(seL4_GetMR((int)i), 3 * i + 1);
    kt_threads_cleanup();
}

/* The kernel copies the buffer part eight words at a time and then the
 * rest in one call (endpoint.c copy_mrs): every length from 5 to 29 (no,
 * one, two and three eight-word runs, each with every rest 0-7) and the
 * longest ones arrive exactly, no word more. */
KTEST(ipc, every_buffer_length_arrives_exactly)
{
    seL4_CPtr ep = start_long_server();
    static const seL4_Word extra[3] = {118, 119, 120};
    for (seL4_Word k = 0; k < 25 + 3; k++) {
        seL4_Word len = k < 25 ? 5 + k : extra[k - 25];
        for (seL4_Word i = 0; i < 120; i++)
            seL4_SetMR((int)i, 1000 + i);
        seL4_MessageInfo_t out = seL4_Call(ep, seL4_MessageInfo_new(0, 0, 0, len));
        KASSERT_EQ(flag, len);
        KASSERT_EQ(seL4_MessageInfo_get_length(out), 120);
    }
    kt_threads_cleanup();
}

KTEST(ipc, without_a_receive_buffer_only_four_words_arrive)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    kt_thread_t *c = kt_thread_new(150, true, false); /* no IPC buffer */
    kt_thread_start(c, child_recv_once, ep, make_reply(), c->tcb);
    for (seL4_Word i = 0; i < 10; i++)
        seL4_SetMR((int)i, 500 + i);
    seL4_Send(ep, seL4_MessageInfo_new(2, 0, 0, 10));
    KASSERT_EQ(n_got, 1);
    KASSERT_EQ(got_at(0).a1, info(2, 4));
    KASSERT_EQ(got_at(0).a5, 503);
    kt_threads_cleanup();
}

KTEST(ipc, senders_queue_by_priority_fifo_among_equals_and_requeue)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(200);
    seL4_CPtr ep = make_ep();
    seL4_CPtr reply = make_reply();
    static const seL4_Word prio[4] = {100, 150, 150, 120};
    kt_thread_t *t[4];
    for (int i = 0; i < 4; i++) {
        t[i] = kt_thread_new(prio[i], true, false);
        kt_thread_start(t[i], child_send_id, ep, (seL4_Word)i + 1, t[i]->tcb);
    }
    kt_root_prio(50); /* all four run and block in Send */
    kt_root_prio(200);
    KASSERT_EQ(n_order, 0);
    /* The lowest one moves to the front by a priority change. */
    KASSERT_EQ(seL4_TCB_SetPriority(t[0]->tcb, SELF, 160), seL4_NoError);
    kt_root_prio(50);
    static const seL4_Word expect[4] = {1, 2, 3, 4};
    for (int i = 0; i < 4; i++) {
        kt_regs_t r = kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply));
        KASSERT_EQ(r.a2, expect[i]);
    }
    KASSERT_EQ(n_order, 4);
    kt_threads_cleanup();
}

KTEST(ipc, receivers_queue_by_priority)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(200);
    seL4_CPtr ep = make_ep();
    kt_thread_t *a = kt_thread_new(110, true, false);
    kt_thread_t *b = kt_thread_new(130, true, false);
    kt_thread_start(a, child_recv_once, ep, make_reply(), a->tcb);
    kt_thread_start(b, child_recv_once, ep, make_reply(), b->tcb);
    kt_root_prio(50);
    kt_root_prio(200);
    kt_regs_t s = {ep, info(1, 1), 1, 0, 0, 0, 0, 0};
    kt_syscall(seL4_SysSend, s); /* to b (130) */
    s.a2 = 2;
    kt_syscall(seL4_SysSend, s); /* to a */
    kt_root_prio(50);
    KASSERT_EQ(n_got, 2);
    /* b ran first (higher priority) and got the first message. */
    KASSERT_EQ(got_at(0).a2, 1);
    KASSERT_EQ(got_at(1).a2, 2);
    kt_threads_cleanup();
}

KTEST(ipc, deleting_the_endpoint_restarts_blocked_threads)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    kt_thread_t *c = kt_thread_new(150, true, false);
    kt_thread_start(c, child_recv_once, ep, make_reply(), c->tcb);
    kt_thread_t *d = kt_thread_new(150, true, false);
    seL4_CPtr ep2 = make_ep();
    kt_thread_start(d, child_send_id, ep2, 0xd, d->tcb);
    /* Delete and re-create both in the same slots before the restarted
     * threads run: they re-execute their calls on the new endpoints. */
    kt_root_prio(200);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, ep, 64), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, ep2, 64), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(ep), TAG_NULL);
    seL4_CPtr fresh = make_ep();
    KASSERT_EQ(seL4_CNode_Move(ROOT, ep, 64, ROOT, fresh, 64), seL4_NoError);
    seL4_CPtr fresh2 = make_ep();
    KASSERT_EQ(seL4_CNode_Move(ROOT, ep2, 64, ROOT, fresh2, 64), seL4_NoError);
    kt_root_prio(100);
    KASSERT_EQ(n_got, 0);
    KASSERT_EQ(n_order, 0);
    kt_regs_t s = {ep, info(1, 1), 0x5e, 0, 0, 0, 0, 0};
    kt_syscall(seL4_SysSend, s);
    KASSERT_EQ(n_got, 1);
    KASSERT_EQ(got_at(0).a2, 0x5e);
    kt_regs_t r = kt_syscall(seL4_SysRecv, sentinel_regs(ep2, make_reply()));
    KASSERT_EQ(r.a2, 0xd);
    KASSERT_EQ(n_order, 1);
    kt_threads_cleanup();
}

/* Deleting an endpoint with a queue of senders: the kernel restarts them
 * one per preemption point (endpoint_finalise), so a delete may stop and be
 * re-executed part way (tests/test_ktest.py also runs this test with the
 * boot argument preempt=force, which makes that happen). Either way every
 * sender restarts exactly once and sends again to what is in the slot then. */
KTEST(ipc, deleting_an_endpoint_restarts_every_queued_sender_once)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    for (seL4_Word i = 0; i < KT_MAX_THREADS; i++) {
        kt_thread_t *t = kt_thread_new(150, true, false);
        kt_thread_start(t, child_send_id, ep, 0x60 + i, t->tcb);
    }
    KASSERT_EQ(n_order, 0); /* all six are blocked sending */
    kt_root_prio(200);      /* the restarted senders must not run yet */
    seL4_Word restarts = kairos_debug_counter(KAIROS_COUNTER_PREEMPTION_RESTARTS);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, ep, 64), seL4_NoError);
    restarts = kairos_debug_counter(KAIROS_COUNTER_PREEMPTION_RESTARTS) - restarts;
    char v[8];
    if (kairos_arg_get(kairos_bootargs(), "preempt", v, sizeof(v)) && v[0] == 'f')
        KASSERT(restarts >= 1); /* forced: the delete did stop part way */
    KASSERT_EQ(seL4_DebugCapIdentify(ep), TAG_NULL);
    seL4_CPtr fresh = make_ep();
    KASSERT_EQ(seL4_CNode_Move(ROOT, ep, 64, ROOT, fresh, 64), seL4_NoError);
    kt_root_prio(100); /* they run and block sending on the new endpoint */
    KASSERT_EQ(n_order, 0);
    seL4_CPtr reply = make_reply();
    seL4_Word seen = 0;
    for (seL4_Word i = 0; i < KT_MAX_THREADS; i++) {
        kt_regs_t r = kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply));
        KASSERT_EQ(r.a1 >> 12, 9);
        KASSERT(r.a2 >= 0x60 && r.a2 < 0x60 + KT_MAX_THREADS);
        KASSERT_EQ(seen & (1ul << (r.a2 - 0x60)), 0); /* no sender twice */
        seen |= 1ul << (r.a2 - 0x60);
    }
    KASSERT_EQ(seen, (1ul << KT_MAX_THREADS) - 1);
    KASSERT_EQ(n_order, KT_MAX_THREADS); /* each sender finished after its send */
    kt_regs_t r = kt_syscall(seL4_SysNBRecv, sentinel_regs(ep, reply));
    KASSERT_EQ(r.a2, S2); /* nothing more queued: MR0 untouched */
    kt_threads_cleanup();
}

KTEST(ipc, suspend_and_resume_restart_a_blocked_send)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    seL4_CPtr reply = make_reply();
    kt_thread_t *c = kt_thread_new(150, true, false);
    kt_thread_start(c, child_send_id, ep, 0x51, c->tcb);
    KASSERT_EQ(seL4_TCB_Suspend(c->tcb), seL4_NoError);
    kt_regs_t r = kt_syscall(seL4_SysNBRecv, sentinel_regs(ep, reply));
    KASSERT_EQ(r.a0, 0); /* no longer queued */
    KASSERT_EQ(r.a1, S1);
    KASSERT_EQ(seL4_TCB_Resume(c->tcb), seL4_NoError); /* sends again, blocks */
    KASSERT_EQ(n_order, 0);
    r = kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply));
    KASSERT_EQ(r.a2, 0x51);
    KASSERT_EQ(n_order, 1);
    kt_threads_cleanup();
}

KTEST(ipc, call_without_grant_or_to_wait_leaves_the_caller_inactive)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    seL4_CPtr reply = make_reply();
    /* A cap with Write only: no reply can come back. */
    kt_thread_t *c = kt_thread_new(150, true, false);
    kt_thread_start(c, child_call, kt_mint(ep, send_only(), 0), 1, c->tcb);
    kt_regs_t r = kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply));
    KASSERT_EQ(r.a1, info(4, 1));
    kt_regs_t rep = {reply, info(0, 0), 0, 0, 0, 0, 0, 0};
    kt_syscall(seL4_SysSend, rep); /* nobody waits on the reply: nothing */
    kt_yield_n(3);
    KASSERT_EQ(flag, 0);
    /* Full rights, but received with Wait (no reply object). */
    kt_thread_t *d = kt_thread_new(150, true, false);
    kt_thread_start(d, child_call, ep, 2, d->tcb);
    r = kt_syscall(seL4_SysWait, sentinel_regs(ep, 0));
    KASSERT_EQ(r.a2, 2);
    kt_syscall(seL4_SysSend, rep);
    kt_yield_n(3);
    KASSERT_EQ(flag, 0);
    /* Only Call gets the reply: a caller with Grant gets it. */
    kt_thread_t *e = kt_thread_new(150, true, false);
    kt_thread_start(e, child_call, kt_mint(ep, seL4_CapRights_new(1, 0, 0, 1), 0), 3, e->tcb);
    r = kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply));
    KASSERT_EQ(r.a2, 3);
    kt_regs_t rep2 = {reply, info(6, 1), 0x33, 0, 0, 0, 0, 0};
    kt_syscall(seL4_SysSend, rep2);
    KASSERT_EQ(flag, 1);
    KASSERT_EQ(got_at(0).a0, 0);
    KASSERT_EQ(got_at(0).a1, info(6, 1));
    KASSERT_EQ(got_at(0).a2, 0x33);
    kt_threads_cleanup();
}

KTEST(ipc, endpoint_and_reply_invocation_checks)
{
    kt_threads_cleanup();
    seL4_CPtr ep = make_ep();
    seL4_CPtr ro = kt_mint(ep, recv_only(), 0);
    /* G5: an endpoint cap without Write answers InvalidCapability 0 to Call. */
    seL4_MessageInfo_t out = seL4_Call(ro, seL4_MessageInfo_new(0, 0, 0, 0));
    KASSERT_EQ(seL4_MessageInfo_get_label(out), seL4_InvalidCapability);
    KASSERT_EQ(seL4_MessageInfo_get_length(out), 1);
    KASSERT_EQ(seL4_GetMR(0), 0);
    /* Call on a reply cap with nobody waiting: an empty success reply. */
    seL4_CPtr reply = make_reply();
    out = seL4_Call(reply, seL4_MessageInfo_new(5, 0, 0, 2));
    KASSERT_EQ(seL4_MessageInfo_get_label(out), 0);
    KASSERT_EQ(seL4_MessageInfo_get_length(out), 0);
    /* Send and NBSend on a read-only endpoint cap write nothing back. */
    kt_regs_t s = {ro, info(1, 1), 0x12, S3, S4, S5, 0, 0};
    kt_regs_t r = kt_syscall(seL4_SysSend, s);
    KASSERT_EQ(r.a1, info(1, 1));
    KASSERT_EQ(r.a2, 0x12);
    r = kt_syscall(seL4_SysNBSend, s);
    KASSERT_EQ(r.a1, info(1, 1));
    kt_threads_cleanup();
}

/* Call the endpoint, but never get a reply: flag counts the calls made. */
static void child_call_count(seL4_Word ep, seL4_Word unused, seL4_Word self)
{
    (void)unused;
    kt_regs_t r = {ep, info(4, 1), 1, 0, 0, 0, 0, 0};
    n_order++;
    kt_syscall(seL4_SysCall, r);
    flag = 0xdead; /* must not happen in the test below */
    kt_thread_exit(self);
}

KTEST(ipc, active_reply_object_given_to_recv_cancels_its_caller)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    seL4_CPtr reply = make_reply();
    kt_thread_t *c = kt_thread_new(150, true, false);
    kt_thread_start(c, child_call_count, ep, 0, c->tcb);
    kt_regs_t r = kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply)); /* c now waits on `reply` */
    KASSERT_EQ(r.a1, info(4, 1));
    /* Receive again with the same reply object: c is cancelled (inactive,
     * no message). NBRecv so that the root does not block. */
    r = kt_syscall(seL4_SysNBRecv, sentinel_regs(ep, reply));
    KASSERT_EQ(r.a0, 0);
    kt_regs_t rep = {reply, info(0, 0), 0, 0, 0, 0, 0, 0};
    kt_syscall(seL4_SysSend, rep);
    kt_yield_n(3);
    KASSERT_EQ(flag, 0);
    KASSERT_EQ(n_order, 1);
    /* Resume restarts it: it calls again. */
    KASSERT_EQ(seL4_TCB_Resume(c->tcb), seL4_NoError);
    KASSERT_EQ(n_order, 1); /* restarted at the ecall, not at the start */
    r = kt_syscall(seL4_SysNBRecv, sentinel_regs(ep, reply));
    KASSERT_EQ(r.a1, info(4, 1));
    kt_threads_cleanup();
}

/* ---- donation ------------------------------------------------------------ */

/* Is t (blocked) without an SC? Binding a spare SC succeeds only then;
 * the binding is undone. */
static seL4_CPtr spare_sc;
static bool has_no_sc(kt_thread_t *t)
{
    if (!spare_sc)
        spare_sc = kt_make_sc();
    seL4_Error e = seL4_SchedContext_Bind(spare_sc, t->tcb);
    if (e != seL4_NoError)
        return false;
    KASSERT_EQ(seL4_SchedContext_UnbindObject(spare_sc, t->tcb), seL4_NoError);
    return true;
}

/* Is sc bound to a thread? Binding it to a fresh thread fails then. */
static seL4_CPtr spare_tcb;
static bool sc_is_bound(seL4_CPtr sc)
{
    if (!spare_tcb)
        spare_tcb = kt_make(seL4_TCBObject, 0);
    seL4_Error e = seL4_SchedContext_Bind(sc, spare_tcb);
    if (e == seL4_NoError) {
        KASSERT_EQ(seL4_SchedContext_UnbindObject(sc, spare_tcb), seL4_NoError);
        return false;
    }
    return true;
}

/* Make a started server passive: it has blocked in its first receive;
 * take its SC away. */
static void make_passive(kt_thread_t *t) { KASSERT_EQ(seL4_SchedContext_UnbindObject(t->sc, t->tcb), seL4_NoError); }

KTEST(ipc, passive_server_runs_on_the_callers_sc_and_returns_it)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    seL4_CPtr reply = make_reply();
    kt_thread_t *srv = kt_thread_new(150, true, false);
    kt_thread_start(srv, server_add, ep, reply, 0);
    make_passive(srv);
    KASSERT(has_no_sc(srv));
    kt_regs_t c = {ep, info(1, 2), 20, 30, 0, 0, 0, 0};
    for (int i = 0; i < 3; i++) {
        kt_regs_t r = kt_syscall(seL4_SysCall, c);
        KASSERT_EQ(r.a2, 51);
    }
    KASSERT_EQ(flag, 3);
    KASSERT(has_no_sc(srv)); /* the SC came back with each reply */
    kt_threads_cleanup();
}

/* S1: receives x on ep1, calls ep2 with x, replies what S2 said + 1. */
static void server_forward(seL4_Word ep1, seL4_Word reply, seL4_Word ep2)
{
    kt_regs_t r = kt_syscall(seL4_SysRecv, sentinel_regs(ep1, reply));
    for (;;) {
        kt_regs_t c = {ep2, info(2, 2), r.a2, 0, 0, 0, 0, 0};
        kt_regs_t back = kt_syscall(seL4_SysCall, c);
        kt_regs_t out = {ep1, info(0, 1), back.a2 + 1, 0, 0, 0, reply, 0};
        r = kt_syscall(seL4_SysReplyRecv, out);
    }
}

/* A client: two calls of ep with x and x + 1, logs both replies. */
static void client_twice(seL4_Word ep, seL4_Word x, seL4_Word self)
{
    for (seL4_Word i = 0; i < 2; i++) {
        kt_regs_t c = {ep, info(1, 1), x + i, 0, 0, 0, 0, 0};
        log_regs(kt_syscall(seL4_SysCall, c));
    }
    flag = 1;
    kt_thread_exit(self);
}

KTEST(ipc, nested_passive_servers_return_the_sc_to_the_client)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(200);
    seL4_CPtr ep1 = make_ep(), ep2 = make_ep();
    seL4_CPtr r1 = make_reply(), r2 = make_reply();
    kt_thread_t *s2 = kt_thread_new(170, true, false);
    kt_thread_t *s1 = kt_thread_new(160, true, false);
    kt_thread_t *cl = kt_thread_new(150, true, false);
    kt_thread_start(s2, server_add, ep2, r2, 0);
    kt_thread_start(s1, server_forward, ep1, r1, ep2);
    kt_root_prio(100); /* both block in their receives */
    kt_root_prio(200);
    make_passive(s1);
    make_passive(s2);
    kt_thread_start(cl, client_twice, ep1, 40, cl->tcb);
    kt_root_prio(100);
    KASSERT_EQ(flag, 1);
    KASSERT_EQ(n_got, 4); /* two requests seen by s2, two replies seen by the client */
    /* s2 computes x + 0 + 1 (MR1 = 0), s1 adds 1. */
    KASSERT_EQ(got_at(1).a2, 42);
    KASSERT_EQ(got_at(3).a2, 43);
    KASSERT_EQ(got_at(1).a0, 0);
    KASSERT(has_no_sc(s1));
    KASSERT(has_no_sc(s2));
    KASSERT(sc_is_bound(cl->sc)); /* still the client's (suspended) */
    kt_threads_cleanup();
}

/* Receive once on (ep, reply) and log, then wait on ntfn for ever. */
static void server_recv_then_wait(seL4_Word ep, seL4_Word reply, seL4_Word ntfn)
{
    log_regs(kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply)));
    flag = 1;
    for (;;)
        kt_syscall(seL4_SysWait, sentinel_regs(ntfn, 0));
}

KTEST(ipc, send_to_a_server_without_sc_is_delivered_and_runs_once_it_has_one)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    kt_thread_t *srv = kt_thread_new(150, true, false);
    kt_thread_start(srv, server_recv_then_wait, ep, make_reply(), make_ntfn());
    make_passive(srv);
    kt_regs_t s = {ep, info(8, 1), 0x77, 0, 0, 0, 0, 0};
    kt_syscall(seL4_SysSend, s); /* Send never donates */
    kt_yield_n(3);
    KASSERT_EQ(flag, 0);
    KASSERT_EQ(seL4_SchedContext_Bind(srv->sc, srv->tcb), seL4_NoError);
    KASSERT_EQ(flag, 1);
    KASSERT_EQ(got_at(0).a1, info(8, 1));
    KASSERT_EQ(got_at(0).a2, 0x77);
    kt_threads_cleanup();
}

KTEST(ipc, deleting_the_reply_returns_the_sc_and_leaves_the_caller_inactive)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    seL4_CPtr reply = make_reply();
    kt_thread_t *srv = kt_thread_new(150, true, false);
    kt_thread_start(srv, server_recv_then_wait, ep, reply, make_ntfn());
    make_passive(srv);
    kt_thread_t *cl = kt_thread_new(140, true, false);
    kt_thread_start(cl, child_call, ep, 5, cl->tcb);
    /* The server took the call on the client's SC and now waits on its
     * notification, still holding it. */
    KASSERT_EQ(n_got, 1);
    KASSERT(!has_no_sc(srv));
    KASSERT_EQ(seL4_CNode_Delete(ROOT, reply, 64), seL4_NoError);
    KASSERT(has_no_sc(srv));
    KASSERT(sc_is_bound(cl->sc));
    kt_yield_n(3);
    KASSERT_EQ(flag, 1); /* set by the server only; the client got no reply */
    KASSERT_EQ(n_got, 1);
    kt_threads_cleanup();
}

/* NBSendWait hand-off: a passive server initialises on a lent SC, then
 * signals readiness with NBSendWait, which gives the SC back... here the
 * opposite direction is checked: NBSendRecv by a client donates its SC to
 * a waiting server without one (k.4). */
static void client_nbsendrecv(seL4_Word dest, seL4_Word src, seL4_Word reply)
{
    kt_regs_t r = {src, info(1, 1), 0x99, 0, 0, 0, reply, dest};
    kt_syscall(seL4_SysNBSendRecv, r);
    flag = 0xbad; /* never: it blocks without an SC */
    for (;;)
        ;
}

KTEST(ipc, nbsendrecv_lends_the_sc_to_a_passive_receiver)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep(), own = make_ep();
    kt_thread_t *srv = kt_thread_new(150, true, false);
    kt_thread_start(srv, server_recv_then_wait, ep, make_reply(), make_ntfn());
    make_passive(srv);
    kt_thread_t *cl = kt_thread_new(140, true, false);
    kt_thread_start(cl, client_nbsendrecv, ep, own, make_reply());
    KASSERT_EQ(flag, 1);
    KASSERT_EQ(got_at(0).a2, 0x99);
    KASSERT(!has_no_sc(srv));
    KASSERT(has_no_sc(cl));
    kt_threads_cleanup();
}

/* The poll between the phases (docs/ipc.md "Preemption between the
 * phases"): after a send phase that is not a reply, NBSendRecv, ReplyRecv
 * and NBSendWait take a preemption point; if it finds an interrupt pending
 * the caller re-executes its ecall later and does only the receive. With
 * the boot argument preempt=force (tests/test_ktest.py) every third poll
 * is taken, so some of the rounds below stop there.
 *
 * Echo receivers: Recv on ep (a0), log MR0 in order[], Send MR0 + 0x1000
 * on back (a1), again. Two of them wait on ep, so a send phase done twice
 * would wake the second as well: it would log a value twice and leave an
 * extra message queued on back for the next round. */
static void echo_once_more(seL4_Word ep, seL4_Word back, seL4_Word reply)
{
    for (;;) {
        kt_regs_t r = kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply));
        seL4_Word i = n_order;
        if (i < 8)
            order[i] = r.a2;
        n_order = i + 1;
        kt_regs_t out = {back, info(3, 1), r.a2 + 0x1000, 0, 0, 0, 0, 0};
        kt_syscall(seL4_SysSend, out);
    }
}

KTEST(ipc, send_receive_calls_send_once_when_stopped_between_phases)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep(), back = make_ep(), reply = make_reply();
    for (int k = 0; k < 2; k++) {
        kt_thread_t *t = kt_thread_new(150, true, false);
        kt_thread_start(t, echo_once_more, ep, back, make_reply());
    }
    seL4_Word restarts = kairos_debug_counter(KAIROS_COUNTER_PREEMPTION_RESTARTS);
    const seL4_Word rounds = 6;
    for (seL4_Word i = 0; i < rounds; i++) {
        /* NBSendRecv: destination in t0, source a0, reply a6. */
        kt_regs_t r = {back, info(1, 1), 0x70 + i, 0, 0, 0, reply, ep};
        kt_regs_t got_back = kt_syscall(seL4_SysNBSendRecv, r);
        KASSERT_EQ(got_back.a1 >> 12, 3);
        KASSERT_EQ(got_back.a2, 0x1070 + i); /* this round's answer, not a stale one */
        KASSERT_EQ(n_order, i + 1);           /* one receiver woken per round */
        KASSERT_EQ(order[i], 0x70 + i);
    }
    /* Nothing more is queued on back: a non-blocking receive finds nobody. */
    kt_regs_t r = kt_syscall(seL4_SysNBRecv, sentinel_regs(back, reply));
    KASSERT_EQ(r.a2, S2);
    restarts = kairos_debug_counter(KAIROS_COUNTER_PREEMPTION_RESTARTS) - restarts;
    char v[8];
    if (kairos_arg_get(kairos_bootargs(), "preempt", v, sizeof(v)) && v[0] == 'f')
        KASSERT(restarts >= 1); /* forced: some round did stop between its phases */
    else
        KASSERT_EQ(restarts, 0);
    kt_threads_cleanup();
}

/* ---- measurements ------------------------------------------------------ */

static inline seL4_Word rdinstret(void)
{
    seL4_Word v;
    __asm__ volatile("rdinstret %0" : "=r"(v));
    return v;
}

/* Echo server with an IPC buffer: ReplyRecv with the request's length. */
static kt_thread_t *echo_srv;
static void server_echo(seL4_Word ep, seL4_Word reply, seL4_Word unused)
{
    (void)unused;
    kt_regs_t r = kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply));
    for (;;) {
        kt_regs_t out = {ep, info(0, r.a1 & 0x7f), r.a2, r.a3, r.a4, r.a5, reply, 0};
        r = kt_syscall(seL4_SysReplyRecv, out);
    }
}

/* Fewest instructions (root side, user and kernel) of 20 Calls of len words. */
static seL4_Word measure_call(seL4_CPtr ep, seL4_Word len)
{
    seL4_Word best = ~0ul;
    for (int i = 0; i < 20; i++) {
        seL4_Word t0 = rdinstret();
        seL4_Call(ep, seL4_MessageInfo_new(0, 0, 0, len));
        seL4_Word d = rdinstret() - t0;
        if (d < best)
            best = d;
    }
    return best;
}

/* Call + ReplyRecv round trips, active server (slow path) and passive
 * server (fastpath up to 4 words), 0, 4 and 120 words; docs/ipc.md. The
 * figures are of the check flavour when run from the suite (they include
 * the invariant checker's work); use a release build to quote. */
KTEST(ipc, report_round_trip_instructions)
{
    kt_threads_cleanup();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    echo_srv = kt_thread_new(150, true, true);
    kt_thread_start(echo_srv, server_echo, ep, make_reply(), 0);
    static const seL4_Word lens[3] = {0, 4, 120};
    seL4_Word active[3], passive[3];
    for (int i = 0; i < 3; i++)
        active[i] = measure_call(ep, lens[i]);
    KASSERT_EQ(seL4_SchedContext_UnbindObject(echo_srv->sc, echo_srv->tcb), seL4_NoError);
    for (int i = 0; i < 3; i++)
        passive[i] = measure_call(ep, lens[i]);
    /* Baseline: one system call that does nothing (Call on a reply
     * object nobody waits on: an empty success reply). */
    seL4_CPtr idle = make_reply();
    seL4_Word base = ~0ul;
    for (int i = 0; i < 20; i++) {
        seL4_Word t0 = rdinstret();
        seL4_Call(idle, seL4_MessageInfo_new(0, 0, 0, 0));
        seL4_Word d = rdinstret() - t0;
        if (d < base)
            base = d;
    }
    printf("ipc-round-trip: active 0w %lu 4w %lu 120w %lu; passive 0w %lu 4w %lu 120w %lu; null call %lu "
           "instructions\n",
           active[0], active[1], active[2], passive[0], passive[1], passive[2], base);
    kt_threads_cleanup();
}

/* ---- cap transfer (k.2) -------------------------------------------------- */

static kt_thread_t *cap_sender;
static seL4_CPtr send_caps[3];

/* Send label 1, no words, n extra caps (send_caps) on ep; then exit. */
static void child_send_caps(seL4_Word ep, seL4_Word n, seL4_Word self)
{
    for (seL4_Word i = 0; i < n; i++)
        cap_sender->ipc_buf[122 + i] = send_caps[i];
    kt_regs_t r = {ep, (1ul << 12) | (n << 7), 0, 0, 0, 0, 0, 0};
    kt_syscall(seL4_SysSend, r);
    flag = 1;
    kt_thread_exit(self);
}

#define TAG_ENDPOINT 4
#define TAG_NOTIFICATION 6

/* The root receives on ep into a fresh receive slot; returns the slot. */
static seL4_CPtr recv_caps(seL4_CPtr ep, seL4_MessageInfo_t *info)
{
    seL4_CPtr slot = kt_slot();
    seL4_SetCapReceivePath(ROOT, slot, 64);
    for (int i = 0; i < 3; i++)
        seL4_GetIPCBuffer()->caps_or_badges[i] = 0xeeee;
    *info = seL4_Recv(ep, NULL, make_reply());
    return slot;
}

static void start_cap_sender(seL4_CPtr send_cap, seL4_Word n)
{
    cap_sender = kt_thread_new(150, true, true);
    kt_thread_start(cap_sender, child_send_caps, send_cap, n, cap_sender->tcb);
}

KTEST(ipc, cap_transfer_with_grant_moves_the_first_cap)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    seL4_CPtr n1 = make_ntfn(), n2 = make_ntfn();
    send_caps[0] = n1;
    send_caps[1] = n2; /* too many: only the first non-endpoint cap moves */
    start_cap_sender(ep, 2);
    seL4_MessageInfo_t info;
    seL4_CPtr slot = recv_caps(ep, &info);
    KASSERT_EQ(seL4_MessageInfo_get_label(info), 1);
    KASSERT_EQ(seL4_MessageInfo_get_extraCaps(info), 1);
    KASSERT_EQ(seL4_MessageInfo_get_capsUnwrapped(info), 0);
    KASSERT_EQ(seL4_DebugCapIdentify(slot), TAG_NOTIFICATION);
    KASSERT_EQ(flag, 1);
    /* The received cap is a copy (a child of the sender's): revoking the
     * original removes it. */
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, n1, 64), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(slot), 0);
    kt_threads_cleanup();
}

KTEST(ipc, cap_transfer_without_grant_moves_nothing)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    send_caps[0] = make_ntfn();
    send_caps[1] = kt_mint(ep, all_rights(), 0x11);
    start_cap_sender(kt_mint(ep, seL4_CapRights_new(1, 0, 1, 1), 0), 2);
    seL4_MessageInfo_t info;
    seL4_CPtr slot = recv_caps(ep, &info);
    KASSERT_EQ(seL4_MessageInfo_get_extraCaps(info), 0);
    KASSERT_EQ(seL4_MessageInfo_get_capsUnwrapped(info), 0);
    KASSERT_EQ(seL4_DebugCapIdentify(slot), 0);
    KASSERT_EQ(seL4_GetBadge(1), 0xeeee);
    kt_threads_cleanup();
}

KTEST(ipc, caps_to_the_receiving_endpoint_are_unwrapped_into_badges)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    seL4_CPtr other = make_ep();
    send_caps[0] = kt_mint(ep, all_rights(), 0x11);
    send_caps[1] = kt_mint(other, all_rights(), 0x33); /* another endpoint: transferred */
    send_caps[2] = kt_mint(ep, all_rights(), 0x22);
    start_cap_sender(ep, 3);
    seL4_MessageInfo_t info;
    seL4_CPtr slot = recv_caps(ep, &info);
    KASSERT_EQ(seL4_MessageInfo_get_extraCaps(info), 3);
    KASSERT_EQ(seL4_MessageInfo_get_capsUnwrapped(info), 5); /* caps 0 and 2 */
    KASSERT_EQ(seL4_GetBadge(0), 0x11);
    KASSERT_EQ(seL4_GetBadge(1), 0xeeee); /* not a badge: untouched */
    KASSERT_EQ(seL4_GetBadge(2), 0x22);
    KASSERT_EQ(seL4_DebugCapIdentify(slot), TAG_ENDPOINT);
    kt_threads_cleanup();
}

KTEST(ipc, cap_transfer_stops_without_a_receive_slot_and_after_lookup_changes)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    /* The receive slot is occupied: no cap moves, unwrapping still works
     * up to the first cap that would. */
    send_caps[0] = kt_mint(ep, all_rights(), 0x44);
    send_caps[1] = make_ntfn();
    send_caps[2] = kt_mint(ep, all_rights(), 0x55);
    start_cap_sender(ep, 3);
    seL4_SetCapReceivePath(ROOT, send_caps[1], 64); /* occupied */
    seL4_GetIPCBuffer()->caps_or_badges[2] = 0xeeee;
    seL4_MessageInfo_t info = seL4_Recv(ep, NULL, make_reply());
    KASSERT_EQ(seL4_MessageInfo_get_extraCaps(info), 1);
    KASSERT_EQ(seL4_MessageInfo_get_capsUnwrapped(info), 1);
    KASSERT_EQ(seL4_GetBadge(0), 0x44);
    KASSERT_EQ(seL4_GetBadge(2), 0xeeee);
    /* A blocked sender whose extra cap was deleted meanwhile: the message
     * arrives without caps. */
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr gone = make_ntfn();
    send_caps[0] = gone;
    start_cap_sender(ep, 1);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, gone, 64), seL4_NoError);
    seL4_CPtr slot = recv_caps(ep, &info);
    KASSERT_EQ(seL4_MessageInfo_get_label(info), 1);
    KASSERT_EQ(seL4_MessageInfo_get_extraCaps(info), 0);
    KASSERT_EQ(seL4_DebugCapIdentify(slot), 0);
    kt_threads_cleanup();
}

KTEST(ipc, invalid_extra_cptr_in_the_middle_is_a_cap_fault_for_send)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    seL4_CPtr fault_ep = make_ep();
    send_caps[0] = make_ntfn();
    send_caps[1] = 1ul << 63; /* fails the root CNode's guard */
    send_caps[2] = make_ntfn();
    cap_sender = kt_thread_new(150, true, true);
    KASSERT_EQ(seL4_TCB_SetSpace(cap_sender->tcb, kt_mint(fault_ep, all_rights(), 0), ROOT, 0,
                                 seL4_CapInitThreadVSpace, 0),
               seL4_NoError);
    kt_thread_start(cap_sender, child_send_caps, ep, 3, cap_sender->tcb);
    seL4_MessageInfo_t info = seL4_Recv(fault_ep, NULL, make_reply());
    KASSERT_EQ(seL4_MessageInfo_get_label(info), seL4_Fault_CapFault);
    KASSERT_EQ(seL4_GetMR(1), 1ul << 63);
    KASSERT_EQ(seL4_GetMR(2), 0);
    /* Nothing was sent. */
    kt_regs_t r = kt_syscall(seL4_SysNBRecv, sentinel_regs(ep, make_reply()));
    KASSERT_EQ(r.a0, 0);
    KASSERT_EQ(r.a1, S1);
    kt_threads_cleanup();
}

/* ---- CancelBadgedSends (k.5) ------------------------------------------------ */

KTEST(ipc, cancel_badged_sends_restarts_the_senders_with_that_badge)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    seL4_CPtr reply = make_reply();
    static const seL4_Word badge[3] = {1, 2, 1};
    for (int i = 0; i < 3; i++) {
        kt_thread_t *t = kt_thread_new(150, true, false);
        kt_thread_start(t, child_send_id, kt_mint(ep, all_rights(), badge[i]), (seL4_Word)i + 1, t->tcb);
    }
    kt_root_prio(200); /* restarted senders must not run yet */
    /* Badge 0 does nothing. */
    KASSERT_EQ(seL4_CNode_CancelBadgedSends(ROOT, ep, 64), seL4_NoError);
    /* Needs all four rights. */
    seL4_CPtr weak = kt_mint(ep, seL4_CapRights_new(0, 1, 1, 1), 1);
    KASSERT_EQ(seL4_CNode_CancelBadgedSends(ROOT, weak, 64), seL4_IllegalOperation);
    seL4_CPtr b1 = kt_mint(ep, all_rights(), 1);
    KASSERT_EQ(seL4_CNode_CancelBadgedSends(ROOT, b1, 64), seL4_NoError);
    /* Only the badge-2 sender is still queued. */
    kt_regs_t r = kt_syscall(seL4_SysNBRecv, sentinel_regs(ep, reply));
    KASSERT_EQ(r.a0, 2);
    KASSERT_EQ(r.a2, 2);
    r = kt_syscall(seL4_SysNBRecv, sentinel_regs(ep, reply));
    KASSERT_EQ(r.a0, 0);
    KASSERT_EQ(r.a1, S1);
    /* The others re-execute their Send once they run. */
    kt_root_prio(100);
    for (int i = 0; i < 2; i++) {
        r = kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply));
        KASSERT_EQ(r.a0, 1);
        KASSERT_EQ(r.a2, i == 0 ? 1 : 3);
    }
    KASSERT_EQ(n_order, 3);
    kt_threads_cleanup();
}

/* ---- deleting objects in the middle of a call --------------------------------- */

/* Passive server `srv` took a call from client `cl` and now waits on its
 * notification, holding the client's SC. */
static void passive_call_in_progress(kt_thread_t **srv, kt_thread_t **cl, seL4_CPtr *reply)
{
    seL4_CPtr ep = make_ep();
    *reply = make_reply();
    *srv = kt_thread_new(150, true, false);
    kt_thread_start(*srv, server_recv_then_wait, ep, *reply, make_ntfn());
    make_passive(*srv);
    *cl = kt_thread_new(140, true, false);
    kt_thread_start(*cl, child_call, ep, 5, (*cl)->tcb);
    KASSERT_EQ(n_got, 1);
    KASSERT(!has_no_sc(*srv));
}

KTEST(ipc, deleting_the_waiting_client_leaves_the_sc_with_the_server)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    kt_thread_t *srv, *cl;
    seL4_CPtr reply;
    passive_call_in_progress(&srv, &cl, &reply);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, cl->tcb, 64), seL4_NoError);
    KASSERT(!has_no_sc(srv)); /* the SC stays where it is */
    /* A reply now reaches nobody. */
    kt_regs_t rep = {reply, info(0, 0), 0, 0, 0, 0, 0, 0};
    kt_syscall(seL4_SysSend, rep);
    KASSERT(!has_no_sc(srv));
    /* Cleanup must not touch the deleted TCB: forget it. */
    cl->tcb = kt_make(seL4_TCBObject, 0);
    kt_threads_cleanup();
}

KTEST(ipc, deleting_the_lent_sc_leaves_the_client_waiting_for_its_reply)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    kt_thread_t *srv, *cl;
    seL4_CPtr reply;
    passive_call_in_progress(&srv, &cl, &reply);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, cl->sc, 64), seL4_NoError);
    KASSERT(has_no_sc(srv));
    /* The reply still arrives, but the client has no SC to run on until it
     * is given one. */
    kt_regs_t rep = {reply, info(3, 1), 0x42, 0, 0, 0, 0, 0};
    kt_syscall(seL4_SysSend, rep);
    kt_yield_n(3);
    KASSERT_EQ(n_got, 1);
    seL4_CPtr sc = kt_make_sc();
    KASSERT_EQ(seL4_SchedContext_Bind(sc, cl->tcb), seL4_NoError);
    KASSERT_EQ(n_got, 2);
    KASSERT_EQ(got_at(1).a1, info(3, 1));
    KASSERT_EQ(got_at(1).a2, 0x42);
    cl->sc = sc;
    kt_threads_cleanup();
}

KTEST(ipc, deleting_the_server_then_its_reply_returns_the_sc_to_the_client)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    kt_thread_t *srv, *cl;
    seL4_CPtr reply;
    passive_call_in_progress(&srv, &cl, &reply);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, srv->tcb, 64), seL4_NoError);
    KASSERT(!sc_is_bound(cl->sc)); /* unbound, still on the call stack */
    KASSERT_EQ(seL4_CNode_Delete(ROOT, reply, 64), seL4_NoError);
    KASSERT(sc_is_bound(cl->sc)); /* back with the client (inactive, no message) */
    KASSERT_EQ(flag, 1);
    KASSERT_EQ(n_got, 1);
    srv->tcb = kt_make(seL4_TCBObject, 0);
    kt_threads_cleanup();
}

/* ---- random IPC, donation and deletion under the invariant checker --------- */

#define R_EPS 3
#define R_REPLIES 4
#define R_CHILDREN 4
static seL4_CPtr r_ep[R_EPS], r_reply[R_REPLIES];
static volatile seL4_Word r_ops[R_CHILDREN];

static seL4_Word lcg(seL4_Word *s)
{
    *s = *s * 6364136223846793005ul + 1442695040888963407ul;
    return *s >> 33;
}

/* A child doing random system calls on the shared endpoints and replies. */
static void random_ipc_child(seL4_Word id, seL4_Word seed, seL4_Word unused)
{
    (void)unused;
    seL4_Word s = seed;
    for (;;) {
        seL4_CPtr ep = r_ep[lcg(&s) % R_EPS];
        seL4_CPtr rp = r_reply[lcg(&s) % R_REPLIES];
        kt_regs_t r = {ep, info(lcg(&s) % 4, lcg(&s) % 5), id, 0, 0, 0, rp, r_ep[lcg(&s) % R_EPS]};
        static const seL4_Word sys[] = {seL4_SysCall, seL4_SysSend, seL4_SysNBSend, seL4_SysRecv,
                                        seL4_SysNBRecv, seL4_SysReplyRecv, seL4_SysWait, seL4_SysNBWait,
                                        seL4_SysNBSendRecv, seL4_SysNBSendWait};
        seL4_Word k = lcg(&s) % 10;
        if (k == 5 || k == 8) /* ReplyRecv, NBSendRecv: reply to rp first / send to t0 */
            r.a6 = rp;
        if (k == 1 || k == 2) /* sometimes reply with Send on a reply cap */
            r.a0 = (lcg(&s) & 1) ? rp : ep;
        kt_syscall(sys[k], r);
        r_ops[id]++;
    }
}

KTEST(ipc, random_ipc_donation_and_deletion_keep_the_invariants)
{
    kt_threads_cleanup();
    kt_root_prio(100);
    for (int i = 0; i < R_EPS; i++)
        r_ep[i] = make_ep();
    for (int i = 0; i < R_REPLIES; i++)
        r_reply[i] = make_reply();
    kt_thread_t *c[R_CHILDREN];
    for (int i = 0; i < R_CHILDREN; i++) {
        r_ops[i] = 0;
        c[i] = kt_thread_new(100, true, false);
        kt_thread_start(c[i], random_ipc_child, (seL4_Word)i, 0x1234567ul * (seL4_Word)(i + 1), 0);
    }
    seL4_Word s = 0xfeed;
    int deletes = 0, passives = 0;
    for (int op = 0; op < 1500; op++) {
        if (op % 8 == 0) {
            /* Children stuck for good (made inactive by a cancelled call,
             * a deleted reply, ...) or blocked restart their last call. */
            for (int i = 0; i < R_CHILDREN; i++)
                KASSERT_EQ(seL4_TCB_Resume(c[i]->tcb), seL4_NoError);
        }
        switch (lcg(&s) % 10) {
        case 0: { /* delete and re-create an endpoint in the same slot */
            int k = (int)(lcg(&s) % R_EPS);
            /* Above the children, so that none sees the slot empty (the
             * root's time slice may end in between). */
            kt_root_prio(200);
            KASSERT_EQ(seL4_CNode_Delete(ROOT, r_ep[k], 64), seL4_NoError);
            seL4_CPtr fresh = make_ep();
            KASSERT_EQ(seL4_CNode_Move(ROOT, r_ep[k], 64, ROOT, fresh, 64), seL4_NoError);
            kt_root_prio(100);
            deletes++;
            break;
        }
        case 1: { /* the same for a reply object */
            int k = (int)(lcg(&s) % R_REPLIES);
            /* Above the children, so that none sees the slot empty (the
             * root's time slice may end in between). */
            kt_root_prio(200);
            KASSERT_EQ(seL4_CNode_Delete(ROOT, r_reply[k], 64), seL4_NoError);
            seL4_CPtr fresh = make_reply();
            KASSERT_EQ(seL4_CNode_Move(ROOT, r_reply[k], 64, ROOT, fresh, 64), seL4_NoError);
            kt_root_prio(100);
            deletes++;
            break;
        }
        case 2: { /* make a blocked child passive, or give its SC back */
            kt_thread_t *t = c[lcg(&s) % R_CHILDREN];
            if (seL4_SchedContext_UnbindObject(t->sc, t->tcb) == seL4_NoError)
                passives++;
            else
                (void)seL4_SchedContext_Bind(t->sc, t->tcb);
            break;
        }
        case 3: { /* suspend and resume (restarts whatever it was doing) */
            kt_thread_t *t = c[lcg(&s) % R_CHILDREN];
            KASSERT_EQ(seL4_TCB_Suspend(t->tcb), seL4_NoError);
            KASSERT_EQ(seL4_TCB_Resume(t->tcb), seL4_NoError);
            break;
        }
        case 4: { /* a priority change re-queues */
            kt_thread_t *t = c[lcg(&s) % R_CHILDREN];
            KASSERT_EQ(seL4_TCB_SetPriority(t->tcb, SELF, 95 + lcg(&s) % 10), seL4_NoError);
            break;
        }
        case 5: /* wake a receiver */
            seL4_NBSend(r_ep[lcg(&s) % R_EPS], seL4_MessageInfo_new(0, 0, 0, 0));
            break;
        case 6: /* take a sender (a caller then waits on one of the replies) */
            (void)seL4_NBRecv(r_ep[lcg(&s) % R_EPS], NULL, r_reply[lcg(&s) % R_REPLIES]);
            break;
        case 7: /* reply through one of the reply objects */
            seL4_Send(r_reply[lcg(&s) % R_REPLIES], seL4_MessageInfo_new(0, 0, 0, 1));
            break;
        default:
            seL4_Yield();
            break;
        }
    }
    seL4_Word total = 0;
    for (int i = 0; i < R_CHILDREN; i++)
        total += r_ops[i];
    printf("ipc-random: 1500 root operations (%d deletions, %d made passive), %lu child system calls\n", deletes,
           passives, (unsigned long)total);
    KASSERT(total > 20); /* children spend most of the run blocked or without an SC */
    kt_threads_cleanup();
}

/* ---- a passive server woken through its bound notification (k.4) ------------ */

/* Recv on ep (with a bound notification): log, then Recv again for ever. */
static void server_recv_loop(seL4_Word ep, seL4_Word reply, seL4_Word unused)
{
    (void)unused;
    for (;;) {
        log_regs(kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply)));
        flag++;
    }
}

KTEST(ipc, passive_server_woken_by_its_bound_notification_runs_on_its_sc)
{
    kt_threads_cleanup();
    reset_log();
    kt_root_prio(100);
    seL4_CPtr ep = make_ep();
    seL4_CPtr ntfn = make_ntfn();
    seL4_CPtr nsc = kt_make_sc();
    KASSERT_EQ(seL4_SchedContext_Bind(nsc, ntfn), seL4_NoError);
    kt_thread_t *srv = kt_thread_new(150, true, false);
    KASSERT_EQ(seL4_TCB_BindNotification(srv->tcb, ntfn), seL4_NoError);
    kt_thread_start(srv, server_recv_loop, ep, make_reply(), 0);
    make_passive(srv);
    KASSERT_EQ(flag, 0);
    /* A signal wakes it from the endpoint receive on the notification's
     * SC: a0 = the badge, nothing else written. */
    seL4_Signal(kt_mint(ntfn, seL4_AllRights, 0x8));
    KASSERT_EQ(flag, 1);
    KASSERT_EQ(got_at(0).a0, 0x8);
    KASSERT_EQ(got_at(0).a1, S1);
    /* Blocking in the receive again gave the SC back to the notification:
     * the server has none, and the SC can serve the next signal. */
    KASSERT(has_no_sc(srv));
    seL4_Signal(kt_mint(ntfn, seL4_AllRights, 0x10));
    KASSERT_EQ(flag, 2);
    KASSERT_EQ(got_at(1).a0, 0x10);
    /* A Call still lends the caller's SC as usual. */
    kt_regs_t c = {ep, info(1, 1), 7, 0, 0, 0, 0, 0};
    kt_syscall(seL4_SysNBSend, c);
    KASSERT_EQ(flag, 2); /* NBSend: delivered, but the server has no SC... */
    KASSERT_EQ(seL4_SchedContext_UnbindObject(nsc, ntfn), seL4_NoError);
    kt_threads_cleanup();
}
