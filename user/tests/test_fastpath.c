/*
 * Fastpath/slowpath equivalence (issue 6): every scenario runs twice, first
 * with the IPC fastpath on and then with it off (kairos_debug_set_fastpath,
 * debug kernels), on fresh objects in the same slots and threads with the
 * same stacks, so that both runs see the same cptrs and addresses. Each run
 * records every observable it can reach from user mode:
 *  - the registers every child got back from each system call (a0-a6, t0:
 *    badge, message info with label/length/extraCaps/capsUnwrapped, MR0-3,
 *    the words beyond the length that must stay untouched), MR4 and the
 *    caps_or_badges words of IPC buffers, in the order the children ran;
 *  - all 32 registers of blocked threads (seL4_TCB_ReadRegisters);
 *  - scheduling-context ownership: whether each thread has an SC (binding a
 *    spare SC succeeds only if it has none) and whether each SC is bound
 *    (binding it to a spare TCB fails then); both probes are undone;
 *  - reply-object and endpoint state through probes at the end: a second
 *    reply through the same reply cap (must reach nobody), then an NBSend
 *    to the endpoint, which a thread still receiving there gets (its
 *    registers show it);
 *  - which children ran, and in which order (the log).
 * The two records are compared field by field; every differing field is
 * printed with both values. The kernel's counters (KAIROS_COUNTER_FASTPATH_*)
 * show which path each IPC took: at marked points of the fastpath-on run
 * they must have grown by exactly the number of IPCs that meet the fastpath
 * conditions (docs/ipc.md), and in the fastpath-off run never.
 *
 * Cases: 0, 1, 4 words (fast), 5 words with IPC buffers, 5 words cut to 4
 * and length 127 (slow); labels and badges up to their widths, capsUnwrapped
 * bits set by the sender; caps with GrantReply only, Grant only (fast),
 * Write only, no Write (slow); a client -> passive -> passive chain; an
 * active server, a receiver that used Wait, a replier with a bound
 * notification; a ready thread above or equal to the receiver or the
 * caller; extraCaps in the Call or in the reply; ReplyRecv with a queued
 * sender, as a server's first call, after its caller was suspended, with a
 * second server of equal or lower priority queued, and to a thread waiting
 * for a fault reply; 1000 round trips of random labels, lengths 0-5 and
 * words with checksums.
 *
 * Children come from framework/threads.h and use kt_syscall only. Every
 * thread that makes an IPC meant to be fast runs on a round-robin SC of
 * 1000 s, so that its budget never comes near its end (a fastpath
 * condition) even when QEMU's timer runs on the host clock.
 */
#include <ktest.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>

#define ROOT KT_ROOT

static seL4_Word info(seL4_Word label, seL4_Word len) { return (label << 12) | len; }
static seL4_Word info_caps(seL4_Word label, seL4_Word extra, seL4_Word len) { return (label << 12) | (extra << 7) | len; }

#define S1 0x5151515151515151ul
#define S2 0x5252525252525252ul
#define S3 0x5353535353535353ul
#define S4 0x5454545454545454ul
#define S5 0x5555555555555555ul
#define S6 0x5656565656565656ul

#define BIG_BUDGET_US 1000000000ul /* 1000 s: never near its end in a test */

#define BUF_MR4 5         /* seL4_IPCBuffer words: tag, msg[120], userData, */
#define BUF_CAPS 122      /* caps_or_badges[3], receiveCNode, receiveIndex,  */
#define BUF_RECV_CNODE 125 /* receiveDepth */

#define TAG_NOTIFICATION 6

/* ---- slots that are the same in both runs ---------------------------- */

enum {
    F_EP,
    F_EP2,
    F_REPLY,
    F_REPLY2,
    F_GATE,
    F_SIG,
    F_NTFN,
    F_CAP,
    F_CAP2,
    F_XCAP,
    F_RSLOT_S,
    F_RSLOT_C,
    F_TCB0,
    F_SC0 = F_TCB0 + KT_MAX_THREADS,
    F_COUNT = F_SC0 + KT_MAX_THREADS
};
static seL4_CPtr fslot[F_COUNT];

static seL4_CPtr fs(int i)
{
    if (fslot[0] == 0)
        for (int k = 0; k < F_COUNT; k++)
            fslot[k] = kt_slot();
    return fslot[i];
}

static void fp_clear(int i) { KASSERT_EQ(seL4_CNode_Delete(ROOT, fs(i), 64), seL4_NoError); }

static seL4_CPtr fp_untyped(void) { return kt_pool(); }

/* A fresh object in fixed slot i (whatever was there is deleted). */
static seL4_CPtr fp_obj(int i, seL4_Word type, seL4_Word bits)
{
    fp_clear(i);
    seL4_Error e = seL4_Untyped_Retype(fp_untyped(), type, bits, ROOT, 0, 0, fs(i), 1);
    KASSERT_MSG(e == seL4_NoError, "retype of type %lu failed: %d", (unsigned long)type, (int)e);
    return fs(i);
}

static seL4_CPtr fp_mint(int i, seL4_CPtr src, seL4_CapRights_t rights, seL4_Word badge)
{
    fp_clear(i);
    KASSERT_EQ(seL4_CNode_Mint(ROOT, fs(i), 64, ROOT, src, 64, rights, badge), seL4_NoError);
    return fs(i);
}

static seL4_CPtr fp_ep(int i) { return fp_obj(i, seL4_EndpointObject, 0); }
static seL4_CPtr fp_reply(int i) { return fp_obj(i, seL4_ReplyObject, 0); }
static seL4_CPtr fp_ntfn(int i) { return fp_obj(i, seL4_NotificationObject, 0); }

static seL4_CapRights_t all_rights(void) { return seL4_CapRights_new(1, 1, 1, 1); }

/* A child (threads.h) whose TCB and SC live in fixed slots; its SC is a
 * round-robin one of BIG_BUDGET_US, bound if with_sc. */
static kt_thread_t *fp_thread(seL4_Word prio, bool with_sc, bool ipc_buffer)
{
    kt_thread_t *t = kt_thread_new(prio, false, ipc_buffer);
    int k = t->index;
    fp_clear(F_TCB0 + k);
    KASSERT_EQ(seL4_CNode_Move(ROOT, fs(F_TCB0 + k), 64, ROOT, t->tcb, 64), seL4_NoError);
    t->tcb = fs(F_TCB0 + k);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, t->sc, 64), seL4_NoError); /* threads.c's 1 ms SC */
    t->sc = fp_obj(F_SC0 + k, seL4_SchedContextObject, 8);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(kt_sched_control(), t->sc, BIG_BUDGET_US, BIG_BUDGET_US, 0, 0, 0),
               seL4_NoError);
    if (with_sc)
        KASSERT_EQ(seL4_SchedContext_Bind(t->sc, t->tcb), seL4_NoError);
    return t;
}

/* ---- what children saw: one ordered log ---------------------------------- */

#define LOG_MAX 24
enum { EV_GOT = 1, EV_BUF, EV_BACK, EV_RESUMED, EV_REPLY, EV_REPLY_BUF, EV_DONE, EV_RAN };
#define TAG(id, ev) (((seL4_Word)(id) << 8) | (ev))

static volatile seL4_Word log_tag[LOG_MAX];
static volatile seL4_Word log_w[LOG_MAX][8];
static volatile seL4_Word n_log;

static void log_words(seL4_Word tag, const seL4_Word *w, int n)
{
    seL4_Word i = n_log;
    if (i < LOG_MAX) {
        log_tag[i] = tag;
        for (int k = 0; k < 8; k++)
            log_w[i][k] = k < n ? w[k] : 0;
    }
    n_log = i + 1;
}

static void log_regs(seL4_Word tag, kt_regs_t r)
{
    seL4_Word w[8] = {r.a0, r.a1, r.a2, r.a3, r.a4, r.a5, r.a6, r.t0};
    log_words(tag, w, 8);
}

static void log_event(seL4_Word tag) { log_words(tag, NULL, 0); }

/* MR4, MR5 and caps_or_badges[0..2] of an IPC buffer. */
static void log_buffer(seL4_Word tag, const seL4_Word *buf)
{
    seL4_Word w[5] = {buf[BUF_MR4], buf[BUF_MR4 + 1], buf[BUF_CAPS], buf[BUF_CAPS + 1], buf[BUF_CAPS + 2]};
    log_words(tag, w, 5);
}

static seL4_Word log_find(seL4_Word tag)
{
    seL4_Word n = n_log < LOG_MAX ? n_log : LOG_MAX;
    for (seL4_Word i = 0; i < n; i++)
        if (log_tag[i] == tag)
            return i;
    KFAIL("no log entry with tag %#lx", (unsigned long)tag);
}

/* ---- observations and their comparison ------------------------------------ */

#define OBS_MAX 640
#define MARK_MAX 8
typedef struct {
    char name[44];
    seL4_Word val;
} obs_entry_t;
typedef struct {
    const char *phase;
    seL4_Word call, rr;         /* counter growth since the run started */
    seL4_Word exp_call, exp_rr; /* expected with the fastpath on */
} mark_t;
typedef struct {
    int n, overflow;
    obs_entry_t e[OBS_MAX];
    int n_marks;
    mark_t m[MARK_MAX];
} obs_t;

static obs_t runs[2]; /* [0]: fastpath on, [1]: off */
static obs_t *cur;
static seL4_Word base_call, base_rr;

__attribute__((format(printf, 2, 3))) static void put(seL4_Word v, const char *fmt, ...)
{
    if (cur->n >= OBS_MAX) {
        cur->overflow = 1;
        return;
    }
    obs_entry_t *e = &cur->e[cur->n++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->name, sizeof(e->name), fmt, ap);
    va_end(ap);
    e->val = v;
}

static seL4_Word ctr_call(void) { return kairos_debug_counter(KAIROS_COUNTER_FASTPATH_CALL); }
static seL4_Word ctr_rr(void) { return kairos_debug_counter(KAIROS_COUNTER_FASTPATH_REPLY_RECV); }

/* How many Calls and ReplyRecvs have taken the fastpath since the run
 * started; with the fastpath on, exp_call and exp_rr are expected. */
static void mark(const char *phase, seL4_Word exp_call, seL4_Word exp_rr)
{
    KASSERT(cur->n_marks < MARK_MAX);
    mark_t *m = &cur->m[cur->n_marks++];
    m->phase = phase;
    m->call = ctr_call() - base_call;
    m->rr = ctr_rr() - base_rr;
    m->exp_call = exp_call;
    m->exp_rr = exp_rr;
}

static void put_regs(const char *who, kt_regs_t r)
{
    put(r.a0, "%s.a0", who);
    put(r.a1, "%s.a1", who);
    put(r.a2, "%s.a2", who);
    put(r.a3, "%s.a3", who);
    put(r.a4, "%s.a4", who);
    put(r.a5, "%s.a5", who);
    put(r.a6, "%s.a6", who);
    put(r.t0, "%s.t0", who);
}

static const char *const ctx_names[32] = {"pc", "ra", "sp", "gp", "s0", "s1", "s2", "s3", "s4", "s5", "s6",
                                          "s7", "s8", "s9", "s10", "s11", "a0", "a1", "a2", "a3", "a4", "a5",
                                          "a6", "a7", "t0", "t1", "t2", "t3", "t4", "t5", "t6", "tp"};

/* All registers of a thread that is not running (blocked, inactive, or
 * runnable without an SC). */
static void put_ctx(const char *who, kt_thread_t *t)
{
    seL4_UserContext ctx;
    memset(&ctx, 0, sizeof(ctx));
    seL4_Error e = seL4_TCB_ReadRegisters(t->tcb, 0, 0, sizeof(ctx) / sizeof(seL4_Word), &ctx);
    put((seL4_Word)e, "%s.ReadRegisters", who);
    const seL4_Word *w = (const seL4_Word *)&ctx;
    for (int i = 0; i < 32; i++)
        put(w[i], "%s.ctx.%s", who, ctx_names[i]);
}

/* Does blocked or inactive thread t hold an SC (its own or a lent one)?
 * Binding a spare SC succeeds only if it holds none; undone at once. Not
 * for a thread that is runnable without an SC (it would run). */
static seL4_CPtr spare_sc;
static bool has_sc(kt_thread_t *t)
{
    if (!spare_sc) {
        spare_sc = kt_make(seL4_SchedContextObject, 8);
        KASSERT_EQ(seL4_SchedControl_ConfigureFlags(kt_sched_control(), spare_sc, 1000, 1000, 0, 0, 0), seL4_NoError);
    }
    seL4_Error e = seL4_SchedContext_Bind(spare_sc, t->tcb);
    if (e != seL4_NoError)
        return true;
    KASSERT_EQ(seL4_SchedContext_UnbindObject(spare_sc, t->tcb), seL4_NoError);
    return false;
}

/* Is sc bound to some thread? Binding it to a spare TCB fails then. */
static seL4_CPtr spare_tcb;
static bool sc_bound(seL4_CPtr sc)
{
    if (!spare_tcb)
        spare_tcb = kt_make(seL4_TCBObject, 0);
    seL4_Error e = seL4_SchedContext_Bind(sc, spare_tcb);
    if (e != seL4_NoError)
        return true;
    KASSERT_EQ(seL4_SchedContext_UnbindObject(sc, spare_tcb), seL4_NoError);
    return false;
}

static void put_has_sc(const char *who, kt_thread_t *t) { put(has_sc(t), "%s.has_sc", who); }
static void put_sc_bound(const char *who, kt_thread_t *t) { put(sc_bound(t->sc), "%s.own_sc_bound", who); }
/* Everything observable of t at a checkpoint: registers, whether it holds
 * an SC, whether its own SC is bound. */
static void put_state(const char *who, kt_thread_t *t)
{
    put_ctx(who, t);
    put_has_sc(who, t);
    put_sc_bound(who, t);
}

static void put_log(void)
{
    put(n_log, "log.count");
    seL4_Word n = n_log < LOG_MAX ? n_log : LOG_MAX;
    static const char *const w_names[8] = {"a0", "a1", "a2", "a3", "a4", "a5", "a6", "t0"};
    for (seL4_Word i = 0; i < n; i++) {
        put(log_tag[i], "log[%lu].tag", (unsigned long)i);
        for (int k = 0; k < 8; k++)
            put(log_w[i][k], "log[%lu].%s", (unsigned long)i, w_names[k]);
    }
}

/* A second reply through the reply cap must reach nobody; an NBSend to the
 * endpoint reaches a thread still receiving there. Record what they did. */
static void probe_reply_and_endpoint(seL4_CPtr reply, seL4_CPtr ep)
{
    kt_regs_t r = {reply, info(0x3f3, 1), 0xfeed01, S3, S4, S5, 0, 0};
    put_regs("probe.second_reply.root", kt_syscall(seL4_SysSend, r));
    put(n_log, "probe.second_reply.log_count");
    kt_regs_t p = {ep, info(0x3f4, 2), 0xfeed02, 0xfeed03, S4, S5, 0, 0};
    put_regs("probe.nbsend.root", kt_syscall(seL4_SysNBSend, p));
    put(n_log, "probe.nbsend.log_count");
}

static bool fp_boot_setting_known, fp_boot_setting;
static int n_failed_cases;
static const char *first_failed_case;

/* The setting the suite started with; every test restores it at its end,
 * and at its start (in case the test before failed half-way). */
static void fp_begin(void)
{
    n_failed_cases = 0;
    first_failed_case = "";
    if (!fp_boot_setting_known) {
        fp_boot_setting = kairos_debug_set_fastpath(true);
        fp_boot_setting_known = true;
    }
    kairos_debug_set_fastpath(fp_boot_setting);
    kt_threads_cleanup();
}

static void fp_end(void)
{
    kt_threads_cleanup();
    KASSERT_EQ(kairos_debug_set_fastpath(fp_boot_setting), false); /* the off run came last */
    KASSERT_MSG(n_failed_cases == 0, "%d case(s) where the fastpath and the slow path differ, first \"%s\"",
                n_failed_cases, first_failed_case);
}

/* Run scenario fn(variant) with the fastpath on and then off; compare.
 * Differences are printed and counted in n_failed_cases (the test fails at
 * its end, so that every case of a test is reported). */
static void equivalent(const char *name, void (*fn)(seL4_Word), seL4_Word variant)
{
    for (int mode = 0; mode < 2; mode++) {
        kt_threads_cleanup();
        n_log = 0;
        cur = &runs[mode];
        cur->n = 0;
        cur->overflow = 0;
        cur->n_marks = 0;
        kairos_debug_set_fastpath(mode == 0);
        base_call = ctr_call();
        base_rr = ctr_rr();
        fn(variant);
        kt_threads_cleanup();
        KASSERT_MSG(!cur->overflow, "%s: more than %d observations", name, OBS_MAX);
    }
    obs_t *on = &runs[0], *off = &runs[1];
    /* Counters first: which path each run took. */
    int bad_ctr = 0;
    int n_marks = on->n_marks < off->n_marks ? on->n_marks : off->n_marks;
    for (int i = 0; i < n_marks; i++) {
        mark_t *a = &on->m[i], *b = &off->m[i];
        if (a->call != a->exp_call || a->rr != a->exp_rr) {
            printf("fastpath: %s: at \"%s\" with the fastpath on: %lu Calls and %lu ReplyRecvs fast, expected %lu "
                   "and %lu\n",
                   name, a->phase, (unsigned long)a->call, (unsigned long)a->rr, (unsigned long)a->exp_call,
                   (unsigned long)a->exp_rr);
            bad_ctr++;
        }
        if (b->call != 0 || b->rr != 0) {
            printf("fastpath: %s: at \"%s\" with the fastpath off: %lu Calls and %lu ReplyRecvs fast\n", name,
                   b->phase, (unsigned long)b->call, (unsigned long)b->rr);
            bad_ctr++;
        }
    }
    /* Then every observation, field by field. */
    int bad = 0;
    const char *first = "";
    int n = on->n < off->n ? on->n : off->n;
    for (int i = 0; i < n; i++) {
        /* The runs went different ways (a different number of log
         * entries, say): the names part; report where. */
        KASSERT_MSG(strcmp(on->e[i].name, off->e[i].name) == 0,
                    "%s: observation %d is %s (%#lx) with the fastpath, %s (%#lx) without", name, i, on->e[i].name,
                    (unsigned long)on->e[i].val, off->e[i].name, (unsigned long)off->e[i].val);
        if (on->e[i].val != off->e[i].val) {
            printf("fastpath: %s: %s differs: fastpath %#lx, slow path %#lx\n", name, on->e[i].name,
                   (unsigned long)on->e[i].val, (unsigned long)off->e[i].val);
            if (!bad++)
                first = on->e[i].name;
        }
    }
    KASSERT_MSG(on->n_marks > 0 && on->n_marks == off->n_marks, "%s: marks: %d with the fastpath, %d without", name,
                on->n_marks, off->n_marks);
    mark_t *last = &on->m[on->n_marks - 1];
    printf("fastpath: %s: %d observations, %d differ; fast Calls %lu, fast ReplyRecvs %lu (slow run %lu, %lu)\n",
           name, on->n, bad, (unsigned long)last->call, (unsigned long)last->rr,
           (unsigned long)off->m[off->n_marks - 1].call, (unsigned long)off->m[off->n_marks - 1].rr);
    if (bad)
        printf("fastpath: %s: FAIL: %d observations differ between fastpath and slow path, first %s\n", name, bad,
               first);
    if (on->n != off->n)
        printf("fastpath: %s: FAIL: %d observations with the fastpath, %d without\n", name, on->n, off->n);
    if (bad_ctr)
        printf("fastpath: %s: FAIL: %d fastpath counter mismatches (see above)\n", name, bad_ctr);
    if (bad || on->n != off->n || bad_ctr) {
        if (!n_failed_cases++)
            first_failed_case = name;
    }
}

/* ---- children --------------------------------------------------------------- */

static kt_regs_t sentinel_regs(seL4_Word a0, seL4_Word a6)
{
    kt_regs_t r = {a0, S1, S2, S3, S4, S5, a6, 0x70};
    return r;
}

static seL4_Word mangle(seL4_Word x, seL4_Word k) { return (x ^ 0x0f0f0f0f0f0f0f0ful) + 3 * k + 1; }

typedef struct {
    int id;
    kt_thread_t *t;
    seL4_CPtr ep, reply;
    seL4_Word recv_sys;  /* seL4_SysRecv, seL4_SysWait, or seL4_SysReplyRecv (start with a reply) */
    seL4_CPtr fwd;       /* forward every request by Call to this endpoint cap */
    seL4_CPtr gate;      /* Wait here after request k if bit k of pause_mask */
    seL4_Word pause_mask;
    seL4_CPtr sig;       /* Signal it before replying to request k if bit k of sig_mask */
    seL4_Word sig_mask;
    seL4_Word reply_caps; /* extraCaps of the replies (cap: xcap) */
    seL4_CPtr xcap;
} srv_t;

typedef struct {
    int id;
    kt_thread_t *t;
    int n;
    kt_regs_t req[3];
    seL4_Word mr4;  /* written to the IPC buffer for long messages */
    seL4_CPtr xcap; /* cap for messages with extraCaps */
} cli_t;

/* Server: receive, then for ever: log the request (and its buffer), forward
 * it if asked, pause if asked, signal if asked, reply with label ^ 1, the
 * same length, mangled words (all four registers, and MR4), by ReplyRecv. */
static void server_main(seL4_Word arg, seL4_Word unused1, seL4_Word unused2)
{
    (void)unused1;
    (void)unused2;
    srv_t *s = (srv_t *)arg;
    kt_regs_t r;
    if (s->recv_sys == (seL4_Word)seL4_SysReplyRecv) {
        kt_regs_t first = {s->ep, info(0x5e, 1), 0x5e, S3, S4, S5, s->reply, 0x71};
        r = kt_syscall(seL4_SysReplyRecv, first);
    } else {
        r = kt_syscall(s->recv_sys, sentinel_regs(s->ep, s->reply));
    }
    for (seL4_Word k = 0;; k++) {
        log_regs(TAG(s->id, EV_GOT), r);
        if (s->t->ipc_buf)
            log_buffer(TAG(s->id, EV_BUF), s->t->ipc_buf);
        seL4_Word label = r.a1 >> 12, len = r.a1 & 0x7f;
        seL4_Word w[4] = {r.a2, r.a3, r.a4, r.a5};
        if (s->fwd) {
            kt_regs_t c = {s->fwd, info(label ^ 0x100, len), r.a2, r.a3, r.a4, r.a5, S6, 0x72};
            kt_regs_t back = kt_syscall(seL4_SysCall, c);
            log_regs(TAG(s->id, EV_BACK), back);
            label = back.a1 >> 12;
            len = back.a1 & 0x7f;
            w[0] = back.a2;
            w[1] = back.a3;
            w[2] = back.a4;
            w[3] = back.a5;
        }
        if ((s->pause_mask >> k) & 1) {
            log_regs(TAG(s->id, EV_RESUMED), kt_syscall(seL4_SysWait, sentinel_regs(s->gate, 0)));
        }
        if (s->sig && ((s->sig_mask >> k) & 1)) {
            kt_regs_t sg = {s->sig, 0, 0, 0, 0, 0, 0, 0};
            kt_syscall(seL4_SysSend, sg);
        }
        if (s->t->ipc_buf) {
            s->t->ipc_buf[BUF_MR4] = mangle(s->t->ipc_buf[BUF_MR4], 4);
            s->t->ipc_buf[BUF_CAPS] = s->xcap;
        }
        kt_regs_t out = {s->ep,          info_caps(label ^ 1, s->reply_caps, len),
                         mangle(w[0], 0), mangle(w[1], 1),
                         mangle(w[2], 2), mangle(w[3], 3),
                         s->reply,        0x73 + k};
        r = kt_syscall(seL4_SysReplyRecv, out);
    }
}

/* Client: n Calls of req[i] (long messages: MR4 from mr4; caps: xcap), log
 * each reply (and its buffer), then suspend itself. */
static void client_main(seL4_Word arg, seL4_Word unused1, seL4_Word unused2)
{
    (void)unused1;
    (void)unused2;
    cli_t *c = (cli_t *)arg;
    for (int i = 0; i < c->n; i++) {
        if (c->t->ipc_buf) {
            c->t->ipc_buf[BUF_MR4] = c->mr4 + (seL4_Word)i;
            c->t->ipc_buf[BUF_CAPS] = c->xcap;
        }
        kt_regs_t r = kt_syscall(seL4_SysCall, c->req[i]);
        log_regs(TAG(c->id, EV_REPLY), r);
        if (c->t->ipc_buf)
            log_buffer(TAG(c->id, EV_REPLY_BUF), c->t->ipc_buf);
    }
    log_event(TAG(c->id, EV_DONE));
    kt_thread_exit(c->t->tcb);
}

/* A bystander: logs each time it runs, then waits on its notification. */
static void helper_main(seL4_Word id, seL4_Word ntfn, seL4_Word unused)
{
    (void)unused;
    for (;;) {
        log_event(TAG(id, EV_RAN));
        kt_syscall(seL4_SysWait, sentinel_regs(ntfn, 0));
    }
}

/* Start server t on s; it runs on its own SC until it blocks in its first
 * receive (the root drops below it), then loses the SC if passive. */
static void start_server(kt_thread_t *t, srv_t *s, bool passive)
{
    s->t = t;
    kt_thread_start(t, server_main, (seL4_Word)s, 0, 0);
    kt_root_prio(50);
    if (passive)
        KASSERT_EQ(seL4_SchedContext_UnbindObject(t->sc, t->tcb), seL4_NoError);
}

static kt_regs_t request(seL4_CPtr cap, seL4_Word info_word, seL4_Word k)
{
    kt_regs_t r = {cap, info_word, 0x1000 + k, 0x2000 + k, 0x3000 + k, 0x4000 + k, S6, 0x70 + k};
    return r;
}

static srv_t srv_a, srv_b, srv_c;
static cli_t cli_a, cli_b;

/* ==== 1. one Call and its ReplyRecv: lengths, labels, badges, rights ========== */

typedef struct {
    seL4_Word len, label, badge;
    seL4_Word sender_bits;  /* extra bits the sender sets in the info word (capsUnwrapped) */
    seL4_CapRights_t rights;
    bool buffers;          /* client and server have IPC buffers */
    seL4_Word fast_call, fast_rr;
    bool server_runs;      /* the Call lends the client's SC to the server */
    bool call_delivers;    /* the server gets the message */
} basic_case_t;

static basic_case_t bc;

static void scenario_basic(seL4_Word unused)
{
    (void)unused;
    seL4_CPtr ep = fp_ep(F_EP);
    seL4_CPtr reply = fp_reply(F_REPLY);
    seL4_CPtr gate = fp_ntfn(F_GATE);
    seL4_CPtr cap = fp_mint(F_CAP, ep, bc.rights, bc.badge);
    kt_thread_t *s = fp_thread(200, true, bc.buffers);
    kt_thread_t *c = fp_thread(150, true, bc.buffers);
    srv_a = (srv_t){.id = 1, .ep = ep, .reply = reply, .recv_sys = seL4_SysRecv, .gate = gate, .pause_mask = 1};
    start_server(s, &srv_a, true);
    put_ctx("server.before", s);
    cli_a = (cli_t){.id = 2, .t = c, .n = 1, .mr4 = 0x4444};
    cli_a.req[0] = request(cap, info(bc.label, bc.len) | bc.sender_bits, 0);
    kt_thread_start(c, client_main, (seL4_Word)&cli_a, 0, 0);
    /* The client has called; the server (if it got the client's SC) took
     * the request and waits on the gate. */
    mark("after the Call", bc.fast_call, 0);
    put_log();
    put_ctx("client.mid", c);
    put_ctx("server.mid", s);
    put_sc_bound("client.mid", c);
    put_sc_bound("server.mid", s);
    put_has_sc("client.mid", c);
    if (bc.server_runs) {
        put_has_sc("server.mid", s); /* not when it is runnable without an SC */
        seL4_Word g = log_find(TAG(1, EV_GOT));
        KASSERT_EQ(log_w[g][0], bc.badge);
        seL4_Word len = bc.len > 120 ? 120 : bc.len;
        KASSERT_EQ(log_w[g][1], info(bc.label, len > 4 && !bc.buffers ? 4 : len));
        KASSERT_EQ(log_w[g][2], bc.len > 0 ? 0x1000ul : S2);
        KASSERT_EQ(log_w[g][5], bc.len > 3 ? 0x4000ul : S5);
    } else if (bc.call_delivers) {
        /* No grant: the client is inactive and the server has no SC; give
         * the server its own so that it goes on. */
        KASSERT_EQ(seL4_SchedContext_Bind(s->sc, s->tcb), seL4_NoError);
    }
    seL4_Signal(gate);
    mark("after the reply", bc.fast_call, bc.fast_rr);
    put_log();
    put_state("client.end", c);
    put_state("server.end", s);
    if (bc.server_runs) {
        seL4_Word g = log_find(TAG(2, EV_REPLY));
        KASSERT_EQ(log_w[g][0], 0); /* replies carry badge 0 */
        KASSERT_EQ(log_w[g][1] >> 12, bc.label ^ 1);
        KASSERT(!has_sc(s));
    }
    probe_reply_and_endpoint(reply, ep);
    put_ctx("server.after_probes", s);
    put_ctx("client.after_probes", c);
}

static void basic(const char *name, basic_case_t k)
{
    bc = k;
    equivalent(name, scenario_basic, 0);
}

static basic_case_t fast_case(seL4_Word len, seL4_Word label, seL4_Word badge)
{
    basic_case_t k = {len, label, badge, 0, seL4_CapRights_new(1, 1, 1, 1), false, 1, 1, true, true};
    return k;
}

KTEST(fastpath, call_and_replyrecv_of_0_1_4_words_match_the_slow_path)
{
    fp_begin();
    basic("0 words", fast_case(0, 0x11, 0));
    basic("1 word", fast_case(1, 0x12, 0));
    basic("4 words", fast_case(4, 0x13, 0));
    basic_case_t k = fast_case(4, 0x14, 0);
    k.buffers = true;
    basic("4 words, IPC buffers", k);
    fp_end();
}

KTEST(fastpath, five_words_take_the_slow_path_with_the_same_results)
{
    fp_begin();
    /* With IPC buffers: MR4 goes through them; slow both ways. */
    basic_case_t k = fast_case(5, 0x15, 0x55);
    k.buffers = true;
    k.fast_call = 0;
    k.fast_rr = 0;
    basic("5 words, IPC buffers", k);
    /* Without: the message is cut to 4 words (slow), the 4-word reply is fast. */
    k.buffers = false;
    k.fast_rr = 1;
    basic("5 words cut to 4", k);
    /* A length beyond 120 is clamped (slow). */
    k = fast_case(0x7f, 0x16, 0);
    k.buffers = true;
    k.fast_call = 0;
    k.fast_rr = 0;
    basic("length 127", k);
    fp_end();
}

KTEST(fastpath, labels_and_badges_match_the_slow_path)
{
    fp_begin();
    basic("label 0, badge 1", fast_case(2, 0, 1));
    basic("label max, badge max", fast_case(3, (1ul << 52) - 1, ~0ul));
    basic("label 0x800, badge 1<<63", fast_case(1, 0x800, 1ul << 63));
    /* capsUnwrapped bits set by the sender mean nothing (no caps). */
    basic_case_t k = fast_case(2, 0x21, 0x77);
    k.sender_bits = 7ul << 9;
    basic("capsUnwrapped set by the sender", k);
    fp_end();
}

KTEST(fastpath, call_rights_grant_reply_only_grant_only_write_only_read_only)
{
    fp_begin();
    basic_case_t k = fast_case(2, 0x31, 0x31);
    k.rights = seL4_CapRights_new(1, 0, 0, 1);
    basic("GrantReply only", k);
    k.rights = seL4_CapRights_new(0, 1, 0, 1);
    basic("Grant only", k);
    /* Write only: no reply possible, the caller goes inactive, nothing is
     * lent (slow); the server's ReplyRecv then has no caller (slow). */
    k.rights = seL4_CapRights_new(0, 0, 0, 1);
    k.fast_call = 0;
    k.fast_rr = 0;
    k.server_runs = false;
    basic("Write only", k);
    /* No Write: an error reply to the Call, nothing delivered. */
    k.rights = seL4_CapRights_new(1, 1, 1, 0);
    k.call_delivers = false;
    basic("no Write", k);
    fp_end();
}

/* ==== 2. nested passive servers ================================================ */

static void scenario_nested(seL4_Word unused)
{
    (void)unused;
    seL4_CPtr ep1 = fp_ep(F_EP), ep2 = fp_ep(F_EP2);
    seL4_CPtr r1 = fp_reply(F_REPLY), r2 = fp_reply(F_REPLY2);
    seL4_CPtr gate = fp_ntfn(F_GATE);
    seL4_CPtr cap1 = fp_mint(F_CAP, ep1, all_rights(), 0x1b);
    seL4_CPtr cap2 = fp_mint(F_CAP2, ep2, seL4_CapRights_new(1, 0, 0, 1), 0x2b);
    kt_thread_t *s2 = fp_thread(200, true, false);
    kt_thread_t *s1 = fp_thread(180, true, false);
    kt_thread_t *c = fp_thread(150, true, false);
    srv_b = (srv_t){.id = 3, .ep = ep2, .reply = r2, .recv_sys = seL4_SysRecv, .gate = gate, .pause_mask = 1};
    srv_a = (srv_t){.id = 1, .ep = ep1, .reply = r1, .recv_sys = seL4_SysRecv, .fwd = cap2};
    start_server(s2, &srv_b, true);
    start_server(s1, &srv_a, true);
    cli_a = (cli_t){.id = 2, .t = c, .n = 2};
    cli_a.req[0] = request(cap1, info(0x41, 3), 0);
    cli_a.req[1] = request(cap1, info(0x42, 4), 1);
    kt_thread_start(c, client_main, (seL4_Word)&cli_a, 0, 0);
    /* client -> s1 -> s2, s2 waits on the gate holding the client's SC. */
    mark("after both Calls", 2, 0);
    put_log();
    put_ctx("client.mid", c);
    put_ctx("s1.mid", s1);
    put_ctx("s2.mid", s2);
    put_has_sc("client.mid", c);
    put_has_sc("s1.mid", s1);
    put_has_sc("s2.mid", s2);
    put_sc_bound("client.mid", c);
    put_sc_bound("s1.mid", s1);
    put_sc_bound("s2.mid", s2);
    KASSERT(!has_sc(c));
    KASSERT(!has_sc(s1));
    KASSERT(has_sc(s2));
    KASSERT(sc_bound(c->sc));
    KASSERT_EQ(log_w[log_find(TAG(3, EV_GOT))][0], 0x2b);
    seL4_Signal(gate);
    mark("after both replies and the second round", 4, 4);
    put_log();
    put_state("client.end", c);
    put_state("s1.end", s1);
    put_state("s2.end", s2);
    KASSERT(has_sc(c)); /* the SC came back to the client (now suspended) */
    KASSERT(!has_sc(s1));
    KASSERT(!has_sc(s2));
    KASSERT_EQ(log_tag[n_log - 1], TAG(2, EV_DONE));
    probe_reply_and_endpoint(r2, ep2);
    probe_reply_and_endpoint(r1, ep1);
    put_ctx("s1.after_probes", s1);
    put_ctx("s2.after_probes", s2);
}

KTEST(fastpath, nested_passive_chain_is_fast_and_returns_the_sc_to_the_client)
{
    fp_begin();
    equivalent("nested chain", scenario_nested, 0);
    fp_end();
}

/* ==== 3. conditions that force the slow path ======================================= */

/* variant 0: an active server (own SC): both directions slow.
 * variant 1: the server received with Wait (no reply object).
 * variant 2: the passive server has a bound notification: Call fast,
 *            ReplyRecv slow. */
static void scenario_server_kind(seL4_Word v)
{
    seL4_CPtr ep = fp_ep(F_EP);
    seL4_CPtr reply = fp_reply(F_REPLY);
    seL4_CPtr gate = fp_ntfn(F_GATE);
    seL4_CPtr cap = fp_mint(F_CAP, ep, all_rights(), 0x5a);
    kt_thread_t *s = fp_thread(200, true, false);
    kt_thread_t *c = fp_thread(150, true, false);
    srv_a = (srv_t){.id = 1, .ep = ep, .reply = reply, .recv_sys = v == 1 ? seL4_SysWait : seL4_SysRecv,
                    .gate = gate, .pause_mask = 1};
    if (v == 2)
        KASSERT_EQ(seL4_TCB_BindNotification(s->tcb, fp_ntfn(F_NTFN)), seL4_NoError);
    start_server(s, &srv_a, v != 0);
    cli_a = (cli_t){.id = 2, .t = c, .n = 2};
    cli_a.req[0] = request(cap, info(0x51, 2), 0);
    cli_a.req[1] = request(cap, info(0x52, 3), 1);
    kt_thread_start(c, client_main, (seL4_Word)&cli_a, 0, 0);
    mark("after the Call", v == 2 ? 1 : 0, 0);
    put_log();
    put_ctx("client.mid", c);
    put_ctx("server.mid", s);
    put_has_sc("client.mid", c);
    put_sc_bound("client.mid", c);
    put_sc_bound("server.mid", s);
    if (v == 1) {
        /* The client is inactive, the passive server got the message but
         * has no SC; give it its own. */
        KASSERT_EQ(n_log, 0);
        KASSERT(has_sc(c));
        KASSERT_EQ(seL4_SchedContext_Bind(s->sc, s->tcb), seL4_NoError);
    } else {
        put_has_sc("server.mid", s);
    }
    seL4_Signal(gate);
    mark("end", v == 2 ? 2 : 0, 0);
    put_log();
    put_state("client.end", c);
    put_state("server.end", s);
    if (v != 1)
        KASSERT_EQ(log_tag[n_log - 1], TAG(2, EV_DONE));
    probe_reply_and_endpoint(reply, ep);
    put_ctx("server.after_probes", s);
}

KTEST(fastpath, active_server_wait_receiver_and_bound_notification_take_the_slow_path)
{
    fp_begin();
    equivalent("active server", scenario_server_kind, 0);
    equivalent("receiver used Wait", scenario_server_kind, 1);
    equivalent("replier has a bound notification", scenario_server_kind, 2);
    fp_end();
}

/* variant 0: a ready thread (130) above the passive server (120) but below
 *            the client (150): the Call is slow, the bystander runs before
 *            the server; the reply (client 150 above all ready) is fast.
 * variant 1: the server (200) wakes a bystander (160) above the client
 *            (150) before replying: the Call is fast, the ReplyRecv slow,
 *            and the bystander runs before the client.
 * variant 2: as 1 with the bystander at the client's priority (150): not
 *            strictly higher, so the ReplyRecv is slow.
 * variant 3: as 0 with the bystander at the server's priority (130): the
 *            Call is slow. */
static void scenario_ready_thread(seL4_Word v)
{
    seL4_CPtr ep = fp_ep(F_EP);
    seL4_CPtr reply = fp_reply(F_REPLY);
    seL4_CPtr gate = fp_ntfn(F_GATE);
    seL4_CPtr sig = fp_ntfn(F_SIG);
    seL4_CPtr cap = fp_mint(F_CAP, ep, all_rights(), 0x6a);
    static const seL4_Word srv_prios[4] = {120, 200, 200, 130}, h_prios[4] = {130, 160, 150, 130};
    seL4_Word srv_prio = srv_prios[v], h_prio = h_prios[v];
    bool call_slow = v == 0 || v == 3;
    kt_thread_t *s = fp_thread(srv_prio, true, false);
    kt_thread_t *h = fp_thread(h_prio, true, false);
    kt_thread_t *c = fp_thread(150, true, false);
    srv_a = (srv_t){.id = 1, .ep = ep, .reply = reply, .recv_sys = seL4_SysRecv, .gate = gate};
    if (!call_slow) {
        srv_a.sig = sig;
        srv_a.sig_mask = 1;
    }
    start_server(s, &srv_a, true);
    kt_root_prio(255);
    /* The bystander first runs, logs, and waits on sig. */
    kt_thread_start(h, helper_main, 4, sig, 0);
    kt_root_prio(50);
    kt_root_prio(255);
    if (call_slow)
        seL4_Signal(sig); /* ready again, but it cannot run yet */
    cli_a = (cli_t){.id = 2, .t = c, .n = 1};
    cli_a.req[0] = request(cap, info(0x61, 2), 0);
    kt_thread_start(c, client_main, (seL4_Word)&cli_a, 0, 0);
    kt_root_prio(50); /* everything happens here */
    mark("end", call_slow ? 0 : 1, call_slow ? 1 : 0);
    put_log();
    put_state("client.end", c);
    put_state("server.end", s);
    put_ctx("bystander.end", h);
    /* The bystander ran (a second time) before the server (v 0) or the
     * client (v 1) went on. */
    KASSERT_EQ(n_log, 5);
    KASSERT_EQ(log_tag[0], TAG(4, EV_RAN));
    if (v == 0) {
        KASSERT_EQ(log_tag[1], TAG(4, EV_RAN));
        KASSERT_EQ(log_tag[2], TAG(1, EV_GOT));
    } else if (v != 3) {
        KASSERT_EQ(log_tag[1], TAG(1, EV_GOT));
    }
    /* Between equals the slow path's choice decides (the woken caller may
     * go first, as seL4's possibleSwitchTo does); the comparison checks the
     * fastpath-off run made the same one. */
    if (v < 2) {
        if (v == 1)
            KASSERT_EQ(log_tag[2], TAG(4, EV_RAN));
        KASSERT_EQ(log_tag[3], TAG(2, EV_REPLY));
        KASSERT_EQ(log_tag[4], TAG(2, EV_DONE));
    }
    probe_reply_and_endpoint(reply, ep);
    put_ctx("server.after_probes", s);
}

KTEST(fastpath, a_ready_thread_at_or_above_the_receiver_forces_the_slow_path)
{
    fp_begin();
    equivalent("ready thread above the server", scenario_ready_thread, 0);
    equivalent("ready thread above the caller", scenario_ready_thread, 1);
    equivalent("ready thread equal to the caller", scenario_ready_thread, 2);
    equivalent("ready thread equal to the server", scenario_ready_thread, 3);
    fp_end();
}

/* variant 0: the Call carries a cap to the same endpoint (unwrapped into a
 *            badge): slow; the reply is fast.
 * variant 1: the Call carries a notification cap (moved to the server's
 *            receive slot): slow; the reply is fast.
 * variant 2: the Call has no caps (fast), the reply carries a notification
 *            cap to the client's receive slot (slow). */
static void scenario_caps(seL4_Word v)
{
    seL4_CPtr ep = fp_ep(F_EP);
    seL4_CPtr reply = fp_reply(F_REPLY);
    seL4_CPtr gate = fp_ntfn(F_GATE);
    seL4_CPtr cap = fp_mint(F_CAP, ep, all_rights(), 0x7a);
    seL4_CPtr ntfn = fp_ntfn(F_NTFN);
    seL4_CPtr xcap = v == 0 ? fp_mint(F_XCAP, ep, all_rights(), 0x7c) : fp_mint(F_XCAP, ntfn, all_rights(), 0x7d);
    fp_clear(F_RSLOT_S);
    fp_clear(F_RSLOT_C);
    kt_thread_t *s = fp_thread(200, true, true);
    kt_thread_t *c = fp_thread(150, true, true);
    s->ipc_buf[BUF_RECV_CNODE] = ROOT;
    s->ipc_buf[BUF_RECV_CNODE + 1] = fs(F_RSLOT_S);
    s->ipc_buf[BUF_RECV_CNODE + 2] = 64;
    c->ipc_buf[BUF_RECV_CNODE] = ROOT;
    c->ipc_buf[BUF_RECV_CNODE + 1] = fs(F_RSLOT_C);
    c->ipc_buf[BUF_RECV_CNODE + 2] = 64;
    srv_a = (srv_t){.id = 1, .ep = ep, .reply = reply, .recv_sys = seL4_SysRecv, .gate = gate, .pause_mask = 1};
    if (v == 2) {
        srv_a.reply_caps = 1;
        srv_a.xcap = xcap;
    }
    start_server(s, &srv_a, true);
    cli_a = (cli_t){.id = 2, .t = c, .n = 1, .mr4 = 0x4545};
    cli_a.req[0] = request(cap, info_caps(0x71, v == 2 ? 0 : 1, 2), 0);
    cli_a.xcap = v == 2 ? 0 : xcap;
    kt_thread_start(c, client_main, (seL4_Word)&cli_a, 0, 0);
    mark("after the Call", v == 2 ? 1 : 0, 0);
    put_log();
    put_ctx("client.mid", c);
    put_has_sc("client.mid", c);
    put_has_sc("server.mid", s);
    put(seL4_DebugCapIdentify(fs(F_RSLOT_S)), "server.receive_slot");
    seL4_Word g = log_find(TAG(1, EV_GOT));
    if (v == 0)
        KASSERT_EQ(log_w[g][1], info(0x71, 2) | (1ul << 9) | (1ul << 7)); /* unwrapped */
    if (v == 1) {
        KASSERT_EQ(log_w[g][1], info(0x71, 2) | (1ul << 7));
        KASSERT_EQ(seL4_DebugCapIdentify(fs(F_RSLOT_S)), TAG_NOTIFICATION);
    }
    seL4_Signal(gate);
    mark("end", v == 2 ? 1 : 0, v == 2 ? 0 : 1);
    put_log();
    put_state("client.end", c);
    put_ctx("server.end", s);
    put_has_sc("server.end", s);
    put(seL4_DebugCapIdentify(fs(F_RSLOT_C)), "client.receive_slot");
    if (v == 2)
        KASSERT_EQ(seL4_DebugCapIdentify(fs(F_RSLOT_C)), TAG_NOTIFICATION);
    probe_reply_and_endpoint(reply, ep);
    put_ctx("server.after_probes", s);
}

KTEST(fastpath, extra_caps_take_the_slow_path_with_the_same_results)
{
    fp_begin();
    equivalent("Call with an unwrapped cap", scenario_caps, 0);
    equivalent("Call with a transferred cap", scenario_caps, 1);
    equivalent("reply with a transferred cap", scenario_caps, 2);
    fp_end();
}

/* ==== 4. ReplyRecv special cases ======================================================= */

/* While the passive server (200) holds client A's call (150), client B
 * (160) calls and is queued as a sender. The server's ReplyRecv finds a
 * sender (slow) and receives B's call at once, on B's SC; its reply to B
 * is fast (B above every ready thread). */
static void scenario_queued_sender(seL4_Word unused)
{
    (void)unused;
    seL4_CPtr ep = fp_ep(F_EP);
    seL4_CPtr reply = fp_reply(F_REPLY);
    seL4_CPtr gate = fp_ntfn(F_GATE);
    seL4_CPtr cap_a = fp_mint(F_CAP, ep, all_rights(), 0xa);
    seL4_CPtr cap_b = fp_mint(F_CAP2, ep, all_rights(), 0xb);
    kt_thread_t *s = fp_thread(200, true, false);
    kt_thread_t *a = fp_thread(150, true, false);
    kt_thread_t *b = fp_thread(160, true, false);
    srv_a = (srv_t){.id = 1, .ep = ep, .reply = reply, .recv_sys = seL4_SysRecv, .gate = gate, .pause_mask = 1};
    start_server(s, &srv_a, true);
    cli_a = (cli_t){.id = 2, .t = a, .n = 1};
    cli_a.req[0] = request(cap_a, info(0x81, 1), 0);
    cli_b = (cli_t){.id = 5, .t = b, .n = 1};
    cli_b.req[0] = request(cap_b, info(0x82, 3), 1);
    kt_thread_start(a, client_main, (seL4_Word)&cli_a, 0, 0);
    kt_thread_start(b, client_main, (seL4_Word)&cli_b, 0, 0);
    mark("A's Call fast, B queued", 1, 0);
    put_log();
    put_ctx("a.mid", a);
    put_ctx("b.mid", b);
    put_has_sc("a.mid", a);
    put_has_sc("b.mid", b);
    put_has_sc("server.mid", s);
    KASSERT(has_sc(b)); /* a queued sender keeps its SC */
    seL4_Signal(gate);
    mark("end", 1, 1);
    put_log();
    put_ctx("server.end", s);
    put_has_sc("a.end", a);
    put_has_sc("b.end", b);
    put_has_sc("server.end", s);
    /* The server took B's call right after replying to A, before A ran. */
    seL4_Word got_b = log_find(TAG(1, EV_GOT)) + 2;
    KASSERT_EQ(log_tag[got_b], TAG(1, EV_GOT));
    KASSERT_EQ(log_w[got_b][0], 0xb);
    KASSERT_EQ(log_tag[got_b + 1], TAG(5, EV_REPLY));
    KASSERT_EQ(log_tag[got_b + 3], TAG(2, EV_REPLY));
    probe_reply_and_endpoint(reply, ep);
    put_ctx("server.after_probes", s);
}

/* variant 0: the server's first system call is a ReplyRecv on a reply
 *            object nobody waits on (slow); then a fast round trip.
 * variant 1: the client is suspended while the server holds its call; the
 *            server's ReplyRecv then has no caller (slow). */
static void scenario_no_caller(seL4_Word v)
{
    seL4_CPtr ep = fp_ep(F_EP);
    seL4_CPtr reply = fp_reply(F_REPLY);
    seL4_CPtr gate = fp_ntfn(F_GATE);
    seL4_CPtr cap = fp_mint(F_CAP, ep, all_rights(), 0x9a);
    kt_thread_t *s = fp_thread(200, true, false);
    kt_thread_t *c = fp_thread(150, true, false);
    srv_a = (srv_t){.id = 1, .ep = ep, .reply = reply, .recv_sys = v == 0 ? seL4_SysReplyRecv : seL4_SysRecv,
                    .gate = gate, .pause_mask = 1};
    start_server(s, &srv_a, true);
    mark("server started", 0, 0);
    put_ctx("server.start", s);
    cli_a = (cli_t){.id = 2, .t = c, .n = 1};
    cli_a.req[0] = request(cap, info(0x91, 4), 0);
    kt_thread_start(c, client_main, (seL4_Word)&cli_a, 0, 0);
    mark("after the Call", 1, 0);
    if (v == 1)
        KASSERT_EQ(seL4_TCB_Suspend(c->tcb), seL4_NoError);
    put_ctx("client.mid", c);
    put_has_sc("client.mid", c);
    put_has_sc("server.mid", s);
    put_sc_bound("client.mid", c);
    seL4_Signal(gate);
    mark("end", 1, v == 0 ? 1 : 0);
    put_log();
    put_state("client.end", c);
    put_ctx("server.end", s);
    put_has_sc("server.end", s);
    if (v == 1)
        KASSERT(has_sc(s)); /* suspending the client left its SC with the server */
    probe_reply_and_endpoint(reply, ep);
    put_ctx("server.after_probes", s);
    put_ctx("client.after_probes", c);
}

/* Two passive servers on one endpoint: A (200) takes the call while B
 * waits in the queue. A's ReplyRecv goes to the tail if B's priority is at
 * least A's (fast; the next call goes to B), else it must be inserted
 * before B (slow; the next call goes to A again).
 * variant 0: B at 200; variant 1: B at 190. */
static void scenario_two_servers(seL4_Word v)
{
    seL4_CPtr ep = fp_ep(F_EP);
    seL4_CPtr ra = fp_reply(F_REPLY), rb = fp_reply(F_REPLY2);
    seL4_CPtr gate = fp_ntfn(F_GATE);
    seL4_CPtr cap = fp_mint(F_CAP, ep, all_rights(), 0xca);
    kt_thread_t *sa = fp_thread(200, true, false);
    kt_thread_t *sb = fp_thread(v == 0 ? 200 : 190, true, false);
    kt_thread_t *c = fp_thread(150, true, false);
    srv_a = (srv_t){.id = 1, .ep = ep, .reply = ra, .recv_sys = seL4_SysRecv, .gate = gate, .pause_mask = 1};
    srv_c = (srv_t){.id = 6, .ep = ep, .reply = rb, .recv_sys = seL4_SysRecv};
    start_server(sa, &srv_a, true);
    start_server(sb, &srv_c, true);
    cli_a = (cli_t){.id = 2, .t = c, .n = 3};
    for (int i = 0; i < 3; i++)
        cli_a.req[i] = request(cap, info(0xc1 + (seL4_Word)i, 1), (seL4_Word)i);
    kt_thread_start(c, client_main, (seL4_Word)&cli_a, 0, 0);
    mark("first Call", 1, 0);
    put_ctx("server_a.mid", sa);
    put_ctx("server_b.mid", sb);
    seL4_Signal(gate);
    mark("end", 3, v == 0 ? 3 : 0);
    put_log();
    put_ctx("server_a.end", sa);
    put_ctx("server_b.end", sb);
    put_has_sc("server_a.end", sa);
    put_has_sc("server_b.end", sb);
    put_sc_bound("client.end", c);
    /* Who served the three calls. */
    seL4_Word n = n_log < LOG_MAX ? n_log : LOG_MAX, served = 0;
    for (seL4_Word i = 0; i < n; i++)
        if ((log_tag[i] & 0xff) == EV_GOT)
            served = served * 16 + (log_tag[i] >> 8);
    put(served, "servers_in_order");
    KASSERT_EQ(served, v == 0 ? 0x161ul : 0x111ul);
    probe_reply_and_endpoint(ra, ep);
    probe_reply_and_endpoint(rb, ep);
    put_ctx("server_a.after_probes", sa);
    put_ctx("server_b.after_probes", sb);
}

KTEST(fastpath, replyrecv_with_a_queued_sender_or_without_a_caller_is_slow)
{
    fp_begin();
    equivalent("ReplyRecv with a queued sender", scenario_queued_sender, 0);
    equivalent("ReplyRecv as the first call", scenario_no_caller, 0);
    equivalent("ReplyRecv after the caller was suspended", scenario_no_caller, 1);
    fp_end();
}

KTEST(fastpath, replyrecv_appends_at_the_queue_tail_only_when_the_order_allows)
{
    fp_begin();
    equivalent("second server of equal priority", scenario_two_servers, 0);
    equivalent("second server of lower priority", scenario_two_servers, 1);
    fp_end();
}

/* A passive fault handler on ep that also serves ordinary calls: it
 * answers everything with label 0 and 4 words (MR0 + 4, MR1, MR2, 0x99):
 * for an UnknownSyscall fault (no handler IPC buffer: 4 words, FaultIP, SP,
 * RA, a0) that resumes the thread after its ecall with a0 = 0x99. */
static void fault_handler_main(seL4_Word ep, seL4_Word reply, seL4_Word unused)
{
    (void)unused;
    kt_regs_t r = kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply));
    for (;;) {
        log_regs(TAG(1, EV_GOT), r);
        kt_regs_t out = {ep, info(0, 4), r.a2 + 4, r.a3, r.a4, 0x99, reply, 0x74};
        r = kt_syscall(seL4_SysReplyRecv, out);
    }
}

/* Two unknown system calls (faults), logging what each returned. */
static kt_thread_t *faulter_t;
static void faulter_main(seL4_Word unused0, seL4_Word unused1, seL4_Word unused2)
{
    (void)unused0;
    (void)unused1;
    (void)unused2;
    for (seL4_Word i = 0; i < 2; i++) {
        kt_regs_t in = {0xa0 + i, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0x70};
        log_regs(TAG(7, EV_REPLY), kt_syscall((seL4_Word)-50, in));
    }
    log_event(TAG(7, EV_DONE));
    kt_thread_exit(faulter_t->tcb);
}

/* The faulting thread waits for a fault reply: the handler's ReplyRecvs
 * to it are slow (and fault messages are no Calls); an ordinary Call to
 * the same handler afterwards is fast both ways. */
static void scenario_fault_reply(seL4_Word unused)
{
    (void)unused;
    seL4_CPtr ep = fp_ep(F_EP);
    seL4_CPtr reply = fp_reply(F_REPLY);
    seL4_CPtr cap = fp_mint(F_CAP, ep, all_rights(), 0xe1);
    seL4_CPtr fault_cap = fp_mint(F_CAP2, ep, seL4_CapRights_new(0, 1, 0, 1), 0xf17);
    kt_thread_t *h = fp_thread(200, true, false);
    faulter_t = fp_thread(150, true, false);
    kt_thread_t *c = fp_thread(150, true, false);
    KASSERT_EQ(seL4_TCB_SetSpace(faulter_t->tcb, fault_cap, ROOT, 0, seL4_CapInitThreadVSpace, 0), seL4_NoError);
    kt_thread_start(h, fault_handler_main, ep, reply, 0);
    kt_root_prio(50);
    KASSERT_EQ(seL4_SchedContext_UnbindObject(h->sc, h->tcb), seL4_NoError);
    kt_thread_start(faulter_t, faulter_main, 0, 0, 0);
    mark("two faults handled", 0, 0);
    put_log();
    put_ctx("faulter.end", faulter_t);
    put_has_sc("faulter.end", faulter_t);
    put_has_sc("handler.mid", h);
    KASSERT_EQ(n_log, 5);
    KASSERT_EQ(log_w[0][0], 0xf17);
    KASSERT_EQ(log_w[0][1] >> 12, seL4_Fault_UnknownSyscall);
    KASSERT_EQ(log_w[1][0], 0x99); /* resumed after the ecall with a0 = 0x99 */
    KASSERT_EQ(log_w[1][1], 0xa1);
    cli_a = (cli_t){.id = 2, .t = c, .n = 1};
    cli_a.req[0] = request(cap, info(0xe2, 3), 0);
    kt_thread_start(c, client_main, (seL4_Word)&cli_a, 0, 0);
    mark("an ordinary Call", 1, 1);
    put_log();
    put_ctx("handler.end", h);
    put_has_sc("client.end", c);
    put_has_sc("handler.end", h);
    KASSERT_EQ(log_tag[n_log - 1], TAG(2, EV_DONE));
    probe_reply_and_endpoint(reply, ep);
    put_ctx("handler.after_probes", h);
}

KTEST(fastpath, replyrecv_to_a_thread_waiting_for_a_fault_reply_is_slow)
{
    fp_begin();
    equivalent("fault replies, then a Call", scenario_fault_reply, 0);
    fp_end();
}

/* ==== 5. many round trips ================================================================ */

#define LOOP_N 1000
#define LOOP_SEED 0x5eed1234ul

static seL4_Word lcg(seL4_Word *s)
{
    *s = *s * 6364136223846793005ul + 1442695040888963407ul;
    return *s >> 29;
}

static seL4_Word mix(seL4_Word sum, seL4_Word x)
{
    sum ^= x + 0x9e3779b97f4a7c15ul + (sum << 6) + (sum >> 2);
    return sum;
}

static volatile seL4_Word loop_client_sum, loop_server_sum, loop_server_n, loop_done;
static kt_thread_t *loop_srv_t, *loop_cli_t;

/* Lengths 0-5 (5 through the IPC buffer: slow), labels, words from an LCG. */
static void loop_client(seL4_Word cap, seL4_Word unused, seL4_Word unused2)
{
    (void)unused;
    (void)unused2;
    seL4_Word s = LOOP_SEED, sum = 0;
    seL4_Word *buf = loop_cli_t->ipc_buf;
    for (seL4_Word i = 0; i < LOOP_N; i++) {
        seL4_Word label = lcg(&s) & 0xfffff;
        seL4_Word len = lcg(&s) % 6;
        kt_regs_t c = {cap, info(label, len), 0, 0, 0, 0, i, 0x700 + i};
        c.a2 = lcg(&s);
        c.a3 = lcg(&s);
        c.a4 = lcg(&s);
        c.a5 = lcg(&s);
        buf[BUF_MR4] = lcg(&s);
        kt_regs_t r = kt_syscall(seL4_SysCall, c);
        sum = mix(sum, r.a0);
        sum = mix(sum, r.a1);
        sum = mix(sum, r.a2);
        sum = mix(sum, r.a3);
        sum = mix(sum, r.a4);
        sum = mix(sum, r.a5);
        sum = mix(sum, r.a6);
        sum = mix(sum, r.t0);
        sum = mix(sum, buf[BUF_MR4]);
    }
    loop_client_sum = sum;
    loop_done = 1;
    kt_thread_exit(loop_cli_t->tcb);
}

static void loop_server(seL4_Word ep, seL4_Word reply, seL4_Word unused)
{
    (void)unused;
    seL4_Word *buf = loop_srv_t->ipc_buf;
    seL4_Word sum = 0, n = 0;
    kt_regs_t r = kt_syscall(seL4_SysRecv, sentinel_regs(ep, reply));
    for (;;) {
        sum = mix(sum, r.a0);
        sum = mix(sum, r.a1);
        sum = mix(sum, r.a2);
        sum = mix(sum, r.a3);
        sum = mix(sum, r.a4);
        sum = mix(sum, r.a5);
        sum = mix(sum, r.a6);
        sum = mix(sum, r.t0);
        seL4_Word len = r.a1 & 0x7f;
        if (len > 4)
            sum = mix(sum, buf[BUF_MR4]);
        loop_server_sum = sum;
        loop_server_n = ++n;
        buf[BUF_MR4] = mangle(buf[BUF_MR4], n);
        kt_regs_t out = {ep,          info((r.a1 >> 12) ^ 0x555, len), mangle(r.a2, n), mangle(r.a3, n),
                         mangle(r.a4, n), mangle(r.a5, n),              reply,           n};
        r = kt_syscall(seL4_SysReplyRecv, out);
    }
}

static void scenario_loop(seL4_Word unused)
{
    (void)unused;
    seL4_CPtr ep = fp_ep(F_EP);
    seL4_CPtr reply = fp_reply(F_REPLY);
    seL4_CPtr cap = fp_mint(F_CAP, ep, all_rights(), 0xd00d);
    loop_srv_t = fp_thread(200, true, true);
    loop_cli_t = fp_thread(150, true, true);
    loop_client_sum = loop_server_sum = loop_server_n = loop_done = 0;
    kt_thread_start(loop_srv_t, loop_server, ep, reply, 0);
    kt_root_prio(50);
    KASSERT_EQ(seL4_SchedContext_UnbindObject(loop_srv_t->sc, loop_srv_t->tcb), seL4_NoError);
    /* Messages of up to 4 words take the fastpath both ways. */
    seL4_Word s = LOOP_SEED, fast = 0;
    for (seL4_Word i = 0; i < LOOP_N; i++) {
        (void)lcg(&s);
        if (lcg(&s) % 6 <= 4)
            fast++;
        for (int k = 0; k < 5; k++)
            (void)lcg(&s);
    }
    kt_thread_start(loop_cli_t, loop_client, cap, 0, 0);
    mark("end", fast, fast);
    KASSERT_EQ(loop_done, 1);
    KASSERT_EQ(loop_server_n, LOOP_N);
    put(loop_client_sum, "client.checksum");
    put(loop_server_sum, "server.checksum");
    put(loop_server_n, "server.requests");
    put_has_sc("client.end", loop_cli_t);
    put_has_sc("server.end", loop_srv_t);
    put_ctx("server.end", loop_srv_t);
    if (cur == &runs[0])
        printf("fastpath: %lu round trips, %lu with messages of at most 4 words\n", (unsigned long)LOOP_N,
               (unsigned long)fast);
}

KTEST(fastpath, a_thousand_round_trips_give_the_same_checksums)
{
    fp_begin();
    equivalent("1000 round trips", scenario_loop, 0);
    fp_end();
}
