/* Minimal start-up for the WCET test programs: set the stack, call the
   entry named by the build (default: main), stop with ebreak. */
    .section .text.start, "ax"
    .globl _start
_start:
    la   sp, __stack_top
    call main
    ebreak
1:  j    1b
