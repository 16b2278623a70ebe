/*
 * Kairos user library: seL4 MCS system-call stubs for riscv64.
 *
 * Register convention (libsel4's riscv sel4/arch/syscalls.h):
 *   a7  syscall number        a0  cptr in / badge out
 *   a1  message info in/out   a2-a5  MR0-MR3 in/out
 *   a6  reply object (Recv, NBRecv, ReplyRecv, NBSendRecv) or the
 *       destination of NBSendWait
 *   t0  destination of NBSendRecv
 * The kernel preserves every register a call does not define as output,
 * so each asm statement below lists exactly the registers the call writes
 * as outputs and clobbers nothing else but memory (the IPC buffer).
 */
#ifndef SEL4_SYSCALLS_H
#define SEL4_SYSCALLS_H

#include <sel4/types.h>
#include <sel4/functions.h>

/* seL4_Syscall_ID: the numbers the kernel reads from a7. */
#include <kairos/sel4_syscalls.h>

/* ------------------------------------------------------------------ */
/* Raw register-level primitives (internal). */

/* Send-only: a0, a1, a2-a5 in; nothing written back. */
LIBSEL4_INLINE_FUNC void kairos__sys_send(seL4_Word sys, seL4_Word dest, seL4_Word info,
                                          seL4_Word mr0, seL4_Word mr1, seL4_Word mr2,
                                          seL4_Word mr3)
{
    register seL4_Word r_a0 __asm__("a0") = dest;
    register seL4_Word r_a1 __asm__("a1") = info;
    register seL4_Word r_a2 __asm__("a2") = mr0;
    register seL4_Word r_a3 __asm__("a3") = mr1;
    register seL4_Word r_a4 __asm__("a4") = mr2;
    register seL4_Word r_a5 __asm__("a5") = mr3;
    register seL4_Word r_a7 __asm__("a7") = sys;
    __asm__ volatile("ecall"
                     :
                     : "r"(r_a0), "r"(r_a1), "r"(r_a2), "r"(r_a3), "r"(r_a4), "r"(r_a5),
                       "r"(r_a7)
                     : "memory");
}

/* Send with no message registers (Signal). */
LIBSEL4_INLINE_FUNC void kairos__sys_send_null(seL4_Word sys, seL4_Word dest, seL4_Word info)
{
    register seL4_Word r_a0 __asm__("a0") = dest;
    register seL4_Word r_a1 __asm__("a1") = info;
    register seL4_Word r_a7 __asm__("a7") = sys;
    __asm__ volatile("ecall" : : "r"(r_a0), "r"(r_a1), "r"(r_a7) : "memory");
}

/* Receive-only: a0 src in / badge out, a1 info out (0 in, so a
 * notification receive, which leaves a1 alone, reads as info 0),
 * a2-a5 out, a6 reply in. */
LIBSEL4_INLINE_FUNC void kairos__sys_recv(seL4_Word sys, seL4_Word src, seL4_Word *badge,
                                          seL4_Word *info, seL4_Word *mr0, seL4_Word *mr1,
                                          seL4_Word *mr2, seL4_Word *mr3, seL4_Word reply)
{
    register seL4_Word r_a0 __asm__("a0") = src;
    register seL4_Word r_a1 __asm__("a1") = 0;
    register seL4_Word r_a2 __asm__("a2");
    register seL4_Word r_a3 __asm__("a3");
    register seL4_Word r_a4 __asm__("a4");
    register seL4_Word r_a5 __asm__("a5");
    register seL4_Word r_a6 __asm__("a6") = reply;
    register seL4_Word r_a7 __asm__("a7") = sys;
    __asm__ volatile("ecall"
                     : "+r"(r_a0), "+r"(r_a1), "=r"(r_a2), "=r"(r_a3), "=r"(r_a4),
                       "=r"(r_a5)
                     : "r"(r_a6), "r"(r_a7)
                     : "memory");
    *badge = r_a0;
    *info = r_a1;
    *mr0 = r_a2;
    *mr1 = r_a3;
    *mr2 = r_a4;
    *mr3 = r_a5;
}

/* Send then receive: Call (a6 unused), ReplyRecv (a6 = reply). */
LIBSEL4_INLINE_FUNC void kairos__sys_send_recv(seL4_Word sys, seL4_Word dest, seL4_Word *badge,
                                               seL4_Word *info, seL4_Word *mr0, seL4_Word *mr1,
                                               seL4_Word *mr2, seL4_Word *mr3, seL4_Word reply)
{
    register seL4_Word r_a0 __asm__("a0") = dest;
    register seL4_Word r_a1 __asm__("a1") = *info;
    register seL4_Word r_a2 __asm__("a2") = *mr0;
    register seL4_Word r_a3 __asm__("a3") = *mr1;
    register seL4_Word r_a4 __asm__("a4") = *mr2;
    register seL4_Word r_a5 __asm__("a5") = *mr3;
    register seL4_Word r_a6 __asm__("a6") = reply;
    register seL4_Word r_a7 __asm__("a7") = sys;
    __asm__ volatile("ecall"
                     : "+r"(r_a0), "+r"(r_a1), "+r"(r_a2), "+r"(r_a3), "+r"(r_a4), "+r"(r_a5)
                     : "r"(r_a6), "r"(r_a7)
                     : "memory");
    *badge = r_a0;
    *info = r_a1;
    *mr0 = r_a2;
    *mr1 = r_a3;
    *mr2 = r_a4;
    *mr3 = r_a5;
}

/* Call without a reply register. */
LIBSEL4_INLINE_FUNC void kairos__sys_call(seL4_Word dest, seL4_Word *info, seL4_Word *mr0,
                                          seL4_Word *mr1, seL4_Word *mr2, seL4_Word *mr3)
{
    register seL4_Word r_a0 __asm__("a0") = dest;
    register seL4_Word r_a1 __asm__("a1") = *info;
    register seL4_Word r_a2 __asm__("a2") = *mr0;
    register seL4_Word r_a3 __asm__("a3") = *mr1;
    register seL4_Word r_a4 __asm__("a4") = *mr2;
    register seL4_Word r_a5 __asm__("a5") = *mr3;
    register seL4_Word r_a7 __asm__("a7") = (seL4_Word)seL4_SysCall;
    __asm__ volatile("ecall"
                     : "+r"(r_a0), "+r"(r_a1), "+r"(r_a2), "+r"(r_a3), "+r"(r_a4), "+r"(r_a5)
                     : "r"(r_a7)
                     : "memory");
    *info = r_a1;
    *mr0 = r_a2;
    *mr1 = r_a3;
    *mr2 = r_a4;
    *mr3 = r_a5;
}

/* NBSendRecv: t0 destination, a0 source, a6 reply. */
LIBSEL4_INLINE_FUNC void kairos__sys_nbsend_recv(seL4_Word dest, seL4_Word src, seL4_Word *badge,
                                                 seL4_Word *info, seL4_Word *mr0,
                                                 seL4_Word *mr1, seL4_Word *mr2,
                                                 seL4_Word *mr3, seL4_Word reply)
{
    register seL4_Word r_t0 __asm__("t0") = dest;
    register seL4_Word r_a0 __asm__("a0") = src;
    register seL4_Word r_a1 __asm__("a1") = *info;
    register seL4_Word r_a2 __asm__("a2") = *mr0;
    register seL4_Word r_a3 __asm__("a3") = *mr1;
    register seL4_Word r_a4 __asm__("a4") = *mr2;
    register seL4_Word r_a5 __asm__("a5") = *mr3;
    register seL4_Word r_a6 __asm__("a6") = reply;
    register seL4_Word r_a7 __asm__("a7") = (seL4_Word)seL4_SysNBSendRecv;
    __asm__ volatile("ecall"
                     : "+r"(r_a0), "+r"(r_a1), "+r"(r_a2), "+r"(r_a3), "+r"(r_a4), "+r"(r_a5)
                     : "r"(r_t0), "r"(r_a6), "r"(r_a7)
                     : "memory");
    *badge = r_a0;
    *info = r_a1;
    *mr0 = r_a2;
    *mr1 = r_a3;
    *mr2 = r_a4;
    *mr3 = r_a5;
}

/* NBSendWait: a6 destination, a0 source. */
LIBSEL4_INLINE_FUNC void kairos__sys_nbsend_wait(seL4_Word dest, seL4_Word src, seL4_Word *badge,
                                                 seL4_Word *info, seL4_Word *mr0,
                                                 seL4_Word *mr1, seL4_Word *mr2,
                                                 seL4_Word *mr3)
{
    register seL4_Word r_a0 __asm__("a0") = src;
    register seL4_Word r_a1 __asm__("a1") = *info;
    register seL4_Word r_a2 __asm__("a2") = *mr0;
    register seL4_Word r_a3 __asm__("a3") = *mr1;
    register seL4_Word r_a4 __asm__("a4") = *mr2;
    register seL4_Word r_a5 __asm__("a5") = *mr3;
    register seL4_Word r_a6 __asm__("a6") = dest;
    register seL4_Word r_a7 __asm__("a7") = (seL4_Word)seL4_SysNBSendWait;
    __asm__ volatile("ecall"
                     : "+r"(r_a0), "+r"(r_a1), "+r"(r_a2), "+r"(r_a3), "+r"(r_a4), "+r"(r_a5)
                     : "r"(r_a6), "r"(r_a7)
                     : "memory");
    *badge = r_a0;
    *info = r_a1;
    *mr0 = r_a2;
    *mr1 = r_a3;
    *mr2 = r_a4;
    *mr3 = r_a5;
}

/* No arguments, no results (Yield and several debug calls). */
LIBSEL4_INLINE_FUNC void kairos__sys_null(seL4_Word sys)
{
    register seL4_Word r_a7 __asm__("a7") = sys;
    __asm__ volatile("ecall" : : "r"(r_a7) : "memory");
}

/* Helpers for the *WithMRs variants: an input MR is taken from the
 * pointer only if it is non-null and within the message length. */
LIBSEL4_INLINE_FUNC seL4_Word kairos__mr_in(const seL4_Word *p, seL4_MessageInfo_t info, int i)
{
    return (p != seL4_Null && seL4_MessageInfo_get_length(info) > (seL4_Uint64)i) ? *p : 0;
}

LIBSEL4_INLINE_FUNC void kairos__mr_out(seL4_Word *p, seL4_Word v)
{
    if (p != seL4_Null) {
        *p = v;
    }
}

LIBSEL4_INLINE_FUNC void kairos__store_mrs(seL4_Word m0, seL4_Word m1, seL4_Word m2, seL4_Word m3)
{
    seL4_SetMR(0, m0);
    seL4_SetMR(1, m1);
    seL4_SetMR(2, m2);
    seL4_SetMR(3, m3);
}

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t kairos__info(seL4_Word w)
{
    seL4_MessageInfo_t mi;
    mi.words[0] = w;
    return mi;
}

/* ------------------------------------------------------------------ */
/* Send, NBSend */

LIBSEL4_INLINE_FUNC void seL4_Send(seL4_CPtr dest, seL4_MessageInfo_t msgInfo)
{
    kairos__sys_send((seL4_Word)seL4_SysSend, dest, msgInfo.words[0], seL4_GetMR(0),
                     seL4_GetMR(1), seL4_GetMR(2), seL4_GetMR(3));
}

LIBSEL4_INLINE_FUNC void seL4_SendWithMRs(seL4_CPtr dest, seL4_MessageInfo_t msgInfo,
                                          seL4_Word *mr0, seL4_Word *mr1, seL4_Word *mr2,
                                          seL4_Word *mr3)
{
    kairos__sys_send((seL4_Word)seL4_SysSend, dest, msgInfo.words[0],
                     kairos__mr_in(mr0, msgInfo, 0), kairos__mr_in(mr1, msgInfo, 1),
                     kairos__mr_in(mr2, msgInfo, 2), kairos__mr_in(mr3, msgInfo, 3));
}

LIBSEL4_INLINE_FUNC void seL4_NBSend(seL4_CPtr dest, seL4_MessageInfo_t msgInfo)
{
    kairos__sys_send((seL4_Word)seL4_SysNBSend, dest, msgInfo.words[0], seL4_GetMR(0),
                     seL4_GetMR(1), seL4_GetMR(2), seL4_GetMR(3));
}

LIBSEL4_INLINE_FUNC void seL4_NBSendWithMRs(seL4_CPtr dest, seL4_MessageInfo_t msgInfo,
                                            seL4_Word *mr0, seL4_Word *mr1, seL4_Word *mr2,
                                            seL4_Word *mr3)
{
    kairos__sys_send((seL4_Word)seL4_SysNBSend, dest, msgInfo.words[0],
                     kairos__mr_in(mr0, msgInfo, 0), kairos__mr_in(mr1, msgInfo, 1),
                     kairos__mr_in(mr2, msgInfo, 2), kairos__mr_in(mr3, msgInfo, 3));
}

/* Signal a notification: a Send of an empty message. */
LIBSEL4_INLINE_FUNC void seL4_Signal(seL4_CPtr dest)
{
    kairos__sys_send_null((seL4_Word)seL4_SysSend, dest, seL4_MessageInfo_new(0, 0, 0, 0).words[0]);
}

/* ------------------------------------------------------------------ */
/* Recv, NBRecv, Wait, NBWait, Poll */

#define KAIROS__RECV_BODY(SYS, src, sender, reply)                                  \
    seL4_Word badge_, info_, m0_, m1_, m2_, m3_;                                   \
    kairos__sys_recv((seL4_Word)(SYS), (src), &badge_, &info_, &m0_, &m1_, &m2_, &m3_, \
                     (reply));                                                     \
    kairos__store_mrs(m0_, m1_, m2_, m3_);                                         \
    kairos__mr_out((sender), badge_);                                              \
    return kairos__info(info_)

#define KAIROS__RECV_MRS_BODY(SYS, src, sender, mr0, mr1, mr2, mr3, reply)          \
    seL4_Word badge_, info_, m0_, m1_, m2_, m3_;                                   \
    kairos__sys_recv((seL4_Word)(SYS), (src), &badge_, &info_, &m0_, &m1_, &m2_, &m3_, \
                     (reply));                                                     \
    kairos__mr_out((mr0), m0_);                                                    \
    kairos__mr_out((mr1), m1_);                                                    \
    kairos__mr_out((mr2), m2_);                                                    \
    kairos__mr_out((mr3), m3_);                                                    \
    kairos__mr_out((sender), badge_);                                              \
    return kairos__info(info_)

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_Recv(seL4_CPtr src, seL4_Word *sender, seL4_CPtr reply)
{
    KAIROS__RECV_BODY(seL4_SysRecv, src, sender, reply);
}

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_RecvWithMRs(seL4_CPtr src, seL4_Word *sender,
                                                        seL4_Word *mr0, seL4_Word *mr1,
                                                        seL4_Word *mr2, seL4_Word *mr3,
                                                        seL4_CPtr reply)
{
    KAIROS__RECV_MRS_BODY(seL4_SysRecv, src, sender, mr0, mr1, mr2, mr3, reply);
}

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_NBRecv(seL4_CPtr src, seL4_Word *sender,
                                                   seL4_CPtr reply)
{
    KAIROS__RECV_BODY(seL4_SysNBRecv, src, sender, reply);
}

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_NBRecvWithMRs(seL4_CPtr src, seL4_Word *sender,
                                                          seL4_Word *mr0, seL4_Word *mr1,
                                                          seL4_Word *mr2, seL4_Word *mr3,
                                                          seL4_CPtr reply)
{
    KAIROS__RECV_MRS_BODY(seL4_SysNBRecv, src, sender, mr0, mr1, mr2, mr3, reply);
}

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_Wait(seL4_CPtr src, seL4_Word *sender)
{
    KAIROS__RECV_BODY(seL4_SysWait, src, sender, 0);
}

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_WaitWithMRs(seL4_CPtr src, seL4_Word *sender,
                                                        seL4_Word *mr0, seL4_Word *mr1,
                                                        seL4_Word *mr2, seL4_Word *mr3)
{
    KAIROS__RECV_MRS_BODY(seL4_SysWait, src, sender, mr0, mr1, mr2, mr3, 0);
}

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_NBWait(seL4_CPtr src, seL4_Word *sender)
{
    KAIROS__RECV_BODY(seL4_SysNBWait, src, sender, 0);
}

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_NBWaitWithMRs(seL4_CPtr src, seL4_Word *sender,
                                                          seL4_Word *mr0, seL4_Word *mr1,
                                                          seL4_Word *mr2, seL4_Word *mr3)
{
    KAIROS__RECV_MRS_BODY(seL4_SysNBWait, src, sender, mr0, mr1, mr2, mr3, 0);
}

/* Poll a notification without blocking (MCS: NBWait). */
LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_Poll(seL4_CPtr src, seL4_Word *sender)
{
    return seL4_NBWait(src, sender);
}

#undef KAIROS__RECV_BODY
#undef KAIROS__RECV_MRS_BODY

/* ------------------------------------------------------------------ */
/* Call */

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_Call(seL4_CPtr dest, seL4_MessageInfo_t msgInfo)
{
    seL4_Word info = msgInfo.words[0];
    seL4_Word m0 = seL4_GetMR(0), m1 = seL4_GetMR(1), m2 = seL4_GetMR(2), m3 = seL4_GetMR(3);
    kairos__sys_call(dest, &info, &m0, &m1, &m2, &m3);
    kairos__store_mrs(m0, m1, m2, m3);
    return kairos__info(info);
}

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_CallWithMRs(seL4_CPtr dest, seL4_MessageInfo_t msgInfo,
                                                        seL4_Word *mr0, seL4_Word *mr1,
                                                        seL4_Word *mr2, seL4_Word *mr3)
{
    seL4_Word info = msgInfo.words[0];
    seL4_Word m0 = kairos__mr_in(mr0, msgInfo, 0);
    seL4_Word m1 = kairos__mr_in(mr1, msgInfo, 1);
    seL4_Word m2 = kairos__mr_in(mr2, msgInfo, 2);
    seL4_Word m3 = kairos__mr_in(mr3, msgInfo, 3);
    kairos__sys_call(dest, &info, &m0, &m1, &m2, &m3);
    kairos__mr_out(mr0, m0);
    kairos__mr_out(mr1, m1);
    kairos__mr_out(mr2, m2);
    kairos__mr_out(mr3, m3);
    return kairos__info(info);
}

/* ------------------------------------------------------------------ */
/* ReplyRecv: reply through `reply`, then receive on `src` with it. */

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_ReplyRecv(seL4_CPtr src, seL4_MessageInfo_t msgInfo,
                                                      seL4_Word *sender, seL4_CPtr reply)
{
    seL4_Word badge, info = msgInfo.words[0];
    seL4_Word m0 = seL4_GetMR(0), m1 = seL4_GetMR(1), m2 = seL4_GetMR(2), m3 = seL4_GetMR(3);
    kairos__sys_send_recv((seL4_Word)seL4_SysReplyRecv, src, &badge, &info, &m0, &m1, &m2, &m3,
                          reply);
    kairos__store_mrs(m0, m1, m2, m3);
    kairos__mr_out(sender, badge);
    return kairos__info(info);
}

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_ReplyRecvWithMRs(seL4_CPtr src,
                                                             seL4_MessageInfo_t msgInfo,
                                                             seL4_Word *sender, seL4_Word *mr0,
                                                             seL4_Word *mr1, seL4_Word *mr2,
                                                             seL4_Word *mr3, seL4_CPtr reply)
{
    seL4_Word badge, info = msgInfo.words[0];
    seL4_Word m0 = kairos__mr_in(mr0, msgInfo, 0);
    seL4_Word m1 = kairos__mr_in(mr1, msgInfo, 1);
    seL4_Word m2 = kairos__mr_in(mr2, msgInfo, 2);
    seL4_Word m3 = kairos__mr_in(mr3, msgInfo, 3);
    kairos__sys_send_recv((seL4_Word)seL4_SysReplyRecv, src, &badge, &info, &m0, &m1, &m2, &m3,
                          reply);
    kairos__mr_out(mr0, m0);
    kairos__mr_out(mr1, m1);
    kairos__mr_out(mr2, m2);
    kairos__mr_out(mr3, m3);
    kairos__mr_out(sender, badge);
    return kairos__info(info);
}

/* ------------------------------------------------------------------ */
/* NBSendRecv, NBSendWait */

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_NBSendRecv(seL4_CPtr dest, seL4_MessageInfo_t msgInfo,
                                                       seL4_CPtr src, seL4_Word *sender,
                                                       seL4_CPtr reply)
{
    seL4_Word badge, info = msgInfo.words[0];
    seL4_Word m0 = seL4_GetMR(0), m1 = seL4_GetMR(1), m2 = seL4_GetMR(2), m3 = seL4_GetMR(3);
    kairos__sys_nbsend_recv(dest, src, &badge, &info, &m0, &m1, &m2, &m3, reply);
    kairos__store_mrs(m0, m1, m2, m3);
    kairos__mr_out(sender, badge);
    return kairos__info(info);
}

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_NBSendRecvWithMRs(seL4_CPtr dest,
                                                              seL4_MessageInfo_t msgInfo,
                                                              seL4_CPtr src, seL4_Word *sender,
                                                              seL4_Word *mr0, seL4_Word *mr1,
                                                              seL4_Word *mr2, seL4_Word *mr3,
                                                              seL4_CPtr reply)
{
    seL4_Word badge, info = msgInfo.words[0];
    seL4_Word m0 = kairos__mr_in(mr0, msgInfo, 0);
    seL4_Word m1 = kairos__mr_in(mr1, msgInfo, 1);
    seL4_Word m2 = kairos__mr_in(mr2, msgInfo, 2);
    seL4_Word m3 = kairos__mr_in(mr3, msgInfo, 3);
    kairos__sys_nbsend_recv(dest, src, &badge, &info, &m0, &m1, &m2, &m3, reply);
    kairos__mr_out(mr0, m0);
    kairos__mr_out(mr1, m1);
    kairos__mr_out(mr2, m2);
    kairos__mr_out(mr3, m3);
    kairos__mr_out(sender, badge);
    return kairos__info(info);
}

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_NBSendWait(seL4_CPtr dest, seL4_MessageInfo_t msgInfo,
                                                       seL4_CPtr src, seL4_Word *sender)
{
    seL4_Word badge, info = msgInfo.words[0];
    seL4_Word m0 = seL4_GetMR(0), m1 = seL4_GetMR(1), m2 = seL4_GetMR(2), m3 = seL4_GetMR(3);
    kairos__sys_nbsend_wait(dest, src, &badge, &info, &m0, &m1, &m2, &m3);
    kairos__store_mrs(m0, m1, m2, m3);
    kairos__mr_out(sender, badge);
    return kairos__info(info);
}

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_NBSendWaitWithMRs(seL4_CPtr dest,
                                                              seL4_MessageInfo_t msgInfo,
                                                              seL4_CPtr src, seL4_Word *sender,
                                                              seL4_Word *mr0, seL4_Word *mr1,
                                                              seL4_Word *mr2, seL4_Word *mr3)
{
    seL4_Word badge, info = msgInfo.words[0];
    seL4_Word m0 = kairos__mr_in(mr0, msgInfo, 0);
    seL4_Word m1 = kairos__mr_in(mr1, msgInfo, 1);
    seL4_Word m2 = kairos__mr_in(mr2, msgInfo, 2);
    seL4_Word m3 = kairos__mr_in(mr3, msgInfo, 3);
    kairos__sys_nbsend_wait(dest, src, &badge, &info, &m0, &m1, &m2, &m3);
    kairos__mr_out(mr0, m0);
    kairos__mr_out(mr1, m1);
    kairos__mr_out(mr2, m2);
    kairos__mr_out(mr3, m3);
    kairos__mr_out(sender, badge);
    return kairos__info(info);
}

/* ------------------------------------------------------------------ */
/* Yield */

LIBSEL4_INLINE_FUNC void seL4_Yield(void)
{
    kairos__sys_null((seL4_Word)seL4_SysYield);
}

/* ------------------------------------------------------------------ */
/* Debug system calls (debug and check kernels only). */

#ifdef CONFIG_DEBUG_BUILD

LIBSEL4_INLINE_FUNC void seL4_DebugPutChar(char c)
{
    register seL4_Word r_a0 __asm__("a0") = (seL4_Word)(unsigned char)c;
    register seL4_Word r_a7 __asm__("a7") = (seL4_Word)seL4_SysDebugPutChar;
    __asm__ volatile("ecall" : : "r"(r_a0), "r"(r_a7) : "memory");
}

LIBSEL4_INLINE_FUNC void seL4_DebugPutString(const char *str)
{
    for (; *str != '\0'; str++) {
        seL4_DebugPutChar(*str);
    }
}

LIBSEL4_INLINE_FUNC void seL4_DebugDumpScheduler(void)
{
    kairos__sys_null((seL4_Word)seL4_SysDebugDumpScheduler);
}

LIBSEL4_INLINE_FUNC void seL4_DebugHalt(void)
{
    kairos__sys_null((seL4_Word)seL4_SysDebugHalt);
}

LIBSEL4_INLINE_FUNC void seL4_DebugSnapshot(void)
{
    kairos__sys_null((seL4_Word)seL4_SysDebugSnapshot);
}

/* Returns the capability type tag of `cap` (0 for an empty slot or a
 * failed lookup): seL4's cap_tag_t values (docs/kernel.md "Debug system
 * calls"). */
LIBSEL4_INLINE_FUNC seL4_Uint32 seL4_DebugCapIdentify(seL4_CPtr cap)
{
    register seL4_Word r_a0 __asm__("a0") = cap;
    register seL4_Word r_a7 __asm__("a7") = (seL4_Word)seL4_SysDebugCapIdentify;
    __asm__ volatile("ecall" : "+r"(r_a0) : "r"(r_a7) : "memory");
    return (seL4_Uint32)r_a0;
}

/* Names a thread for kernel diagnostics.  The name travels in the IPC
 * buffer from msg[0] on, NUL-terminated; it is cut to fit. */
LIBSEL4_INLINE_FUNC void seL4_DebugNameThread(seL4_CPtr tcb, const char *name)
{
    char *dst = (char *)&__sel4_ipc_buffer->msg[0];
    seL4_Word max = sizeof(__sel4_ipc_buffer->msg) - 1;
    seL4_Word i = 0;
    for (; i < max && name[i] != '\0'; i++) {
        dst[i] = name[i];
    }
    dst[i] = '\0';
    register seL4_Word r_a0 __asm__("a0") = tcb;
    register seL4_Word r_a7 __asm__("a7") = (seL4_Word)seL4_SysDebugNameThread;
    __asm__ volatile("ecall" : : "r"(r_a0), "r"(r_a7) : "memory");
}

#endif /* CONFIG_DEBUG_BUILD */

#endif /* SEL4_SYSCALLS_H */
