/* The RISC-V object invocations: one entry point per cap type (frames, page
 * tables, ASID control, ASID pools; arch/riscv/object/vspace.c), each a
 * decode step and a perform step. The dispatch on the cap type is inline,
 * so the generic dispatch in kernel/syscall.c lands on the right entry point
 * with one switch. Included by invocation.h only. */
#ifndef ARCH_INVOCATION_H
#define ARCH_INVOCATION_H

struct syscall_error invoke_page_table(struct invocation *inv);
struct syscall_error invoke_frame(struct invocation *inv);
struct syscall_error invoke_asid_control(struct invocation *inv);
struct syscall_error invoke_asid_pool(struct invocation *inv);

static inline struct syscall_error arch_invoke_invocation(struct invocation *inv)
{
    switch (cap_type(inv->cap)) {
    case CAP_PAGE_TABLE:
        return invoke_page_table(inv);
    case CAP_FRAME:
        return invoke_frame(inv);
    case CAP_ASID_CONTROL:
        return invoke_asid_control(inv);
    case CAP_ASID_POOL:
        return invoke_asid_pool(inv);
    default:
        return error0(ERR_ILLEGAL_OPERATION);
    }
}

#endif
