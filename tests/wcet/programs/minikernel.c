/* A kernel in miniature for `kairos latency` (tests/wcet/test_latency.py):
 * a trap vector that jumps to an interrupt and a system-call handler, a
 * preemptible operation that polls a preemption point once per unit of
 * work, an idle wait in wfi, and the exit by sret.  It is analysed, not run. */
#define UNITS 8

volatile unsigned long work[UNITS];
volatile unsigned long pending;
volatile unsigned long cause;
volatile unsigned long runnable;
volatile unsigned long sources; /* a system parameter for the analysis */

__attribute__((noinline)) int preemption_point(void)
{
    return pending != 0;
}

__attribute__((noinline, noreturn)) void exit_to_user(void)
{
    __asm__ volatile("sret");
    __builtin_unreachable();
}

__attribute__((noinline)) void handle_pending_interrupts(void)
{
    for (unsigned long i = 0; i < sources; i++)
        work[i % UNITS] += pending;
    pending = 0;
}

__attribute__((noinline, noreturn)) void kernel_exit(void)
{
    while (!runnable) {
        __asm__ volatile("wfi");
        handle_pending_interrupts();
        runnable = work[1];
    }
    exit_to_user();
}

__attribute__((noinline, noreturn)) void handle_interrupt(void)
{
    handle_pending_interrupts();
    kernel_exit();
}

__attribute__((noinline)) int long_operation(void)
{
    for (int i = 0; i < UNITS; i++) {
        work[i] = work[i] * 3 + (unsigned long)i;
        if (preemption_point())
            return 1;
    }
    return 0;
}

/* An operation only some calls ask for (cause bit 2), polling like the
 * other: a system that never asks for it avoids it (test_latency.py). */
__attribute__((noinline)) int flush_operation(void)
{
    for (int i = 0; i < UNITS; i++) {
        work[UNITS - 1 - i] ^= (unsigned long)i;
        if (preemption_point())
            return 1;
    }
    return 0;
}

__attribute__((noinline, noreturn)) void handle_syscall(void)
{
    if ((cause & 4) && flush_operation()) {
        handle_pending_interrupts();
        kernel_exit();
    }
    if (long_operation())
        handle_pending_interrupts();
    kernel_exit();
}

__attribute__((noreturn)) void trap_entry(void)
{
    if (cause & 1)
        handle_interrupt();
    handle_syscall();
}

int main(void)
{
    return 0;
}
