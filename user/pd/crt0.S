/*
 * Protection-domain entry. The loader starts a PD with pc = ELF entry,
 * sp = the top of the stack it mapped (stack_size bytes below
 * KAIROS_PD_STACK_TOP), a0 = flags (KAIROS_PD_FLAG_*), a1 = the IPC
 * buffer's address; every other register is zero. .bss arrives
 * zero-filled (fresh frames).
 */
    .section .text.kairos_start, "ax", @progbits
    .globl _start
    .type _start, @function
_start:
    .option push
    .option norelax
    lla     gp, __global_pointer$
    .option pop
    mv      s0, zero
    mv      ra, zero
    call    __kairos_pd_start
1:  unimp
    j       1b
    .size _start, . - _start
