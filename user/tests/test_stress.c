/* Stress: thousands of random capability operations, valid and invalid,
 * mixed across object types (retype, copy, mint, move, mutate, rotate,
 * delete, revoke, and invocations with random labels and arguments on
 * whatever the slots hold), run in the check flavour where the kernel's
 * invariant checker runs after every system call. Then everything is revoked
 * and the untyped must retype whole again: no memory lost.
 *
 * Slots: 96 slots from the middle of the BootInfo's empty region (other
 * suites use its start and its upper quarter). Memory: the smallest RAM
 * untyped of at least 2^20 bytes. The generator is seeded, so a failure
 * replays exactly. */
#include <ktest.h>
#include <sel4/sel4.h>
#include <stdio.h>
#include <threads.h>

#define ROOT seL4_CapInitThreadCNode
#define N_SLOTS 96
#define N_OPS 4000

static uint64_t rng_state;
static uint64_t rnd(void)
{
    /* xorshift64*: small, deterministic, good enough to pick operations */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}
static seL4_Word pick(seL4_Word n) { return (seL4_Word)(rnd() % n); }

static seL4_CPtr base;
static seL4_CPtr untyped;
static seL4_Word untyped_bits;

/* Mostly a slot of ours; sometimes an out-of-range or odd cptr. */
static seL4_CPtr any_slot(void)
{
    switch (pick(16)) {
    case 0: return pick(1ul << 13);        /* any root slot: mostly empty, some initial caps */
    case 1: return rnd();                  /* garbage cptr */
    default: return base + pick(N_SLOTS);
    }
}

static seL4_Word any_depth(void) { return pick(8) == 0 ? pick(70) : 64; }

static void find_untyped(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    untyped = 0;
    for (seL4_Word i = 0; i < bi->untyped.end - bi->untyped.start; i++) {
        const seL4_UntypedDesc *u = &bi->untypedList[i];
        if (!u->isDevice && u->sizeBits >= 20 && u->sizeBits <= 24 && (!untyped || u->sizeBits < untyped_bits)) {
            untyped = bi->untyped.start + i;
            untyped_bits = u->sizeBits;
        }
    }
}

static unsigned long outcomes[16]; /* by seL4_Error, 0 = success */

static void count(seL4_Word e) { outcomes[e < 16 ? e : 15]++; }

static void random_operation(void)
{
    seL4_CapRights_t rights = {{pick(16)}};
    switch (pick(12)) {
    case 0:
    case 1: {
        /* The invoked cap must resolve (a failed lookup of the invoked cap
         * is a cap fault that would suspend this thread); arguments may be
         * anything. */
        seL4_CPtr src = pick(3) ? untyped : base + pick(N_SLOTS);
        if (seL4_DebugCapIdentify(src) == 4) /* an endpoint: the Call would wait for ever (IPC) */
            src = untyped;
        count(seL4_Untyped_Retype(src, pick(12), pick(26), ROOT, 0, 0, any_slot() & (pick(4) ? ~0ul : 0xff),
                                  1 + pick(3)));
        break;
    }
    case 2:
        count(seL4_CNode_Copy(ROOT, any_slot(), any_depth(), ROOT, pick(4) ? any_slot() : untyped, any_depth(),
                              rights));
        break;
    case 3:
        count(seL4_CNode_Mint(ROOT, any_slot(), any_depth(), ROOT, any_slot(), any_depth(), rights,
                              pick(2) ? pick(5) : rnd()));
        break;
    case 4:
        count(seL4_CNode_Move(ROOT, base + pick(N_SLOTS), 64, ROOT, base + pick(N_SLOTS), any_depth()));
        break;
    case 5:
        count(seL4_CNode_Mutate(ROOT, base + pick(N_SLOTS), 64, ROOT, base + pick(N_SLOTS), any_depth(), rnd()));
        break;
    case 6:
        count(seL4_CNode_Rotate(ROOT, base + pick(N_SLOTS), 64, pick(3), ROOT, base + pick(N_SLOTS), any_depth(),
                                pick(3), ROOT, base + pick(N_SLOTS), 64));
        break;
    case 7:
        count(seL4_CNode_Delete(ROOT, base + pick(N_SLOTS), any_depth()));
        break;
    case 8:
        count(seL4_CNode_Revoke(ROOT, base + pick(N_SLOTS), any_depth()));
        break;
    default: {
        /* A random invocation on whatever a slot of ours holds: random label
         * and message words, no extra caps (so nothing of the root's own
         * address space or CSpace can be handed in). */
        seL4_CPtr target = base + pick(N_SLOTS);
        seL4_Word label = pick(48);
        if (label == 12 || label == 13) /* TCB Suspend/Resume of a fresh thread: harmless, but keep it rare */
            label = 0;
        for (int i = 0; i < 6; i++)
            seL4_SetMR(i, pick(2) ? pick(300) : rnd());
        seL4_MessageInfo_t info = seL4_MessageInfo_new(label, 0, 0, pick(7));
        if (seL4_DebugCapIdentify(target) == 4) {
            /* An endpoint: a Call would wait for a receiver for ever (IPC,
             * issue 5). NBSend is dropped when nobody waits. */
            seL4_NBSend(target, info);
            count(0);
            break;
        }
        count(seL4_MessageInfo_get_label(seL4_Call(target, info)));
        break;
    }
    }
}

/* The slots and the untyped are free, and the untyped big enough. */
static void take_slots_and_untyped(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    base = bi->empty.start + (bi->empty.end - bi->empty.start) / 2;
    /* framework/threads.c takes its slots from three quarters on */
    KASSERT(base + N_SLOTS <= bi->empty.start + 3 * (bi->empty.end - bi->empty.start) / 4);
    for (seL4_Word i = 0; i < N_SLOTS; i++)
        KASSERT_EQ(seL4_DebugCapIdentify(base + i), 0);
    find_untyped();
    KASSERT_MSG(untyped != 0, "no RAM untyped of 2^20..2^24 bytes");
}

/* Everything made from the untyped goes with one revoke; caps that came
 * from elsewhere (copies of initial caps, moved or minted) go by delete.
 * Then no memory is lost: the untyped retypes into one untyped of its full
 * size. */
static void give_back_slots_and_untyped(void)
{
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, untyped, 64), seL4_NoError);
    for (seL4_Word i = 0; i < N_SLOTS; i++)
        KASSERT_EQ(seL4_CNode_Delete(ROOT, base + i, 64), seL4_NoError);
    for (seL4_Word i = 0; i < N_SLOTS; i++)
        KASSERT_EQ(seL4_DebugCapIdentify(base + i), 0);
    KASSERT_EQ(seL4_Untyped_Retype(untyped, seL4_UntypedObject, untyped_bits, ROOT, 0, 0, base, 1), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(base), 2);
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, untyped, 64), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(base), 0);
}

KTEST(stress, random_capability_operations_lose_no_memory)
{
    take_slots_and_untyped();
    rng_state = 0x6b616972 ^ untyped_bits; /* "kair" */
    printf("stress: %d random operations on slots [%lu, %lu) and untyped %lu (2^%lu bytes)\n", N_OPS,
           (unsigned long)base, (unsigned long)(base + N_SLOTS), (unsigned long)untyped,
           (unsigned long)untyped_bits);
    for (int op = 0; op < N_OPS; op++)
        random_operation();
    printf("stress: outcomes by seL4_Error:");
    for (int e = 0; e < 11; e++)
        printf(" %d:%lu", e, outcomes[e]);
    printf("\n");
    /* Both halves of the space were exercised: many operations succeeded
     * (objects really were made, copied, moved and deleted) and many were
     * refused with errors. */
    KASSERT(outcomes[0] >= N_OPS / 10);
    KASSERT(N_OPS - outcomes[0] >= N_OPS / 10);

    give_back_slots_and_untyped();
}

/* ---- IPC mixed in ------------------------------------------------------------
 *
 * Five children (framework/threads.h; their TCBs and own SCs come from the
 * framework's untyped and slots, three have IPC buffers) make random IPC
 * system calls (Call, Send, NBSend, Recv, NBRecv, ReplyRecv, Wait, NBWait,
 * NBSendRecv, NBSendWait) with random lengths and extra caps on a shared set
 * of endpoints, badged copies of them, reply objects and a notification, all
 * made from the stress untyped in the stress slots. Meanwhile the root, at
 * the children's priority, deletes and re-creates those objects, revokes
 * and mints endpoint caps, cancels badged sends, makes children passive and
 * active again, binds, unbinds, deletes and re-creates spare SCs, suspends,
 * resumes, re-prioritises, deletes and re-creates the children's TCBs, and
 * sends, receives and replies itself, non-blocking only. The children's
 * cap faults (an emptied slot) go to endpoint 0, where the root or a child
 * answers them. Every message says who sent it and how long it is, and
 * every receiver checks the words it got. Then everything is revoked and
 * the untyped must retype whole again. */

#define I_CHILDREN 5
#define I_EPS 3 /* endpoint 0 is also the children's fault endpoint: never deleted */
#define I_COPIES 4
#define I_REPLIES 5
#define I_SCS 2
#define I_OPS 800
#define I_ROOT_ID 7
#define I_LABEL 0x51
#define I_FAULT_BADGE 0xfa
#define I_SENTINEL 0x5e71ul /* a1 before a receive: still there = nothing received */

enum {
    S_EP = 0,
    S_COPY = S_EP + I_EPS,
    S_REPLY = S_COPY + I_COPIES,
    S_NTFN = S_REPLY + I_REPLIES,
    S_SC = S_NTFN + 1,
    S_RECV = S_SC + I_SCS, /* a receive slot per child, then the root's */
    S_TCB = S_RECV + I_CHILDREN + 1,
    S_SCRATCH = S_TCB + I_CHILDREN,
    S_END
};

static kt_thread_t *i_child[I_CHILDREN];
static volatile seL4_Word i_ops[I_CHILDREN];      /* system calls made */
static volatile seL4_Word i_answered[I_CHILDREN]; /* Calls answered by a message of ours */
static volatile seL4_Word i_received[I_CHILDREN]; /* messages from someone else checked */
static volatile seL4_Word i_with_caps[I_CHILDREN]; /* ... of them with caps (transferred or unwrapped) */
static volatile seL4_Word i_corrupt;
static volatile seL4_Word i_bad[6]; /* the first bad message: receiver, info, sender word, index, got, want */

static seL4_Word i_rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (seL4_Word)(*s >> 33);
}

static seL4_Word info_word(seL4_Word label, seL4_Word caps, seL4_Word len) { return label << 12 | caps << 7 | len; }

static bool i_has_buffer(seL4_Word id) { return id == I_ROOT_ID || (id < I_CHILDREN && i_child[id]->ipc_buf); }

/* Message words: MR0 = 0xc0de << 16 | sender << 8 | length, MRi = MR0 * 31 + i. */
static seL4_Word i_word(seL4_Word mr0, seL4_Word i) { return i == 0 ? mr0 : mr0 * 31 + i; }

/* A message one of us sent, as received (info, MR0-3 in registers, the rest
 * in buf if any): length and every word as sent? Returns the sender or -1
 * for a message that is not ours (faults, error replies, empty replies). */
static long i_check(seL4_Word self, seL4_Word info, const seL4_Word mr[4], const seL4_Word *buf)
{
    seL4_Word len = info & 0x7f;
    if ((info >> 12) != I_LABEL || len == 0)
        return -1;
    seL4_Word mr0 = mr[0];
    seL4_Word sender = (mr0 >> 8) & 0xff, sent = mr0 & 0xff;
    seL4_Word want = sent;
    if (sent > 4 && !(i_has_buffer(self) && i_has_buffer(sender)))
        want = 4;
    seL4_Word bad = ~0ul, got = 0;
    if ((mr0 >> 16) != 0xc0de || (sender >= I_CHILDREN && sender != I_ROOT_ID) || sent > 120 || len != want) {
        bad = 0;
        got = len;
    }
    for (seL4_Word i = 1; bad == ~0ul && i < len; i++) {
        got = i < 4 ? mr[i] : buf[1 + i];
        if (got != i_word(mr0, i))
            bad = i;
    }
    if (bad != ~0ul) {
        if (i_corrupt++ == 0) {
            i_bad[0] = self;
            i_bad[1] = info;
            i_bad[2] = mr0;
            i_bad[3] = bad;
            i_bad[4] = got;
            i_bad[5] = bad ? i_word(mr0, bad) : want;
        }
        return -1;
    }
    return (long)sender;
}

/* Slots a child may name: the endpoints, their copies, the replies, the
 * notification and (rarely) the receive slots, whatever they hold now. */
static seL4_CPtr i_any_cap(uint64_t *s)
{
    if (i_rnd(s) % 10 == 0)
        return base + S_RECV + i_rnd(s) % (I_CHILDREN + 1);
    return base + S_EP + i_rnd(s) % (S_NTFN + 1 - S_EP);
}
static seL4_CPtr i_any_ep(uint64_t *s)
{
    seL4_Word k = i_rnd(s) % 8;
    return k < 5 ? base + S_EP + k % I_EPS : k < 7 ? base + S_COPY + i_rnd(s) % I_COPIES : base + S_NTFN;
}
static seL4_CPtr i_any_reply(uint64_t *s) { return base + S_REPLY + i_rnd(s) % I_REPLIES; }

/* A child: a random system call after another. Children 0 and 1 are
 * mostly servers, the others mostly their clients. Like a server, a child
 * remembers the reply object of the last message it took and mostly
 * answers through that one. */
static void i_child_loop(seL4_Word id, seL4_Word seed, seL4_Word unused)
{
    (void)unused;
    uint64_t s = seed;
    seL4_Word *buf = i_child[id]->ipc_buf;
    seL4_CPtr last_reply = i_any_reply(&s);
    for (;;) {
        /* The message: up to 120 words and 3 caps with a buffer, 4 words without. */
        seL4_Word len = 1 + i_rnd(&s) % (buf ? 120 : 4);
        seL4_Word mr0 = 0xc0de0000ul | id << 8 | len;
        seL4_Word caps = 0;
        if (buf) {
            for (seL4_Word i = 4; i < len; i++)
                buf[1 + i] = i_word(mr0, i);
            if (i_rnd(&s) % 4 == 0) {
                caps = 1 + i_rnd(&s) % 3;
                for (seL4_Word k = 0; k < caps; k++)
                    buf[122 + k] = i_any_cap(&s);
            }
        }
        kt_regs_t in = {i_any_ep(&s),    info_word(I_LABEL, caps, len), mr0, i_word(mr0, 1), i_word(mr0, 2),
                        i_word(mr0, 3), i_rnd(&s) % 5 ? last_reply : i_any_reply(&s), 0};
        long sys;
        seL4_Word k = i_rnd(&s) % 20;
        if (id < 2) {
            /* Children 0 and 1 serve endpoint 1 + id with reply object id:
             * mostly answer the last caller and wait for the next, else
             * something that does not block them elsewhere. */
            seL4_CPtr own = base + S_EP + 1 + id;
            sys = seL4_SysReplyRecv;
            in.a6 = base + S_REPLY + id;
            switch (k) {
            case 0: case 1: sys = seL4_SysNBSend; in.a0 = i_any_cap(&s); break;
            case 2: sys = seL4_SysNBSend; in.a0 = in.a6; break; /* a reply alone */
            case 3: sys = seL4_SysNBRecv; in.a6 = i_any_reply(&s); break;
            case 4: sys = seL4_SysRecv; in.a0 = own; in.a6 = i_any_reply(&s); break;
            case 5: sys = i_rnd(&s) % 2 ? seL4_SysWait : seL4_SysNBWait; in.a0 = own; break;
            case 6: sys = seL4_SysNBSendRecv; in.t0 = i_any_cap(&s); in.a0 = own; break;
            case 7: in.a6 = i_any_reply(&s); in.a0 = own; break;
            default: in.a0 = own; break;
            }
        } else if (k < 10) {
            /* The others mostly call them ... */
            sys = seL4_SysCall;
            in.a0 = base + S_EP + 1 + i_rnd(&s) % 2;
        } else if (k < 12) { /* ... else anything */
            sys = seL4_SysCall;
        } else if (k < 14) {
            sys = k == 12 ? seL4_SysSend : seL4_SysNBSend;
            in.a0 = i_rnd(&s) % 3 ? in.a0 : i_any_cap(&s);
        } else if (k < 15) { /* reply with Send / NBSend on a reply cap */
            sys = i_rnd(&s) % 2 ? seL4_SysSend : seL4_SysNBSend;
            in.a0 = in.a6;
        } else if (k < 16) {
            sys = i_rnd(&s) % 2 ? seL4_SysRecv : seL4_SysNBRecv;
        } else if (k < 17) {
            sys = seL4_SysReplyRecv;
        } else if (k < 18) {
            sys = i_rnd(&s) % 2 ? seL4_SysWait : seL4_SysNBWait;
        } else if (k < 19) {
            sys = seL4_SysNBSendRecv; /* send to t0, receive on a0 */
            in.t0 = i_any_cap(&s);
        } else {
            sys = seL4_SysNBSendWait; /* send to a6, wait on a0 */
            in.a6 = i_rnd(&s) % 2 ? i_any_cap(&s) : in.a6;
        }
        bool receives = sys != seL4_SysSend && sys != seL4_SysNBSend;
        if (sys == seL4_SysRecv || sys == seL4_SysNBRecv || sys == seL4_SysWait || sys == seL4_SysNBWait)
            in.a1 = I_SENTINEL;
        kt_regs_t r = kt_syscall((seL4_Word)sys, in);
        i_ops[id]++;
        if (!receives || r.a1 == I_SENTINEL)
            continue;
        if (sys != seL4_SysCall && sys != seL4_SysWait && sys != seL4_SysNBWait && sys != seL4_SysNBSendWait)
            last_reply = in.a6; /* a caller may wait on it now */
        seL4_Word mr[4] = {r.a2, r.a3, r.a4, r.a5};
        long from = i_check(id, r.a1, mr, buf);
        if (from >= 0 && (seL4_Word)from != id) {
            i_received[id]++;
            if ((r.a1 >> 7) & 3)
                i_with_caps[id]++;
            if (sys == seL4_SysCall)
                i_answered[id]++;
        }
    }
}

/* A child's registers, IPC buffer (receive slot of its own) and fault
 * endpoint, then start it. */
static void i_start(seL4_Word id, uint64_t *s)
{
    kt_thread_t *t = i_child[id];
    if (t->ipc_buf) {
        t->ipc_buf[125] = ROOT;
        t->ipc_buf[126] = base + S_RECV + id;
        t->ipc_buf[127] = 64;
    }
    seL4_CPtr fault = base + S_SCRATCH;
    KASSERT_EQ(seL4_CNode_Mint(ROOT, fault, 64, ROOT, base + S_EP, 64, seL4_CapRights_new(0, 1, 0, 1),
                               I_FAULT_BADGE),
               seL4_NoError);
    KASSERT_EQ(seL4_TCB_SetSpace(t->tcb, fault, ROOT, 0, seL4_CapInitThreadVSpace, 0), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, fault, 64), seL4_NoError);
    kt_thread_start(t, i_child_loop, id, i_rnd(s) | 1, 0);
}

/* A new object of that type from the stress untyped into slot off (what it
 * held is deleted first). */
static seL4_Error i_remake(seL4_Word off, seL4_Word type, seL4_Word bits)
{
    KASSERT_EQ(seL4_CNode_Delete(ROOT, base + off, 64), seL4_NoError);
    return seL4_Untyped_Retype(untyped, type, bits, ROOT, 0, 0, base + off, 1);
}

static void i_remake_sc(seL4_Word j)
{
    if (i_remake(S_SC + j, seL4_SchedContextObject, 8) == seL4_NoError)
        KASSERT_EQ(seL4_SchedControl_ConfigureFlags(kt_sched_control(), base + S_SC + j, 500 + 500 * j, 1000 + 1000 * j,
                                                    0, 0x5c0 + j, 0),
                   seL4_NoError);
}

/* The root's own message into its IPC buffer. */
static seL4_Word i_root_message(uint64_t *s, bool with_cap)
{
    seL4_Word len = 1 + i_rnd(s) % 120;
    seL4_Word mr0 = 0xc0de0000ul | (seL4_Word)I_ROOT_ID << 8 | len;
    for (seL4_Word i = 0; i < len; i++)
        seL4_SetMR((int)i, i_word(mr0, i));
    if (with_cap)
        seL4_SetCap(0, base + S_EP + i_rnd(s) % I_EPS);
    return info_word(I_LABEL, with_cap, len);
}

/* A non-blocking receive by the root; a caller (or faulting child) then
 * waits on reply rp. Returns true if something came. */
static unsigned long i_root_received;
static bool i_root_nbrecv(seL4_CPtr ep, seL4_CPtr rp, seL4_Word *badge, seL4_Word *label)
{
    /* Only on an endpoint original (all rights) with a reply object: a
     * failed receive would be a cap fault of the root. */
    if (seL4_DebugCapIdentify(ep) != 4 || seL4_DebugCapIdentify(rp) != 8)
        return false;
    kt_regs_t in = {ep, I_SENTINEL, 0, 0, 0, 0, rp, 0};
    kt_regs_t r = kt_syscall(seL4_SysNBRecv, in);
    if (r.a1 == I_SENTINEL)
        return false;
    seL4_Word mr[4] = {r.a2, r.a3, r.a4, r.a5};
    if (i_check(I_ROOT_ID, r.a1, mr, (const seL4_Word *)seL4_GetIPCBuffer()) >= 0)
        i_root_received++;
    *badge = r.a0;
    *label = r.a1 >> 12;
    return true;
}

KTEST(stress, random_ipc_and_capability_operations_lose_no_memory)
{
    take_slots_and_untyped();
    kt_threads_cleanup();
    uint64_t s = 0x1bc0ffee ^ untyped_bits;
    i_corrupt = 0;
    i_root_received = 0;
    for (int k = 0; k < I_EPS; k++)
        KASSERT_EQ(i_remake(S_EP + (seL4_Word)k, seL4_EndpointObject, 0), seL4_NoError);
    for (int k = 0; k < I_REPLIES; k++)
        KASSERT_EQ(i_remake(S_REPLY + (seL4_Word)k, seL4_ReplyObject, 0), seL4_NoError);
    KASSERT_EQ(i_remake(S_NTFN, seL4_NotificationObject, 0), seL4_NoError);
    for (seL4_Word j = 0; j < I_SCS; j++)
        i_remake_sc(j);
    seL4_CPtr root_reply = base + S_SCRATCH + 1;
    KASSERT_EQ(i_remake(S_SCRATCH + 1, seL4_ReplyObject, 0), seL4_NoError);
    seL4_CPtr rcn, ridx;
    seL4_Word rdepth;
    seL4_GetCapReceivePath(&rcn, &ridx, &rdepth);
    seL4_SetCapReceivePath(ROOT, base + S_RECV + I_CHILDREN, 64);
    kt_root_prio(100);
    for (seL4_Word id = 0; id < I_CHILDREN; id++) {
        i_ops[id] = i_answered[id] = i_received[id] = i_with_caps[id] = 0;
        i_child[id] = kt_thread_new(100, true, id < 3);
        i_start(id, &s);
    }
    bool i_low[I_CHILDREN] = {false}; /* at priority 99, below the root */
    unsigned long n_op[24] = {0}, faults = 0, root_replies = 0, respawns = 0, passives = 0;
    for (int op = 0; op < I_OPS; op++) {
        if (op % 16 == 0) {
            /* Children left Inactive (a cancelled call, a reply object
             * deleted, a Call taken with Wait) start over. */
            for (int i = 0; i < I_CHILDREN; i++) {
                KASSERT_EQ(seL4_TCB_Resume(i_child[i]->tcb), seL4_NoError);
                /* Below the root they would not run again. */
                if (i_low[i])
                    KASSERT_EQ(seL4_TCB_SetPriority(i_child[i]->tcb, KT_SELF, 100), seL4_NoError);
                i_low[i] = false;
                /* Passive clients mostly get their own SC back (if it is
                 * free), passive servers seldom. */
                if (i_rnd(&s) % 4 >= (i < 2 ? 3u : 1u))
                    (void)seL4_SchedContext_Bind(i_child[i]->sc, i_child[i]->tcb);
            }
        }
        seL4_Word k = i_rnd(&s) % 24;
        seL4_Word id = i_rnd(&s) % I_CHILDREN;
        kt_thread_t *t = i_child[id];
        n_op[k]++;
        switch (k) {
        case 0: /* delete an endpoint (queued threads restart), make a new one */
            (void)i_remake(S_EP + 1 + i_rnd(&s) % (I_EPS - 1), seL4_EndpointObject, 0);
            break;
        case 1: /* revoke an endpoint: its badged copies go */
            KASSERT_EQ(seL4_CNode_Revoke(ROOT, base + S_EP + 1 + i_rnd(&s) % (I_EPS - 1), 64), seL4_NoError);
            break;
        case 2: { /* a badged copy, with some rights */
            seL4_CPtr c = base + S_COPY + i_rnd(&s) % I_COPIES;
            KASSERT_EQ(seL4_CNode_Delete(ROOT, c, 64), seL4_NoError);
            seL4_CapRights_t rights = i_rnd(&s) % 2 ? seL4_AllRights : seL4_CapRights_new(0, i_rnd(&s) % 2, 1, 1);
            if (i_rnd(&s) % 4 == 0)
                rights = seL4_CapRights_new(0, 1, 0, 1);
            (void)seL4_CNode_Mint(ROOT, c, 64, ROOT, base + S_EP + i_rnd(&s) % I_EPS, 64, rights,
                                  1 + i_rnd(&s) % 4);
            break;
        }
        case 3: /* cancel the sends with a copy's badge */
            (void)seL4_CNode_CancelBadgedSends(ROOT, base + S_COPY + i_rnd(&s) % I_COPIES, 64);
            break;
        case 4: /* delete a reply object (its caller goes Inactive), make a new one */
            (void)i_remake(S_REPLY + i_rnd(&s) % I_REPLIES, seL4_ReplyObject, 0);
            break;
        case 5: /* passive (its own SC away), or active again */
            if (i_rnd(&s) % 3 < (id < 2 ? 2u : 1u)) /* the servers more often */
                passives += seL4_SchedContext_UnbindObject(t->sc, t->tcb) == seL4_NoError;
            else
                (void)seL4_SchedContext_Bind(t->sc, t->tcb); /* (not if it has an SC, or its own is elsewhere) */
            break;
        case 6: { /* a spare SC onto a thread without one, or off again */
            seL4_CPtr sc = base + S_SC + i_rnd(&s) % I_SCS;
            if (seL4_SchedContext_Bind(sc, t->tcb) != seL4_NoError)
                (void)seL4_SchedContext_Unbind(sc);
            break;
        }
        case 7: /* delete a spare SC (bound, lent or idle), make a new one */
            i_remake_sc(i_rnd(&s) % I_SCS);
            break;
        case 8: /* suspend (any IPC is cancelled); resumed at the next sweep or now */
            KASSERT_EQ(seL4_TCB_Suspend(t->tcb), seL4_NoError);
            if (i_rnd(&s) % 2)
                KASSERT_EQ(seL4_TCB_Resume(t->tcb), seL4_NoError);
            break;
        case 9: /* a new priority re-queues it */
            i_low[id] = i_rnd(&s) % 2;
            KASSERT_EQ(seL4_TCB_SetPriority(t->tcb, KT_SELF, i_low[id] ? 99 : 100), seL4_NoError);
            break;
        case 10: /* delete the child's TCB wherever it is, and start a new one */
            if (i_rnd(&s) % 3)
                break;
            KASSERT_EQ(seL4_CNode_Delete(ROOT, t->tcb, 64), seL4_NoError);
            KASSERT_EQ(i_remake(S_TCB + id, seL4_TCBObject, 0), seL4_NoError);
            t->tcb = base + S_TCB + id;
            KASSERT_EQ(seL4_TCB_Configure(t->tcb, ROOT, 0, seL4_CapInitThreadVSpace, 0, (seL4_Word)t->ipc_buf,
                                          t->ipc_buf ? seL4_CapInitThreadIPCBuffer : seL4_CapNull),
                       seL4_NoError);
            KASSERT_EQ(seL4_TCB_SetPriority(t->tcb, KT_SELF, 100), seL4_NoError);
            i_low[id] = false;
            /* Its SC: its own if free, else (lent, bound elsewhere) none. */
            (void)seL4_SchedContext_Bind(t->sc, t->tcb);
            i_start(id, &s);
            respawns++;
            break;
        case 11: case 20: case 21: /* a message to whoever waits, perhaps with a cap */
            if (i_rnd(&s) % 4 == 0) {
                seL4_NBSend(i_any_ep(&s), seL4_MessageInfo_new(0, 0, 0, 0)); /* (empty: wakes a Wait) */
            } else {
                kt_regs_t in = {i_any_ep(&s), i_root_message(&s, i_rnd(&s) % 3 == 0), 0, 0, 0, 0, 0, 0};
                in.a2 = seL4_GetMR(0), in.a3 = seL4_GetMR(1), in.a4 = seL4_GetMR(2), in.a5 = seL4_GetMR(3);
                kt_syscall(seL4_SysNBSend, in);
            }
            break;
        case 12: case 17: case 18: case 19: { /* take a sender or caller; mostly answer at once */
            seL4_Word badge, label;
            seL4_CPtr rp = i_rnd(&s) % 2 ? root_reply : i_any_reply(&s);
            if (i_root_nbrecv(base + S_EP + i_rnd(&s) % I_EPS, rp, &badge, &label) && i_rnd(&s) % 4) {
                kt_regs_t in = {rp, i_root_message(&s, false), 0, 0, 0, 0, 0, 0};
                in.a2 = seL4_GetMR(0), in.a3 = seL4_GetMR(1), in.a4 = seL4_GetMR(2), in.a5 = seL4_GetMR(3);
                kt_syscall(seL4_SysSend, in);
                root_replies++;
            }
            break;
        }
        case 13: { /* reply through a reply object to whoever waits on it */
            seL4_CPtr rp = i_rnd(&s) % 2 ? root_reply : i_any_reply(&s);
            kt_regs_t in = {rp, i_root_message(&s, false), 0, 0, 0, 0, 0, 0};
            in.a2 = seL4_GetMR(0), in.a3 = seL4_GetMR(1), in.a4 = seL4_GetMR(2), in.a5 = seL4_GetMR(3);
            kt_syscall(seL4_SysSend, in);
            break;
        }
        case 14: /* empty a receive slot */
            KASSERT_EQ(seL4_CNode_Delete(ROOT, base + S_RECV + i_rnd(&s) % (I_CHILDREN + 1), 64), seL4_NoError);
            break;
        case 15: { /* answer the children's cap faults: label 0 restarts them */
            seL4_Word badge, label;
            for (int n = 0; n < 3 && i_root_nbrecv(base + S_EP, root_reply, &badge, &label); n++) {
                if (badge == I_FAULT_BADGE && label == seL4_Fault_CapFault)
                    faults++;
                seL4_Send(root_reply, seL4_MessageInfo_new(0, 0, 0, 0));
            }
            break;
        }
        case 16: /* the notification: signal it, or delete and re-make it */
            if (i_rnd(&s) % 4)
                seL4_Signal(base + S_NTFN);
            else
                (void)i_remake(S_NTFN, seL4_NotificationObject, 0);
            break;
        default:
            break;
        }
        /* The children (at the root's priority) run: each a time slice. */
        seL4_Yield();
    }
    kt_threads_cleanup();
    seL4_SetCapReceivePath(rcn, ridx, rdepth);
    unsigned long ops = 0, answered = 0, received = 0, with_caps = 0;
    for (int i = 0; i < I_CHILDREN; i++) {
        ops += i_ops[i];
        answered += i_answered[i];
        received += i_received[i];
        with_caps += i_with_caps[i];
    }
    printf("stress-ipc: %d root operations: %lu endpoint, %lu reply, %lu SC and %lu TCB deletions, %lu revokes, "
           "%lu suspensions, %lu times made passive, %lu cap faults answered, %lu messages received and %lu "
           "replies sent by the root\n",
           I_OPS, n_op[0], n_op[4], n_op[7], respawns, n_op[1], n_op[8], passives, faults, i_root_received,
           root_replies);
    printf("stress-ipc: children made %lu system calls and received %lu messages from others (%lu with caps), "
           "%lu of them replies to their Calls\n",
           ops, received, with_caps, answered);
    if (i_corrupt)
        printf("stress-ipc: %lu bad messages; first: receiver %lu info %#lx MR0 %#lx word %lu = %#lx, want %#lx\n",
               (unsigned long)i_corrupt, (unsigned long)i_bad[0], (unsigned long)i_bad[1], (unsigned long)i_bad[2],
               (unsigned long)i_bad[3], (unsigned long)i_bad[4], (unsigned long)i_bad[5]);
    KASSERT_EQ(i_corrupt, 0);
    /* The children really communicated (the counts are deterministic under
     * -icount; these bounds leave room for the timer without it). */
    KASSERT(ops >= 100);
    KASSERT(received >= 50);
    KASSERT(answered >= 15);
    KASSERT(respawns >= 1 && passives >= 1);
    give_back_slots_and_untyped();
}
