/*
 * Kernel memory and string helpers. The kernel has no libc, so it provides
 * these itself (kernel/lib/string.c). The prototypes are exactly the standard
 * ones so that code using them also compiles against a host libc (the host
 * unit tests build the kernel's parsers with libc's implementations).
 */
#ifndef KAIROS_STRING_H
#define KAIROS_STRING_H

#include <stddef.h>

void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

/* Not libc: eight words from s to d, all read before any is written, out
 * of line for the WCET analysis (kernel/lib/string.c). */
void copy_8_words(unsigned long *d, const unsigned long *s);

#endif
