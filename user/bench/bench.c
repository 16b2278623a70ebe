/*
 * bench: the Kairos benchmark suite (issue 6, docs/benchmarks.md).
 *
 * A plain seL4-ABI root task: it uses only the seL4 API (<sel4/sel4.h>) and
 * the root-task entry (crt0), no Kairos extension and no debug system call,
 * so the same ELF runs on Kairos's release kernel and on seL4 (MCS,
 * riscv64, QEMU virt). Output goes to the NS16550 UART, found in the
 * device tree of the extra BootInfo and mapped from a device untyped.
 *
 * Method (as seL4's own benchmark suite measures): a timestamp (rdcycle;
 * under QEMU -icount shift=0 it counts retired instructions, user, kernel
 * and firmware alike) right before the ecall in the thread that starts an
 * operation, and one right after the system call returns in the thread
 * where it ends; each ecall and its timestamps are one asm statement, so
 * nothing the compiler emits sits between them. The cost of reading the
 * counter (two back-to-back reads) is measured first and subtracted from
 * every sample. Each benchmark runs WARMUP unrecorded iterations and then
 * SAMPLES recorded ones, and reports min/median/max.
 *
 * Every thread runs on a round-robin scheduling context of BUDGET_US, far
 * longer than the whole run, so no timer interrupt falls into a measurement
 * (the SC switches still reprogram the timer, which is what sc_switch
 * measures). The root runs at ROOT_PRIO_HIGH while it sets a benchmark up
 * and drops to ROOT_PRIO_LOW to let the benchmark threads run; it gets the
 * processor back when all of them have blocked or suspended themselves.
 *
 * Output: a table, one `BENCH {json}` line per benchmark, and finally
 * `bench: done`; on a setup error `bench: FAIL <what>`. Then the root
 * suspends itself (there is no halt call in a release kernel).
 */
#include <sel4/sel4.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WARMUP 16
#define SAMPLES 256
#define RUNS (WARMUP + SAMPLES)

#define ROOT seL4_CapInitThreadCNode
#define SELF seL4_CapInitThreadTCB
#define ROOT_PRIO_HIGH 254
#define ROOT_PRIO_LOW 10
#define PRIO_LOW 100
#define PRIO_HIGH 200
#define BUDGET_US 5000000ul /* 5 s: the whole run takes well under 100 ms of virtual time */

/* Virtual addresses this program maps (all in GiB 1, above the image). */
#define UART_VA 0x40000000ul
#define IPCBUF_VA 0x40100000ul /* one page per benchmark thread */
#define MAP_VA 0x40200000ul    /* map_4k_page */
#define XAS_STACK_VA 0x40300000ul
#define XAS_STACK_PAGES 4
#define XAS_IPCBUF_VA 0x40400000ul

/* NS16550 registers (reg-shift 0 on QEMU virt). */
#define UART_THR 0
#define UART_IER 1
#define UART_LSR 5
#define UART_LSR_THRE 0x20
#define UART_IER_THRI 0x02

/* ------------------------------------------------------------------ */
/* Counters */

static inline seL4_Word rdcycle(void)
{
    seL4_Word v;
    __asm__ volatile("rdcycle %0" : "=r"(v));
    return v;
}

static inline seL4_Word rdinstret(void)
{
    seL4_Word v;
    __asm__ volatile("rdinstret %0" : "=r"(v));
    return v;
}

/* ------------------------------------------------------------------ */
/* Output: polled NS16550 */

static volatile uint8_t *uart;

static void putc_raw(char c)
{
    if (!uart)
        return;
    while (!(uart[UART_LSR] & UART_LSR_THRE))
        ;
    uart[UART_THR] = (uint8_t)c;
}

static void out_char(char c)
{
    if (c == '\n')
        putc_raw('\r');
    putc_raw(c);
}

static void out_str(const char *s)
{
    while (*s)
        out_char(*s++);
}

static int u64_digits(uint64_t v, char *buf)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = 0;
    return n;
}

static void out_u64(uint64_t v)
{
    char buf[24];
    u64_digits(v, buf);
    out_str(buf);
}

/* v right-aligned in width columns. */
static void out_u64_w(uint64_t v, int width)
{
    char buf[24];
    int n = u64_digits(v, buf);
    for (int i = n; i < width; i++)
        out_char(' ');
    out_str(buf);
}

static void out_str_w(const char *s, int width)
{
    int n = 0;
    while (s[n])
        n++;
    out_str(s);
    for (int i = n; i < width; i++)
        out_char(' ');
}

static void out_hex(uint64_t v)
{
    out_str("0x");
    bool started = false;
    for (int shift = 60; shift >= 0; shift -= 4) {
        unsigned d = (unsigned)(v >> shift) & 0xf;
        if (d || started || shift == 0) {
            out_char((char)(d < 10 ? '0' + d : 'a' + d - 10));
            started = true;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Failure: report and stop (the host runner fails on `bench: FAIL`). */

static void suspend_forever(void)
{
    seL4_TCB_Suspend(SELF);
    for (;;)
        seL4_Yield();
}

static void fail(const char *what, seL4_Word code)
{
    out_str("bench: FAIL ");
    out_str(what);
    out_str(" (");
    out_u64(code);
    out_str(")\n");
    suspend_forever();
}

static void check(seL4_Error e, const char *what)
{
    if (e != seL4_NoError)
        fail(what, (seL4_Word)e);
}

/* ------------------------------------------------------------------ */
/* BootInfo, slots and objects */

static seL4_BootInfo *bi;
static seL4_CPtr next_slot, slot_end;
static seL4_CPtr ram_untyped;

static seL4_CPtr alloc_slot(void)
{
    if (next_slot >= slot_end)
        fail("out of CNode slots", next_slot);
    return next_slot++;
}

static seL4_CPtr make_from(seL4_CPtr untyped, seL4_Word type, seL4_Word size_bits)
{
    seL4_CPtr s = alloc_slot();
    check(seL4_Untyped_Retype(untyped, type, size_bits, ROOT, 0, 0, s, 1), "Untyped_Retype");
    return s;
}

static seL4_CPtr make(seL4_Word type, seL4_Word size_bits) { return make_from(ram_untyped, type, size_bits); }

static void find_ram_untyped(void)
{
    seL4_Word best = ~0ul;
    seL4_Word n = bi->untyped.end - bi->untyped.start;
    for (seL4_Word i = 0; i < n; i++) {
        const seL4_UntypedDesc *u = &bi->untypedList[i];
        if (u->isDevice)
            continue;
        if (best == ~0ul || u->sizeBits > bi->untypedList[best].sizeBits)
            best = i;
    }
    if (best == ~0ul || bi->untypedList[best].sizeBits < 22)
        fail("no RAM untyped of 4 MiB", 0);
    ram_untyped = bi->untyped.start + best;
}

/* Map frame at va in vspace, adding page tables for missing levels. */
static void map_frame(seL4_CPtr frame, seL4_CPtr vspace, seL4_Word va, seL4_CapRights_t rights)
{
    for (int level = 0; level < 4; level++) {
        seL4_Error e = seL4_RISCV_Page_Map(frame, vspace, va, rights, seL4_RISCV_Default_VMAttributes);
        if (e == seL4_NoError)
            return;
        if (e != seL4_FailedLookup)
            fail("Page_Map", (seL4_Word)e);
        seL4_CPtr pt = make(seL4_RISCV_PageTableObject, 0);
        check(seL4_RISCV_PageTable_Map(pt, vspace, va, seL4_RISCV_Default_VMAttributes), "PageTable_Map");
    }
    fail("Page_Map: page tables missing after three levels", va);
}

/* ------------------------------------------------------------------ */
/* Device tree (the extra BootInfo's FDT record): find the NS16550. */

static uint32_t be32(const void *p)
{
    const uint8_t *b = p;
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static bool str_eq(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

/* Does the string list (compatible) of len bytes contain s? */
static bool strlist_has(const char *list, uint32_t len, const char *s)
{
    uint32_t i = 0;
    while (i < len) {
        if (str_eq(list + i, s))
            return true;
        while (i < len && list[i])
            i++;
        i++;
    }
    return false;
}

static uint64_t read_cells(const uint8_t *p, uint32_t cells)
{
    uint64_t v = 0;
    for (uint32_t i = 0; i < cells; i++)
        v = v << 32 | be32(p + 4 * i);
    return v;
}

#define FDT_MAX_DEPTH 16

/* Finds the first node compatible with "ns16550a": its reg address and first
 * interrupt. Returns false if there is none (or no device tree). */
static bool fdt_find_uart(const uint8_t *fdt, seL4_Word size, seL4_Word *paddr, seL4_Word *irq)
{
    if (size < 40 || be32(fdt) != 0xd00dfeedu)
        return false;
    uint32_t off_struct = be32(fdt + 8), off_strings = be32(fdt + 12);
    uint32_t size_struct = be32(fdt + 36);
    if (off_struct >= size || off_strings >= size || size_struct > size - off_struct)
        return false;
    const uint8_t *p = fdt + off_struct, *end = p + size_struct;
    const char *strings = (const char *)fdt + off_strings;
    uint32_t addr_cells[FDT_MAX_DEPTH], size_cells[FDT_MAX_DEPTH];
    int depth = -1;
    bool compatible = false, have_reg = false, have_irq = false;
    uint64_t reg = 0, intr = 0;
    while (p + 4 <= end) {
        uint32_t tok = be32(p);
        p += 4;
        if (tok == 1) { /* BEGIN_NODE */
            const char *name = (const char *)p;
            uint32_t n = 0;
            while (name[n])
                n++;
            p += (n + 1 + 3) & ~3u;
            if (++depth >= FDT_MAX_DEPTH)
                return false;
            addr_cells[depth] = 2; /* defaults for this node's children */
            size_cells[depth] = 1;
            compatible = have_reg = have_irq = false;
        } else if (tok == 2) { /* END_NODE */
            if (compatible && have_reg) {
                *paddr = reg;
                *irq = have_irq ? intr : 0;
                return true;
            }
            compatible = false;
            if (--depth < -1)
                return false;
        } else if (tok == 3) { /* PROP */
            if (p + 8 > end || depth < 0)
                return false;
            uint32_t len = be32(p), nameoff = be32(p + 4);
            const uint8_t *val = p + 8;
            p += 8 + ((len + 3) & ~3u);
            if (p > end)
                return false;
            const char *pname = strings + nameoff;
            if (str_eq(pname, "#address-cells") && len == 4)
                addr_cells[depth] = be32(val);
            else if (str_eq(pname, "#size-cells") && len == 4)
                size_cells[depth] = be32(val);
            else if (str_eq(pname, "compatible"))
                compatible = strlist_has((const char *)val, len, "ns16550a");
            else if (str_eq(pname, "reg") && depth > 0) {
                uint32_t ac = addr_cells[depth - 1];
                if (ac >= 1 && ac <= 2 && len >= 4 * (ac + size_cells[depth - 1])) {
                    reg = read_cells(val, ac);
                    have_reg = true;
                }
            } else if (str_eq(pname, "interrupts") && len >= 4) {
                intr = be32(val);
                have_irq = true;
            }
        } else if (tok == 4) { /* NOP */
        } else {
            break; /* END or garbage */
        }
    }
    return false;
}

static const uint8_t *find_fdt(seL4_Word *size)
{
    const uint8_t *extra = (const uint8_t *)bi + 4096;
    seL4_Word off = 0;
    while (off + sizeof(seL4_BootInfoHeader) <= bi->extraLen) {
        const seL4_BootInfoHeader *h = (const seL4_BootInfoHeader *)(extra + off);
        if (h->len < sizeof(seL4_BootInfoHeader) || off + h->len > bi->extraLen)
            break;
        if (h->id == SEL4_BOOTINFO_HEADER_FDT) {
            *size = h->len - sizeof(seL4_BootInfoHeader);
            return (const uint8_t *)(h + 1);
        }
        off += h->len;
    }
    return NULL;
}

static seL4_Word uart_paddr = 0x10000000ul; /* QEMU virt, if there is no device tree */
static seL4_Word uart_irq = 10;
static bool uart_from_fdt;

/* Retype the device untyped covering the UART into frames up to its page
 * (untypeds are carved from their watermark up, so the pages before it go
 * first, as a few large untyped children) and map the UART's page. */
static void map_uart(void)
{
    seL4_Word size = 0;
    const uint8_t *fdt = find_fdt(&size);
    seL4_Word pa, irq;
    if (fdt && fdt_find_uart(fdt, size, &pa, &irq)) {
        uart_paddr = pa;
        if (irq)
            uart_irq = irq;
        uart_from_fdt = true;
    }
    seL4_Word page = uart_paddr & ~0xffful;
    seL4_Word n = bi->untyped.end - bi->untyped.start;
    for (seL4_Word i = 0; i < n; i++) {
        const seL4_UntypedDesc *u = &bi->untypedList[i];
        if (!u->isDevice || page < u->paddr || page - u->paddr >= (1ul << u->sizeBits))
            continue;
        seL4_CPtr ut = bi->untyped.start + i;
        seL4_Word offset = page - u->paddr;
        for (int b = u->sizeBits - 1; b >= seL4_PageBits; b--)
            if (offset & (1ul << b))
                make_from(ut, seL4_UntypedObject, (seL4_Word)b);
        seL4_CPtr frame = make_from(ut, seL4_RISCV_4K_Page, 0);
        seL4_RISCV_Page_GetAddress_t a = seL4_RISCV_Page_GetAddress(frame);
        if (a.error != seL4_NoError || a.paddr != page)
            fail("UART frame at the wrong address", a.paddr);
        map_frame(frame, seL4_CapInitThreadVSpace, UART_VA, seL4_ReadWrite);
        uart = (volatile uint8_t *)(UART_VA + (uart_paddr & 0xfff));
        uart[UART_IER] = 0;
        return;
    }
    /* No way to print: stop quietly; the host sees no output and times out. */
    suspend_forever();
}

/* ------------------------------------------------------------------ */
/* System calls with timestamps. Each is one asm statement: `s` is read
 * right before the ecall, `e` right after it returns. The kernel preserves
 * every register a call does not write, so s survives the call. */

#define SYS(n) ((seL4_Word)(n))

/* Call: a0 dest, a1 info, a2-a5 MR0-3 in and out. */
static inline seL4_Word call_ts(seL4_Word dest, seL4_Word info, seL4_Word *s, seL4_Word *e)
{
    register seL4_Word a0 __asm__("a0") = dest;
    register seL4_Word a1 __asm__("a1") = info;
    register seL4_Word a2 __asm__("a2") = 0;
    register seL4_Word a3 __asm__("a3") = 0;
    register seL4_Word a4 __asm__("a4") = 0;
    register seL4_Word a5 __asm__("a5") = 0;
    register seL4_Word a7 __asm__("a7") = SYS(seL4_SysCall);
    seL4_Word ts, te;
    __asm__ volatile("rdcycle %[s]\n\tecall\n\trdcycle %[e]"
                     : [s] "=&r"(ts), [e] "=&r"(te), "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4), "+r"(a5)
                     : "r"(a7)
                     : "memory");
    *s = ts;
    *e = te;
    return a1;
}

/* Call with MR0-2 given (invocations), timestamps around it. */
static inline seL4_Word invoke3_ts(seL4_Word cap, seL4_Word info, seL4_Word m0, seL4_Word m1, seL4_Word m2,
                                   seL4_Word *s, seL4_Word *e)
{
    register seL4_Word a0 __asm__("a0") = cap;
    register seL4_Word a1 __asm__("a1") = info;
    register seL4_Word a2 __asm__("a2") = m0;
    register seL4_Word a3 __asm__("a3") = m1;
    register seL4_Word a4 __asm__("a4") = m2;
    register seL4_Word a5 __asm__("a5") = 0;
    register seL4_Word a7 __asm__("a7") = SYS(seL4_SysCall);
    seL4_Word ts, te;
    __asm__ volatile("rdcycle %[s]\n\tecall\n\trdcycle %[e]"
                     : [s] "=&r"(ts), [e] "=&r"(te), "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4), "+r"(a5)
                     : "r"(a7)
                     : "memory");
    *s = ts;
    *e = te;
    return a1;
}

/* A plain Call without timestamps (invocations from benchmark threads,
 * which must not use the library's IPC-buffer pointer: it is the root's). */
static inline seL4_Word invoke0(seL4_Word cap, seL4_Word label)
{
    register seL4_Word a0 __asm__("a0") = cap;
    register seL4_Word a1 __asm__("a1") = label << 12;
    register seL4_Word a2 __asm__("a2") = 0;
    register seL4_Word a3 __asm__("a3") = 0;
    register seL4_Word a4 __asm__("a4") = 0;
    register seL4_Word a5 __asm__("a5") = 0;
    register seL4_Word a7 __asm__("a7") = SYS(seL4_SysCall);
    __asm__ volatile("ecall" : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4), "+r"(a5) : "r"(a7) : "memory");
    return a1 >> 12;
}

/* Recv (a6 = reply): e right after it returns; returns MR0. */
static inline seL4_Word recv_te(seL4_Word src, seL4_Word reply, seL4_Word *e)
{
    register seL4_Word a0 __asm__("a0") = src;
    register seL4_Word a1 __asm__("a1") = 0;
    register seL4_Word a2 __asm__("a2");
    register seL4_Word a3 __asm__("a3");
    register seL4_Word a4 __asm__("a4");
    register seL4_Word a5 __asm__("a5");
    register seL4_Word a6 __asm__("a6") = reply;
    register seL4_Word a7 __asm__("a7") = SYS(seL4_SysRecv);
    seL4_Word te;
    __asm__ volatile("ecall\n\trdcycle %[e]"
                     : [e] "=&r"(te), "+r"(a0), "+r"(a1), "=r"(a2), "=r"(a3), "=r"(a4), "=r"(a5)
                     : "r"(a6), "r"(a7)
                     : "memory");
    *e = te;
    return a2;
}

/* ReplyRecv: s before, e after. */
static inline void replyrecv_ts(seL4_Word src, seL4_Word info, seL4_Word reply, seL4_Word *s, seL4_Word *e)
{
    register seL4_Word a0 __asm__("a0") = src;
    register seL4_Word a1 __asm__("a1") = info;
    register seL4_Word a2 __asm__("a2") = 0;
    register seL4_Word a3 __asm__("a3") = 0;
    register seL4_Word a4 __asm__("a4") = 0;
    register seL4_Word a5 __asm__("a5") = 0;
    register seL4_Word a6 __asm__("a6") = reply;
    register seL4_Word a7 __asm__("a7") = SYS(seL4_SysReplyRecv);
    seL4_Word ts, te;
    __asm__ volatile("rdcycle %[s]\n\tecall\n\trdcycle %[e]"
                     : [s] "=&r"(ts), [e] "=&r"(te), "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4), "+r"(a5)
                     : "r"(a6), "r"(a7)
                     : "memory");
    *s = ts;
    *e = te;
}

/* ReplyRecv without timestamps: MR0 in, the received MR0 out. */
static inline seL4_Word replyrecv_mr0(seL4_Word src, seL4_Word info, seL4_Word reply, seL4_Word mr0)
{
    register seL4_Word a0 __asm__("a0") = src;
    register seL4_Word a1 __asm__("a1") = info;
    register seL4_Word a2 __asm__("a2") = mr0;
    register seL4_Word a3 __asm__("a3") = 0;
    register seL4_Word a4 __asm__("a4") = 0;
    register seL4_Word a5 __asm__("a5") = 0;
    register seL4_Word a6 __asm__("a6") = reply;
    register seL4_Word a7 __asm__("a7") = SYS(seL4_SysReplyRecv);
    __asm__ volatile("ecall"
                     : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4), "+r"(a5)
                     : "r"(a6), "r"(a7)
                     : "memory");
    return a2;
}

/* ReplyRecv without timestamps. */
static inline void replyrecv(seL4_Word src, seL4_Word info, seL4_Word reply)
{
    register seL4_Word a0 __asm__("a0") = src;
    register seL4_Word a1 __asm__("a1") = info;
    register seL4_Word a2 __asm__("a2") = 0;
    register seL4_Word a3 __asm__("a3") = 0;
    register seL4_Word a4 __asm__("a4") = 0;
    register seL4_Word a5 __asm__("a5") = 0;
    register seL4_Word a6 __asm__("a6") = reply;
    register seL4_Word a7 __asm__("a7") = SYS(seL4_SysReplyRecv);
    __asm__ volatile("ecall"
                     : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4), "+r"(a5)
                     : "r"(a6), "r"(a7)
                     : "memory");
}

/* Send: s before. */
static inline void send_ts(seL4_Word dest, seL4_Word info, seL4_Word *s)
{
    register seL4_Word a0 __asm__("a0") = dest;
    register seL4_Word a1 __asm__("a1") = info;
    register seL4_Word a2 __asm__("a2") = 0;
    register seL4_Word a3 __asm__("a3") = 0;
    register seL4_Word a4 __asm__("a4") = 0;
    register seL4_Word a5 __asm__("a5") = 0;
    register seL4_Word a7 __asm__("a7") = SYS(seL4_SysSend);
    seL4_Word ts;
    __asm__ volatile("rdcycle %[s]\n\tecall"
                     : [s] "=&r"(ts)
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5), "r"(a7)
                     : "memory");
    *s = ts;
}

/* Signal (Send on a notification, no message): s before, e after. */
static inline void signal_ts(seL4_Word ntfn, seL4_Word *s, seL4_Word *e)
{
    register seL4_Word a0 __asm__("a0") = ntfn;
    register seL4_Word a1 __asm__("a1") = 0;
    register seL4_Word a7 __asm__("a7") = SYS(seL4_SysSend);
    seL4_Word ts, te;
    __asm__ volatile("rdcycle %[s]\n\tecall\n\trdcycle %[e]"
                     : [s] "=&r"(ts), [e] "=&r"(te)
                     : "r"(a0), "r"(a1), "r"(a7)
                     : "memory");
    *s = ts;
    *e = te;
}

/* Wait on a notification: s before, e after. */
static inline void wait_ts(seL4_Word ntfn, seL4_Word *s, seL4_Word *e)
{
    register seL4_Word a0 __asm__("a0") = ntfn;
    register seL4_Word a1 __asm__("a1") = 0;
    register seL4_Word a2 __asm__("a2");
    register seL4_Word a3 __asm__("a3");
    register seL4_Word a4 __asm__("a4");
    register seL4_Word a5 __asm__("a5");
    register seL4_Word a7 __asm__("a7") = SYS(seL4_SysWait);
    seL4_Word ts, te;
    __asm__ volatile("rdcycle %[s]\n\tecall\n\trdcycle %[e]"
                     : [s] "=&r"(ts), [e] "=&r"(te), "+r"(a0), "+r"(a1), "=r"(a2), "=r"(a3), "=r"(a4), "=r"(a5)
                     : "r"(a7)
                     : "memory");
    *s = ts;
    *e = te;
}

/* Yield: s before, e after. */
static inline void yield_ts(seL4_Word *s, seL4_Word *e)
{
    register seL4_Word a7 __asm__("a7") = SYS(seL4_SysYield);
    seL4_Word ts, te;
    __asm__ volatile("rdcycle %[s]\n\tecall\n\trdcycle %[e]" : [s] "=&r"(ts), [e] "=&r"(te) : "r"(a7) : "memory");
    *s = ts;
    *e = te;
}

/* An unknown system call (a fault): s before, e after the thread resumes. */
#define UNKNOWN_SYSCALL 0x5a5aul
static inline void unknown_syscall_ts(seL4_Word *s, seL4_Word *e)
{
    register seL4_Word a0 __asm__("a0") = 0;
    register seL4_Word a1 __asm__("a1") = 0;
    register seL4_Word a2 __asm__("a2") = 0;
    register seL4_Word a3 __asm__("a3") = 0;
    register seL4_Word a4 __asm__("a4") = 0;
    register seL4_Word a5 __asm__("a5") = 0;
    register seL4_Word a6 __asm__("a6") = 0;
    register seL4_Word a7 __asm__("a7") = UNKNOWN_SYSCALL;
    seL4_Word ts, te;
    __asm__ volatile("rdcycle %[s]\n\tecall\n\trdcycle %[e]"
                     : [s] "=&r"(ts), [e] "=&r"(te), "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4), "+r"(a5),
                       "+r"(a6), "+r"(a7)
                     :
                     : "memory");
    *s = ts;
    *e = te;
}

/* A store to a device register: s right before it. */
static inline void store8_ts(volatile uint8_t *addr, uint8_t v, seL4_Word *s)
{
    seL4_Word ts;
    __asm__ volatile("rdcycle %[s]\n\tsb %[v], 0(%[a])" : [s] "=&r"(ts) : [v] "r"(v), [a] "r"(addr) : "memory");
    *s = ts;
}

static inline void wait_plain(seL4_Word ntfn)
{
    seL4_Word s, e;
    wait_ts(ntfn, &s, &e);
}

/* ------------------------------------------------------------------ */
/* Threads */

#define MAX_THREADS 3
#define STACK_WORDS 2048
static seL4_Word stacks[MAX_THREADS][STACK_WORDS] __attribute__((aligned(16)));
static seL4_CPtr ipcbuf_frame[MAX_THREADS];
static seL4_CPtr sched_control;

typedef struct {
    seL4_CPtr tcb, sc;
    seL4_Word sp;
} thread_t;

static int n_threads;
static thread_t threads[MAX_THREADS];

static seL4_Word reg_gp(void)
{
    seL4_Word v;
    __asm__ volatile("mv %0, gp" : "=r"(v));
    return v;
}

static seL4_Word reg_tp(void)
{
    seL4_Word v;
    __asm__ volatile("mv %0, tp" : "=r"(v));
    return v;
}

static seL4_CPtr make_sc(void)
{
    seL4_CPtr sc = make(seL4_SchedContextObject, 8);
    check(seL4_SchedControl_ConfigureFlags(sched_control, sc, BUDGET_US, BUDGET_US, 0, 0, 0),
          "SchedControl_Configure");
    return sc;
}

typedef void (*thread_fn)(seL4_Word, seL4_Word, seL4_Word);

static void start_regs(seL4_CPtr tcb, thread_fn fn, seL4_Word sp, seL4_Word a0, seL4_Word a1, seL4_Word a2)
{
    seL4_UserContext regs = {0};
    regs.pc = (seL4_Word)fn;
    regs.sp = sp;
    regs.gp = reg_gp();
    regs.tp = reg_tp();
    regs.a0 = a0;
    regs.a1 = a1;
    regs.a2 = a2;
    check(seL4_TCB_WriteRegisters(tcb, 1, 0, sizeof(regs) / sizeof(seL4_Word), &regs), "TCB_WriteRegisters");
}

/* A thread in the root's CSpace and the given VSpace, on its own
 * round-robin SC; start() sets its registers and resumes it, and it runs
 * when the root lowers its priority. */
static thread_t *spawn_in(seL4_CPtr vspace, seL4_Word ipcbuf_va, seL4_CPtr ipcbuf_cap, seL4_Word sp, seL4_Word prio,
                          seL4_CPtr fault_ep)
{
    if (n_threads >= MAX_THREADS)
        fail("too many threads", (seL4_Word)n_threads);
    thread_t *t = &threads[n_threads++];
    t->tcb = make(seL4_TCBObject, 0);
    t->sc = make_sc();
    t->sp = sp;
    check(seL4_TCB_Configure(t->tcb, ROOT, 0, vspace, 0, ipcbuf_va, ipcbuf_cap), "TCB_Configure");
    check(seL4_TCB_SetSchedParams(t->tcb, SELF, 0, prio, t->sc, fault_ep), "TCB_SetSchedParams");
    return t;
}

/* A thread in the root's VSpace, with the next free stack and IPC buffer. */
static thread_t *spawn(seL4_Word prio, seL4_CPtr fault_ep)
{
    int i = n_threads;
    if (i >= MAX_THREADS)
        fail("too many threads", (seL4_Word)i);
    return spawn_in(seL4_CapInitThreadVSpace, IPCBUF_VA + 4096ul * (seL4_Word)i, ipcbuf_frame[i],
                    (seL4_Word)&stacks[i][STACK_WORDS], prio, fault_ep);
}

static void start(thread_t *t, thread_fn fn, seL4_Word a0, seL4_Word a1, seL4_Word a2)
{
    start_regs(t->tcb, fn, t->sp, a0, a1, a2);
}

/* Let the benchmark threads run; returns when they have all blocked. */
static void run_threads(void)
{
    check(seL4_TCB_SetPriority(SELF, SELF, ROOT_PRIO_LOW), "TCB_SetPriority (low)");
    check(seL4_TCB_SetPriority(SELF, SELF, ROOT_PRIO_HIGH), "TCB_SetPriority (high)");
}

static void end_threads(void)
{
    for (int i = 0; i < n_threads; i++)
        check(seL4_TCB_Suspend(threads[i].tcb), "TCB_Suspend");
    n_threads = 0;
}

/* A benchmark thread's end: suspend itself (raw Call, see invoke0). */
static void thread_exit(seL4_Word tcb)
{
    invoke0(tcb, TCBSuspend);
    for (;;)
        ;
}

/* ------------------------------------------------------------------ */
/* Samples and results */

/* Timestamps of one run: start[i] taken where operation i began, end[i]
 * where it ended. */
/* One spare entry: where the recorded end of operation i is taken in the
 * same asm statement as the start of operation i+1, one more operation
 * runs than is recorded. */
static volatile seL4_Word ts_start[RUNS + 1], ts_end[RUNS + 1];
static volatile seL4_Word ts_start2[RUNS + 1], ts_end2[RUNS + 1];
static volatile seL4_Word done_flag;
static seL4_Word overhead;

typedef struct {
    const char *name;
    seL4_Word min, median, max, samples, overhead;
} result_t;

#define MAX_RESULTS 40
static result_t results[MAX_RESULTS];
static int n_results;

static void clear_ts(void)
{
    for (int i = 0; i <= RUNS; i++)
        ts_start[i] = ts_end[i] = ts_start2[i] = ts_end2[i] = 0;
    done_flag = 0;
}

static void sort(seL4_Word *v, int n)
{
    for (int i = 1; i < n; i++) {
        seL4_Word x = v[i];
        int j = i - 1;
        while (j >= 0 && v[j] > x) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

/* Record a result from start/end arrays (recorded samples only). */
static void record(const char *name, volatile seL4_Word *start, volatile seL4_Word *end)
{
    static seL4_Word d[SAMPLES];
    for (int i = 0; i < SAMPLES; i++) {
        seL4_Word s = start[WARMUP + i], e = end[WARMUP + i];
        if (s == 0 || e == 0 || e < s + overhead)
            fail(name, (seL4_Word)i); /* a missing or inconsistent timestamp */
        d[i] = e - s - overhead;
    }
    sort(d, SAMPLES);
    if (n_results >= MAX_RESULTS)
        fail("too many results", n_results);
    result_t *r = &results[n_results++];
    r->name = name;
    r->min = d[0];
    r->median = d[SAMPLES / 2];
    r->max = d[SAMPLES - 1];
    r->samples = SAMPLES;
    r->overhead = overhead;
}

static void require_done(const char *name)
{
    if (!done_flag)
        fail(name, 0); /* the benchmark threads did not finish */
}

/* ------------------------------------------------------------------ */
/* IPC: client and server */

typedef struct {
    seL4_CPtr ep, reply, self;
    seL4_Word len; /* message words, both ways */
} ipc_args_t;

static ipc_args_t ipc_args;

/* Client: RUNS + 1 Calls; ts_start = before the Call, ts_end2 = after it
 * returns (the end of the server's ReplyRecv). */
static void client_fn(seL4_Word a0, seL4_Word a1, seL4_Word a2)
{
    (void)a0;
    (void)a1;
    (void)a2;
    seL4_Word info = ipc_args.len;
    for (int i = 0; i <= RUNS; i++) {
        seL4_Word s, e;
        call_ts(ipc_args.ep, info, &s, &e);
        ts_start[i] = s;
        ts_end2[i] = e;
    }
    done_flag = 1;
    thread_exit(ipc_args.self);
}

/* Client for the round trip: RUNS Calls, timed in this thread alone. */
static void rt_client_fn(seL4_Word a0, seL4_Word a1, seL4_Word a2)
{
    (void)a0;
    (void)a1;
    (void)a2;
    seL4_Word info = ipc_args.len;
    for (int i = 0; i < RUNS; i++) {
        seL4_Word s, e;
        call_ts(ipc_args.ep, info, &s, &e);
        ts_start[i] = s;
        ts_end[i] = e;
    }
    done_flag = 1;
    thread_exit(ipc_args.self);
}

/* Server: ts_end = after its receive returns (the end of the client's
 * Call), ts_start2 = before its ReplyRecv (whose recorded end is the
 * client's next Call returning). */
static void server_fn(seL4_Word ep, seL4_Word reply, seL4_Word len)
{
    seL4_Word e, s;
    recv_te(ep, reply, &e);
    for (int i = 0; i <= RUNS; i++) {
        ts_end[i] = e;
        replyrecv_ts(ep, len, reply, &s, &e);
        ts_start2[i] = s;
    }
    for (;;)
        replyrecv(ep, len, reply);
}

/* Echo server for the round trip: nothing but ReplyRecv. */
static void echo_fn(seL4_Word ep, seL4_Word reply, seL4_Word len)
{
    seL4_Word e;
    recv_te(ep, reply, &e);
    for (;;)
        replyrecv(ep, len, reply);
}

/* Second address space: a VSpace with copies of the root's image frames at
 * the same addresses (so code and globals are shared), plus a stack and an
 * IPC buffer of its own. */
extern char __kairos_image_start[];
static seL4_CPtr xas_vspace, xas_ipcbuf;

static void make_second_vspace(void)
{
    xas_vspace = make(seL4_RISCV_PageTableObject, 0);
    check(seL4_RISCV_ASIDPool_Assign(seL4_CapInitThreadASIDPool, xas_vspace), "ASIDPool_Assign");
    seL4_Word image = (seL4_Word)__kairos_image_start & ~0xffful;
    for (seL4_CPtr f = bi->userImageFrames.start; f < bi->userImageFrames.end; f++) {
        seL4_CPtr copy = alloc_slot();
        check(seL4_CNode_Copy(ROOT, copy, seL4_WordBits, ROOT, f, seL4_WordBits, seL4_AllRights), "CNode_Copy");
        map_frame(copy, xas_vspace, image + 4096ul * (f - bi->userImageFrames.start), seL4_AllRights);
    }
    for (int i = 0; i < XAS_STACK_PAGES; i++)
        map_frame(make(seL4_RISCV_4K_Page, 0), xas_vspace, XAS_STACK_VA + 4096ul * (seL4_Word)i, seL4_ReadWrite);
    xas_ipcbuf = make(seL4_RISCV_4K_Page, 0);
    map_frame(xas_ipcbuf, xas_vspace, XAS_IPCBUF_VA, seL4_ReadWrite);
}

/* A passive server (its SC taken away once it waits) or an active one,
 * in this or the second address space; then the client. */
static void ipc_setup(bool passive, bool xas, bool roundtrip, seL4_Word len)
{
    clear_ts();
    ipc_args.ep = make(seL4_EndpointObject, 0);
    ipc_args.reply = make(seL4_ReplyObject, 0);
    ipc_args.len = len;
    thread_fn srv = roundtrip ? echo_fn : server_fn;
    thread_t *server;
    if (xas) {
        if (n_threads >= MAX_THREADS)
            fail("too many threads", n_threads);
        server = spawn_in(xas_vspace, XAS_IPCBUF_VA, xas_ipcbuf, XAS_STACK_VA + 4096ul * XAS_STACK_PAGES, PRIO_HIGH,
                          seL4_CapNull);
    } else {
        server = spawn(PRIO_HIGH, seL4_CapNull);
    }
    start(server, srv, ipc_args.ep, ipc_args.reply, len);
    run_threads(); /* the server waits in its first receive */
    if (passive)
        check(seL4_SchedContext_UnbindObject(server->sc, server->tcb), "SchedContext_UnbindObject");
    thread_t *client = spawn(PRIO_LOW, seL4_CapNull);
    ipc_args.self = client->tcb;
    start(client, roundtrip ? rt_client_fn : client_fn, 0, 0, 0);
    run_threads();
    end_threads();
}

static void progress(const char *name)
{
    out_str("bench: running ");
    out_str(name);
    out_str("\n");
}

static void bench_ipc(const char *call_name, const char *rr_name, bool passive, bool xas, seL4_Word len)
{
    progress(call_name);
    ipc_setup(passive, xas, false, len);
    require_done(call_name);
    if (call_name)
        record(call_name, ts_start, ts_end);
    if (rr_name)
        record(rr_name, ts_start2, ts_end2);
}

static void bench_roundtrip(const char *name, bool passive, bool xas, seL4_Word len)
{
    progress(name);
    ipc_setup(passive, xas, true, len);
    require_done(name);
    record(name, ts_start, ts_end);
}

/* ------------------------------------------------------------------ */
/* Send to a waiting receiver (slow path) */

static void receiver_fn(seL4_Word ep, seL4_Word reply, seL4_Word a2)
{
    (void)a2;
    for (int i = 0; i < RUNS; i++) {
        seL4_Word e;
        recv_te(ep, reply, &e);
        ts_end[i] = e;
    }
    for (;;) {
        seL4_Word e;
        recv_te(ep, reply, &e);
    }
}

static void sender_fn(seL4_Word ep, seL4_Word self, seL4_Word a2)
{
    (void)a2;
    for (int i = 0; i < RUNS; i++) {
        seL4_Word s;
        send_ts(ep, 0, &s);
        ts_start[i] = s;
    }
    done_flag = 1;
    thread_exit(self);
}

static void bench_send(void)
{
    progress("ipc_send_slowpath");
    clear_ts();
    seL4_CPtr ep = make(seL4_EndpointObject, 0);
    seL4_CPtr reply = make(seL4_ReplyObject, 0);
    start(spawn(PRIO_HIGH, seL4_CapNull), receiver_fn, ep, reply, 0);
    run_threads();
    thread_t *s = spawn(PRIO_LOW, seL4_CapNull);
    start(s, sender_fn, ep, s->tcb, 0);
    run_threads();
    end_threads();
    require_done("ipc_send_slowpath");
    record("ipc_send_slowpath", ts_start, ts_end);
}

/* ------------------------------------------------------------------ */
/* Signal to a higher-priority waiter, and the SC switch back */

/* Waiter: ts_end = after its Wait returns (the end of signal i);
 * ts_start2 = before it waits again (the start of the switch back). */
static void waiter_fn(seL4_Word ntfn, seL4_Word a1, seL4_Word a2)
{
    (void)a1;
    (void)a2;
    seL4_Word s, e;
    wait_ts(ntfn, &s, &e);
    for (int i = 0; i <= RUNS; i++) {
        ts_end[i] = e;
        wait_ts(ntfn, &s, &e);
        ts_start2[i] = s;
    }
    for (;;)
        wait_plain(ntfn);
}

/* Signaller: ts_start = before the Signal; ts_end2 = after it returns,
 * when the waiter has blocked again. */
static void signaller_fn(seL4_Word ntfn, seL4_Word self, seL4_Word a2)
{
    (void)a2;
    for (int i = 0; i <= RUNS; i++) {
        seL4_Word s, e;
        signal_ts(ntfn, &s, &e);
        ts_start[i] = s;
        ts_end2[i] = e;
    }
    done_flag = 1;
    thread_exit(self);
}

static void bench_signal(void)
{
    progress("signal_higher_prio");
    clear_ts();
    seL4_CPtr ntfn = make(seL4_NotificationObject, 0);
    start(spawn(PRIO_HIGH, seL4_CapNull), waiter_fn, ntfn, 0, 0);
    run_threads();
    thread_t *s = spawn(PRIO_LOW, seL4_CapNull);
    start(s, signaller_fn, ntfn, s->tcb, 0);
    run_threads();
    end_threads();
    require_done("signal_higher_prio");
    record("signal_higher_prio", ts_start, ts_end);
    record("sc_switch", ts_start2, ts_end2);
}

/* ------------------------------------------------------------------ */
/* Interrupt to a user handler: the UART's transmitter-empty interrupt,
 * raised at once when enabled while the transmitter is empty. */

static seL4_CPtr irq_handler;

static void irq_handler_fn(seL4_Word ntfn, seL4_Word handler, seL4_Word a2)
{
    (void)a2;
    for (int i = 0;; i++) {
        seL4_Word s, e;
        wait_ts(ntfn, &s, &e);
        if (i < RUNS)
            ts_end[i] = e;
        uart[UART_IER] = 0; /* the line goes down */
        invoke0(handler, IRQAckIRQ);
    }
}

static void irq_trigger_fn(seL4_Word self, seL4_Word a1, seL4_Word a2)
{
    (void)a1;
    (void)a2;
    for (int i = 0; i < RUNS; i++) {
        while (!(uart[UART_LSR] & UART_LSR_THRE))
            ;
        seL4_Word s;
        store8_ts(&uart[UART_IER], UART_IER_THRI, &s);
        ts_start[i] = s;
    }
    done_flag = 1;
    thread_exit(self);
}

static void bench_irq(void)
{
    progress("irq_to_user_handler");
    clear_ts();
    seL4_CPtr ntfn = make(seL4_NotificationObject, 0);
    irq_handler = alloc_slot();
    check(seL4_IRQControl_Get(seL4_CapIRQControl, uart_irq, ROOT, irq_handler, seL4_WordBits), "IRQControl_Get");
    check(seL4_IRQHandler_SetNotification(irq_handler, ntfn), "IRQHandler_SetNotification");
    start(spawn(PRIO_HIGH, seL4_CapNull), irq_handler_fn, ntfn, irq_handler, 0);
    run_threads();
    thread_t *t = spawn(PRIO_LOW, seL4_CapNull);
    start(t, irq_trigger_fn, t->tcb, 0, 0);
    run_threads();
    end_threads();
    uart[UART_IER] = 0;
    check(seL4_IRQHandler_Clear(irq_handler), "IRQHandler_Clear");
    require_done("irq_to_user_handler");
    record("irq_to_user_handler", ts_start, ts_end);
}

/* ------------------------------------------------------------------ */
/* Fault round trip: an unknown system call goes to the fault handler,
 * which replies with one word, the new FaultIP (the instruction after the
 * ecall, as seL4's fault benchmark advances the PC), and the thread
 * resumes there. */

static void fault_handler_fn(seL4_Word ep, seL4_Word reply, seL4_Word a2)
{
    (void)a2;
    seL4_Word e;
    seL4_Word ip = recv_te(ep, reply, &e); /* MR0: FaultIP */
    for (;;)
        ip = replyrecv_mr0(ep, 1, reply, ip + 4);
}

static void faulter_fn(seL4_Word self, seL4_Word a1, seL4_Word a2)
{
    (void)a1;
    (void)a2;
    for (int i = 0; i < RUNS; i++) {
        seL4_Word s, e;
        unknown_syscall_ts(&s, &e);
        ts_start[i] = s;
        ts_end[i] = e;
    }
    done_flag = 1;
    thread_exit(self);
}

static void bench_fault(void)
{
    progress("fault_roundtrip");
    clear_ts();
    seL4_CPtr ep = make(seL4_EndpointObject, 0);
    seL4_CPtr reply = make(seL4_ReplyObject, 0);
    start(spawn(PRIO_HIGH, seL4_CapNull), fault_handler_fn, ep, reply, 0);
    run_threads();
    thread_t *f = spawn(PRIO_LOW, ep);
    start(f, faulter_fn, f->tcb, 0, 0);
    run_threads();
    end_threads();
    require_done("fault_roundtrip");
    record("fault_roundtrip", ts_start, ts_end);
}

/* ------------------------------------------------------------------ */
/* Yield to another thread of the same priority. A's i-th Yield ends when
 * B's Yield returns and vice versa; recorded: B's Yield i, which ends in A
 * (ts_start2 = before B's Yield, ts_end = after A's Yield returns). */

static void yield_a_fn(seL4_Word self, seL4_Word a1, seL4_Word a2)
{
    (void)a1;
    (void)a2;
    for (int i = 0; i < RUNS; i++) {
        seL4_Word s, e;
        yield_ts(&s, &e);
        ts_start[i] = s;
        ts_end[i] = e;
    }
    done_flag = 1;
    thread_exit(self);
}

static void yield_b_fn(seL4_Word self, seL4_Word a1, seL4_Word a2)
{
    (void)a1;
    (void)a2;
    for (int i = 0; i < RUNS; i++) {
        seL4_Word s, e;
        yield_ts(&s, &e);
        ts_start2[i] = s;
        ts_end2[i] = e;
    }
    thread_exit(self);
}

static void bench_yield(void)
{
    progress("yield_other_thread");
    clear_ts();
    thread_t *a = spawn(PRIO_LOW, seL4_CapNull);
    start(a, yield_a_fn, a->tcb, 0, 0);
    thread_t *b = spawn(PRIO_LOW, seL4_CapNull);
    start(b, yield_b_fn, b->tcb, 0, 0);
    run_threads();
    end_threads();
    require_done("yield_other_thread");
    record("yield_other_thread", ts_start2, ts_end);
}

/* ------------------------------------------------------------------ */
/* Benchmarks in the root thread alone */

static void bench_yield_self(void)
{
    progress("yield_self");
    clear_ts();
    for (int i = 0; i < RUNS; i++) {
        seL4_Word s, e;
        yield_ts(&s, &e);
        ts_start[i] = s;
        ts_end[i] = e;
    }
    record("yield_self", ts_start, ts_end);
}

static void bench_timer_read(void)
{
    progress("timer_read");
    clear_ts();
    for (int i = 0; i < RUNS; i++) {
        seL4_Word s, t, e;
        __asm__ volatile("rdcycle %[s]\n\trdtime %[t]\n\trdcycle %[e]" : [s] "=&r"(s), [t] "=&r"(t), [e] "=&r"(e));
        (void)t;
        ts_start[i] = s;
        ts_end[i] = e;
    }
    record("timer_read", ts_start, ts_end);
}

static void bench_map(void)
{
    progress("map_4k_page");
    clear_ts();
    seL4_CPtr frame = make(seL4_RISCV_4K_Page, 0);
    map_frame(frame, seL4_CapInitThreadVSpace, MAP_VA, seL4_ReadWrite); /* page tables */
    check(seL4_RISCV_Page_Unmap(frame), "Page_Unmap");
    seL4_Word info = seL4_MessageInfo_new(RISCVPageMap, 0, 1, 3).words[0];
    for (int i = 0; i < RUNS; i++) {
        seL4_SetCap(0, seL4_CapInitThreadVSpace);
        seL4_Word s, e;
        seL4_Word r = invoke3_ts(frame, info, MAP_VA, seL4_ReadWrite.words[0], seL4_RISCV_Default_VMAttributes, &s, &e);
        if ((r >> 12) != 0)
            fail("Page_Map (map_4k_page)", r >> 12);
        ts_start[i] = s;
        ts_end[i] = e;
        check(seL4_RISCV_Page_Unmap(frame), "Page_Unmap");
    }
    record("map_4k_page", ts_start, ts_end);
}

/* ------------------------------------------------------------------ */
/* Counter check and overhead */

static void measure_overhead(void)
{
    /* cycle and instret must advance alike (they do under -icount, where
     * both count retired instructions); rdcycle is used throughout. */
    seL4_Word c0, i0, c1, i1;
    __asm__ volatile("rdcycle %0\n\trdinstret %1" : "=&r"(c0), "=&r"(i0));
    seL4_Yield();
    __asm__ volatile("rdcycle %0\n\trdinstret %1" : "=&r"(c1), "=&r"(i1));
    out_str("bench: counters: cycle +");
    out_u64(c1 - c0);
    out_str(", instret +");
    out_u64(i1 - i0);
    out_str(c1 - c0 == i1 - i0 ? " (agree: instruction counts)\n" : " (DIFFER: not under -icount?)\n");

    seL4_Word lo = ~0ul, hi = 0;
    for (int i = 0; i < RUNS; i++) {
        seL4_Word s, e;
        __asm__ volatile("rdcycle %[s]\n\trdcycle %[e]" : [s] "=&r"(s), [e] "=&r"(e));
        if (i < WARMUP)
            continue;
        seL4_Word d = e - s;
        if (d < lo)
            lo = d;
        if (d > hi)
            hi = d;
    }
    overhead = lo;
    out_str("bench: counter read overhead ");
    out_u64(lo);
    out_str(" (max ");
    out_u64(hi);
    out_str("), subtracted from every sample\n");
}

/* ------------------------------------------------------------------ */

static void print_results(void)
{
    out_str("\n");
    out_str_w("benchmark", 28);
    out_str("       min    median       max  samples  overhead\n");
    for (int i = 0; i < n_results; i++) {
        const result_t *r = &results[i];
        out_str_w(r->name, 28);
        out_u64_w(r->min, 10);
        out_u64_w(r->median, 10);
        out_u64_w(r->max, 10);
        out_u64_w(r->samples, 9);
        out_u64_w(r->overhead, 10);
        out_str("\n");
    }
    out_str("(unit: instructions, QEMU -icount shift=0)\n\n");
    for (int i = 0; i < n_results; i++) {
        const result_t *r = &results[i];
        out_str("BENCH {\"name\": \"");
        out_str(r->name);
        out_str("\", \"unit\": \"instructions\", \"min\": ");
        out_u64(r->min);
        out_str(", \"median\": ");
        out_u64(r->median);
        out_str(", \"max\": ");
        out_u64(r->max);
        out_str(", \"samples\": ");
        out_u64(r->samples);
        out_str(", \"overhead\": ");
        out_u64(r->overhead);
        out_str("}\n");
    }
}

int main(void)
{
    /* seL4's layout: the BootInfo frame follows the IPC buffer. */
    bi = (seL4_BootInfo *)((seL4_Word)seL4_GetIPCBuffer() + 4096);
    if (bi->ipcBuffer != seL4_GetIPCBuffer())
        suspend_forever();
    next_slot = bi->empty.start;
    slot_end = bi->empty.end;
    sched_control = bi->schedcontrol.start;
    find_ram_untyped();
    map_uart();
    out_str("\nbench: Kairos benchmark suite (plain seL4 ABI); UART ");
    out_hex(uart_paddr);
    out_str(" irq ");
    out_u64(uart_irq);
    out_str(uart_from_fdt ? " (device tree)" : " (QEMU virt default)");
    out_str("; warm-up ");
    out_u64(WARMUP);
    out_str(", samples ");
    out_u64(SAMPLES);
    out_str("\n");

    /* The root's own SC: long enough that no budget expiry interrupts. */
    check(seL4_SchedControl_ConfigureFlags(sched_control, seL4_CapInitThreadSC, BUDGET_US, BUDGET_US, 0, 0, 0),
          "SchedControl_Configure (root)");
    check(seL4_TCB_SetPriority(SELF, SELF, ROOT_PRIO_HIGH), "TCB_SetPriority");
    for (int i = 0; i < MAX_THREADS; i++) {
        ipcbuf_frame[i] = make(seL4_RISCV_4K_Page, 0);
        map_frame(ipcbuf_frame[i], seL4_CapInitThreadVSpace, IPCBUF_VA + 4096ul * (seL4_Word)i, seL4_ReadWrite);
    }
    make_second_vspace();
    measure_overhead();

    bench_ipc("ipc_call_fastpath", "ipc_replyrecv_fastpath", true, false, 0);
    bench_roundtrip("ipc_roundtrip_fastpath", true, false, 0);
    bench_ipc("ipc_call_fastpath_xas", "ipc_replyrecv_fastpath_xas", true, true, 0);
    bench_roundtrip("ipc_roundtrip_fastpath_xas", true, true, 0);
    bench_ipc("ipc_call_active", "ipc_replyrecv_active", false, false, 0);
    bench_roundtrip("ipc_roundtrip_active", false, false, 0);
    bench_send();
    bench_ipc("ipc_call_10w", "ipc_replyrecv_10w", true, false, 10);
    bench_ipc("ipc_call_120w", "ipc_replyrecv_120w", true, false, 120);
    bench_signal();
    bench_irq();
    bench_fault();
    bench_yield();
    bench_yield_self();
    bench_timer_read();
    bench_map();

    print_results();
    out_str("bench: done\n");
    suspend_forever();
    return 0;
}
