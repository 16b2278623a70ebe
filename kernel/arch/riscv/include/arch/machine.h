/* What the generic kernel asks of the machine. */
#ifndef ARCH_MACHINE_H
#define ARCH_MACHINE_H

#include <arch/csr.h>
#include <types.h>

struct fdt_info;

void machine_init_console(paddr_t uart_base);
void machine_putc(char c);
NORETURN void machine_power_off(bool failure);
void machine_init_traps(void);
void machine_init_timer(const struct fdt_info *fdt);
void machine_init_interrupts(const struct fdt_info *fdt);
/* The time in timer ticks (the time CSR; inline: every kernel entry reads it). */
static inline u64 machine_time(void) { return read_time(); }
void machine_set_timeout(u64 when);
void machine_disable_timeout(void);
bool machine_has_sstc(void);
/* Claim pending interrupts: returns which kinds were pending
 * (MACHINE_IRQ_TIMER, MACHINE_IRQ_EXTERNAL); the timer is disarmed. */
#define MACHINE_IRQ_TIMER 1u
#define MACHINE_IRQ_EXTERNAL 2u
unsigned machine_handle_pending_interrupts(void);
/* PLIC sources (1..riscv,ndev; others are ignored): disable, enable, and
 * complete a claim (kernel/object/irq.c decides when). */
void machine_irq_mask(word_t irq);
void machine_irq_unmask(word_t irq);
void machine_irq_complete(word_t irq);
/* The idle thread's context (thread.c): it runs machine_idle_loop in
 * supervisor mode with interrupts enabled, so the processor waits (wfi)
 * outside the kernel, as seL4's idle thread does; an interrupt enters the
 * kernel through trap_entry like any other. */
struct user_context;
void machine_init_idle_context(struct user_context *ctx);

#endif
