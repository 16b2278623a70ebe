/*
 * System-call ABI checks that need no kernel objects beyond the boot
 * state: register preservation (every register a system call does not
 * name as an output keeps its value: libsel4's riscv syscalls.h) and the
 * error-reply path of the invocation wrappers (docs/kernel.md).
 */
#include <ktest.h>
#include <sel4/sel4.h>

#define NSAVED 13 /* a1-a6, t0-t6 */

/* Load a pattern into a1-a6 and t0-t6, ecall with (a7 = sys, a0 = arg),
 * then store those registers to out[].  Returns a0 after the call. */
static seL4_Word ecall_snapshot(seL4_Word sys, seL4_Word arg, seL4_Word info, seL4_Word out[NSAVED])
{
    register seL4_Word r_a0 __asm__("a0") = arg;
    register seL4_Word r_a7 __asm__("a7") = sys;
    register seL4_Word r_s1 __asm__("s1") = info;
    register seL4_Word *r_s2 __asm__("s2") = out;
    __asm__ volatile(
        "mv a1, s1\n"
        "li a2, 0x2222\n"
        "li a3, 0x3333\n"
        "li a4, 0x4444\n"
        "li a5, 0x5555\n"
        "li a6, 0x6666\n"
        "li t0, 0x7000\n"
        "li t1, 0x7001\n"
        "li t2, 0x7002\n"
        "li t3, 0x7003\n"
        "li t4, 0x7004\n"
        "li t5, 0x7005\n"
        "li t6, 0x7006\n"
        "ecall\n"
        "sd a1, 0(s2)\n"
        "sd a2, 8(s2)\n"
        "sd a3, 16(s2)\n"
        "sd a4, 24(s2)\n"
        "sd a5, 32(s2)\n"
        "sd a6, 40(s2)\n"
        "sd t0, 48(s2)\n"
        "sd t1, 56(s2)\n"
        "sd t2, 64(s2)\n"
        "sd t3, 72(s2)\n"
        "sd t4, 80(s2)\n"
        "sd t5, 88(s2)\n"
        "sd t6, 96(s2)\n"
        : "+r"(r_a0)
        : "r"(r_a7), "r"(r_s1), "r"(r_s2)
        : "a1", "a2", "a3", "a4", "a5", "a6", "t0", "t1", "t2", "t3", "t4", "t5", "t6",
          "memory");
    return r_a0;
}

static void check_preserved(const seL4_Word out[NSAVED], seL4_Word a1)
{
    static const seL4_Word expect[NSAVED] = {0,      0x2222, 0x3333, 0x4444, 0x5555,
                                             0x6666, 0x7000, 0x7001, 0x7002, 0x7003,
                                             0x7004, 0x7005, 0x7006};
    KASSERT_EQ(out[0], a1);
    for (int i = 1; i < NSAVED; i++) {
        KASSERT_MSG(out[i] == expect[i], "register #%d (a1-a6,t0-t6 order) = 0x%lx, want 0x%lx",
                    i, out[i], expect[i]);
    }
}

KTEST(abi, yield_preserves_registers)
{
    seL4_Word out[NSAVED];
    seL4_Word a0 = ecall_snapshot((seL4_Word)seL4_SysYield, 0xabcd, 0x1111, out);
    KASSERT_EQ(a0, 0xabcd);
    check_preserved(out, 0x1111);
}

KTEST(abi, cap_identify_writes_only_a0)
{
    seL4_Word out[NSAVED];
    seL4_Word a0 = ecall_snapshot((seL4_Word)seL4_SysDebugCapIdentify, seL4_CapInitThreadTCB,
                                  0x1111, out);
    KASSERT_EQ(a0, 12);
    check_preserved(out, 0x1111);
}

KTEST(abi, send_to_null_cap_writes_nothing)
{
    /* Send on an empty slot: InvalidCapability, but Send gets no reply. */
    seL4_Word out[NSAVED];
    seL4_Word info = seL4_MessageInfo_new(0x77, 0, 0, 2).words[0];
    seL4_Word a0 = ecall_snapshot((seL4_Word)seL4_SysSend, seL4_CapNull, info, out);
    KASSERT_EQ(a0, seL4_CapNull);
    check_preserved(out, info);
    a0 = ecall_snapshot((seL4_Word)seL4_SysNBSend, seL4_CapNull, info, out);
    KASSERT_EQ(a0, seL4_CapNull);
    check_preserved(out, info);
}

KTEST(abi, invoke_null_cap_error_reply)
{
    /* Raw Call: error reply label InvalidCapability, length 1, MR0 = 0. */
    seL4_SetMR(0, 0xdead);
    seL4_MessageInfo_t tag = seL4_Call(seL4_CapNull, seL4_MessageInfo_new(CNodeDelete, 0, 0, 2));
    KASSERT_EQ(seL4_MessageInfo_get_label(tag), seL4_InvalidCapability);
    KASSERT_EQ(seL4_MessageInfo_get_length(tag), 1);
    KASSERT_EQ(seL4_GetMR(0), 0);

    /* The same through a wrapper: the error MRs land in the IPC buffer. */
    seL4_SetMR(0, 0xdead);
    seL4_Error err = seL4_CNode_Delete(seL4_CapNull, 5, 64);
    KASSERT_EQ(err, seL4_InvalidCapability);
    KASSERT_EQ(seL4_GetMR(0), 0);

    seL4_RISCV_Page_GetAddress_t ga = seL4_RISCV_Page_GetAddress(seL4_CapNull);
    KASSERT_EQ(ga.error, seL4_InvalidCapability);
    KASSERT_EQ(ga.paddr, 0);
}
