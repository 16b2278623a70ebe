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

_Static_assert(sizeof(struct asid_pool) == (1u << ASID_POOL_BITS), "ASID pool object size");
_Static_assert(ASID_POOL_ENTRIES == (1u << ASID_POOL_INDEX_BITS), "pool entries");
_Static_assert(NUM_ASID_POOLS == (1u << NUM_ASID_POOLS_BITS), "pool count");

paddr_t asid_table[NUM_ASID_POOLS];
word_t asid_generation;

static struct asid_pool *pool_ptr(paddr_t p) { return (struct asid_pool *)paddr_to_kptr(p); }

void asid_boot_init(paddr_t pool_pa, word_t asid, paddr_t vspace_pa)
{
    asid_table[asid >> ASID_LOW_BITS] = pool_pa;
    pool_ptr(pool_pa)->vspace[asid & MASK(ASID_LOW_BITS)] = vspace_pa;
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
    word_t i;
    for (i = 0; i < ASID_POOL_ENTRIES; i++)
        if (base + i != 0 && !pool->vspace[i]) /* ASID 0 is never handed out */
            break;
    return i;
}

void asid_register_pool(word_t pool_number, paddr_t pool)
{
    asid_table[pool_number] = pool;
    asid_generation++;
}

void asid_assign(word_t asid, paddr_t root)
{
    paddr_t pool = asid_table[asid >> ASID_LOW_BITS];
    pool_ptr(pool)->vspace[asid & MASK(ASID_LOW_BITS)] = root;
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
