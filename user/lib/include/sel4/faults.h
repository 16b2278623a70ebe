/*
 * Kairos user library: fault messages (libsel4's sel4/faults.h and sel4/arch/faults.h,
 * seL4's src/api/faults.c).
 *
 * A fault arrives at the handler as a message whose label is the fault
 * type and whose MRs follow the *_Msg enums below.  seL4_getFault()
 * captures such a message (after the receive stub has stored MR0-MR3 in
 * the IPC buffer) into a seL4_Fault_t read with the
 * seL4_Fault_<Type>_get_<Field>() accessors.
 */
#ifndef SEL4_FAULTS_H
#define SEL4_FAULTS_H

#include <sel4/types.h>
#include <sel4/functions.h>

enum seL4_Fault_tag {
    seL4_Fault_NullFault = 0,
    seL4_Fault_CapFault = 1,
    seL4_Fault_UnknownSyscall = 2,
    seL4_Fault_UserException = 3,
    seL4_Fault_Timeout = 5,
    seL4_Fault_VMFault = 6,
};
typedef enum seL4_Fault_tag seL4_Fault_tag_t;

typedef enum {
    seL4_VMFault_IP = 0,
    seL4_VMFault_Addr = 1,
    seL4_VMFault_PrefetchFault = 2,
    seL4_VMFault_FSR = 3,
    seL4_VMFault_Length = 4,
} seL4_VMFault_Msg;

typedef enum {
    seL4_UnknownSyscall_FaultIP = 0,
    seL4_UnknownSyscall_SP = 1,
    seL4_UnknownSyscall_RA = 2,
    seL4_UnknownSyscall_A0 = 3,
    seL4_UnknownSyscall_A1 = 4,
    seL4_UnknownSyscall_A2 = 5,
    seL4_UnknownSyscall_A3 = 6,
    seL4_UnknownSyscall_A4 = 7,
    seL4_UnknownSyscall_A5 = 8,
    seL4_UnknownSyscall_A6 = 9,
    seL4_UnknownSyscall_Syscall = 10,
    seL4_UnknownSyscall_Length = 11,
} seL4_UnknownSyscall_Msg;

typedef enum {
    seL4_UserException_FaultIP = 0,
    seL4_UserException_SP = 1,
    seL4_UserException_Number = 2,
    seL4_UserException_Code = 3,
    seL4_UserException_Length = 4,
} seL4_UserException_Msg;

typedef enum {
    seL4_TimeoutReply_FaultIP = 0,
    seL4_TimeoutReply_LR = 1,
    seL4_TimeoutReply_SP = 2,
    seL4_TimeoutReply_GP = 3,
    seL4_TimeoutReply_s0 = 4,
    seL4_TimeoutReply_s1 = 5,
    seL4_TimeoutReply_s2 = 6,
    seL4_TimeoutReply_s3 = 7,
    seL4_TimeoutReply_s4 = 8,
    seL4_TimeoutReply_s5 = 9,
    seL4_TimeoutReply_s6 = 10,
    seL4_TimeoutReply_s7 = 11,
    seL4_TimeoutReply_s8 = 12,
    seL4_TimeoutReply_s9 = 13,
    seL4_TimeoutReply_s10 = 14,
    seL4_TimeoutReply_s11 = 15,
    seL4_TimeoutReply_a0 = 16,
    seL4_TimeoutReply_a1 = 17,
    seL4_TimeoutReply_a2 = 18,
    seL4_TimeoutReply_a3 = 19,
    seL4_TimeoutReply_a4 = 20,
    seL4_TimeoutReply_a5 = 21,
    seL4_TimeoutReply_a6 = 22,
    seL4_TimeoutReply_a7 = 23,
    seL4_TimeoutReply_t0 = 24,
    seL4_TimeoutReply_t1 = 25,
    seL4_TimeoutReply_t2 = 26,
    seL4_TimeoutReply_t3 = 27,
    seL4_TimeoutReply_t4 = 28,
    seL4_TimeoutReply_t5 = 29,
    seL4_TimeoutReply_t6 = 30,
    seL4_TimeoutReply_TP = 31,
    seL4_TimeoutReply_Length = 32,
} seL4_TimeoutReply_Msg;

typedef enum {
    seL4_Timeout_Data = 0,
    seL4_Timeout_Consumed = 1,
    seL4_Timeout_Length = 2,
} seL4_Timeout_Msg;

typedef enum {
    seL4_CapFault_IP = 0,
    seL4_CapFault_Addr = 1,
    seL4_CapFault_InRecvPhase = 2,
    seL4_CapFault_LookupFailureType = 3,
    seL4_CapFault_BitsLeft = 4,
    seL4_CapFault_DepthMismatch_BitsFound = 5,
    seL4_CapFault_GuardMismatch_GuardFound = seL4_CapFault_DepthMismatch_BitsFound,
    seL4_CapFault_GuardMismatch_BitsFound = 6,
} seL4_CapFault_Msg;

/* Classification of a received message by its label. */
LIBSEL4_INLINE_FUNC seL4_Bool seL4_isVMFault_tag(seL4_MessageInfo_t tag)
{
    return seL4_MessageInfo_get_label(tag) == seL4_Fault_VMFault;
}

LIBSEL4_INLINE_FUNC seL4_Bool seL4_isUnknownSyscall_tag(seL4_MessageInfo_t tag)
{
    return seL4_MessageInfo_get_label(tag) == seL4_Fault_UnknownSyscall;
}

LIBSEL4_INLINE_FUNC seL4_Bool seL4_isUserException_tag(seL4_MessageInfo_t tag)
{
    return seL4_MessageInfo_get_label(tag) == seL4_Fault_UserException;
}

LIBSEL4_INLINE_FUNC seL4_Bool seL4_isCapFault_tag(seL4_MessageInfo_t tag)
{
    return seL4_MessageInfo_get_label(tag) == seL4_Fault_CapFault;
}

LIBSEL4_INLINE_FUNC seL4_Bool seL4_isTimeoutFault_tag(seL4_MessageInfo_t tag)
{
    return seL4_MessageInfo_get_label(tag) == seL4_Fault_Timeout;
}

/*
 * A captured fault message: words[0] = fault type, words[1 + i] = MR i.
 * (This layout is private to this library.)
 */
#define KAIROS_FAULT_MAX_MRS 12
typedef struct seL4_Fault {
    seL4_Uint64 words[1 + KAIROS_FAULT_MAX_MRS];
} seL4_Fault_t;

LIBSEL4_INLINE_FUNC seL4_Fault_t seL4_getFault(seL4_MessageInfo_t tag)
{
    seL4_Fault_t f;
    seL4_Uint64 len = seL4_MessageInfo_get_length(tag);
    f.words[0] = seL4_MessageInfo_get_label(tag);
    for (int i = 0; i < KAIROS_FAULT_MAX_MRS; i++) {
        f.words[1 + i] = ((seL4_Uint64)i < len) ? seL4_GetMR(i) : 0;
    }
    return f;
}

LIBSEL4_INLINE_FUNC seL4_Uint64 seL4_Fault_get_seL4_FaultType(seL4_Fault_t f)
{
    return f.words[0];
}

#define KAIROS__FAULT_GET(type, field, mr)                                          \
    LIBSEL4_INLINE_FUNC seL4_Uint64 seL4_Fault_##type##_get_##field(seL4_Fault_t f) \
    {                                                                               \
        return f.words[1 + (mr)];                                                   \
    }

KAIROS__FAULT_GET(CapFault, IP, seL4_CapFault_IP)
KAIROS__FAULT_GET(CapFault, Addr, seL4_CapFault_Addr)
KAIROS__FAULT_GET(CapFault, InRecvPhase, seL4_CapFault_InRecvPhase)
KAIROS__FAULT_GET(CapFault, LookupFailureType, seL4_CapFault_LookupFailureType)
KAIROS__FAULT_GET(CapFault, MR4, seL4_CapFault_BitsLeft)
KAIROS__FAULT_GET(CapFault, MR5, seL4_CapFault_DepthMismatch_BitsFound)
KAIROS__FAULT_GET(CapFault, MR6, seL4_CapFault_GuardMismatch_BitsFound)

KAIROS__FAULT_GET(UnknownSyscall, FaultIP, seL4_UnknownSyscall_FaultIP)
KAIROS__FAULT_GET(UnknownSyscall, SP, seL4_UnknownSyscall_SP)
KAIROS__FAULT_GET(UnknownSyscall, RA, seL4_UnknownSyscall_RA)
KAIROS__FAULT_GET(UnknownSyscall, A0, seL4_UnknownSyscall_A0)
KAIROS__FAULT_GET(UnknownSyscall, A1, seL4_UnknownSyscall_A1)
KAIROS__FAULT_GET(UnknownSyscall, A2, seL4_UnknownSyscall_A2)
KAIROS__FAULT_GET(UnknownSyscall, A3, seL4_UnknownSyscall_A3)
KAIROS__FAULT_GET(UnknownSyscall, A4, seL4_UnknownSyscall_A4)
KAIROS__FAULT_GET(UnknownSyscall, A5, seL4_UnknownSyscall_A5)
KAIROS__FAULT_GET(UnknownSyscall, A6, seL4_UnknownSyscall_A6)
KAIROS__FAULT_GET(UnknownSyscall, Syscall, seL4_UnknownSyscall_Syscall)

KAIROS__FAULT_GET(UserException, FaultIP, seL4_UserException_FaultIP)
KAIROS__FAULT_GET(UserException, Stack, seL4_UserException_SP)
KAIROS__FAULT_GET(UserException, Number, seL4_UserException_Number)
KAIROS__FAULT_GET(UserException, Code, seL4_UserException_Code)

KAIROS__FAULT_GET(Timeout, data, seL4_Timeout_Data)
KAIROS__FAULT_GET(Timeout, consumed, seL4_Timeout_Consumed)

KAIROS__FAULT_GET(VMFault, IP, seL4_VMFault_IP)
KAIROS__FAULT_GET(VMFault, Addr, seL4_VMFault_Addr)
KAIROS__FAULT_GET(VMFault, PrefetchFault, seL4_VMFault_PrefetchFault)
KAIROS__FAULT_GET(VMFault, FSR, seL4_VMFault_FSR)

#undef KAIROS__FAULT_GET

#endif /* SEL4_FAULTS_H */
