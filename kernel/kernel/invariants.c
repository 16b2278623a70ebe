/* Kernel invariant checker (check flavour). What it checks after each system
 * call, over every registered slot array (CNodes and TCBs):
 *   1. derivation-tree links are consistent: next->prev == slot and
 *      prev->next == slot, no link into an empty slot, links only between
 *      registered slots;
 *   2. the descendants of an untyped (the run of caps after it in the list
 *      whose memory it contains) lie below its watermark, and the bytes they
 *      occupy do not exceed it;
 *   3. no memory reachable from a live cap can be handed out again. Retype
 *      hands out [watermark, size) of an untyped with descendants, and all
 *      of it after a reset when it has none. So: every live cap to memory
 *      that overlaps an untyped U is U's descendant (hence below U's
 *      watermark, by 2), or is an untyped whose memory contains all of U's
 *      (an ancestor, or the original of a copy, which the copy marked full);
 *   4. an untyped's watermark never exceeds its size.
 * The boot objects (root CNode, TCB, image frames, ...) come from memory no
 * boot untyped covers, so 3 holds for them with no untyped involved.
 * Deleting an untyped cap whose objects are alive is allowed (seL4: deleting
 * an untyped cap finalises nothing). Its descendants stay where they are in
 * the list, so they become descendants of the untyped it was made from (whose
 * watermark already lies above them), or, for a boot untyped, of no untyped
 * at all: no cap then covers their memory, which is not handed out again
 * until they are gone, and never after (lost until reboot, as in seL4). A
 * cap left behind by a missed delete in a revoked untyped breaks 3 as soon
 * as the reset lowers the watermark below it.
 * The walk is linear in the number of slots (check 3 adds a binary search
 * and an enclosing chain per object cap); it is for tests, not production.
 *
 * The boot argument invariants=N (N a power of two up to 1024) runs the
 * check after every N-th kernel entry instead of every one: the fuzzer
 * (user/fuzz, docs/robustness.md) makes millions of calls. Its time is
 * charged to no scheduling context (syscall.c), but under -icount it is
 * virtual time all the same, which a check after every entry would make
 * the dominant cost of every period. */
#include <arch/memory.h>
#include <arch/vspace.h>
#include <cdt.h>
#include <endpoint.h>
#include <fastpath.h>
#include <invariants.h>
#include <kernel.h>
#include <objecttype.h>
#include <thread.h>
#include <untyped.h>
#include <preemption.h>

#if CONFIG_INVARIANT_CHECKS

#define MAX_SLOT_ARRAYS 4096

static struct {
    cte_t *slots;
    word_t n;
} arrays[MAX_SLOT_ARRAYS];
static word_t n_arrays;
static bool overflowed;

void invariants_register_slots(cte_t *slots, word_t n)
{
    if (n_arrays >= MAX_SLOT_ARRAYS) {
        overflowed = true; /* checking stays sound for what is registered */
        return;
    }
    arrays[n_arrays].slots = slots;
    arrays[n_arrays].n = n;
    n_arrays++;
}

void invariants_reset(void)
{
    n_arrays = 0;
    overflowed = false;
}

void invariants_unregister_slots(cte_t *slots)
{
    for (word_t i = 0; i < n_arrays; i++) {
        if (arrays[i].slots == slots) {
            arrays[i] = arrays[n_arrays - 1];
            n_arrays--;
            return;
        }
    }
}

static bool is_registered_slot(const cte_t *s)
{
    for (word_t i = 0; i < n_arrays; i++)
        if (s >= arrays[i].slots && s < arrays[i].slots + arrays[i].n)
            return ((word_t)((const u8 *)s - (const u8 *)arrays[i].slots) % sizeof(cte_t)) == 0;
    return false;
}

NORETURN static void violation(const char *when, const char *what, const cte_t *slot)
{
    kprintf("\nKAIROS INVARIANT VIOLATION after %s: %s (slot %p, cap type %u, object %p)\n", when, what,
            (const void *)slot, (unsigned)cap_type(slot->cap), (void *)cap_obj(slot->cap));
    panic("invariant violation");
}

static void check_links(const char *when, const cte_t *s)
{
    const cte_t *next = mdb_next(s), *prev = mdb_prev(s);
    if (cap_is_null(s->cap)) {
        if (next || prev)
            violation(when, "empty slot with derivation links", s);
        return;
    }
    if (next && (!is_registered_slot(next) || mdb_prev(next) != s))
        violation(when, "derivation tree: next slot does not link back", s);
    if (prev && (!is_registered_slot(prev) || mdb_next(prev) != s))
        violation(when, "derivation tree: previous slot does not link forward", s);
    if (next && cap_is_null(next->cap))
        violation(when, "derivation tree links to an empty slot", s);
}

/* Children of an untyped follow it in the list while it is their parent.
 * Returns the number of its descendants other than same-region copies
 * (check 3 counts the caps to its memory the same way). */
static word_t check_untyped_children(const char *when, const cte_t *u)
{
    paddr_t base = cap_obj(u->cap);
    word_t size = 1ul << cap_untyped_size_bits(u->cap);
    word_t watermark = cap_untyped_free_index(u->cap);
    if (watermark > size)
        violation(when, "untyped watermark beyond its size", u);
    word_t n = 0;
    const cte_t *c = mdb_next(u);
    /* Bounded by the number of slots in the system (every step moves along
     * the list, which has no cycles: check_links established that). */
    for (word_t steps = 0; c && steps < (1ul << 24) && cdt_is_parent_of(u, c); steps++, c = mdb_next(c)) {
        paddr_t ob = cap_object_base(c->cap);
        word_t os = cap_object_size(c->cap);
        if (ob < base || ob + os > base + size)
            violation(when, "child object outside its untyped", c);
        if (ob + os > base + watermark)
            violation(when, "child object above its untyped's watermark", c);
        if (!(cap_type(c->cap) == CAP_UNTYPED && ob == base && os == size))
            n++;
    }
    return n;
}

#define MAX_UNTYPEDS 2048
static const cte_t *untypeds[MAX_UNTYPEDS];
/* Check 3's working state, per untyped in order of base address (ties:
 * larger first): base and end, the nearest earlier untyped that contains
 * it (or -1), its descendants and the live caps to its memory, both
 * without untypeds that contain all of it. */
static word_t n_descendants[MAX_UNTYPEDS];
/* The slots holding caps to memory, gathered by the first pass so that
 * check 3 does not walk the empty slots again. */
#define MAX_PHYSICAL (1ul << 16)
static const cte_t *physical[MAX_PHYSICAL];
static word_t n_physical;
static struct {
    paddr_t base, end;
    long enclosing;
    word_t descendants, overlapping;
    const cte_t *slot;
} sorted[MAX_UNTYPEDS];

/* Insertion sort by (base ascending, end descending): the slot walk meets
 * boot untypeds in address order, so this is close to linear. */
static void sort_untypeds(word_t n)
{
    for (word_t i = 0; i < n; i++) {
        paddr_t b = cap_obj(untypeds[i]->cap);
        paddr_t e = b + cap_object_size(untypeds[i]->cap);
        word_t j = i;
        while (j > 0 && (sorted[j - 1].base > b || (sorted[j - 1].base == b && sorted[j - 1].end < e))) {
            sorted[j] = sorted[j - 1];
            j--;
        }
        sorted[j].base = b;
        sorted[j].end = e;
        sorted[j].descendants = n_descendants[i];
        sorted[j].overlapping = 0;
        sorted[j].slot = untypeds[i];
    }
}

/* The untypeds' memory must nest: two that overlap without one containing
 * the other break check 3 (neither can be the other's descendant). With
 * nesting, each untyped's enclosing chain is every untyped containing it. */
static void link_enclosing(const char *when, word_t n)
{
    long stack[64];
    word_t depth = 0;
    for (word_t i = 0; i < n; i++) {
        while (depth > 0 && sorted[stack[depth - 1]].end <= sorted[i].base)
            depth--;
        if (depth > 0 && sorted[stack[depth - 1]].end < sorted[i].end)
            violation(when, "two untypeds overlap without one containing the other", sorted[i].slot);
        sorted[i].enclosing = depth > 0 ? stack[depth - 1] : -1;
        if (depth == 64)
            violation(when, "untypeds nested more than 64 deep", sorted[i].slot);
        stack[depth++] = (long)i;
    }
}

/* Index of the last untyped whose base is at most pa, or -1. */
static long last_at_or_below(word_t n, paddr_t pa)
{
    long lo = 0, hi = (long)n - 1, found = -1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (sorted[mid].base <= pa) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

static void count_overlap(long u, const cte_t *s, paddr_t ob, paddr_t oe)
{
    if (sorted[u].slot == s)
        return;
    /* An untyped containing all of u's memory is an ancestor or a copy. */
    if (cap_type(s->cap) == CAP_UNTYPED && ob <= sorted[u].base && sorted[u].end <= oe)
        return;
    sorted[u].overlapping++;
}

static bool is_descendant(const cte_t *u, const cte_t *s)
{
    const cte_t *c = mdb_next(u);
    for (word_t steps = 0; c && steps < (1ul << 24) && cdt_is_parent_of(u, c); steps++, c = mdb_next(c))
        if (c == s)
            return true;
    return false;
}

/* Check 3, after the first pass has filled untypeds[] and n_descendants[]. */
static void check_no_memory_handed_out_twice(const char *when, word_t n)
{
    sort_untypeds(n);
    link_enclosing(when, n);
    for (word_t p = 0; p < n_physical; p++) {
        const cte_t *s = physical[p];
        paddr_t ob = cap_object_base(s->cap);
        paddr_t oe = ob + cap_object_size(s->cap);
        /* The untypeds overlapping [ob, oe): those that start inside it,
         * and those containing ob (the enclosing chain of the last one to
         * start at or below ob). Chains and runs are bounded by the number
         * of untypeds. */
        long k = last_at_or_below(n, ob);
        for (long j = k + 1; j < (long)n && sorted[j].base < oe; j++)
            count_overlap(j, s, ob, oe);
        long j = k;
        while (j >= 0 && sorted[j].end <= ob)
            j = sorted[j].enclosing;
        for (; j >= 0; j = sorted[j].enclosing)
            count_overlap(j, s, ob, oe);
    }
    /* Every descendant overlaps its untyped, so equal counts mean that every
     * overlapping cap is a descendant. On a mismatch, name the culprit. */
    for (word_t u = 0; u < n; u++) {
        if (sorted[u].overlapping == sorted[u].descendants)
            continue;
        const cte_t *ut = sorted[u].slot;
        kprintf("\nKAIROS: untyped %p (slot %p, %lu bytes, watermark %lu): %lu descendants, %lu caps to its memory\n",
                (void *)cap_obj(ut->cap), (const void *)ut, (unsigned long)cap_object_size(ut->cap),
                (unsigned long)cap_untyped_free_index(ut->cap), (unsigned long)sorted[u].descendants,
                (unsigned long)sorted[u].overlapping);
        for (word_t a = 0; a < n_arrays; a++)
            for (word_t i = 0; i < arrays[a].n; i++) {
                const cte_t *s = &arrays[a].slots[i];
                if (!cap_is_physical(s->cap) || s == ut)
                    continue;
                paddr_t ob = cap_object_base(s->cap), oe = ob + cap_object_size(s->cap);
                bool overlaps = ob < sorted[u].end && sorted[u].base < oe;
                bool contains = cap_type(s->cap) == CAP_UNTYPED && ob <= sorted[u].base && sorted[u].end <= oe;
                if (overlaps && !contains && !is_descendant(ut, s))
                    violation(when, "cap to memory an untyped can hand out again (not its descendant)", s);
            }
        violation(when, "untyped descendant count does not match the caps to its memory", ut);
    }
}

/* Entries between checks: read from the boot arguments at the first check. */
static word_t check_period, entries_since_check;

static word_t period(void)
{
    if (check_period == 0) {
        static const char *const args[] = {"invariants=1", "invariants=2", "invariants=4", "invariants=8",
                                           "invariants=16", "invariants=32", "invariants=64", "invariants=128",
                                           "invariants=256", "invariants=512", "invariants=1024"};
        check_period = 1;
        for (word_t i = 0; i < sizeof(args) / sizeof(args[0]); i++)
            if (bootargs_has(args[i]))
                check_period = 1ul << i;
    }
    return check_period;
}

void invariants_check(const char *when)
{
    if (++entries_since_check < period())
        return;
    entries_since_check = 0;
    debug_counters[KAIROS_COUNTER_INVARIANT_CHECKS]++;
    {
        const char *why = vspace_invariant_violation();
        if (why) {
            kprintf("\nKAIROS INVARIANT VIOLATION after %s: %s\n", when, why);
            panic("invariant violation");
        }
    }
    {
        const char *why = sched_invariant_violation(); /* thread.c */
        if (why) {
            kprintf("\nKAIROS INVARIANT VIOLATION after %s: %s\n", when, why);
            panic("invariant violation");
        }
    }
    word_t n_untypeds = 0;
    bool all_untypeds = !overflowed; /* and every physical cap gathered */
    n_physical = 0;
    /* CDT (cdt.c): per-slot facts, and no cycles: the lists from all heads
     * hold every cap exactly once. */
    word_t total_slots = 0, n_caps = 0, on_lists = 0;
    for (word_t a = 0; a < n_arrays; a++)
        total_slots += arrays[a].n;
    for (word_t a = 0; a < n_arrays; a++) {
        for (word_t i = 0; i < arrays[a].n; i++) {
            const cte_t *s = &arrays[a].slots[i];
            /* An empty slot with no links satisfies every per-slot check
             * below; most slots are such (the root CNode alone has 8192). */
            if (cap_is_null(s->cap) && s->mdb.next == 0 && s->mdb.prev == 0)
                continue;
            check_links(when, s);
            {
                const char *why = arch_cap_invariant_violation(s->cap);
                if (why)
                    violation(when, why, s);
            }
            {
                const char *why = ipc_invariant_violation(s->cap); /* endpoint.c */
                if (why)
                    violation(when, why, s);
            }
            const char *cdt_fault = cdt_check_slot(s);
            if (cdt_fault)
                violation(when, cdt_fault, s);
            if (!cap_is_null(s->cap)) {
                n_caps++;
                if (cap_is_physical(s->cap)) {
                    if (n_physical < MAX_PHYSICAL)
                        physical[n_physical++] = s;
                    else
                        all_untypeds = false;
                }
                if (!mdb_prev(s))
                    on_lists += cdt_list_length(s, total_slots);
            }
            if (cap_type(s->cap) == CAP_UNTYPED) {
                word_t descendants = check_untyped_children(when, s);
                if (untyped_used_bytes(s) > cap_untyped_free_index(s->cap))
                    violation(when, "objects made from an untyped exceed its watermark", s);
                if (n_untypeds < MAX_UNTYPEDS) {
                    n_descendants[n_untypeds] = descendants;
                    untypeds[n_untypeds++] = s;
                } else {
                    all_untypeds = false;
                }
            }
        }
    }
    if (!overflowed && n_arrays > 0 && on_lists != n_caps)
        violation(when, "derivation tree: a cycle, or caps on no list", &arrays[0].slots[0]);
    if (!all_untypeds)
        return; /* check 3 needs every untyped and every slot; skip rather than report falsely */
    check_no_memory_handed_out_twice(when, n_untypeds);
}

#endif
