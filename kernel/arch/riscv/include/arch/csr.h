/* RISC-V supervisor CSRs and their bits (privileged spec). */
#ifndef ARCH_CSR_H
#define ARCH_CSR_H

#include <types.h>

#define SSTATUS_SIE (1ul << 1)
#define SSTATUS_SPIE (1ul << 5)
#define SSTATUS_SPP (1ul << 8)
#define SSTATUS_FS_SHIFT 13
#define SSTATUS_FS (3ul << 13)
#define SSTATUS_FS_OFF (0ul << 13)
#define SSTATUS_FS_INITIAL (1ul << 13)
#define SSTATUS_FS_CLEAN (2ul << 13)
#define SSTATUS_FS_DIRTY (3ul << 13)
#define SSTATUS_SUM (1ul << 18)

#define SIE_SSIE (1ul << 1)
#define SIE_STIE (1ul << 5)
#define SIE_SEIE (1ul << 9)
#define SIP_SSIP (1ul << 1)
#define SIP_STIP (1ul << 5)
#define SIP_SEIP (1ul << 9)

#define SCAUSE_INTERRUPT (1ul << 63)
#define IRQ_S_SOFT 1
#define IRQ_S_TIMER 5
#define IRQ_S_EXTERNAL 9

enum exception_cause {
    CAUSE_INSTR_MISALIGNED = 0,
    CAUSE_INSTR_ACCESS = 1,
    CAUSE_ILLEGAL_INSTR = 2,
    CAUSE_BREAKPOINT = 3,
    CAUSE_LOAD_MISALIGNED = 4,
    CAUSE_LOAD_ACCESS = 5,
    CAUSE_STORE_MISALIGNED = 6,
    CAUSE_STORE_ACCESS = 7,
    CAUSE_USER_ECALL = 8,
    CAUSE_INSTR_PAGE_FAULT = 12,
    CAUSE_LOAD_PAGE_FAULT = 13,
    CAUSE_STORE_PAGE_FAULT = 15,
};

#define SATP_MODE_SV39 (8ul << 60)
#define CSR_STIMECMP 0x14d

#ifndef KAIROS_HOST_CSR /* the host builds of tests/host supply their own */
#define csr_read(csr)                                          \
    ({                                                         \
        word_t v_;                                             \
        __asm__ volatile("csrr %0, " #csr : "=r"(v_)::"memory"); \
        v_;                                                    \
    })
#define csr_write(csr, val) __asm__ volatile("csrw " #csr ", %0" ::"rK"((word_t)(val)) : "memory")
#define csr_set(csr, val) __asm__ volatile("csrs " #csr ", %0" ::"rK"((word_t)(val)) : "memory")
#define csr_clear(csr, val) __asm__ volatile("csrc " #csr ", %0" ::"rK"((word_t)(val)) : "memory")

static inline void sfence_vma_all(void) { __asm__ volatile("sfence.vma" ::: "memory"); }
static inline void sfence_vma_addr(vaddr_t va) { __asm__ volatile("sfence.vma %0, zero" ::"r"(va) : "memory"); }
static inline void fence_i(void) { __asm__ volatile("fence.i" ::: "memory"); }
static inline word_t read_time(void) { return csr_read(time); }
static inline word_t read_instret(void) { return csr_read(instret); }
#endif

#endif
