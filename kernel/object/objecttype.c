/* Type-dependent cap operations (minimal first version). */
#include <objecttype.h>

bool cap_is_physical(cap_t c)
{
    switch (cap_type(c)) {
    case CAP_UNTYPED:
    case CAP_ENDPOINT:
    case CAP_NOTIFICATION:
    case CAP_REPLY:
    case CAP_CNODE:
    case CAP_THREAD:
    case CAP_SCHED_CONTEXT:
    case CAP_FRAME:
    case CAP_PAGE_TABLE:
    case CAP_ASID_POOL:
        return true;
    default:
        return false;
    }
}

paddr_t cap_object_base(cap_t c) { return cap_obj(c); }

word_t cap_object_size(cap_t c)
{
    switch (cap_type(c)) {
    case CAP_UNTYPED: return 1ul << cap_untyped_size_bits(c);
    case CAP_ENDPOINT: return 1ul << ENDPOINT_BITS;
    case CAP_NOTIFICATION: return 1ul << NOTIFICATION_BITS;
    case CAP_REPLY: return 1ul << REPLY_BITS;
    case CAP_CNODE: return 1ul << (cap_cnode_radix(c) + SLOT_BITS);
    case CAP_THREAD: return 1ul << TCB_BITS;
    case CAP_SCHED_CONTEXT: return 1ul << cap_sched_context_size_bits(c);
    case CAP_FRAME: return 1ul << (PAGE_BITS + 9 * cap_frame_size(c));
    case CAP_PAGE_TABLE: return 1ul << PAGE_TABLE_BITS;
    case CAP_ASID_POOL: return 1ul << ASID_POOL_BITS;
    default: return 0;
    }
}

bool same_region_as(cap_t a, cap_t b)
{
    if (cap_type(a) == CAP_UNTYPED) {
        if (!cap_is_physical(b))
            return false;
        paddr_t base = cap_obj(a), top = base + cap_object_size(a) - 1;
        paddr_t b_base = cap_object_base(b), b_top = b_base + cap_object_size(b) - 1;
        return base <= b_base && b_top <= top && b_base <= b_top;
    }
    if (cap_type(a) != cap_type(b))
        return false;
    switch (cap_type(a)) {
    case CAP_NULL:
    case CAP_ZOMBIE:
        return false;
    case CAP_DOMAIN:
    case CAP_IRQ_CONTROL:
    case CAP_ASID_CONTROL:
        return true;
    case CAP_SCHED_CONTROL:
    case CAP_IRQ_HANDLER:
        return cap_field_a(a) == cap_field_a(b);
    case CAP_CNODE:
        return cap_obj(a) == cap_obj(b) && cap_cnode_radix(a) == cap_cnode_radix(b);
    default:
        return cap_obj(a) == cap_obj(b);
    }
}

bool same_object_as(cap_t a, cap_t b)
{
    if (cap_type(a) == CAP_UNTYPED)
        return cap_type(b) == CAP_UNTYPED && cap_obj(a) == cap_obj(b) &&
               cap_untyped_size_bits(a) == cap_untyped_size_bits(b);
    if (cap_type(a) == CAP_IRQ_CONTROL && cap_type(b) == CAP_IRQ_HANDLER)
        return false;
    return same_region_as(a, b);
}
