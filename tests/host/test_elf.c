/*
 * Host test driver for kernel/lib/elf.c (built with ASan+UBSan).
 *
 *   test_elf FILE USER_TOP [IMAGE_OUT]
 *     Parse FILE (held in a heap buffer of exactly its size, so any read
 *     past the end is an ASan report). On success print "ok", the entry,
 *     bounds and segments; with IMAGE_OUT, write the image from the page of
 *     the lowest vaddr to the page holding the highest end, each page made
 *     by elf_fill_page(), for tests/test_host_units.py to compare with the
 *     segment bytes. On failure print "error CODE MESSAGE".
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: test_elf FILE USER_TOP [IMAGE_OUT]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        perror(argv[1]);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(n > 0 ? (size_t)n : 1);
    if (data == NULL || fread(data, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "read failed\n");
        return 2;
    }
    fclose(f);
    u64 top = strtoull(argv[2], NULL, 0);

    struct elf_image img;
    int err = elf_parse(data, (u64)n, top, &img);
    const char *msg = elf_strerror(err);
    for (size_t i = 0; msg[i] != '\0'; i++) {
        if (msg[i] < 0x20 || msg[i] > 0x7e) {
            printf("FAIL unprintable message\n");
            return 1;
        }
    }
    if (err != 0) {
        printf("error %d %s\n", err, msg);
        free(data);
        return 0;
    }
    printf("ok entry=0x%llx nseg=%u low=0x%llx high=0x%llx\n", (unsigned long long)img.entry,
           img.n_seg, (unsigned long long)img.lowest_vaddr,
           (unsigned long long)img.highest_vaddr_end);
    for (u32 i = 0; i < img.n_seg; i++) {
        const struct elf_segment *s = &img.seg[i];
        printf("seg vaddr=0x%llx memsz=0x%llx offset=0x%llx filesz=0x%llx flags=%u\n",
               (unsigned long long)s->vaddr, (unsigned long long)s->memsz,
               (unsigned long long)s->offset, (unsigned long long)s->filesz, s->flags);
    }
    if (argc == 4) {
        FILE *o = fopen(argv[3], "wb");
        if (o == NULL) {
            perror(argv[3]);
            return 2;
        }
        u64 first = img.lowest_vaddr & ~(u64)4095;
        u64 last = (img.highest_vaddr_end - 1) & ~(u64)4095;
        unsigned char *page = malloc(4096);
        for (u64 p = first; p <= last; p += 4096) {
            /* Poison first: fill_page must write every byte. */
            memset(page, 0xa5, 4096);
            elf_fill_page(&img, data, p, page);
            fwrite(page, 1, 4096, o);
        }
        free(page);
        fclose(o);
    }
    free(data);
    return 0;
}
