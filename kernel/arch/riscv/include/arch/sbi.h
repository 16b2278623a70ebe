/* The few SBI calls the kernel makes (RISC-V SBI specification v1.0). */
#ifndef ARCH_SBI_H
#define ARCH_SBI_H

#include <types.h>

#define SBI_EXT_TIME 0x54494D45ul
#define SBI_EXT_SRST 0x53525354ul
#define SBI_EXT_LEGACY_SHUTDOWN 0x08ul
#define SBI_SRST_SHUTDOWN 0
#define SBI_SRST_REASON_NONE 0
#define SBI_SRST_REASON_FAILURE 1

struct sbi_ret {
    long error;
    long value;
};

static inline struct sbi_ret sbi_call(word_t ext, word_t fid, word_t a0, word_t a1)
{
    register word_t r_a0 __asm__("a0") = a0;
    register word_t r_a1 __asm__("a1") = a1;
    register word_t r_a6 __asm__("a6") = fid;
    register word_t r_a7 __asm__("a7") = ext;
    __asm__ volatile("ecall" : "+r"(r_a0), "+r"(r_a1) : "r"(r_a6), "r"(r_a7) : "memory");
    struct sbi_ret ret = {(long)r_a0, (long)r_a1};
    return ret;
}

static inline void sbi_set_timer(u64 when) { (void)sbi_call(SBI_EXT_TIME, 0, when, 0); }

#endif
