/* Fault delivery. A thread with no fault handler is reported and made
 * inactive; the kernel itself carries on. */
#include <fault.h>
#include <kernel.h>
#include <thread.h>

static const char *fault_name(enum fault_label t)
{
    switch (t) {
    case FAULT_CAP: return "capability fault";
    case FAULT_UNKNOWN_SYSCALL: return "unknown system call";
    case FAULT_USER_EXCEPTION: return "user exception";
    case FAULT_TIMEOUT: return "timeout fault";
    case FAULT_VM: return "VM fault";
    case FAULT_NULL: break;
    }
    return "fault";
}

static const char *exception_name(word_t scause)
{
    switch (scause) {
    case 0: return "instruction address misaligned";
    case 2: return "illegal instruction";
    case 3: return "breakpoint";
    case 4: return "load address misaligned";
    case 6: return "store address misaligned";
    default: return "exception";
    }
}

static void report_fault(struct tcb *t, const struct fault *f)
{
    kprintf("\nKAIROS FAULT: thread \"%s\": %s", thread_name(t), fault_name(f->type));
    switch (f->type) {
    case FAULT_VM:
        kprintf(" (%s) at pc %p, address %p\n",
                f->prefetch ? "instruction fetch" : (f->fsr == 7 ? "store" : "load"), (void *)f->ip,
                (void *)f->addr);
        break;
    case FAULT_USER_EXCEPTION:
        kprintf(" (%s, scause %lu) at pc %p, address %p\n", exception_name(f->number), f->number,
                (void *)f->ip, (void *)f->addr);
        break;
    case FAULT_UNKNOWN_SYSCALL:
        kprintf(" (number %ld) at pc %p\n", (long)f->number, (void *)f->ip);
        break;
    case FAULT_CAP:
        kprintf(" (cptr %p%s) at pc %p\n", (void *)f->addr, f->in_recv_phase ? ", receive phase" : "",
                (void *)f->ip);
        break;
    default:
        kprintf(" at pc %p\n", (void *)f->ip);
        break;
    }
    kprintf("  sp %p ra %p; no fault handler: thread suspended\n", (void *)t->ctx.x[REG_SP],
            (void *)t->ctx.x[REG_RA]);
}

void handle_fault(struct tcb *t, const struct fault *f)
{
    /* The release kernel prints nothing: a fault costs no console time there,
     * which keeps its worst-case execution time meaningful. */
    if (CONFIG_PRINTING)
        report_fault(t, f);
    /* The thread restarts at the faulting instruction if it is ever resumed. */
    t->ctx.pc = t->ctx.fault_ip;
    thread_set_state(t, THREAD_INACTIVE);
}
