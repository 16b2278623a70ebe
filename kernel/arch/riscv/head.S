/* First instructions of the kernel. OpenSBI enters here in S-mode with the MMU
 * off, a0 = hart id, a1 = physical address of the flattened device tree. We run
 * at the physical address, so everything here is PC-relative (medany). We build
 * the boot page table, turn on Sv39 and jump to the kernel's linked (upper-half)
 * address, then call boot_kernel() in C. */
#include <arch/memory.h>

#define PTE_V 0x01
#define PTE_R 0x02
#define PTE_W 0x04
#define PTE_X 0x08
#define PTE_G 0x20
#define PTE_A 0x40
#define PTE_D 0x80
#define PTE_KERNEL_LEAF (PTE_V | PTE_R | PTE_W | PTE_X | PTE_G | PTE_A | PTE_D)

    .section .text.boot, "ax"
    .globl _start
_start:
    csrw sie, zero
    csrw sip, zero
    /* Only hart 0 boots; on QEMU virt with -smp 1 this is the only hart anyway. */
    mv s0, a0
    mv s1, a1

    /* Zero .bss through its physical address (QEMU zero-fills it too, other
     * loaders may not). */
    la t0, kernel_bss_start
    la t1, kernel_bss_end
1:  bgeu t0, t1, 2f
    sd zero, 0(t0)
    addi t0, t0, 8
    j 1b
2:
    /* Root page table: the physical window (KERNEL_WINDOW_GIB gigapages at
     * entries 256..) plus a temporary identity gigapage for the code running
     * now, removed by the C boot code once we run in the upper half. */
    la t0, kernel_root_pt
    li t1, KERNEL_PT_FIRST_INDEX
    slli t1, t1, 3
    add t1, t0, t1              /* &root[256] */
    li t2, 0                    /* physical GiB number */
    li t3, KERNEL_WINDOW_GIB
3:  slli t4, t2, 28             /* (gib << 30) >> 12 << 10 */
    ori t4, t4, PTE_KERNEL_LEAF
    sd t4, 0(t1)
    addi t1, t1, 8
    addi t2, t2, 1
    bltu t2, t3, 3b

    la t1, _start
    srli t2, t1, 30             /* identity entry for the GiB holding us */
    slli t3, t2, 3
    add t3, t0, t3
    slli t4, t2, 28
    ori t4, t4, PTE_KERNEL_LEAF
    sd t4, 0(t3)

    srli t0, t0, 12
    li t1, 8
    slli t1, t1, 60
    or t0, t0, t1
    sfence.vma
    csrw satp, t0
    sfence.vma

    /* Continue at the upper-half alias of the next instruction. */
    li t0, KERNEL_WINDOW
    la t1, 4f
    add t1, t1, t0
    jr t1
4:
    la sp, kernel_stack_top     /* now an upper-half address */
    mv a0, s0
    mv a1, s1
    call boot_kernel
5:  wfi
    j 5b

    .section .bss.stack, "aw", @nobits
    .balign 16
    .globl kernel_stack
kernel_stack:
    .space 16384
    .globl kernel_stack_top
kernel_stack_top:
