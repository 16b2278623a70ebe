/* Set-up helpers for root tasks that build a small system by hand (user/tasched,
 * user/crit): objects retyped from one RAM untyped into the root CNode's
 * empty slots, with the first failure remembered rather than stopping at once,
 * so that a root task can report all of its set-up in one verdict. */
#ifndef KAIROS_ROOTTASK_H
#define KAIROS_ROOTTASK_H

#include <sel4/sel4.h>
#include <stdbool.h>

/* Take the smallest RAM untyped of at least 64 KiB as the pool and the first
 * empty slot as the next free one; exits with FAIL if there is none. */
void kairos_rt_init(void);
/* Remember e if it is the first error (printed with `what`); true if e is
 * seL4_NoError. */
bool kairos_rt_check(seL4_Error e, const char *what);
/* One object of `type` (`bits` for the sized ones) in the next free slot. */
seL4_CPtr kairos_rt_make(seL4_Word type, seL4_Word bits);
/* Whether any kairos_rt_check so far failed. */
bool kairos_rt_failed(void);
/* Registers that start a thread of this address space at fn(arg0, 0) on
 * the stack ending at stack_top (gp and tp shared with the caller). */
seL4_UserContext kairos_rt_thread_regs(void (*fn)(seL4_Word, seL4_Word), seL4_Word arg0, void *stack_top);

#endif
