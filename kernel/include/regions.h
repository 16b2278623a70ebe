/*
 * Boot-time physical region arithmetic.
 *
 * The kernel computes the memory it hands out as untypeds by starting from
 * the RAM banks of the device tree and removing what is reserved (firmware,
 * kernel image, DTB, initrd, root task). A region_set keeps [base, end)
 * ranges sorted, disjoint and non-adjacent (touching ranges are merged), in
 * a fixed array: no allocation at boot.
 *
 * region_cut_untypeds() reproduces seL4's cut of a free range into naturally
 * aligned untyped objects, so the BootInfo untyped list looks like seL4's.
 */
#ifndef KAIROS_REGIONS_H
#define KAIROS_REGIONS_H

#include <types.h>

#define REGION_MAX 64

#define REGION_ERR_BADARG (-1) /* NULL set, base > end, or a corrupt set (n > REGION_MAX) */
#define REGION_ERR_FULL (-2)   /* the result would need more than REGION_MAX ranges;
                                  the set is left unchanged */

struct region {
    u64 base, end; /* [base, end) */
};

struct region_set {
    struct region r[REGION_MAX];
    u32 n;
}; /* sorted, disjoint, non-adjacent merged */

/* Union with [base, end). base == end is a no-op. Returns 0 or REGION_ERR_*. */
int region_add(struct region_set *s, u64 base, u64 end);

/* Subtract [base, end) (may split a range in two). Returns 0 or REGION_ERR_*. */
int region_remove(struct region_set *s, u64 base, u64 end);

/* seL4's greedy cut of [base, end) into naturally aligned untypeds: at the
 * current start, size_bits = min(floor(log2(end - start)), ctz(start) (no
 * limit for start 0), max_bits); a piece is emitted if size_bits >= min_bits
 * and the start always advances by 2^size_bits, so pieces < 2^min_bits are
 * dropped. Emits into out[] up to max entries and returns the count. Like
 * seL4 it stops silently when out[] is full, but sets *truncated (if
 * truncated is not NULL) when a further piece would have been emitted.
 * Invalid arguments (base > end, min_bits > max_bits, max_bits > 63, out NULL
 * with max > 0) give 0 pieces. */
struct untyped_piece {
    u64 paddr;
    u8 size_bits;
};
u32 region_cut_untypeds(u64 base, u64 end, u32 min_bits, u32 max_bits, struct untyped_piece *out,
                        u32 max, bool *truncated);

#endif
