/* Sv39 page tables as the generic kernel sees them. */
#ifndef ARCH_VSPACE_H
#define ARCH_VSPACE_H

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

/* Drop the identity mapping head.S needed to turn the MMU on. */
void vspace_boot_finish(void);
/* Give a new root table the kernel's half of the address space. */
void vspace_copy_kernel_mappings(pte_t *root);
/* Install next-level table pt_pa for vaddr at the given level of the walk
 * (level 2 = root entry covering 1 GiB, level 1 = 2 MiB entry). */
void vspace_install_table(pte_t *root, vaddr_t vaddr, int level, paddr_t pt_pa);
/* Map one 4 KiB user page read/write/execute; all table levels must exist. */
void vspace_map_user_page(pte_t *root, vaddr_t vaddr, paddr_t frame_pa);
/* Switch the MMU to the address space rooted at root_pa with the given ASID. */
void vspace_activate(paddr_t root_pa, word_t asid);

#endif
