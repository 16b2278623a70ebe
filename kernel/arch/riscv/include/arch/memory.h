/* The kernel's view of memory on Sv39.
 *
 * The upper half of every address space (root page-table entries 256..511) is
 * the kernel's and identical everywhere. All physical memory below
 * KERNEL_WINDOW_SIZE is mapped there at KERNEL_WINDOW + paddr with 1 GiB pages,
 * so the kernel reaches every object through one addition and never maps or
 * unmaps anything for itself. The kernel image runs at its physical load address
 * plus KERNEL_WINDOW (the linker script links it there). User space is the lower
 * half, [0, seL4_UserTop). */
#ifndef ARCH_MEMORY_H
#define ARCH_MEMORY_H

#ifdef __ASSEMBLER__
#define UL(x) x
#else
#define UL(x) x##ul
#endif

#define KERNEL_WINDOW UL(0xffffffc000000000)
#define KERNEL_WINDOW_GIB UL(64)
#define KERNEL_WINDOW_SIZE (KERNEL_WINDOW_GIB << 30)
#define KERNEL_PHYS_BASE UL(0x80200000)
/* OpenSBI's region: never RAM for Kairos, handed out as a device untyped. */
#define FIRMWARE_BASE UL(0x80000000)
#define FIRMWARE_END UL(0x80200000)

#define PT_INDEX_BITS 9
#define PT_ENTRIES 512
#define KERNEL_PT_FIRST_INDEX 256 /* root entries at and above this are the kernel's */

#ifndef __ASSEMBLER__
#include <types.h>

static inline void *paddr_to_kptr(paddr_t p) { return (void *)(p + KERNEL_WINDOW); }
static inline paddr_t kptr_to_paddr(const void *p) { return (paddr_t)p - KERNEL_WINDOW; }
#endif

#endif
