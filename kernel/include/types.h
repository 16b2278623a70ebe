/* Basic kernel types. Only freestanding headers: the kernel has no libc. */
#ifndef KAIROS_TYPES_H
#define KAIROS_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

/* A machine word: registers, capability words, addresses. */
typedef unsigned long word_t;
typedef long sword_t;
typedef word_t paddr_t;   /* physical address */
typedef word_t vaddr_t;   /* virtual address (kernel or user) */
typedef word_t cptr_t;    /* user capability pointer */

#define BIT(n) (1ul << (n))
#define MASK(n) (BIT(n) - 1ul)
#define ALIGN_DOWN(x, a) ((x) & ~((word_t)(a) - 1ul))
#define ALIGN_UP(x, a) (((x) + ((word_t)(a) - 1ul)) & ~((word_t)(a) - 1ul))
#define IS_ALIGNED(x, bits) (((x) & MASK(bits)) == 0)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define UNUSED __attribute__((unused))
#define NORETURN __attribute__((noreturn))
/* For the few hot helpers of the IPC fastpath, which must not cost a call. */
#define ALWAYS_INLINE inline __attribute__((always_inline))
/* A decoder kept out of its dispatcher, so that the dispatcher tail-calls
 * it and the common invocations do not pay for the register pressure of
 * the rare ones. */
#define NOINLINE __attribute__((noinline))
#define PACKED __attribute__((packed))
#define ALIGNED(n) __attribute__((aligned(n)))
#define SECTION(s) __attribute__((section(s)))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#endif
