/* Build-time configuration. The flavour (debug, check, release) is chosen by the
 * top-level Makefile, which defines exactly one of KAIROS_FLAVOUR_*; everything
 * else here follows from it and from the seL4 MCS riscv64 configuration whose
 * ABI Kairos implements (seL4's default MCS riscv64 configuration). */
#ifndef KAIROS_CONFIG_H
#define KAIROS_CONFIG_H

#include <uapi/kairos/limits.h>

#if defined(KAIROS_FLAVOUR_DEBUG)
#define CONFIG_DEBUG_BUILD 1
#define CONFIG_PRINTING 1
#define CONFIG_INVARIANT_CHECKS 0
#define CONFIG_FASTPATH 1
#elif defined(KAIROS_FLAVOUR_CHECK)
#define CONFIG_DEBUG_BUILD 1
#define CONFIG_PRINTING 1
#define CONFIG_INVARIANT_CHECKS 1
#define CONFIG_FASTPATH 1
#elif defined(KAIROS_FLAVOUR_RELEASE)
#define CONFIG_DEBUG_BUILD 0
#define CONFIG_PRINTING 0
#define CONFIG_INVARIANT_CHECKS 0
#define CONFIG_FASTPATH 1
#else
#error "define one of KAIROS_FLAVOUR_DEBUG, KAIROS_FLAVOUR_CHECK, KAIROS_FLAVOUR_RELEASE"
#endif

#define CONFIG_ROOT_CNODE_SIZE_BITS 13
/* Capability decoding walks at most this many CNodes per lookup (seL4
 * allows one per bit, 64). A lookup that would enter a further CNode fails
 * with DepthMismatch (docs/object-model.md "Addressing"). A system
 * parameter: it bounds every lookup's worst case (docs/wcet.md). */
#define CONFIG_MAX_CSPACE_DEPTH 4
#define CONFIG_NUM_PRIORITIES 256
/* At most this many scheduling contexts of one core are configured
 * sporadic (budget < period) at a time; ConfigureFlags refuses one more
 * with NotEnoughMemory (docs/scheduling.md "Release queue"). It is the
 * capacity of the release queue, whose operations take log2 of it steps. */
#define CONFIG_MAX_SPORADIC_SCS 256
#define CONFIG_MAX_NUM_NODES 1
#define CONFIG_NUM_DOMAINS 1
#define CONFIG_BOOT_THREAD_TIME_SLICE_MS 5
#define CONFIG_MAX_NUM_BOOTINFO_UNTYPED_CAPS 230
#define CONFIG_RESET_CHUNK_BITS 8
/* Untyped_Retype checks its destination slots this many at a time, with a
 * preemption point between the groups (kernel/object/untyped.c): a system
 * parameter that bounds the slot check of one kernel region (16 slots are
 * 512 bytes, 8 cache lines). */
#define CONFIG_RETYPE_CHECK_CHUNK 16
#define CONFIG_TCB_NAME_LENGTH 64

/* System parameter (docs/scheduling.md "Limits"): the most refills a
 * scheduling context may hold, enforced by SchedControl_ConfigureFlags.
 * User programs read it too, so its value lives in uapi/kairos/limits.h. */
#define CONFIG_MAX_REFILLS KAIROS_MAX_REFILLS

/* System parameter (docs/object-model.md "Thread limit"): the most TCBs that
 * exist at once, the root thread included, the kernel's idle thread not.
 * Untyped_Retype refuses one more with NotEnoughMemory; every thread queue
 * is at most this long (kernel/wcet-annotations.toml, queue_length). Its
 * value lives in uapi/kairos/limits.h, which user programs see. */
#define CONFIG_MAX_THREADS KAIROS_MAX_THREADS

/* Physical addresses at or above this are never handed out (seL4's
 * CONFIG_PADDR_USER_DEVICE_TOP for Sv39). */
#define CONFIG_PADDR_USER_DEVICE_TOP (1ul << 39)

#endif
