/* Kairos's system parameters that user programs see in the ABI (docs/
 * scheduling.md "Limits"). The one home of these numbers: the kernel's
 * config.h includes this file and so does the user library (<kairos/kairos.h>).
 * Plain macros only, so that C and assembler on both sides can include it. */
#ifndef KAIROS_UAPI_LIMITS_H
#define KAIROS_UAPI_LIMITS_H

/* The most refills a scheduling context may hold (the kernel's
 * CONFIG_MAX_REFILLS). SchedControl_ConfigureFlags answers extra_refills + 2
 * above it with seL4_RangeError (seL4 itself only limits it by the object's
 * size, seL4_MaxExtraRefills), so every refill operation does at most this
 * many steps, the bound the WCET analysis uses. At least 2: a sporadic
 * context needs a head and a tail. */
#define KAIROS_MAX_REFILLS 8

/* The most thread control blocks that exist at once, the root thread's
 * included (the kernel's CONFIG_MAX_THREADS). Untyped_Retype answers a
 * request for more TCBs than are left with seL4_NotEnoughMemory (seL4 itself
 * limits threads only by memory), so no thread queue (endpoint,
 * notification, ready queue) holds more, the bound the WCET analysis uses
 * for every walk of one. A TCB's count is given back when its last cap goes. */
#define KAIROS_MAX_THREADS 64

#endif
