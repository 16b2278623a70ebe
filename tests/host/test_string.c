/*
 * Host test for kernel/lib/string.c. The kernel file is compiled with its
 * functions renamed (-Dmemset=k_memset ...) so it can be compared with the
 * host libc in one program. Random sizes, offsets and contents; overlapping
 * memmove both ways. Prints "string ok N" or "FAIL ..." and exits 1.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *k_memset(void *dst, int c, size_t n);
void *k_memcpy(void *dst, const void *src, size_t n);
void *k_memmove(void *dst, const void *src, size_t n);
int k_memcmp(const void *a, const void *b, size_t n);
size_t k_strlen(const char *s);
int k_strcmp(const char *a, const char *b);
int k_strncmp(const char *a, const char *b, size_t n);

static int sign(int x)
{
    return (x > 0) - (x < 0);
}

static void fail(const char *what, int it)
{
    printf("FAIL %s at iteration %d\n", what, it);
    exit(1);
}

int main(void)
{
    enum { N = 256 };
    unsigned char a[N], b[N], c[N], d[N];
    srand(12345);
    int it;
    for (it = 0; it < 100000; it++) {
        for (int i = 0; i < N; i++) {
            a[i] = (unsigned char)rand();
            b[i] = (unsigned char)(rand() % 4); /* small alphabet: equal runs */
        }
        size_t off = (size_t)rand() % 64, off2 = (size_t)rand() % 64;
        size_t n = (size_t)rand() % (N - 64);
        int v = rand();

        memcpy(c, a, N);
        memcpy(d, a, N);
        if (k_memset(c + off, v, n) != c + off)
            fail("memset return", it);
        memset(d + off, v, n);
        if (memcmp(c, d, N) != 0)
            fail("memset", it);

        memcpy(c, a, N);
        memcpy(d, a, N);
        if (k_memcpy(c + off, b + off2, n) != c + off)
            fail("memcpy return", it);
        memcpy(d + off, b + off2, n);
        if (memcmp(c, d, N) != 0)
            fail("memcpy", it);

        memcpy(c, a, N);
        memcpy(d, a, N);
        if (k_memmove(c + off, c + off2, n) != c + off)
            fail("memmove return", it);
        memmove(d + off, d + off2, n);
        if (memcmp(c, d, N) != 0)
            fail("memmove", it);

        if (sign(k_memcmp(b, b + off, n)) != sign(memcmp(b, b + off, n)))
            fail("memcmp", it);

        /* Strings over the small alphabet, terminated by a 0 byte. */
        char s1[N], s2[N];
        for (int i = 0; i < N; i++) {
            s1[i] = (char)('a' + rand() % 2);
            s2[i] = (char)('a' + rand() % 2);
        }
        s1[rand() % N] = 0;
        s2[rand() % N] = 0;
        s1[N - 1] = s2[N - 1] = 0;
        if (rand() % 2)
            memcpy(s2, s1, N);
        if (k_strlen(s1) != strlen(s1))
            fail("strlen", it);
        if (sign(k_strcmp(s1, s2)) != sign(strcmp(s1, s2)))
            fail("strcmp", it);
        if (sign(k_strncmp(s1, s2, n)) != sign(strncmp(s1, s2, n)))
            fail("strncmp", it);
    }
    /* Bytes above 0x7f compare as unsigned. */
    if (k_strcmp("\xff", "a") <= 0 || k_memcmp("\x80", "\x01", 1) <= 0)
        fail("unsigned compare", it);
    printf("string ok %d\n", it);
    return 0;
}
