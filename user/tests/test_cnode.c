/*
 * CSpace: every check of the CNode invocations in seL4's order with its
 * error payload (seL4's decodeCNodeInvocation), the
 * lookup-failure details (seL4's lookup_fault), the derivation rules
 * (seL4's deriveCap and sameRegionAs), the derivation tree (badged subtrees, revoke, delete
 * of CNodes holding caps), and preemption of long deletes and revokes.
 *
 * Slots: each test takes empty root-CNode slots from the upper quarter of
 * the BootInfo's empty region (checked empty with seL4_DebugCapIdentify),
 * clear of the regions other suites use, and deletes what it made before it
 * ends. Memory: child untypeds carved from the last RAM untyped with room,
 * revoked and deleted at the end of the test that made them.
 */
#include <ktest.h>
#include <threads.h>
#include <sel4/sel4.h>
#include <stdint.h>
#include <stdio.h>

enum {
    TAG_NULL = 0,
    TAG_FRAME = 1,
    TAG_UNTYPED = 2,
    TAG_PAGE_TABLE = 3,
    TAG_ENDPOINT = 4,
    TAG_NOTIFICATION = 6,
    TAG_CNODE = 10,
    TAG_ASID_CONTROL = 11,
    TAG_THREAD = 12,
    TAG_ASID_POOL = 13,
    TAG_IRQ_CONTROL = 14,
    TAG_DOMAIN = 20,
    TAG_SCHED_CONTEXT = 22,
    TAG_SCHED_CONTROL = 24,
};

/* Lookup failure numbers as MR1 reports them (type + 1). */
enum { LF_INVALID_ROOT = 1, LF_MISSING_CAP = 2, LF_DEPTH_MISMATCH = 3, LF_GUARD_MISMATCH = 4 };

#define ROOT seL4_CapInitThreadCNode
#define D 64 /* depth of a root-CNode slot number */


static seL4_Word ident(seL4_CPtr s) { return seL4_DebugCapIdentify(s); }

/* ---- slots ---------------------------------------------------------- */

#define MAX_USED 64
static seL4_CPtr used[MAX_USED];
static int n_used;

static bool is_used(seL4_CPtr s)
{
    for (int i = 0; i < n_used; i++)
        if (used[i] == s)
            return true;
    return false;
}

/* An empty root slot, remembered for cleanup(). */
static seL4_CPtr alloc_slot(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    seL4_CPtr start = bi->empty.start + (bi->empty.end - bi->empty.start) * 3 / 4;
    KASSERT(n_used < MAX_USED);
    for (seL4_CPtr s = start; s < bi->empty.end; s++) {
        if (!is_used(s) && ident(s) == TAG_NULL) {
            used[n_used++] = s;
            return s;
        }
    }
    KFAIL("out of empty slots");
}

/* Revoke and delete everything this test allocated (children first: slots
 * are revoked in reverse allocation order, then deleted). */
static void cleanup(void)
{
    for (int i = n_used - 1; i >= 0; i--)
        KASSERT_EQ(seL4_CNode_Revoke(ROOT, used[i], D), seL4_NoError);
    for (int i = n_used - 1; i >= 0; i--)
        KASSERT_EQ(seL4_CNode_Delete(ROOT, used[i], D), seL4_NoError);
    for (int i = 0; i < n_used; i++)
        KASSERT_EQ(ident(used[i]), TAG_NULL);
    n_used = 0;
}

static void start(void) { n_used = 0; }

/* ---- raw CNode calls with the reply's label, length and MRs --------- */

typedef struct {
    seL4_Word label, length;
    seL4_Word mr[5];
} reply_t;

/* Call `service` with `label`, message length `len`, `n_extra` extra caps
 * and message words mrs[0..7] (words at or beyond len are still loaded but
 * not part of the message). */
static reply_t call(seL4_CPtr service, seL4_Word label, seL4_Word len, seL4_Word n_extra, seL4_CPtr cap0,
                    seL4_CPtr cap1, const seL4_Word mrs[8])
{
    seL4_SetCap(0, cap0);
    seL4_SetCap(1, cap1);
    for (int i = 4; i < 8; i++)
        seL4_SetMR(i, mrs[i]);
    seL4_Word m0 = mrs[0], m1 = mrs[1], m2 = mrs[2], m3 = mrs[3];
    seL4_MessageInfo_t out =
        seL4_CallWithMRs(service, seL4_MessageInfo_new(label, 0, n_extra, len), &m0, &m1, &m2, &m3);
    reply_t r = {seL4_MessageInfo_get_label(out), seL4_MessageInfo_get_length(out), {m0, m1, m2, m3, 0}};
    r.mr[4] = seL4_GetMR(4);
    return r;
}

#define EXPECT_REPLY(r, code, len)                                                                     \
    do {                                                                                               \
        reply_t r_ = (r);                                                                              \
        KASSERT_MSG(r_.label == (seL4_Word)(code) && r_.length == (seL4_Word)(len),                    \
                    "reply label %lu length %lu, expected %lu length %lu (MR0 %lu MR1 %lu MR2 %lu)",    \
                    (unsigned long)r_.label, (unsigned long)r_.length, (unsigned long)(code),            \
                    (unsigned long)(len), (unsigned long)r_.mr[0], (unsigned long)r_.mr[1],              \
                    (unsigned long)r_.mr[2]);                                                          \
    } while (0)

#define EXPECT_OK(r) EXPECT_REPLY(r, seL4_NoError, 0)
#define EXPECT_ERR0(r, code) EXPECT_REPLY(r, code, 0)

static void expect_range(reply_t r, seL4_Word lo, seL4_Word hi)
{
    EXPECT_REPLY(r, seL4_RangeError, 2);
    KASSERT_EQ(r.mr[0], lo);
    KASSERT_EQ(r.mr[1], hi);
}

static void expect_invalid_root(reply_t r, seL4_Word source)
{
    EXPECT_REPLY(r, seL4_FailedLookup, 2);
    KASSERT_EQ(r.mr[0], source);
    KASSERT_EQ(r.mr[1], LF_INVALID_ROOT);
}

static void expect_missing(reply_t r, seL4_Word source, seL4_Word bits_left)
{
    EXPECT_REPLY(r, seL4_FailedLookup, 3);
    KASSERT_EQ(r.mr[0], source);
    KASSERT_EQ(r.mr[1], LF_MISSING_CAP);
    KASSERT_EQ(r.mr[2], bits_left);
}

static void expect_depth(reply_t r, seL4_Word source, seL4_Word bits_left, seL4_Word bits_found)
{
    EXPECT_REPLY(r, seL4_FailedLookup, 4);
    KASSERT_EQ(r.mr[0], source);
    KASSERT_EQ(r.mr[1], LF_DEPTH_MISMATCH);
    KASSERT_EQ(r.mr[2], bits_left);
    KASSERT_EQ(r.mr[3], bits_found);
}

static void expect_guard(reply_t r, seL4_Word source, seL4_Word bits_left, seL4_Word guard, seL4_Word bits_found)
{
    EXPECT_REPLY(r, seL4_FailedLookup, 5);
    KASSERT_EQ(r.mr[0], source);
    KASSERT_EQ(r.mr[1], LF_GUARD_MISMATCH);
    KASSERT_EQ(r.mr[2], bits_left);
    KASSERT_EQ(r.mr[3], guard);
    KASSERT_EQ(r.mr[4], bits_found);
}

/* Raw forms of each invocation (all words explicit). */
static reply_t raw_copy(seL4_CPtr svc, seL4_Word len, seL4_Word n_extra, seL4_Word dest, seL4_Word dest_depth,
                        seL4_CPtr src_root, seL4_Word src, seL4_Word src_depth, seL4_Word rights)
{
    seL4_Word m[8] = {dest, dest_depth, src, src_depth, rights, 0, 0, 0};
    return call(svc, CNodeCopy, len, n_extra, src_root, 0, m);
}

static reply_t raw_mint(seL4_CPtr svc, seL4_Word len, seL4_Word dest, seL4_Word src, seL4_Word rights,
                        seL4_Word data)
{
    seL4_Word m[8] = {dest, D, src, D, rights, data, 0, 0};
    return call(svc, CNodeMint, len, 1, ROOT, 0, m);
}

static reply_t raw_simple(seL4_Word label, seL4_CPtr svc, seL4_Word len, seL4_Word index, seL4_Word depth)
{
    seL4_Word m[8] = {index, depth, 0, 0, 0, 0, 0, 0};
    return call(svc, label, len, 0, 0, 0, m);
}

static reply_t raw_rotate(seL4_Word len, seL4_Word n_extra, seL4_Word dest, seL4_Word dest_depth,
                          seL4_Word dest_badge, seL4_CPtr pivot_root, seL4_Word pivot, seL4_Word pivot_depth,
                          seL4_Word pivot_badge, seL4_CPtr src_root, seL4_Word src, seL4_Word src_depth)
{
    seL4_Word m[8] = {dest, dest_depth, dest_badge, pivot, pivot_depth, pivot_badge, src, src_depth};
    return call(ROOT, CNodeRotate, len, n_extra, pivot_root, src_root, m);
}

#define ALL (seL4_AllRights.words[0])

/* Wrappers on the root CNode at depth 64. */
static seL4_Error copy(seL4_CPtr dest, seL4_CPtr src, seL4_CapRights_t rights)
{
    return seL4_CNode_Copy(ROOT, dest, D, ROOT, src, D, rights);
}
static seL4_Error mint(seL4_CPtr dest, seL4_CPtr src, seL4_CapRights_t rights, seL4_Word badge)
{
    return seL4_CNode_Mint(ROOT, dest, D, ROOT, src, D, rights, badge);
}
static seL4_Error move(seL4_CPtr dest, seL4_CPtr src) { return seL4_CNode_Move(ROOT, dest, D, ROOT, src, D); }
static seL4_Error mutate(seL4_CPtr dest, seL4_CPtr src, seL4_Word data)
{
    return seL4_CNode_Mutate(ROOT, dest, D, ROOT, src, D, data);
}
static seL4_Error del(seL4_CPtr s) { return seL4_CNode_Delete(ROOT, s, D); }
static seL4_Error revoke(seL4_CPtr s) { return seL4_CNode_Revoke(ROOT, s, D); }

/* A fresh copy of `src` in a new slot. */
static seL4_CPtr copy_new(seL4_CPtr src)
{
    seL4_CPtr s = alloc_slot();
    KASSERT_EQ(copy(s, src, seL4_AllRights), seL4_NoError);
    return s;
}

/* ---- memory --------------------------------------------------------- */

/* A new child untyped of 2^bits bytes, from the smallest RAM untyped with
 * room that is larger than that (small ones first: a boot untyped is zeroed
 * on its first use, and the largest is the untyped suite's pool). */
static seL4_CPtr carve(seL4_Word bits)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    seL4_CPtr s = alloc_slot();
    seL4_Word n = bi->untyped.end - bi->untyped.start;
    for (seL4_Word size = bits + 1; size <= 38; size++) {
        for (seL4_Word k = n; k-- > 0;) {
            const seL4_UntypedDesc *u = &bi->untypedList[k];
            if (u->isDevice || u->sizeBits != size)
                continue;
            if (seL4_Untyped_Retype(bi->untyped.start + k, seL4_UntypedObject, bits, ROOT, 0, 0, s, 1) ==
                seL4_NoError)
                return s;
        }
    }
    KFAIL("no RAM untyped with 2^%lu bytes free", (unsigned long)bits);
}

/* One object of `type` from untyped `ut` in a new slot. */
static seL4_CPtr make(seL4_CPtr ut, seL4_Word type, seL4_Word size_bits)
{
    seL4_CPtr s = alloc_slot();
    seL4_Error e = seL4_Untyped_Retype(ut, type, size_bits, ROOT, 0, 0, s, 1);
    KASSERT_MSG(e == seL4_NoError, "retype type %lu: error %d", (unsigned long)type, (int)e);
    return s;
}

/* =====================================================================
 * Common steps C1-C3 and the slot lookup (S)
 * ===================================================================== */

KTEST(cnode, c1_label_outside_range)
{
    seL4_Word m[8] = {1, D, 0, 0, 0, 0, 0, 0};
    EXPECT_ERR0(call(ROOT, 17, 2, 0, 0, 0, m), seL4_IllegalOperation);
    EXPECT_ERR0(call(ROOT, 26, 2, 0, 0, 0, m), seL4_IllegalOperation);
    EXPECT_ERR0(call(ROOT, 0, 2, 0, 0, 0, m), seL4_IllegalOperation);
    /* C1 comes before C2: a bad label with no words is still IllegalOperation. */
    EXPECT_ERR0(call(ROOT, 1000, 0, 0, 0, 0, m), seL4_IllegalOperation);
}

KTEST(cnode, c2_truncated)
{
    for (seL4_Word label = CNodeRevoke; label <= CNodeRotate; label++) {
        EXPECT_ERR0(raw_simple(label, ROOT, 0, 0, 0), seL4_TruncatedMessage);
        EXPECT_ERR0(raw_simple(label, ROOT, 1, 0, 0), seL4_TruncatedMessage);
    }
}

KTEST(cnode, c3_depth_range)
{
    for (seL4_Word label = CNodeRevoke; label <= CNodeRotate; label++) {
        expect_range(raw_simple(label, ROOT, 2, 5, 0), 1, 64);
        expect_range(raw_simple(label, ROOT, 2, 5, 65), 1, 64);
        expect_range(raw_simple(label, ROOT, 2, 5, ~0ul), 1, 64);
    }
}

KTEST(cnode, c3_guard_and_depth_mismatch_on_root)
{
    /* Root cap: radix 13, guard size 51, guard 0. */
    /* Guard bits not zero. */
    expect_guard(raw_simple(CNodeDelete, ROOT, 2, (1ul << 63) | 5, 64), 0, 64, 0, 51);
    /* Guard size exceeds the bits given. */
    expect_guard(raw_simple(CNodeDelete, ROOT, 2, 5, 10), 0, 10, 0, 51);
    expect_guard(raw_simple(CNodeRevoke, ROOT, 2, 5, 50), 0, 50, 0, 51);
    /* Guard fits, guard + radix does not. */
    expect_depth(raw_simple(CNodeDelete, ROOT, 2, 0, 51), 0, 51, 64);
    expect_depth(raw_simple(CNodeDelete, ROOT, 2, 5, 63), 0, 63, 64);
    /* With 51 bits the whole index is guard: 5 is not the guard 0. */
    expect_guard(raw_simple(CNodeDelete, ROOT, 2, 5, 51), 0, 51, 0, 51);
    /* The same from Copy's destination, which is also a target lookup. */
    expect_depth(raw_copy(ROOT, 5, 1, 5, 60, ROOT, 1, D, ALL), 0, 60, 64);
}

KTEST(cnode, c3_multi_level_lookups)
{
    start();
    seL4_CPtr ut = carve(16);
    /* C: radix 4, guard 0. C2: radix 4; a cap to C2 with guard size 2,
     * guard 1 sits in C[6], and one with no guard in C[5]. */
    seL4_CPtr c = make(ut, seL4_CapTableObject, 4);
    seL4_CPtr c2 = make(ut, seL4_CapTableObject, 4);
    KASSERT_EQ(seL4_CNode_Mint(c, 6, 4, ROOT, c2, D, seL4_AllRights, seL4_CNode_CapData_new(1, 2).words[0]),
               seL4_NoError);
    KASSERT_EQ(seL4_CNode_Copy(c, 5, 4, ROOT, c2, D, seL4_AllRights), seL4_NoError);
    /* Two levels through C[5]: index (5 << 4) | 7 at depth 8 is C2[7]. */
    KASSERT_EQ(seL4_CNode_Copy(c, (5 << 4) | 7, 8, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_NoError);
    /* Through C[6] with its guard: (6 << 6) | (1 << 4) | 7 at depth 10 is C2[7] too. */
    seL4_CPtr t = alloc_slot();
    KASSERT_EQ(seL4_CNode_Move(ROOT, t, D, c, (6 << 6) | (1 << 4) | 7, 10), seL4_NoError);
    KASSERT_EQ(ident(t), TAG_DOMAIN);
    /* Guard mismatch at the second level: bits left 6, guard 1, size 2. */
    expect_guard(raw_simple(CNodeDelete, c, 2, (6 << 6) | (2 << 4) | 7, 10), 0, 6, 1, 2);
    /* Depth mismatch at the second level: 3 bits left, level needs 6. */
    expect_depth(raw_simple(CNodeDelete, c, 2, (6 << 3) | 2, 7), 0, 3, 6);
    /* A non-CNode cap reached with bits left: C[1] empty, 4 bits left. */
    expect_depth(raw_simple(CNodeDelete, c, 2, (1 << 4) | 2, 8), 0, 4, 0);
    /* A domain cap in C[2], 4 bits left. */
    KASSERT_EQ(seL4_CNode_Copy(c, 2, 4, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_NoError);
    expect_depth(raw_simple(CNodeDelete, c, 2, (2 << 4) | 2, 8), 0, 4, 0);
    /* Depth 1..3 on C (radix 4): depth mismatch, 4 bits needed. */
    expect_depth(raw_simple(CNodeDelete, c, 2, 0, 3), 0, 3, 4);
    /* A slot lookup ends at exactly depth bits even when the slot holds a
     * CNode cap: deleting C[5] at depth 4 deletes the cap to C2 there. */
    KASSERT_EQ(seL4_CNode_Delete(c, 5, 4), seL4_NoError);
    expect_depth(raw_simple(CNodeDelete, c, 2, (5 << 4) | 7, 8), 0, 4, 0);
    cleanup();
}

KTEST(cnode, decode_depth_limit_is_four_cnodes)
{
    /* Kairos decodes through at most CONFIG_MAX_CSPACE_DEPTH = 4 CNodes
     * per lookup (seL4: up to 64). A chain of five radix-1 CNodes, each
     * holding the next in slot 0: four levels resolve, the fifth is refused
     * as a walk stopped with bits left (DepthMismatch, bits found 0). */
    start();
    seL4_CPtr ut = carve(12);
    seL4_CPtr c[5];
    for (int i = 0; i < 5; i++)
        c[i] = make(ut, seL4_CapTableObject, 1);
    for (int i = 0; i < 4; i++)
        KASSERT_EQ(seL4_CNode_Copy(c[i], 0, 1, ROOT, c[i + 1], D, seL4_AllRights), seL4_NoError);
    /* Depth 4 from c[0]: c[0][0] -> c[1][0] -> c[2][0] -> c[3][1]. */
    KASSERT_EQ(seL4_CNode_Copy(c[0], 1, 4, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Copy(c[3], 1, 1, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_DeleteFirst);
    KASSERT_EQ(seL4_CNode_Delete(c[0], 1, 4), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Copy(c[3], 1, 1, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_NoError);
    /* Depth 5 would reach c[4][1] in seL4; here the walk may not enter
     * c[4] (the fifth CNode): one bit left, none found. */
    expect_depth(raw_simple(CNodeDelete, c[0], 2, 1, 5), 0, 1, 0);
    expect_depth(raw_copy(c[0], 5, 1, 1, 5, ROOT, seL4_CapDomain, D, ALL), 0, 1, 0);
    /* Entered directly, c[4] is one level: the slot is there and empty. */
    KASSERT_EQ(seL4_CNode_Copy(c[4], 1, 1, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(c[1], 1, 4), seL4_NoError); /* c[1]->c[2]->c[3]->c[4][1] */
    KASSERT_EQ(seL4_CNode_Copy(c[4], 1, 1, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_NoError);
    cleanup();
}

KTEST(cnode, lookup_from_root_cptr_bits)
{
    /* A cap to the root CNode minted with guard size 0 (radix 13) makes a
     * two-level walk through the root CNode possible. */
    start();
    seL4_CPtr g0 = alloc_slot();
    KASSERT_EQ(mint(g0, ROOT, seL4_AllRights, seL4_CNode_CapData_new(0, 0).words[0]), seL4_NoError);
    KASSERT_EQ(ident(g0), TAG_CNODE);
    /* Through g0 at depth 13 a slot number is the top 13 of the given bits. */
    seL4_CPtr s = alloc_slot();
    KASSERT_EQ(seL4_CNode_Copy(g0, s, 13, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(ident(s), TAG_DOMAIN);
    /* Depth 64 through g0: slot (top 13 bits), 51 bits left at a non-CNode. */
    expect_depth(raw_simple(CNodeDelete, g0, 2, s << 51, 64), 0, 51, 0);
    /* Fewer bits than the radix. */
    expect_depth(raw_simple(CNodeDelete, g0, 2, 1, 12), 0, 12, 13);
    /* Slot g0 holds a CNode cap (g0 itself): 26 bits walk g0 then s. */
    KASSERT_EQ(seL4_CNode_Delete(g0, (g0 << 13) | s, 26), seL4_NoError);
    KASSERT_EQ(ident(s), TAG_NULL);
    cleanup();
}

/* =====================================================================
 * Copy (21)
 * ===================================================================== */

KTEST(cnode, copy_checks_in_order)
{
    start();
    seL4_CPtr dest = alloc_slot();
    seL4_CPtr empty = alloc_slot();
    /* 4. length < 4, or extra cap 0 missing. */
    EXPECT_ERR0(raw_copy(ROOT, 3, 1, dest, D, ROOT, seL4_CapDomain, D, ALL), seL4_TruncatedMessage);
    EXPECT_ERR0(raw_copy(ROOT, 5, 0, dest, D, ROOT, seL4_CapDomain, D, ALL), seL4_TruncatedMessage);
    /* 5. destination not empty (before any source check). */
    EXPECT_ERR0(raw_copy(ROOT, 5, 1, seL4_CapInitThreadTCB, D, seL4_CapInitThreadTCB, 0, 0, ALL),
                seL4_DeleteFirst);
    /* 6. source lookup: root not a CNode; depth out of range; mismatches. */
    expect_invalid_root(raw_copy(ROOT, 5, 1, dest, D, seL4_CapInitThreadTCB, seL4_CapDomain, D, ALL), 1);
    expect_invalid_root(raw_copy(ROOT, 5, 1, dest, D, empty, seL4_CapDomain, D, ALL), 1);
    expect_range(raw_copy(ROOT, 5, 1, dest, D, ROOT, seL4_CapDomain, 0, ALL), 1, 64);
    expect_range(raw_copy(ROOT, 5, 1, dest, D, ROOT, seL4_CapDomain, 65, ALL), 1, 64);
    expect_guard(raw_copy(ROOT, 5, 1, dest, D, ROOT, seL4_CapDomain, 20, ALL), 1, 20, 0, 51);
    expect_depth(raw_copy(ROOT, 5, 1, dest, D, ROOT, 1, 52, ALL), 1, 52, 64);
    /* 7. source slot empty. */
    expect_missing(raw_copy(ROOT, 5, 1, dest, D, ROOT, empty, D, ALL), 1, 64);
    /* 8. length < 5 (checked only now). */
    EXPECT_ERR0(raw_copy(ROOT, 4, 1, dest, D, ROOT, seL4_CapDomain, D, ALL), seL4_TruncatedMessage);
    /* 10. IRQ control derives to null. */
    EXPECT_ERR0(raw_copy(ROOT, 5, 1, dest, D, ROOT, seL4_CapIRQControl, D, ALL), seL4_IllegalOperation);
    KASSERT_EQ(ident(dest), TAG_NULL);
    /* Success. */
    EXPECT_OK(raw_copy(ROOT, 5, 1, dest, D, ROOT, seL4_CapDomain, D, ALL));
    KASSERT_EQ(ident(dest), TAG_DOMAIN);
    cleanup();
}

KTEST(cnode, copy_untyped_with_children_revoke_first)
{
    start();
    seL4_CPtr ut = carve(12);
    seL4_CPtr c1 = alloc_slot(), c2 = alloc_slot();
    /* No children: the copy is allowed and becomes its child. */
    KASSERT_EQ(copy(c1, ut, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(ident(c1), TAG_UNTYPED);
    /* 9. now it has a child: RevokeFirst for Copy and Mint; the copy can be copied. */
    EXPECT_ERR0(raw_copy(ROOT, 5, 1, c2, D, ROOT, ut, D, ALL), seL4_RevokeFirst);
    EXPECT_ERR0(raw_mint(ROOT, 6, c2, ut, ALL, 0), seL4_RevokeFirst);
    /* The source is full after the copy: only the copy can allocate. */
    seL4_CPtr ep = alloc_slot();
    KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_EndpointObject, 0, ROOT, 0, 0, ep, 1), seL4_NotEnoughMemory);
    KASSERT_EQ(seL4_GetMR(0), 0);
    KASSERT_EQ(seL4_Untyped_Retype(c1, seL4_EndpointObject, 0, ROOT, 0, 0, ep, 1), seL4_NoError);
    /* Move does not derive: an untyped with children moves. */
    KASSERT_EQ(move(c2, c1), seL4_NoError);
    KASSERT_EQ(ident(c2), TAG_UNTYPED);
    KASSERT_EQ(ident(c1), TAG_NULL);
    /* Revoking the original removes the copy and the endpoint made from it. */
    KASSERT_EQ(revoke(ut), seL4_NoError);
    KASSERT_EQ(ident(c2), TAG_NULL);
    KASSERT_EQ(ident(ep), TAG_NULL);
    KASSERT_EQ(copy(c1, ut, seL4_AllRights), seL4_NoError);
    cleanup();
}

KTEST(cnode, copy_unmapped_page_table_illegal)
{
    start();
    seL4_CPtr ut = carve(13);
    seL4_CPtr pt = make(ut, seL4_RISCV_PageTableObject, 0);
    seL4_CPtr d = alloc_slot();
    EXPECT_ERR0(raw_copy(ROOT, 5, 1, d, D, ROOT, pt, D, ALL), seL4_IllegalOperation);
    EXPECT_ERR0(raw_mint(ROOT, 6, d, pt, ALL, 0), seL4_IllegalOperation);
    /* A mapped page table (the root VSpace, an ASID-assigned root) copies. */
    KASSERT_EQ(copy(d, seL4_CapInitThreadVSpace, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(ident(d), TAG_PAGE_TABLE);
    /* Move needs no derivation. */
    seL4_CPtr d2 = alloc_slot();
    KASSERT_EQ(move(d2, pt), seL4_NoError);
    KASSERT_EQ(ident(d2), TAG_PAGE_TABLE);
    cleanup();
}

/* =====================================================================
 * Derivation rules (seL4's deriveCap; docs/object-model.md)
 * ===================================================================== */

KTEST(cnode, derive_control_caps)
{
    start();
    seL4_BootInfo *bi = kairos_bootinfo();
    KASSERT_EQ(ident(copy_new(bi->schedcontrol.start)), TAG_SCHED_CONTROL);
    KASSERT_EQ(ident(copy_new(seL4_CapDomain)), TAG_DOMAIN);
    KASSERT_EQ(ident(copy_new(seL4_CapASIDControl)), TAG_ASID_CONTROL);
    KASSERT_EQ(ident(copy_new(seL4_CapInitThreadASIDPool)), TAG_ASID_POOL);
    KASSERT_EQ(ident(copy_new(seL4_CapInitThreadTCB)), TAG_THREAD);
    KASSERT_EQ(ident(copy_new(seL4_CapInitThreadSC)), TAG_SCHED_CONTEXT);
    KASSERT_EQ(ident(copy_new(seL4_CapInitThreadCNode)), TAG_CNODE);
    /* Mint ignores the word for these. */
    seL4_CPtr m = alloc_slot();
    KASSERT_EQ(mint(m, seL4_CapDomain, seL4_NoRights, 1234), seL4_NoError);
    KASSERT_EQ(ident(m), TAG_DOMAIN);
    /* IRQ control: never copied, by Copy or Mint. */
    seL4_CPtr d = alloc_slot();
    KASSERT_EQ(copy(d, seL4_CapIRQControl, seL4_AllRights), seL4_IllegalOperation);
    KASSERT_EQ(mint(d, seL4_CapIRQControl, seL4_AllRights, 0), seL4_IllegalOperation);
    KASSERT_EQ(ident(d), TAG_NULL);
    /* but it can be moved (and back). */
    KASSERT_EQ(move(d, seL4_CapIRQControl), seL4_NoError);
    KASSERT_EQ(ident(d), TAG_IRQ_CONTROL);
    KASSERT_EQ(move(seL4_CapIRQControl, d), seL4_NoError);
    KASSERT_EQ(ident(seL4_CapIRQControl), TAG_IRQ_CONTROL);
    /* The copies work: a copied domain cap is still a DomainSet. */
    seL4_CPtr dom = copy_new(seL4_CapDomain);
    KASSERT_EQ(seL4_DomainSet_Set(dom, 0, seL4_CapInitThreadTCB), seL4_NoError);
    cleanup();
}

KTEST(cnode, derive_frame_copy_loses_mapping)
{
    start();
    seL4_BootInfo *bi = kairos_bootinfo();
    seL4_Word bi_va = (seL4_Word)bi;
    seL4_CPtr f = copy_new(seL4_CapBootInfoFrame);
    KASSERT_EQ(ident(f), TAG_FRAME);
    /* The copy has no mapping: mapping it where the original is mapped
     * finds the PTE taken (DeleteFirst), while the original may be
     * remapped at its own address. */
    KASSERT_EQ(seL4_RISCV_Page_Map(f, seL4_CapInitThreadVSpace, bi_va, seL4_AllRights, 0), seL4_DeleteFirst);
    KASSERT_EQ(seL4_RISCV_Page_Map(seL4_CapBootInfoFrame, seL4_CapInitThreadVSpace, bi_va, seL4_AllRights, 0),
               seL4_NoError);
    /* Same physical frame. */
    seL4_RISCV_Page_GetAddress_t a = seL4_RISCV_Page_GetAddress(f);
    seL4_RISCV_Page_GetAddress_t b = seL4_RISCV_Page_GetAddress(seL4_CapBootInfoFrame);
    KASSERT_EQ(a.error, 0);
    KASSERT_EQ(a.paddr, b.paddr);
    /* Deleting the unmapped copy leaves the original mapping alone. */
    KASSERT_EQ(del(f), seL4_NoError);
    KASSERT_EQ(bi->empty.end, 1ul << 13); /* still readable */
    cleanup();
}

KTEST(cnode, endpoint_badges_and_rights)
{
    start();
    seL4_CPtr ut = carve(12);
    seL4_CPtr ep = make(ut, seL4_EndpointObject, 0);
    seL4_CPtr b5 = alloc_slot(), b5b = alloc_slot(), c = alloc_slot(), x = alloc_slot();
    /* Mint a badge onto an unbadged cap. */
    KASSERT_EQ(mint(b5, ep, seL4_AllRights, 5), seL4_NoError);
    KASSERT_EQ(ident(b5), TAG_ENDPOINT);
    /* Minting an already badged cap: null → IllegalOperation, even with the same badge or 0. */
    EXPECT_ERR0(raw_mint(ROOT, 6, x, b5, ALL, 5), seL4_IllegalOperation);
    EXPECT_ERR0(raw_mint(ROOT, 6, x, b5, ALL, 6), seL4_IllegalOperation);
    EXPECT_ERR0(raw_mint(ROOT, 6, x, b5, ALL, 0), seL4_IllegalOperation);
    /* Mint steps 4-7 as Copy's: length < 4 or no extra cap, destination
     * occupied, source lookup, empty source. */
    seL4_Word mt[8] = {x, D, ep, D, ALL, 1, 0, 0};
    EXPECT_ERR0(call(ROOT, CNodeMint, 3, 1, ROOT, 0, mt), seL4_TruncatedMessage);
    EXPECT_ERR0(call(ROOT, CNodeMint, 6, 0, ROOT, 0, mt), seL4_TruncatedMessage);
    EXPECT_ERR0(raw_mint(ROOT, 6, b5, ep, ALL, 1), seL4_DeleteFirst);
    expect_invalid_root(call(ROOT, CNodeMint, 6, 1, ep, 0, mt), 1);
    mt[3] = 70;
    expect_range(call(ROOT, CNodeMint, 6, 1, ROOT, 0, mt), 1, 64);
    /* Mint length: < 6 is truncated (after the source checks). */
    EXPECT_ERR0(raw_mint(ROOT, 5, x, b5, ALL, 5), seL4_TruncatedMessage);
    expect_missing(raw_mint(ROOT, 5, x, c, ALL, 5), 1, 64);
    /* Copying a badged cap keeps the badge: it is a child of b5. */
    KASSERT_EQ(copy(b5b, b5, seL4_AllRights), seL4_NoError);
    /* Mutate of an endpoint is always null, badged or not, any word. */
    seL4_Word mm[8] = {x, D, ep, D, 0, 0, 0, 0};
    EXPECT_ERR0(call(ROOT, CNodeMutate, 5, 1, ROOT, 0, mm), seL4_IllegalOperation);
    KASSERT_EQ(mutate(x, b5, 7), seL4_IllegalOperation);
    /* Mutate length < 5 is truncated first. */
    EXPECT_ERR0(call(ROOT, CNodeMutate, 4, 1, ROOT, 0, mm), seL4_TruncatedMessage);
    /* Move of a badged endpoint is fine (no derivation, badge kept). */
    KASSERT_EQ(move(x, b5b), seL4_NoError);
    KASSERT_EQ(move(b5b, x), seL4_NoError);
    /* Rights: CancelBadgedSends needs all four; a copy without Grant lacks them. */
    KASSERT_EQ(copy(c, b5, seL4_NoWrite), seL4_NoError);
    KASSERT_EQ(seL4_CNode_CancelBadgedSends(ROOT, c, D), seL4_IllegalOperation);
    KASSERT_EQ(seL4_CNode_CancelBadgedSends(ROOT, b5, D), seL4_NoError);
    KASSERT_EQ(seL4_CNode_CancelBadgedSends(ROOT, ep, D), seL4_NoError);
    KASSERT_EQ(del(c), seL4_NoError);
    /* Rights only shrink: masking a reduced cap with all rights gives it nothing back. */
    KASSERT_EQ(copy(c, b5, seL4_CanGrantReply), seL4_NoError);
    KASSERT_EQ(copy(x, c, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_CNode_CancelBadgedSends(ROOT, x, D), seL4_IllegalOperation);
    /* Mint with rights masked and badge together. */
    KASSERT_EQ(del(x), seL4_NoError);
    KASSERT_EQ(mint(x, ep, seL4_NoRead, 9), seL4_NoError);
    KASSERT_EQ(seL4_CNode_CancelBadgedSends(ROOT, x, D), seL4_IllegalOperation);
    cleanup();
}

KTEST(cnode, notification_badges)
{
    start();
    seL4_CPtr ut = carve(12);
    seL4_CPtr n = make(ut, seL4_NotificationObject, 0);
    seL4_CPtr b = alloc_slot(), x = alloc_slot();
    KASSERT_EQ(mint(b, n, seL4_AllRights, 0x30), seL4_NoError);
    KASSERT_EQ(ident(b), TAG_NOTIFICATION);
    KASSERT_EQ(mint(x, b, seL4_AllRights, 0x40), seL4_IllegalOperation);
    KASSERT_EQ(mutate(x, n, 0), seL4_IllegalOperation);
    /* CancelBadgedSends is for endpoints only. */
    KASSERT_EQ(seL4_CNode_CancelBadgedSends(ROOT, b, D), seL4_IllegalOperation);
    /* Revoking the original removes the badged child. */
    KASSERT_EQ(revoke(n), seL4_NoError);
    KASSERT_EQ(ident(b), TAG_NULL);
    KASSERT_EQ(ident(n), TAG_NOTIFICATION);
    cleanup();
}

KTEST(cnode, cnode_guard_mint_and_mutate)
{
    start();
    seL4_CPtr g = alloc_slot(), h = alloc_slot(), s = alloc_slot();
    /* guard size + radix (13) > 64 → IllegalOperation. */
    EXPECT_ERR0(raw_mint(ROOT, 6, g, ROOT, ALL, seL4_CNode_CapData_new(0, 52).words[0]), seL4_IllegalOperation);
    EXPECT_ERR0(raw_mint(ROOT, 6, g, ROOT, ALL, 63), seL4_IllegalOperation);
    /* 51 is allowed: the copy addresses like the root cap. */
    KASSERT_EQ(mint(g, ROOT, seL4_AllRights, seL4_CNode_CapData_new(0, 51).words[0]), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Copy(g, s, D, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(ident(s), TAG_DOMAIN);
    KASSERT_EQ(del(s), seL4_NoError);
    /* A guard value: guard size 3, guard 5; bits above the guard size are dropped. */
    KASSERT_EQ(mint(h, ROOT, seL4_AllRights, seL4_CNode_CapData_new(5 | 0x40, 3).words[0]), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Copy(h, (5ul << 13) | s, 16, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(ident(s), TAG_DOMAIN);
    expect_guard(raw_simple(CNodeDelete, h, 2, (4ul << 13) | s, 16), 0, 16, 5, 3);
    /* Mutate replaces the guard (the cap moves). */
    KASSERT_EQ(mutate(g, h, seL4_CNode_CapData_new(2, 3).words[0]), seL4_DeleteFirst);
    KASSERT_EQ(del(g), seL4_NoError);
    KASSERT_EQ(mutate(g, h, seL4_CNode_CapData_new(2, 3).words[0]), seL4_NoError);
    KASSERT_EQ(ident(h), TAG_NULL);
    expect_guard(raw_simple(CNodeDelete, g, 2, (5ul << 13) | s, 16), 0, 16, 2, 3);
    KASSERT_EQ(seL4_CNode_Delete(g, (2ul << 13) | s, 16), seL4_NoError);
    KASSERT_EQ(ident(s), TAG_NULL);
    /* Mutate with an impossible guard: IllegalOperation, nothing moves. */
    KASSERT_EQ(mutate(h, g, 60), seL4_IllegalOperation);
    KASSERT_EQ(ident(g), TAG_CNODE);
    /* Mutate of other caps leaves them unchanged (and moves them). */
    seL4_CPtr t = copy_new(seL4_CapInitThreadTCB);
    KASSERT_EQ(mutate(h, t, 0x1234), seL4_NoError);
    KASSERT_EQ(ident(h), TAG_THREAD);
    cleanup();
}

/* =====================================================================
 * Move (23), Mutate (24)
 * ===================================================================== */

KTEST(cnode, move_and_mutate_checks)
{
    start();
    seL4_CPtr a = copy_new(seL4_CapDomain), b = alloc_slot(), empty = alloc_slot();
    seL4_Word m[8] = {b, D, a, D, 0, 0, 0, 0};
    EXPECT_ERR0(call(ROOT, CNodeMove, 3, 1, ROOT, 0, m), seL4_TruncatedMessage);
    EXPECT_ERR0(call(ROOT, CNodeMove, 4, 0, ROOT, 0, m), seL4_TruncatedMessage);
    EXPECT_ERR0(call(ROOT, CNodeMutate, 3, 1, ROOT, 0, m), seL4_TruncatedMessage);
    /* Destination occupied. */
    KASSERT_EQ(move(a, a), seL4_DeleteFirst);
    KASSERT_EQ(move(seL4_CapInitThreadTCB, a), seL4_DeleteFirst);
    /* Source checks. */
    seL4_Word m2[8] = {b, D, a, D, 0, 0, 0, 0};
    expect_invalid_root(call(ROOT, CNodeMove, 4, 1, seL4_CapDomain, 0, m2), 1);
    m2[3] = 0;
    expect_range(call(ROOT, CNodeMove, 4, 1, ROOT, 0, m2), 1, 64);
    m2[2] = empty;
    m2[3] = D;
    expect_missing(call(ROOT, CNodeMove, 4, 1, ROOT, 0, m2), 1, 64);
    expect_missing(call(ROOT, CNodeMutate, 5, 1, ROOT, 0, m2), 1, 64);
    /* Move: length 4 is enough. */
    EXPECT_OK(call(ROOT, CNodeMove, 4, 1, ROOT, 0, m));
    KASSERT_EQ(ident(a), TAG_NULL);
    KASSERT_EQ(ident(b), TAG_DOMAIN);
    /* Mutate: length 5. */
    seL4_Word m3[8] = {a, D, b, D, 77, 0, 0, 0};
    EXPECT_ERR0(call(ROOT, CNodeMutate, 4, 1, ROOT, 0, m3), seL4_TruncatedMessage);
    EXPECT_OK(call(ROOT, CNodeMutate, 5, 1, ROOT, 0, m3));
    KASSERT_EQ(ident(a), TAG_DOMAIN);
    KASSERT_EQ(ident(b), TAG_NULL);
    /* A moved cap keeps its place in the tree: revoking the original
     * domain cap removes the moved copy. */
    KASSERT_EQ(revoke(seL4_CapDomain), seL4_NoError);
    KASSERT_EQ(ident(a), TAG_NULL);
    KASSERT_EQ(ident(seL4_CapDomain), TAG_DOMAIN);
    cleanup();
}

/* =====================================================================
 * Rotate (25)
 * ===================================================================== */

KTEST(cnode, rotate_checks_in_order)
{
    start();
    seL4_BootInfo *bi = kairos_bootinfo();
    seL4_CPtr src = copy_new(seL4_CapDomain);
    seL4_CPtr piv = copy_new(bi->schedcontrol.start);
    seL4_CPtr dst = alloc_slot(), empty = alloc_slot(), occupied = copy_new(seL4_CapInitThreadTCB);
    /* 4. length < 8 or fewer than two extra caps. */
    EXPECT_ERR0(raw_rotate(7, 2, dst, D, 0, ROOT, piv, D, 0, ROOT, src, D), seL4_TruncatedMessage);
    EXPECT_ERR0(raw_rotate(8, 1, dst, D, 0, ROOT, piv, D, 0, ROOT, src, D), seL4_TruncatedMessage);
    /* 5. source lookup (extra cap 1). */
    expect_invalid_root(raw_rotate(8, 2, dst, D, 0, ROOT, piv, D, 0, seL4_CapDomain, src, D), 1);
    expect_range(raw_rotate(8, 2, dst, D, 0, ROOT, piv, D, 0, ROOT, src, 0), 1, 64);
    expect_guard(raw_rotate(8, 2, dst, D, 0, ROOT, piv, D, 0, ROOT, src, 9), 1, 9, 0, 51);
    /* 6. pivot lookup (extra cap 0), also flagged as a source lookup. */
    expect_invalid_root(raw_rotate(8, 2, dst, D, 0, seL4_CapDomain, piv, D, 0, ROOT, src, D), 1);
    expect_range(raw_rotate(8, 2, dst, D, 0, ROOT, piv, 65, 0, ROOT, src, D), 1, 64);
    expect_depth(raw_rotate(8, 2, dst, D, 0, ROOT, 3, 60, 0, ROOT, src, D), 1, 60, 64);
    /* The source is looked up before the pivot. */
    expect_range(raw_rotate(8, 2, dst, D, 0, seL4_CapDomain, piv, D, 0, ROOT, src, 0), 1, 64);
    /* 7. pivot is the source or the destination. */
    EXPECT_ERR0(raw_rotate(8, 2, dst, D, 0, ROOT, src, D, 0, ROOT, src, D), seL4_IllegalOperation);
    EXPECT_ERR0(raw_rotate(8, 2, dst, D, 0, ROOT, dst, D, 0, ROOT, src, D), seL4_IllegalOperation);
    /* ... even before an occupied destination or empty slots. */
    EXPECT_ERR0(raw_rotate(8, 2, occupied, D, 0, ROOT, occupied, D, 0, ROOT, empty, D), seL4_IllegalOperation);
    /* 8. destination occupied (and not the source). */
    EXPECT_ERR0(raw_rotate(8, 2, occupied, D, 0, ROOT, piv, D, 0, ROOT, empty, D), seL4_DeleteFirst);
    /* 9. source empty: FL(source, MissingCapability src_depth). */
    expect_missing(raw_rotate(8, 2, dst, D, 0, ROOT, piv, D, 0, ROOT, empty, D), 1, 64);
    /* 10. pivot empty: reported as a non-source lookup. */
    expect_missing(raw_rotate(8, 2, dst, D, 0, ROOT, empty, D, 0, ROOT, src, D), 0, 64);
    /* 11-12. endpoint caps become null under "preserve". */
    seL4_CPtr ut = carve(12);
    seL4_CPtr ep = make(ut, seL4_EndpointObject, 0);
    EXPECT_ERR0(raw_rotate(8, 2, dst, D, 0, ROOT, piv, D, 0, ROOT, ep, D), seL4_IllegalOperation);
    EXPECT_ERR0(raw_rotate(8, 2, dst, D, 0, ROOT, ep, D, 0, ROOT, src, D), seL4_IllegalOperation);
    KASSERT_EQ(ident(ep), TAG_ENDPOINT);
    /* Success: source → pivot, pivot → destination. */
    EXPECT_OK(raw_rotate(8, 2, dst, D, 0, ROOT, piv, D, 0, ROOT, src, D));
    KASSERT_EQ(ident(src), TAG_NULL);
    KASSERT_EQ(ident(piv), TAG_DOMAIN);
    KASSERT_EQ(ident(dst), TAG_SCHED_CONTROL);
    /* Destination = source: a swap. */
    EXPECT_OK(raw_rotate(8, 2, dst, D, 0, ROOT, piv, D, 0, ROOT, dst, D));
    KASSERT_EQ(ident(dst), TAG_DOMAIN);
    KASSERT_EQ(ident(piv), TAG_SCHED_CONTROL);
    /* The wrapper agrees, and the rotated caps keep their tree places:
     * revoking the originals removes them. */
    KASSERT_EQ(seL4_CNode_Rotate(ROOT, src, D, 0, ROOT, dst, D, 0, ROOT, piv, D), seL4_NoError);
    KASSERT_EQ(ident(src), TAG_DOMAIN);
    KASSERT_EQ(ident(dst), TAG_SCHED_CONTROL);
    KASSERT_EQ(ident(piv), TAG_NULL);
    KASSERT_EQ(revoke(seL4_CapDomain), seL4_NoError);
    KASSERT_EQ(revoke(bi->schedcontrol.start), seL4_NoError);
    KASSERT_EQ(ident(src), TAG_NULL);
    KASSERT_EQ(ident(dst), TAG_NULL);
    cleanup();
}

KTEST(cnode, rotate_cnode_guards)
{
    /* Rotate applies MR2 to the pivot cap (which lands in the destination)
     * and MR5 to the source cap (which lands in the pivot). */
    start();
    seL4_CPtr a = alloc_slot(), p = alloc_slot(), d = alloc_slot(), s = alloc_slot();
    KASSERT_EQ(copy(a, ROOT, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(copy(p, ROOT, seL4_AllRights), seL4_NoError);
    seL4_Word g3 = seL4_CNode_CapData_new(3, 3).words[0], g6 = seL4_CNode_CapData_new(6, 3).words[0];
    EXPECT_OK(raw_rotate(8, 2, d, D, g3, ROOT, p, D, g6, ROOT, a, D));
    /* d has guard 3 (from the pivot), p has guard 6 (from the source). */
    KASSERT_EQ(seL4_CNode_Copy(d, (3ul << 13) | s, 16, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(p, (6ul << 13) | s, 16), seL4_NoError);
    KASSERT_EQ(ident(s), TAG_NULL);
    /* Guard too big for either → IllegalOperation. */
    EXPECT_ERR0(raw_rotate(8, 2, a, D, 60, ROOT, p, D, 0, ROOT, d, D), seL4_IllegalOperation);
    EXPECT_ERR0(raw_rotate(8, 2, a, D, 0, ROOT, p, D, 60, ROOT, d, D), seL4_IllegalOperation);
    cleanup();
}

/* =====================================================================
 * Delete (19), Revoke (18), CancelBadgedSends (20)
 * ===================================================================== */

KTEST(cnode, delete_and_revoke_basics)
{
    start();
    seL4_CPtr e = alloc_slot();
    /* Deleting or revoking an empty slot is fine. */
    KASSERT_EQ(del(e), seL4_NoError);
    KASSERT_EQ(revoke(e), seL4_NoError);
    /* Depth errors are reported by both. */
    expect_range(raw_simple(CNodeDelete, ROOT, 2, e, 0), 1, 64);
    expect_range(raw_simple(CNodeRevoke, ROOT, 2, e, 65), 1, 64);
    /* Copies of a control cap are its children; revoke keeps the original. */
    seL4_CPtr c[8];
    for (int i = 0; i < 8; i++)
        c[i] = copy_new(seL4_CapDomain);
    /* A copy of a copy: the copy is not revocable, revoking it does nothing. */
    seL4_CPtr cc = copy_new(c[3]);
    KASSERT_EQ(revoke(c[3]), seL4_NoError);
    KASSERT_EQ(ident(cc), TAG_DOMAIN);
    KASSERT_EQ(del(c[0]), seL4_NoError);
    KASSERT_EQ(ident(c[0]), TAG_NULL);
    KASSERT_EQ(revoke(seL4_CapDomain), seL4_NoError);
    for (int i = 0; i < 8; i++)
        KASSERT_EQ(ident(c[i]), TAG_NULL);
    KASSERT_EQ(ident(cc), TAG_NULL);
    KASSERT_EQ(ident(seL4_CapDomain), TAG_DOMAIN);
    cleanup();
}

KTEST(cnode, cancel_badged_sends_checks)
{
    start();
    seL4_CPtr e = alloc_slot();
    expect_range(raw_simple(CNodeCancelBadgedSends, ROOT, 2, e, 0), 1, 64);
    EXPECT_ERR0(raw_simple(CNodeCancelBadgedSends, ROOT, 2, e, D), seL4_IllegalOperation);
    EXPECT_ERR0(raw_simple(CNodeCancelBadgedSends, ROOT, 2, seL4_CapInitThreadTCB, D), seL4_IllegalOperation);
    EXPECT_ERR0(raw_simple(CNodeCancelBadgedSends, ROOT, 2, ROOT, D), seL4_IllegalOperation);
    seL4_CPtr ut = carve(12);
    seL4_CPtr ep = make(ut, seL4_EndpointObject, 0);
    EXPECT_OK(raw_simple(CNodeCancelBadgedSends, ROOT, 2, ep, D));
    /* Each missing right alone is enough to refuse. */
    const seL4_CapRights_t less[4] = {seL4_NoWrite, seL4_NoRead, seL4_CapRights_new(1, 0, 1, 1),
                                      seL4_CapRights_new(0, 1, 1, 1)};
    for (int i = 0; i < 4; i++) {
        KASSERT_EQ(mint(e, ep, less[i], 3), seL4_NoError);
        EXPECT_ERR0(raw_simple(CNodeCancelBadgedSends, ROOT, 2, e, D), seL4_IllegalOperation);
        KASSERT_EQ(del(e), seL4_NoError);
    }
    KASSERT_EQ(mint(e, ep, seL4_AllRights, 3), seL4_NoError);
    EXPECT_OK(raw_simple(CNodeCancelBadgedSends, ROOT, 2, e, D));
    cleanup();
}

KTEST(cnode, badged_subtrees)
{
    start();
    seL4_CPtr ut = carve(12);
    seL4_CPtr ep = make(ut, seL4_EndpointObject, 0);
    seL4_CPtr b5 = alloc_slot(), b5c = alloc_slot(), b5d = alloc_slot(), b6 = alloc_slot(), u = alloc_slot();
    KASSERT_EQ(mint(b5, ep, seL4_AllRights, 5), seL4_NoError);
    KASSERT_EQ(copy(b5c, b5, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(copy(b5d, b5c, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(mint(b6, ep, seL4_AllRights, 6), seL4_NoError);
    KASSERT_EQ(copy(u, ep, seL4_AllRights), seL4_NoError);
    /* Revoking a badged cap removes the copies with its badge only. */
    KASSERT_EQ(revoke(b5), seL4_NoError);
    KASSERT_EQ(ident(b5), TAG_ENDPOINT);
    KASSERT_EQ(ident(b5c), TAG_NULL);
    KASSERT_EQ(ident(b5d), TAG_NULL);
    KASSERT_EQ(ident(b6), TAG_ENDPOINT);
    KASSERT_EQ(ident(u), TAG_ENDPOINT);
    /* Two independently minted caps with the same badge are siblings:
     * revoking one does not remove the other. */
    KASSERT_EQ(mint(b5c, ep, seL4_AllRights, 5), seL4_NoError);
    KASSERT_EQ(revoke(b5), seL4_NoError);
    KASSERT_EQ(ident(b5c), TAG_ENDPOINT);
    /* Deleting the first cap of a badge hands that mark to the copy after
     * it: b5c' (minted, first of its badge) with its copy b5d, then a new
     * badge-5 mint w right before them. Revoking w must not take b5c' or,
     * once b5c' is deleted, b5d. */
    KASSERT_EQ(copy(b5d, b5c, seL4_AllRights), seL4_NoError);
    seL4_CPtr w = alloc_slot();
    KASSERT_EQ(mint(w, ep, seL4_AllRights, 5), seL4_NoError);
    KASSERT_EQ(revoke(w), seL4_NoError);
    KASSERT_EQ(ident(b5c), TAG_ENDPOINT);
    KASSERT_EQ(ident(b5d), TAG_ENDPOINT);
    KASSERT_EQ(del(b5c), seL4_NoError);
    KASSERT_EQ(revoke(w), seL4_NoError);
    KASSERT_EQ(ident(b5d), TAG_ENDPOINT);
    KASSERT_EQ(revoke(b5), seL4_NoError);
    KASSERT_EQ(ident(b5d), TAG_ENDPOINT);
    /* Revoking the unbadged original removes everything derived from it. */
    KASSERT_EQ(revoke(ep), seL4_NoError);
    KASSERT_EQ(ident(b5), TAG_NULL);
    KASSERT_EQ(ident(b5d), TAG_NULL);
    KASSERT_EQ(ident(b6), TAG_NULL);
    KASSERT_EQ(ident(u), TAG_NULL);
    KASSERT_EQ(ident(ep), TAG_ENDPOINT);
    cleanup();
}

KTEST(cnode, revoke_untyped_removes_objects)
{
    start();
    seL4_CPtr ut = carve(16);
    seL4_CPtr cn = make(ut, seL4_CapTableObject, 8);
    /* 256 endpoints straight into the new CNode, then copies of them. */
    KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_EndpointObject, 0, cn, 0, 0, 0, 128), seL4_NoError);
    for (seL4_Word i = 0; i < 64; i++)
        KASSERT_EQ(seL4_CNode_Copy(cn, 128 + i, 8, cn, i, 8, seL4_AllRights), seL4_NoError);
    seL4_CPtr t = alloc_slot();
    KASSERT_EQ(seL4_CNode_Copy(ROOT, t, D, cn, 5, 8, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(ident(t), TAG_ENDPOINT);
    /* Revoke the untyped: the CNode, every endpoint and every copy go. */
    KASSERT_EQ(revoke(ut), seL4_NoError);
    KASSERT_EQ(ident(cn), TAG_NULL);
    KASSERT_EQ(ident(t), TAG_NULL);
    /* All of it can be retyped again as one object of its full size. */
    seL4_CPtr whole = alloc_slot();
    KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_UntypedObject, 16, ROOT, 0, 0, whole, 1), seL4_NoError);
    cleanup();
}

/* Delete of the last cap to a CNode deletes what it holds, including a TCB
 * and a CNode holding further caps; nothing is left for revoke to find but
 * unreachable zombies, and the memory is reusable afterwards. */
KTEST(cnode, delete_cnode_with_contents)
{
    start();
    seL4_CPtr ut = carve(18);
    seL4_CPtr c = make(ut, seL4_CapTableObject, 6);
    seL4_CPtr inner = make(ut, seL4_CapTableObject, 5);
    seL4_CPtr ep = make(ut, seL4_EndpointObject, 0);
    seL4_CPtr tcb = make(ut, seL4_TCBObject, 0);
    seL4_CPtr sc = make(ut, seL4_SchedContextObject, 8);
    /* inner holds copies of ep and domain caps; c holds inner (its only
     * cap), ep copies, the TCB (only cap), the SC (only cap) and a cap to
     * itself. */
    for (seL4_Word i = 0; i < 32; i += 3)
        KASSERT_EQ(seL4_CNode_Copy(inner, i, 5, ROOT, ep, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Copy(inner, 1, 5, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Move(c, 0, 6, ROOT, inner, D), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Move(c, 63, 6, ROOT, tcb, D), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Move(c, 40, 6, ROOT, sc, D), seL4_NoError);
    for (seL4_Word i = 1; i < 63; i += 5)
        KASSERT_EQ(seL4_CNode_Copy(c, i, 6, ROOT, ep, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Copy(c, 62, 6, ROOT, c, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(ident(inner), TAG_NULL);
    /* Delete the last outside cap: the copy in c[62] keeps c alive. */
    seL4_CPtr keep = alloc_slot();
    KASSERT_EQ(seL4_CNode_Move(ROOT, keep, D, c, 62, 6), seL4_NoError);
    KASSERT_EQ(del(c), seL4_NoError);
    KASSERT_EQ(ident(keep), TAG_CNODE);
    /* Now the last cap. */
    KASSERT_EQ(del(keep), seL4_NoError);
    KASSERT_EQ(ident(keep), TAG_NULL);
    /* The endpoint's copies inside c are gone: ep has no children left
     * except what the unreachable inner CNode still holds; revoking ep
     * removes those too. */
    KASSERT_EQ(revoke(ep), seL4_NoError);
    KASSERT_EQ(revoke(seL4_CapDomain), seL4_NoError);
    /* Revoke the untyped: everything (zombie remains included) goes, and
     * the whole untyped can be retyped again. */
    KASSERT_EQ(revoke(ut), seL4_NoError);
    KASSERT_EQ(ident(ep), TAG_NULL);
    seL4_CPtr whole = alloc_slot();
    KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_UntypedObject, 18, ROOT, 0, 0, whole, 1), seL4_NoError);
    cleanup();
}

/* A CNode whose only cap sits in one of its own slots (moved there through
 * itself): unreachable, it is deleted when its untyped is revoked, the
 * delete starting in the CNode's own slot. Also: deleting a slot of a CNode
 * through a copy that is kept in the same CNode. */
KTEST(cnode, delete_self_contained_cnode)
{
    start();
    seL4_CPtr ut = carve(14);
    seL4_CPtr c = make(ut, seL4_CapTableObject, 4);
    seL4_CPtr c2 = make(ut, seL4_CapTableObject, 4);
    KASSERT_EQ(seL4_CNode_Copy(c, 3, 4, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Copy(c, 9, 4, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Move(c, 5, 4, ROOT, c, D), seL4_NoError);
    KASSERT_EQ(ident(c), TAG_NULL);
    /* c2: a copy of its cap kept in c2[7], deleted through c2 itself. */
    KASSERT_EQ(seL4_CNode_Copy(c2, 1, 4, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Copy(c2, 7, 4, ROOT, c2, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(c2, 7, 4), seL4_NoError);
    KASSERT_EQ(ident(c2), TAG_CNODE);
    KASSERT_EQ(seL4_CNode_Copy(c2, 0, 4, ROOT, c2, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(del(c2), seL4_NoError); /* c2[0] keeps it: an unreachable self-contained CNode */
    KASSERT_EQ(revoke(ut), seL4_NoError);
    KASSERT_EQ(revoke(seL4_CapDomain), seL4_NoError);
    seL4_CPtr whole = alloc_slot();
    KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_UntypedObject, 14, ROOT, 0, 0, whole, 1), seL4_NoError);
    cleanup();
}

KTEST(cnode, delete_tcb_with_caps)
{
    start();
    seL4_CPtr ut = carve(16);
    seL4_CPtr tcb = make(ut, seL4_TCBObject, 0);
    seL4_CPtr cn = make(ut, seL4_CapTableObject, 4);
    /* Give the TCB a CSpace (the only other cap to cn goes away) and the
     * root VSpace. */
    KASSERT_EQ(seL4_TCB_Configure(tcb, cn, 0, seL4_CapInitThreadVSpace, 0, 0, 0), seL4_NoError);
    KASSERT_EQ(del(cn), seL4_NoError);
    KASSERT_EQ(del(tcb), seL4_NoError);
    KASSERT_EQ(ident(tcb), TAG_NULL);
    KASSERT_EQ(revoke(ut), seL4_NoError);
    seL4_CPtr whole = alloc_slot();
    KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_UntypedObject, 16, ROOT, 0, 0, whole, 1), seL4_NoError);
    cleanup();
}

/* A TCB whose only cap is in slot 0 of its own CSpace CNode, whose only cap
 * is the TCB's CSpace slot: an unreachable cycle. Revoking the untyped
 * deletes both, whichever the revoke meets first (the zombie of one ends up
 * in the other's slot; cdt.c's corner case). Also a CNode holding the last
 * cap to a TCB whose CSpace is that CNode, deleted from outside. */
KTEST(cnode, delete_tcb_cspace_cycles)
{
    start();
    seL4_CPtr ut = carve(16);
    for (int variant = 0; variant < 2; variant++) {
        seL4_CPtr t = make(ut, seL4_TCBObject, 0);
        seL4_CPtr c = make(ut, seL4_CapTableObject, 4);
        KASSERT_EQ(seL4_TCB_Configure(t, c, 0, seL4_CapInitThreadVSpace, 0, 0, 0), seL4_NoError);
        KASSERT_EQ(seL4_CNode_Copy(c, 5, 4, ROOT, seL4_CapDomain, D, seL4_AllRights), seL4_NoError);
        KASSERT_EQ(seL4_CNode_Move(c, variant ? 9 : 0, 4, ROOT, t, D), seL4_NoError);
        if (variant) {
            /* c's root cap is the last outside cap besides the TCB's slot:
             * deleting the TCB's cap through c finalises the TCB, whose
             * CSpace slot is then not final (c's root cap remains). */
            KASSERT_EQ(seL4_CNode_Delete(c, 9, 4), seL4_NoError);
            KASSERT_EQ(del(c), seL4_NoError);
        } else {
            KASSERT_EQ(del(c), seL4_NoError);
        }
        KASSERT_EQ(ident(c), TAG_NULL);
        KASSERT_EQ(ident(t), TAG_NULL);
    }
    KASSERT_EQ(revoke(ut), seL4_NoError);
    KASSERT_EQ(revoke(seL4_CapDomain), seL4_NoError);
    seL4_CPtr whole = alloc_slot();
    KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_UntypedObject, 16, ROOT, 0, 0, whole, 1), seL4_NoError);
    cleanup();
}

/* =====================================================================
 * Preemption of long operations
 * ===================================================================== */

/* Radix of the big CNodes: 2^18 slots take tens of milliseconds to clear
 * under QEMU, several 5 ms time slices. */
#define BIG 18

/* Deleting the last cap to a big CNode: the zombie is reduced one slot at a
 * time with a preemption point after each; time-slice interrupts arrive
 * every 5 ms, so the delete is preempted and restarted, and completes. */
KTEST(cnode, long_delete_preempted)
{
    start();
    seL4_CPtr ut = carve(24);
    seL4_CPtr c = make(ut, seL4_CapTableObject, BIG); /* 2^18 slots, 8 MiB */
    seL4_CPtr ep = make(ut, seL4_EndpointObject, 0);
    for (seL4_Word i = 0; i < (1ul << BIG); i += (1ul << BIG) / 32)
        KASSERT_EQ(seL4_CNode_Copy(c, i, BIG, ROOT, ep, D, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Copy(c, (1ul << BIG) - 1, BIG, ROOT, ep, D, seL4_AllRights), seL4_NoError);
    seL4_Word before = kairos_debug_counter(KAIROS_COUNTER_PREEMPTION_RESTARTS);
    KASSERT_EQ(del(c), seL4_NoError);
    seL4_Word after = kairos_debug_counter(KAIROS_COUNTER_PREEMPTION_RESTARTS);
    KASSERT_MSG(after > before, "delete of a 2^%d-slot CNode was never preempted", BIG);
    printf("ktest: cnode/long_delete_preempted: %lu restarts\n", (unsigned long)(after - before));
    KASSERT_EQ(ident(c), TAG_NULL);
    /* All copies went with it: ep has no children. */
    seL4_CPtr x = alloc_slot();
    KASSERT_EQ(copy(x, ep, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(revoke(ut), seL4_NoError);
    KASSERT_EQ(ident(ep), TAG_NULL);
    KASSERT_EQ(ident(x), TAG_NULL);
    seL4_CPtr whole = alloc_slot();
    KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_UntypedObject, 24, ROOT, 0, 0, whole, 1), seL4_NoError);
    cleanup();
}

/* Revoking an untyped whose child is a big CNode full of caps: the revoke
 * meets time-slice interrupts, is restarted, keeps its progress (the CNode's
 * zombie), and completes: afterwards the untyped has no children. */
KTEST(cnode, long_revoke_preempted)
{
    start();
    seL4_CPtr ut = carve(24);
    seL4_CPtr c = make(ut, seL4_CapTableObject, BIG);
    seL4_CPtr c2 = make(ut, seL4_CapTableObject, 12);
    /* 256 endpoints per retype straight into c2, then copies of some into c. */
    for (seL4_Word k = 0; k < 4; k++)
        KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_EndpointObject, 0, c2, 0, 0, k * 256, 256), seL4_NoError);
    for (seL4_Word i = 0; i < 1024; i += 32)
        KASSERT_EQ(seL4_CNode_Copy(c, i * 256, BIG, c2, i, 12, seL4_AllRights), seL4_NoError);
    seL4_Word before = kairos_debug_counter(KAIROS_COUNTER_PREEMPTION_RESTARTS);
    KASSERT_EQ(revoke(ut), seL4_NoError);
    seL4_Word after = kairos_debug_counter(KAIROS_COUNTER_PREEMPTION_RESTARTS);
    KASSERT_MSG(after > before, "revoke was never preempted");
    printf("ktest: cnode/long_revoke_preempted: %lu restarts\n", (unsigned long)(after - before));
    KASSERT_EQ(ident(c), TAG_NULL);
    KASSERT_EQ(ident(c2), TAG_NULL);
    /* Complete: the whole untyped is free again. */
    seL4_CPtr whole = alloc_slot();
    KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_UntypedObject, 24, ROOT, 0, 0, whole, 1), seL4_NoError);
    cleanup();
}

/* While a long delete is preempted, its slot holds a zombie another thread
 * can see: it identifies as a zombie (tag 18), cannot be copied or minted
 * (IllegalOperation) and cannot be invoked (InvalidCapability 0). A second
 * thread of the same priority, sharing our IPC buffer, watches the slot; it
 * runs whenever the delete is preempted at the end of our time slice. */
#define TAG_ZOMBIE 18
#define WATCHER_STACK_WORDS 2048
static seL4_Word watcher_stack[WATCHER_STACK_WORDS] __attribute__((aligned(16)));
static volatile seL4_Word z_seen, z_copy, z_mint, z_invoke, z_ident_after;
static seL4_CPtr z_slot, z_dest;

static void zombie_watcher(seL4_Word self, seL4_Word unused)
{
    (void)unused;
    for (;;) {
        if (seL4_DebugCapIdentify(z_slot) == TAG_ZOMBIE) {
            z_copy = seL4_CNode_Copy(ROOT, z_dest, D, ROOT, z_slot, D, seL4_AllRights);
            z_mint = seL4_CNode_Mint(ROOT, z_dest, D, ROOT, z_slot, D, seL4_AllRights, 0);
            z_invoke = seL4_CNode_Delete(z_slot, 0, D);
            z_ident_after = seL4_DebugCapIdentify(z_dest);
            z_seen = 1;
            seL4_TCB_Suspend(self);
        }
    }
}

KTEST(cnode, zombie_seen_mid_delete)
{
    start();
    seL4_BootInfo *bi = kairos_bootinfo();
    seL4_CPtr ut = carve(24);
    seL4_CPtr tcb = make(ut, seL4_TCBObject, 0);
    seL4_CPtr sc = make(ut, seL4_SchedContextObject, 8);
    KASSERT_EQ(seL4_TCB_Configure(tcb, ROOT, 0, seL4_CapInitThreadVSpace, 0, (seL4_Word)bi->ipcBuffer,
                                  seL4_CapInitThreadIPCBuffer),
               seL4_NoError);
    KASSERT_EQ(seL4_SchedControl_ConfigureFlags(bi->schedcontrol.start, sc, 1000, 1000, 0, 0, 0), seL4_NoError);
    KASSERT_EQ(seL4_SchedContext_Bind(sc, tcb), seL4_NoError);
    KASSERT_EQ(seL4_TCB_SetPriority(tcb, seL4_CapInitThreadTCB, 255), seL4_NoError);
    for (int attempt = 0; attempt < 3 && !z_seen; attempt++) {
        seL4_CPtr c = make(ut, seL4_CapTableObject, BIG - 1);
        z_slot = c;
        z_dest = alloc_slot();
        z_seen = 0;
        seL4_UserContext regs = {0};
        regs.pc = (seL4_Word)zombie_watcher;
        regs.sp = (seL4_Word)&watcher_stack[WATCHER_STACK_WORDS];
        regs.gp = kt_read_gp();
        regs.tp = kt_read_tp();
        regs.a0 = tcb;
        KASSERT_EQ(seL4_TCB_WriteRegisters(tcb, true, 0, sizeof(regs) / sizeof(seL4_Word), &regs), seL4_NoError);
        KASSERT_EQ(del(c), seL4_NoError);
        KASSERT_EQ(seL4_TCB_Suspend(tcb), seL4_NoError);
        KASSERT_EQ(ident(c), TAG_NULL);
    }
    KASSERT_MSG(z_seen, "the watcher never ran while the delete was preempted");
    KASSERT_EQ(z_copy, seL4_IllegalOperation);
    KASSERT_EQ(z_mint, seL4_IllegalOperation);
    KASSERT_EQ(z_invoke, seL4_InvalidCapability);
    KASSERT_EQ(z_ident_after, TAG_NULL);
    cleanup();
}

/* =====================================================================
 * Random operations on a small CSpace (the invariant checker runs after
 * every call in the check flavour): copy, mint, move, mutate, rotate,
 * delete, revoke and retype with random (also invalid) arguments, on caps
 * that all come from one carved untyped. Afterwards, revoking that untyped
 * leaves nothing behind: it can be retyped whole again.
 * ===================================================================== */

#define NR 40 /* working root slots */
static seL4_Word rng_state;

static seL4_Word rnd(seL4_Word n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return n ? rng_state % n : 0;
}

/* A depth: usually right, sometimes out of range or short. */
static seL4_Word rnd_depth(seL4_Word right)
{
    switch (rnd(16)) {
    case 0: return 0;
    case 1: return 65 + rnd(8);
    case 2: return rnd(64) + 1;
    default: return right;
    }
}

static seL4_Word rnd_rights(void) { return rnd(4) ? ALL : rnd(16); }

/* Mostly an empty slot among r[] (destinations), sometimes any. */
static seL4_CPtr rnd_dest(const seL4_CPtr *r, int n)
{
    if (rnd(4))
        for (int tries = 0; tries < 8; tries++) {
            seL4_CPtr s = r[rnd(n)];
            if (ident(s) == TAG_NULL)
                return s;
        }
    return r[rnd(n)];
}

KTEST(cnode, random_operations)
{
    start();
    rng_state = 0x9e3779b97f4a7c15ul;
    seL4_CPtr ut = carve(20);
    seL4_CPtr r[NR];
    for (int i = 0; i < NR; i++)
        r[i] = alloc_slot();
    static const seL4_Word types[] = {seL4_EndpointObject, seL4_NotificationObject, seL4_CapTableObject,
                                      seL4_UntypedObject, seL4_TCBObject, seL4_RISCV_4K_Page,
                                      seL4_RISCV_PageTableObject, seL4_ReplyObject};
    int counts[10] = {0};
    for (int step = 0; step < 3000; step++) {
        seL4_CPtr a = rnd_dest(r, NR), b = r[rnd(NR)], c = r[rnd(NR)];
        seL4_Word op = rnd(12);
        if (op >= 10)
            op = 6 + (op & 1); /* deletes and revokes twice as often */
        seL4_Error e;
        switch (op) {
        case 0: { /* retype from the carved untyped or an untyped among the slots */
            seL4_Word t = types[rnd(sizeof(types) / sizeof(types[0]))];
            seL4_Word bits = t == seL4_CapTableObject ? 1 + rnd(4) : t == seL4_UntypedObject ? 6 + rnd(8) : 0;
            seL4_CPtr src = rnd(3) ? ut : a;
            if (ident(c) == TAG_CNODE && rnd(2))
                e = seL4_Untyped_Retype(src, t, bits, ROOT, c, rnd_depth(D), rnd(8), 1 + rnd(4));
            else
                e = seL4_Untyped_Retype(src, t, bits, ROOT, 0, 0, a, 1);
            break;
        }
        case 1: e = seL4_CNode_Copy(ROOT, a, rnd_depth(D), ROOT, b, rnd_depth(D), (seL4_CapRights_t){{rnd_rights()}}); break;
        case 2: {
            seL4_Word data = rnd(2) ? rnd(1000) : seL4_CNode_CapData_new(rnd(4), rnd(8)).words[0];
            e = seL4_CNode_Mint(ROOT, a, rnd_depth(D), ROOT, b, rnd_depth(D), (seL4_CapRights_t){{rnd_rights()}}, data);
            break;
        }
        case 3: e = seL4_CNode_Move(ROOT, a, rnd_depth(D), ROOT, b, rnd_depth(D)); break;
        case 4: e = seL4_CNode_Mutate(ROOT, a, rnd_depth(D), ROOT, b, rnd_depth(D), rnd(4) ? 0 : rnd(200)); break;
        case 5: e = seL4_CNode_Rotate(ROOT, a, rnd_depth(D), rnd(3), ROOT, b, rnd_depth(D), rnd(3), ROOT, c, rnd_depth(D)); break;
        case 6: e = seL4_CNode_Delete(ROOT, b, rnd_depth(D)); break;
        case 7: e = seL4_CNode_Revoke(ROOT, b, rnd_depth(D)); break;
        case 8: /* into or out of a CNode held in the slots */
            if (ident(c) == TAG_CNODE) {
                a = c;
                seL4_Word idx = rnd(16);
                seL4_Word depth = rnd(4) ? 4 : rnd_depth(4);
                switch (rnd(4)) {
                case 0: e = seL4_CNode_Copy(a, idx, depth, ROOT, b, D, seL4_AllRights); break;
                case 1: e = seL4_CNode_Move(a, idx, depth, ROOT, b, D); break;
                case 2: e = seL4_CNode_Move(ROOT, b, D, a, idx, depth); break;
                default: e = seL4_CNode_Delete(a, idx, depth); break;
                }
            } else {
                e = seL4_CNode_CancelBadgedSends(ROOT, a, rnd_depth(D));
            }
            break;
        default: /* a copy of a control cap, to have some around */
            e = copy(a, rnd(2) ? seL4_CapDomain : kairos_bootinfo()->schedcontrol.start, seL4_AllRights);
            break;
        }
        counts[e < 10 ? e : 9]++;
    }
    printf("ktest: cnode/random_operations: ok %d, errors:", counts[0]);
    for (int i = 1; i < 10; i++)
        printf(" %d", counts[i]);
    printf("\n");
    /* Nothing is lost: revoke the untyped, delete what is left (control
     * cap copies), and the whole untyped retypes again. */
    KASSERT_EQ(revoke(ut), seL4_NoError);
    KASSERT_EQ(revoke(seL4_CapDomain), seL4_NoError);
    KASSERT_EQ(revoke(kairos_bootinfo()->schedcontrol.start), seL4_NoError);
    for (int i = 0; i < NR; i++)
        KASSERT_MSG(ident(r[i]) == TAG_NULL, "slot %d still holds tag %lu", i, (unsigned long)ident(r[i]));
    seL4_CPtr whole = alloc_slot();
    KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_UntypedObject, 20, ROOT, 0, 0, whole, 1), seL4_NoError);
    cleanup();
}
