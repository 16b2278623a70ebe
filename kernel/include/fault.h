/* Faults a thread can raise, as seL4 describes them (libsel4's sel4/faults.h and the seL4 reference manual, "Faults"). */
#ifndef KAIROS_FAULT_H
#define KAIROS_FAULT_H

#include <abi.h>
#include <object.h>

/* Deliver f for thread t: as a message (a Call) to the fault handler
 * endpoint installed in its TCB; with no valid handler the kernel reports
 * the fault on the console and the thread becomes inactive (seL4). */
void handle_fault(struct tcb *t, const struct fault *f);
/* A fault of `type` at `ip` with every other field 0, set field by field
 * (a zero-initialiser of the structure becomes a byte-wise memset call). */
static inline struct fault fault_new(enum fault_label type, word_t ip)
{
    struct fault f;
    f.type = type;
    f.ip = ip;
    f.addr = 0;
    f.prefetch = 0;
    f.fsr = 0;
    f.number = 0;
    f.in_recv_phase = 0;
    return f;
}
/* Does t get a timeout fault when its budget runs out (a valid timeout
 * handler and a sporadic, non-round-robin SC; seL4's endTimeslice)? */
bool timeout_fault_due(const struct tcb *t);
/* Send t's timeout fault (t ran out of budget, or a reply returned an SC
 * without ready budget); it blocks on its timeout handler. */
void handle_timeout_fault(struct tcb *t);
/* Write sender's pending fault as a message to receiver: a0 = badge,
 * a1 = info(fault type, length), MRs (seL4's setMRs_fault). */
void fault_transfer(struct tcb *sender, word_t badge, struct tcb *receiver);
/* The same for a sender whose fault is a timeout fault, known to be one:
 * only the timeout fault's words are built (handle_timeout_fault sends
 * through it, so that its path, the interrupt entry's included, holds no
 * other fault's message for the WCET analysis to count). */
void timeout_fault_transfer(struct tcb *sender, word_t badge, struct tcb *receiver);
/* The handler `replier` answered faulted thread t: apply the reply's
 * registers as (h) says. Returns whether t restarts (else it stays
 * inactive). */
bool fault_handle_reply(struct tcb *t, struct tcb *replier);

#endif
