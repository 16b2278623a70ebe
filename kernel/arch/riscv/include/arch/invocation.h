/* The RISC-V object invocations: one decoder per cap type (frames, page
 * tables, ASID control, ASID pools; arch/riscv/object/vspace.c). The
 * dispatch on the cap type is inline, so the generic dispatch in
 * kernel/syscall.c lands on the right decoder with one switch. Included by
 * invocation.h only. */
#ifndef ARCH_INVOCATION_H
#define ARCH_INVOCATION_H

struct syscall_error decode_page_table_invocation(struct invocation *inv);
struct syscall_error decode_frame_invocation(struct invocation *inv);
struct syscall_error decode_asid_control_invocation(struct invocation *inv);
struct syscall_error decode_asid_pool_invocation(struct invocation *inv);

static inline struct syscall_error arch_decode_invocation(struct invocation *inv)
{
    switch (cap_type(inv->cap)) {
    case CAP_PAGE_TABLE:
        return decode_page_table_invocation(inv);
    case CAP_FRAME:
        return decode_frame_invocation(inv);
    case CAP_ASID_CONTROL:
        return decode_asid_control_invocation(inv);
    case CAP_ASID_POOL:
        return decode_asid_pool_invocation(inv);
    default:
        return error0(ERR_ILLEGAL_OPERATION);
    }
}

#endif
