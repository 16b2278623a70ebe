/*
 * Kairos root-task entry.
 *
 * The kernel starts the root task with a0 = BootInfo address, pc = ELF
 * entry and every other register zero (docs/boot.md).
 * Set up gp and a stack, then hand over to C; .bss arrives zero-filled
 * (the kernel loads p_memsz beyond p_filesz as zeros), so nothing is
 * cleared here.
 */
    .section .text.kairos_start, "ax", @progbits
    .globl _start
    .type _start, @function
_start:
    .option push
    .option norelax
    lla     gp, __global_pointer$
    .option pop
    lla     sp, __kairos_stack_top
    mv      s0, zero            /* terminate frame-pointer chains */
    mv      ra, zero
    /* a0 still holds the BootInfo pointer. */
    call    __kairos_start_c
    /* __kairos_start_c does not return; trap if it ever does. */
1:  unimp
    j       1b
    .size _start, . - _start

/* The initial thread's stack: 64 KiB, 16-byte aligned, in .bss. */
    .section .bss.kairos_stack, "aw", @nobits
    .balign 16
    .globl __kairos_stack_bottom
__kairos_stack_bottom:
    .skip   65536
    .globl __kairos_stack_top
__kairos_stack_top:
