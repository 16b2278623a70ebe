/*
 * Address spaces (issue 3 item 4): PageTable_Map/Unmap, Page_Map/Unmap/
 * GetAddress, ASIDControl_MakePool, ASIDPool_Assign.
 *
 * Every check of seL4's RISC-V MMU decode functions (labels
 * 37-43) with its error code and message registers, seL4's FailedLookup level
 * protocol (30, then 21) that libsel4utils relies on, mappings read back
 * through two addresses, rights and execute-never, large frames, a second
 * VSpace, the UART as a device frame, and what deleting frames, tables, roots
 * and pools does to mappings.
 *
 * Virtual addresses used in the root task's own VSpace (the image is at
 * 0x400000, in the first GiB, which the tests leave alone):
 *   0x40000000..  GiB 1: the test window (tables installed by the lookup
 *                 protocol test, kept for the others)
 *   0x80000000    GiB 2: FailedLookup at the root level
 *   0xc0000000..  GiB 3: large frames
 *   0x1_00000000  GiB 4: page-table map/unmap/delete
 */
#include <ktest.h>
#include <sel4/sel4.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ROOT_CNODE seL4_CapInitThreadCNode
#define ROOT_VSPACE seL4_CapInitThreadVSpace
#define DEPTH 64

#define WINDOW 0x40000000ul  /* GiB 1: tables down to 4 KiB exist once set up */
#define ROOT_MISS 0x80000000ul /* GiB 2: no second-level table */
#define LARGE_GIB 0xc0000000ul
#define PT_GIB 0x100000000ul

#define USER_TOP 0x3ffffff000ul

extern char __kairos_image_start[];

/* ---------------------------------------------------------------- helpers */

static seL4_BootInfo *bi(void) { return kairos_bootinfo(); }

/* Next empty slot of the free region after the last one handed out (empty
 * slots identify as 0), so a slot handed out but not yet filled is not
 * handed out again. */
static seL4_CPtr slot_alloc(void)
{
    static seL4_CPtr cursor;
    seL4_Word n = bi()->empty.end - bi()->empty.start;
    for (seL4_Word i = 0; i < n; i++) {
        cursor = cursor + 1 < bi()->empty.end && cursor >= bi()->empty.start ? cursor + 1 : bi()->empty.start;
        if (seL4_DebugCapIdentify(cursor) == 0)
            return cursor;
    }
    KFAIL("no free slot");
}

static void slot_free(seL4_CPtr s)
{
    if (s)
        (void)seL4_CNode_Delete(ROOT_CNODE, s, DEPTH);
}

/* Retype one object from a RAM untyped that has room, smallest untypeds
 * first (so the big ones stay whole for large frames). 0 if none has room. */
static seL4_CPtr try_alloc_object(seL4_Word type, seL4_Word size_bits)
{
    seL4_CPtr dest = slot_alloc();
    for (seL4_Word bits = 12; bits <= 38; bits++)
        for (seL4_Word i = 0; i < bi()->untyped.end - bi()->untyped.start; i++) {
            const seL4_UntypedDesc *u = &bi()->untypedList[i];
            if (u->isDevice || u->sizeBits != bits)
                continue;
            seL4_Error err =
                seL4_Untyped_Retype(bi()->untyped.start + i, type, size_bits, ROOT_CNODE, 0, 0, dest, 1);
            if (err == seL4_NoError)
                return dest;
        }
    return 0;
}

static seL4_CPtr alloc_object(seL4_Word type, seL4_Word size_bits)
{
    seL4_CPtr s = try_alloc_object(type, size_bits);
    if (!s)
        KFAIL("cannot retype an object of type %lu (size bits %lu)", (unsigned long)type, (unsigned long)size_bits);
    return s;
}

static seL4_CPtr alloc_frame(void) { return alloc_object(seL4_RISCV_4K_Page, 0); }
static seL4_CPtr alloc_pt(void) { return alloc_object(seL4_RISCV_PageTableObject, 0); }

/* A 4 KiB RAM untyped made fresh for the test (no children). */
static seL4_CPtr alloc_untyped_4k(void) { return alloc_object(seL4_UntypedObject, 12); }

/* The boot frame cap of a page of this program's image. */
static seL4_CPtr image_frame(const void *va)
{
    return bi()->userImageFrames.start + (((uintptr_t)va - (uintptr_t)__kairos_image_start) >> 12);
}

static seL4_CPtr copy_cap(seL4_CPtr src, seL4_CapRights_t rights)
{
    seL4_CPtr dest = slot_alloc();
    seL4_Error err = seL4_CNode_Copy(ROOT_CNODE, dest, DEPTH, ROOT_CNODE, src, DEPTH, rights);
    KASSERT_EQ(err, seL4_NoError);
    return dest;
}

/* libsel4utils' loop: map, and on FailedLookup put a table at the level the
 * kernel names. Records the levels seen and the tables made. */
static seL4_CPtr last_tables[3];
static int map_with_tables(seL4_CPtr frame, seL4_CPtr vspace, seL4_Word vaddr, seL4_CapRights_t rights,
                           seL4_Word attr, seL4_Word levels[3])
{
    int n = 0;
    last_tables[0] = last_tables[1] = last_tables[2] = 0;
    for (;;) {
        seL4_Error err = seL4_RISCV_Page_Map(frame, vspace, vaddr, rights, attr);
        if (err != seL4_FailedLookup)
            return err;
        KASSERT(n < 3);
        KASSERT_EQ(seL4_GetMR(0), 0);                      /* not a source lookup */
        KASSERT_EQ(seL4_GetMR(1), seL4_MissingCapability);
        levels[n++] = seL4_MappingFailedLookupLevel();
        seL4_CPtr pt = alloc_pt();
        last_tables[n - 1] = pt;
        KASSERT_EQ(seL4_RISCV_PageTable_Map(pt, vspace, vaddr, seL4_RISCV_Default_VMAttributes), seL4_NoError);
    }
}

static void map_or_fail(seL4_CPtr frame, seL4_CPtr vspace, seL4_Word vaddr, seL4_CapRights_t rights, seL4_Word attr)
{
    seL4_Word levels[3];
    KASSERT_EQ(map_with_tables(frame, vspace, vaddr, rights, attr, levels), seL4_NoError);
}

/* A raw Call with up to two extra caps and `len` message words. */
static seL4_Error raw_call(seL4_CPtr cap, seL4_Word label, seL4_Word n_caps, seL4_CPtr c0, seL4_CPtr c1,
                           seL4_Word len, seL4_Word m0, seL4_Word m1, seL4_Word m2)
{
    seL4_SetCap(0, c0);
    seL4_SetCap(1, c1);
    seL4_SetMR(0, m0);
    seL4_SetMR(1, m1);
    seL4_SetMR(2, m2);
    seL4_MessageInfo_t info = seL4_Call(cap, seL4_MessageInfo_new(label, 0, n_caps, len));
    return (seL4_Error)seL4_MessageInfo_get_label(info);
}

static seL4_Word reply_length(seL4_CPtr cap, seL4_Word label)
{
    seL4_MessageInfo_t info = seL4_Call(cap, seL4_MessageInfo_new(label, 0, 0, 0));
    return seL4_MessageInfo_get_length(info);
}

#define EXPECT_ERR(call, err) KASSERT_EQ((call), (err))
#define EXPECT_INVCAP(call, which)                      \
    do {                                                \
        KASSERT_EQ((call), seL4_InvalidCapability);     \
        KASSERT_EQ(seL4_GetMR(0), (which));             \
    } while (0)
#define EXPECT_INVARG(call, which)                      \
    do {                                                \
        KASSERT_EQ((call), seL4_InvalidArgument);       \
        KASSERT_EQ(seL4_GetMR(0), (which));             \
    } while (0)
#define EXPECT_FL_MISSING(call, bits)                             \
    do {                                                          \
        KASSERT_EQ((call), seL4_FailedLookup);                    \
        KASSERT_EQ(seL4_GetMR(0), 0);                             \
        KASSERT_EQ(seL4_GetMR(1), seL4_MissingCapability);    \
        KASSERT_EQ(seL4_MappingFailedLookupLevel(), (bits));      \
    } while (0)
#define EXPECT_FL_ROOT(call)                                      \
    do {                                                          \
        KASSERT_EQ((call), seL4_FailedLookup);                    \
        KASSERT_EQ(seL4_GetMR(0), 0);                             \
        KASSERT_EQ(seL4_GetMR(1), seL4_InvalidRoot);          \
    } while (0)

/* Instructions retired (user mode may read instret), to report the cost of
 * the longest address-space operations (docs/object-model.md). */
static inline uint64_t instret(void)
{
    uint64_t v;
    __asm__ volatile("rdinstret %0" : "=r"(v));
    return v;
}

static volatile uint64_t *ptr(seL4_Word va) { return (volatile uint64_t *)va; }

/* A page of this program's .bss, with its own frame cap. */
static uint8_t own_page[4096] __attribute__((aligned(4096)));

/* --------------------------------------------------- boot caps only */

KTEST(vspace, get_address)
{
    seL4_RISCV_Page_GetAddress_t ipc = seL4_RISCV_Page_GetAddress(seL4_CapInitThreadIPCBuffer);
    KASSERT_EQ(ipc.error, seL4_NoError);
    KASSERT_EQ(ipc.paddr & 0xfff, 0);
    KASSERT(ipc.paddr >= 0x80000000ul);
    seL4_RISCV_Page_GetAddress_t binfo = seL4_RISCV_Page_GetAddress(seL4_CapBootInfoFrame);
    KASSERT_EQ(binfo.error, seL4_NoError);
    KASSERT_NE(binfo.paddr, ipc.paddr);
    /* The reply carries exactly one word. */
    KASSERT_EQ(reply_length(seL4_CapInitThreadIPCBuffer, RISCVPageGetAddress), 1);
}

KTEST(vspace, frame_illegal_labels)
{
    EXPECT_ERR(raw_call(seL4_CapBootInfoFrame, RISCVPageTableMap, 1, ROOT_VSPACE, 0, 2, 0, 0, 0),
               seL4_IllegalOperation);
    EXPECT_ERR(raw_call(seL4_CapBootInfoFrame, RISCVASIDPoolAssign, 0, 0, 0, 0, 0, 0, 0), seL4_IllegalOperation);
    EXPECT_ERR(raw_call(seL4_CapBootInfoFrame, UntypedRetype, 0, 0, 0, 0, 0, 0, 0), seL4_IllegalOperation);
}

KTEST(vspace, page_map_checks_in_order)
{
    seL4_CPtr bif = seL4_CapBootInfoFrame;
    seL4_Word bi_va = (seL4_Word)bi();
    seL4_CPtr paging = bi()->userImagePaging.start; /* a mapped table that is not a root */
    /* 1. Truncated: fewer than 3 words, or no extra cap. */
    EXPECT_ERR(raw_call(bif, RISCVPageMap, 1, ROOT_VSPACE, 0, 2, bi_va, seL4_AllRights.words[0], 0),
               seL4_TruncatedMessage);
    EXPECT_ERR(raw_call(bif, RISCVPageMap, 0, 0, 0, 3, bi_va, seL4_AllRights.words[0], 0), seL4_TruncatedMessage);
    /* 2. Extra cap 0 not a page table, or an empty slot. */
    EXPECT_INVCAP(seL4_RISCV_Page_Map(bif, ROOT_CNODE, bi_va, seL4_AllRights, 0), 1);
    EXPECT_INVCAP(seL4_RISCV_Page_Map(bif, slot_alloc(), bi_va, seL4_AllRights, 0), 1);
    /* 4. A mapped table that is not the root of its ASID. */
    EXPECT_INVCAP(seL4_RISCV_Page_Map(bif, paging, bi_va, seL4_AllRights, 0), 1);
    /* 5. UserTop: the last page below it is accepted as far as this check. */
    EXPECT_INVARG(seL4_RISCV_Page_Map(bif, ROOT_VSPACE, USER_TOP, seL4_AllRights, 0), 0);
    EXPECT_INVARG(seL4_RISCV_Page_Map(bif, ROOT_VSPACE, ~0xffful, seL4_AllRights, 0), 0);
    EXPECT_INVARG(seL4_RISCV_Page_Map(bif, ROOT_VSPACE, 0xffffffc000000000ul, seL4_AllRights, 0), 0);
    EXPECT_FL_MISSING(seL4_RISCV_Page_Map(bif, ROOT_VSPACE, USER_TOP - 0x1000, seL4_AllRights, 0), 30);
    /* 6. Alignment comes after UserTop. */
    EXPECT_ERR(seL4_RISCV_Page_Map(bif, ROOT_VSPACE, ROOT_MISS + 0x800, seL4_AllRights, 0), seL4_AlignmentError);
    EXPECT_INVARG(seL4_RISCV_Page_Map(bif, ROOT_VSPACE, USER_TOP + 8, seL4_AllRights, 0), 0);
    /* 7. Walk: no table below the root entry (30), none below the second
     * level (21: the image's GiB has only its own 2 MiB tables). */
    EXPECT_FL_MISSING(seL4_RISCV_Page_Map(bif, ROOT_VSPACE, ROOT_MISS, seL4_AllRights, 0), 30);
    EXPECT_FL_MISSING(seL4_RISCV_Page_Map(bif, ROOT_VSPACE, 0x20000000ul, seL4_AllRights, 0), 21);
    /* 8. A mapped cap elsewhere in the same ASID: InvalidArgument 0 (the
     * IPC buffer page is valid, but the mapped check comes first). */
    EXPECT_INVARG(seL4_RISCV_Page_Map(bif, ROOT_VSPACE, (seL4_Word)seL4_GetIPCBuffer(), seL4_AllRights, 0), 0);
    /* Remap at its own address is allowed (rights change). */
    uint64_t t0 = instret();
    EXPECT_ERR(seL4_RISCV_Page_Map(bif, ROOT_VSPACE, bi_va, seL4_CanRead, 0), seL4_NoError);
    printf("vspace: instret (exact only under --icount) of Page_Map (remap): %lu\n", (unsigned long)(instret() - t0));
    KASSERT_EQ(bi()->nodeID, 0);
    EXPECT_ERR(seL4_RISCV_Page_Map(bif, ROOT_VSPACE, bi_va, seL4_AllRights, 0), seL4_NoError);
    KASSERT_EQ(bi()->numNodes, 1);
}

KTEST(vspace, unmap_and_remap_own_page)
{
    seL4_CPtr f = image_frame(own_page);
    for (int i = 0; i < 4096; i++)
        own_page[i] = (uint8_t)(i * 7 + 1);
    seL4_RISCV_Page_GetAddress_t before = seL4_RISCV_Page_GetAddress(f);
    KASSERT_EQ(before.error, seL4_NoError);
    /* Unmapped, the cap is free to map again, but not over a valid entry. */
    EXPECT_ERR(seL4_RISCV_Page_Unmap(f), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_Page_Map(f, ROOT_VSPACE, (seL4_Word)bi(), seL4_AllRights, 0), seL4_DeleteFirst);
    /* Unmapping an unmapped cap is fine too. */
    EXPECT_ERR(seL4_RISCV_Page_Unmap(f), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_Page_Map(f, ROOT_VSPACE, (seL4_Word)own_page, seL4_AllRights, 0), seL4_NoError);
    for (int i = 0; i < 4096; i++)
        KASSERT_EQ(own_page[i], (uint8_t)(i * 7 + 1));
    KASSERT_EQ(seL4_RISCV_Page_GetAddress(f).paddr, before.paddr);
}

KTEST(vspace, page_table_checks_on_boot_caps)
{
    seL4_CPtr paging = bi()->userImagePaging.start;
    /* Labels other than Map/Unmap. */
    EXPECT_ERR(raw_call(paging, RISCVPageMap, 1, ROOT_VSPACE, 0, 3, 0, 0, 0), seL4_IllegalOperation);
    EXPECT_ERR(raw_call(paging, RISCVPageGetAddress, 0, 0, 0, 0, 0, 0, 0), seL4_IllegalOperation);
    /* Truncated before "already mapped". */
    EXPECT_ERR(raw_call(paging, RISCVPageTableMap, 1, ROOT_VSPACE, 0, 1, WINDOW, 0, 0), seL4_TruncatedMessage);
    EXPECT_ERR(raw_call(paging, RISCVPageTableMap, 0, 0, 0, 2, WINDOW, 0, 0), seL4_TruncatedMessage);
    /* A mapped table, and an assigned root, cannot be mapped. */
    EXPECT_INVCAP(seL4_RISCV_PageTable_Map(paging, ROOT_VSPACE, WINDOW, 0), 0);
    EXPECT_INVCAP(seL4_RISCV_PageTable_Map(ROOT_VSPACE, ROOT_VSPACE, WINDOW, 0), 0);
    /* The root has another cap (the TCB's): RevokeFirst either way. */
    EXPECT_ERR(seL4_RISCV_PageTable_Unmap(ROOT_VSPACE), seL4_RevokeFirst);
}

KTEST(vspace, asid_control_and_pool_checks_on_boot_caps)
{
    seL4_CPtr ut = bi()->untyped.start;
    /* ASID control: label, then truncation. */
    EXPECT_ERR(raw_call(seL4_CapASIDControl, RISCVASIDPoolAssign, 2, ut, ROOT_CNODE, 2, 0, 64, 0),
               seL4_IllegalOperation);
    EXPECT_ERR(raw_call(seL4_CapASIDControl, RISCVASIDControlMakePool, 2, ut, ROOT_CNODE, 1, 0, 64, 0),
               seL4_TruncatedMessage);
    EXPECT_ERR(raw_call(seL4_CapASIDControl, RISCVASIDControlMakePool, 1, ut, ROOT_CNODE, 2, 0, 64, 0),
               seL4_TruncatedMessage);
    /* Not an untyped. */
    EXPECT_INVCAP(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, ROOT_CNODE, ROOT_CNODE, slot_alloc(), 64), 1);
    /* ASID pool: label, truncation, not a table, a mapped table (a root). */
    EXPECT_ERR(raw_call(seL4_CapInitThreadASIDPool, RISCVASIDControlMakePool, 1, ROOT_VSPACE, 0, 0, 0, 0, 0),
               seL4_IllegalOperation);
    EXPECT_ERR(raw_call(seL4_CapInitThreadASIDPool, RISCVASIDPoolAssign, 0, 0, 0, 0, 0, 0, 0),
               seL4_TruncatedMessage);
    EXPECT_INVCAP(seL4_RISCV_ASIDPool_Assign(seL4_CapInitThreadASIDPool, ROOT_CNODE), 1);
    EXPECT_INVCAP(seL4_RISCV_ASIDPool_Assign(seL4_CapInitThreadASIDPool, ROOT_VSPACE), 1);
    EXPECT_INVCAP(seL4_RISCV_ASIDPool_Assign(seL4_CapInitThreadASIDPool, bi()->userImagePaging.start), 1);
    EXPECT_INVCAP(seL4_RISCV_ASIDPool_Assign(seL4_CapInitThreadASIDPool, slot_alloc()), 1);
    /* ASID control and pool caps identify as themselves. */
    KASSERT_EQ(seL4_DebugCapIdentify(seL4_CapASIDControl), 11);
    KASSERT_EQ(seL4_DebugCapIdentify(seL4_CapInitThreadASIDPool), 13);
}

/* ------------------------------------------- with Untyped_Retype */

KTEST(vspace, failed_lookup_protocol)
{
    /* libsel4utils: Page_Map, FailedLookup 30 -> map a table, 21 -> map a
     * table, then the frame maps. This also sets up the test window. */
    seL4_CPtr f = alloc_frame();
    seL4_Word levels[3] = {0, 0, 0};
    KASSERT_EQ(map_with_tables(f, ROOT_VSPACE, WINDOW, seL4_AllRights, 0, levels), seL4_NoError);
    KASSERT_EQ(levels[0], 30);
    KASSERT_EQ(levels[1], 21);
    *ptr(WINDOW) = 0x1234567887654321ul;
    KASSERT_EQ(*ptr(WINDOW), 0x1234567887654321ul);
    /* Now both tables exist: a second frame maps at once. */
    seL4_CPtr g = alloc_frame();
    EXPECT_ERR(seL4_RISCV_Page_Map(g, ROOT_VSPACE, WINDOW + 0x1000, seL4_AllRights, 0), seL4_NoError);
    /* A fresh frame reads as zero. */
    KASSERT_EQ(*ptr(WINDOW + 0x1000), 0);
    /* DeleteFirst: an unmapped cap onto a valid entry. */
    seL4_CPtr h = alloc_frame();
    EXPECT_ERR(seL4_RISCV_Page_Map(h, ROOT_VSPACE, WINDOW, seL4_AllRights, 0), seL4_DeleteFirst);
    /* The table levels are taken: mapping another table there is DeleteFirst. */
    seL4_CPtr pt = alloc_pt();
    EXPECT_ERR(seL4_RISCV_PageTable_Map(pt, ROOT_VSPACE, WINDOW, 0), seL4_DeleteFirst);
    EXPECT_ERR(seL4_RISCV_PageTable_Map(pt, ROOT_VSPACE, WINDOW + 0x1ff000, 0), seL4_DeleteFirst);
    EXPECT_ERR(seL4_RISCV_Page_Unmap(f), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_Page_Unmap(g), seL4_NoError);
    slot_free(f);
    slot_free(g);
    slot_free(h);
    slot_free(pt);
}

KTEST(vspace, two_mappings_read_back)
{
    seL4_CPtr f = alloc_frame();
    seL4_CPtr f2 = copy_cap(f, seL4_AllRights);
    map_or_fail(f, ROOT_VSPACE, WINDOW + 0x10000, seL4_AllRights, 0);
    /* The copy has no mapping: it maps elsewhere. */
    map_or_fail(f2, ROOT_VSPACE, WINDOW + 0x11000, seL4_AllRights, 0);
    KASSERT_EQ(seL4_RISCV_Page_GetAddress(f).paddr, seL4_RISCV_Page_GetAddress(f2).paddr);
    for (int i = 0; i < 512; i++)
        ptr(WINDOW + 0x10000)[i] = 0xabcd0000u + (uint64_t)i;
    for (int i = 0; i < 512; i++)
        KASSERT_EQ(ptr(WINDOW + 0x11000)[i], 0xabcd0000u + (uint64_t)i);
    ptr(WINDOW + 0x11000)[7] = 77;
    KASSERT_EQ(ptr(WINDOW + 0x10000)[7], 77);
    /* Each cap has its own mapping: one cap at another address of the
     * same ASID is InvalidArgument 0. */
    EXPECT_INVARG(seL4_RISCV_Page_Map(f, ROOT_VSPACE, WINDOW + 0x12000, seL4_AllRights, 0), 0);
    /* Deleting the copy unmaps the copy's mapping only. */
    slot_free(f2);
    KASSERT_EQ(ptr(WINDOW + 0x10000)[7], 77);
    seL4_CPtr g = alloc_frame();
    EXPECT_ERR(seL4_RISCV_Page_Map(g, ROOT_VSPACE, WINDOW + 0x11000, seL4_AllRights, 0), seL4_NoError);
    KASSERT_EQ(ptr(WINDOW + 0x11000)[7], 0);
    slot_free(g);
    slot_free(f);
    /* Both addresses are free again. */
    seL4_CPtr h = alloc_frame();
    EXPECT_ERR(seL4_RISCV_Page_Map(h, ROOT_VSPACE, WINDOW + 0x10000, seL4_AllRights, 0), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_Page_Unmap(h), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_Page_Map(h, ROOT_VSPACE, WINDOW + 0x11000, seL4_AllRights, 0), seL4_NoError);
    slot_free(h);
}

KTEST(vspace, rights_and_execute_never)
{
    seL4_CPtr f = alloc_frame();
    map_or_fail(f, ROOT_VSPACE, WINDOW + 0x20000, seL4_AllRights, seL4_RISCV_ExecuteNever);
    /* Execute-never does not stop reads and writes. */
    *ptr(WINDOW + 0x20000) = 42;
    KASSERT_EQ(*ptr(WINDOW + 0x20000), 42);
    /* A read-only copy maps read-only; the original still writes. */
    seL4_CPtr ro = copy_cap(f, seL4_CanRead);
    EXPECT_ERR(seL4_RISCV_Page_Map(ro, ROOT_VSPACE, WINDOW + 0x21000, seL4_AllRights, 0), seL4_NoError);
    KASSERT_EQ(*ptr(WINDOW + 0x21000), 42);
    /* Remap at the same address with new rights and attributes. */
    EXPECT_ERR(seL4_RISCV_Page_Map(f, ROOT_VSPACE, WINDOW + 0x20000, seL4_CanRead, 0), seL4_NoError);
    KASSERT_EQ(*ptr(WINDOW + 0x20000), 42);
    EXPECT_ERR(seL4_RISCV_Page_Map(f, ROOT_VSPACE, WINDOW + 0x20000, seL4_ReadWrite, 0), seL4_NoError);
    *ptr(WINDOW + 0x20000) = 43;
    KASSERT_EQ(*ptr(WINDOW + 0x21000), 43);
    /* A kernel-only (no Read) mapping with execute-never is no mapping at
     * all: the entry stays invalid, so another frame may map there. */
    seL4_CPtr ko = copy_cap(f, seL4_CanWrite);
    EXPECT_ERR(seL4_RISCV_Page_Map(ko, ROOT_VSPACE, WINDOW + 0x22000, seL4_AllRights, seL4_RISCV_ExecuteNever),
               seL4_NoError);
    seL4_CPtr g = alloc_frame();
    EXPECT_ERR(seL4_RISCV_Page_Map(g, ROOT_VSPACE, WINDOW + 0x22000, seL4_AllRights, 0), seL4_NoError);
    *ptr(WINDOW + 0x22000) = 5;
    /* ... and unmapping the kernel-only cap leaves that frame alone. */
    EXPECT_ERR(seL4_RISCV_Page_Unmap(ko), seL4_NoError);
    KASSERT_EQ(*ptr(WINDOW + 0x22000), 5);
    /* Mint with rights works like Copy for frames (the word is ignored). */
    seL4_CPtr m = slot_alloc();
    EXPECT_ERR(seL4_CNode_Mint(ROOT_CNODE, m, DEPTH, ROOT_CNODE, f, DEPTH, seL4_CanRead, 0x55), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_Page_Map(m, ROOT_VSPACE, WINDOW + 0x23000, seL4_AllRights, 0), seL4_NoError);
    KASSERT_EQ(*ptr(WINDOW + 0x23000), 43);
    slot_free(m);
    slot_free(ko);
    slot_free(ro);
    slot_free(g);
    slot_free(f);
}

KTEST(vspace, page_table_map_checks)
{
    seL4_CPtr pt = alloc_pt();
    /* Unmapped tables cannot be copied. */
    seL4_CPtr dst = slot_alloc();
    EXPECT_ERR(seL4_CNode_Copy(ROOT_CNODE, dst, DEPTH, ROOT_CNODE, pt, DEPTH, seL4_AllRights),
               seL4_IllegalOperation);
    /* 4. The VSpace: not a table, an empty slot, an unmapped table. */
    EXPECT_INVCAP(seL4_RISCV_PageTable_Map(pt, ROOT_CNODE, PT_GIB, 0), 1);
    EXPECT_INVCAP(seL4_RISCV_PageTable_Map(pt, slot_alloc(), PT_GIB, 0), 1);
    seL4_CPtr pt2 = alloc_pt();
    EXPECT_INVCAP(seL4_RISCV_PageTable_Map(pt, pt2, PT_GIB, 0), 1);
    /* 5. vaddr at or above UserTop (before the VSpace's ASID is checked). */
    EXPECT_INVARG(seL4_RISCV_PageTable_Map(pt, ROOT_VSPACE, USER_TOP, 0), 0);
    EXPECT_INVARG(seL4_RISCV_PageTable_Map(pt, bi()->userImagePaging.start, USER_TOP, 0), 0);
    EXPECT_INVARG(seL4_RISCV_PageTable_Map(pt, ROOT_VSPACE, 0xffffffc000000000ul, 0), 0);
    /* 7. A mapped table that is not a root. */
    EXPECT_INVCAP(seL4_RISCV_PageTable_Map(pt, bi()->userImagePaging.start, PT_GIB, 0), 1);
    /* The last GiB below UserTop takes tables (no reserved range). */
    EXPECT_ERR(seL4_RISCV_PageTable_Map(pt, ROOT_VSPACE, USER_TOP - 1, 0), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_PageTable_Map(pt2, ROOT_VSPACE, USER_TOP - 1, 0), seL4_NoError);
    seL4_CPtr f = alloc_frame();
    EXPECT_ERR(seL4_RISCV_Page_Map(f, ROOT_VSPACE, USER_TOP - 0x1000, seL4_AllRights, 0), seL4_NoError);
    *ptr(USER_TOP - 8) = 99;
    KASSERT_EQ(*ptr(USER_TOP - 8), 99);
    /* 8. Walk at the 4 KiB level: DeleteFirst. */
    seL4_CPtr pt3 = alloc_pt();
    EXPECT_ERR(seL4_RISCV_PageTable_Map(pt3, ROOT_VSPACE, USER_TOP - 0x2000, 0), seL4_DeleteFirst);
    slot_free(f);
    slot_free(pt3);
    slot_free(pt2);
    slot_free(pt);
    slot_free(dst);
}

KTEST(vspace, page_table_unmap_and_delete)
{
    seL4_CPtr f = alloc_frame();
    seL4_Word levels[3] = {0, 0, 0};
    KASSERT_EQ(map_with_tables(f, ROOT_VSPACE, PT_GIB, seL4_AllRights, 0, levels), seL4_NoError);
    KASSERT_EQ(levels[0], 30);
    KASSERT_EQ(levels[1], 21);
    seL4_CPtr l1 = last_tables[0], l2 = last_tables[1];
    KASSERT(l1 && l2);
    *ptr(PT_GIB + 8) = 1;
    /* A copy of a mapped table keeps the mapping; Unmap then needs the
     * copy gone. */
    seL4_CPtr l2c = copy_cap(l2, seL4_AllRights);
    EXPECT_ERR(seL4_RISCV_PageTable_Unmap(l2), seL4_RevokeFirst);
    EXPECT_ERR(seL4_RISCV_PageTable_Unmap(l2c), seL4_RevokeFirst);
    slot_free(l2c);
    /* Unmapping the last-level table: the frame is unreachable, the level
     * below 21 is missing again. */
    uint64_t t0 = instret();
    EXPECT_ERR(seL4_RISCV_PageTable_Unmap(l2), seL4_NoError);
    printf("vspace: instret (exact only under --icount) of PageTable_Unmap (clears the table): %lu\n", (unsigned long)(instret() - t0));
    seL4_CPtr g = alloc_frame();
    EXPECT_FL_MISSING(seL4_RISCV_Page_Map(g, ROOT_VSPACE, PT_GIB + 0x1000, seL4_AllRights, 0), 21);
    /* Remapping the table (zeroed by Unmap): its old entry is gone. */
    EXPECT_ERR(seL4_RISCV_PageTable_Map(l2, ROOT_VSPACE, PT_GIB + 0x5000, 0), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_Page_Map(g, ROOT_VSPACE, PT_GIB + 0x1000, seL4_AllRights, 0), seL4_NoError);
    seL4_CPtr h = alloc_frame();
    EXPECT_ERR(seL4_RISCV_Page_Map(h, ROOT_VSPACE, PT_GIB, seL4_AllRights, 0), seL4_NoError);
    KASSERT_EQ(*ptr(PT_GIB + 8), 0);
    /* f still records its (stale) mapping: remapping it at its own
     * address rewrites the entry (seL4 does the same). */
    slot_free(h);
    EXPECT_ERR(seL4_RISCV_Page_Map(f, ROOT_VSPACE, PT_GIB, seL4_AllRights, 0), seL4_NoError);
    KASSERT_EQ(*ptr(PT_GIB + 8), 1);
    /* Deleting the upper table's only cap unmaps it: 30 again. */
    slot_free(l1);
    EXPECT_FL_MISSING(seL4_RISCV_Page_Map(h = alloc_frame(), ROOT_VSPACE, PT_GIB + 0x2000, seL4_AllRights, 0), 30);
    /* Deleting stale frame caps and an orphaned table is harmless. */
    slot_free(f);
    slot_free(g);
    slot_free(l2);
    slot_free(h);
    /* The region maps again from scratch. */
    seL4_CPtr k = alloc_frame();
    KASSERT_EQ(map_with_tables(k, ROOT_VSPACE, PT_GIB, seL4_AllRights, 0, levels), seL4_NoError);
    KASSERT_EQ(*ptr(PT_GIB + 8), 0);
    slot_free(k);
}

static bool have_untyped(seL4_Word bits)
{
    for (seL4_Word i = 0; i < bi()->untyped.end - bi()->untyped.start; i++)
        if (!bi()->untypedList[i].isDevice && bi()->untypedList[i].sizeBits >= bits)
            return true;
    return false;
}

KTEST(vspace, large_frames)
{
    /* 2 MiB: needs the level-1 table only. */
    seL4_CPtr pt = alloc_pt();
    EXPECT_ERR(seL4_RISCV_PageTable_Map(pt, ROOT_VSPACE, LARGE_GIB, 0), seL4_NoError);
    seL4_CPtr big = alloc_object(seL4_RISCV_Mega_Page, 0);
    EXPECT_ERR(seL4_RISCV_Page_Map(big, ROOT_VSPACE, LARGE_GIB + 0x1000, seL4_AllRights, 0), seL4_AlignmentError);
    EXPECT_INVARG(seL4_RISCV_Page_Map(big, ROOT_VSPACE, USER_TOP - 0x200000 + 0x1000, seL4_AllRights, 0), 0);
    EXPECT_INVARG(seL4_RISCV_Page_Map(big, ROOT_VSPACE, (USER_TOP & ~0x1ffffful), seL4_AllRights, 0), 0);
    /* Tables down to 4 KiB where a 2 MiB frame is asked for: 12. */
    EXPECT_FL_MISSING(seL4_RISCV_Page_Map(big, ROOT_VSPACE, WINDOW, seL4_AllRights, 0), 12);
    /* No level-1 table: 30. */
    EXPECT_FL_MISSING(seL4_RISCV_Page_Map(big, ROOT_VSPACE, ROOT_MISS, seL4_AllRights, 0), 30);
    EXPECT_ERR(seL4_RISCV_Page_Map(big, ROOT_VSPACE, LARGE_GIB + 0x200000, seL4_AllRights, 0), seL4_NoError);
    for (seL4_Word off = 0; off < 0x200000; off += 0x40000)
        *ptr(LARGE_GIB + 0x200000 + off) = off + 1;
    for (seL4_Word off = 0; off < 0x200000; off += 0x40000)
        KASSERT_EQ(*ptr(LARGE_GIB + 0x200000 + off), off + 1);
    /* A 4 KiB frame under a 2 MiB leaf: 21 (the walk stops at the leaf). */
    seL4_CPtr f = alloc_frame();
    EXPECT_FL_MISSING(seL4_RISCV_Page_Map(f, ROOT_VSPACE, LARGE_GIB + 0x201000, seL4_AllRights, 0), 21);
    /* A table where the leaf is: DeleteFirst. */
    seL4_CPtr pt2 = alloc_pt();
    EXPECT_ERR(seL4_RISCV_PageTable_Map(pt2, ROOT_VSPACE, LARGE_GIB + 0x200000, 0), seL4_DeleteFirst);
    /* The address is that of the 2 MiB frame. */
    seL4_RISCV_Page_GetAddress_t a = seL4_RISCV_Page_GetAddress(big);
    KASSERT_EQ(a.error, seL4_NoError);
    KASSERT_EQ(a.paddr & 0x1ffffful, 0);
    EXPECT_ERR(seL4_RISCV_Page_Unmap(big), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_Page_Map(f, ROOT_VSPACE, LARGE_GIB + 0x200000, seL4_AllRights, 0), seL4_FailedLookup);
    EXPECT_ERR(seL4_RISCV_PageTable_Map(pt2, ROOT_VSPACE, LARGE_GIB + 0x200000, 0), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_Page_Map(f, ROOT_VSPACE, LARGE_GIB + 0x200000, seL4_AllRights, 0), seL4_NoError);
    KASSERT_EQ(*ptr(LARGE_GIB + 0x200000), 0);
    slot_free(f);
    slot_free(pt2);
    slot_free(big);
    slot_free(pt);

    /* 1 GiB, when there is an untyped that big and nobody has used it. */
    if (!have_untyped(30))
        return;
    seL4_CPtr giga = try_alloc_object(seL4_RISCV_Giga_Page, 0);
    if (!giga) {
        printf("vspace/large_frames: no free 1 GiB of RAM left, 1 GiB frame part skipped\n");
        return;
    }
    const seL4_Word g5 = 0x140000000ul, g6 = 0x180000000ul;
    EXPECT_ERR(seL4_RISCV_Page_Map(giga, ROOT_VSPACE, g5 + 0x200000, seL4_AllRights, 0), seL4_AlignmentError);
    EXPECT_INVARG(seL4_RISCV_Page_Map(giga, ROOT_VSPACE, 0x3fc0000000ul, seL4_AllRights, 0), 0);
    /* Tables already exist: 21 below a level-1 table, 12 in the window. */
    seL4_CPtr l1 = alloc_pt();
    EXPECT_ERR(seL4_RISCV_PageTable_Map(l1, ROOT_VSPACE, g6, 0), seL4_NoError);
    EXPECT_FL_MISSING(seL4_RISCV_Page_Map(giga, ROOT_VSPACE, g6, seL4_AllRights, 0), 21);
    EXPECT_FL_MISSING(seL4_RISCV_Page_Map(giga, ROOT_VSPACE, WINDOW, seL4_AllRights, 0), 12);
    EXPECT_ERR(seL4_RISCV_Page_Map(giga, ROOT_VSPACE, g5, seL4_AllRights, 0), seL4_NoError);
    *ptr(g5 + 0x3ffffff8ul) = 7;
    KASSERT_EQ(*ptr(g5 + 0x3ffffff8ul), 7);
    /* Under a 1 GiB leaf the walk stops at the root: 30; no table fits. */
    seL4_CPtr f4 = alloc_frame();
    EXPECT_FL_MISSING(seL4_RISCV_Page_Map(f4, ROOT_VSPACE, g5 + 0x1000, seL4_AllRights, 0), 30);
    seL4_CPtr l1b = alloc_pt();
    EXPECT_ERR(seL4_RISCV_PageTable_Map(l1b, ROOT_VSPACE, g5 + 0x1000, 0), seL4_DeleteFirst);
    KASSERT_EQ(seL4_RISCV_Page_GetAddress(giga).paddr & 0x3ffffffful, 0);
    slot_free(l1b);
    slot_free(f4);
    slot_free(l1);
    slot_free(giga);
}

/* The device untyped that starts at the UART (QEMU virt: 0x10000000). */
KTEST(vspace, uart_device_frame)
{
    seL4_CPtr ut = 0;
    for (seL4_Word i = 0; i < bi()->untyped.end - bi()->untyped.start; i++) {
        const seL4_UntypedDesc *u = &bi()->untypedList[i];
        if (u->isDevice && u->paddr == 0x10000000ul)
            ut = bi()->untyped.start + i;
    }
    KASSERT_MSG(ut != 0, "no device untyped at 0x10000000");
    (void)seL4_CNode_Revoke(ROOT_CNODE, ut, DEPTH); /* earlier children, if any */
    seL4_CPtr f = slot_alloc();
    EXPECT_ERR(seL4_Untyped_Retype(ut, seL4_RISCV_4K_Page, 0, ROOT_CNODE, 0, 0, f, 1), seL4_NoError);
    seL4_RISCV_Page_GetAddress_t a = seL4_RISCV_Page_GetAddress(f);
    KASSERT_EQ(a.error, seL4_NoError);
    KASSERT_EQ(a.paddr, 0x10000000ul);
    const seL4_Word va = WINDOW + 0x30000;
    map_or_fail(f, ROOT_VSPACE, va, seL4_ReadWrite, seL4_RISCV_ExecuteNever);
    volatile uint8_t *uart = (volatile uint8_t *)va;
    /* 16550: LSR (offset 5) bit 5 = transmit holding register empty. */
    const char *msg = "[uart via device frame]\n";
    for (const char *p = msg; *p; p++) {
        for (int spin = 0; spin < 100000 && !(uart[5] & 0x20); spin++)
            ;
        KASSERT(uart[5] & 0x20);
        uart[0] = (uint8_t)*p;
    }
    /* A device frame is not an IPC buffer (seL4's checkValidIPCBuffer). */
    EXPECT_ERR(seL4_TCB_SetIPCBuffer(seL4_CapInitThreadTCB, va, f), seL4_IllegalOperation);
    EXPECT_ERR(seL4_RISCV_Page_Unmap(f), seL4_NoError);
    slot_free(f);
    EXPECT_ERR(seL4_CNode_Revoke(ROOT_CNODE, ut, DEPTH), seL4_NoError);
}

/* A pool of our own: MakePool's checks in order, then Assign. */
KTEST(vspace, make_pool_checks_and_second_vspace)
{
    seL4_CPtr ut = alloc_untyped_4k();
    seL4_CPtr dest = slot_alloc();
    /* 4. Not exactly 4 KiB, or device. */
    seL4_CPtr ut8 = alloc_object(seL4_UntypedObject, 13);
    EXPECT_INVCAP(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, ut8, ROOT_CNODE, dest, DEPTH), 1);
    seL4_CPtr dev = 0;
    for (seL4_Word i = 0; i < bi()->untyped.end - bi()->untyped.start && !dev; i++)
        if (bi()->untypedList[i].isDevice && bi()->untypedList[i].paddr == 0x10000000ul) {
            dev = slot_alloc();
            EXPECT_ERR(seL4_Untyped_Retype(bi()->untyped.start + i, seL4_UntypedObject, 12, ROOT_CNODE, 0, 0, dev, 1),
                       seL4_NoError);
        }
    KASSERT(dev);
    EXPECT_INVCAP(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, dev, ROOT_CNODE, dest, DEPTH), 1);
    /* 5. Children. */
    seL4_CPtr child = slot_alloc();
    EXPECT_ERR(seL4_Untyped_Retype(ut, seL4_EndpointObject, 0, ROOT_CNODE, 0, 0, child, 1), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, ut, ROOT_CNODE, dest, DEPTH), seL4_RevokeFirst);
    EXPECT_ERR(seL4_CNode_Revoke(ROOT_CNODE, ut, DEPTH), seL4_NoError);
    /* 6. Destination lookup: root not a CNode, depth out of range, depth
     * mismatch; 7. occupied. */
    EXPECT_FL_ROOT(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, ut, ROOT_VSPACE, dest, DEPTH));
    EXPECT_ERR(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, ut, ROOT_CNODE, dest, 0), seL4_RangeError);
    KASSERT_EQ(seL4_GetMR(0), 1);
    KASSERT_EQ(seL4_GetMR(1), 64);
    EXPECT_ERR(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, ut, ROOT_CNODE, dest, 65), seL4_RangeError);
    EXPECT_ERR(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, ut, ROOT_CNODE, dest, 10), seL4_FailedLookup);
    KASSERT_EQ(seL4_GetMR(0), 0);
    KASSERT_EQ(seL4_GetMR(1), seL4_GuardMismatch); /* guard (51 bits) longer than the depth */
    KASSERT_EQ(seL4_GetMR(2), 10);
    KASSERT_EQ(seL4_GetMR(3), 0);
    KASSERT_EQ(seL4_GetMR(4), 51);
    EXPECT_ERR(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, ut, ROOT_CNODE, dest, 63), seL4_FailedLookup);
    KASSERT_EQ(seL4_GetMR(0), 0);
    KASSERT_EQ(seL4_GetMR(1), seL4_DepthMismatch);
    KASSERT_EQ(seL4_GetMR(2), 63);
    KASSERT_EQ(seL4_GetMR(3), 64);
    EXPECT_ERR(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, ut, ROOT_CNODE, seL4_CapInitThreadTCB, DEPTH),
               seL4_DeleteFirst);
    /* Success: the pool cap is in dest, the untyped is used up. */
    uint64_t t0 = instret();
    EXPECT_ERR(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, ut, ROOT_CNODE, dest, DEPTH), seL4_NoError);
    printf("vspace: instret (exact only under --icount) of ASIDControl_MakePool: %lu\n", (unsigned long)(instret() - t0));
    KASSERT_EQ(seL4_DebugCapIdentify(dest), 13);
    EXPECT_ERR(seL4_Untyped_Retype(ut, seL4_EndpointObject, 0, ROOT_CNODE, 0, 0, slot_alloc(), 1),
               seL4_NotEnoughMemory);
    KASSERT_EQ(seL4_GetMR(0), 0);
    /* The same untyped again: it has a child now. */
    seL4_CPtr dest2 = slot_alloc();
    EXPECT_ERR(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, ut, ROOT_CNODE, dest2, DEPTH), seL4_RevokeFirst);

    /* A second VSpace in the new pool. */
    seL4_CPtr vs = alloc_pt();
    EXPECT_ERR(seL4_RISCV_ASIDPool_Assign(dest, vs), seL4_NoError);
    EXPECT_INVCAP(seL4_RISCV_ASIDPool_Assign(dest, vs), 1);  /* already assigned */
    EXPECT_INVCAP(seL4_RISCV_PageTable_Map(vs, ROOT_VSPACE, PT_GIB, 0), 0);
    EXPECT_ERR(seL4_RISCV_PageTable_Unmap(vs), seL4_RevokeFirst); /* a root */
    /* A copy of the pool cap works as the pool. */
    seL4_CPtr pool2 = copy_cap(dest, seL4_AllRights);
    KASSERT_EQ(seL4_DebugCapIdentify(pool2), 13);

    /* Map the same frame in both VSpaces: FailedLookup protocol in the
     * new one, data visible through ours. */
    seL4_CPtr f = alloc_frame();
    seL4_CPtr fc = copy_cap(f, seL4_AllRights);
    seL4_Word levels[3] = {0, 0, 0};
    KASSERT_EQ(map_with_tables(f, vs, 0x400000, seL4_AllRights, 0, levels), seL4_NoError);
    KASSERT_EQ(levels[0], 30);
    KASSERT_EQ(levels[1], 21);
    map_or_fail(fc, ROOT_VSPACE, WINDOW + 0x40000, seL4_AllRights, 0);
    /* f is mapped in the other ASID: InvalidCapability 1 here. */
    EXPECT_INVCAP(seL4_RISCV_Page_Map(f, ROOT_VSPACE, WINDOW + 0x40000, seL4_AllRights, 0), 1);
    EXPECT_INVCAP(seL4_RISCV_Page_Map(f, ROOT_VSPACE, WINDOW + 0x41000, seL4_AllRights, 0), 1);
    /* Same vaddr in the other VSpace does not collide with ours. */
    KASSERT_EQ(*ptr(WINDOW + 0x40000), 0);

    /* Deleting the pool frees its ASIDs: caps to that VSpace become
     * FailedLookup (InvalidRoot). */
    slot_free(pool2);
    slot_free(dest);
    seL4_CPtr g = alloc_frame();
    EXPECT_FL_ROOT(seL4_RISCV_Page_Map(g, vs, 0x800000, seL4_AllRights, 0));
    seL4_CPtr pt = alloc_pt();
    EXPECT_FL_ROOT(seL4_RISCV_PageTable_Map(pt, vs, 0x800000, 0));
    /* The stale root is no longer a root: Unmap clears it, and it can be
     * assigned again. */
    EXPECT_ERR(seL4_RISCV_PageTable_Unmap(vs), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_ASIDPool_Assign(seL4_CapInitThreadASIDPool, vs), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_Page_Map(g, vs, 0x800000, seL4_AllRights, 0), seL4_FailedLookup);
    KASSERT_EQ(seL4_MappingFailedLookupLevel(), 30);

    slot_free(g);
    slot_free(pt);
    slot_free(fc);
    slot_free(f);
    slot_free(vs);
    slot_free(dev);
    slot_free(ut8);
    (void)seL4_CNode_Revoke(ROOT_CNODE, ut, DEPTH);
    slot_free(ut);
}

/* A fresh pool gives exactly 512 ASIDs; deleting a root frees one. */
KTEST(vspace, pool_holds_512)
{
    seL4_CPtr ut = alloc_untyped_4k();
    seL4_CPtr pool = slot_alloc();
    EXPECT_ERR(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, ut, ROOT_CNODE, pool, DEPTH), seL4_NoError);
    /* 512 tables in 2 MiB. */
    seL4_CPtr mem = alloc_object(seL4_UntypedObject, 21);
    seL4_CPtr first = 0;
    uint64_t first_cost = 0, last_cost = 0;
    for (int i = 0; i < 512; i++) {
        seL4_CPtr s = slot_alloc();
        if (!first)
            first = s;
        KASSERT_EQ(seL4_Untyped_Retype(mem, seL4_RISCV_PageTableObject, 0, ROOT_CNODE, 0, 0, s, 1), seL4_NoError);
        uint64_t t0 = instret();
        KASSERT_EQ(seL4_RISCV_ASIDPool_Assign(pool, s), seL4_NoError);
        uint64_t t1 = instret();
        if (i == 0)
            first_cost = t1 - t0;
        last_cost = t1 - t0;
    }
    seL4_CPtr extra = alloc_pt();
    uint64_t t0 = instret();
    EXPECT_ERR(seL4_RISCV_ASIDPool_Assign(pool, extra), seL4_DeleteFirst);
    uint64_t full_cost = instret() - t0;
    printf("vspace: instret (exact only under --icount) of ASIDPool_Assign: first ASID %lu, last ASID %lu, full pool %lu\n",
           (unsigned long)first_cost, (unsigned long)last_cost, (unsigned long)full_cost);
    /* Deleting one root frees its ASID. */
    slot_free(first);
    EXPECT_ERR(seL4_RISCV_ASIDPool_Assign(pool, extra), seL4_NoError);
    seL4_CPtr extra2 = alloc_pt();
    EXPECT_ERR(seL4_RISCV_ASIDPool_Assign(pool, extra2), seL4_DeleteFirst);
    /* Boot pool: ASID 0 is never handed out, 1 is the root task's. */
    slot_free(extra2);
    EXPECT_ERR(seL4_CNode_Revoke(ROOT_CNODE, mem, DEPTH), seL4_NoError);
    slot_free(mem);
    slot_free(extra);
    slot_free(pool);
    EXPECT_ERR(seL4_CNode_Revoke(ROOT_CNODE, ut, DEPTH), seL4_NoError);
    slot_free(ut);
}

/* All 128 pools: after the last one, DeleteFirst (before any other check). */
KTEST(vspace, pools_run_out)
{
    seL4_CPtr mem = alloc_object(seL4_UntypedObject, 19); /* 128 x 4 KiB */
    seL4_CPtr uts = slot_alloc();
    /* Retype 128 untypeds into consecutive slots. */
    for (seL4_CPtr s = uts; s < uts + 128; s++)
        KASSERT_EQ(seL4_DebugCapIdentify(s), 0);
    EXPECT_ERR(seL4_Untyped_Retype(mem, seL4_UntypedObject, 12, ROOT_CNODE, 0, 0, uts, 128), seL4_NoError);
    seL4_CPtr dests = uts + 128;
    int made = 0;
    seL4_Error err = seL4_NoError;
    for (int i = 0; i < 128; i++) {
        KASSERT_EQ(seL4_DebugCapIdentify(dests + i), 0);
        err = seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, uts + i, ROOT_CNODE, dests + i, DEPTH);
        if (err != seL4_NoError)
            break;
        made++;
    }
    KASSERT_EQ(err, seL4_DeleteFirst);
    KASSERT(made >= 1 && made <= 127);
    /* Full: DeleteFirst even with a bad untyped. */
    EXPECT_ERR(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, ROOT_CNODE, ROOT_CNODE, slot_alloc(), DEPTH),
               seL4_DeleteFirst);
    /* Freeing one pool makes room for exactly one more. */
    slot_free(dests + made - 1);
    EXPECT_ERR(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, uts + made, ROOT_CNODE, dests + made - 1, DEPTH),
               seL4_NoError);
    EXPECT_ERR(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, uts + made + 1, ROOT_CNODE, slot_alloc(), DEPTH),
               seL4_DeleteFirst);
    /* Revoking the memory deletes every pool cap and frees the pools. */
    EXPECT_ERR(seL4_CNode_Revoke(ROOT_CNODE, mem, DEPTH), seL4_NoError);
    seL4_CPtr ut = alloc_untyped_4k();
    seL4_CPtr p = slot_alloc();
    EXPECT_ERR(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, ut, ROOT_CNODE, p, DEPTH), seL4_NoError);
    slot_free(p);
    slot_free(ut);
    slot_free(mem);
}

/* ------------------------------------------- with a second thread */

/* RV64 instruction words for the tiny programs the threads run. */
#define INSN_SD_A0_0_A1 0x00a5b023u /* sd a0, 0(a1) */
#define INSN_LD_A0_0_A1 0x0005b503u /* ld a0, 0(a1) */
#define INSN_SD_A0_0_A2 0x00a63023u /* sd a0, 0(a2) */
#define INSN_ILLEGAL 0x00000000u    /* ends the program: a user exception, the thread is suspended */

typedef struct {
    seL4_CPtr tcb, sc;
} thread_t;

/* A thread at priority 255 (the root's) in `vspace`, started at pc with
 * a0..a2 set. Without a fault handler it is suspended at its first fault. */
static thread_t start_thread(seL4_CPtr vspace, seL4_Word pc, seL4_Word a0, seL4_Word a1, seL4_Word a2)
{
    thread_t t;
    t.tcb = alloc_object(seL4_TCBObject, 0);
    t.sc = alloc_object(seL4_SchedContextObject, 8);
    KASSERT_EQ(seL4_TCB_Configure(t.tcb, ROOT_CNODE, 0, vspace, 0, 0, seL4_CapNull), seL4_NoError);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(bi()->schedcontrol.start, t.sc, 1000, 1000, 0, 0, 0), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(t.sc, t.tcb), seL4_NoError);
    KASSERT_EQ(seL4_TCB_SetPriority(t.tcb, seL4_CapInitThreadTCB, 255), seL4_NoError);
    seL4_UserContext regs = {0};
    regs.pc = pc;
    regs.a0 = a0;
    regs.a1 = a1;
    regs.a2 = a2;
    KASSERT_EQ(seL4_TCB_WriteRegisters(t.tcb, true, 0, sizeof(regs) / sizeof(seL4_Word), &regs), seL4_NoError);
    return t;
}

static seL4_Word thread_pc(thread_t t)
{
    seL4_UserContext regs = {0};
    KASSERT_EQ(seL4_TCB_ReadRegisters(t.tcb, false, 0, 1, &regs), seL4_NoError);
    return regs.pc;
}

static void stop_thread(thread_t t)
{
    (void)seL4_TCB_Suspend(t.tcb);
    slot_free(t.tcb);
    slot_free(t.sc);
}

/* Let the other threads of priority 255 run until pc reaches `want`. */
static bool wait_pc(thread_t t, seL4_Word want)
{
    for (int i = 0; i < 200; i++) {
        if (thread_pc(t) == want)
            return true;
        seL4_Yield();
    }
    return thread_pc(t) == want;
}

static void write_code(seL4_Word va, const uint32_t *insns, int n)
{
    for (int i = 0; i < n; i++)
        ((volatile uint32_t *)va)[i] = insns[i];
    __asm__ volatile("fence.i" ::: "memory");
}

/* Execute-never: the same code runs from an executable mapping of a frame
 * and faults on the first fetch from an execute-never mapping of it. A
 * kernel-only (no Read) mapping without execute-never is execute-only. */
KTEST(vspace, execute_never_and_execute_only)
{
    const seL4_Word data = WINDOW + 0x70000, xn = WINDOW + 0x71000, ex = WINDOW + 0x72000, xo = WINDOW + 0x73000;
    static const uint32_t prog[] = {INSN_SD_A0_0_A1, INSN_ILLEGAL};
    seL4_CPtr code = alloc_frame();
    map_or_fail(code, ROOT_VSPACE, data, seL4_ReadWrite, seL4_RISCV_ExecuteNever);
    write_code(data, prog, 2);
    seL4_CPtr c_xn = copy_cap(code, seL4_AllRights), c_ex = copy_cap(code, seL4_AllRights);
    seL4_CPtr c_xo = copy_cap(code, seL4_CanWrite); /* kernel-only rights */
    EXPECT_ERR(seL4_RISCV_Page_Map(c_xn, ROOT_VSPACE, xn, seL4_CanRead, seL4_RISCV_ExecuteNever), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_Page_Map(c_ex, ROOT_VSPACE, ex, seL4_CanRead, 0), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_Page_Map(c_xo, ROOT_VSPACE, xo, seL4_AllRights, 0), seL4_NoError);
    /* The execute-never mapping reads like the others. */
    KASSERT_EQ(*(volatile uint32_t *)xn, INSN_SD_A0_0_A1);

    static volatile seL4_Word flag[3];
    flag[0] = flag[1] = flag[2] = 0;
    thread_t t_ex = start_thread(ROOT_VSPACE, ex, 0x11, (seL4_Word)&flag[0], 0);
    thread_t t_xn = start_thread(ROOT_VSPACE, xn, 0x22, (seL4_Word)&flag[1], 0);
    thread_t t_xo = start_thread(ROOT_VSPACE, xo, 0x33, (seL4_Word)&flag[2], 0);
    /* Executable and execute-only: the store ran, the thread stopped at the
     * illegal instruction after it. */
    KASSERT(wait_pc(t_ex, ex + 4));
    KASSERT(wait_pc(t_xo, xo + 4));
    KASSERT_EQ(flag[0], 0x11);
    KASSERT_EQ(flag[2], 0x33);
    /* Execute-never: stopped at its first instruction, nothing stored. */
    KASSERT_EQ(thread_pc(t_xn), xn);
    KASSERT_EQ(flag[1], 0);
    /* Remapping with execute allowed (same address) lets it run. */
    EXPECT_ERR(seL4_RISCV_Page_Map(c_xn, ROOT_VSPACE, xn, seL4_CanRead, 0), seL4_NoError);
    KASSERT_EQ(seL4_TCB_Resume(t_xn.tcb), seL4_NoError);
    KASSERT(wait_pc(t_xn, xn + 4));
    KASSERT_EQ(flag[1], 0x22);
    stop_thread(t_ex);
    stop_thread(t_xn);
    stop_thread(t_xo);
    slot_free(c_xo);
    slot_free(c_ex);
    slot_free(c_xn);
    slot_free(code);
}

/* Two VSpaces, the same virtual address, different frames: a thread in the
 * second sees only its own. A thread whose VSpace cap is a mapped table
 * that is not a root runs with no user mappings at all. */
KTEST(vspace, isolation_between_vspaces)
{
    const seL4_Word x = WINDOW + 0x80000; /* used in both VSpaces */
    static const uint32_t prog[] = {INSN_LD_A0_0_A1, INSN_SD_A0_0_A2, INSN_ILLEGAL};
    seL4_CPtr vs = alloc_pt();
    EXPECT_ERR(seL4_RISCV_ASIDPool_Assign(seL4_CapInitThreadASIDPool, vs), seL4_NoError);
    /* Ours at x: magic A. */
    seL4_CPtr fa = alloc_frame();
    map_or_fail(fa, ROOT_VSPACE, x, seL4_ReadWrite, 0);
    *ptr(x) = 0xaaaaaaaa;
    /* Theirs at x: magic B (written through a second mapping in ours). */
    seL4_CPtr fb = alloc_frame(), fb2 = copy_cap(fb, seL4_AllRights);
    map_or_fail(fb, ROOT_VSPACE, x + 0x1000, seL4_ReadWrite, 0);
    *ptr(x + 0x1000) = 0xbbbbbbbb;
    map_or_fail(fb2, vs, x, seL4_ReadWrite, 0);
    seL4_CPtr vs_table = last_tables[0]; /* a table inside the new VSpace */
    KASSERT(vs_table != 0);
    /* A result page shared by both, and the program. */
    seL4_CPtr r = alloc_frame(), r2 = copy_cap(r, seL4_AllRights);
    map_or_fail(r, ROOT_VSPACE, x + 0x2000, seL4_ReadWrite, 0);
    map_or_fail(r2, vs, x + 0x1000, seL4_ReadWrite, 0);
    seL4_CPtr code = alloc_frame(), code2 = copy_cap(code, seL4_AllRights);
    map_or_fail(code, ROOT_VSPACE, x + 0x3000, seL4_ReadWrite, seL4_RISCV_ExecuteNever);
    write_code(x + 0x3000, prog, 3);
    map_or_fail(code2, vs, x + 0x2000, seL4_CanRead, 0);

    thread_t t = start_thread(vs, x + 0x2000, 0, x, x + 0x1000);
    KASSERT(wait_pc(t, x + 0x2000 + 8));
    KASSERT_EQ(*ptr(x + 0x2000), 0xbbbbbbbb);
    KASSERT_EQ(*ptr(x), 0xaaaaaaaa);
    stop_thread(t);

    /* Not a root: the same program, with our VSpace's addresses, never
     * runs (the first fetch faults). */
    *ptr(x + 0x2000) = 0;
    thread_t u = start_thread(bi()->userImagePaging.start, x + 0x3000, 0, x, x + 0x2000);
    for (int i = 0; i < 20; i++)
        seL4_Yield();
    KASSERT_EQ(thread_pc(u), x + 0x3000);
    KASSERT_EQ(*ptr(x + 0x2000), 0);
    stop_thread(u);

    /* Deleting the root (its last cap) frees the ASID: caps to tables of
     * that VSpace now name an ASID without a root. */
    seL4_CPtr g = alloc_frame(), pt = alloc_pt();
    EXPECT_INVCAP(seL4_RISCV_Page_Map(g, vs_table, x, seL4_AllRights, 0), 1);
    EXPECT_INVCAP(seL4_RISCV_PageTable_Map(pt, vs_table, x, 0), 1);
    slot_free(vs);
    EXPECT_FL_ROOT(seL4_RISCV_Page_Map(g, vs_table, x, seL4_AllRights, 0));
    EXPECT_FL_ROOT(seL4_RISCV_PageTable_Map(pt, vs_table, x, 0));
    EXPECT_INVARG(seL4_RISCV_PageTable_Map(pt, vs_table, USER_TOP, 0), 0); /* UserTop is checked first */
    slot_free(g);
    slot_free(pt);
    slot_free(code2);
    slot_free(code);
    slot_free(r2);
    slot_free(r);
    slot_free(fb2);
    slot_free(fb);
    slot_free(fa);
}

/* ------------------------------------------- random operations */

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return rng_state >> 33;
}

/* Thousands of random map/unmap/assign/copy/delete operations, valid and
 * invalid, on two VSpaces of our own (never the root task's), under the
 * check flavour's invariant checker: no crash, only seL4 error codes, and
 * afterwards all the memory comes back (the untyped retypes whole again). */
KTEST(vspace, random_operations)
{
    enum { NF = 12, NP = 10, NC = 24, ITER = 3000 };
    seL4_CPtr mem = alloc_object(seL4_UntypedObject, 23); /* 8 MiB for everything */
    seL4_CPtr pool_ut = slot_alloc(), pool = slot_alloc();
    EXPECT_ERR(seL4_Untyped_Retype(mem, seL4_UntypedObject, 12, ROOT_CNODE, 0, 0, pool_ut, 1), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_ASIDControl_MakePool(seL4_CapASIDControl, pool_ut, ROOT_CNODE, pool, DEPTH), seL4_NoError);
    seL4_CPtr caps[NC]; /* frames, then page tables, then spare slots for copies */
    for (int i = 0; i < NC; i++) {
        caps[i] = slot_alloc();
        if (i < NF) {
            seL4_Word type = i < 2 ? seL4_RISCV_Mega_Page : seL4_RISCV_4K_Page;
            EXPECT_ERR(seL4_Untyped_Retype(mem, type, 0, ROOT_CNODE, 0, 0, caps[i], 1), seL4_NoError);
        } else if (i < NF + NP) {
            EXPECT_ERR(seL4_Untyped_Retype(mem, seL4_RISCV_PageTableObject, 0, ROOT_CNODE, 0, 0, caps[i], 1),
                       seL4_NoError);
        }
    }
    /* Two of the tables become VSpaces. */
    EXPECT_ERR(seL4_RISCV_ASIDPool_Assign(pool, caps[NF]), seL4_NoError);
    EXPECT_ERR(seL4_RISCV_ASIDPool_Assign(pool, caps[NF + 1]), seL4_NoError);
    static const seL4_Word addrs[] = {0x0, 0x1000, 0x200000, 0x201000, 0x40000000, 0x40200000, 0x3fffe00000ul,
                                      0x3fffffe000ul, USER_TOP, 0x1001, 0xffffffc000000000ul, 0x7ffff000};
    int ok = 0;
    rng_state = 0x5eed;
    for (int it = 0; it < ITER; it++) {
        seL4_CPtr a = caps[rnd() % NC], b = caps[rnd() % NC];
        seL4_Word va = addrs[rnd() % (sizeof(addrs) / sizeof(addrs[0]))];
        seL4_Error err;
        switch (rnd() % 9) {
        case 0:
        case 1:
            err = seL4_RISCV_Page_Map(a, b, va, (seL4_CapRights_t){{rnd() & 15}}, rnd() & 1);
            break;
        case 2:
            err = seL4_RISCV_Page_Unmap(a);
            break;
        case 3:
        case 4:
            err = seL4_RISCV_PageTable_Map(a, b, va, 0);
            break;
        case 5:
            err = seL4_RISCV_PageTable_Unmap(a);
            break;
        case 6:
            err = seL4_CNode_Copy(ROOT_CNODE, b, DEPTH, ROOT_CNODE, a, DEPTH, (seL4_CapRights_t){{rnd() & 15}});
            break;
        case 7:
            /* Deletes are rarer than the rest so that state builds up. */
            err = (rnd() % 4 == 0) ? seL4_CNode_Delete(ROOT_CNODE, a, DEPTH) : seL4_RISCV_ASIDPool_Assign(pool, a);
            break;
        default:
            err = (seL4_Error)seL4_RISCV_Page_GetAddress(a).error;
            break;
        }
        KASSERT_MSG(err <= seL4_NotEnoughMemory, "iteration %d: error %d", it, (int)err);
        ok += err == seL4_NoError;
    }
    printf("vspace: %d random operations, %d succeeded\n", ITER, ok);
    KASSERT(ok > ITER / 20);
    /* Everything goes with the memory; the pool's ASIDs with it. */
    EXPECT_ERR(seL4_CNode_Revoke(ROOT_CNODE, mem, DEPTH), seL4_NoError);
    for (int i = 0; i < NC; i++)
        KASSERT_EQ(seL4_DebugCapIdentify(caps[i]), 0);
    KASSERT_EQ(seL4_DebugCapIdentify(pool), 0);
    seL4_CPtr whole = slot_alloc();
    EXPECT_ERR(seL4_Untyped_Retype(mem, seL4_UntypedObject, 23, ROOT_CNODE, 0, 0, whole, 1), seL4_NoError);
    slot_free(whole);
    slot_free(mem);
}
