/* Type-dependent cap operations for the RISC-V caps: frames, page tables,
 * ASID control and ASID pools (seL4's Arch_deriveCap, Arch_maskCapRights,
 * Arch_sameRegionAs, Arch_sameObjectAs, Arch_finaliseCap, Arch_createObject;
 * docs/object-model.md). Called from kernel/object/objecttype.c and
 * kernel/object/untyped.c. */
#include <arch/vspace.h>
#include <objecttype.h>

struct derive_result arch_derive_cap(cte_t *slot, cap_t c)
{
    (void)slot;
    struct derive_result r = {ERR_NONE, c};
    switch (cap_type(c)) {
    case CAP_PAGE_TABLE:
        /* A mapped table (or assigned root) copies with its mapping; an
         * unmapped one cannot be copied at all (so it always has exactly one
         * cap, which PageTable_Map and Assign rely on). */
        if (!cap_is_mapped(c)) {
            r.status = ERR_ILLEGAL_OPERATION;
            r.cap = cap_null();
        }
        return r;
    case CAP_FRAME:
        /* Each frame cap carries its own mapping: the copy has none. */
        r.cap = cap_clear_mapping(c);
        return r;
    default:
        /* ASID control and ASID pools copy as themselves. */
        return r;
    }
}

cap_t arch_mask_cap_rights(word_t rights, cap_t c)
{
    if (cap_type(c) != CAP_FRAME)
        return c;
    enum vm_rights vm = mask_vm_rights(cap_frame_rights(c), rights);
    /* Rights are bits 2-3 of field_a (cap.h). */
    return cap_set_field_a(c, (cap_field_a(c) & ~(3ul << 2)) | ((word_t)vm << 2));
}

static word_t frame_bytes(cap_t c) { return 1ul << frame_size_bits(cap_frame_size(c)); }

bool arch_same_region_as(cap_t a, cap_t b)
{
    switch (cap_type(a)) {
    case CAP_FRAME:
        if (cap_type(b) == CAP_FRAME) {
            paddr_t bot_a = cap_obj(a), top_a = bot_a + frame_bytes(a) - 1;
            paddr_t bot_b = cap_obj(b), top_b = bot_b + frame_bytes(b) - 1;
            return bot_a <= bot_b && top_a >= top_b && bot_b <= top_b;
        }
        return false;
    case CAP_PAGE_TABLE:
        return cap_type(b) == CAP_PAGE_TABLE && cap_obj(a) == cap_obj(b);
    case CAP_ASID_CONTROL:
        return cap_type(b) == CAP_ASID_CONTROL;
    case CAP_ASID_POOL:
        return cap_type(b) == CAP_ASID_POOL && cap_obj(a) == cap_obj(b);
    default:
        return false;
    }
}

bool arch_same_object_as(cap_t a, cap_t b)
{
    if (cap_type(a) == CAP_FRAME && cap_type(b) == CAP_FRAME)
        return cap_obj(a) == cap_obj(b) && cap_frame_size(a) == cap_frame_size(b) &&
               cap_frame_is_device(a) == cap_frame_is_device(b);
    return arch_same_region_as(a, b);
}

/* Called for every deletion of an arch cap, final or not: each frame cap has
 * its own mapping, which goes with it. Every case is a bounded step: a walk of
 * at most three levels, or (ASID pool) forgetting the pool in O(1). */
void arch_finalise_cap(cap_t c, bool final)
{
    switch (cap_type(c)) {
    case CAP_FRAME:
        if (cap_is_mapped(c))
            unmap_page(cap_frame_size(c), cap_mapped_asid(c), cap_mapped_vaddr(c), cap_obj(c));
        break;
    case CAP_PAGE_TABLE:
        if (final && cap_is_mapped(c)) {
            word_t asid = cap_mapped_asid(c);
            if (find_vspace_for_asid(asid) == cap_obj(c))
                delete_asid(asid, cap_obj(c)); /* the last cap to a VSpace root frees its ASID */
            else
                unmap_page_table(asid, cap_mapped_vaddr(c), cap_obj(c));
        }
        break;
    case CAP_ASID_POOL:
        if (final)
            delete_asid_pool(cap_asid_pool_base(c), cap_obj(c));
        break;
    default:
        break;
    }
}

cap_t arch_create_object(enum object_type type, paddr_t paddr, word_t size_bits, bool device)
{
    (void)size_bits;
    switch (type) {
    case OBJ_SMALL_PAGE:
        return cap_frame(paddr, FRAME_4K, VM_READ_WRITE, device);
    case OBJ_LARGE_PAGE:
        return cap_frame(paddr, FRAME_2M, VM_READ_WRITE, device);
    case OBJ_GIGA_PAGE:
        return cap_frame(paddr, FRAME_1G, VM_READ_WRITE, device);
    case OBJ_PAGE_TABLE:
        /* Untyped memory is zeroed before it is retyped (never for device
         * untypeds, but those yield only frames and untypeds). */
        return cap_page_table(paddr);
    default:
        return cap_null();
    }
}

word_t arch_object_size_bits(enum object_type type)
{
    switch (type) {
    case OBJ_SMALL_PAGE: return PAGE_BITS;
    case OBJ_LARGE_PAGE: return LARGE_PAGE_BITS;
    case OBJ_GIGA_PAGE: return HUGE_PAGE_BITS;
    case OBJ_PAGE_TABLE: return PAGE_TABLE_BITS;
    default: return 0;
    }
}

#if CONFIG_INVARIANT_CHECKS
const char *arch_cap_invariant_violation(cap_t c)
{
    switch (cap_type(c)) {
    case CAP_FRAME: {
        if (cap_frame_size(c) > FRAME_1G)
            return "frame cap with a bad size";
        if (cap_frame_rights(c) == 0)
            return "frame cap with no VM rights value";
        word_t bits = frame_size_bits(cap_frame_size(c));
        if (!IS_ALIGNED(cap_obj(c), bits))
            return "frame not aligned to its size";
        if (!cap_is_mapped(c))
            return c.w1 == 0 ? NULL : "unmapped frame cap with a mapping record";
        if (cap_mapped_asid(c) == ASID_INVALID)
            return "mapped frame cap without an ASID";
        if (!IS_ALIGNED(cap_mapped_vaddr(c), bits) || cap_mapped_vaddr(c) + (1ul << bits) > USER_TOP)
            return "frame mapped at a bad address";
        return NULL;
    }
    case CAP_PAGE_TABLE: {
        if (!IS_ALIGNED(cap_obj(c), PAGE_TABLE_BITS))
            return "page table not aligned";
        if (!cap_is_mapped(c))
            return c.w1 == 0 ? NULL : "unmapped page-table cap with a mapping record";
        word_t asid = cap_mapped_asid(c);
        if (asid == ASID_INVALID)
            return "mapped page-table cap without an ASID";
        if (find_vspace_for_asid(asid) == cap_obj(c))
            return cap_mapped_vaddr(c) == 0 ? NULL : "VSpace root cap with a mapping address";
        if (!IS_ALIGNED(cap_mapped_vaddr(c), LARGE_PAGE_BITS) || cap_mapped_vaddr(c) >= USER_TOP)
            return "page table mapped at a bad address";
        return NULL;
    }
    case CAP_ASID_POOL: {
        word_t base = cap_asid_pool_base(c);
        if ((base >> ASID_LOW_BITS) >= NUM_ASID_POOLS)
            return "ASID pool cap beyond the ASID table";
        /* A pool is unregistered only when its last cap is deleted. */
        if (asid_table[base >> ASID_LOW_BITS] != cap_obj(c))
            return "ASID pool cap to a pool that is not registered";
        return NULL;
    }
    default:
        return NULL;
    }
}
#endif
