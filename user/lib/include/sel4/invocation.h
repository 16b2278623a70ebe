/* Kairos user library: invocation labels (libsel4's generated invocation enums, MCS riscv64). */
#ifndef SEL4_INVOCATION_H
#define SEL4_INVOCATION_H

enum invocation_label {
    InvalidInvocation = 0,
    UntypedRetype = 1,
    TCBReadRegisters = 2,
    TCBWriteRegisters = 3,
    TCBCopyRegisters = 4,
    TCBConfigure = 5,
    TCBSetPriority = 6,
    TCBSetMCPriority = 7,
    TCBSetSchedParams = 8,
    TCBSetTimeoutEndpoint = 9,
    TCBSetIPCBuffer = 10,
    TCBSetSpace = 11,
    TCBSuspend = 12,
    TCBResume = 13,
    TCBBindNotification = 14,
    TCBUnbindNotification = 15,
    TCBSetTLSBase = 16,
    TCBSetFlags = 17,
    CNodeRevoke = 18,
    CNodeDelete = 19,
    CNodeCancelBadgedSends = 20,
    CNodeCopy = 21,
    CNodeMint = 22,
    CNodeMove = 23,
    CNodeMutate = 24,
    CNodeRotate = 25,
    IRQIssueIRQHandler = 26,
    IRQAckIRQ = 27,
    IRQSetIRQHandler = 28,
    IRQClearIRQHandler = 29,
    DomainSetSet = 30,
    SchedControlConfigureFlags = 31,
    SchedContextBind = 32,
    SchedContextUnbind = 33,
    SchedContextUnbindObject = 34,
    SchedContextConsumed = 35,
    SchedContextYieldTo = 36,
    nInvocationLabels = 37,
};

enum sel4_arch_invocation_label {
    nSeL4ArchInvocationLabels = nInvocationLabels,
};

enum arch_invocation_label {
    RISCVPageTableMap = nSeL4ArchInvocationLabels,
    RISCVPageTableUnmap = 38,
    RISCVPageMap = 39,
    RISCVPageUnmap = 40,
    RISCVPageGetAddress = 41,
    RISCVASIDControlMakePool = 42,
    RISCVASIDPoolAssign = 43,
    RISCVIRQIssueIRQHandlerTrigger = 44,
    nArchInvocationLabels = 45,
};

#endif /* SEL4_INVOCATION_H */
