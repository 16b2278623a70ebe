/*
 * Untyped memory: every check of seL4_Untyped_Retype in seL4's order with
 * its error payload (seL4's decodeUntypedInvocation),
 * placement and watermark rules, device untypeds, the fan-out limit, and
 * the lazy, preemptible reset of boot untypeds (seL4's resetUntypedCap).
 *
 * Memory: tests carve what they need out of one "pool" (the largest RAM
 * untyped) as child untypeds, so each test starts from a fresh untyped with
 * a known watermark. Slots: tests take runs of empty slots from the middle
 * of the BootInfo's empty region upwards, checked empty with
 * seL4_DebugCapIdentify, so they keep clear of slots other suites use from
 * the start of the region.
 */
#include <ktest.h>
#include <sel4/sel4.h>
#include <stdint.h>
#include <stdio.h>

/* seL4 cap tags as seL4_DebugCapIdentify reports them. */
enum {
    TAG_NULL = 0,
    TAG_FRAME = 1,
    TAG_UNTYPED = 2,
    TAG_PAGE_TABLE = 3,
    TAG_ENDPOINT = 4,
    TAG_NOTIFICATION = 6,
    TAG_REPLY = 8,
    TAG_CNODE = 10,
    TAG_THREAD = 12,
    TAG_SCHED_CONTEXT = 22,
};

#define ROOT seL4_CapInitThreadCNode

/* ---- slots --------------------------------------------------------- */

static seL4_CPtr slot_cursor;

/* n consecutive empty slots of the root CNode. */
static seL4_CPtr alloc_slots(seL4_Word n)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    if (slot_cursor == 0)
        slot_cursor = bi->empty.start + (bi->empty.end - bi->empty.start) / 2;
    seL4_CPtr start = slot_cursor;
    for (seL4_CPtr s = slot_cursor; s < bi->empty.end; s++) {
        if (seL4_DebugCapIdentify(s) != TAG_NULL) {
            start = s + 1;
            continue;
        }
        if (s + 1 - start == n) {
            slot_cursor = s + 1;
            return start;
        }
    }
    KFAIL("out of empty slots (wanted %lu)", (unsigned long)n);
}

static seL4_CPtr alloc_slot(void) { return alloc_slots(1); }

/* ---- raw retype with the reply's label and length ------------------ */

typedef struct {
    seL4_Word label, length;
    seL4_Word mr[5];
} reply_t;

static reply_t retype_msg(seL4_CPtr ut, seL4_Word label, seL4_Word length, seL4_Word extra, seL4_CPtr root,
                          seL4_Word type, seL4_Word size_bits, seL4_Word index, seL4_Word depth, seL4_Word offset,
                          seL4_Word count)
{
    seL4_Word m0 = type, m1 = size_bits, m2 = index, m3 = depth;
    seL4_SetCap(0, root);
    seL4_SetMR(4, offset);
    seL4_SetMR(5, count);
    seL4_MessageInfo_t out =
        seL4_CallWithMRs(ut, seL4_MessageInfo_new(label, 0, extra, length), &m0, &m1, &m2, &m3);
    reply_t r = {seL4_MessageInfo_get_label(out), seL4_MessageInfo_get_length(out), {m0, m1, m2, m3, 0}};
    r.mr[4] = seL4_GetMR(4);
    return r;
}

static reply_t retype(seL4_CPtr ut, seL4_CPtr root, seL4_Word type, seL4_Word size_bits, seL4_Word index,
                      seL4_Word depth, seL4_Word offset, seL4_Word count)
{
    return retype_msg(ut, UntypedRetype, 6, 1, root, type, size_bits, index, depth, offset, count);
}

/* Retype into the root CNode at `slot` (depth 0: the root is the destination). */
static reply_t retype_to(seL4_CPtr ut, seL4_Word type, seL4_Word size_bits, seL4_CPtr slot, seL4_Word count)
{
    return retype(ut, ROOT, type, size_bits, 0, 0, slot, count);
}

#define EXPECT_REPLY(r, code, len)                                                                     \
    do {                                                                                               \
        reply_t r_ = (r);                                                                              \
        KASSERT_MSG(r_.label == (seL4_Word)(code) && r_.length == (seL4_Word)(len),                    \
                    "reply label %lu length %lu, expected %lu length %lu (MR0 %lu MR1 %lu)",            \
                    (unsigned long)r_.label, (unsigned long)r_.length, (unsigned long)(code),            \
                    (unsigned long)(len), (unsigned long)r_.mr[0], (unsigned long)r_.mr[1]);            \
    } while (0)

#define EXPECT_OK(r) EXPECT_REPLY(r, seL4_NoError, 0)

static void expect_inv_arg(reply_t r, seL4_Word n)
{
    EXPECT_REPLY(r, seL4_InvalidArgument, 1);
    KASSERT_EQ(r.mr[0], n);
}

static void expect_range(reply_t r, seL4_Word lo, seL4_Word hi)
{
    EXPECT_REPLY(r, seL4_RangeError, 2);
    KASSERT_EQ(r.mr[0], lo);
    KASSERT_EQ(r.mr[1], hi);
}

static void expect_no_mem(reply_t r, seL4_Word available)
{
    EXPECT_REPLY(r, seL4_NotEnoughMemory, 1);
    KASSERT_EQ(r.mr[0], available);
}

/* ---- untypeds ------------------------------------------------------ */

static seL4_CPtr ut_slot(seL4_Word i) { return kairos_bootinfo()->untyped.start + i; }
static const seL4_UntypedDesc *ut_desc(seL4_Word i) { return &kairos_bootinfo()->untypedList[i]; }
static seL4_Word n_untypeds(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    return bi->untyped.end - bi->untyped.start;
}

/* Index of the largest RAM untyped other than `except` (-1 for none). */
static seL4_Word largest_ram_untyped(seL4_Word except)
{
    seL4_Word best = ~0ul;
    for (seL4_Word i = 0; i < n_untypeds(); i++) {
        if (ut_desc(i)->isDevice || i == except)
            continue;
        if (best == ~0ul || ut_desc(i)->sizeBits > ut_desc(best)->sizeBits)
            best = i;
    }
    KASSERT_MSG(best != ~0ul, "no RAM untyped");
    return best;
}

/* Device untyped containing paddr. */
static seL4_Word device_untyped_at(seL4_Word paddr)
{
    for (seL4_Word i = 0; i < n_untypeds(); i++) {
        const seL4_UntypedDesc *d = ut_desc(i);
        if (d->isDevice && paddr >= d->paddr && paddr - d->paddr < (1ul << d->sizeBits))
            return i;
    }
    KFAIL("no device untyped covers %#lx", (unsigned long)paddr);
}

/* Physical address of the root task's initrd (its ELF file, copied at boot
 * and then handed out as RAM untyped without being cleared), from /chosen. */
static seL4_Word initrd_start(void)
{
    uint32_t len = 0;
    const void *fdt = kairos_bootinfo_fdt(kairos_bootinfo(), NULL);
    KASSERT(fdt != NULL);
    const void *p = kairos_fdt_getprop(fdt, "/chosen", "linux,initrd-start", &len);
    KASSERT_MSG(p != NULL && (len == 4 || len == 8), "no /chosen/linux,initrd-start");
    return kairos_fdt_cells(p, len / 4);
}

/* RAM untyped covering paddr. */
static seL4_Word ram_untyped_at(seL4_Word paddr)
{
    for (seL4_Word i = 0; i < n_untypeds(); i++) {
        const seL4_UntypedDesc *d = ut_desc(i);
        if (!d->isDevice && paddr >= d->paddr && paddr - d->paddr < (1ul << d->sizeBits))
            return i;
    }
    KFAIL("no RAM untyped covers %#lx", (unsigned long)paddr);
}

static seL4_Word pool_index = ~0ul;

/* The largest RAM untyped (other than the one holding the initrd, which a
 * test wants fresh): tests carve fresh child untypeds from it. */
static seL4_CPtr pool(void)
{
    if (pool_index == ~0ul)
        pool_index = largest_ram_untyped(ram_untyped_at(initrd_start() & ~0xffful));
    return ut_slot(pool_index);
}

/* A fresh RAM untyped of 2^bits bytes (watermark 0, no children). */
static seL4_CPtr carve(seL4_Word bits)
{
    seL4_CPtr s = alloc_slot();
    EXPECT_OK(retype_to(pool(), seL4_UntypedObject, bits, s, 1));
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_UNTYPED);
    return s;
}

/* Bytes still available in an untyped that has children, read off the
 * NotEnoughMemory reply to a request for one object of its own size. */
static seL4_Word available(seL4_CPtr ut, seL4_Word ut_bits)
{
    reply_t r = retype_to(ut, seL4_UntypedObject, ut_bits, alloc_slot(), 1);
    EXPECT_REPLY(r, seL4_NotEnoughMemory, 1);
    return r.mr[0];
}

static seL4_Word frame_paddr(seL4_CPtr frame)
{
    seL4_RISCV_Page_GetAddress_t a = seL4_RISCV_Page_GetAddress(frame);
    KASSERT_EQ(a.error, seL4_NoError);
    return a.paddr;
}

/* Where these tests map frames into the root task's VSpace: GiB 128, far
 * from the image (GiB 0) and the windows the VSpace tests use (GiB 1-4). */
#define MAP_WINDOW 0x2000000000ul

/* Map a 4 KiB frame read/write at va, adding page tables (from the pool)
 * as seL4's FailedLookup protocol asks for them. */
static volatile uint64_t *map_frame(seL4_CPtr frame, seL4_Word va)
{
    for (int level = 0; level < 3; level++) {
        seL4_Error e = seL4_RISCV_Page_Map(frame, seL4_CapInitThreadVSpace, va, seL4_ReadWrite,
                                           seL4_RISCV_Default_VMAttributes);
        if (e == seL4_NoError)
            return (volatile uint64_t *)va;
        KASSERT_EQ(e, seL4_FailedLookup);
        seL4_CPtr pt = alloc_slot();
        EXPECT_OK(retype_to(pool(), seL4_RISCV_PageTableObject, 0, pt, 1));
        KASSERT_EQ(seL4_RISCV_PageTable_Map(pt, seL4_CapInitThreadVSpace, va, seL4_RISCV_Default_VMAttributes),
                   seL4_NoError);
    }
    KFAIL("cannot map a frame at %#lx", (unsigned long)va);
}

/* Make a boot untyped as boot left it, whatever earlier suites did with it:
 * no children and its watermark at the end. Revoke removes the children; a
 * copy then marks the original full (seL4's rule for copying a childless
 * untyped), and deleting the copy leaves it childless again. */
static void make_full(seL4_CPtr ut)
{
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, ut, 64), seL4_NoError);
    seL4_CPtr c = alloc_slot();
    KASSERT_EQ(seL4_CNode_Copy(ROOT, c, 64, ROOT, ut, 64, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, c, 64), seL4_NoError);
}


/* ================================================================== */
/* Checks in seL4's order                                              */

KTEST(untyped, label_not_retype_is_illegal_operation)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr s = alloc_slot();
    EXPECT_REPLY(retype_msg(ut, 0, 6, 1, ROOT, seL4_EndpointObject, 0, 0, 0, s, 1), seL4_IllegalOperation, 0);
    EXPECT_REPLY(retype_msg(ut, TCBReadRegisters, 6, 1, ROOT, seL4_EndpointObject, 0, 0, 0, s, 1),
                 seL4_IllegalOperation, 0);
    /* The label is checked before the length. */
    EXPECT_REPLY(retype_msg(ut, 77, 0, 0, ROOT, 0, 0, 0, 0, 0, 0), seL4_IllegalOperation, 0);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
}

KTEST(untyped, short_message_is_truncated)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr s = alloc_slot();
    for (seL4_Word len = 0; len < 6; len++)
        EXPECT_REPLY(retype_msg(ut, UntypedRetype, len, 1, ROOT, seL4_EndpointObject, 0, 0, 0, s, 1),
                     seL4_TruncatedMessage, 0);
    /* Length before the type: an invalid type in a short message is still Trunc. */
    EXPECT_REPLY(retype_msg(ut, UntypedRetype, 5, 1, ROOT, 99, 0, 0, 0, s, 1), seL4_TruncatedMessage, 0);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
}

KTEST(untyped, missing_root_cap_is_truncated)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr s = alloc_slot();
    EXPECT_REPLY(retype_msg(ut, UntypedRetype, 6, 0, ROOT, seL4_EndpointObject, 0, 0, 0, s, 1),
                 seL4_TruncatedMessage, 0);
    EXPECT_REPLY(retype_msg(ut, UntypedRetype, 6, 0, ROOT, 99, 0, 0, 0, s, 1), seL4_TruncatedMessage, 0);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
}

KTEST(untyped, object_type_out_of_range)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr s = alloc_slot();
    expect_inv_arg(retype_to(ut, seL4_ObjectTypeCount, 0, s, 1), 0);
    expect_inv_arg(retype_to(ut, 1000, 0, s, 1), 0);
    expect_inv_arg(retype_to(ut, ~0ul, 0, s, 1), 0);
    /* The type is checked before the size. */
    expect_inv_arg(retype_to(ut, seL4_ObjectTypeCount, 64, s, 1), 0);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
}

KTEST(untyped, size_bits_range)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr s = alloc_slot();
    /* size_bits >= 64 is a RangeError for every type, fixed-size ones too. */
    for (seL4_Word type = 0; type < seL4_ObjectTypeCount; type++) {
        expect_range(retype_to(ut, type, 64, s, 1), 0, seL4_MaxUntypedBits);
        expect_range(retype_to(ut, type, ~0ul, s, 1), 0, seL4_MaxUntypedBits);
    }
    expect_range(retype_to(ut, seL4_UntypedObject, 39, s, 1), 0, 38);
    expect_range(retype_to(ut, seL4_SchedContextObject, 39, s, 1), 0, 38);
    /* CNode: the object is size_bits + 5 bits. */
    expect_range(retype_to(ut, seL4_CapTableObject, 34, s, 1), 0, 38);
    expect_range(retype_to(ut, seL4_CapTableObject, 63, s, 1), 0, 38);
    /* In range, too big for this untyped: the next failing check is memory. */
    expect_no_mem(retype_to(ut, seL4_CapTableObject, 33, s, 1), 4096);
    expect_no_mem(retype_to(ut, seL4_UntypedObject, 38, s, 1), 4096);
    /* Range before the per-type minimums. */
    expect_range(retype_to(ut, seL4_CapTableObject, 64, s, 1), 0, 38);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
}

KTEST(untyped, size_bits_ignored_for_fixed_size_types)
{
    seL4_CPtr ut = carve(16);
    seL4_CPtr s = alloc_slots(3);
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 63, s, 1));
    EXPECT_OK(retype_to(ut, seL4_TCBObject, 50, s + 1, 1));
    EXPECT_OK(retype_to(ut, seL4_RISCV_4K_Page, 1, s + 2, 1));
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_ENDPOINT);
    KASSERT_EQ(seL4_DebugCapIdentify(s + 1), TAG_THREAD);
    KASSERT_EQ(seL4_DebugCapIdentify(s + 2), TAG_FRAME);
}

KTEST(untyped, per_type_minimum_sizes)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr s = alloc_slots(3);
    expect_inv_arg(retype_to(ut, seL4_CapTableObject, 0, s, 1), 1);
    for (seL4_Word b = 0; b < seL4_MinUntypedBits; b++)
        expect_inv_arg(retype_to(ut, seL4_UntypedObject, b, s, 1), 1);
    for (seL4_Word b = 0; b < seL4_MinSchedContextBits; b++)
        expect_inv_arg(retype_to(ut, seL4_SchedContextObject, b, s, 1), 1);
    /* The minimums themselves work. */
    EXPECT_OK(retype_to(ut, seL4_CapTableObject, 1, s, 1));
    EXPECT_OK(retype_to(ut, seL4_UntypedObject, seL4_MinUntypedBits, s + 1, 1));
    EXPECT_OK(retype_to(ut, seL4_SchedContextObject, seL4_MinSchedContextBits, s + 2, 1));
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_CNODE);
    KASSERT_EQ(seL4_DebugCapIdentify(s + 1), TAG_UNTYPED);
    KASSERT_EQ(seL4_DebugCapIdentify(s + 2), TAG_SCHED_CONTEXT);
}

KTEST(untyped, size_checks_come_before_the_destination)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr ep = alloc_slot();
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, ep, 1));
    /* Destination root is an endpoint (would be FailedLookup): size errors first. */
    expect_inv_arg(retype(ut, ep, seL4_CapTableObject, 0, 0, 64, 0, 1), 1);
    expect_range(retype(ut, ep, seL4_TCBObject, 64, 0, 64, 0, 1), 0, 38);
}

/* ---- destination CNode lookup -------------------------------------- */

KTEST(untyped, depth_zero_uses_the_root_cap_itself)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr s = alloc_slot();
    /* node_index is ignored at depth 0. */
    EXPECT_OK(retype(ut, ROOT, seL4_EndpointObject, 0, 0xdeadbeef, 0, s, 1));
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_ENDPOINT);
}

KTEST(untyped, destination_by_index_and_depth)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr s = alloc_slot();
    /* The root CNode names itself at slot 2 (seL4_CapInitThreadCNode). */
    EXPECT_OK(retype(ut, ROOT, seL4_EndpointObject, 0, ROOT, 64, s, 1));
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_ENDPOINT);
}

KTEST(untyped, root_not_a_cnode)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr ep = alloc_slot(), empty = alloc_slot(), s = alloc_slot();
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, ep, 1));
    /* depth != 0: the target lookup fails with InvalidRoot (source flag 0). */
    reply_t r = retype(ut, ep, seL4_EndpointObject, 0, 0, 64, s, 1);
    EXPECT_REPLY(r, seL4_FailedLookup, 2);
    KASSERT_EQ(r.mr[0], 0);
    KASSERT_EQ(r.mr[1], seL4_InvalidRoot);
    /* An empty slot as the root cap is a null cap: the same. */
    r = retype(ut, empty, seL4_EndpointObject, 0, 0, 64, s, 1);
    EXPECT_REPLY(r, seL4_FailedLookup, 2);
    KASSERT_EQ(r.mr[1], seL4_InvalidRoot);
    /* InvalidRoot comes before the depth range check. */
    r = retype(ut, ep, seL4_EndpointObject, 0, 0, 65, s, 1);
    EXPECT_REPLY(r, seL4_FailedLookup, 2);
    KASSERT_EQ(r.mr[1], seL4_InvalidRoot);
    /* depth 0: the root itself is the destination and is no CNode:
     * MissingCapability with bitsLeft = node_depth = 0. */
    r = retype(ut, ep, seL4_EndpointObject, 0, 0, 0, s, 1);
    EXPECT_REPLY(r, seL4_FailedLookup, 3);
    KASSERT_EQ(r.mr[0], 0);
    KASSERT_EQ(r.mr[1], seL4_MissingCapability);
    KASSERT_EQ(r.mr[2], 0);
    r = retype(ut, empty, seL4_EndpointObject, 0, 0, 0, s, 1);
    EXPECT_REPLY(r, seL4_FailedLookup, 3);
    KASSERT_EQ(r.mr[1], seL4_MissingCapability);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
}

KTEST(untyped, depth_out_of_range)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr s = alloc_slot();
    expect_range(retype(ut, ROOT, seL4_EndpointObject, 0, ROOT, 65, s, 1), 1, 64);
    expect_range(retype(ut, ROOT, seL4_EndpointObject, 0, ROOT, ~0ul, s, 1), 1, 64);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
}

KTEST(untyped, destination_guard_mismatch)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr s = alloc_slot();
    /* The root CNode cap has a 51-bit guard of 0: a set top bit mismatches. */
    reply_t r = retype(ut, ROOT, seL4_EndpointObject, 0, (1ul << 63) | ROOT, 64, s, 1);
    EXPECT_REPLY(r, seL4_FailedLookup, 5);
    KASSERT_EQ(r.mr[0], 0);
    KASSERT_EQ(r.mr[1], seL4_GuardMismatch);
    KASSERT_EQ(r.mr[2], 64); /* bits left */
    KASSERT_EQ(r.mr[3], 0);  /* guard found */
    KASSERT_EQ(r.mr[4], 51); /* guard size */
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
}

KTEST(untyped, destination_depth_mismatch)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr s = alloc_slot();
    /* Guard 51 + radix 13 = 64 bits needed, 60 given: the guard fits, the
     * radix does not. */
    reply_t r = retype(ut, ROOT, seL4_EndpointObject, 0, ROOT << 4, 60, s, 1);
    EXPECT_REPLY(r, seL4_FailedLookup, 4);
    KASSERT_EQ(r.mr[0], 0);
    KASSERT_EQ(r.mr[1], seL4_DepthMismatch);
    KASSERT_EQ(r.mr[2], 60);
    KASSERT_EQ(r.mr[3], 64);
    /* 10 bits: the guard itself is longer than what is left, which seL4
     * reports as a guard mismatch (bitsLeft 10, guard 0, guard size 51). */
    r = retype(ut, ROOT, seL4_EndpointObject, 0, ROOT, 10, s, 1);
    EXPECT_REPLY(r, seL4_FailedLookup, 5);
    KASSERT_EQ(r.mr[1], seL4_GuardMismatch);
    KASSERT_EQ(r.mr[2], 10);
    KASSERT_EQ(r.mr[3], 0);
    KASSERT_EQ(r.mr[4], 51);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
}

KTEST(untyped, destination_slot_not_a_cnode)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr ep = alloc_slot(), empty = alloc_slot(), s = alloc_slot();
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, ep, 1));
    reply_t r = retype(ut, ROOT, seL4_EndpointObject, 0, ep, 64, s, 1);
    EXPECT_REPLY(r, seL4_FailedLookup, 3);
    KASSERT_EQ(r.mr[0], 0);
    KASSERT_EQ(r.mr[1], seL4_MissingCapability);
    KASSERT_EQ(r.mr[2], 64);
    r = retype(ut, ROOT, seL4_EndpointObject, 0, empty, 64, s, 1);
    EXPECT_REPLY(r, seL4_FailedLookup, 3);
    KASSERT_EQ(r.mr[1], seL4_MissingCapability);
    KASSERT_EQ(r.mr[2], 64);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
}

/* A 16-slot CNode (guard 0) with an endpoint in its slot 3. */
static seL4_CPtr small_cnode(seL4_CPtr ut)
{
    seL4_CPtr cn = alloc_slot();
    EXPECT_OK(retype_to(ut, seL4_CapTableObject, 4, cn, 1));
    EXPECT_OK(retype(ut, ROOT, seL4_EndpointObject, 0, cn, 64, 3, 1));
    return cn;
}

KTEST(untyped, destination_lookup_through_another_cnode)
{
    seL4_CPtr ut = carve(14);
    seL4_CPtr cn = small_cnode(ut);
    seL4_CPtr s = alloc_slot();
    /* Root = the small CNode: index 3 at depth 4 is its endpoint slot. */
    reply_t r = retype(ut, cn, seL4_EndpointObject, 0, 3, 4, s, 1);
    EXPECT_REPLY(r, seL4_FailedLookup, 3);
    KASSERT_EQ(r.mr[1], seL4_MissingCapability);
    KASSERT_EQ(r.mr[2], 4);
    /* 8 bits: the endpoint is reached with 4 bits left -> DepthMismatch(4, 0). */
    r = retype(ut, cn, seL4_EndpointObject, 0, 3 << 4, 8, s, 1);
    EXPECT_REPLY(r, seL4_FailedLookup, 4);
    KASSERT_EQ(r.mr[0], 0);
    KASSERT_EQ(r.mr[1], seL4_DepthMismatch);
    KASSERT_EQ(r.mr[2], 4);
    KASSERT_EQ(r.mr[3], 0);
    /* 2 bits: the small CNode needs 4 -> DepthMismatch(2, 4). */
    r = retype(ut, cn, seL4_EndpointObject, 0, 0, 2, s, 1);
    EXPECT_REPLY(r, seL4_FailedLookup, 4);
    KASSERT_EQ(r.mr[2], 2);
    KASSERT_EQ(r.mr[3], 4);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
}

/* ---- node offset, count, fan-out, destination slots ------------------ */

KTEST(untyped, node_offset_range)
{
    seL4_CPtr ut = carve(14);
    seL4_CPtr cn = small_cnode(ut);
    expect_range(retype(ut, ROOT, seL4_EndpointObject, 0, cn, 64, 16, 1), 0, 15);
    expect_range(retype(ut, ROOT, seL4_EndpointObject, 0, cn, 64, ~0ul, 1), 0, 15);
    /* Offset before count. */
    expect_range(retype(ut, ROOT, seL4_EndpointObject, 0, cn, 64, 16, 0), 0, 15);
    /* The root CNode: 8192 slots. */
    expect_range(retype_to(ut, seL4_EndpointObject, 0, 8192, 1), 0, 8191);
}

KTEST(untyped, num_objects_range)
{
    seL4_CPtr ut = carve(14);
    seL4_CPtr cn = small_cnode(ut);
    expect_range(retype(ut, ROOT, seL4_EndpointObject, 0, cn, 64, 0, 0), 1, 256);
    expect_range(retype(ut, ROOT, seL4_EndpointObject, 0, cn, 64, 0, 257), 1, 256);
    expect_range(retype(ut, ROOT, seL4_EndpointObject, 0, cn, 64, 0, ~0ul), 1, 256);
    /* More than the slots left after the offset. */
    expect_range(retype(ut, ROOT, seL4_EndpointObject, 0, cn, 64, 0, 17), 1, 16);
    expect_range(retype(ut, ROOT, seL4_EndpointObject, 0, cn, 64, 10, 7), 1, 6);
    expect_range(retype(ut, ROOT, seL4_EndpointObject, 0, cn, 64, 15, 2), 1, 1);
    /* Exactly the slots left works (slot 3 is taken, so start above it). */
    EXPECT_OK(retype(ut, ROOT, seL4_EndpointObject, 0, cn, 64, 10, 6));
    EXPECT_OK(retype(ut, ROOT, seL4_EndpointObject, 0, cn, 64, 4, 6));
}

KTEST(untyped, fan_out_limit_is_256)
{
    seL4_CPtr ut = carve(16);
    seL4_CPtr s = alloc_slots(257);
    expect_range(retype_to(ut, seL4_EndpointObject, 0, s, 257), 1, 256);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, s, 256));
    for (seL4_Word i = 0; i < 256; i++)
        KASSERT_EQ(seL4_DebugCapIdentify(s + i), TAG_ENDPOINT);
    KASSERT_EQ(seL4_DebugCapIdentify(s + 256), TAG_NULL);
}

KTEST(untyped, occupied_destination_is_delete_first)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr s = alloc_slots(4);
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, s + 3, 1));
    EXPECT_REPLY(retype_to(ut, seL4_EndpointObject, 0, s, 4), seL4_DeleteFirst, 0);
    EXPECT_REPLY(retype_to(ut, seL4_EndpointObject, 0, s + 3, 1), seL4_DeleteFirst, 0);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
    /* DeleteFirst comes before NotEnoughMemory. */
    EXPECT_REPLY(retype_to(ut, seL4_TCBObject, 0, s, 4), seL4_DeleteFirst, 0);
    /* The untyped's own slot is occupied too. */
    EXPECT_REPLY(retype_to(ut, seL4_EndpointObject, 0, ut, 1), seL4_DeleteFirst, 0);
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, s, 3));
}

/* The destination is checked 16 slots per kernel entry, with preemption
 * points between the groups (docs/object-model.md "Bounds"). Invisible to
 * the caller: a cap in any group is DeleteFirst before NotEnoughMemory,
 * and no object is made (the untyped stays empty). An error ends the call,
 * so the same call again checks the whole destination from the start. */
KTEST(untyped, occupied_slot_in_a_later_check_group_is_delete_first)
{
    seL4_CPtr ut = carve(16);
    seL4_CPtr s = alloc_slots(256);
    seL4_CPtr e = alloc_slot();
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, e, 1));
    static const seL4_Word where[] = {15, 16, 17, 100, 200, 255};
    for (seL4_Word k = 0; k < sizeof(where) / sizeof(where[0]); k++) {
        KASSERT_EQ(seL4_CNode_Move(ROOT, s + where[k], 64, ROOT, e, 64), seL4_NoError);
        EXPECT_REPLY(retype_to(ut, seL4_EndpointObject, 0, s, 256), seL4_DeleteFirst, 0);
        /* DeleteFirst before NotEnoughMemory: 256 TCBs do not fit in 64 KiB. */
        EXPECT_REPLY(retype_to(ut, seL4_TCBObject, 0, s, 256), seL4_DeleteFirst, 0);
        for (seL4_Word i = 0; i < 256; i++)
            KASSERT_EQ(seL4_DebugCapIdentify(s + i), i == where[k] ? TAG_ENDPOINT : TAG_NULL);
        /* The cap goes to the first group: the whole destination is
         * checked again, not only from the group that failed. */
        KASSERT_EQ(seL4_CNode_Move(ROOT, s + 3, 64, ROOT, s + where[k], 64), seL4_NoError);
        EXPECT_REPLY(retype_to(ut, seL4_EndpointObject, 0, s, 256), seL4_DeleteFirst, 0);
        KASSERT_EQ(seL4_CNode_Move(ROOT, e, 64, ROOT, s + 3, 64), seL4_NoError);
    }
    /* Only the endpoint exists: 16 bytes of the untyped are used. */
    KASSERT_EQ(available(ut, 16), (1ul << 16) - 16);
    /* With every group empty but too little memory: NotEnoughMemory, after
     * the whole destination was checked. */
    expect_no_mem(retype_to(ut, seL4_TCBObject, 0, s, 256), (1ul << 16) - 16);
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, s, 256));
    for (seL4_Word i = 0; i < 256; i++)
        KASSERT_EQ(seL4_DebugCapIdentify(s + i), TAG_ENDPOINT);
}

KTEST(untyped, retype_by_send_and_nbsend)
{
    /* Send and NBSend perform the invocation too; they just get no reply. */
    seL4_CPtr ut = carve(12);
    seL4_CPtr s = alloc_slots(3);
    seL4_Word mrs[6] = {seL4_EndpointObject, 0, 0, 0, s, 1};
    for (int i = 0; i < 6; i++)
        seL4_SetMR(i, mrs[i]);
    seL4_SetCap(0, ROOT);
    seL4_Send(ut, seL4_MessageInfo_new(UntypedRetype, 0, 1, 6));
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_ENDPOINT);
    seL4_SetMR(4, s + 1);
    seL4_NBSend(ut, seL4_MessageInfo_new(UntypedRetype, 0, 1, 6));
    KASSERT_EQ(seL4_DebugCapIdentify(s + 1), TAG_ENDPOINT);
    /* A failing Send changes nothing and writes nothing back. */
    seL4_SetMR(0, 99);
    seL4_SetMR(4, s + 2);
    seL4_Send(ut, seL4_MessageInfo_new(UntypedRetype, 0, 1, 6));
    KASSERT_EQ(seL4_DebugCapIdentify(s + 2), TAG_NULL);
    KASSERT_EQ(available(ut, 12), 4096 - 32);
}

/* ---- memory --------------------------------------------------------- */

KTEST(untyped, not_enough_memory_reports_bytes_available)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr s = alloc_slots(4);
    /* No children yet: all 4096 bytes count as available. */
    expect_no_mem(retype_to(ut, seL4_TCBObject, 0, s, 3), 4096);
    expect_no_mem(retype_to(ut, seL4_RISCV_Mega_Page, 0, s, 1), 4096);
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, s, 1));
    /* Now it has a child: available = size - watermark = 4080. Not enough
     * for two 2 KiB TCBs, enough for one (placed at offset 2048). */
    expect_no_mem(retype_to(ut, seL4_TCBObject, 0, s + 1, 2), 4080);
    EXPECT_OK(retype_to(ut, seL4_TCBObject, 0, s + 1, 1));
    expect_no_mem(retype_to(ut, seL4_EndpointObject, 0, s + 2, 1), 0);
    /* Memory comes after the device check: a TCB from an empty RAM untyped
     * is NotEnoughMemory, not InvalidArgument. */
    expect_no_mem(retype_to(ut, seL4_TCBObject, 0, s + 2, 1), 0);
}

KTEST(untyped, placement_follows_the_watermark_aligned_up)
{
    seL4_CPtr ut = carve(16);
    seL4_CPtr s = alloc_slots(8);
    const seL4_Word size = 1ul << 16;
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, s, 1)); /* [0, 16) */
    KASSERT_EQ(available(ut, 16), size - 16);
    EXPECT_OK(retype_to(ut, seL4_NotificationObject, 0, s + 1, 2)); /* [64, 192) */
    KASSERT_EQ(available(ut, 16), size - 192);
    EXPECT_OK(retype_to(ut, seL4_TCBObject, 0, s + 3, 1)); /* [2048, 4096) */
    KASSERT_EQ(available(ut, 16), size - 4096);
    EXPECT_OK(retype_to(ut, seL4_ReplyObject, 0, s + 4, 1)); /* [4096, 4128) */
    KASSERT_EQ(available(ut, 16), size - 4128);
    EXPECT_OK(retype_to(ut, seL4_CapTableObject, 4, s + 5, 1)); /* 512 B: [4608, 5120) */
    KASSERT_EQ(available(ut, 16), size - 5120);
    EXPECT_OK(retype_to(ut, seL4_SchedContextObject, 8, s + 6, 1)); /* 256 B: [5120, 5376) */
    KASSERT_EQ(available(ut, 16), size - 5376);
    EXPECT_OK(retype_to(ut, seL4_RISCV_4K_Page, 0, s + 7, 1)); /* [8192, 12288) */
    KASSERT_EQ(available(ut, 16), size - 12288);
    /* A 2^15 untyped no longer fits (only the upper half is left). */
    expect_no_mem(retype_to(ut, seL4_UntypedObject, 15, alloc_slot(), 2), size - 12288);
    EXPECT_OK(retype_to(ut, seL4_UntypedObject, 15, alloc_slot(), 1)); /* [32768, 65536) */
    KASSERT_EQ(available(ut, 16), 0);
}

KTEST(untyped, objects_placed_back_to_back)
{
    seL4_CPtr ut = carve(15);
    seL4_CPtr s = alloc_slots(10);
    EXPECT_OK(retype_to(ut, seL4_TCBObject, 0, s, 10));
    KASSERT_EQ(available(ut, 15), (1ul << 15) - 10 * 2048);
    for (seL4_Word i = 0; i < 10; i++)
        KASSERT_EQ(seL4_DebugCapIdentify(s + i), TAG_THREAD);
}

KTEST(untyped, every_object_type)
{
    seL4_CPtr ut = carve(23);
    static const struct {
        seL4_Word type, size_bits, tag;
    } types[] = {
        {seL4_UntypedObject, 12, TAG_UNTYPED},
        {seL4_TCBObject, 0, TAG_THREAD},
        {seL4_EndpointObject, 0, TAG_ENDPOINT},
        {seL4_NotificationObject, 0, TAG_NOTIFICATION},
        {seL4_CapTableObject, 6, TAG_CNODE},
        {seL4_SchedContextObject, 7, TAG_SCHED_CONTEXT},
        {seL4_SchedContextObject, 10, TAG_SCHED_CONTEXT},
        {seL4_ReplyObject, 0, TAG_REPLY},
        {seL4_RISCV_Giga_Page, 0, TAG_FRAME},
        {seL4_RISCV_4K_Page, 0, TAG_FRAME},
        {seL4_RISCV_Mega_Page, 0, TAG_FRAME},
        {seL4_RISCV_PageTableObject, 0, TAG_PAGE_TABLE},
    };
    for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        seL4_CPtr s = alloc_slots(2);
        reply_t r = retype_to(ut, types[i].type, types[i].size_bits, s, 2);
        if (types[i].type == seL4_RISCV_Giga_Page) {
            /* 1 GiB does not fit in 8 MiB. */
            EXPECT_REPLY(r, seL4_NotEnoughMemory, 1);
            continue;
        }
        EXPECT_OK(r);
        KASSERT_EQ(seL4_DebugCapIdentify(s), types[i].tag);
        KASSERT_EQ(seL4_DebugCapIdentify(s + 1), types[i].tag);
    }
}

KTEST(untyped, child_untyped_sizes)
{
    seL4_CPtr ut = carve(12);
    seL4_CPtr s = alloc_slots(2);
    /* One child of the parent's full size fits, a second does not. */
    expect_no_mem(retype_to(ut, seL4_UntypedObject, 12, s, 2), 4096);
    EXPECT_OK(retype_to(ut, seL4_UntypedObject, 12, s, 1));
    expect_no_mem(retype_to(ut, seL4_UntypedObject, 4, s + 1, 1), 0);
    /* The child starts empty and can be used at once, down to 16 bytes. */
    seL4_CPtr c = alloc_slots(256);
    EXPECT_OK(retype_to(s, seL4_UntypedObject, 4, c, 256));
    KASSERT_EQ(available(s, 12), 0);
    seL4_CPtr e = alloc_slot();
    EXPECT_OK(retype_to(c + 255, seL4_EndpointObject, 0, e, 1));
    KASSERT_EQ(seL4_DebugCapIdentify(e), TAG_ENDPOINT);
}

KTEST(untyped, boot_untyped_first_object_at_base)
{
    /* The smallest RAM boot untyped of at least a page: it starts full, so
     * the first retype resets it and places the object at its base. */
    seL4_Word best = ~0ul;
    for (seL4_Word i = 0; i < n_untypeds(); i++) {
        const seL4_UntypedDesc *d = ut_desc(i);
        if (!d->isDevice && d->sizeBits >= 12 && d->sizeBits <= 20 && i != pool_index &&
            (best == ~0ul || d->sizeBits < ut_desc(best)->sizeBits))
            best = i;
    }
    KASSERT_MSG(best != ~0ul, "no small RAM untyped");
    seL4_CPtr ut = ut_slot(best);
    seL4_Word bits = ut_desc(best)->sizeBits;
    make_full(ut); /* in case an earlier suite used it */
    seL4_CPtr s = alloc_slot();
    /* No children: the whole untyped is available although it starts full. */
    expect_no_mem(retype_to(ut, seL4_UntypedObject, bits, s, 2), 1ul << bits);
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, s, 1));
    KASSERT_EQ(available(ut, bits), (1ul << bits) - 16);
}

KTEST(untyped, frames_at_base_then_consecutive)
{
    seL4_Word idx = ~0ul;
    for (seL4_Word i = 0; i < n_untypeds(); i++) {
        const seL4_UntypedDesc *d = ut_desc(i);
        /* A fresh (boot) RAM untyped of 64 KiB .. 16 MiB nobody used yet. */
        if (!d->isDevice && d->sizeBits >= 16 && d->sizeBits <= 24 && i != pool_index &&
            i != ram_untyped_at(initrd_start() & ~0xffful)) {
            seL4_CPtr probe = alloc_slot();
            reply_t r = retype_to(ut_slot(i), seL4_UntypedObject, d->sizeBits, probe, 2);
            if (r.label == seL4_NotEnoughMemory && r.mr[0] == (1ul << d->sizeBits)) {
                idx = i; /* no children: the whole untyped is available */
                break;
            }
        }
    }
    KASSERT_MSG(idx != ~0ul, "no unused RAM untyped of 2^16..2^24 bytes");
    seL4_CPtr ut = ut_slot(idx);
    seL4_Word base = ut_desc(idx)->paddr;
    seL4_CPtr f = alloc_slots(4);
    EXPECT_OK(retype_to(ut, seL4_RISCV_4K_Page, 0, f, 1));
    KASSERT_EQ(frame_paddr(f), base);
    EXPECT_OK(retype_to(ut, seL4_RISCV_4K_Page, 0, f + 1, 3));
    for (seL4_Word i = 1; i < 4; i++)
        KASSERT_EQ(frame_paddr(f + i), base + i * 4096);
    /* A child untyped goes to the next 2^14 boundary; its first frame is at its base. */
    seL4_CPtr child = alloc_slot(), cf = alloc_slot();
    EXPECT_OK(retype_to(ut, seL4_UntypedObject, 14, child, 1));
    EXPECT_OK(retype_to(child, seL4_RISCV_4K_Page, 0, cf, 1));
    KASSERT_EQ(frame_paddr(cf), base + (1ul << 14));
    /* An endpoint then a frame: the frame skips to the next page. */
    seL4_CPtr ep = alloc_slot(), f2 = alloc_slot();
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, ep, 1));
    EXPECT_OK(retype_to(ut, seL4_RISCV_4K_Page, 0, f2, 1));
    KASSERT_EQ(frame_paddr(f2), base + (2ul << 14) + 4096);
}

KTEST(untyped, reset_zeroes_memory_that_was_in_use)
{
    /* The initrd held this program's ELF file; boot copied it and handed the
     * memory out as untyped without clearing it. A frame retyped over its
     * first page must read as zeros, whatever was there before. */
    seL4_Word page = initrd_start() & ~0xffful;
    seL4_Word i = ram_untyped_at(page);
    KASSERT(i != pool_index);
    seL4_CPtr ut = ut_slot(i);
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, ut, 64), seL4_NoError); /* placement from the base */
    seL4_Word base = ut_desc(i)->paddr, bits = ut_desc(i)->sizeBits;
    seL4_Word offset = page - base;
    /* Fill [base, page) with untypeds, biggest first: each lands exactly at
     * the watermark, so the frame after them is at `page`. */
    for (seL4_Word b = bits; b-- > 12;) {
        if (offset & (1ul << b))
            EXPECT_OK(retype_to(ut, seL4_UntypedObject, b, alloc_slot(), 1));
    }
    seL4_CPtr f = alloc_slot();
    EXPECT_OK(retype_to(ut, seL4_RISCV_4K_Page, 0, f, 1));
    KASSERT_EQ(frame_paddr(f), page);
    volatile uint64_t *p = map_frame(f, MAP_WINDOW);
    for (int w = 0; w < 512; w++)
        KASSERT_MSG(p[w] == 0, "word %d of the reset page is %#lx", w, (unsigned long)p[w]);
    p[0] = 0x1234; /* usable memory */
    KASSERT_EQ(p[0], 0x1234);
    KASSERT_EQ(seL4_RISCV_Page_Unmap(f), seL4_NoError);
}

/* ---- children, deletion, revocation, copies ---------------------------- */

KTEST(untyped, reset_again_once_all_children_are_gone)
{
    seL4_CPtr ut = carve(16);
    seL4_CPtr s = alloc_slots(3);
    EXPECT_OK(retype_to(ut, seL4_RISCV_4K_Page, 0, s, 1));
    seL4_Word base = frame_paddr(s);
    EXPECT_OK(retype_to(ut, seL4_RISCV_4K_Page, 0, s + 1, 1));
    KASSERT_EQ(frame_paddr(s + 1), base + 4096);
    /* Deleting the first leaves a child: allocation continues at the watermark. */
    KASSERT_EQ(seL4_CNode_Delete(ROOT, s, 64), seL4_NoError);
    KASSERT_EQ(available(ut, 16), (1ul << 16) - 8192);
    EXPECT_OK(retype_to(ut, seL4_RISCV_4K_Page, 0, s, 1));
    KASSERT_EQ(frame_paddr(s), base + 8192);
    /* No children left: the next retype resets and starts at the base. */
    KASSERT_EQ(seL4_CNode_Delete(ROOT, s, 64), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, s + 1, 64), seL4_NoError);
    expect_no_mem(retype_to(ut, seL4_UntypedObject, 16, s, 2), 1ul << 16);
    EXPECT_OK(retype_to(ut, seL4_RISCV_4K_Page, 0, s + 2, 1));
    KASSERT_EQ(frame_paddr(s + 2), base);
    KASSERT_EQ(available(ut, 16), (1ul << 16) - 4096);
}

KTEST(untyped, reuse_after_revoke)
{
    seL4_CPtr ut = carve(16);
    seL4_CPtr cn = alloc_slot(), f = alloc_slot(), tcb = alloc_slot();
    /* A CNode full of caps, a TCB and a frame full of data. */
    EXPECT_OK(retype_to(ut, seL4_CapTableObject, 4, cn, 1));
    EXPECT_OK(retype(ut, ROOT, seL4_EndpointObject, 0, cn, 64, 0, 16));
    EXPECT_OK(retype_to(ut, seL4_TCBObject, 0, tcb, 1));
    EXPECT_OK(retype_to(ut, seL4_RISCV_4K_Page, 0, f, 1));
    seL4_Word pa = frame_paddr(f);
    volatile uint64_t *p = map_frame(f, MAP_WINDOW + 0x1000);
    for (int w = 0; w < 512; w++)
        p[w] = ~0ul - (uint64_t)w;
    /* Revoke: every object made from the untyped goes, mapping included. */
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, ut, 64), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(cn), TAG_NULL);
    KASSERT_EQ(seL4_DebugCapIdentify(tcb), TAG_NULL);
    KASSERT_EQ(seL4_DebugCapIdentify(f), TAG_NULL);
    KASSERT_EQ(seL4_DebugCapIdentify(ut), TAG_UNTYPED);
    /* All of it is available again, and the same objects land in the same
     * places, in zeroed memory: the new CNode's 16 slots are empty (a retype
     * into all of them succeeds) and the frame reads as zeros. */
    expect_no_mem(retype_to(ut, seL4_UntypedObject, 16, cn, 2), 1ul << 16);
    EXPECT_OK(retype_to(ut, seL4_CapTableObject, 4, cn, 1));
    EXPECT_OK(retype(ut, ROOT, seL4_EndpointObject, 0, cn, 64, 0, 16));
    EXPECT_OK(retype_to(ut, seL4_TCBObject, 0, tcb, 1));
    EXPECT_OK(retype_to(ut, seL4_RISCV_4K_Page, 0, f, 1));
    KASSERT_EQ(frame_paddr(f), pa);
    p = map_frame(f, MAP_WINDOW + 0x1000);
    for (int w = 0; w < 512; w++)
        KASSERT_MSG(p[w] == 0, "word %d of the reused frame is %#lx", w, (unsigned long)p[w]);
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, ut, 64), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(f), TAG_NULL);
}

KTEST(untyped, copy_takes_over_the_free_memory)
{
    seL4_CPtr ut = carve(14);
    seL4_CPtr c = alloc_slot(), s = alloc_slots(3);
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, s, 1));
    /* An untyped with children cannot be copied. */
    KASSERT_EQ(seL4_CNode_Copy(ROOT, c, 64, ROOT, ut, 64, seL4_AllRights), seL4_RevokeFirst);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, s, 64), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Copy(ROOT, c, 64, ROOT, ut, 64, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(c), TAG_UNTYPED);
    /* The original is marked full and has a child (the copy): nothing left. */
    expect_no_mem(retype_to(ut, seL4_EndpointObject, 0, s, 1), 0);
    /* The copy resets, then allocates from its own watermark. */
    EXPECT_OK(retype_to(c, seL4_EndpointObject, 0, s, 1));
    EXPECT_OK(retype_to(c, seL4_EndpointObject, 0, s + 1, 1));
    KASSERT_EQ(available(c, 14), (1ul << 14) - 32);
    /* Revoking the original removes the copy and its objects. */
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, ut, 64), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(c), TAG_NULL);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
    KASSERT_EQ(seL4_DebugCapIdentify(s + 1), TAG_NULL);
    expect_no_mem(retype_to(ut, seL4_UntypedObject, 14, s, 2), 1ul << 14);
}

KTEST(untyped, moved_untyped_keeps_its_children)
{
    seL4_CPtr ut = carve(14);
    seL4_CPtr m = alloc_slot(), s = alloc_slots(2);
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, s, 1));
    KASSERT_EQ(seL4_CNode_Move(ROOT, m, 64, ROOT, ut, 64), seL4_NoError);
    /* Still has a child: allocation continues at the watermark, no reset. */
    EXPECT_OK(retype_to(m, seL4_EndpointObject, 0, s + 1, 1));
    KASSERT_EQ(available(m, 14), (1ul << 14) - 32);
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, m, 64), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
    KASSERT_EQ(seL4_DebugCapIdentify(s + 1), TAG_NULL);
}

/* ---- device untypeds ------------------------------------------------- */

KTEST(untyped, device_untyped_gives_frames_and_untypeds_only)
{
    seL4_Word i = device_untyped_at(0x10000000);
    seL4_CPtr dev = ut_slot(i);
    const seL4_UntypedDesc *d = ut_desc(i);
    KASSERT(d->isDevice);
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, dev, 64), seL4_NoError); /* earlier suites' frames */
    seL4_CPtr s = alloc_slots(4);
    /* Every kernel object type is refused, InvalidArgument 1. */
    static const seL4_Word refused[][2] = {
        {seL4_TCBObject, 0},          {seL4_EndpointObject, 0},     {seL4_NotificationObject, 0},
        {seL4_CapTableObject, 4},     {seL4_SchedContextObject, 7}, {seL4_ReplyObject, 0},
        {seL4_RISCV_PageTableObject, 0},
    };
    for (unsigned k = 0; k < sizeof(refused) / sizeof(refused[0]); k++)
        expect_inv_arg(retype_to(dev, refused[k][0], refused[k][1], s, 1), 1);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
    if (d->paddr == 0x10000000) {
        /* A fresh device untyped: the first frame is at its base, the UART. */
        EXPECT_OK(retype_to(dev, seL4_RISCV_4K_Page, 0, s, 1));
        KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_FRAME);
        KASSERT_EQ(frame_paddr(s), 0x10000000ul);
    }
    /* A child untyped of a device untyped is a device untyped too. */
    EXPECT_OK(retype_to(dev, seL4_UntypedObject, 16, s + 1, 1));
    KASSERT_EQ(seL4_DebugCapIdentify(s + 1), TAG_UNTYPED);
    expect_inv_arg(retype_to(s + 1, seL4_TCBObject, 0, s + 2, 1), 1);
    EXPECT_OK(retype_to(s + 1, seL4_RISCV_4K_Page, 0, s + 2, 1));
    KASSERT_EQ(seL4_DebugCapIdentify(s + 2), TAG_FRAME);
}

KTEST(untyped, device_large_frames)
{
    /* Above the end of RAM the device untypeds are huge: 2 MiB and 1 GiB frames. */
    seL4_Word i = device_untyped_at(0x4000000000ul);
    KASSERT(ut_desc(i)->sizeBits >= 31);
    seL4_CPtr dev = ut_slot(i);
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, dev, 64), seL4_NoError);
    seL4_CPtr s = alloc_slots(2);
    EXPECT_OK(retype_to(dev, seL4_RISCV_Giga_Page, 0, s, 1));
    EXPECT_OK(retype_to(dev, seL4_RISCV_Mega_Page, 0, s + 1, 1));
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_FRAME);
    KASSERT_EQ(seL4_DebugCapIdentify(s + 1), TAG_FRAME);
    seL4_Word base = ut_desc(i)->paddr;
    KASSERT_EQ(frame_paddr(s), base);
    KASSERT_EQ(frame_paddr(s + 1), base + (1ul << 30));
    /* The mega page went after the giga page (aligned up from the watermark). */
    KASSERT_EQ(available(dev, ut_desc(i)->sizeBits), (1ul << ut_desc(i)->sizeBits) - (1ul << 30) - (1ul << 21));
}

KTEST(untyped, device_memory_check_after_not_enough_memory)
{
    seL4_Word i = device_untyped_at(0x10000000);
    seL4_CPtr dev = ut_slot(i);
    seL4_CPtr small = alloc_slot(), s = alloc_slot();
    EXPECT_OK(retype_to(dev, seL4_UntypedObject, 10, small, 1));
    /* 1 KiB device untyped: a TCB does not fit -> NotEnoughMemory(1024), not InvalidArgument. */
    expect_no_mem(retype_to(small, seL4_TCBObject, 0, s, 1), 1024);
    expect_inv_arg(retype_to(small, seL4_EndpointObject, 0, s, 1), 1);
}

/* ---- reset ------------------------------------------------------------ */

KTEST(untyped, reset_of_a_big_untyped_is_preempted)
{
    /* A big boot untyped starts full: the first retype zeroes all of it,
     * which takes longer than the 5 ms time slice, so the call is preempted
     * and restarted (the kernel counts restarts). */
    seL4_Word i = largest_ram_untyped(pool_index == ~0ul ? largest_ram_untyped(~0ul) : pool_index);
    seL4_Word bits = ut_desc(i)->sizeBits;
    KASSERT_MSG(bits >= 24, "largest spare RAM untyped only 2^%lu bytes", (unsigned long)bits);
    seL4_CPtr ut = ut_slot(i);
    make_full(ut); /* in case an earlier suite used it: all of it gets zeroed */
    seL4_CPtr s = alloc_slot();
    seL4_Word before = kairos_debug_counter(KAIROS_COUNTER_PREEMPTION_RESTARTS);
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, s, 1));
    seL4_Word after = kairos_debug_counter(KAIROS_COUNTER_PREEMPTION_RESTARTS);
    KASSERT_MSG(after > before, "no preemption restart while zeroing 2^%lu bytes", (unsigned long)bits);
    KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_ENDPOINT);
    /* Completed correctly: the endpoint is at the base, the rest is free. */
    KASSERT_EQ(available(ut, bits), (1ul << bits) - 16);
}

/* Creation takes a preemption point after each object: a retype stopped
 * part way is restarted and goes on from the object it stopped at (the
 * caller's TCB records how far it got). Invisible apart from timing: 256
 * frames back to back from the untyped's base, each cap where it belongs,
 * the watermark after the last. Under preempt=force (tests/test_ktest.py)
 * every third point stops the call, so each retype here is restarted about
 * 85 times; with real interrupts a restart happens when one arrives during
 * creation. */
KTEST(untyped, retype_preempted_part_way_finishes_in_place)
{
    char v[8];
    bool forced = kairos_arg_get(kairos_bootargs(), "preempt", v, sizeof(v));
    seL4_CPtr ut = carve(21);
    seL4_CPtr s = alloc_slots(257);
    seL4_Word before = kairos_debug_counter(KAIROS_COUNTER_PREEMPTION_RESTARTS);
    for (int round = 0; round < 2; round++) {
        EXPECT_OK(retype_to(ut, seL4_RISCV_4K_Page, 0, s, 256));
        seL4_Word base = frame_paddr(s);
        for (seL4_Word i = 0; i < 256; i++) {
            KASSERT_EQ(seL4_DebugCapIdentify(s + i), TAG_FRAME);
            KASSERT_EQ(frame_paddr(s + i), base + i * 4096);
        }
        /* The same call again is a new call, whose destination is full. */
        EXPECT_REPLY(retype_to(ut, seL4_RISCV_4K_Page, 0, s, 256), seL4_DeleteFirst, 0);
        /* The watermark is after the 256th. */
        EXPECT_OK(retype_to(ut, seL4_RISCV_4K_Page, 0, s + 256, 1));
        KASSERT_EQ(frame_paddr(s + 256), base + 256 * 4096);
        KASSERT_EQ(available(ut, 21), (1ul << 21) - 257 * 4096);
        KASSERT_EQ(seL4_CNode_Revoke(ROOT, ut, 64), seL4_NoError);
        for (seL4_Word i = 0; i < 257; i++)
            KASSERT_EQ(seL4_DebugCapIdentify(s + i), TAG_NULL);
    }
    seL4_Word restarts = kairos_debug_counter(KAIROS_COUNTER_PREEMPTION_RESTARTS) - before;
    printf("ktest: untyped/retype_preempted_part_way: %lu restarts\n", (unsigned long)restarts);
    if (forced)
        KASSERT_MSG(restarts >= 100, "only %lu restarts under preempt=force", (unsigned long)restarts);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, ut, 64), seL4_NoError);
}

/* ---- random arguments ------------------------------------------------ */

static uint64_t lcg_state = 0x9e3779b97f4a7c15ul;
static uint64_t rnd(uint64_t n)
{
    lcg_state = lcg_state * 6364136223846793005ul + 1442695040888963407ul;
    return (lcg_state >> 17) % n;
}

static const seL4_Word type_tag[seL4_ObjectTypeCount] = {
    TAG_UNTYPED, TAG_THREAD, TAG_ENDPOINT, TAG_NOTIFICATION, TAG_CNODE, TAG_SCHED_CONTEXT,
    TAG_REPLY,   TAG_FRAME,  TAG_FRAME,    TAG_FRAME,        TAG_PAGE_TABLE,
};

KTEST(untyped, random_arguments)
{
    /* Random (often invalid) retypes from a tree of untypeds into the root
     * CNode and a small CNode, with the kernel's invariant checker running
     * after every call in the check flavour. Every reply is an error seL4
     * can give or a success that created exactly the objects asked for; at
     * the end one revoke returns every byte. */
    seL4_CPtr top = carve(20);
    seL4_CPtr cn = alloc_slot();
    EXPECT_OK(retype_to(top, seL4_CapTableObject, 4, cn, 1));
    seL4_CPtr uts[8] = {top};
    int n_uts = 1;
    seL4_CPtr window = alloc_slots(64);
    unsigned ok = 0;
    for (int iter = 0; iter < 2000; iter++) {
        seL4_CPtr ut = uts[rnd(n_uts)];
        seL4_Word type = rnd(16) == 0 ? rnd(1ul << 20) : rnd(seL4_ObjectTypeCount);
        seL4_Word size_bits = rnd(8) == 0 ? rnd(70) : rnd(12);
        seL4_Word count = rnd(10) == 0 ? rnd(300) : 1 + rnd(4);
        seL4_Word depth, index, offset;
        seL4_CPtr root = ROOT;
        bool to_cnode = rnd(4) == 0;
        switch (rnd(6)) {
        case 0: depth = rnd(70), index = rnd(1ul << 16); break;          /* mostly bad */
        case 1: depth = 64, index = to_cnode ? cn : window + rnd(64); break; /* maybe not a CNode */
        default: depth = to_cnode ? 64 : 0, index = to_cnode ? cn : 0; break;
        }
        if (rnd(20) == 0)
            root = window + rnd(64); /* any cap, often not a CNode */
        offset = to_cnode ? rnd(20) : window + rnd(70);
        if (!to_cnode && rnd(10) == 0)
            offset = rnd(1ul << 14);
        if (!to_cnode && offset < window)
            offset = window + (offset % 64); /* keep clear of other slots */
        reply_t r = retype(ut, root, type, size_bits, index, depth, offset, count);
        switch (r.label) {
        case seL4_NoError:
            ok++;
            KASSERT(type < seL4_ObjectTypeCount);
            KASSERT_EQ(r.length, 0);
            if (root == ROOT && depth == 0) { /* into the root CNode at offset */
                for (seL4_Word i = 0; i < count; i++)
                    KASSERT_EQ(seL4_DebugCapIdentify(offset + i), type_tag[type]);
                if (type == seL4_UntypedObject && n_uts < 8)
                    uts[n_uts++] = offset;
            }
            break;
        case seL4_InvalidArgument:
            KASSERT_EQ(r.length, 1);
            KASSERT(r.mr[0] <= 1);
            break;
        case seL4_RangeError:
            KASSERT_EQ(r.length, 2);
            KASSERT(r.mr[0] <= r.mr[1]);
            break;
        case seL4_FailedLookup:
            KASSERT(r.length >= 2 && r.length <= 5);
            KASSERT_EQ(r.mr[0], 0);
            break;
        case seL4_DeleteFirst:
            KASSERT_EQ(r.length, 0);
            break;
        case seL4_NotEnoughMemory:
            KASSERT_EQ(r.length, 1);
            KASSERT(r.mr[0] <= (1ul << 20));
            break;
        default:
            KFAIL("unexpected reply %lu (length %lu)", (unsigned long)r.label, (unsigned long)r.length);
        }
        /* Now and then empty the window so that retypes keep succeeding. */
        if (rnd(50) == 0) {
            KASSERT_EQ(seL4_CNode_Revoke(ROOT, uts[rnd(n_uts)], 64), seL4_NoError);
            for (int k = 0; k < n_uts; k++)
                if (seL4_DebugCapIdentify(uts[k]) != TAG_UNTYPED)
                    uts[k--] = uts[--n_uts];
        }
    }
    KASSERT_MSG(ok > 100, "only %u retypes succeeded", ok);
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, top, 64), seL4_NoError);
    for (seL4_Word i = 0; i < 64; i++)
        KASSERT_EQ(seL4_DebugCapIdentify(window + i), TAG_NULL);
    KASSERT_EQ(seL4_DebugCapIdentify(cn), TAG_NULL);
    expect_no_mem(retype_to(top, seL4_UntypedObject, 20, cn, 2), 1ul << 20);
    EXPECT_OK(retype_to(top, seL4_UntypedObject, 20, cn, 1));
}

/* ---- all of memory ---------------------------------------------------- */

/* Fill an untyped of 2^bits bytes completely with objects of one type: the
 * biggest frames that fit, else TCBs or endpoints. Returns the number of
 * caps made. (No big CNodes: the check flavour's invariant checker walks
 * every slot of every CNode after each system call.) */
static seL4_Word fill_untyped(seL4_CPtr ut, seL4_Word bits)
{
    seL4_Word type, size_bits = 0, obj_bits;
    if (bits >= 30) {
        type = seL4_RISCV_Giga_Page, obj_bits = 30;
    } else if (bits >= 21) {
        type = seL4_RISCV_Mega_Page, obj_bits = 21;
    } else if (bits >= 12) {
        type = seL4_RISCV_4K_Page, obj_bits = 12;
    } else if (bits >= 11) {
        type = seL4_TCBObject, obj_bits = 11;
    } else {
        type = seL4_EndpointObject, obj_bits = 4;
    }
    seL4_Word total = 1ul << (bits - obj_bits), made = 0;
    while (made < total) {
        seL4_Word n = total - made > 256 ? 256 : total - made;
        EXPECT_OK(retype_to(ut, type, size_bits, alloc_slots(n), n));
        made += n;
    }
    return made;
}

KTEST(untyped, retype_all_of_memory_revoke_and_again)
{
    /* Start from nothing: revoke every RAM untyped (this also removes what
     * the tests before made from them). */
    for (seL4_Word i = 0; i < n_untypeds(); i++)
        if (!ut_desc(i)->isDevice)
            KASSERT_EQ(seL4_CNode_Revoke(ROOT, ut_slot(i), 64), seL4_NoError);
    slot_cursor = 0;
    /* 1. Every byte of RAM into objects. */
    seL4_Word caps = 0, bytes = 0;
    for (seL4_Word i = 0; i < n_untypeds(); i++) {
        if (ut_desc(i)->isDevice)
            continue;
        seL4_Word bits = ut_desc(i)->sizeBits;
        caps += fill_untyped(ut_slot(i), bits);
        bytes += 1ul << bits;
        KASSERT_EQ(available(ut_slot(i), bits), 0);
    }
    KASSERT(caps > 0 && bytes > (1ul << 29));
    /* 2. Revoke everything; every boot untyped, RAM and device, again
     * becomes one object of its full size: no memory was lost. */
    for (seL4_Word i = 0; i < n_untypeds(); i++) {
        seL4_CPtr ut = ut_slot(i);
        seL4_Word bits = ut_desc(i)->sizeBits;
        KASSERT_EQ(seL4_CNode_Revoke(ROOT, ut, 64), seL4_NoError);
        seL4_CPtr s = alloc_slot();
        EXPECT_OK(retype_to(ut, seL4_UntypedObject, bits, s, 1));
        KASSERT_EQ(available(ut, bits), 0);
        /* Leave the untyped as boot left it for the suites that follow. */
        KASSERT_EQ(seL4_CNode_Revoke(ROOT, ut, 64), seL4_NoError);
        KASSERT_EQ(seL4_DebugCapIdentify(s), TAG_NULL);
    }
    slot_cursor = 0;
    pool_index = ~0ul;
}

/* ---- the thread limit (suite `threadlimit`) ---------------------------- */

/* Kairos: at most KAIROS_MAX_THREADS TCBs exist at once, the root thread's
 * included (docs/object-model.md "Thread limit"). Untyped_Retype refuses
 * TCBs beyond that with NotEnoughMemory, MR0 = the room left for TCBs in
 * bytes, after every error seL4 would give; the last cap of a TCB going
 * (delete, or revoke of its untyped) gives its place back. The kernel's
 * count is read with the debug counters; the check flavour also verifies
 * it against the TCBs in existence after every system call. */

static seL4_Word threads_alive(void) { return kairos_debug_counter(KAIROS_COUNTER_THREADS); }

static void expect_empty(seL4_CPtr s, seL4_Word n)
{
    for (seL4_Word i = 0; i < n; i++)
        KASSERT_EQ(seL4_DebugCapIdentify(s + i), TAG_NULL);
}

/* An untyped of 2^18 bytes (128 TCBs) with one endpoint in it, so that its
 * watermark can be read back (available) and no retype resets it. */
static seL4_CPtr thread_untyped(void)
{
    seL4_CPtr ut = carve(18);
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, alloc_slot(), 1));
    KASSERT_EQ(available(ut, 18), (1ul << 18) - 16);
    return ut;
}

/* The room left for TCBs now; the earlier suites leave at least two. */
static seL4_Word thread_room(void)
{
    seL4_Word alive = threads_alive();
    KASSERT_MSG(alive >= 1 && alive <= KAIROS_MAX_THREADS, "%lu threads counted", (unsigned long)alive);
    KASSERT_MSG(KAIROS_MAX_THREADS - alive >= 2, "only %lu of %d threads left", (unsigned long)(KAIROS_MAX_THREADS - alive),
                KAIROS_MAX_THREADS);
    return KAIROS_MAX_THREADS - alive;
}

KTEST(threadlimit, retype_up_to_the_limit_then_not_enough_memory)
{
    seL4_Word alive = threads_alive(), room = thread_room();
    seL4_CPtr ut = thread_untyped();
    seL4_CPtr s = alloc_slots(room + 1);
    /* One more than the room, in one call: refused before anything is
     * made; the untyped's watermark and the slots are as they were. */
    expect_no_mem(retype_to(ut, seL4_TCBObject, 0, s, room + 1), room << 11);
    expect_empty(s, room + 1);
    KASSERT_EQ(available(ut, 18), (1ul << 18) - 16);
    KASSERT_EQ(threads_alive(), alive);
    /* Exactly the room: made. */
    EXPECT_OK(retype_to(ut, seL4_TCBObject, 0, s, room));
    for (seL4_Word i = 0; i < room; i++)
        KASSERT_EQ(seL4_DebugCapIdentify(s + i), TAG_THREAD);
    KASSERT_EQ(threads_alive(), KAIROS_MAX_THREADS);
    seL4_Word after = (1ul << 18) - 2048 * (room + 1); /* the endpoint's 2 KiB, then the TCBs */
    KASSERT_EQ(available(ut, 18), after);
    /* At the limit: one more TCB is refused, with no room, and nothing changes. */
    expect_no_mem(retype_to(ut, seL4_TCBObject, 0, s + room, 1), 0);
    expect_empty(s + room, 1);
    KASSERT_EQ(available(ut, 18), after);
    KASSERT_EQ(threads_alive(), KAIROS_MAX_THREADS);
    /* Other objects are not limited. */
    seL4_CPtr ep = alloc_slot();
    EXPECT_OK(retype_to(ut, seL4_EndpointObject, 0, ep, 1));
    KASSERT_EQ(seL4_CNode_Delete(ROOT, ep, 64), seL4_NoError);
    /* Deleting one TCB's only cap frees its place: one more may be made,
     * and then none again. */
    KASSERT_EQ(seL4_CNode_Delete(ROOT, s, 64), seL4_NoError);
    KASSERT_EQ(threads_alive(), KAIROS_MAX_THREADS - 1);
    seL4_CPtr two = alloc_slots(2);
    expect_no_mem(retype_to(ut, seL4_TCBObject, 0, two, 2), 1ul << 11);
    expect_empty(two, 2);
    EXPECT_OK(retype_to(ut, seL4_TCBObject, 0, s, 1));
    KASSERT_EQ(threads_alive(), KAIROS_MAX_THREADS);
    expect_no_mem(retype_to(ut, seL4_TCBObject, 0, s + room, 1), 0);
    /* A revoke of the untyped finalises every TCB made from it: all their
     * places are free, and the same number can be made again. */
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, ut, 64), seL4_NoError);
    expect_empty(s, room + 1);
    KASSERT_EQ(threads_alive(), alive);
    EXPECT_OK(retype_to(ut, seL4_TCBObject, 0, s, room));
    KASSERT_EQ(threads_alive(), KAIROS_MAX_THREADS);
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, ut, 64), seL4_NoError);
    KASSERT_EQ(threads_alive(), alive);
    KASSERT(kairos_debug_counter(KAIROS_COUNTER_THREADS_MAX) >= KAIROS_MAX_THREADS);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, ut, 64), seL4_NoError);
}

KTEST(threadlimit, seL4_errors_come_before_the_limit)
{
    seL4_Word alive = threads_alive(), room = thread_room();
    seL4_CPtr ut = thread_untyped();
    seL4_CPtr s = alloc_slots(room + 1);
    EXPECT_OK(retype_to(ut, seL4_TCBObject, 0, s, room));
    KASSERT_EQ(threads_alive(), KAIROS_MAX_THREADS);
    /* An occupied destination: DeleteFirst (seL4's check 13). */
    expect_no_mem(retype_to(ut, seL4_TCBObject, 0, s + room, 1), 0);
    EXPECT_REPLY(retype_to(ut, seL4_TCBObject, 0, s + room - 1, 2), seL4_DeleteFirst, 0);
    /* Too little memory: NotEnoughMemory with the untyped's bytes (check 14). */
    seL4_CPtr small = carve(10);
    expect_no_mem(retype_to(small, seL4_TCBObject, 0, s + room, 1), 1024);
    /* A device untyped: InvalidArgument(1) (check 15). */
    seL4_CPtr dev = ut_slot(device_untyped_at(0x10000000));
    expect_inv_arg(retype_to(dev, seL4_TCBObject, 0, s + room, 1), 1);
    expect_empty(s + room, 1);
    KASSERT_EQ(threads_alive(), KAIROS_MAX_THREADS);
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, ut, 64), seL4_NoError);
    KASSERT_EQ(threads_alive(), alive);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, ut, 64), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(ROOT, small, 64), seL4_NoError);
}
