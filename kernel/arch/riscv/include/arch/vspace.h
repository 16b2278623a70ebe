/* Sv39 address spaces: page tables, user mappings and ASIDs (seL4's RISC-V
 * VSpace model, seL4's src/arch/riscv/kernel/vspace.c).
 *
 * A VSpace is a page-table object that an ASID pool has assigned an ASID;
 * its upper half (root entries 256..511) is a copy of the kernel's. Caps record
 * where they are mapped (ASID, vaddr); the ASID table is the only way from an
 * ASID to its root, so a root whose ASID was freed can never be activated. */
#ifndef ARCH_VSPACE_H
#define ARCH_VSPACE_H

#include <abi.h>
#include <arch/csr.h>
#include <arch/memory.h>
#include <cap.h>
#include <types.h>

#define PTE_V (1ul << 0)
#define PTE_R (1ul << 1)
#define PTE_W (1ul << 2)
#define PTE_X (1ul << 3)
#define PTE_U (1ul << 4)
#define PTE_G (1ul << 5)
#define PTE_A (1ul << 6)
#define PTE_D (1ul << 7)

typedef u64 pte_t;

extern pte_t kernel_root_pt[512];

/* Frame sizes as the frame cap encodes them (cap_frame_size). */
enum frame_size {
    FRAME_4K = 0,
    FRAME_2M = 1,
    FRAME_1G = 2,
};
static inline word_t frame_size_bits(u32 size) { return PAGE_BITS + 9ul * size; }

/* ASIDs: 2^7 pools of 2^9; 0 is "no ASID" and never handed out. */
#define ASID_BITS 16
#define ASID_LOW_BITS 9
#define NUM_ASID_POOLS 128
#define ASID_POOL_ENTRIES 512
#define ASID_INVALID 0

/* VM attributes word: bit 0 = execute never. */
#define VM_ATTR_EXECUTE_NEVER 1ul

/* ---- boot-time construction (kernel/kernel/boot.c) ---- */
/* Drop the identity mapping head.S needed to turn the MMU on. */
void vspace_boot_finish(void);
/* Give a new root table the kernel's half of the address space. */
void vspace_copy_kernel_mappings(pte_t *root);
/* Install next-level table pt_pa for vaddr at the given level of the walk
 * (level 2 = root entry covering 1 GiB, level 1 = 2 MiB entry). */
void vspace_install_table(pte_t *root, vaddr_t vaddr, int level, paddr_t pt_pa);
/* Map one 4 KiB user page read/write/execute; all table levels must exist. */
void vspace_map_user_page(pte_t *root, vaddr_t vaddr, paddr_t frame_pa);

/* ---- address-space switch ---- */
/* Switch the MMU to the address space rooted at root_pa with the given ASID.
 * Only a table that the ASID table currently registers for `asid` is used;
 * anything else (no ASID, a freed ASID, a non-root table) runs on the kernel's
 * root, i.e. with no user mappings, as seL4's setVMRoot does. */
void vspace_switch(paddr_t root_pa, word_t asid);
/* The last two address spaces asked for: their arguments, the ASID table's
 * generation when they were checked and the satp they resolved to. `cur`
 * is the active one. The same request with no ASID change since finds its
 * satp already active (an exit to the thread that entered, or a switch
 * within one address space); the fastpath also switches back to the one
 * before it (`prev`) without re-checking the ASID table (a client and a
 * server taking turns: the cross-address-space round trip). Both cost a
 * few compares inline; one structure, so that they share one base address. No
 * request has root 0 (the kernel's root is not at physical 0). */
struct vspace_request {
    paddr_t root;
    word_t asid;
    word_t generation;
    word_t satp;
};
struct vspace_cache {
    struct vspace_request *cur, *prev; /* the two entries of req */
    word_t active_satp;                /* what satp holds */
    struct vspace_request req[2];
};
extern struct vspace_cache vspace_cache;
/* Bumped by every change to the ASID table or a pool (vspace_activate
 * re-validates a VSpace only after one). */
extern word_t asid_generation;
static ALWAYS_INLINE bool vspace_request_is(const struct vspace_request *r, paddr_t root_pa, word_t asid)
{
    return root_pa == r->root && asid == r->asid && r->generation == asid_generation;
}
/* The kernel's exits: the current request, or a full switch. */
static ALWAYS_INLINE void vspace_activate(paddr_t root_pa, word_t asid)
{
    if (!vspace_request_is(vspace_cache.cur, root_pa, asid))
        vspace_switch(root_pa, asid);
}
/* The fastpath's exit: also the request before it. Only there, so that the
 * slow paths' worst case (kairos wcet) pays for no second compare. */
static ALWAYS_INLINE void vspace_activate_or_return(paddr_t root_pa, word_t asid)
{
    struct vspace_cache *c = &vspace_cache;
    struct vspace_request *cur = c->cur;
    if (vspace_request_is(cur, root_pa, asid))
        return;
    struct vspace_request *prev = c->prev;
    if (!vspace_request_is(prev, root_pa, asid)) {
        vspace_switch(root_pa, asid);
        return;
    }
    /* Checked against the same ASID table: the same satp as then. */
    c->cur = prev;
    c->prev = cur;
    if (prev->satp != c->active_satp) {
        csr_write(satp, prev->satp);
        sfence_vma_all(); /* as vspace_switch: a full flush on every switch */
        c->active_satp = prev->satp;
    }
}
/* Re-check the active address space after an ASID was freed (seL4's
 * setVMRoot(ksCurThread) after deleteASID): never keep running on a root that
 * is no longer registered, since its memory may be reused. */
void vspace_revalidate_active(void);

/* ---- page-table walks and mappings ---- */
struct pt_slot {
    pte_t *slot;      /* entry where the walk stopped */
    word_t bits_left; /* 30, 21 or 12: the size bits that entry maps */
};
static inline bool pte_is_valid(pte_t e) { return (e & PTE_V) != 0; }
static inline bool pte_is_table(pte_t e) { return (e & PTE_V) && !(e & (PTE_R | PTE_W | PTE_X)); }
static inline paddr_t pte_paddr(pte_t e) { return (e >> 10) << 12; }
static inline pte_t pte_table(paddr_t pt) { return ((pt >> 12) << 10) | PTE_V; }
static inline pte_t *pte_next_table(pte_t e) { return (pte_t *)paddr_to_kptr(pte_paddr(e)); }
/* seL4's lookupPTSlot: descend from the root while the entry is a valid
 * pointer to a next-level table. Never fails. Inline, as the other small
 * helpers below: Page_Map uses them all. */
static inline struct pt_slot vspace_lookup_pt_slot(pte_t *root, vaddr_t vaddr)
{
    struct pt_slot r;
    r.bits_left = 30;
    r.slot = &root[(vaddr >> 30) & 511];
    /* At most two descents: the 4 KiB level has no next table. */
    for (int level = 2; level > 0 && pte_is_table(*r.slot); level--) {
        r.bits_left -= 9;
        r.slot = &pte_next_table(*r.slot)[(vaddr >> r.bits_left) & 511];
    }
    return r;
}
/* seL4's makeUserPTE: user, accessed, dirty, not global. Kernel-only rights
 * with execute-never give an invalid entry. */
static inline pte_t make_user_pte(paddr_t frame, bool executable, enum vm_rights rights)
{
    bool write = rights == VM_READ_WRITE;
    bool read = rights == VM_READ_WRITE || rights == VM_READ_ONLY;
    /* Kernel-only without execute: nothing the user may do, so no mapping
     * (the frame cap still records it). With execute: an execute-only page. */
    if (!read && !write && !executable)
        return 0;
    pte_t pte = ((frame >> 12) << 10) | PTE_V | PTE_U | PTE_A | PTE_D;
    if (read)
        pte |= PTE_R;
    if (write)
        pte |= PTE_W;
    if (executable)
        pte |= PTE_X;
    return pte;
}
/* seL4's maskVMRights: a frame's VM rights under a seL4_CapRights mask. */
static inline enum vm_rights mask_vm_rights(enum vm_rights vm, word_t cap_rights)
{
    bool read = (cap_rights & RIGHT_READ) != 0;
    bool write = (cap_rights & RIGHT_WRITE) != 0;
    if (vm == VM_READ_ONLY && read)
        return VM_READ_ONLY;
    if (vm == VM_READ_WRITE && read)
        return write ? VM_READ_WRITE : VM_READ_ONLY;
    return VM_KERNEL_ONLY;
}

/* Write a PTE and make the TLB forget what it cached for it. */
void vspace_update_leaf(pte_t *slot, pte_t pte, word_t asid, vaddr_t vaddr);
void vspace_update_table_entry(pte_t *slot, pte_t pte, word_t asid);

/* Remove a frame's mapping if (asid, vaddr) still maps exactly this frame at
 * this size (seL4's unmapPage). Never fails. */
void unmap_page(u32 size, word_t asid, vaddr_t vaddr, paddr_t frame);
/* Remove the entry that points to page table pt from the VSpace of asid, if
 * it is still reachable at vaddr (seL4's unmapPageTable). Never fails. */
void unmap_page_table(word_t asid, vaddr_t vaddr, paddr_t pt);

/* ---- ASIDs (arch/riscv/object/asid.c) ---- */
struct asid_pool {
    paddr_t vspace[ASID_POOL_ENTRIES]; /* root table of each ASID, 0 = free */
};
extern paddr_t asid_table[NUM_ASID_POOLS]; /* pool object of each pool number, 0 = none */
/* The root registered for asid, or 0 (seL4's findVSpaceForASID). */
static inline paddr_t find_vspace_for_asid(word_t asid)
{
    if (asid == ASID_INVALID || asid >= (1ul << ASID_BITS))
        return 0;
    paddr_t pool = asid_table[asid >> ASID_LOW_BITS];
    if (!pool)
        return 0;
    return ((const struct asid_pool *)paddr_to_kptr(pool))->vspace[asid & MASK(ASID_LOW_BITS)];
}
/* First pool number with no pool, or NUM_ASID_POOLS if all exist. */
word_t asid_first_free_pool(void);
/* Offset in the pool of its first free ASID (never ASID 0), or
 * ASID_POOL_ENTRIES if the pool is full. */
word_t asid_pool_first_free(const struct asid_pool *pool, word_t base);
void asid_register_pool(word_t pool_number, paddr_t pool);
/* Check flavour only: a pool summary bit that disagrees with its group. */
const char *asid_summary_violation(void);
void asid_assign(word_t asid, paddr_t root);
/* Free asid if it still names root (seL4's deleteASID). */
void delete_asid(word_t asid, paddr_t root);
/* Free a whole pool if it is still registered (seL4's deleteASIDPool). */
void delete_asid_pool(word_t base, paddr_t pool);

/* TLB maintenance for one ASID (all its non-global entries). */
void vspace_flush_asid(word_t asid);

/* Zero one 4 KiB page-table or ASID-pool object (512 stores). */
void vspace_clear_page(void *page);

/* ---- invariant checker (check flavour; kernel/kernel/invariants.c) ---- */
/* NULL if the arch-specific state recorded in cap c is consistent with the
 * page tables and the ASID table, else a description of what is wrong. */
const char *arch_cap_invariant_violation(cap_t c);
/* NULL if the ASID table, every registered root's kernel half and the active
 * address space are consistent, else what is wrong. */
const char *vspace_invariant_violation(void);

/* ---- for the TCB code ---- */
/* Can this cap back an IPC buffer? A frame, and not device memory
 * (seL4's checkValidIPCBuffer; the caller checks the 1 KiB alignment). */
bool frame_cap_ok_for_ipc_buffer(cap_t c);

#endif
