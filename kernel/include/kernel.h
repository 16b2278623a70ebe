/* Kernel-wide helpers: printing, panics, assertions. */
#ifndef KAIROS_KERNEL_H
#define KAIROS_KERNEL_H

#include <config.h>
#include <types.h>

void kputc(char c);
void kputs(const char *s);
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
NORETURN void kernel_halt(bool failure);
NORETURN void kernel_panic(const char *file, int line, const char *msg);

#define panic(msg) kernel_panic(__FILE__, __LINE__, (msg))
#define kassert(c)                               \
    do {                                         \
        if (unlikely(!(c)))                      \
            kernel_panic(__FILE__, __LINE__, #c); \
    } while (0)

/* Printing exists only in the debug and check flavours. */
#if CONFIG_PRINTING
#define debug_printf(...) kprintf(__VA_ARGS__)
#else
#define debug_printf(...) ((void)0)
#endif

#endif
