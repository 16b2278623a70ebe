/*
 * Host test driver for kernel/lib/fdt.c (built with ASan+UBSan).
 *
 *   test_fdt dump FILE      parse FILE, print the extracted facts, one per
 *                           line, for tests/test_host_units.py to compare
 *                           with what dtc says about the same blob
 *   test_fdt fuzz FILE      parse many damaged copies of FILE (every
 *                           truncation, byte flips, random corruption); each
 *                           copy sits in a heap buffer of exactly the size
 *                           given to fdt_parse, so any read outside it is an
 *                           ASan report. Prints counts.
 *   test_fdt nest N         a blob with N nested nodes (checks the depth
 *                           limit); prints the result
 */
#include <fdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "read %s failed\n", path);
        exit(2);
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void print_range(const char *name, const struct fdt_range *r)
{
    printf("%s 0x%llx 0x%llx\n", name, (unsigned long long)r->base, (unsigned long long)r->size);
}

static int dump(const char *path)
{
    size_t len;
    unsigned char *blob = read_file(path, &len);
    /* Copy to a buffer of exactly totalsize so over-reads are caught. */
    u32 total = fdt_total_size(blob);
    if (total == 0 || total > len) {
        printf("error bad header\n");
        free(blob);
        return 1;
    }
    unsigned char *exact = malloc(total);
    memcpy(exact, blob, total);
    free(blob);
    struct fdt_info info;
    int err = fdt_parse(exact, total, &info);
    if (err != 0) {
        printf("error %d %s\n", err, fdt_strerror(err));
        free(exact);
        return 1;
    }
    printf("ok\n");
    printf("totalsize %u\n", info.totalsize);
    for (u32 i = 0; i < info.n_mem; i++) {
        print_range("mem", &info.mem[i]);
    }
    for (u32 i = 0; i < info.n_resv; i++) {
        print_range("resv", &info.resv[i]);
    }
    if (info.has_initrd) {
        printf("initrd 0x%llx 0x%llx\n", (unsigned long long)info.initrd_start,
               (unsigned long long)info.initrd_end);
    }
    printf("bootargs [%s]\n", info.bootargs);
    printf("timebase %llu\n", (unsigned long long)info.timebase_freq);
    printf("sstc %d\n", info.has_sstc ? 1 : 0);
    print_range("plic", &info.plic);
    printf("plic_ndev %u\n", info.plic_ndev);
    print_range("clint", &info.clint);
    print_range("uart", &info.uart);
    printf("uart_irq %u\n", info.uart_irq);
    print_range("rtc", &info.rtc);
    printf("rtc_irq %u\n", info.rtc_irq);
    print_range("test", &info.test_dev);
    free(exact);
    return 0;
}

/* Parse a heap copy of exactly n bytes of src (after mutation by caller). */
static int parse_copy(const unsigned char *src, size_t n, u64 max_size)
{
    unsigned char *buf = malloc(n ? n : 1);
    memcpy(buf, src, n);
    struct fdt_info info;
    int err = fdt_parse(buf, max_size, &info);
    /* The message must always be one printable line. */
    const char *msg = fdt_strerror(err);
    for (size_t i = 0; msg[i] != '\0'; i++) {
        if (msg[i] < 0x20 || msg[i] > 0x7e) {
            printf("FAIL unprintable error message for %d\n", err);
            exit(1);
        }
    }
    if (err != 0 && (err < FDT_ERR_MIN || err > -1)) {
        printf("FAIL error code %d out of range\n", err);
        exit(1);
    }
    free(buf);
    return err;
}

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;
static unsigned rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state >> 11);
}

static int fuzz(const char *path)
{
    size_t len;
    unsigned char *blob = read_file(path, &len);
    u32 total = fdt_total_size(blob);
    if (total == 0 || total > len) {
        printf("FAIL bad input blob\n");
        return 1;
    }
    long truncations = 0, flips = 0, randoms = 0, errors = 0;

    /* Every truncation must be refused (the header says totalsize). */
    for (size_t n = 0; n < total; n++) {
        int e = parse_copy(blob, n, n);
        if (e == 0) {
            printf("FAIL truncation to %zu bytes accepted\n", n);
            return 1;
        }
        truncations++;
    }
    /* Truncated buffer with a lying header: totalsize rewritten to n, so
     * the blocks stick out (must be a layout/structure error). */
    unsigned char *m = malloc(total);
    for (size_t n = 40; n < total; n += 7) {
        memcpy(m, blob, total);
        m[4] = (unsigned char)(n >> 24);
        m[5] = (unsigned char)(n >> 16);
        m[6] = (unsigned char)(n >> 8);
        m[7] = (unsigned char)n;
        if (parse_copy(m, n, n) == 0) {
            /* Possible only if nothing past n was needed: never for QEMU's
             * layout, where the strings block is last. */
            printf("FAIL lying totalsize %zu accepted\n", n);
            return 1;
        }
        truncations++;
    }
    /* Every byte, several xor patterns: anything may come back, but no
     * sanitizer report. */
    static const unsigned char pats[] = {0x01, 0x80, 0xff, 0x10};
    for (size_t i = 0; i < total; i++) {
        for (size_t k = 0; k < sizeof(pats); k++) {
            memcpy(m, blob, total);
            m[i] ^= pats[k];
            if (parse_copy(m, total, total) != 0) {
                errors++;
            }
            flips++;
        }
    }
    /* Random multi-byte corruption, including aligned 32-bit words set to
     * token values and huge lengths. */
    static const unsigned vals[] = {0, 1, 2, 3, 4, 9, 0xffffffffu, 0x7fffffffu, 40, 0x1000};
    for (int it = 0; it < 20000; it++) {
        memcpy(m, blob, total);
        int nmut = 1 + (int)(rnd() % 4);
        for (int j = 0; j < nmut; j++) {
            size_t at = (rnd() % (total / 4)) * 4;
            unsigned v = vals[rnd() % (sizeof(vals) / sizeof(vals[0]))];
            if (rnd() % 3 == 0) {
                m[rnd() % total] = (unsigned char)rnd();
            } else {
                m[at] = (unsigned char)(v >> 24);
                m[at + 1] = (unsigned char)(v >> 16);
                m[at + 2] = (unsigned char)(v >> 8);
                m[at + 3] = (unsigned char)v;
            }
        }
        if (parse_copy(m, total, total) != 0) {
            errors++;
        }
        randoms++;
    }
    /* A buffer larger than totalsize is fine; max_size smaller is not. */
    if (parse_copy(blob, total, total - 1) != FDT_ERR_TRUNCATED) {
        printf("FAIL max_size below totalsize not TRUNCATED\n");
        return 1;
    }
    /* NULL arguments. */
    struct fdt_info info;
    if (fdt_parse(NULL, 100, &info) != FDT_ERR_BADARG || fdt_parse(blob, total, NULL) !=
        FDT_ERR_BADARG) {
        printf("FAIL NULL not refused\n");
        return 1;
    }
    free(m);
    free(blob);
    printf("fuzz ok truncations=%ld flips=%ld randoms=%ld errors=%ld\n", truncations, flips,
           randoms, errors);
    return 0;
}

static void put32(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Build by hand: header, empty memreserve, N BEGIN_NODE "" ... N END_NODE,
 * END. Node names are empty strings (one NUL word). */
static int nest(int depth)
{
    /* Each level: BEGIN_NODE + one word of name (""), and one END_NODE. */
    size_t st = (size_t)depth * 12 + 4;
    size_t total = 40 + 16 + st + 4;
    unsigned char *b = calloc(1, total);
    put32(b + 0, FDT_MAGIC);
    put32(b + 4, (unsigned)total);
    put32(b + 8, 56);                   /* off_dt_struct */
    put32(b + 12, (unsigned)(56 + st)); /* off_dt_strings */
    put32(b + 16, 40);                  /* off_mem_rsvmap: one {0,0} entry */
    put32(b + 20, 17);                  /* version */
    put32(b + 24, 16);                  /* last_comp_version */
    put32(b + 32, 4);                   /* size_dt_strings */
    put32(b + 36, (unsigned)st);        /* size_dt_struct */
    unsigned char *p = b + 56;
    for (int i = 0; i < depth; i++) {
        put32(p, 1);
        put32(p + 4, 0);
        p += 8;
    }
    for (int i = 0; i < depth; i++) {
        put32(p, 2);
        p += 4;
    }
    put32(p, 9);
    struct fdt_info info;
    int err = fdt_parse(b, total, &info);
    printf("nest %d -> %d %s\n", depth, err, fdt_strerror(err));
    free(b);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "dump") == 0) {
        return dump(argv[2]);
    }
    if (argc == 3 && strcmp(argv[1], "fuzz") == 0) {
        return fuzz(argv[2]);
    }
    if (argc == 3 && strcmp(argv[1], "nest") == 0) {
        return nest(atoi(argv[2]));
    }
    fprintf(stderr, "usage: test_fdt dump|fuzz FILE | nest N\n");
    return 2;
}
