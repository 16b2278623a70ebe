/*
 * Flattened device tree (DTB) parser for boot.
 *
 * The kernel receives the DTB address from the firmware in a1 and must learn
 * from it where RAM is, what is reserved, where the initrd (root task ELF)
 * lies, the timer frequency, whether Sstc exists, and where the PLIC, CLINT,
 * UART, RTC and test finisher live. fdt_parse() walks the whole blob once,
 * validating every offset and length against the buffer (the blob comes from
 * outside the kernel and is untrusted), and fills struct fdt_info.
 *
 * Not reentrant: the walk keeps its per-node scratch in a static buffer (so
 * that the boot stack stays small). The kernel parses the DTB once, on one
 * hart, before anything else runs.
 *
 * Conventions:
 *  - A device range with size 0 means "not found". For each device kind
 *    the first matching node to END wins (tree order for siblings; a
 *    matching node nested inside another matching node would come first).
 *  - Addresses are taken from `reg` as written, decoded with the parent's
 *    #address-cells/#size-cells (defaults 2 and 1); bus `ranges` are NOT
 *    translated (QEMU virt's /soc has an empty, identity `ranges`).
 *  - Nodes with status = "disabled" are ignored.
 *  - /reserved-memory children without `reg` (dynamic allocations described
 *    only by `size`) are ignored: nothing has been placed for them yet.
 *  - Overflow of any fixed array (mem, resv, bootargs) is an error.
 */
#ifndef KAIROS_FDT_H
#define KAIROS_FDT_H

#include <types.h>

#define FDT_MAX_MEM 8
#define FDT_MAX_RESV 16
#define FDT_MAX_DEPTH 16          /* nesting depth of nodes, root = 1 */
#define FDT_MAX_TOKENS (1u << 20) /* structure-block tokens examined */
#define FDT_BOOTARGS_MAX 256      /* including the terminating NUL */

#define FDT_MAGIC 0xd00dfeedu
#define FDT_HEADER_SIZE 40u

/* Error codes (negative). fdt_strerror() gives a one-line message. */
#define FDT_ERR_BADARG (-1)       /* NULL blob/out pointer */
#define FDT_ERR_TRUNCATED (-2)    /* buffer smaller than header or totalsize */
#define FDT_ERR_BADMAGIC (-3)
#define FDT_ERR_BADVERSION (-4)   /* version < 17 or last_comp_version > 17 */
#define FDT_ERR_BADLAYOUT (-5)    /* a block lies outside totalsize / misaligned */
#define FDT_ERR_BADRESVMAP (-6)   /* memory reservation block not terminated */
#define FDT_ERR_BADTOKEN (-7)     /* unknown structure token */
#define FDT_ERR_BADSTRUCT (-8)    /* unbalanced nodes, missing END, misplaced token */
#define FDT_ERR_BADNAME (-9)      /* node name not terminated inside the block */
#define FDT_ERR_BADPROP (-10)     /* property header/value past the structure block */
#define FDT_ERR_BADSTRING (-11)   /* property name offset outside the strings block */
#define FDT_ERR_DEPTH (-12)       /* nesting deeper than FDT_MAX_DEPTH */
#define FDT_ERR_TOOMANYTOKENS (-13)
#define FDT_ERR_TOOMANYMEM (-14)  /* more than FDT_MAX_MEM memory ranges */
#define FDT_ERR_TOOMANYRESV (-15) /* more than FDT_MAX_RESV reserved ranges */
#define FDT_ERR_BADVALUE (-16)    /* a property the kernel needs is malformed */
#define FDT_ERR_OVERFLOW (-17)    /* base + size wraps around 2^64 */
#define FDT_ERR_MIN (-17)

struct fdt_range {
    u64 base, size;
};

struct fdt_info {
    u32 totalsize;
    struct fdt_range mem[FDT_MAX_MEM];
    u32 n_mem;          /* /memory@... reg, honouring the parent's cells */
    struct fdt_range resv[FDT_MAX_RESV];
    u32 n_resv;         /* memreserve block + /reserved-memory children with reg */
    bool has_initrd;
    u64 initrd_start, initrd_end; /* /chosen linux,initrd-start/-end */
    char bootargs[FDT_BOOTARGS_MAX]; /* /chosen bootargs, "" if absent */
    u64 timebase_freq;  /* /cpus timebase-frequency (or on cpu@0); 0 if absent */
    bool has_sstc;      /* cpu@0 riscv,isa has "_sstc" or isa-extensions has "sstc" */
    struct fdt_range plic;
    u32 plic_ndev;      /* "riscv,plic0" / "sifive,plic-1.0.0": reg, riscv,ndev */
    struct fdt_range clint; /* "riscv,clint0" / "sifive,clint0" */
    struct fdt_range uart;
    u32 uart_irq;       /* "ns16550a" / "ns16550": reg, first interrupts cell */
    struct fdt_range rtc;
    u32 rtc_irq;        /* "google,goldfish-rtc" */
    struct fdt_range test_dev; /* "sifive,test0"/"sifive,test1", or "syscon" on test@... */
    u32 err_offset;     /* on error: byte offset in the blob where it was found */
};

/* Parse the DTB at blob, of which at most max_size bytes may be read.
 * Returns 0, or a negative FDT_ERR_*; on error *out is partially filled and
 * must not be used except err_offset. */
int fdt_parse(const void *blob, u64 max_size, struct fdt_info *out);

/* One-line message for err. For the most recent fdt_parse() failure it
 * carries the detail (offset, property name), e.g.
 * "bad structure token 0x7 at offset 312". */
const char *fdt_strerror(int err);

/* Header totalsize, or 0 if the magic is wrong. Reads the first 8 bytes of
 * blob only: lets the kernel learn how much to map/copy before parsing. */
u32 fdt_total_size(const void *blob);

#endif
