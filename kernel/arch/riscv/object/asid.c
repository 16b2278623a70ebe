/* ASIDs: 2^7 pools of 2^9 address spaces. The table maps a pool number to its
 * pool object; a pool maps the low 9 bits of an ASID to a VSpace root. ASID 0
 * is never given to a user address space (it is "no ASID", and the kernel's
 * own root runs with it). Every loop is bounded by a pool (512) or the table
 * (128). */
#include <abi.h>
#include <arch/csr.h>
#include <arch/memory.h>
#include <arch/vspace.h>
#include <boot.h>
#include <sched.h>

_Static_assert(sizeof(struct asid_pool) == (1u << ASID_POOL_BITS), "ASID pool object size");
_Static_assert(ASID_POOL_ENTRIES == (1u << ASID_POOL_INDEX_BITS), "pool entries");
_Static_assert(NUM_ASID_POOLS == (1u << NUM_ASID_POOLS_BITS), "pool count");

paddr_t asid_table[NUM_ASID_POOLS];
word_t asid_generation;

/* Bit g of asid_pool_full[n] is set when the entries 8g to 8g + 7 of pool n,
 * one 64-byte line of the pool, are all in use (ASID 0 counts as in use).
 * The first free ASID is then the first free entry of the first group whose
 * bit is clear: one line of the pool read, instead of a walk of up to 512
 * entries (4 KiB) without a preemption point in ASIDPool_Assign. The result
 * is the same as the walk's: every group before it is full. */
#define ASID_GROUP 8
_Static_assert(ASID_POOL_ENTRIES == 64 * ASID_GROUP, "one summary bit per group");
static u64 asid_pool_full[NUM_ASID_POOLS];

static struct asid_pool *pool_ptr(paddr_t p) { return (struct asid_pool *)paddr_to_kptr(p); }

static bool asid_entry_in_use(const struct asid_pool *pool, word_t base, word_t i)
{
    return base + i == 0 || pool->vspace[i] != 0;
}

/* Whether the group of entries from `first` (a multiple of ASID_GROUP) of
 * the pool whose first ASID is base is all in use. */
static bool asid_group_full(const struct asid_pool *pool, word_t base, word_t first)
{
    bool full = true;
    for (word_t k = 0; k < ASID_GROUP; k++)
        if (!asid_entry_in_use(pool, base, first + k))
            full = false;
    return full;
}

/* Recompute the summary bit of the group holding asid, after its entry was
 * set. (A cleared entry only clears the bit.) */
static void asid_group_update(paddr_t pool, word_t asid)
{
    word_t n = asid >> ASID_LOW_BITS;
    word_t first = (asid & MASK(ASID_LOW_BITS)) & ~(word_t)(ASID_GROUP - 1);
    if (asid_group_full(pool_ptr(pool), n << ASID_LOW_BITS, first))
        asid_pool_full[n] |= BIT(first / ASID_GROUP);
    else
        asid_pool_full[n] &= ~BIT(first / ASID_GROUP);
}

void asid_boot_init(paddr_t pool_pa, word_t asid, paddr_t vspace_pa)
{
    asid_table[asid >> ASID_LOW_BITS] = pool_pa;
    asid_pool_full[asid >> ASID_LOW_BITS] = 0;
    pool_ptr(pool_pa)->vspace[asid & MASK(ASID_LOW_BITS)] = vspace_pa;
    asid_group_update(pool_pa, asid);
    asid_generation++;
}

word_t asid_first_free_pool(void)
{
    word_t i;
    for (i = 0; i < NUM_ASID_POOLS; i++)
        if (!asid_table[i])
            break;
    return i;
}

word_t asid_pool_first_free(const struct asid_pool *pool, word_t base)
{
    u64 full = asid_pool_full[base >> ASID_LOW_BITS];
    if (full == ~0ull)
        return ASID_POOL_ENTRIES;
    u64 open = ~full;
    word_t first = (word_t)msb_index(open & -open) * ASID_GROUP;
    for (word_t k = 0; k < ASID_GROUP; k++)
        if (!asid_entry_in_use(pool, base, first + k)) /* ASID 0 is never handed out */
            return first + k;
    return ASID_POOL_ENTRIES; /* not reached while the summary is right */
}

void asid_register_pool(word_t pool_number, paddr_t pool)
{
    asid_table[pool_number] = pool;
    asid_pool_full[pool_number] = 0; /* the pool object was just cleared */
    asid_generation++;
}

void asid_assign(word_t asid, paddr_t root)
{
    paddr_t pool = asid_table[asid >> ASID_LOW_BITS];
    pool_ptr(pool)->vspace[asid & MASK(ASID_LOW_BITS)] = root;
    asid_group_update(pool, asid);
    asid_generation++;
    /* Nothing of a previous user of this ASID may survive in the TLB. */
    vspace_flush_asid(asid);
}

void delete_asid(word_t asid, paddr_t root)
{
    if (asid == ASID_INVALID || asid >= (1ul << ASID_BITS))
        return;
    paddr_t pool = asid_table[asid >> ASID_LOW_BITS];
    if (!pool || pool_ptr(pool)->vspace[asid & MASK(ASID_LOW_BITS)] != root)
        return;
    vspace_flush_asid(asid);
    pool_ptr(pool)->vspace[asid & MASK(ASID_LOW_BITS)] = 0;
    asid_pool_full[asid >> ASID_LOW_BITS] &= ~BIT((asid & MASK(ASID_LOW_BITS)) / ASID_GROUP);
    asid_generation++;
    vspace_revalidate_active();
}

void delete_asid_pool(word_t base, paddr_t pool)
{
    word_t n = base >> ASID_LOW_BITS;
    if (n >= NUM_ASID_POOLS || asid_table[n] != pool)
        return;
    /* The pool object is about to be freed; its entries are not cleared (the
     * memory is zeroed when it is retyped), only forgotten, and the TLB
     * entries of every ASID it covered dropped. One flush of all non-global
     * entries is cheaper than 512 per-ASID flushes. */
    asid_table[n] = 0;
    asid_generation++;
    sfence_vma_all();
    vspace_revalidate_active();
}

#if CONFIG_INVARIANT_CHECKS
/* Check flavour: every pool's summary bits say which of its groups are
 * full. */
const char *asid_summary_violation(void)
{
    for (word_t n = 0; n < NUM_ASID_POOLS; n++) {
        if (!asid_table[n])
            continue;
        const struct asid_pool *p = pool_ptr(asid_table[n]);
        for (word_t g = 0; g < ASID_POOL_ENTRIES / ASID_GROUP; g++) {
            if (asid_group_full(p, n << ASID_LOW_BITS, g * ASID_GROUP) != ((asid_pool_full[n] >> g) & 1))
                return "ASID pool summary bit disagrees with its group";
        }
    }
    return NULL;
}
#endif
