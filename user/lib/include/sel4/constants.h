/*
 * Kairos user library: seL4 constants (libsel4's sel4/constants.h for MCS riscv64,
 * libsel4's object-type and enum headers).
 */
#ifndef SEL4_CONSTANTS_H
#define SEL4_CONSTANTS_H

#include <sel4/simple_types.h>
#include <sel4/config.h>

/* Word and object sizes (log2 bytes unless named *Bytes / *Size). */
#define seL4_WordBits 64
#define seL4_WordSizeBits 3
#define seL4_PageBits 12
#define seL4_LargePageBits 21
#define seL4_HugePageBits 30
#define seL4_SlotBits 5
#define seL4_TCBBits 11
#define seL4_EndpointBits 4
#define seL4_NotificationBits 6
#define seL4_ReplyBits 5
#define seL4_MinSchedContextBits 7
#define seL4_CoreSchedContextBytes 128
#define seL4_RefillSizeBytes 16
#define seL4_PageTableBits 12
#define seL4_PageTableEntryBits 3
#define seL4_PageTableIndexBits 9
#define seL4_VSpaceBits 12
#define seL4_ASIDPoolBits 12
#define seL4_ASIDPoolIndexBits 9
#define seL4_NumASIDPoolsBits 7
#define seL4_MinUntypedBits 4
#define seL4_MaxUntypedBits 38
#define seL4_IPCBufferSizeBits 10
#define seL4_BootInfoFrameBits 12
#define seL4_BootInfoFrameSize LIBSEL4_BIT(seL4_BootInfoFrameBits)
#define seL4_GuardBits 58
#define seL4_GuardSizeBits 6
#define seL4_BadgeBits 64
#define seL4_UserTop 0x3ffffff000ul
#define seL4_NilData 0
#define seL4_UntypedRetypeMaxObjects CONFIG_RETYPE_FAN_OUT_LIMIT

/* Refills held by a scheduling context of 2^bits bytes beyond the
 * two every context has. */
#define seL4_MaxExtraRefills(size)                                                 \
    ((LIBSEL4_BIT(size) - seL4_CoreSchedContextBytes) / seL4_RefillSizeBytes)

/* Page_Map answers FailedLookup with the bits left (30, 21 or 12) in MR2. */
#define SEL4_MAPPING_LOOKUP_LEVEL 2
#define SEL4_MAPPING_LOOKUP_NO_PT 21
#define SEL4_MAPPING_LOOKUP_NO_PD 30

/* Priorities. */
enum priorityConstants {
    seL4_InvalidPrio = -1,
    seL4_MinPrio = 0,
    seL4_MaxPrio = CONFIG_NUM_PRIORITIES - 1,
};

/* Object types for Untyped_Retype. */
typedef enum api_object {
    seL4_UntypedObject = 0,
    seL4_TCBObject = 1,
    seL4_EndpointObject = 2,
    seL4_NotificationObject = 3,
    seL4_CapTableObject = 4,
    seL4_SchedContextObject = 5,
    seL4_ReplyObject = 6,
    seL4_NonArchObjectTypeCount = 7,
} seL4_ObjectType;

typedef enum _mode_object {
    seL4_RISCV_Giga_Page = seL4_NonArchObjectTypeCount,
    seL4_ModeObjectTypeCount = 8,
} seL4_ModeObjectType;

typedef enum _object {
    seL4_RISCV_4K_Page = seL4_ModeObjectTypeCount,
    seL4_RISCV_Mega_Page = 9,
    seL4_RISCV_PageTableObject = 10,
    seL4_ObjectTypeCount = 11,
} seL4_ArchObjectType;

/* VM attributes for Page_Map and PageTable_Map. */
typedef enum {
    seL4_RISCV_ExecuteNever = 0x1,
    seL4_RISCV_Default_VMAttributes = 0,
} seL4_RISCV_VMAttributes;

/* Lookup failure types (fault and FailedLookup payloads). */
typedef enum {
    seL4_NoFailure = 0,
    seL4_InvalidRoot = 1,
    seL4_MissingCapability = 2,
    seL4_DepthMismatch = 3,
    seL4_GuardMismatch = 4,
} seL4_LookupFailureType;

/* TCB flags (TCB_SetFlags). */
typedef enum {
    seL4_TCBFlag_NoFlag = 0x0,
    seL4_TCBFlag_fpuDisabled = 0x1,
    seL4_TCBFlag_MASK = 0x1,
} seL4_TCBFlag;

/* Scheduling-context flags (SchedControl_ConfigureFlags). */
typedef enum {
    seL4_SchedContext_NoFlag = 0x0,
    seL4_SchedContext_Sporadic = 0x1,
} seL4_SchedContextFlag;

#endif /* SEL4_CONSTANTS_H */
