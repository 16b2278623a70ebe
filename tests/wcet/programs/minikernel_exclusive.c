/* A kernel in miniature for the infeasible-path refinement of `kairos
 * latency` (tests/wcet/test_latency.py): the system call does one of two
 * long operations chosen by one value, never both, and the ILP alone would
 * take both. It is analysed, not run. */
#define WORDS 32

volatile unsigned long table_a[WORDS], table_b[WORDS];
volatile unsigned long pending;
volatile unsigned long cause;
unsigned long request;

__attribute__((noinline)) int preemption_point(void)
{
    return pending != 0;
}

__attribute__((noinline, noreturn)) void exit_to_user(void)
{
    __asm__ volatile("sret");
    __builtin_unreachable();
}

/* noipa, and the empty asm in handle_syscall, keep the compiler from
 * proving the exclusion itself and folding the second test away. */
__attribute__((noipa)) void clear_a(void)
{
    for (int i = 0; i < WORDS; i++)
        table_a[i] = 0;
}

__attribute__((noipa)) void clear_b(void)
{
    for (int i = 0; i < WORDS; i++)
        table_b[i] = (unsigned long)i;
}

__attribute__((noinline, noreturn)) void handle_interrupt(void)
{
    pending = 0;
    exit_to_user();
}

__attribute__((noinline, noreturn)) void handle_syscall(void)
{
    unsigned long r = request;
    if (r > 10)
        clear_a();
    __asm__ volatile("" : "+r"(r)); /* r is unchanged */
    if (r <= 10)
        clear_b();
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
