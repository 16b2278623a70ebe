/* Sv39 page-table handling: boot mappings, walks, user PTEs, TLB maintenance
 * and address-space switches. The decoders that use these live in
 * arch/riscv/object/vspace.c; the ASID table in arch/riscv/object/asid.c.
 *
 * Every loop here is bounded by a constant: a walk has at most 3 levels, a
 * table 512 entries. */
#include <arch/csr.h>
#include <arch/memory.h>
#include <arch/vspace.h>
#include <kernel.h>
#include <string.h>

/* The kernel's root table: its upper half is copied into every user root, and
 * with its lower half empty it is the address space of threads without a
 * valid VSpace. */
pte_t kernel_root_pt[512] ALIGNED(4096);


static inline word_t pt_index(vaddr_t va, int level) { return (va >> (12 + 9 * level)) & 511; }

static inline word_t make_satp(paddr_t root_pa, word_t asid)
{
    return SATP_MODE_SV39 | ((asid & MASK(ASID_BITS)) << 44) | (root_pa >> 12);
}

/* sfence.vma with an ASID operand: only that ASID's non-global entries. The
 * kernel window is global, so the kernel's own translations stay. */
static inline void sfence_vma_asid(word_t asid)
{
    __asm__ volatile("sfence.vma zero, %0" ::"r"(asid) : "memory");
}
static inline void sfence_vma_page_asid(vaddr_t va, word_t asid)
{
    __asm__ volatile("sfence.vma %0, %1" ::"r"(va), "r"(asid) : "memory");
}

void vspace_boot_finish(void)
{
    for (word_t i = 0; i < KERNEL_PT_FIRST_INDEX; i++)
        kernel_root_pt[i] = 0;
    sfence_vma_all();
    vspace_cache.cur = &vspace_cache.req[0];
    vspace_cache.prev = &vspace_cache.req[1];
    vspace_cache.active_satp = csr_read(satp);
}

/* Eight entries, one 64-byte line of each table, at a time, by the
 * out-of-line copy_8_words: all eight loads from the kernel's table, then
 * all eight stores. A copy alternating entry by entry between two tables
 * may miss on every access when their lines share a cache set (the U54's
 * L1 is random-replacement, docs/processor-model.md §3); by lines it costs
 * one miss per line of each table. Out of line, because in this loop the
 * WCET analysis could not place the lines: a load from the kernel's table
 * at an index it does not know is "one of several known lines", and a
 * store through root plus that index is at an unknown offset, each a miss
 * (156,055 cycles for the copy on the u54 model; 41,147 by calls). */
_Static_assert(KERNEL_PT_FIRST_INDEX % 8 == 0 && PT_ENTRIES % 8 == 0, "whole lines");
void vspace_copy_kernel_mappings(pte_t *root)
{
    for (word_t i = KERNEL_PT_FIRST_INDEX; i < PT_ENTRIES; i += 8)
        copy_8_words((unsigned long *)&root[i], (const unsigned long *)&kernel_root_pt[i]);
}

void vspace_install_table(pte_t *root, vaddr_t vaddr, int level, paddr_t pt_pa)
{
    pte_t *table = root;
    for (int l = 2; l > level; l--) {
        pte_t e = table[pt_index(vaddr, l)];
        kassert(pte_is_table(e));
        table = pte_next_table(e);
    }
    table[pt_index(vaddr, level)] = pte_table(pt_pa);
}

void vspace_map_user_page(pte_t *root, vaddr_t vaddr, paddr_t frame_pa)
{
    pte_t *table = root;
    for (int l = 2; l > 0; l--) {
        pte_t e = table[pt_index(vaddr, l)];
        kassert(pte_is_table(e));
        table = pte_next_table(e);
    }
    table[pt_index(vaddr, 0)] = make_user_pte(frame_pa, true, VM_READ_WRITE);
}

/* ---- switching address spaces ---- */

/* Both entries root 0 until used: no request matches them. cur and prev
 * are set by vspace_boot_finish, before the first switch. */
struct vspace_cache vspace_cache;

/* A request that is neither of the last two: it replaces the older one and
 * becomes the current one. */
void vspace_switch(paddr_t root_pa, word_t asid)
{
    struct vspace_request *r = vspace_cache.prev;
    vspace_cache.prev = vspace_cache.cur;
    vspace_cache.cur = r;
    r->root = root_pa;
    r->asid = asid;
    r->generation = asid_generation;
    /* Only the root the ASID table registers for this ASID is a VSpace
     * (a page table that is not a root, or a root whose ASID or pool has
     * been deleted, must not be used: its memory may be reused). */
    if (asid == ASID_INVALID || find_vspace_for_asid(asid) != root_pa) {
        root_pa = kptr_to_paddr(kernel_root_pt);
        asid = ASID_INVALID;
    }
    word_t satp = make_satp(root_pa, asid);
    r->satp = satp;
    if (satp == vspace_cache.active_satp)
        return;
    csr_write(satp, satp);
    /* A full flush on every switch: ASIDs then only matter for the targeted
     * flushes below, and a reused ASID can never see stale entries. */
    sfence_vma_all();
    vspace_cache.active_satp = satp;
}

void vspace_revalidate_active(void)
{
    vspace_activate((vspace_cache.active_satp & MASK(44)) << 12, (vspace_cache.active_satp >> 44) & MASK(ASID_BITS));
}

void vspace_flush_asid(word_t asid) { sfence_vma_asid(asid); }

/* ---- walks and PTEs ---- */

void vspace_update_leaf(pte_t *slot, pte_t pte, word_t asid, vaddr_t vaddr)
{
    *slot = pte;
    /* A leaf of any size is flushed by one address inside it. */
    sfence_vma_page_asid(vaddr, asid);
}

void vspace_update_table_entry(pte_t *slot, pte_t pte, word_t asid)
{
    *slot = pte;
    /* A table entry covers up to 1 GiB of leaves: flush the whole ASID
     * rather than every page under it. */
    sfence_vma_asid(asid);
}

void unmap_page(u32 size, word_t asid, vaddr_t vaddr, paddr_t frame)
{
    paddr_t root = find_vspace_for_asid(asid);
    if (!root)
        return;
    struct pt_slot s = vspace_lookup_pt_slot((pte_t *)paddr_to_kptr(root), vaddr);
    if (s.bits_left != frame_size_bits(size))
        return;
    pte_t e = *s.slot;
    /* Only if the entry still maps this frame: someone else's mapping made
     * after ours was lost (table unmapped and replaced) stays. */
    if (!pte_is_valid(e) || pte_is_table(e) || pte_paddr(e) != frame)
        return;
    vspace_update_leaf(s.slot, 0, asid, vaddr);
}

void unmap_page_table(word_t asid, vaddr_t vaddr, paddr_t pt)
{
    paddr_t root = find_vspace_for_asid(asid);
    if (!root || root == pt)
        return;
    pte_t *table = (pte_t *)paddr_to_kptr(root);
    pte_t *target = (pte_t *)paddr_to_kptr(pt);
    pte_t *slot = NULL;
    /* Walk at most two levels looking for the entry that points at pt. */
    for (int level = 2; level > 0 && table != target; level--) {
        slot = &table[pt_index(vaddr, level)];
        if (!pte_is_table(*slot))
            return; /* not reachable any more: nothing to unmap */
        table = pte_next_table(*slot);
    }
    if (table != target || !slot)
        return;
    vspace_update_table_entry(slot, 0, asid);
}

/* A counted loop of 512 stores (gcc must not turn it into a memset call:
 * the WCET analyser bounds this loop directly). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
void vspace_clear_page(void *page)
{
    u64 *w = (u64 *)page;
    for (word_t i = 0; i < PT_ENTRIES; i++)
        w[i] = 0;
}

bool frame_cap_ok_for_ipc_buffer(cap_t c)
{
    return cap_type(c) == CAP_FRAME && !cap_frame_is_device(c);
}

/* ---- invariants (check flavour) ---- */
#if CONFIG_INVARIANT_CHECKS

static bool kernel_half_intact(const pte_t *root)
{
    /* Only the entries the kernel uses (its window): a few dozen compares. */
    for (word_t i = KERNEL_PT_FIRST_INDEX; i < PT_ENTRIES; i++)
        if (kernel_root_pt[i] && root[i] != kernel_root_pt[i])
            return false;
    return true;
}

const char *vspace_invariant_violation(void)
{
    for (word_t p = 0; p < NUM_ASID_POOLS; p++) {
        paddr_t pool = asid_table[p];
        if (!pool)
            continue;
        if (!IS_ALIGNED(pool, ASID_POOL_BITS) || pool >= KERNEL_WINDOW_SIZE)
            return "ASID table names a misplaced pool";
        const struct asid_pool *ap = (const struct asid_pool *)paddr_to_kptr(pool);
        if (p == 0 && ap->vspace[0])
            return "ASID 0 has a VSpace";
        for (word_t i = 0; i < ASID_POOL_ENTRIES; i++) {
            paddr_t root = ap->vspace[i];
            if (!root)
                continue;
            if (!IS_ALIGNED(root, PAGE_TABLE_BITS) || root >= KERNEL_WINDOW_SIZE)
                return "ASID pool names a misplaced VSpace root";
            if (!kernel_half_intact((const pte_t *)paddr_to_kptr(root)))
                return "a VSpace root lost the kernel's mappings";
        }
    }
    const char *summary = asid_summary_violation();
    if (summary)
        return summary;
    paddr_t active_root = (vspace_cache.active_satp & MASK(44)) << 12;
    word_t active_asid = (vspace_cache.active_satp >> 44) & MASK(ASID_BITS);
    if (active_asid == ASID_INVALID ? active_root != kptr_to_paddr(kernel_root_pt)
                                    : find_vspace_for_asid(active_asid) != active_root)
        return "the active address space is not a registered VSpace";
    /* The address-space cache: an entry that vspace_activate may still use
     * (checked against today's ASID table) holds what vspace_switch would
     * compute for it now, and the current one is what satp holds. */
    const struct vspace_request *req[2] = {vspace_cache.cur, vspace_cache.prev};
    for (int k = 0; k < 2; k++) {
        const struct vspace_request *r = req[k];
        if (r->root == 0 || r->generation != asid_generation)
            continue;
        bool valid = r->asid != ASID_INVALID && find_vspace_for_asid(r->asid) == r->root;
        word_t satp = valid ? make_satp(r->root, r->asid) : make_satp(kptr_to_paddr(kernel_root_pt), ASID_INVALID);
        if (r->satp != satp)
            return "the address-space cache holds a stale satp";
        if (k == 0 && r->satp != vspace_cache.active_satp)
            return "the current address-space request is not what satp holds";
    }
    for (word_t i = 0; i < KERNEL_PT_FIRST_INDEX; i++)
        if (kernel_root_pt[i])
            return "the kernel's root table has user mappings";
    return NULL;
}
#endif
