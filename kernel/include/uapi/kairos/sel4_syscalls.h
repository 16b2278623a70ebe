/* seL4's system-call numbers (a7) for an MCS, non-SMP riscv64 build, under
 * libsel4's names (seL4_Syscall_ID in libsel4's generated syscall.h; the
 * debug calls exist in debug builds only). The one home of these numbers:
 * the kernel includes this file (abi.h) and so does the user library
 * (<sel4/syscalls.h>; user/lib/lib.mk adds kernel/include/uapi to its
 * include path). Kairos's own calls are in debug_calls.h. trap.S tests a7
 * for seL4_SysCall (-1) and seL4_SysReplyRecv (-2) before any C code runs;
 * an assembler cannot read an enum, so those two stand there as literals. */
#ifndef KAIROS_UAPI_SEL4_SYSCALLS_H
#define KAIROS_UAPI_SEL4_SYSCALLS_H

typedef enum {
    seL4_SysCall = -1,
    seL4_SysReplyRecv = -2,
    seL4_SysNBSendRecv = -3,
    seL4_SysNBSendWait = -4,
    seL4_SysSend = -5,
    seL4_SysNBSend = -6,
    seL4_SysRecv = -7,
    seL4_SysNBRecv = -8,
    seL4_SysWait = -9,
    seL4_SysNBWait = -10,
    seL4_SysYield = -11,
    seL4_SysDebugPutChar = -12,
    seL4_SysDebugDumpScheduler = -13,
    seL4_SysDebugHalt = -14,
    seL4_SysDebugCapIdentify = -15,
    seL4_SysDebugSnapshot = -16,
    seL4_SysDebugNameThread = -17,
    seL4_SysDebugSendIPI = -18,
} seL4_Syscall_ID;

#endif
