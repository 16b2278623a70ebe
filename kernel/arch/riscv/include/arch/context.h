/* The saved user register state of a thread, as trap.S lays it out. The
 * offsets are used by the assembly and checked here. */
#ifndef ARCH_CONTEXT_H
#define ARCH_CONTEXT_H

#define CTX_X(n) ((n) * 8)
#define CTX_PC 256       /* where the thread resumes: sepc on exit */
#define CTX_FAULT_IP 264 /* sepc at the last kernel entry (the ecall or faulting instruction) */
#define CTX_SSTATUS 272
#define CTX_FP 280       /* f0..f31, then fcsr */
#define CTX_FCSR (CTX_FP + 32 * 8)
#define CTX_SIZE (CTX_FCSR + 8)

#ifndef __ASSEMBLER__
#include <types.h>

/* Integer register numbers (ABI names). */
enum reg_number {
    REG_RA = 1, REG_SP = 2, REG_GP = 3, REG_TP = 4,
    REG_T0 = 5, REG_T1 = 6, REG_T2 = 7,
    REG_S0 = 8, REG_S1 = 9,
    REG_A0 = 10, REG_A1 = 11, REG_A2 = 12, REG_A3 = 13, REG_A4 = 14, REG_A5 = 15, REG_A6 = 16, REG_A7 = 17,
    REG_S2 = 18, REG_S3 = 19, REG_S4 = 20, REG_S5 = 21, REG_S6 = 22, REG_S7 = 23, REG_S8 = 24,
    REG_S9 = 25, REG_S10 = 26, REG_S11 = 27,
    REG_T3 = 28, REG_T4 = 29, REG_T5 = 30, REG_T6 = 31,
};

struct user_context {
    word_t x[32]; /* x[n] is register xn; x[0] is never loaded */
    word_t pc;
    word_t fault_ip;
    word_t sstatus;
    word_t fp[32];
    word_t fcsr;
};
_Static_assert(__builtin_offsetof(struct user_context, pc) == CTX_PC, "ctx pc");
_Static_assert(__builtin_offsetof(struct user_context, fault_ip) == CTX_FAULT_IP, "ctx fault_ip");
_Static_assert(__builtin_offsetof(struct user_context, sstatus) == CTX_SSTATUS, "ctx sstatus");
_Static_assert(__builtin_offsetof(struct user_context, fp) == CTX_FP, "ctx fp");
_Static_assert(sizeof(struct user_context) == CTX_SIZE, "ctx size");

/* Defined in trap.S: load ctx into the registers and sret. */
NORETURN void restore_user_context(struct user_context *ctx);
void fpu_save(struct user_context *ctx);
void fpu_restore(const struct user_context *ctx);
#endif

#endif
