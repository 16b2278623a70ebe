/*
 * Kairos user library: invocation wrappers for every seL4 MCS riscv64
 * object method (libsel4's generated client stubs, 44 of them).
 *
 * Each wrapper is a Call on the service cap with label = invocation
 * label, the listed extra caps in the IPC buffer's caps slots, and the
 * listed words as MR0.. (MR0-MR3 in registers, MR4+ in the IPC buffer).
 * The reply label comes back as seL4_Error.  On error the four register
 * MRs are stored into the IPC buffer so seL4_GetMR(i) reads the error
 * details (e.g. seL4_MappingFailedLookupLevel()).
 */
#ifndef SEL4_CLIENT_H
#define SEL4_CLIENT_H

#include <sel4/types.h>
#include <sel4/errors.h>
#include <sel4/invocation.h>
#include <sel4/syscalls.h>

/* Result structures of the invocations that return values. */
typedef struct seL4_RISCV_Page_GetAddress {
    int error;
    seL4_Word paddr;
} seL4_RISCV_Page_GetAddress_t;

typedef struct seL4_TCB_SetFlags {
    int error;
    seL4_Word flags;
} seL4_TCB_SetFlags_t;

typedef struct seL4_SchedContext_Consumed {
    int error;
    seL4_Time consumed;
} seL4_SchedContext_Consumed_t;

typedef struct seL4_SchedContext_YieldTo {
    int error;
    seL4_Time consumed;
} seL4_SchedContext_YieldTo_t;

/* Perform the Call; on error copy the register MRs to the IPC buffer. */
LIBSEL4_INLINE_FUNC seL4_Error kairos__invoke(seL4_CPtr service, seL4_MessageInfo_t tag,
                                              seL4_Word *m0, seL4_Word *m1, seL4_Word *m2,
                                              seL4_Word *m3)
{
    seL4_MessageInfo_t out = seL4_CallWithMRs(service, tag, m0, m1, m2, m3);
    seL4_Error err = (seL4_Error)seL4_MessageInfo_get_label(out);
    if (err != seL4_NoError) {
        kairos__store_mrs(*m0, *m1, *m2, *m3);
    }
    return err;
}

#define KAIROS__U8(x) ((seL4_Word)(x) & 0xffull)
#define KAIROS__B1(x) ((seL4_Word)(x) & 0x1ull)

/* Which MR of a FailedLookup reply from Page_Map holds the level bits. */
LIBSEL4_INLINE_FUNC seL4_Word seL4_MappingFailedLookupLevel(void)
{
    return seL4_GetMR(SEL4_MAPPING_LOOKUP_LEVEL);
}

/* ================================================================== */
/* RISC-V MMU objects                                                 */

LIBSEL4_INLINE_FUNC seL4_Error seL4_RISCV_PageTable_Map(seL4_RISCV_PageTable _service,
                                                        seL4_RISCV_PageTable vspace,
                                                        seL4_Word vaddr,
                                                        seL4_RISCV_VMAttributes attr)
{
    seL4_Word m0 = vaddr, m1 = (seL4_Word)attr, m2 = 0, m3 = 0;
    seL4_SetCap(0, vspace);
    return kairos__invoke(_service, seL4_MessageInfo_new(RISCVPageTableMap, 0, 1, 2), &m0, &m1,
                          &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_RISCV_PageTable_Unmap(seL4_RISCV_PageTable _service)
{
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    return kairos__invoke(_service, seL4_MessageInfo_new(RISCVPageTableUnmap, 0, 0, 0), &m0, &m1,
                          &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_RISCV_Page_Map(seL4_RISCV_Page _service,
                                                   seL4_RISCV_PageTable vspace, seL4_Word vaddr,
                                                   seL4_CapRights_t rights,
                                                   seL4_RISCV_VMAttributes attr)
{
    seL4_Word m0 = vaddr, m1 = rights.words[0], m2 = (seL4_Word)attr, m3 = 0;
    seL4_SetCap(0, vspace);
    return kairos__invoke(_service, seL4_MessageInfo_new(RISCVPageMap, 0, 1, 3), &m0, &m1, &m2,
                          &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_RISCV_Page_Unmap(seL4_RISCV_Page _service)
{
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    return kairos__invoke(_service, seL4_MessageInfo_new(RISCVPageUnmap, 0, 0, 0), &m0, &m1, &m2,
                          &m3);
}

LIBSEL4_INLINE_FUNC seL4_RISCV_Page_GetAddress_t seL4_RISCV_Page_GetAddress(seL4_RISCV_Page _service)
{
    seL4_RISCV_Page_GetAddress_t r = {0, 0};
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    r.error = (int)kairos__invoke(_service, seL4_MessageInfo_new(RISCVPageGetAddress, 0, 0, 0),
                                  &m0, &m1, &m2, &m3);
    if (r.error == seL4_NoError) {
        r.paddr = m0;
    }
    return r;
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_RISCV_ASIDControl_MakePool(seL4_RISCV_ASIDControl _service,
                                                               seL4_Untyped untyped,
                                                               seL4_CNode root, seL4_Word index,
                                                               seL4_Uint8 depth)
{
    seL4_Word m0 = index, m1 = KAIROS__U8(depth), m2 = 0, m3 = 0;
    seL4_SetCap(0, untyped);
    seL4_SetCap(1, root);
    return kairos__invoke(_service, seL4_MessageInfo_new(RISCVASIDControlMakePool, 0, 2, 2), &m0,
                          &m1, &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_RISCV_ASIDPool_Assign(seL4_RISCV_ASIDPool _service,
                                                          seL4_CPtr vspace)
{
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    seL4_SetCap(0, vspace);
    return kairos__invoke(_service, seL4_MessageInfo_new(RISCVASIDPoolAssign, 0, 1, 0), &m0, &m1,
                          &m2, &m3);
}

/* ================================================================== */
/* IRQs                                                               */

LIBSEL4_INLINE_FUNC seL4_Error seL4_IRQControl_GetTrigger(seL4_IRQControl _service, seL4_Word irq,
                                                          seL4_Word trigger, seL4_CNode root,
                                                          seL4_Word index, seL4_Uint8 depth)
{
    seL4_Word m0 = irq, m1 = trigger, m2 = index, m3 = KAIROS__U8(depth);
    seL4_SetCap(0, root);
    return kairos__invoke(_service, seL4_MessageInfo_new(RISCVIRQIssueIRQHandlerTrigger, 0, 1, 4),
                          &m0, &m1, &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_IRQControl_Get(seL4_IRQControl _service, seL4_Word irq,
                                                   seL4_CNode root, seL4_Word index,
                                                   seL4_Uint8 depth)
{
    seL4_Word m0 = irq, m1 = index, m2 = KAIROS__U8(depth), m3 = 0;
    seL4_SetCap(0, root);
    return kairos__invoke(_service, seL4_MessageInfo_new(IRQIssueIRQHandler, 0, 1, 3), &m0, &m1,
                          &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_IRQHandler_Ack(seL4_IRQHandler _service)
{
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    return kairos__invoke(_service, seL4_MessageInfo_new(IRQAckIRQ, 0, 0, 0), &m0, &m1, &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_IRQHandler_SetNotification(seL4_IRQHandler _service,
                                                               seL4_CPtr notification)
{
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    seL4_SetCap(0, notification);
    return kairos__invoke(_service, seL4_MessageInfo_new(IRQSetIRQHandler, 0, 1, 0), &m0, &m1,
                          &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_IRQHandler_Clear(seL4_IRQHandler _service)
{
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    return kairos__invoke(_service, seL4_MessageInfo_new(IRQClearIRQHandler, 0, 0, 0), &m0, &m1,
                          &m2, &m3);
}

/* ================================================================== */
/* Untyped                                                            */

LIBSEL4_INLINE_FUNC seL4_Error seL4_Untyped_Retype(seL4_Untyped _service, seL4_Word type,
                                                   seL4_Word size_bits, seL4_CNode root,
                                                   seL4_Word node_index, seL4_Word node_depth,
                                                   seL4_Word node_offset, seL4_Word num_objects)
{
    seL4_Word m0 = type, m1 = size_bits, m2 = node_index, m3 = node_depth;
    seL4_SetCap(0, root);
    seL4_SetMR(4, node_offset);
    seL4_SetMR(5, num_objects);
    return kairos__invoke(_service, seL4_MessageInfo_new(UntypedRetype, 0, 1, 6), &m0, &m1, &m2,
                          &m3);
}

/* ================================================================== */
/* TCB                                                                */

LIBSEL4_INLINE_FUNC seL4_Error seL4_TCB_ReadRegisters(seL4_TCB _service, seL4_Bool suspend_source,
                                                      seL4_Uint8 arch_flags, seL4_Word count,
                                                      seL4_UserContext *regs)
{
    seL4_Word m0 = KAIROS__B1(suspend_source) | (KAIROS__U8(arch_flags) << 8);
    seL4_Word m1 = count, m2 = 0, m3 = 0;
    seL4_Error err = kairos__invoke(_service, seL4_MessageInfo_new(TCBReadRegisters, 0, 0, 2), &m0,
                                    &m1, &m2, &m3);
    if (err != seL4_NoError) {
        return err;
    }
    regs->pc = m0;
    regs->ra = m1;
    regs->sp = m2;
    regs->gp = m3;
    regs->s0 = seL4_GetMR(4);
    regs->s1 = seL4_GetMR(5);
    regs->s2 = seL4_GetMR(6);
    regs->s3 = seL4_GetMR(7);
    regs->s4 = seL4_GetMR(8);
    regs->s5 = seL4_GetMR(9);
    regs->s6 = seL4_GetMR(10);
    regs->s7 = seL4_GetMR(11);
    regs->s8 = seL4_GetMR(12);
    regs->s9 = seL4_GetMR(13);
    regs->s10 = seL4_GetMR(14);
    regs->s11 = seL4_GetMR(15);
    regs->a0 = seL4_GetMR(16);
    regs->a1 = seL4_GetMR(17);
    regs->a2 = seL4_GetMR(18);
    regs->a3 = seL4_GetMR(19);
    regs->a4 = seL4_GetMR(20);
    regs->a5 = seL4_GetMR(21);
    regs->a6 = seL4_GetMR(22);
    regs->a7 = seL4_GetMR(23);
    regs->t0 = seL4_GetMR(24);
    regs->t1 = seL4_GetMR(25);
    regs->t2 = seL4_GetMR(26);
    regs->t3 = seL4_GetMR(27);
    regs->t4 = seL4_GetMR(28);
    regs->t5 = seL4_GetMR(29);
    regs->t6 = seL4_GetMR(30);
    regs->tp = seL4_GetMR(31);
    return err;
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_TCB_WriteRegisters(seL4_TCB _service, seL4_Bool resume_target,
                                                       seL4_Uint8 arch_flags, seL4_Word count,
                                                       seL4_UserContext *regs)
{
    seL4_Word m0 = KAIROS__B1(resume_target) | (KAIROS__U8(arch_flags) << 8);
    seL4_Word m1 = count, m2 = regs->pc, m3 = regs->ra;
    seL4_SetMR(4, regs->sp);
    seL4_SetMR(5, regs->gp);
    seL4_SetMR(6, regs->s0);
    seL4_SetMR(7, regs->s1);
    seL4_SetMR(8, regs->s2);
    seL4_SetMR(9, regs->s3);
    seL4_SetMR(10, regs->s4);
    seL4_SetMR(11, regs->s5);
    seL4_SetMR(12, regs->s6);
    seL4_SetMR(13, regs->s7);
    seL4_SetMR(14, regs->s8);
    seL4_SetMR(15, regs->s9);
    seL4_SetMR(16, regs->s10);
    seL4_SetMR(17, regs->s11);
    seL4_SetMR(18, regs->a0);
    seL4_SetMR(19, regs->a1);
    seL4_SetMR(20, regs->a2);
    seL4_SetMR(21, regs->a3);
    seL4_SetMR(22, regs->a4);
    seL4_SetMR(23, regs->a5);
    seL4_SetMR(24, regs->a6);
    seL4_SetMR(25, regs->a7);
    seL4_SetMR(26, regs->t0);
    seL4_SetMR(27, regs->t1);
    seL4_SetMR(28, regs->t2);
    seL4_SetMR(29, regs->t3);
    seL4_SetMR(30, regs->t4);
    seL4_SetMR(31, regs->t5);
    seL4_SetMR(32, regs->t6);
    seL4_SetMR(33, regs->tp);
    return kairos__invoke(_service, seL4_MessageInfo_new(TCBWriteRegisters, 0, 0, 34), &m0, &m1,
                          &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_TCB_CopyRegisters(seL4_TCB _service, seL4_TCB source,
                                                      seL4_Bool suspend_source,
                                                      seL4_Bool resume_target,
                                                      seL4_Bool transfer_frame,
                                                      seL4_Bool transfer_integer,
                                                      seL4_Uint8 arch_flags)
{
    seL4_Word m0 = KAIROS__B1(suspend_source) | (KAIROS__B1(resume_target) << 1) |
                   (KAIROS__B1(transfer_frame) << 2) | (KAIROS__B1(transfer_integer) << 3) |
                   (KAIROS__U8(arch_flags) << 8);
    seL4_Word m1 = 0, m2 = 0, m3 = 0;
    seL4_SetCap(0, source);
    return kairos__invoke(_service, seL4_MessageInfo_new(TCBCopyRegisters, 0, 1, 1), &m0, &m1,
                          &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_TCB_Configure(seL4_TCB _service, seL4_CNode cspace_root,
                                                  seL4_Word cspace_root_data,
                                                  seL4_CPtr vspace_root,
                                                  seL4_Word vspace_root_data, seL4_Word buffer,
                                                  seL4_CPtr bufferFrame)
{
    seL4_Word m0 = cspace_root_data, m1 = vspace_root_data, m2 = buffer, m3 = 0;
    seL4_SetCap(0, cspace_root);
    seL4_SetCap(1, vspace_root);
    seL4_SetCap(2, bufferFrame);
    return kairos__invoke(_service, seL4_MessageInfo_new(TCBConfigure, 0, 3, 3), &m0, &m1, &m2,
                          &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_TCB_SetPriority(seL4_TCB _service, seL4_TCB authority,
                                                    seL4_Word priority)
{
    seL4_Word m0 = priority, m1 = 0, m2 = 0, m3 = 0;
    seL4_SetCap(0, authority);
    return kairos__invoke(_service, seL4_MessageInfo_new(TCBSetPriority, 0, 1, 1), &m0, &m1, &m2,
                          &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_TCB_SetMCPriority(seL4_TCB _service, seL4_TCB authority,
                                                      seL4_Word mcp)
{
    seL4_Word m0 = mcp, m1 = 0, m2 = 0, m3 = 0;
    seL4_SetCap(0, authority);
    return kairos__invoke(_service, seL4_MessageInfo_new(TCBSetMCPriority, 0, 1, 1), &m0, &m1,
                          &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_TCB_SetSchedParams(seL4_TCB _service, seL4_TCB authority,
                                                       seL4_Word mcp, seL4_Word priority,
                                                       seL4_CPtr sched_context,
                                                       seL4_CPtr fault_ep)
{
    seL4_Word m0 = mcp, m1 = priority, m2 = 0, m3 = 0;
    seL4_SetCap(0, authority);
    seL4_SetCap(1, sched_context);
    seL4_SetCap(2, fault_ep);
    return kairos__invoke(_service, seL4_MessageInfo_new(TCBSetSchedParams, 0, 3, 2), &m0, &m1,
                          &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_TCB_SetTimeoutEndpoint(seL4_TCB _service,
                                                           seL4_CPtr timeout_fault_ep)
{
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    seL4_SetCap(0, timeout_fault_ep);
    return kairos__invoke(_service, seL4_MessageInfo_new(TCBSetTimeoutEndpoint, 0, 1, 0), &m0,
                          &m1, &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_TCB_SetIPCBuffer(seL4_TCB _service, seL4_Word buffer,
                                                     seL4_CPtr bufferFrame)
{
    seL4_Word m0 = buffer, m1 = 0, m2 = 0, m3 = 0;
    seL4_SetCap(0, bufferFrame);
    return kairos__invoke(_service, seL4_MessageInfo_new(TCBSetIPCBuffer, 0, 1, 1), &m0, &m1, &m2,
                          &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_TCB_SetSpace(seL4_TCB _service, seL4_CPtr fault_ep,
                                                 seL4_CNode cspace_root,
                                                 seL4_Word cspace_root_data,
                                                 seL4_CPtr vspace_root,
                                                 seL4_Word vspace_root_data)
{
    seL4_Word m0 = cspace_root_data, m1 = vspace_root_data, m2 = 0, m3 = 0;
    seL4_SetCap(0, fault_ep);
    seL4_SetCap(1, cspace_root);
    seL4_SetCap(2, vspace_root);
    return kairos__invoke(_service, seL4_MessageInfo_new(TCBSetSpace, 0, 3, 2), &m0, &m1, &m2,
                          &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_TCB_Suspend(seL4_TCB _service)
{
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    return kairos__invoke(_service, seL4_MessageInfo_new(TCBSuspend, 0, 0, 0), &m0, &m1, &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_TCB_Resume(seL4_TCB _service)
{
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    return kairos__invoke(_service, seL4_MessageInfo_new(TCBResume, 0, 0, 0), &m0, &m1, &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_TCB_BindNotification(seL4_TCB _service,
                                                         seL4_CPtr notification)
{
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    seL4_SetCap(0, notification);
    return kairos__invoke(_service, seL4_MessageInfo_new(TCBBindNotification, 0, 1, 0), &m0, &m1,
                          &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_TCB_UnbindNotification(seL4_TCB _service)
{
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    return kairos__invoke(_service, seL4_MessageInfo_new(TCBUnbindNotification, 0, 0, 0), &m0,
                          &m1, &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_TCB_SetTLSBase(seL4_TCB _service, seL4_Word tls_base)
{
    seL4_Word m0 = tls_base, m1 = 0, m2 = 0, m3 = 0;
    return kairos__invoke(_service, seL4_MessageInfo_new(TCBSetTLSBase, 0, 0, 1), &m0, &m1, &m2,
                          &m3);
}

LIBSEL4_INLINE_FUNC seL4_TCB_SetFlags_t seL4_TCB_SetFlags(seL4_TCB _service, seL4_Word clear,
                                                          seL4_Word set)
{
    seL4_TCB_SetFlags_t r = {0, 0};
    seL4_Word m0 = clear, m1 = set, m2 = 0, m3 = 0;
    r.error = (int)kairos__invoke(_service, seL4_MessageInfo_new(TCBSetFlags, 0, 0, 2), &m0, &m1,
                                  &m2, &m3);
    if (r.error == seL4_NoError) {
        r.flags = m0;
    }
    return r;
}

/* ================================================================== */
/* CNode                                                              */

LIBSEL4_INLINE_FUNC seL4_Error seL4_CNode_Revoke(seL4_CNode _service, seL4_Word index,
                                                 seL4_Uint8 depth)
{
    seL4_Word m0 = index, m1 = KAIROS__U8(depth), m2 = 0, m3 = 0;
    return kairos__invoke(_service, seL4_MessageInfo_new(CNodeRevoke, 0, 0, 2), &m0, &m1, &m2,
                          &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_CNode_Delete(seL4_CNode _service, seL4_Word index,
                                                 seL4_Uint8 depth)
{
    seL4_Word m0 = index, m1 = KAIROS__U8(depth), m2 = 0, m3 = 0;
    return kairos__invoke(_service, seL4_MessageInfo_new(CNodeDelete, 0, 0, 2), &m0, &m1, &m2,
                          &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_CNode_CancelBadgedSends(seL4_CNode _service, seL4_Word index,
                                                            seL4_Uint8 depth)
{
    seL4_Word m0 = index, m1 = KAIROS__U8(depth), m2 = 0, m3 = 0;
    return kairos__invoke(_service, seL4_MessageInfo_new(CNodeCancelBadgedSends, 0, 0, 2), &m0,
                          &m1, &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_CNode_Copy(seL4_CNode _service, seL4_Word dest_index,
                                               seL4_Uint8 dest_depth, seL4_CNode src_root,
                                               seL4_Word src_index, seL4_Uint8 src_depth,
                                               seL4_CapRights_t rights)
{
    seL4_Word m0 = dest_index, m1 = KAIROS__U8(dest_depth), m2 = src_index,
              m3 = KAIROS__U8(src_depth);
    seL4_SetCap(0, src_root);
    seL4_SetMR(4, rights.words[0]);
    return kairos__invoke(_service, seL4_MessageInfo_new(CNodeCopy, 0, 1, 5), &m0, &m1, &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_CNode_Mint(seL4_CNode _service, seL4_Word dest_index,
                                               seL4_Uint8 dest_depth, seL4_CNode src_root,
                                               seL4_Word src_index, seL4_Uint8 src_depth,
                                               seL4_CapRights_t rights, seL4_Word badge)
{
    seL4_Word m0 = dest_index, m1 = KAIROS__U8(dest_depth), m2 = src_index,
              m3 = KAIROS__U8(src_depth);
    seL4_SetCap(0, src_root);
    seL4_SetMR(4, rights.words[0]);
    seL4_SetMR(5, badge);
    return kairos__invoke(_service, seL4_MessageInfo_new(CNodeMint, 0, 1, 6), &m0, &m1, &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_CNode_Move(seL4_CNode _service, seL4_Word dest_index,
                                               seL4_Uint8 dest_depth, seL4_CNode src_root,
                                               seL4_Word src_index, seL4_Uint8 src_depth)
{
    seL4_Word m0 = dest_index, m1 = KAIROS__U8(dest_depth), m2 = src_index,
              m3 = KAIROS__U8(src_depth);
    seL4_SetCap(0, src_root);
    return kairos__invoke(_service, seL4_MessageInfo_new(CNodeMove, 0, 1, 4), &m0, &m1, &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_CNode_Mutate(seL4_CNode _service, seL4_Word dest_index,
                                                 seL4_Uint8 dest_depth, seL4_CNode src_root,
                                                 seL4_Word src_index, seL4_Uint8 src_depth,
                                                 seL4_Word badge)
{
    seL4_Word m0 = dest_index, m1 = KAIROS__U8(dest_depth), m2 = src_index,
              m3 = KAIROS__U8(src_depth);
    seL4_SetCap(0, src_root);
    seL4_SetMR(4, badge);
    return kairos__invoke(_service, seL4_MessageInfo_new(CNodeMutate, 0, 1, 5), &m0, &m1, &m2,
                          &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_CNode_Rotate(seL4_CNode _service, seL4_Word dest_index,
                                                 seL4_Uint8 dest_depth, seL4_Word dest_badge,
                                                 seL4_CNode pivot_root, seL4_Word pivot_index,
                                                 seL4_Uint8 pivot_depth, seL4_Word pivot_badge,
                                                 seL4_CNode src_root, seL4_Word src_index,
                                                 seL4_Uint8 src_depth)
{
    seL4_Word m0 = dest_index, m1 = KAIROS__U8(dest_depth), m2 = dest_badge, m3 = pivot_index;
    seL4_SetCap(0, pivot_root);
    seL4_SetCap(1, src_root);
    seL4_SetMR(4, KAIROS__U8(pivot_depth));
    seL4_SetMR(5, pivot_badge);
    seL4_SetMR(6, src_index);
    seL4_SetMR(7, KAIROS__U8(src_depth));
    return kairos__invoke(_service, seL4_MessageInfo_new(CNodeRotate, 0, 2, 8), &m0, &m1, &m2,
                          &m3);
}

/* ================================================================== */
/* Domains                                                            */

LIBSEL4_INLINE_FUNC seL4_Error seL4_DomainSet_Set(seL4_DomainSet _service, seL4_Uint8 domain,
                                                  seL4_TCB thread)
{
    seL4_Word m0 = KAIROS__U8(domain), m1 = 0, m2 = 0, m3 = 0;
    seL4_SetCap(0, thread);
    return kairos__invoke(_service, seL4_MessageInfo_new(DomainSetSet, 0, 1, 1), &m0, &m1, &m2,
                          &m3);
}

/* ================================================================== */
/* Scheduling control and scheduling contexts (MCS)                   */

LIBSEL4_INLINE_FUNC seL4_Error seL4_SchedControl_ConfigureFlags(seL4_SchedControl _service,
                                                                seL4_SchedContext schedcontext,
                                                                seL4_Time budget,
                                                                seL4_Time period,
                                                                seL4_Word extra_refills,
                                                                seL4_Word badge, seL4_Word flags)
{
    seL4_Word m0 = budget, m1 = period, m2 = extra_refills, m3 = badge;
    seL4_SetCap(0, schedcontext);
    seL4_SetMR(4, flags);
    return kairos__invoke(_service, seL4_MessageInfo_new(SchedControlConfigureFlags, 0, 1, 5), &m0,
                          &m1, &m2, &m3);
}

/* ConfigureFlags with no flags (not sporadic). */
LIBSEL4_INLINE_FUNC seL4_Error seL4_SchedControl_Configure(seL4_SchedControl _service,
                                                           seL4_SchedContext schedcontext,
                                                           seL4_Time budget, seL4_Time period,
                                                           seL4_Word extra_refills,
                                                           seL4_Word badge)
{
    return seL4_SchedControl_ConfigureFlags(_service, schedcontext, budget, period,
                                            extra_refills, badge, seL4_SchedContext_NoFlag);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_SchedContext_Bind(seL4_SchedContext _service, seL4_CPtr cap)
{
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    seL4_SetCap(0, cap);
    return kairos__invoke(_service, seL4_MessageInfo_new(SchedContextBind, 0, 1, 0), &m0, &m1,
                          &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_SchedContext_Unbind(seL4_SchedContext _service)
{
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    return kairos__invoke(_service, seL4_MessageInfo_new(SchedContextUnbind, 0, 0, 0), &m0, &m1,
                          &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_Error seL4_SchedContext_UnbindObject(seL4_SchedContext _service,
                                                              seL4_CPtr cap)
{
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    seL4_SetCap(0, cap);
    return kairos__invoke(_service, seL4_MessageInfo_new(SchedContextUnbindObject, 0, 1, 0), &m0,
                          &m1, &m2, &m3);
}

LIBSEL4_INLINE_FUNC seL4_SchedContext_Consumed_t
seL4_SchedContext_Consumed(seL4_SchedContext _service)
{
    seL4_SchedContext_Consumed_t r = {0, 0};
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    r.error = (int)kairos__invoke(_service, seL4_MessageInfo_new(SchedContextConsumed, 0, 0, 0),
                                  &m0, &m1, &m2, &m3);
    if (r.error == seL4_NoError) {
        r.consumed = m0;
    }
    return r;
}

LIBSEL4_INLINE_FUNC seL4_SchedContext_YieldTo_t
seL4_SchedContext_YieldTo(seL4_SchedContext _service)
{
    seL4_SchedContext_YieldTo_t r = {0, 0};
    seL4_Word m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    r.error = (int)kairos__invoke(_service, seL4_MessageInfo_new(SchedContextYieldTo, 0, 0, 0),
                                  &m0, &m1, &m2, &m3);
    if (r.error == seL4_NoError) {
        r.consumed = m0;
    }
    return r;
}

#undef KAIROS__U8
#undef KAIROS__B1

#endif /* SEL4_CLIENT_H */
