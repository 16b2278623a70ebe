/* Host build of the decode-purity harness: the constants of
 * kernel/arch/riscv/include/arch/csr.h, with CSR accesses that do nothing
 * (the decoders touch no CSR; the perform steps that do are never run). */
#ifndef HOST_ARCH_CSR_H
#define HOST_ARCH_CSR_H
#define KAIROS_HOST_CSR
#include_next <arch/csr.h>
#define csr_read(csr) ((word_t)0)
#define csr_write(csr, val) ((void)(val))
#define csr_set(csr, val) ((void)(val))
#define csr_clear(csr, val) ((void)(val))
static inline void sfence_vma_all(void) {}
static inline void sfence_vma_addr(vaddr_t va) { (void)va; }
static inline void fence_i(void) {}
static inline word_t read_time(void) { return 0; }
static inline word_t read_instret(void) { return 0; }
#endif
