/*
 * Physical region arithmetic for boot (see regions.h).
 *
 * The set is a small sorted array, so every operation is a bounded scan over
 * at most REGION_MAX entries. Both mutating operations first work out the
 * result's size and fail before touching the set if it would not fit, so an
 * error never leaves a half-updated set.
 */
#include <regions.h>
#include <string.h>

static bool set_ok(const struct region_set *s)
{
    return s != NULL && s->n <= REGION_MAX;
}

int region_add(struct region_set *s, u64 base, u64 end)
{
    if (!set_ok(s) || base > end) {
        return REGION_ERR_BADARG;
    }
    if (base == end) {
        return 0;
    }
    /* Ranges [first, last) of the array overlap or touch [base, end): they
     * are all merged with it into one. The array is sorted, so they are
     * contiguous: first = first range with r.end >= base, last = first range
     * with r.base > end. */
    u32 first = 0;
    while (first < s->n && s->r[first].end < base) {
        first++;
    }
    u32 last = first;
    while (last < s->n && s->r[last].base <= end) {
        last++;
    }
    if (first == last) {
        /* Nothing to merge with: insert a new range at index first. */
        if (s->n >= REGION_MAX) {
            return REGION_ERR_FULL;
        }
        memmove(&s->r[first + 1], &s->r[first], (s->n - first) * sizeof(s->r[0]));
        s->r[first].base = base;
        s->r[first].end = end;
        s->n++;
        return 0;
    }
    u64 nb = s->r[first].base < base ? s->r[first].base : base;
    u64 ne = s->r[last - 1].end > end ? s->r[last - 1].end : end;
    s->r[first].base = nb;
    s->r[first].end = ne;
    /* Close the gap left by the ranges [first + 1, last) absorbed above. */
    u32 removed = last - first - 1;
    memmove(&s->r[first + 1], &s->r[last], (s->n - last) * sizeof(s->r[0]));
    s->n -= removed;
    return 0;
}

int region_remove(struct region_set *s, u64 base, u64 end)
{
    if (!set_ok(s) || base > end) {
        return REGION_ERR_BADARG;
    }
    if (base == end) {
        return 0;
    }
    /* Ranges [first, last) intersect [base, end) (touching is not enough). */
    u32 first = 0;
    while (first < s->n && s->r[first].end <= base) {
        first++;
    }
    u32 last = first;
    while (last < s->n && s->r[last].base < end) {
        last++;
    }
    if (first == last) {
        return 0;
    }
    /* What survives: a head of r[first] below base, a tail of r[last-1]
     * above end. Everything between disappears. */
    bool head = s->r[first].base < base;
    bool tail = s->r[last - 1].end > end;
    u32 keep = (head ? 1u : 0u) + (tail ? 1u : 0u);
    u32 gone = last - first;
    if (keep > gone && s->n + (keep - gone) > REGION_MAX) {
        return REGION_ERR_FULL; /* only a split (keep 2, gone 1) grows the set */
    }
    struct region h = {s->r[first].base, base};
    struct region t = {end, s->r[last - 1].end};
    /* Move the ranges after last to their final place, then write the
     * surviving pieces in front of them. */
    memmove(&s->r[first + keep], &s->r[last], (s->n - last) * sizeof(s->r[0]));
    s->n = s->n - gone + keep;
    u32 at = first;
    if (head) {
        s->r[at++] = h;
    }
    if (tail) {
        s->r[at] = t;
    }
    return 0;
}

/* floor(log2(x)) for x > 0. Written out rather than __builtin_clzll: on
 * RISC-V without Zbb that becomes a libgcc call the kernel does not link. */
static u32 log2_floor(u64 x)
{
    u32 r = 0;
    for (u32 i = 32; i > 0; i >>= 1) { /* binary search: 6 steps */
        if (x >> i) {
            x >>= i;
            r += i;
        }
    }
    return r;
}

/* Number of trailing zero bits of x > 0. */
static u32 ctz64(u64 x)
{
    u32 r = 0;
    for (u32 i = 32; i > 0; i >>= 1) {
        if ((x & (((u64)1 << i) - 1)) == 0) {
            x >>= i;
            r += i;
        }
    }
    return r;
}

/* One step of seL4's cut at start (start < end): the size of the piece. */
static u32 piece_bits(u64 start, u64 end, u32 max_bits)
{
    u32 bits = log2_floor(end - start);
    if (bits > max_bits) {
        bits = max_bits;
    }
    /* Start 0 is aligned to everything. */
    if (start != 0 && ctz64(start) < bits) {
        bits = ctz64(start);
    }
    return bits;
}

u32 region_cut_untypeds(u64 base, u64 end, u32 min_bits, u32 max_bits, struct untyped_piece *out,
                        u32 max, bool *truncated)
{
    u32 n = 0;
    if (truncated != NULL) {
        *truncated = false;
    }
    if (base > end || min_bits > max_bits || max_bits > 63 || (out == NULL && max > 0)) {
        return 0;
    }
    /*
     * Termination: a dropped piece (bits < min_bits) is either limited by
     * the alignment of start, after which ctz(start) strictly grows, or by
     * the remaining length, after which floor(log2(remaining)) strictly
     * shrinks; so at most 2 * 64 pieces are dropped. Every other step emits
     * a piece, and emitting stops at max. Hence the explicit bound below.
     */
    u64 start = base;
    u64 bound = (u64)max + 2 * 64 + 2;
    for (u64 step = 0; step < bound && start < end; step++) {
        u32 bits = piece_bits(start, end, max_bits);
        if (bits >= min_bits) {
            if (n >= max) {
                /* Full: seL4 would have dropped this one silently. */
                if (truncated != NULL) {
                    *truncated = true;
                }
                break;
            }
            out[n].paddr = start;
            out[n].size_bits = (u8)bits;
            n++;
        }
        u64 next = start + ((u64)1 << bits);
        if (next <= start) {
            break; /* the piece ended at 2^64: nothing remains */
        }
        start = next;
    }
    return n;
}
