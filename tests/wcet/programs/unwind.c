/* A kernel in miniature for the unwinding facts of `kairos latency`
 * (tests/wcet/test_latency_unwind.py).  `operation` stops at the first poll
 * that finds an interrupt and returns ERR_PREEMPTED, which its callers test:
 * after a taken poll, the handling path unwinds to handle_pending_interrupts
 * and the exit, and neither the operation's further units nor the heavy
 * completion work can follow.  With -DCARELESS, the operation ignores what
 * the poll returned (it goes on and completes): there the facts must leave
 * the heavy work on the handling path.  Analysed, and run in the emulator
 * from trap_entry with an interrupt pending. */
#define UNITS 8
#define ERR_PREEMPTED 100
#define HEAVY 48

volatile unsigned long work[UNITS];
volatile unsigned long pending;
volatile unsigned long cause;
volatile unsigned long done;

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
    pending = 0;
}

/* the completion of an operation: far longer than the unwinding */
__attribute__((noinline)) void heavy(void)
{
    for (unsigned long i = 0; i < HEAVY; i++)
        work[i % UNITS] = work[(i * 5) % UNITS] * 7 + i;
    done = done + 1;
}

__attribute__((noinline)) int step(int i)
{
    work[i] = work[i] * 3 + (unsigned long)i;
    if (preemption_point())
        return ERR_PREEMPTED;
    return 0;
}

__attribute__((noinline)) int operation(void)
{
    for (int i = 0; i < UNITS; i++) {
#ifdef CARELESS
        step(i);
#else
        int e = step(i);
        if (e)
            return e;
#endif
    }
    heavy();
    return 0;
}

__attribute__((noinline, noreturn)) void handle_syscall(void)
{
    if (operation() == ERR_PREEMPTED)
        handle_pending_interrupts();
    else
        heavy();
    exit_to_user();
}

__attribute__((noinline, noreturn)) void handle_interrupt(void)
{
    handle_pending_interrupts();
    exit_to_user();
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
