/* Sv39 page-table handling: boot mappings and address-space switches. */
#include <arch/csr.h>
#include <arch/memory.h>
#include <arch/vspace.h>
#include <kernel.h>

/* The kernel's root table: its upper half is copied into every user root. */
pte_t kernel_root_pt[512] ALIGNED(4096);

static word_t active_satp;

static inline pte_t pte_table(paddr_t pt) { return ((pt >> 12) << 10) | PTE_V; }
static inline paddr_t pte_paddr(pte_t pte) { return (pte >> 10) << 12; }
static inline word_t pt_index(vaddr_t va, int level) { return (va >> (12 + 9 * level)) & 511; }

void vspace_boot_finish(void)
{
    for (word_t i = 0; i < KERNEL_PT_FIRST_INDEX; i++)
        kernel_root_pt[i] = 0;
    sfence_vma_all();
    active_satp = csr_read(satp);
}

void vspace_copy_kernel_mappings(pte_t *root)
{
    for (word_t i = KERNEL_PT_FIRST_INDEX; i < PT_ENTRIES; i++)
        root[i] = kernel_root_pt[i];
}

void vspace_install_table(pte_t *root, vaddr_t vaddr, int level, paddr_t pt_pa)
{
    pte_t *table = root;
    for (int l = 2; l > level; l--) {
        pte_t e = table[pt_index(vaddr, l)];
        kassert(e & PTE_V);
        table = (pte_t *)paddr_to_kptr(pte_paddr(e));
    }
    table[pt_index(vaddr, level)] = pte_table(pt_pa);
}

void vspace_map_user_page(pte_t *root, vaddr_t vaddr, paddr_t frame_pa)
{
    pte_t *table = root;
    for (int l = 2; l > 0; l--) {
        pte_t e = table[pt_index(vaddr, l)];
        kassert(e & PTE_V);
        table = (pte_t *)paddr_to_kptr(pte_paddr(e));
    }
    table[pt_index(vaddr, 0)] = ((frame_pa >> 12) << 10) | PTE_V | PTE_R | PTE_W | PTE_X | PTE_U | PTE_A | PTE_D;
}

void vspace_activate(paddr_t root_pa, word_t asid)
{
    word_t satp = SATP_MODE_SV39 | ((asid & 0xffff) << 44) | (root_pa >> 12);
    if (satp == active_satp)
        return;
    csr_write(satp, satp);
    sfence_vma_all();
    active_satp = satp;
}
