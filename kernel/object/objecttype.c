/* Type-dependent cap operations for the generic (architecture-independent)
 * cap types: identity (sameRegionAs/sameObjectAs), derivation, rights
 * masking, badge/guard updates and finalisation, as seL4 defines them
 * (src/object/objecttype.c; docs/object-model.md). RISC-V caps
 * (frames, page tables, ASID control and pools) are handed to the arch_*
 * functions in arch/riscv/object/objecttype.c; object creation lives with
 * Untyped_Retype in untyped.c. */
#include <cdt.h>
#include <endpoint.h>
#include <irq.h>
#include <kernel.h>
#include <notification.h>
#include <objecttype.h>
#include <schedcontext.h>
#include <thread.h>

static bool is_arch_cap(cap_t c)
{
    switch (cap_type(c)) {
    case CAP_FRAME:
    case CAP_PAGE_TABLE:
    case CAP_ASID_CONTROL:
    case CAP_ASID_POOL:
        return true;
    default:
        return false;
    }
}

/* Inline for same_region_as, which then calls nothing but the arch
 * function (a tail call) and needs no stack frame of its own. */
static ALWAYS_INLINE bool is_physical(cap_t c)
{
    switch (cap_type(c)) {
    case CAP_UNTYPED:
    case CAP_ENDPOINT:
    case CAP_NOTIFICATION:
    case CAP_REPLY:
    case CAP_CNODE:
    case CAP_THREAD:
    case CAP_SCHED_CONTEXT:
    case CAP_ZOMBIE:
    case CAP_FRAME:
    case CAP_PAGE_TABLE:
    case CAP_ASID_POOL:
        return true;
    default:
        return false;
    }
}

bool cap_is_physical(cap_t c) { return is_physical(c); }

paddr_t cap_object_base(cap_t c) { return cap_obj(c); }

/* Inline for the reason given at is_physical. */
static ALWAYS_INLINE word_t object_size(cap_t c)
{
    switch (cap_type(c)) {
    case CAP_UNTYPED: return 1ul << cap_untyped_size_bits(c);
    case CAP_ENDPOINT: return 1ul << ENDPOINT_BITS;
    case CAP_NOTIFICATION: return 1ul << NOTIFICATION_BITS;
    case CAP_REPLY: return 1ul << REPLY_BITS;
    case CAP_CNODE: return 1ul << (cap_cnode_radix(c) + SLOT_BITS);
    case CAP_THREAD: return 1ul << TCB_BITS;
    case CAP_SCHED_CONTEXT: return 1ul << cap_sched_context_size_bits(c);
    case CAP_ZOMBIE:
        return cap_zombie_is_tcb(c) ? (1ul << TCB_BITS) : (1ul << (cap_zombie_radix(c) + SLOT_BITS));
    case CAP_FRAME: return 1ul << (PAGE_BITS + 9 * cap_frame_size(c));
    case CAP_PAGE_TABLE: return 1ul << PAGE_TABLE_BITS;
    case CAP_ASID_POOL: return 1ul << ASID_POOL_BITS;
    default: return 0;
    }
}

word_t cap_object_size(cap_t c) { return object_size(c); }

/* Does cap a give authority over (at least) the resource b names? This is
 * what makes b a candidate child of a in the derivation tree. */
bool same_region_as(cap_t a, cap_t b)
{
    /* The arch caps first, as a plain tail call: inside the switch GCC
     * keeps both caps in a stack frame for it (stores on every call). */
    if (is_arch_cap(a))
        return is_arch_cap(b) && arch_same_region_as(a, b);
    switch (cap_type(a)) {
    case CAP_UNTYPED:
        if (is_physical(b)) {
            paddr_t base = cap_obj(a), top = base + (1ul << cap_untyped_size_bits(a)) - 1;
            paddr_t b_base = cap_object_base(b), b_top = b_base + object_size(b) - 1;
            return base <= b_base && b_top <= top && b_base <= b_top;
        }
        return false;
    case CAP_ENDPOINT:
    case CAP_NOTIFICATION:
    case CAP_THREAD:
    case CAP_REPLY:
        return cap_type(b) == cap_type(a) && cap_obj(a) == cap_obj(b);
    case CAP_CNODE:
        return cap_type(b) == CAP_CNODE && cap_obj(a) == cap_obj(b) && cap_cnode_radix(a) == cap_cnode_radix(b);
    case CAP_SCHED_CONTEXT:
        return cap_type(b) == CAP_SCHED_CONTEXT && cap_obj(a) == cap_obj(b) &&
               cap_sched_context_size_bits(a) == cap_sched_context_size_bits(b);
    case CAP_DOMAIN:
        return cap_type(b) == CAP_DOMAIN;
    case CAP_SCHED_CONTROL:
        return cap_type(b) == CAP_SCHED_CONTROL; /* one core */
    case CAP_IRQ_CONTROL:
        /* IRQ handlers are issued by (and are children of) IRQ control. */
        return cap_type(b) == CAP_IRQ_CONTROL || cap_type(b) == CAP_IRQ_HANDLER;
    case CAP_IRQ_HANDLER:
        return cap_type(b) == CAP_IRQ_HANDLER && cap_irq(a) == cap_irq(b);
    case CAP_NULL:
    case CAP_ZOMBIE:
        return false;
    default:
        /* The arch caps, handled above. */
        return false;
    }
}

/* Do a and b name the same object (so that neither is the last cap to it)? */
bool same_object_as(cap_t a, cap_t b)
{
    /* An untyped is never "the same object" as another cap: deleting an
     * untyped cap needs no finalisation, so finality does not matter. */
    if (cap_type(a) == CAP_UNTYPED)
        return false;
    if (cap_type(a) == CAP_IRQ_CONTROL && cap_type(b) == CAP_IRQ_HANDLER)
        return false;
    if (is_arch_cap(a) && is_arch_cap(b))
        return arch_same_object_as(a, b);
    return same_region_as(a, b);
}

struct derive_result derive_cap(cte_t *slot, cap_t c)
{
    struct derive_result r = {ERR_NONE, c};
    if (is_arch_cap(c))
        return arch_derive_cap(slot, c);
    switch (cap_type(c)) {
    case CAP_ZOMBIE:
    case CAP_IRQ_CONTROL:
        /* Never copied: the caller refuses the null result. */
        r.cap = cap_null();
        return r;
    case CAP_UNTYPED:
        /* A copy would share memory the children already use. */
        if (cdt_has_children(slot)) {
            r.status = ERR_REVOKE_FIRST;
            r.cap = cap_null();
        }
        return r;
    default:
        /* Endpoints, notifications, replies, CNodes, TCBs, scheduling
         * contexts, SchedControl, Domain, IRQ handlers: themselves. */
        return r;
    }
}

cap_t mask_cap_rights(word_t rights, cap_t c)
{
    if (is_arch_cap(c))
        return arch_mask_cap_rights(rights, c);
    switch (cap_type(c)) {
    case CAP_ENDPOINT:
        /* Rights share seL4_CapRights' bit layout (cap.h). */
        return cap_set_field_a(c, (cap_field_a(c) & ~RIGHTS_ALL) | (cap_rights(c) & rights & RIGHTS_ALL));
    case CAP_NOTIFICATION:
        return cap_set_field_a(c, (cap_field_a(c) & ~RIGHTS_ALL) |
                                      (cap_rights(c) & rights & (RIGHT_READ | RIGHT_WRITE)));
    case CAP_REPLY:
        /* Only Grant applies (field_a bit 0 = can_grant). */
        return cap_set_field_a(c, cap_field_a(c) & ((rights & RIGHT_GRANT) ? 1ul : 0ul));
    default:
        return c;
    }
}

cap_t update_cap_data(bool preserve, word_t data, cap_t c)
{
    switch (cap_type(c)) {
    case CAP_ENDPOINT:
    case CAP_NOTIFICATION:
        /* Badges are set once, by Mint, on an unbadged cap. */
        if (!preserve && cap_badge(c) == 0) {
            c.w1 = data; /* cap.h: w1 = badge (64 bits) */
            return c;
        }
        return cap_null();
    case CAP_CNODE: {
        /* seL4_CNode_CapData: guard size in bits 0-5, guard in bits 6-63. */
        word_t guard_size = data & 0x3f;
        word_t radix = cap_cnode_radix(c);
        if (guard_size + radix > 64)
            return cap_null();
        word_t guard = (data >> 6) & MASK(guard_size);
        return cap_cnode(cap_obj(c), (u32)radix, (u32)guard_size, guard);
    }
    default:
        /* Every other cap, RISC-V caps included, is unchanged. */
        return c;
    }
}

/* ---- finalisation ---- */

/* Called on every deletion of a cap of a type that leaves no zombie (final
 * says whether it is the last cap to its object; objecttype.h for the
 * result). Every case is one bounded step. */
bool finalise_cap(cap_t c, bool final)
{
    if (is_arch_cap(c)) {
        arch_finalise_cap(c, final);
        return true;
    }
    switch (cap_type(c)) {
    case CAP_ENDPOINT:
        /* The last cap to an endpoint restarts every queued thread
         * (seL4's cancelAllIPC; endpoint.c), preemptibly. */
        return !final || endpoint_finalise(endpoint_from_cap(c));
    case CAP_NOTIFICATION:
        /* seL4: schedContext_unbindNtfn, unbindMaybeNotification, then
         * cancelAllSignals (waiters restart). */
        return !final || notification_finalise(notification_from_cap(c));
    case CAP_REPLY:
        /* The last cap to a reply object cancels the call waiting on it,
         * or the receive holding it (seL4's reply_remove; reply.c). */
        if (final)
            reply_finalise(reply_from_cap(c));
        return true;
    case CAP_IRQ_HANDLER:
        /* The last handler cap frees its IRQ for IRQControl_Get: its
         * notification cap goes, the IRQ is masked and inactive (seL4's
         * deletingIRQHandler and deletedIRQHandler). */
        return !final || irq_handler_deleted(cap_irq(c));
    case CAP_SCHED_CONTEXT:
        if (final)
            sched_context_finalise(sc_from_cap(c));
        return true;
    default:
        /* Null, domain, untyped, SchedControl and IRQControl caps: nothing
         * to do (CNode, TCB and zombie caps go to finalise_to_zombie). */
        return true;
    }
}

/* The deletion of a CNode, TCB or zombie cap: the zombie the caller
 * reduces step by step (cdt.c), or null if c is not the last cap to its
 * object. A TCB's last cap first takes the thread out of the scheduler
 * (tcb_finalise); its slots are then emptied like a CNode's. One bounded
 * step. */
cap_t finalise_to_zombie(cap_t c, bool final)
{
    switch (cap_type(c)) {
    case CAP_CNODE:
        if (final)
            return cap_zombie(cap_obj(c), false, cap_cnode_radix(c), 1ul << cap_cnode_radix(c));
        return cap_null();
    case CAP_THREAD:
        if (final) {
            tcb_finalise(tcb_from_paddr(cap_obj(c)));
            return cap_zombie(cap_obj(c), true, 0, TCB_NUM_SLOTS);
        }
        return cap_null();
    default:
        /* A zombie: already finalised; what is left is reducing it. */
        kassert(cap_type(c) == CAP_ZOMBIE);
        return c;
    }
}
