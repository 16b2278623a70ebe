/* ASIDs: 2^7 pools of 2^9 address spaces. The table maps a pool number to its
 * pool object; a pool maps the low 9 bits of an ASID to a VSpace root. ASID 0
 * is never given to a user address space. */
#include <abi.h>
#include <arch/memory.h>
#include <boot.h>

struct asid_pool {
    paddr_t vspace[1u << ASID_POOL_INDEX_BITS];
};
_Static_assert(sizeof(struct asid_pool) == (1u << ASID_POOL_BITS), "ASID pool object size");

paddr_t asid_table[1u << NUM_ASID_POOLS_BITS];

void asid_boot_init(paddr_t pool_pa, word_t asid, paddr_t vspace_pa)
{
    asid_table[0] = pool_pa;
    struct asid_pool *pool = paddr_to_kptr(pool_pa);
    pool->vspace[asid & MASK(ASID_POOL_INDEX_BITS)] = vspace_pa;
}
