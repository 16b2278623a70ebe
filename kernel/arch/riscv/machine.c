/* Platform devices of QEMU virt as the kernel uses them: the NS16550 UART for
 * kernel output, SBI for power-off and (without Sstc) the timer, the PLIC for
 * external interrupts. Addresses come from the device tree. */
#include <arch/context.h>
#include <arch/csr.h>
#include <arch/machine.h>
#include <arch/memory.h>
#include <arch/sbi.h>
#include <fdt.h>
#include <irq.h>
#include <kernel.h>
#include <preemption.h>

static volatile u8 *uart;
static bool sstc;
static volatile u32 *plic;
static u32 plic_ndev;

#define UART_THR 0
#define UART_LSR 5
#define UART_LSR_THRE 0x20

/* Hart 0's supervisor context on QEMU virt's PLIC is context 1. */
#define PLIC_CONTEXT 1
#define PLIC_PRIORITY_OFFSET 0
#define PLIC_ENABLE_OFFSET (0x2000 + 0x80 * PLIC_CONTEXT)
#define PLIC_THRESHOLD_OFFSET (0x200000 + 0x1000 * PLIC_CONTEXT)
#define PLIC_CLAIM_OFFSET (PLIC_THRESHOLD_OFFSET + 4)

void machine_init_console(paddr_t uart_base)
{
    uart = (volatile u8 *)paddr_to_kptr(uart_base);
}

void machine_putc(char c)
{
    if (!uart)
        return;
    /* Bounded wait: a UART that never drains must not hang the kernel. */
    for (u32 i = 0; i < 100000 && !(uart[UART_LSR] & UART_LSR_THRE); i++)
        ;
    uart[UART_THR] = (u8)c;
}

void machine_power_off(bool failure)
{
    (void)sbi_call(SBI_EXT_SRST, 0, SBI_SRST_SHUTDOWN,
                   failure ? SBI_SRST_REASON_FAILURE : SBI_SRST_REASON_NONE);
    (void)sbi_call(SBI_EXT_LEGACY_SHUTDOWN, 0, 0, 0); /* pre-SRST firmware */
    for (;;)
        __asm__ volatile("wfi");
}

extern char trap_entry[];

void machine_init_traps(void)
{
    csr_write(stvec, (word_t)trap_entry);
    csr_write(sscratch, 0);
    /* Interrupts stay masked in the kernel (sstatus.SIE = 0); these enables
     * decide which ones become pending and are taken in user mode. */
    csr_write(sie, SIE_STIE | SIE_SEIE);
    /* User mode may read cycle, time and instret (rdcycle, rdtime,
     * rdinstret): benchmarks and user-level schedulers time themselves
     * without a system call. */
    csr_write(scounteren, 7);
}

void machine_init_timer(const struct fdt_info *fdt)
{
    sstc = fdt->has_sstc;
    machine_disable_timeout();
}

bool machine_has_sstc(void) { return sstc; }

void machine_set_timeout(u64 when)
{
    if (sstc)
        __asm__ volatile("csrw 0x14d, %0" ::"r"(when));
    else
        sbi_set_timer(when);
}

void machine_disable_timeout(void) { machine_set_timeout(~0ull); }

void machine_init_interrupts(const struct fdt_info *fdt)
{
    if (fdt->plic.size != 0) {
        plic = (volatile u32 *)paddr_to_kptr(fdt->plic.base);
        plic_ndev = fdt->plic_ndev;
        /* Every source disabled; priority 1 (0 would mean "never") so an
         * enabled source interrupts above threshold 0. */
        for (u32 word = 0; word <= plic_ndev / 32; word++)
            plic[(PLIC_ENABLE_OFFSET / 4) + word] = 0;
        for (u32 irq = 1; irq <= plic_ndev; irq++)
            plic[PLIC_PRIORITY_OFFSET / 4 + irq] = 1;
        plic[PLIC_THRESHOLD_OFFSET / 4] = 0;
    }
    irq_init(plic_ndev);
}

static bool plic_source(word_t irq) { return plic && irq != 0 && irq <= plic_ndev; }

void machine_irq_mask(word_t irq)
{
    if (plic_source(irq))
        plic[(PLIC_ENABLE_OFFSET / 4) + irq / 32] &= ~(1u << (irq % 32));
}

void machine_irq_unmask(word_t irq)
{
    if (plic_source(irq))
        plic[(PLIC_ENABLE_OFFSET / 4) + irq / 32] |= 1u << (irq % 32);
}

void machine_irq_complete(word_t irq)
{
    if (!plic_source(irq))
        return;
    /* The PLIC ignores the completion of a source that is not enabled for
     * this context: enable it for the write if it is masked. Interrupts
     * are off in the kernel (sstatus.SIE = 0), so this cannot trap. */
    volatile u32 *enable = &plic[(PLIC_ENABLE_OFFSET / 4) + irq / 32];
    u32 bit = 1u << (irq % 32);
    u32 was = *enable;
    if (!(was & bit))
        *enable = was | bit;
    plic[PLIC_CLAIM_OFFSET / 4] = (u32)irq;
    if (!(was & bit))
        *enable = was;
}

/* One external interrupt: claim it and hand it to the IRQ code, which masks
 * it and signals its handler's notification. Another pending source keeps
 * SEIP raised and is taken on the next trap. */
static void plic_handle(void)
{
    if (!plic)
        return;
    u32 irq = plic[PLIC_CLAIM_OFFSET / 4];
    if (irq == 0)
        return;
    irq_handle(irq);
}

unsigned machine_handle_pending_interrupts(void)
{
    word_t pending = csr_read(sip) & csr_read(sie);
    unsigned kinds = 0;
    if (pending & SIP_STIP) {
        machine_disable_timeout();
        kinds |= MACHINE_IRQ_TIMER;
    }
    if (pending & SIP_SEIP) {
        plic_handle();
        kinds |= MACHINE_IRQ_EXTERNAL;
    }
    return kinds;
}

extern char machine_idle_loop[]; /* trap.S */

void machine_init_idle_context(struct user_context *ctx)
{
    /* sret goes to supervisor mode (SPP) with interrupts enabled (SPIE), FP
     * off; the loop uses no register, so the rest of the context is left as
     * it is. */
    ctx->pc = (word_t)machine_idle_loop;
    ctx->fault_ip = ctx->pc;
    ctx->sstatus = SSTATUS_SPP | SSTATUS_SPIE;
}


