/*
 * Console over seL4_DebugPutChar, installed as picolibc's stdin/stdout/
 * stderr so that printf and friends work.
 */
#include <kairos/kairos.h>
#include <stdio.h>

void kairos_putchar(char c)
{
#ifdef CONFIG_PRINTING
    seL4_DebugPutChar(c);
#else
    (void)c;
#endif
}

void kairos_write(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        kairos_putchar(s[i]);
    }
}

void kairos_puts(const char *s)
{
    for (; *s != '\0'; s++) {
        kairos_putchar(*s);
    }
}

static int kairos_stdio_put(char c, FILE *f)
{
    (void)f;
    kairos_putchar(c);
    return (unsigned char)c;
}

static int kairos_stdio_get(FILE *f)
{
    (void)f;
    return _FDEV_EOF; /* no console input */
}

static FILE kairos_stdio = FDEV_SETUP_STREAM(kairos_stdio_put, kairos_stdio_get, NULL, _FDEV_SETUP_RW);

FILE *const stdin = &kairos_stdio;
FILE *const stdout = &kairos_stdio;
FILE *const stderr = &kairos_stdio;
