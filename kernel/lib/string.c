/*
 * Freestanding implementations of the few libc memory/string functions the
 * kernel uses. GCC emits calls to memset/memcpy on its own (structure copies,
 * zero-initialisation), so these must exist under the standard names.
 *
 * They are byte-wise except for one case that matters: whole aligned words,
 * which is how the kernel zeroes objects, frames and untyped memory (a
 * byte-wise loop made boot eight times slower).
 */
#include <stdint.h>
#include <string.h>

/*
 * GCC may recognise the loops below as "a memset" and replace them with a
 * call to memset itself, which would recurse forever. Forbid that pattern
 * replacement for this file.
 */
#if defined(__GNUC__) && !defined(__clang__)
#define NO_LOOP_PATTERNS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define NO_LOOP_PATTERNS
#endif

NO_LOOP_PATTERNS void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    if ((((uintptr_t)dst | n) & 7u) == 0) {
        unsigned long word = (unsigned char)c * 0x0101010101010101ul;
        unsigned long *w = dst;
        for (size_t i = 0; i < n / 8; i++) {
            w[i] = word;
        }
        return dst;
    }
    for (size_t i = 0; i < n; i++) {
        d[i] = (unsigned char)c;
    }
    return dst;
}

NO_LOOP_PATTERNS void *memcpy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if ((((uintptr_t)dst | (uintptr_t)src | n) & 7u) == 0) {
        unsigned long *wd = dst;
        const unsigned long *ws = src;
        for (size_t i = 0; i < n / 8; i++) {
            wd[i] = ws[i];
        }
        return dst;
    }
    for (size_t i = 0; i < n; i++) {
        d[i] = s[i];
    }
    return dst;
}

NO_LOOP_PATTERNS void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d == s || n == 0) {
        return dst;
    }
    if (d < s) {
        /* Forward copy is safe: every source byte is read before it can be
         * overwritten. */
        for (size_t i = 0; i < n; i++) {
            d[i] = s[i];
        }
    } else {
        /* Destination above source: copy from the top down. */
        for (size_t i = n; i > 0; i--) {
            d[i - 1] = s[i - 1];
        }
    }
    return dst;
}

NO_LOOP_PATTERNS int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a;
    const unsigned char *y = b;
    for (size_t i = 0; i < n; i++) {
        if (x[i] != y[i]) {
            return (int)x[i] - (int)y[i];
        }
    }
    return 0;
}

NO_LOOP_PATTERNS size_t strlen(const char *s)
{
    size_t n = 0;
    /* Unbounded by nature: callers only pass strings they know are
     * terminated (kernel literals or buffers already checked). */
    while (s[n] != '\0') {
        n++;
    }
    return n;
}

NO_LOOP_PATTERNS int strcmp(const char *a, const char *b)
{
    size_t i = 0;
    while (a[i] != '\0' && a[i] == b[i]) {
        i++;
    }
    return (int)(unsigned char)a[i] - (int)(unsigned char)b[i];
}

NO_LOOP_PATTERNS int strncmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i] != b[i] || a[i] == '\0') {
            return (int)(unsigned char)a[i] - (int)(unsigned char)b[i];
        }
    }
    return 0;
}

/* Copy eight words from s to d: all eight read, then all eight written.
 * Out of line on purpose: for the WCET analysis each call's s and d are
 * new pointers, and each run of eight accesses touches at most two lines
 * of its buffer (one if it is line-aligned), and a refill of the other
 * buffer's lines can only come after the reads it would disturb
 * (docs/processor-model.md §3 "Symbolic lines"). Inlined in a loop, the
 * pointers would be induction variables, charged a miss per word
 * (docs/wcet.md "Interrupt latency"). The two runs must be the same or
 * disjoint. Used for IPC messages (endpoint.c) and the kernel half of a
 * new root page table (arch/riscv/vspace.c). */
__attribute__((noinline)) void copy_8_words(unsigned long *d, const unsigned long *s)
{
    unsigned long w0 = s[0], w1 = s[1], w2 = s[2], w3 = s[3], w4 = s[4], w5 = s[5], w6 = s[6], w7 = s[7];
    d[0] = w0;
    d[1] = w1;
    d[2] = w2;
    d[3] = w3;
    d[4] = w4;
    d[5] = w5;
    d[6] = w6;
    d[7] = w7;
}
