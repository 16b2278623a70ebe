/* The seL4 debug system calls and the root thread's FPU, as seL4 programs
 * use them. The host test checks the scheduler dump for the name set here. */
#include <ktest.h>
#include <sel4/sel4.h>
#include <stdio.h>

KTEST(debug, name_thread_then_dump_scheduler)
{
    seL4_DebugNameThread(seL4_CapInitThreadTCB, "ktest-root-thread");
    printf("debug: dump follows\n");
    seL4_DebugDumpScheduler();
    printf("debug: dump done\n");
    /* Naming a non-TCB cap is ignored by Kairos (seL4 would halt). */
    seL4_DebugNameThread(seL4_CapInitThreadCNode, "not-a-thread");
    KASSERT_EQ(seL4_DebugCapIdentify(seL4_CapInitThreadTCB), 12);
}

KTEST(debug, snapshot_changes_nothing)
{
    seL4_DebugSnapshot();
    KASSERT_EQ(seL4_DebugCapIdentify(seL4_CapInitThreadCNode), 10);
}

KTEST(debug, root_thread_has_a_working_fpu)
{
    volatile double a = 1.5, b = 2.25;
    volatile float c = 3.0f;
    double r = a * b + (double)c;
    KASSERT(r > 6.374 && r < 6.376);
    unsigned long fcsr;
    __asm__ volatile("frcsr %0" : "=r"(fcsr));
    KASSERT_EQ(fcsr & ~0x1ful, 0); /* rounding mode starts at 0 (RNE) */
}
