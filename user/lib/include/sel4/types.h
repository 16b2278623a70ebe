/*
 * Kairos user library: seL4 API types (MCS, riscv64).
 *
 * Layouts follow libsel4's sel4/shared_types.h and the generated
 * bitfield word formats (sel4/shared_types_gen.h); the offsets are checked at compile time below.
 */
#ifndef SEL4_TYPES_H
#define SEL4_TYPES_H

#include <sel4/simple_types.h>
#include <sel4/config.h>

typedef seL4_Uint64 seL4_Word;
typedef seL4_Word seL4_CPtr;
typedef seL4_Word seL4_NodeId;
typedef seL4_Word seL4_PAddr;
typedef seL4_Word seL4_Domain;
typedef seL4_Word seL4_SlotPos;
typedef seL4_Uint64 seL4_Time;

/* Capability handle types: every one is a cptr. */
typedef seL4_CPtr seL4_CNode;
typedef seL4_CPtr seL4_IRQHandler;
typedef seL4_CPtr seL4_IRQControl;
typedef seL4_CPtr seL4_TCB;
typedef seL4_CPtr seL4_Untyped;
typedef seL4_CPtr seL4_DomainSet;
typedef seL4_CPtr seL4_SchedContext;
typedef seL4_CPtr seL4_SchedControl;
typedef seL4_CPtr seL4_RISCV_Page;
typedef seL4_CPtr seL4_RISCV_PageTable;
typedef seL4_CPtr seL4_RISCV_ASIDControl;
typedef seL4_CPtr seL4_RISCV_ASIDPool;

/* ------------------------------------------------------------------ */
/* Message info word: label 63..12, capsUnwrapped 11..9, extraCaps 8..7,
 * length 6..0. */

typedef struct seL4_MessageInfo {
    seL4_Uint64 words[1];
} seL4_MessageInfo_t;

#define SEL4__MI_LABEL_SHIFT 12
#define SEL4__MI_LABEL_MASK 0xfffffffffffffull /* 52 bits */
#define SEL4__MI_UNWRAPPED_SHIFT 9
#define SEL4__MI_UNWRAPPED_MASK 0x7ull
#define SEL4__MI_EXTRACAPS_SHIFT 7
#define SEL4__MI_EXTRACAPS_MASK 0x3ull
#define SEL4__MI_LENGTH_SHIFT 0
#define SEL4__MI_LENGTH_MASK 0x7full

LIBSEL4_INLINE_FUNC seL4_MessageInfo_t
seL4_MessageInfo_new(seL4_Uint64 label, seL4_Uint64 capsUnwrapped,
                     seL4_Uint64 extraCaps, seL4_Uint64 length)
{
    seL4_MessageInfo_t mi;
    mi.words[0] = ((label & SEL4__MI_LABEL_MASK) << SEL4__MI_LABEL_SHIFT) |
                  ((capsUnwrapped & SEL4__MI_UNWRAPPED_MASK) << SEL4__MI_UNWRAPPED_SHIFT) |
                  ((extraCaps & SEL4__MI_EXTRACAPS_MASK) << SEL4__MI_EXTRACAPS_SHIFT) |
                  ((length & SEL4__MI_LENGTH_MASK) << SEL4__MI_LENGTH_SHIFT);
    return mi;
}

#define SEL4__MI_FIELD(name, SHIFT, MASK)                                            \
    LIBSEL4_INLINE_FUNC seL4_Uint64 seL4_MessageInfo_get_##name(seL4_MessageInfo_t mi) \
    {                                                                                \
        return (mi.words[0] >> (SHIFT)) & (MASK);                                    \
    }                                                                                \
    LIBSEL4_INLINE_FUNC seL4_MessageInfo_t seL4_MessageInfo_set_##name(              \
        seL4_MessageInfo_t mi, seL4_Uint64 v)                                        \
    {                                                                                \
        mi.words[0] = (mi.words[0] & ~((seL4_Uint64)(MASK) << (SHIFT))) |            \
                      ((v & (MASK)) << (SHIFT));                                     \
        return mi;                                                                   \
    }                                                                                \
    LIBSEL4_INLINE_FUNC seL4_Uint64 seL4_MessageInfo_ptr_get_##name(                 \
        const seL4_MessageInfo_t *mi)                                                \
    {                                                                                \
        return (mi->words[0] >> (SHIFT)) & (MASK);                                   \
    }                                                                                \
    LIBSEL4_INLINE_FUNC void seL4_MessageInfo_ptr_set_##name(seL4_MessageInfo_t *mi,  \
                                                             seL4_Uint64 v)         \
    {                                                                                \
        mi->words[0] = (mi->words[0] & ~((seL4_Uint64)(MASK) << (SHIFT))) |          \
                       ((v & (MASK)) << (SHIFT));                                    \
    }

SEL4__MI_FIELD(label, SEL4__MI_LABEL_SHIFT, SEL4__MI_LABEL_MASK)
SEL4__MI_FIELD(capsUnwrapped, SEL4__MI_UNWRAPPED_SHIFT, SEL4__MI_UNWRAPPED_MASK)
SEL4__MI_FIELD(extraCaps, SEL4__MI_EXTRACAPS_SHIFT, SEL4__MI_EXTRACAPS_MASK)
SEL4__MI_FIELD(length, SEL4__MI_LENGTH_SHIFT, SEL4__MI_LENGTH_MASK)

#undef SEL4__MI_FIELD

/* ------------------------------------------------------------------ */
/* Capability rights word: write bit 0, read bit 1, grant bit 2,
 * grant-reply bit 3. */

typedef struct seL4_CapRights {
    seL4_Uint64 words[1];
} seL4_CapRights_t;

LIBSEL4_INLINE_FUNC seL4_CapRights_t
seL4_CapRights_new(seL4_Uint64 capAllowGrantReply, seL4_Uint64 capAllowGrant,
                   seL4_Uint64 capAllowRead, seL4_Uint64 capAllowWrite)
{
    seL4_CapRights_t r;
    r.words[0] = ((capAllowGrantReply & 1ull) << 3) | ((capAllowGrant & 1ull) << 2) |
                 ((capAllowRead & 1ull) << 1) | (capAllowWrite & 1ull);
    return r;
}

#define SEL4__RIGHTS_FIELD(name, BIT)                                                  \
    LIBSEL4_INLINE_FUNC seL4_Uint64 seL4_CapRights_get_##name(seL4_CapRights_t r)       \
    {                                                                                  \
        return (r.words[0] >> (BIT)) & 1ull;                                           \
    }                                                                                  \
    LIBSEL4_INLINE_FUNC seL4_CapRights_t seL4_CapRights_set_##name(seL4_CapRights_t r,  \
                                                                   seL4_Uint64 v)      \
    {                                                                                  \
        r.words[0] = (r.words[0] & ~(1ull << (BIT))) | ((v & 1ull) << (BIT));          \
        return r;                                                                      \
    }

SEL4__RIGHTS_FIELD(capAllowWrite, 0)
SEL4__RIGHTS_FIELD(capAllowRead, 1)
SEL4__RIGHTS_FIELD(capAllowGrant, 2)
SEL4__RIGHTS_FIELD(capAllowGrantReply, 3)

#undef SEL4__RIGHTS_FIELD

#define seL4_AllRights seL4_CapRights_new(1, 1, 1, 1)
#define seL4_CanRead seL4_CapRights_new(0, 0, 1, 0)
#define seL4_CanWrite seL4_CapRights_new(0, 0, 0, 1)
#define seL4_CanGrant seL4_CapRights_new(0, 1, 0, 0)
#define seL4_CanGrantReply seL4_CapRights_new(1, 0, 0, 0)
#define seL4_NoWrite seL4_CapRights_new(1, 1, 1, 0)
#define seL4_NoRead seL4_CapRights_new(1, 1, 0, 1)
#define seL4_NoRights seL4_CapRights_new(0, 0, 0, 0)
#define seL4_ReadWrite seL4_CapRights_new(0, 0, 1, 1)

/* ------------------------------------------------------------------ */
/* CNode cap data (guard word): guardSize bits 0..5, guard bits 6..63. */

typedef struct seL4_CNode_CapData {
    seL4_Uint64 words[1];
} seL4_CNode_CapData_t;

LIBSEL4_INLINE_FUNC seL4_CNode_CapData_t
seL4_CNode_CapData_new(seL4_Uint64 guard, seL4_Uint64 guardSize)
{
    seL4_CNode_CapData_t d;
    d.words[0] = ((guard & 0x3ffffffffffffffull) << 6) | (guardSize & 0x3full);
    return d;
}

LIBSEL4_INLINE_FUNC seL4_Uint64 seL4_CNode_CapData_get_guard(seL4_CNode_CapData_t d)
{
    return d.words[0] >> 6;
}

LIBSEL4_INLINE_FUNC seL4_Uint64 seL4_CNode_CapData_get_guardSize(seL4_CNode_CapData_t d)
{
    return d.words[0] & 0x3full;
}

LIBSEL4_INLINE_FUNC seL4_CNode_CapData_t
seL4_CNode_CapData_set_guard(seL4_CNode_CapData_t d, seL4_Uint64 v)
{
    d.words[0] = (d.words[0] & 0x3full) | ((v & 0x3ffffffffffffffull) << 6);
    return d;
}

LIBSEL4_INLINE_FUNC seL4_CNode_CapData_t
seL4_CNode_CapData_set_guardSize(seL4_CNode_CapData_t d, seL4_Uint64 v)
{
    d.words[0] = (d.words[0] & ~0x3full) | (v & 0x3full);
    return d;
}

/* ------------------------------------------------------------------ */
/* Thread register context, in the order TCB_ReadRegisters returns it. */

typedef struct seL4_UserContext_ {
    seL4_Word pc, ra, sp, gp;
    seL4_Word s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11;
    seL4_Word a0, a1, a2, a3, a4, a5, a6, a7;
    seL4_Word t0, t1, t2, t3, t4, t5, t6;
    seL4_Word tp;
} seL4_UserContext;

/* ------------------------------------------------------------------ */
/* Message limits (enum seL4_MsgLimits). */

enum seL4_MsgLimits {
    seL4_MsgLengthBits = 7,
    seL4_MsgExtraCapBits = 2,
    seL4_MsgMaxLength = 120,
};

#define seL4_MsgMaxExtraCaps (LIBSEL4_BIT(seL4_MsgExtraCapBits) - 1)
#define seL4_FastMessageRegisters 4

/* The IPC buffer: 1 KiB, 1 KiB aligned. */
typedef struct seL4_IPCBuffer_ {
    seL4_MessageInfo_t tag;
    seL4_Word msg[seL4_MsgMaxLength];
    seL4_Word userData;
    seL4_Word caps_or_badges[seL4_MsgMaxExtraCaps];
    seL4_CPtr receiveCNode;
    seL4_CPtr receiveIndex;
    seL4_Word receiveDepth;
} seL4_IPCBuffer __attribute__((__aligned__(1024)));

/* ------------------------------------------------------------------ */
/* Layout checks against libsel4's layouts. */

#define SEL4__OFFSET(type, field) __builtin_offsetof(type, field)

_Static_assert(sizeof(seL4_Word) == 8, "seL4_Word is 64 bits");
_Static_assert(sizeof(seL4_MessageInfo_t) == 8, "seL4_MessageInfo_t is one word");
_Static_assert(sizeof(seL4_UserContext) == 256, "seL4_UserContext size");
_Static_assert(SEL4__OFFSET(seL4_UserContext, s0) == 32, "seL4_UserContext.s0");
_Static_assert(SEL4__OFFSET(seL4_UserContext, a0) == 128, "seL4_UserContext.a0");
_Static_assert(SEL4__OFFSET(seL4_UserContext, t0) == 192, "seL4_UserContext.t0");
_Static_assert(SEL4__OFFSET(seL4_UserContext, tp) == 248, "seL4_UserContext.tp");
_Static_assert(sizeof(seL4_IPCBuffer) == 1024, "seL4_IPCBuffer size");
_Static_assert(SEL4__OFFSET(seL4_IPCBuffer, msg) == 8, "seL4_IPCBuffer.msg");
_Static_assert(SEL4__OFFSET(seL4_IPCBuffer, userData) == 968, "seL4_IPCBuffer.userData");
_Static_assert(SEL4__OFFSET(seL4_IPCBuffer, caps_or_badges) == 976,
               "seL4_IPCBuffer.caps_or_badges");
_Static_assert(SEL4__OFFSET(seL4_IPCBuffer, receiveCNode) == 1000,
               "seL4_IPCBuffer.receiveCNode");
_Static_assert(SEL4__OFFSET(seL4_IPCBuffer, receiveIndex) == 1008,
               "seL4_IPCBuffer.receiveIndex");
_Static_assert(SEL4__OFFSET(seL4_IPCBuffer, receiveDepth) == 1016,
               "seL4_IPCBuffer.receiveDepth");

#endif /* SEL4_TYPES_H */
