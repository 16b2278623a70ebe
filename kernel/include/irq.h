/* Interrupts delivered to user level (kernel/object/irq.c): IRQControl
 * issues one handler cap per PLIC source; an interrupt from an issued source
 * is masked at the PLIC and signals the notification set with
 * IRQHandler_SetNotification; IRQHandler_Ack unmasks it (and completes the
 * PLIC claim). Numbers are seL4's on this platform: PLIC sources 1..ndev
 * (riscv,ndev from the device tree; 95 on QEMU virt), ndev + 1 is the kernel
 * timer (never issued), 0 is no interrupt. */
#ifndef KAIROS_IRQ_H
#define KAIROS_IRQ_H

#include <types.h>

/* IRQ numbers the kernel keeps state for: 0 .. IRQ_TABLE_SIZE - 1. A PLIC
 * with more sources is used up to source IRQ_TABLE_SIZE - 2. */
#define IRQ_TABLE_SIZE 128

/* Boot: the PLIC has sources 1..ndev (0 if there is no PLIC). */
void irq_init(word_t ndev);
/* The machine claimed external interrupt `irq` at the PLIC (still enabled):
 * mask it and signal its handler's notification, or complete and mask a
 * source nobody owns. */
void irq_handle(word_t irq);
/* The last handler cap for irq was deleted (finalise_cap). */
bool irq_handler_deleted(word_t irq); /* false: preempted, re-executed later */

#endif
