/* Host build of the kernel's decode layer (tests/host/fuzz): the same
 * constants as kernel/arch/riscv/include/arch/memory.h, but physical
 * addresses are offsets into a host buffer, the fuzzer's "RAM", which
 * starts at physical address HOST_RAM_PADDR. */
#ifndef ARCH_MEMORY_H
#define ARCH_MEMORY_H

#define UL(x) x##ul
#define KERNEL_WINDOW UL(0xffffffc000000000)
#define KERNEL_WINDOW_GIB UL(64)
#define KERNEL_WINDOW_SIZE (KERNEL_WINDOW_GIB << 30)
#define KERNEL_PHYS_BASE UL(0x80200000)
#define FIRMWARE_BASE UL(0x80000000)
#define FIRMWARE_END UL(0x80200000)
#define PT_INDEX_BITS 9
#define PT_ENTRIES 512
#define KERNEL_PT_FIRST_INDEX 256

#include <types.h>

#define HOST_RAM_PADDR UL(0x80000000)
extern unsigned char *host_ram;

static inline void *paddr_to_kptr(paddr_t p) { return host_ram + (p - HOST_RAM_PADDR); }
static inline paddr_t kptr_to_paddr(const void *p) { return (paddr_t)((const unsigned char *)p - host_ram) + HOST_RAM_PADDR; }

#endif
