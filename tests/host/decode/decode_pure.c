/* Decode purity (tests/test_decode_pure.py, docs/kernel.md "Invocations"):
 * the decode step of every invocation changes no kernel state.
 *
 * The kernel's object files are compiled for the host (expose.c) with the
 * capability lookup, derivation checks and message-register library they
 * use (cspace.c, cdt.c, objecttype.c, message.c). Physical memory is a
 * host buffer (tests/host/fuzz/include/arch/memory.h) holding every object:
 * a root CNode, TCBs (one is the caller, with an IPC buffer), scheduling
 * contexts, a notification, an endpoint, a second CNode, a frame, two page
 * tables, an ASID pool and a 4 KiB untyped. Each round draws a random state
 * (bindings, thread states, priorities, configured contexts, issued IRQs,
 * registered ASID pools and roots, page-table entries, mappings) and a
 * random invocation (cap, label, length, message words, extra caps),
 * snapshots RAM, irq.c's tables and the ASID table, runs the decoder the
 * kernel would run, and compares: any byte
 * changed is a failure that names the cap type and label. The decoded
 * struct and the error words (syscall_error_words, the decode's output) are
 * not kernel state. Functions only a perform step calls are left undefined
 * at link time: a decoder calling one would crash the harness.
 *
 * Usage: decode_pure SEED ROUNDS. Prints "decoded N: ok A, error B" and exits
 * 0, or names the first impure decode and exits 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arch/memory.h>
#include <invocation.h>
#include <irq.h>
#include <kernel.h>
#include <notification.h>
#include <schedcontext.h>
#include <thread.h>

#define RAM_BYTES (1ul << 18) /* 16 objects, 16 KiB apart */
unsigned char *host_ram;

struct syscall_error pure_decode(struct invocation *inv);
void irq_tables_snapshot(unsigned char *out, word_t *len);
void irq_tables_setup(word_t ndev, word_t issued_mask);

/* ---- what the decoders read from the rest of the kernel (read-only) ---- */

struct tcb *current_thread;

static bool admit_sporadic;

bool sc_released(const struct sched_context *sc) { return sc->budget != 0 && sc->refill_count != 0; }
bool sched_admit_sporadic(void) { return admit_sporadic; }
bool thread_is_blocked(const struct tcb *t)
{
    return t->state == THREAD_BLOCKED_ON_SEND || t->state == THREAD_BLOCKED_ON_RECEIVE ||
           t->state == THREAD_BLOCKED_ON_REPLY || t->state == THREAD_BLOCKED_ON_NOTIFICATION;
}
/* kernel/arch/riscv/vspace.c's check (that file is not linked: it holds the
 * page-table code). */
bool frame_cap_ok_for_ipc_buffer(cap_t c) { return cap_type(c) == CAP_FRAME && !cap_frame_is_device(c); }
void kprintf(const char *fmt, ...) { (void)fmt; }
void kernel_panic(const char *file, int line, const char *msg)
{
    fprintf(stderr, "KAIROS PANIC at %s:%d: %s\n", file, line, msg);
    abort();
}

/* ---- random numbers (xorshift64*, seeded from the command line) ---- */

static u64 rng;
static u64 rnd(void)
{
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}
static u64 below(u64 n) { return rnd() % n; }

/* ---- the objects, at fixed places in RAM ---- */

#define ROOT_RADIX 6
#define OBJ(k) (HOST_RAM_PADDR + ((paddr_t)(k) << 14)) /* 16 KiB apart */
enum { ROOT = 0, CNODE2, TCB_CALLER, TCB_B, TCB_C, SC_A, SC_B, NTFN, EP, FRAME, PT, PT2, POOL, UT, UT2, N_OBJ };
enum slot { S_NULL, S_ROOT, S_CNODE2, S_CALLER, S_TCB_B, S_TCB_C, S_SC_A, S_SC_B, S_NTFN, S_NTFN_RO, S_EP,
            S_EP_NOGRANT, S_FRAME, S_PT, S_IRQ_CONTROL, S_IRQ_HANDLER, S_DOMAIN, S_SCHED_CONTROL, S_PT2,
            S_FRAME_2M, S_ASID_CONTROL, S_ASID_POOL, S_UNTYPED, S_UT, N_SLOTS };
_Static_assert(N_OBJ <= 16, "RAM_BYTES holds 16 objects");

static cte_t *root_slots;
static cap_t root_cap;

static struct tcb *tcb_at(int k) { return (struct tcb *)paddr_to_kptr(OBJ(k)); }
static struct sched_context *sc_at(int k) { return (struct sched_context *)paddr_to_kptr(OBJ(k)); }

static struct tcb *random_tcb_or_null(void)
{
    static const int tcbs[] = {TCB_CALLER, TCB_B, TCB_C};
    return below(3) == 0 ? NULL : tcb_at(tcbs[below(3)]);
}

/* A random but pointer-safe state: every pointer is NULL or one of the
 * objects above. The decoders read it only. */
static void random_state(void)
{
    memset(host_ram, 0, RAM_BYTES);
    root_slots = (cte_t *)paddr_to_kptr(OBJ(ROOT));
    root_cap = cap_cnode(OBJ(ROOT), ROOT_RADIX, 64 - ROOT_RADIX, 0);
    cap_t caps[N_SLOTS] = {
        [S_ROOT] = root_cap,
        [S_CNODE2] = cap_cnode(OBJ(CNODE2), 4, (u32)below(3), 0),
        [S_CALLER] = cap_thread(OBJ(TCB_CALLER)),
        [S_TCB_B] = cap_thread(OBJ(TCB_B)),
        [S_TCB_C] = cap_thread(OBJ(TCB_C)),
        [S_SC_A] = cap_sched_context(OBJ(SC_A), 8),
        [S_SC_B] = cap_sched_context(OBJ(SC_B), 7 + (u32)below(3)),
        [S_NTFN] = cap_notification(OBJ(NTFN), RIGHTS_ALL, below(4)),
        [S_NTFN_RO] = cap_notification(OBJ(NTFN), RIGHT_READ, 0),
        [S_EP] = cap_endpoint(OBJ(EP), RIGHTS_ALL, below(3)),
        [S_EP_NOGRANT] = cap_endpoint(OBJ(EP), RIGHT_WRITE | RIGHT_READ, 0),
        [S_FRAME] = cap_frame(OBJ(FRAME), 0, VM_READ_WRITE, false),
        [S_PT] = below(4) ? cap_set_mapping(cap_page_table(OBJ(PT)), 1, 0) : cap_page_table(OBJ(PT)),
        [S_IRQ_CONTROL] = cap_irq_control(),
        [S_IRQ_HANDLER] = cap_irq_handler(1 + below(8)),
        [S_DOMAIN] = cap_domain(),
        [S_SCHED_CONTROL] = cap_sched_control(0),
        [S_PT2] = below(2) ? cap_set_mapping(cap_page_table(OBJ(PT2)), 1, below(2) << 30) : cap_page_table(OBJ(PT2)),
        [S_FRAME_2M] = below(2) ? cap_set_mapping(cap_frame(OBJ(FRAME), 1, VM_READ_ONLY, below(2)), 1 + below(2),
                                                  below(4) << 21)
                                : cap_frame(OBJ(FRAME), 1, VM_READ_WRITE, false),
        [S_ASID_CONTROL] = cap_asid_control(),
        [S_ASID_POOL] = cap_asid_pool(OBJ(POOL), below(4) ? 0 : 1ul << ASID_LOW_BITS),
        [S_UNTYPED] = cap_untyped(OBJ(UT), below(4) ? ASID_POOL_BITS : 13, below(4) == 0, below(2) << 12),
        /* 16 KiB, device or not, some of it used. */
        [S_UT] = cap_untyped(OBJ(UT2), 14, below(4) == 0, below(3) * 4096),
    };
    if (below(2)) /* the 4 KiB frame mapped, at an address that may be its own */
        caps[S_FRAME] = cap_set_mapping(caps[S_FRAME], 1 + below(2), below(4) << 12);
    for (int i = 1; i < N_SLOTS; i++)
        if (!cap_is_null(caps[i]))
            cte_insert_original(caps[i], &root_slots[i], true);
    /* Threads: states, priorities, bindings. */
    static const int tcbs[] = {TCB_CALLER, TCB_B, TCB_C};
    static const u32 states[] = {THREAD_INACTIVE, THREAD_RUNNING, THREAD_RESTART, THREAD_BLOCKED_ON_RECEIVE,
                                 THREAD_BLOCKED_ON_NOTIFICATION, THREAD_BLOCKED_ON_REPLY};
    for (int i = 0; i < 3; i++) {
        struct tcb *t = tcb_at(tcbs[i]);
        t->state = states[below(6)];
        t->priority = (u32)below(256);
        t->mcp = (u32)below(256);
        t->flags = below(2);
        for (int r = 0; r < 32; r++)
            t->ctx.x[r] = rnd();
        t->ctx.fault_ip = rnd();
        if (below(2)) /* a CSpace and a VSpace, sometimes */
            cte_insert(root_cap, &root_slots[S_ROOT], &t->slots[TCB_SLOT_CSPACE]);
    }
    struct tcb *caller = tcb_at(TCB_CALLER);
    caller->state = THREAD_RUNNING;
    caller->slots[TCB_SLOT_CSPACE].cap = root_cap;
    if (below(4)) { /* an IPC buffer: message words past MR3 come from it */
        caller->slots[TCB_SLOT_IPC_BUFFER].cap = root_slots[S_FRAME].cap;
        caller->ipc_buffer = 0x10000 + 0;
    }
    /* Contexts: configured or not, bound or not. */
    for (int k = SC_A; k <= SC_B; k++) {
        struct sched_context *sc = sc_at(k);
        sc->size_bits = k == SC_A ? 8 : cap_sched_context_size_bits(root_slots[S_SC_B].cap);
        sc->refill_max = 2;
        if (below(2)) {
            sc->budget = 1000 + below(1000);
            sc->period = below(2) ? 0 : sc->budget * 2;
            sc->refill_count = 1;
        }
        struct tcb *t = random_tcb_or_null();
        if (t && !t->sc) {
            sc->tcb = t;
            t->sc = sc;
        }
        sc->consumed = rnd();
    }
    struct notification *n = (struct notification *)paddr_to_kptr(OBJ(NTFN));
    n->state = below(3);
    if (below(2)) {
        struct tcb *t = random_tcb_or_null();
        if (t) {
            n->bound_tcb = t;
            t->bound_notification = n;
        }
    }
    if (below(3) == 0)
        n->sc = sc_at(SC_B);
    if (n->state == NTFN_WAITING) {
        n->queue.head = n->queue.tail = tcb_at(TCB_C);
    }
    /* Untyped_Retype: a record of a stopped call, sometimes matching an
     * invocation drawn below (the untyped's slot, a destination in the root
     * CNode), and children of the untyped, sometimes. */
    if (below(2)) {
        caller->retype.untyped = &root_slots[S_UT];
        caller->retype.dest = &root_slots[below(N_SLOTS)];
        caller->retype.type = below(OBJ_TYPE_COUNT);
        caller->retype.user_size_bits = below(8);
        caller->retype.count = 1 + below(40);
        caller->retype.checked = below(caller->retype.count + 2);
        caller->retype.done = below(caller->retype.count + 1);
        caller->retype.first = OBJ(UT2) + below(4) * 64;
    }
    if (below(2))
        cte_insert(cap_endpoint(OBJ(UT2), RIGHTS_ALL, 0), &root_slots[S_UT], &root_slots[40 + below(8)]);
    irq_tables_setup(1 + below(40), rnd());
    /* ASIDs: pool 0 registered (or not), ASID 1 the root PT (or free), some
     * pools taken so that MakePool finds none free; page tables with a
     * random mix of empty entries, leaves and a table entry to PT2. */
    memset(asid_table, 0, sizeof(asid_table));
    if (below(4)) {
        asid_table[0] = OBJ(POOL);
        struct asid_pool *pool = (struct asid_pool *)paddr_to_kptr(OBJ(POOL));
        if (below(4))
            pool->vspace[1] = OBJ(PT);
        if (below(8) == 0) /* a full pool */
            for (word_t i = 1; i < ASID_POOL_ENTRIES; i++)
                pool->vspace[i] = OBJ(PT2);
    }
    if (below(8) == 0)
        for (word_t i = 1; i < NUM_ASID_POOLS; i++)
            asid_table[i] = OBJ(POOL);
    static const int tables[] = {PT, PT2};
    for (int k = 0; k < 2; k++) {
        pte_t *pt = (pte_t *)paddr_to_kptr(OBJ(tables[k]));
        for (word_t i = 0; i < 8; i++) {
            switch (below(4)) {
            case 0: pt[i] = 0; break;
            case 1: pt[i] = make_user_pte(OBJ(FRAME), true, VM_READ_WRITE); break;
            default: pt[i] = k == 0 ? pte_table(OBJ(PT2)) : 0; break;
            }
        }
    }
    if (below(2)) /* a child of the untyped: MakePool answers RevokeFirst */
        cte_insert(root_slots[S_UNTYPED].cap, &root_slots[S_UNTYPED], &root_slots[N_SLOTS]);
    admit_sporadic = below(2);
    current_thread = caller;
}

static word_t random_word(void)
{
    switch (below(7)) {
    case 0: return below(8);
    case 1: return below(64);
    case 2: return 64;
    case 3: return below(1ul << 20);
    case 4: return below(8) << 12; /* page-aligned addresses for the VSpace decoders */
    case 5: return below(4) << 21;
    default: return rnd();
    }
}

static const word_t labels[] = {1,  1,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18,
                                19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 44, 0,
                                1,  45, 200, 37, 38, 39, 39, 39, 40, 41, 42, 42, 43, 43};

static struct invocation random_invocation(void)
{
    struct invocation inv;
    memset(&inv, 0, sizeof(inv));
    struct tcb *caller = tcb_at(TCB_CALLER);
    inv.caller = caller;
    static const int invoked[] = {S_ROOT,        S_CNODE2,     S_CALLER,   S_TCB_B,         S_TCB_C,
                                  S_SC_A,        S_SC_B,       S_IRQ_CONTROL, S_IRQ_HANDLER, S_DOMAIN,
                                  S_SCHED_CONTROL, S_PT,       S_PT2,      S_FRAME,         S_FRAME_2M,
                                  S_ASID_CONTROL, S_ASID_POOL, S_UT,       S_UT};
    inv.slot = &root_slots[invoked[below(sizeof(invoked) / sizeof(invoked[0]))]];
    inv.cap = inv.slot->cap;
    inv.label = labels[below(sizeof(labels) / sizeof(labels[0]))];
    inv.length = below(10);
    inv.call = below(2);
    inv.n_extra = below(4);
    /* The VSpace invocations mostly get their own labels and extra caps
     * (tables, the untyped, CNodes): random ones would almost never pass
     * their checks. */
    bool vspace = cap_type(inv.cap) == CAP_PAGE_TABLE || cap_type(inv.cap) == CAP_FRAME ||
                  cap_type(inv.cap) == CAP_ASID_CONTROL || cap_type(inv.cap) == CAP_ASID_POOL;
    static const int vspace_extra[] = {S_PT, S_PT, S_PT2, S_UNTYPED, S_ROOT, S_CNODE2};
    if (vspace && below(4)) {
        switch (cap_type(inv.cap)) {
        case CAP_PAGE_TABLE: inv.label = INV_PAGE_TABLE_MAP + below(2); break;
        case CAP_FRAME: inv.label = INV_PAGE_MAP + (below(2) ? 0 : below(3)); break;
        case CAP_ASID_CONTROL: inv.label = INV_ASID_CONTROL_MAKE_POOL; break;
        default: inv.label = INV_ASID_POOL_ASSIGN; break;
        }
    }
    for (word_t i = 0; i < MSG_MAX_EXTRA_CAPS; i++) {
        cte_t *s = vspace && below(4) ? &root_slots[vspace_extra[below(6)]] : &root_slots[below(N_SLOTS)];
        inv.extra_slot[i] = i < inv.n_extra ? s : NULL;
        inv.extra[i] = i < inv.n_extra ? s->cap : cap_null();
    }
    /* Message words: registers, and the IPC buffer if the caller has one. */
    for (int i = 0; i < NUM_MSG_REGISTERS; i++)
        caller->ctx.x[REG_A2 + i] = random_word();
    word_t *buf = ipc_buffer_kptr(caller);
    if (buf)
        for (word_t i = NUM_MSG_REGISTERS; i < 12; i++)
            buf[BUF_MSG + i] = random_word();
    /* Half of the retypes are well formed (into empty root slots, from a
     * record's destination sometimes), so that decodes succeed too. */
    if (cap_type(inv.cap) == CAP_UNTYPED && buf && below(2)) {
        inv.label = INV_UNTYPED_RETYPE;
        inv.length = 6;
        inv.n_extra = 1;
        inv.extra_slot[0] = &root_slots[S_ROOT];
        inv.extra[0] = root_cap;
        word_t offset = caller->retype.dest && below(2) ? (word_t)(caller->retype.dest - root_slots) : 20 + below(40);
        word_t mr[6] = {below(2) ? caller->retype.type : below(OBJ_TYPE_COUNT),
                        below(2) ? caller->retype.user_size_bits : 4 + below(6), 0, 0, offset & 63,
                        below(2) ? caller->retype.count : 1 + below(40)};
        for (int i = 0; i < NUM_MSG_REGISTERS; i++)
            caller->ctx.x[REG_A2 + i] = mr[i];
        for (word_t i = NUM_MSG_REGISTERS; i < 6; i++)
            buf[BUF_MSG + i] = mr[i];
    }
    /* Half the MakePools name the untyped and an empty slot of the root
     * CNode at its full depth, so that some pass every check. */
    if (cap_type(inv.cap) == CAP_ASID_CONTROL && below(2)) {
        inv.n_extra = 2;
        inv.extra_slot[0] = &root_slots[S_UNTYPED];
        inv.extra_slot[1] = &root_slots[S_ROOT];
        inv.extra[0] = root_slots[S_UNTYPED].cap;
        inv.extra[1] = root_slots[S_ROOT].cap;
        caller->ctx.x[REG_A2] = N_SLOTS + below(4); /* N_SLOTS: the untyped's child, if it has one */
        caller->ctx.x[REG_A2 + 1] = 64;
    }
    return inv;
}

static unsigned char ram_before[RAM_BYTES];
static unsigned char irq_before[1 << 16], irq_after[1 << 16];

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: decode_pure SEED ROUNDS\n");
        return 2;
    }
    rng = strtoull(argv[1], NULL, 0) * 2 + 1;
    long rounds = strtol(argv[2], NULL, 0);
    host_ram = aligned_alloc(RAM_BYTES, RAM_BYTES);
    if (!host_ram)
        return 2;
    long ok = 0, failed = 0;
    for (long r = 0; r < rounds; r++) {
        random_state();
        struct invocation inv = random_invocation();
        struct invocation inv_before = inv;
        memcpy(ram_before, host_ram, RAM_BYTES);
        word_t irq_len, irq_len2;
        irq_tables_snapshot(irq_before, &irq_len);
        struct syscall_error e = pure_decode(&inv);
        irq_tables_snapshot(irq_after, &irq_len2);
        if (e.code == ERR_NONE)
            ok++;
        else
            failed++;
        const char *what = NULL;
        long at = -1;
        for (long i = 0; i < (long)RAM_BYTES; i++)
            if (host_ram[i] != ram_before[i]) {
                what = "kernel memory";
                at = i;
                break;
            }
        if (!what && memcmp(irq_before, irq_after, irq_len) != 0)
            what = "the IRQ or ASID tables";
        if (!what && memcmp(&inv, &inv_before, sizeof(inv)) != 0)
            what = "the invocation record";
        if (what) {
            printf("IMPURE DECODE: round %ld, cap type %u, label %lu, length %lu, extra caps %lu: "
                   "wrote %s (RAM offset %ld), returned error %lu\n",
                   r, (unsigned)cap_type(inv.cap), (unsigned long)inv.label, (unsigned long)inv.length,
                   (unsigned long)inv.n_extra, what, at, (unsigned long)e.code);
            return 1;
        }
    }
    printf("decoded %ld: ok %ld, error %ld\n", rounds, ok, failed);
    return 0;
}
