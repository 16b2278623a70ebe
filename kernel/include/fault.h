/* Faults a thread can raise, as seL4 describes them (shared/abi/faults.txt). */
#ifndef KAIROS_FAULT_H
#define KAIROS_FAULT_H

#include <abi.h>
#include <object.h>

struct fault {
    enum fault_label type;
    word_t ip;        /* faulting pc (the ecall for syscall faults) */
    word_t addr;      /* VMFault: stval; CapFault: the cptr */
    word_t prefetch;  /* VMFault: 1 for instruction fetches */
    word_t fsr;       /* VMFault: 5 load, 7 store/AMO, 1 fetch */
    word_t number;    /* UserException: scause; UnknownSyscall: syscall number */
    word_t in_recv_phase; /* CapFault */
};

/* Deliver f for thread t. Until fault endpoints exist the kernel reports the
 * fault on the console and the thread becomes inactive (seL4's behaviour for a
 * thread without a fault handler). */
void handle_fault(struct tcb *t, const struct fault *f);

#endif
