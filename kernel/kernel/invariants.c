/* Kernel invariant checker (check flavour). What it checks after each system
 * call, over every registered slot array (CNodes and TCBs):
 *   1. derivation-tree links are consistent: next->prev == slot and
 *      prev->next == slot, no link into an empty slot, links only between
 *      registered slots;
 *   2. every physical object cap that follows an untyped in the tree as its
 *      child lies inside that untyped and below its watermark;
 *   3. no cap names freed memory: every object cap lies below the watermark
 *      of some untyped cap that covers it, or among the boot objects (a
 *      reset lowers the watermark, so a cap left behind by a missed delete
 *      shows up as soon as its memory is no longer in use);
 *   4. an untyped's watermark never exceeds its size.
 * The walk is linear in the number of slots; it is for tests, not for
 * production. */
#include <arch/memory.h>
#include <arch/vspace.h>
#include <cdt.h>
#include <endpoint.h>
#include <invariants.h>
#include <kernel.h>
#include <objecttype.h>
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

/* Children of an untyped follow it in the list while it is their parent. */
static void check_untyped_children(const char *when, const cte_t *u)
{
    paddr_t base = cap_obj(u->cap);
    word_t size = 1ul << cap_untyped_size_bits(u->cap);
    word_t watermark = cap_untyped_free_index(u->cap);
    if (watermark > size)
        violation(when, "untyped watermark beyond its size", u);
    word_t used = 0;
    const cte_t *c = mdb_next(u);
    /* Bounded by the number of slots in the system (every step moves along
     * the list, which has no cycles: check_links established that). */
    for (word_t steps = 0; c && steps < (1ul << 24) && cdt_is_parent_of(u, c); steps++, c = mdb_next(c)) {
        if (!cap_is_physical(c->cap))
            continue;
        paddr_t ob = cap_object_base(c->cap);
        word_t os = cap_object_size(c->cap);
        if (ob < base || ob + os > base + size)
            violation(when, "child object outside its untyped", c);
        if (ob + os > base + watermark)
            violation(when, "child object above its untyped's watermark", c);
        used += os;
    }
    (void)used; /* overlapping copies make a plain sum meaningless; the bound above is the check */
}

static paddr_t boot_objects_base, boot_objects_end;

void invariants_set_boot_objects(paddr_t base, paddr_t end)
{
    boot_objects_base = base;
    boot_objects_end = end;
}

#define MAX_UNTYPEDS 2048
static const cte_t *untypeds[MAX_UNTYPEDS];

static bool object_in_use(const cte_t *s, word_t n_untypeds)
{
    paddr_t ob = cap_object_base(s->cap);
    word_t os = cap_object_size(s->cap);
    if (ob >= boot_objects_base && ob + os <= boot_objects_end)
        return true;
    for (word_t u = 0; u < n_untypeds; u++) {
        paddr_t base = cap_obj(untypeds[u]->cap);
        if (ob >= base && ob + os <= base + cap_untyped_free_index(untypeds[u]->cap))
            return true;
    }
    return false;
}

void invariants_check(const char *when)
{
    debug_counters[COUNTER_INVARIANT_CHECKS]++;
    {
        const char *why = vspace_invariant_violation();
        if (why) {
            kprintf("\nKAIROS INVARIANT VIOLATION after %s: %s\n", when, why);
            panic("invariant violation");
        }
    }
    word_t n_untypeds = 0;
    bool all_untypeds = !overflowed;
    /* CDT (cdt.c): per-slot facts, and no cycles: the lists from all heads
     * hold every cap exactly once. */
    word_t total_slots = 0, n_caps = 0, on_lists = 0;
    for (word_t a = 0; a < n_arrays; a++)
        total_slots += arrays[a].n;
    for (word_t a = 0; a < n_arrays; a++) {
        for (word_t i = 0; i < arrays[a].n; i++) {
            const cte_t *s = &arrays[a].slots[i];
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
                if (!mdb_prev(s))
                    on_lists += cdt_list_length(s, total_slots);
            }
            if (cap_type(s->cap) == CAP_UNTYPED) {
                check_untyped_children(when, s);
                if (untyped_used_bytes(s) > cap_untyped_free_index(s->cap))
                    violation(when, "objects made from an untyped exceed its watermark", s);
                if (n_untypeds < MAX_UNTYPEDS)
                    untypeds[n_untypeds++] = s;
                else
                    all_untypeds = false;
            }
        }
    }
    if (!overflowed && n_arrays > 0 && on_lists != n_caps)
        violation(when, "derivation tree: a cycle, or caps on no list", &arrays[0].slots[0]);
    if (!all_untypeds)
        return; /* coverage needs every untyped; skip rather than report falsely */
    for (word_t a = 0; a < n_arrays; a++)
        for (word_t i = 0; i < arrays[a].n; i++) {
            const cte_t *s = &arrays[a].slots[i];
            if (cap_is_physical(s->cap) && cap_type(s->cap) != CAP_UNTYPED &&
                !(cap_type(s->cap) == CAP_FRAME && cap_frame_is_device(s->cap)) && !object_in_use(s, n_untypeds))
                violation(when, "cap to memory no untyped accounts for (freed object still referenced)", s);
        }
}

#endif
