/*
 * Host test for kernel/lib/regions.c (built with ASan+UBSan).
 *
 * region_add/region_remove: random operations on a small address space
 * [0, SPACE) compared with a byte-per-address bitmap model after every step
 * (the set must equal the bitmap's runs: sorted, disjoint, non-adjacent), and
 * a FULL error must leave the set unchanged and happen exactly when the
 * bitmap's run count would exceed REGION_MAX. Plus edge cases near 2^64.
 *
 * region_cut_untypeds: compared with a direct transcription of seL4's loop
 * (unbounded output) over exhaustive small ranges and random large ones,
 * and checked for natural alignment, disjointness and coverage.
 *
 * Prints "regions ok ..." with counts, or "FAIL ..." and exits 1.
 */
#include <regions.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPACE 600

static unsigned long long rng_state = 0x2545f4914f6cdd1dull;
static u64 rnd64(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void fail(const char *what, long iter)
{
    printf("FAIL %s at iteration %ld\n", what, iter);
    exit(1);
}

/* Runs of the bitmap as regions; returns the count (may exceed REGION_MAX). */
static u32 runs(const unsigned char *bm, struct region *out, u32 cap)
{
    u32 n = 0;
    for (u32 i = 0; i < SPACE;) {
        if (!bm[i]) {
            i++;
            continue;
        }
        u32 j = i;
        while (j < SPACE && bm[j]) {
            j++;
        }
        if (n < cap) {
            out[n].base = i;
            out[n].end = j;
        }
        n++;
        i = j;
    }
    return n;
}

static void check_set(const struct region_set *s, const unsigned char *bm, long it)
{
    static struct region want[SPACE];
    u32 n = runs(bm, want, SPACE);
    if (s->n != n) {
        fail("region count differs from model", it);
    }
    for (u32 i = 0; i < n; i++) {
        if (s->r[i].base != want[i].base || s->r[i].end != want[i].end) {
            fail("region differs from model", it);
        }
    }
}

static void test_sets(long *ops, long *fulls)
{
    for (int round = 0; round < 100; round++) {
        struct region_set s;
        memset(&s, 0, sizeof(s));
        unsigned char bm[SPACE];
        memset(bm, 0, sizeof(bm));
        for (long it = 0; it < 1500; it++) {
            u64 a = rnd64() % (SPACE + 1), b = rnd64() % (SPACE + 1);
            /* Mostly short ranges so that many runs (and FULL) happen. */
            if (rnd64() % 40 != 0) {
                b = a + rnd64() % 4;
                if (b > SPACE) {
                    b = SPACE;
                }
            }
            if (a > b) {
                u64 t = a;
                a = b;
                b = t;
            }
            bool add = rnd64() % 3 != 0;
            unsigned char nbm[SPACE];
            memcpy(nbm, bm, sizeof(bm));
            for (u64 x = a; x < b; x++) {
                nbm[x] = add ? 1 : 0;
            }
            static struct region tmp[SPACE];
            u32 need = runs(nbm, tmp, SPACE);
            struct region_set before = s;
            int e = add ? region_add(&s, a, b) : region_remove(&s, a, b);
            (*ops)++;
            if (need > REGION_MAX) {
                if (e != REGION_ERR_FULL) {
                    fail("expected REGION_ERR_FULL", it);
                }
                if (memcmp(&before, &s, sizeof(s)) != 0) {
                    fail("FULL error modified the set", it);
                }
                (*fulls)++;
            } else {
                if (e != 0) {
                    fail("unexpected error", it);
                }
                memcpy(bm, nbm, sizeof(bm));
            }
            check_set(&s, bm, it);
        }
    }
}

static void test_edges(void)
{
    struct region_set s;
    memset(&s, 0, sizeof(s));
    const u64 top = ~(u64)0;
    if (region_add(&s, 5, 4) != REGION_ERR_BADARG || region_remove(&s, 5, 4) != REGION_ERR_BADARG)
        fail("base > end accepted", 0);
    if (region_add(NULL, 0, 1) != REGION_ERR_BADARG)
        fail("NULL accepted", 0);
    if (region_add(&s, 7, 7) != 0 || s.n != 0)
        fail("empty add not a no-op", 0);
    if (region_add(&s, top - 10, top) != 0 || region_add(&s, 0, 10) != 0 || s.n != 2)
        fail("extreme add", 0);
    if (region_add(&s, 10, top - 10) != 0 || s.n != 1 || s.r[0].base != 0 || s.r[0].end != top)
        fail("adjacent ranges not merged", 0);
    if (region_remove(&s, 0x80000000ull, 0x80200000ull) != 0 || s.n != 2 ||
        s.r[0].end != 0x80000000ull || s.r[1].base != 0x80200000ull)
        fail("split", 0);
    if (region_remove(&s, 0, top) != 0 || s.n != 0)
        fail("remove all", 0);
    struct region_set bad;
    memset(&bad, 0, sizeof(bad));
    bad.n = REGION_MAX + 1;
    if (region_add(&bad, 0, 1) != REGION_ERR_BADARG || region_remove(&bad, 0, 1) != REGION_ERR_BADARG)
        fail("corrupt set accepted", 0);
}

/* seL4 create_untypeds_for_region, transcribed with compiler builtins.
 * Returns the number of pieces, or cap + 1 if there are more than cap. */
static u32 ref_cut(u64 start, u64 end, u32 minb, u32 maxb, struct untyped_piece *out, u32 cap)
{
    u32 n = 0;
    while (start < end) {
        u32 bits = 63 - (u32)__builtin_clzll(end - start);
        if (bits > maxb)
            bits = maxb;
        if (start != 0 && (u32)__builtin_ctzll(start) < bits)
            bits = (u32)__builtin_ctzll(start);
        if (bits >= minb) {
            if (n < cap) {
                out[n].paddr = start;
                out[n].size_bits = (u8)bits;
            }
            n++;
            /* One more than cap is enough to see truncation; going on could
             * mean 2^34 pieces for a huge range with max_bits 30. */
            if (n > cap)
                break;
        }
        u64 next = start + ((u64)1 << bits);
        if (next <= start)
            break;
        start = next;
    }
    return n;
}

static void check_cut(u64 base, u64 end, u32 minb, u32 maxb, u32 max, long it)
{
    static struct untyped_piece got[300], want[300];
    bool trunc = true;
    u32 n = region_cut_untypeds(base, end, minb, maxb, got, max, &trunc);
    u32 wn = ref_cut(base, end, minb, maxb, want, 299);
    u32 expect = wn < max ? wn : max;
    if (n != expect)
        fail("cut count differs from seL4 transcription", it);
    if (trunc != (wn > max))
        fail("truncated flag wrong", it);
    u64 prev_end = base;
    for (u32 i = 0; i < n; i++) {
        u64 sz = (u64)1 << got[i].size_bits;
        if (got[i].paddr != want[i].paddr || got[i].size_bits != want[i].size_bits) {
            printf("base=0x%llx end=0x%llx min=%u max_bits=%u max=%u piece %u: got 0x%llx/%u want 0x%llx/%u\n",
                   (unsigned long long)base, (unsigned long long)end, minb, maxb, max, i,
                   (unsigned long long)got[i].paddr, got[i].size_bits,
                   (unsigned long long)want[i].paddr, want[i].size_bits);
            fail("cut piece differs", it);
        }
        if (got[i].size_bits < minb || got[i].size_bits > maxb)
            fail("piece size out of bounds", it);
        if (got[i].paddr & (sz - 1))
            fail("piece not naturally aligned", it);
        if (got[i].paddr < prev_end || got[i].paddr + sz - 1 > end - 1)
            fail("piece overlaps or leaves the range", it);
        prev_end = got[i].paddr + sz;
    }
    /* Coverage: with min_bits 0 nothing is dropped, so pieces tile the range
     * (unless truncated). */
    if (minb == 0 && wn <= max) {
        u64 sum = 0;
        for (u32 i = 0; i < n; i++)
            sum += (u64)1 << got[i].size_bits;
        if (sum != end - base)
            fail("pieces do not tile the range", it);
    }
}

int main(void)
{
    long ops = 0, fulls = 0, cuts = 0;
    test_sets(&ops, &fulls);
    if (fulls == 0)
        fail("model test never reached REGION_MAX", 0);
    test_edges();

    /* Exhaustive small ranges. */
    for (u64 b = 0; b < 96; b++)
        for (u64 e = b; e < 160; e++)
            for (u32 minb = 0; minb < 6; minb++) {
                check_cut(b, e, minb, 7, 300, cuts++);
                check_cut(b, e, minb, 5, 3, cuts++);
            }
    /* Random large ranges, seL4 parameters (4..38) and others. */
    for (long it = 0; it < 200000; it++) {
        u64 a = rnd64(), b = rnd64();
        int shape = (int)(rnd64() % 4);
        if (shape == 0) {
            a >>= rnd64() % 64;
            b >>= rnd64() % 64;
        } else if (shape == 1) {
            b = a + (rnd64() >> (rnd64() % 64));
            if (b < a)
                b = ~(u64)0;
        } else if (shape == 2) {
            a &= ~(((u64)1 << (rnd64() % 40)) - 1);
            b = a + (rnd64() % ((u64)1 << 40));
            if (b < a)
                b = ~(u64)0;
        }
        if (a > b) {
            u64 t = a;
            a = b;
            b = t;
        }
        u32 minb = 4, maxb = 38;
        if (rnd64() % 3 == 0) {
            minb = (u32)(rnd64() % 40);
            maxb = minb + (u32)(rnd64() % (64 - minb));
        }
        u32 max = (rnd64() % 4 == 0) ? (u32)(rnd64() % 8) : 230;
        check_cut(a, b, minb, maxb, max, cuts++);
    }
    /* Specific seL4-like cases. */
    struct untyped_piece p[8];
    bool tr;
    /* 3 GiB RAM from 0x80200000: the 1 GiB block at 0xC0000000 is one piece. */
    u32 n = region_cut_untypeds(0xc0000000ull, 0x140000000ull, 4, 38, p, 8, &tr);
    if (n != 2 || p[0].paddr != 0xc0000000ull || p[0].size_bits != 30 || tr)
        fail("1 GiB block", 0);
    /* Firmware [0x80000000, 0x80200000): one 21-bit device untyped. */
    n = region_cut_untypeds(0x80000000ull, 0x80200000ull, 4, 38, p, 8, &tr);
    if (n != 1 || p[0].size_bits != 21)
        fail("firmware piece", 0);
    /* Device space below RAM starts with 0x0, 25 bits (up to 0x2000000). */
    n = region_cut_untypeds(0, 0x2000000ull, 4, 38, p, 8, &tr);
    if (n != 1 || p[0].paddr != 0 || p[0].size_bits != 25)
        fail("0x0 25 bits", 0);
    /* Bad arguments give nothing. */
    if (region_cut_untypeds(10, 5, 4, 38, p, 8, &tr) != 0 ||
        region_cut_untypeds(0, 100, 9, 8, p, 8, &tr) != 0 ||
        region_cut_untypeds(0, 100, 4, 64, p, 8, &tr) != 0 ||
        region_cut_untypeds(0, 100, 4, 38, NULL, 8, &tr) != 0)
        fail("bad arguments", 0);
    /* truncated may be NULL; max 0 emits nothing. */
    if (region_cut_untypeds(0, 4096, 4, 38, NULL, 0, NULL) != 0)
        fail("max 0", 0);
    printf("regions ok ops=%ld fulls=%ld cuts=%ld\n", ops, fulls, cuts);
    return 0;
}
