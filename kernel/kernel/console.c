/* Kernel console output: a small printf over the platform's character output.
 * Used for boot messages, fault reports and the debug system calls. */
#include <arch/machine.h>
#include <kernel.h>
#include <stdarg.h>

void kputc(char c)
{
    if (c == '\n')
        machine_putc('\r');
    machine_putc(c);
}

void kputs(const char *s)
{
    while (*s)
        kputc(*s++);
}

/* Digits of v in the given base, most significant first, padded to width. */
static void put_number(u64 v, unsigned base, int width, char pad, bool negative)
{
    char buf[24];
    int n = 0;
    do {
        unsigned d = (unsigned)(v % base);
        buf[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
        v /= base;
    } while (v != 0 && n < (int)sizeof(buf));
    if (negative)
        kputc('-');
    for (int i = n; i < width; i++)
        kputc(pad);
    while (n > 0)
        kputc(buf[--n]);
}

void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            kputc(*p);
            continue;
        }
        p++;
        char pad = ' ';
        int width = 0;
        int longs = 0;
        if (*p == '0') {
            pad = '0';
            p++;
        }
        while (*p >= '0' && *p <= '9')
            width = width * 10 + (*p++ - '0');
        while (*p == 'l') {
            longs++;
            p++;
        }
        switch (*p) {
        case 'd': {
            s64 v = longs ? va_arg(ap, long) : va_arg(ap, int);
            put_number(v < 0 ? (u64)(-v) : (u64)v, 10, width, pad, v < 0);
            break;
        }
        case 'u':
            put_number(longs ? va_arg(ap, unsigned long) : va_arg(ap, unsigned), 10, width, pad, false);
            break;
        case 'x':
            put_number(longs ? va_arg(ap, unsigned long) : va_arg(ap, unsigned), 16, width, pad, false);
            break;
        case 'p':
            kputs("0x");
            put_number((u64)va_arg(ap, void *), 16, 16, '0', false);
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            kputs(s ? s : "(null)");
            break;
        }
        case 'c':
            kputc((char)va_arg(ap, int));
            break;
        case '%':
            kputc('%');
            break;
        case '\0':
            p--;
            break;
        default:
            kputc('%');
            kputc(*p);
            break;
        }
    }
    va_end(ap);
}

void kernel_panic(const char *file, int line, const char *msg)
{
    kprintf("\nKAIROS PANIC at %s:%d: %s\n", file, line, msg);
    kernel_halt(true);
}

void kernel_halt(bool failure)
{
    machine_power_off(failure);
}
