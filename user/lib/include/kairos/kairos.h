/*
 * Kairos user runtime: what a root task built with user/lib gets besides
 * the seL4 API (<sel4/sel4.h>).
 */
#ifndef KAIROS_KAIROS_H
#define KAIROS_KAIROS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sel4/sel4.h>
#include <kairos/debug_calls.h> /* kernel/include/uapi: call numbers, counter ids */
#include <kairos/limits.h>      /* kernel/include/uapi: system parameters */

/* ---- runtime ------------------------------------------------------- */

/* The BootInfo the kernel passed in a0 (valid from main() on). */
seL4_BootInfo *kairos_bootinfo(void);

/* False once the 64 KiB initial stack has overflowed into its last
 * 64 bytes (a canary written at start-up). */
bool kairos_stack_intact(void);

/* Stop the calling root task the way seL4 programs do: suspend its own
 * TCB (seL4_CapInitThreadTCB); if that ever returns, yield forever. */
__attribute__((noreturn)) void kairos_suspend_self(void);

/* Report the outcome of a Kairos-owned root task and power off:
 * prints "kairos-result: PASS" or "kairos-result: FAIL (<reason>)" on
 * its own line, then seL4_DebugHalt().  Never returns. */
__attribute__((noreturn)) void kairos_exit(bool pass, const char *reason);

/* ---- Kairos system parameters --------------------------------------- */

/* KAIROS_MAX_REFILLS, the most refills a scheduling context may hold, is
 * in <kairos/limits.h> (included above), shared with the kernel. */

/* The largest extra_refills ConfigureFlags accepts for a context of
 * 2^size_bits bytes on Kairos: seL4's limit, capped by KAIROS_MAX_REFILLS. */
static inline seL4_Word kairos_max_extra_refills(seL4_Word size_bits)
{
    seL4_Word extra = seL4_MaxExtraRefills(size_bits);
    return extra < KAIROS_MAX_REFILLS - 2 ? extra : KAIROS_MAX_REFILLS - 2;
}

/* ---- Kairos kernel counters (debug builds only) ----------------------- */

/* Read one of the kernel's debug counters with Kairos's debug-only system
 * call (a7 = KAIROS_SYS_DEBUG_COUNTER, a0 = counter id, value returned in a0; docs/kernel.md).
 * An seL4 kernel would treat the call as an unknown system call. */
seL4_Word kairos_debug_counter(seL4_Word id);

/* Counter ids: KAIROS_COUNTER_* in <kairos/debug_calls.h>. */

/* Turn the IPC fastpath on (true) or off (false) for every later system
 * call; returns whether it was on. Debug builds only (a7 = KAIROS_SYS_DEBUG_FASTPATH); an seL4
 * kernel would treat it as an unknown system call. The boot argument
 * "fastpath=off" starts the kernel with it off (docs/ipc.md "Fastpath"). */
bool kairos_debug_set_fastpath(bool on);

/* ---- console (seL4_DebugPutChar) ------------------------------------ */

void kairos_putchar(char c);
void kairos_write(const char *s, size_t n);
void kairos_puts(const char *s); /* no newline added */

/* ---- extra BootInfo ------------------------------------------------ */

/* First extra-BootInfo record with this id (SEL4_BOOTINFO_HEADER_*),
 * or NULL.  The walk stops at a record with len < 16 or one that runs
 * past extraLen. */
const seL4_BootInfoHeader *kairos_bootinfo_find(const seL4_BootInfo *bi, seL4_Word id);

/* The device tree from the extra BootInfo (record id 6), or NULL.
 * *size (if non-NULL) receives the payload length (len - 16). */
const void *kairos_bootinfo_fdt(const seL4_BootInfo *bi, size_t *size);

/* ---- flattened device tree (read-only) ------------------------------ */

typedef struct {
    uint64_t base;
    uint64_t size;
} kairos_mem_region_t;

/* 0 if `fdt` has a valid header and fits in `size` bytes (size 0: trust
 * the header's totalsize), negative otherwise. */
int kairos_fdt_check(const void *fdt, size_t size);

/* The header's totalsize. */
uint32_t kairos_fdt_totalsize(const void *fdt);

/* Value of property `prop` of the first node matching `path`
 * (e.g. "/chosen", "/memory"; a component without "@unit" matches
 * a node name with any unit address).  NULL if absent. */
const void *kairos_fdt_getprop(const void *fdt, const char *path, const char *prop,
                               uint32_t *len);

/* Calls fn for every property of every node: node path (e.g.
 * "/soc/serial@10000000"), property name, value, length.  Returning
 * non-zero from fn stops the walk and is returned. */
typedef int (*kairos_fdt_prop_fn)(const char *path, const char *prop, const void *val,
                                  uint32_t len, void *ctx);
int kairos_fdt_walk(const void *fdt, kairos_fdt_prop_fn fn, void *ctx);

/* Big-endian cell access. */
uint32_t kairos_fdt32(const void *p);
/* Read `cells` (1 or 2) cells at p as one number. */
uint64_t kairos_fdt_cells(const void *p, uint32_t cells);

/* The reg ranges of every /memory node (root #address-cells and
 * #size-cells honoured).  Returns the number of ranges found (may
 * exceed max; only max are stored). */
int kairos_fdt_memory(const void *fdt, kairos_mem_region_t *out, int max);

/* /chosen/bootargs of the device tree, or NULL. */
const char *kairos_fdt_bootargs(const void *fdt);

/* Bootargs of the device tree in this root task's BootInfo ("" if none). */
const char *kairos_bootargs(void);

/* Value of "key=value" in a space-separated argument string; copies the
 * value into buf (NUL-terminated, cut to bufsize).  Returns true if the
 * key is present. */
bool kairos_arg_get(const char *args, const char *key, char *buf, size_t bufsize);

#endif /* KAIROS_KAIROS_H */
