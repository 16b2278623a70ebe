/*
 * libFuzzer harness for the kernel's capability decode layer, built for the
 * host with ASan and UBSan (tests/test_host_fuzz.py, docs/robustness.md).
 *
 * Linked with the kernel's own sources, unchanged, in the check flavour:
 * capability lookup (kernel/kernel/cspace.c), the derivation tree with
 * delete and revoke (cdt.c), the generic and RISC-V cap operations
 * (object/objecttype.c, arch/riscv/object/objecttype.c), CNode invocations
 * (object/cnode.c), Untyped_Retype (object/untyped.c) and the invariant
 * checker (kernel/kernel/invariants.c). Physical memory is a host buffer
 * (tests/host/fuzz/include/arch/memory.h). What lies beyond the decode layer
 * (finalising threads, endpoints, SCs and mappings, the IPC buffer, the
 * scheduler) is stubbed below: deleting the last cap to such an object
 * forgets it without the finalisation.
 *
 * One input is a sequence of invocations on a boot-like capability space
 * (a root CNode of 64 slots, one 256 KiB untyped, an endpoint, a second
 * CNode): each record picks the invoked cptr, a label, a message length,
 * eight message words and two extra caps, all from the input bytes, so the
 * space grows and shrinks as the input retypes, copies, mints, moves,
 * rotates, deletes and revokes. Preemption points take an input bit, so
 * restarted deletes and revokes are exercised. After every invocation the
 * kernel's invariant checker runs; a violation, a kernel assertion, a panic
 * or a sanitizer report is a crash.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arch/memory.h>
#include <arch/vspace.h>
#include <cdt.h>
#include <cspace.h>
#include <endpoint.h>
#include <invariants.h>
#include <invocation.h>
#include <irq.h>
#include <kernel.h>
#include <notification.h>
#include <objecttype.h>
#include <preemption.h>
#include <schedcontext.h>
#include <thread.h>

#define RAM_BYTES (1ul << 20)
#define ROOT_RADIX 6

unsigned char *host_ram;

/* ---- the input as a stream of words and bits ----------------------------- */

static const uint8_t *in_data;
static size_t in_len, in_pos;

static uint64_t take(unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v = (v << 8) | (in_pos < in_len ? in_data[in_pos++] : 0);
    return v;
}

/* ---- what the decoders need from the rest of the kernel ----------------- */

word_t syscall_error_words[SYSCALL_ERROR_MAX_WORDS];
word_t syscall_error_length;
struct tcb *current_thread;
paddr_t asid_table[NUM_ASID_POOLS];
u64 debug_counters[NUM_DEBUG_COUNTERS];
bool preemption_forced;

/* Message words beyond the four in registers: from the invocation record. */
static word_t message[16];

word_t get_mr_from_buffer(struct tcb *t, word_t i)
{
    (void)t;
    return i < 16 ? message[i] : 0;
}

struct syscall_error failed_lookup_error(bool source, const struct lookup_failure *f)
{
    syscall_error_words[0] = source;
    syscall_error_words[1] = f->type + 1;
    syscall_error_words[2] = f->bits_left;
    syscall_error_length = 3;
    struct syscall_error e = {ERR_FAILED_LOOKUP};
    return e;
}

void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

void kernel_panic(const char *file, int line, const char *msg)
{
    fprintf(stderr, "KAIROS PANIC at %s:%d: %s\n", file, line, msg);
    abort();
}

/* A preemption point is taken when the input says so (at most 64 in a row,
 * and never once the input is used up, so that a restarted operation
 * always finishes). */
static unsigned preemptions_in_a_row;
static bool fuzz_preempt(void)
{
    if (in_pos < in_len && preemptions_in_a_row < 64 && (take(1) & 7) == 0) {
        preemptions_in_a_row++;
        return true;
    }
    preemptions_in_a_row = 0;
    return false;
}
bool preemption_point(void) { return fuzz_preempt(); }
bool preemption_point_unforced(void) { return fuzz_preempt(); }

void unmap_page_table(word_t asid, vaddr_t vaddr, paddr_t pt) { (void)asid, (void)vaddr, (void)pt; }
void unmap_page(u32 size, word_t asid, vaddr_t vaddr, paddr_t frame) { (void)size, (void)asid, (void)vaddr, (void)frame; }
void delete_asid_pool(word_t base, paddr_t pool) { (void)base, (void)pool; }
void delete_asid(word_t asid, paddr_t root) { (void)asid, (void)root; }
const char *vspace_invariant_violation(void) { return NULL; }
const char *ipc_invariant_violation(cap_t c) { (void)c; return NULL; }
const char *sched_invariant_violation(void) { return NULL; } /* the scheduler is not linked */
void thread_set_name(struct tcb *t, const char *name, word_t max_len) { (void)t, (void)name, (void)max_len; }
const char *thread_name(const struct tcb *t) { (void)t; return "fuzz"; }
void debug_register_thread(struct tcb *t) { (void)t; }
/* The thread count as tcb.c keeps it (the retype decode's limit), reset
 * by boot() for each input; the root thread counts as one. */
static word_t fuzz_threads;
void tcb_finalise(struct tcb *t) { (void)t; fuzz_threads -= fuzz_threads > 0; }
void tcb_count_new(void) { fuzz_threads++; }
word_t tcb_room(void) { return fuzz_threads < CONFIG_MAX_THREADS ? CONFIG_MAX_THREADS - fuzz_threads : 0; }
void sched_context_init(struct sched_context *sc, u32 size_bits) { (void)sc, (void)size_bits; }
void sched_context_finalise(struct sched_context *sc) { (void)sc; }
void reply_finalise(struct reply *r) { (void)r; }
bool notification_finalise(struct notification *n) { (void)n; return true; }
bool endpoint_finalise(struct endpoint *ep) { (void)ep; return true; }
bool endpoint_cancel_badged_sends(struct endpoint *ep, word_t badge) { (void)ep, (void)badge; return false; }
bool irq_handler_deleted(word_t irq) { (void)irq; return true; }
bool bootargs_has(const char *word) { (void)word; return false; } /* the checker runs after every invocation */

/* ---- the capability space -------------------------------------------------- */

static struct tcb caller;
static cte_t *root_slots;
static cap_t root_cap;

/* Boot-like: root CNode at the start of RAM (its slots registered with the
 * checker), then a 256 KiB untyped, an endpoint and a 16-slot CNode made by
 * the first retypes of an input (the input decides what else). */
static void boot(void)
{
    memset(host_ram, 0, RAM_BYTES);
    memset(&caller, 0, sizeof(caller));
    fuzz_threads = 1;
    paddr_t root = HOST_RAM_PADDR;
    root_slots = (cte_t *)paddr_to_kptr(root);
    root_cap = cap_cnode(root, ROOT_RADIX, 64 - ROOT_RADIX, 0);
    invariants_reset();
    invariants_register_slots(root_slots, 1ul << ROOT_RADIX);
    cte_insert_original(root_cap, &root_slots[1], true);
    /* The untyped: the upper half of RAM, full as boot leaves it. */
    cte_insert_original(cap_untyped(HOST_RAM_PADDR + RAM_BYTES / 2, 18, false, 1ul << 18), &root_slots[2], true);
    caller.slots[TCB_SLOT_CSPACE].cap = root_cap;
    current_thread = &caller;
}

static const cte_t *lookup(word_t cptr) { return cspace_walk(root_cap, cptr, 64); }

static void invoke_one(void)
{
    /* The invoked cap: mostly slot numbers with a depth-64 cptr. */
    word_t cptr = take(1) & 0x80 ? take(8) : (take(1) & ((1ul << ROOT_RADIX) - 1));
    /* Labels of the two decoders half of the time (1: Retype, 18-25:
     * CNode), any byte otherwise. */
    word_t label = take(1);
    if (label & 1)
        label = (label >> 1) % 10 == 0 ? 1 : 17 + (label >> 1) % 10;
    else
        label >>= 1;
    word_t length = take(1) % 10;
    word_t n_extra = take(1) % 3;
    for (int i = 0; i < 8; i++) {
        word_t kind = take(1);
        /* Small numbers (slot indices, types, sizes) and depth 64 most of
         * the time, any byte or word otherwise. */
        message[i] = kind < 96 ? take(1) & 0x3f : kind < 192 ? 64 : kind < 224 ? take(1) : take(8);
    }
    cte_t *slot = (cte_t *)lookup(cptr);
    if (!slot || cap_is_null(slot->cap))
        return;
    struct invocation inv;
    memset(&inv, 0, sizeof(inv));
    inv.caller = &caller;
    inv.label = label;
    inv.length = length;
    inv.slot = slot;
    inv.cap = slot->cap;
    inv.call = true;
    for (word_t i = 0; i < n_extra; i++) {
        /* The root CNode (slot 1) half of the time: most extra caps are CNodes. */
        word_t which = take(1);
        const cte_t *e = lookup(which & 1 ? 1 : (which >> 1) & ((1ul << ROOT_RADIX) - 1));
        if (!e)
            break;
        inv.extra_slot[inv.n_extra] = (cte_t *)e;
        inv.extra[inv.n_extra++] = e->cap;
    }
    for (int i = 0; i < 4; i++)
        caller.ctx.x[REG_A2 + i] = message[i];
    /* Retry a preempted operation as the kernel restarts the system call. */
    for (long attempt = 0; attempt < (1l << 20); attempt++) {
        struct syscall_error e;
        switch (cap_type(slot->cap)) {
        case CAP_CNODE:
            e = invoke_cnode(&inv);
            break;
        case CAP_UNTYPED:
            e = invoke_untyped(&inv);
            break;
        default:
            return;
        }
        invariants_check("a fuzzed invocation");
        if (e.code != ERR_PREEMPTED)
            return;
        /* The restart looks everything up again. */
        slot = (cte_t *)lookup(cptr);
        if (!slot || cap_is_null(slot->cap))
            return;
        inv.slot = slot;
        inv.cap = slot->cap;
    }
    abort(); /* a restarted operation that never finishes is a hang */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!host_ram) {
        host_ram = aligned_alloc(RAM_BYTES, RAM_BYTES);
        if (!host_ram)
            abort();
    }
    in_data = data;
    in_len = size;
    in_pos = 0;
    boot();
    for (int n = 0; n < 64 && in_pos < in_len; n++)
        invoke_one();
    return 0;
}

#ifdef FUZZ_STANDALONE_MAIN
/* The coverage build: run each file named on the command line once. */
int main(int argc, char **argv)
{
    static uint8_t buf[1 << 16];
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 2;
        }
        size_t n = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
    }
    return 0;
}
#endif

#ifdef INVARIANT_SELFTEST
/* The checker's untyped rule on hand-made states (tests/test_host_fuzz.py):
 * argv[1] names the case; the program exits 0 if the checker accepts the
 * state, and aborts (kernel_panic) if it reports a violation. */
static struct syscall_error retype(word_t ut_slot, word_t type, word_t bits, word_t dest)
{
    struct invocation inv;
    memset(&inv, 0, sizeof(inv));
    inv.caller = &caller;
    inv.label = INV_UNTYPED_RETYPE;
    inv.length = 6;
    inv.slot = &root_slots[ut_slot];
    inv.cap = inv.slot->cap;
    inv.n_extra = 1;
    inv.extra[0] = root_cap;
    inv.extra_slot[0] = &root_slots[1];
    word_t mr[6] = {type, bits, 0, 0, dest, 1};
    for (int i = 0; i < 4; i++)
        caller.ctx.x[REG_A2 + i] = mr[i];
    message[4] = mr[4];
    message[5] = mr[5];
    return invoke_untyped(&inv);
}

int main(int argc, char **argv)
{
    host_ram = aligned_alloc(RAM_BYTES, RAM_BYTES);
    boot();
    const char *what = argc > 1 ? argv[1] : "";
    if (retype(2, OBJ_TCB, 0, 10).code != ERR_NONE || retype(2, OBJ_ENDPOINT, 0, 11).code != ERR_NONE)
        return 3;
    invariants_check("setup");
    if (strcmp(what, "delete-untyped") == 0) {
        /* The two-call sequence: allowed, the objects stay. */
        if (cte_delete(&root_slots[2], true).code != ERR_NONE)
            return 3;
    } else if (strcmp(what, "cap-in-free-memory") == 0) {
        /* A cap to an endpoint in memory the untyped can still hand out,
         * outside the derivation tree: memory handed out twice. */
        paddr_t free_ep = cap_obj(root_slots[2].cap) + cap_untyped_free_index(root_slots[2].cap) + 64;
        cte_insert_original(cap_endpoint(free_ep, RIGHTS_ALL, 0), &root_slots[20], false);
    } else if (strcmp(what, "reset-under-live-object") == 0) {
        /* The endpoint's cap moved off the untyped's run, then the untyped
         * emptied: a reset would zero memory a live cap names. */
        cte_insert_original(root_slots[11].cap, &root_slots[21], false);
        cte_delete(&root_slots[10], true);
        cte_delete(&root_slots[11], true);
    } else if (strcmp(what, "partial-overlap") == 0) {
        /* An untyped overlapping another without either containing the other. */
        paddr_t base = cap_obj(root_slots[2].cap);
        cte_insert_original(cap_untyped(base - (1ul << 12), 13, false, 1ul << 13), &root_slots[22], true);
    } else if (strcmp(what, "none") != 0) {
        return 2;
    }
    invariants_check("the self-test");
    return 0;
}
#endif
