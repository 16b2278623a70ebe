/*
 * Kairos user library: BootInfo and the root task's initial CSpace
 * (libsel4's sel4/bootinfo_types.h).
 */
#ifndef SEL4_BOOTINFO_H
#define SEL4_BOOTINFO_H

#include <sel4/types.h>

/* Fixed slots of the root task's CNode. */
enum seL4_RootCNodeCapSlots {
    seL4_CapNull = 0,
    seL4_CapInitThreadTCB = 1,
    seL4_CapInitThreadCNode = 2,
    seL4_CapInitThreadVSpace = 3,
    seL4_CapIRQControl = 4,
    seL4_CapASIDControl = 5,
    seL4_CapInitThreadASIDPool = 6,
    seL4_CapIOPortControl = 7,
    seL4_CapIOSpace = 8,
    seL4_CapBootInfoFrame = 9,
    seL4_CapInitThreadIPCBuffer = 10,
    seL4_CapDomain = 11,
    seL4_CapSMMUSIDControl = 12,
    seL4_CapSMMUCBControl = 13,
    seL4_CapInitThreadSC = 14,
    seL4_CapSMC = 15,
    seL4_NumInitialCaps = 16,
};

/* A half-open range [start, end) of CNode slots. */
typedef struct seL4_SlotRegion {
    seL4_SlotPos start;
    seL4_SlotPos end;
} seL4_SlotRegion;

typedef struct seL4_UntypedDesc {
    seL4_Word paddr;
    seL4_Uint8 sizeBits;
    seL4_Uint8 isDevice;
    seL4_Uint8 padding[sizeof(seL4_Word) - 2 * sizeof(seL4_Uint8)];
} seL4_UntypedDesc;

typedef struct seL4_BootInfo {
    seL4_Word extraLen;
    seL4_NodeId nodeID;
    seL4_Word numNodes;
    seL4_Word numIOPTLevels;
    seL4_IPCBuffer *ipcBuffer;
    seL4_SlotRegion empty;
    seL4_SlotRegion sharedFrames;
    seL4_SlotRegion userImageFrames;
    seL4_SlotRegion userImagePaging;
    seL4_SlotRegion ioSpaceCaps;
    seL4_SlotRegion extraBIPages;
    seL4_Word initThreadCNodeSizeBits;
    seL4_Domain initThreadDomain;
    seL4_SlotRegion schedcontrol;
    seL4_SlotRegion untyped;
    seL4_UntypedDesc untypedList[CONFIG_MAX_NUM_BOOTINFO_UNTYPED_CAPS];
} seL4_BootInfo;

/* Extra BootInfo record ids. */
typedef enum {
    SEL4_BOOTINFO_HEADER_PADDING = 0,
    SEL4_BOOTINFO_HEADER_X86_VBE = 1,
    SEL4_BOOTINFO_HEADER_X86_MBMMAP = 2,
    SEL4_BOOTINFO_HEADER_X86_ACPI_RSDP = 3,
    SEL4_BOOTINFO_HEADER_X86_FRAMEBUFFER = 4,
    SEL4_BOOTINFO_HEADER_X86_TSC_FREQ = 5,
    SEL4_BOOTINFO_HEADER_FDT = 6,
    SEL4_BOOTINFO_HEADER_NUM = 7,
} seL4_BootInfoID;

/* Header of one extra BootInfo record; len counts header + payload. */
typedef struct seL4_BootInfoHeader {
    seL4_Word id;
    seL4_Word len;
} seL4_BootInfoHeader;

_Static_assert(sizeof(seL4_SlotRegion) == 16, "seL4_SlotRegion size");
_Static_assert(sizeof(seL4_UntypedDesc) == 16, "seL4_UntypedDesc size");
_Static_assert(__builtin_offsetof(seL4_UntypedDesc, sizeBits) == 8, "UntypedDesc.sizeBits");
_Static_assert(__builtin_offsetof(seL4_UntypedDesc, isDevice) == 9, "UntypedDesc.isDevice");
_Static_assert(sizeof(seL4_BootInfoHeader) == 16, "seL4_BootInfoHeader size");
_Static_assert(sizeof(seL4_BootInfo) == 3864, "seL4_BootInfo size");
_Static_assert(__builtin_offsetof(seL4_BootInfo, ipcBuffer) == 32, "BootInfo.ipcBuffer");
_Static_assert(__builtin_offsetof(seL4_BootInfo, empty) == 40, "BootInfo.empty");
_Static_assert(__builtin_offsetof(seL4_BootInfo, userImageFrames) == 72,
               "BootInfo.userImageFrames");
_Static_assert(__builtin_offsetof(seL4_BootInfo, extraBIPages) == 120, "BootInfo.extraBIPages");
_Static_assert(__builtin_offsetof(seL4_BootInfo, initThreadCNodeSizeBits) == 136,
               "BootInfo.initThreadCNodeSizeBits");
_Static_assert(__builtin_offsetof(seL4_BootInfo, schedcontrol) == 152, "BootInfo.schedcontrol");
_Static_assert(__builtin_offsetof(seL4_BootInfo, untyped) == 168, "BootInfo.untyped");
_Static_assert(__builtin_offsetof(seL4_BootInfo, untypedList) == 184, "BootInfo.untypedList");

#endif /* SEL4_BOOTINFO_H */
