/* Capabilities: two words each, packed so that a slot (cap + derivation-tree
 * links) is 32 bytes, the seL4 slot size user code allocates CNodes with.
 *
 * w0 bits 0-4 hold the cap type, whose numbers are seL4's cap tags (what
 * seL4_DebugCapIdentify returns). The rest of w0 and all of w1 depend on the
 * type; the accessors below are the only code that knows the packing.
 * Object addresses are physical; objects are reached through the kernel window. */
#ifndef KAIROS_CAP_H
#define KAIROS_CAP_H

#include <types.h>

enum cap_type {
    CAP_NULL = 0,
    CAP_FRAME = 1,
    CAP_UNTYPED = 2,
    CAP_PAGE_TABLE = 3,
    CAP_ENDPOINT = 4,
    CAP_NOTIFICATION = 6,
    CAP_REPLY = 8,
    CAP_CNODE = 10,
    CAP_ASID_CONTROL = 11,
    CAP_THREAD = 12,
    CAP_ASID_POOL = 13,
    CAP_IRQ_CONTROL = 14,
    CAP_IRQ_HANDLER = 16,
    CAP_ZOMBIE = 18,
    CAP_DOMAIN = 20,
    CAP_SCHED_CONTEXT = 22,
    CAP_SCHED_CONTROL = 24,
};

/* seL4_CapRights word: write 0, read 1, grant 2, grant-reply 3. */
#define RIGHT_WRITE 1ul
#define RIGHT_READ 2ul
#define RIGHT_GRANT 4ul
#define RIGHT_GRANT_REPLY 8ul
#define RIGHTS_ALL 15ul

/* Frame VM rights as seL4 encodes them. */
enum vm_rights {
    VM_KERNEL_ONLY = 1,
    VM_READ_ONLY = 2,
    VM_READ_WRITE = 3,
};

typedef struct cap {
    word_t w0;
    word_t w1;
} cap_t;

static inline enum cap_type cap_type(cap_t c) { return (enum cap_type)(c.w0 & 0x1f); }
static inline bool cap_is_null(cap_t c) { return cap_type(c) == CAP_NULL; }
static inline cap_t cap_null(void) { cap_t c = {0, 0}; return c; }

/* Generic layout used by most types: w0 = type | field_a << 5 | (paddr >> 4) << 24;
 * field_a is 19 bits of type-specific data. Physical addresses are < 2^39 and
 * objects at least 16-byte aligned, so paddr >> 4 fits in 40 bits. */
static inline cap_t cap_make(enum cap_type t, word_t field_a, paddr_t obj, word_t w1)
{
    cap_t c;
    c.w0 = ((word_t)t & 0x1f) | ((field_a & MASK(19)) << 5) | ((obj >> 4) << 24);
    c.w1 = w1;
    return c;
}
static inline paddr_t cap_obj(cap_t c) { return (c.w0 >> 24) << 4; }
static inline word_t cap_field_a(cap_t c) { return (c.w0 >> 5) & MASK(19); }
static inline cap_t cap_set_field_a(cap_t c, word_t v)
{
    c.w0 = (c.w0 & ~(MASK(19) << 5)) | ((v & MASK(19)) << 5);
    return c;
}

/* Untyped: field_a = size_bits (6) | is_device << 6; w1 = free index in bytes
 * (the watermark: bytes used from the base). */
static inline cap_t cap_untyped(paddr_t base, u32 size_bits, bool device, word_t free_index)
{
    return cap_make(CAP_UNTYPED, size_bits | ((word_t)device << 6), base, free_index);
}
static inline u32 cap_untyped_size_bits(cap_t c) { return (u32)(cap_field_a(c) & 0x3f); }
static inline bool cap_untyped_is_device(cap_t c) { return (cap_field_a(c) >> 6) & 1; }
static inline word_t cap_untyped_free_index(cap_t c) { return c.w1; }

/* Endpoint / notification: field_a = rights (4 bits); w1 = badge. */
static inline cap_t cap_endpoint(paddr_t ep, word_t rights, word_t badge)
{
    return cap_make(CAP_ENDPOINT, rights, ep, badge);
}
static inline cap_t cap_notification(paddr_t ntfn, word_t rights, word_t badge)
{
    return cap_make(CAP_NOTIFICATION, rights, ntfn, badge);
}
static inline word_t cap_rights(cap_t c) { return cap_field_a(c) & RIGHTS_ALL; }
static inline word_t cap_badge(cap_t c) { return c.w1; }

/* Reply: field_a = can_grant. */
static inline cap_t cap_reply(paddr_t reply, bool can_grant) { return cap_make(CAP_REPLY, can_grant, reply, 0); }

/* CNode: field_a = radix (6) | guard_size << 6 (7 bits: 0..64); w1 = guard. */
static inline cap_t cap_cnode(paddr_t cnode, u32 radix, u32 guard_size, word_t guard)
{
    return cap_make(CAP_CNODE, radix | ((word_t)guard_size << 6), cnode, guard);
}
static inline u32 cap_cnode_radix(cap_t c) { return (u32)(cap_field_a(c) & 0x3f); }
static inline u32 cap_cnode_guard_size(cap_t c) { return (u32)((cap_field_a(c) >> 6) & 0x7f); }
static inline word_t cap_cnode_guard(cap_t c) { return c.w1; }

/* Thread, scheduling context (field_a = size_bits), domain, control caps. */
static inline cap_t cap_thread(paddr_t tcb) { return cap_make(CAP_THREAD, 0, tcb, 0); }
static inline cap_t cap_sched_context(paddr_t sc, u32 size_bits) { return cap_make(CAP_SCHED_CONTEXT, size_bits, sc, 0); }
static inline u32 cap_sched_context_size_bits(cap_t c) { return (u32)(cap_field_a(c) & 0x3f); }
static inline cap_t cap_sched_control(u32 core) { return cap_make(CAP_SCHED_CONTROL, core, 0, 0); }
static inline cap_t cap_domain(void) { return cap_make(CAP_DOMAIN, 0, 0, 0); }
static inline cap_t cap_irq_control(void) { return cap_make(CAP_IRQ_CONTROL, 0, 0, 0); }
static inline cap_t cap_irq_handler(word_t irq) { return cap_make(CAP_IRQ_HANDLER, irq, 0, 0); }
static inline word_t cap_irq(cap_t c) { return cap_field_a(c); }
static inline cap_t cap_asid_control(void) { return cap_make(CAP_ASID_CONTROL, 0, 0, 0); }
/* ASID pool: field_a = first ASID of the pool >> 9 (pool number). */
static inline cap_t cap_asid_pool(paddr_t pool, word_t asid_base)
{
    return cap_make(CAP_ASID_POOL, asid_base >> 9, pool, 0);
}
static inline word_t cap_asid_pool_base(cap_t c) { return cap_field_a(c) << 9; }

/* Frame: field_a = size (0 4K, 1 2M, 2 1G) | vm_rights << 2 | device << 4 |
 * mapped << 5; w1 = mapped vaddr | asid (ASID in the low 16 bits: vaddrs are
 * page aligned, so the low 12 bits are free, and ASIDs are < 2^16 but we keep
 * them in bits 0..15 by storing vaddr >> 12 << 16). */
static inline cap_t cap_frame(paddr_t frame, u32 size, enum vm_rights rights, bool device)
{
    return cap_make(CAP_FRAME, size | ((word_t)rights << 2) | ((word_t)device << 4), frame, 0);
}
static inline u32 cap_frame_size(cap_t c) { return (u32)(cap_field_a(c) & 3); }
static inline enum vm_rights cap_frame_rights(cap_t c) { return (enum vm_rights)((cap_field_a(c) >> 2) & 3); }
static inline bool cap_frame_is_device(cap_t c) { return (cap_field_a(c) >> 4) & 1; }
static inline bool cap_is_mapped(cap_t c) { return (cap_field_a(c) >> 5) & 1; }
static inline word_t cap_mapped_asid(cap_t c) { return c.w1 & 0xffff; }
static inline vaddr_t cap_mapped_vaddr(cap_t c) { return (c.w1 >> 16) << 12; }
static inline cap_t cap_set_mapping(cap_t c, word_t asid, vaddr_t va)
{
    c = cap_set_field_a(c, cap_field_a(c) | (1ul << 5));
    c.w1 = ((va >> 12) << 16) | (asid & 0xffff);
    return c;
}
static inline cap_t cap_clear_mapping(cap_t c)
{
    c = cap_set_field_a(c, cap_field_a(c) & ~(1ul << 5));
    c.w1 = 0;
    return c;
}
/* Page table: same mapped/asid/vaddr encoding as frames. */
static inline cap_t cap_page_table(paddr_t pt) { return cap_make(CAP_PAGE_TABLE, 0, pt, 0); }

#endif
