/*
 * Deleting an untyped cap whose objects are alive (issue 15's two-call
 * sequence). seL4 allows it: deleting an untyped cap finalises nothing, the
 * objects stay usable, and their memory is never handed out again while they
 * live. The check kernel verifies after every call that no memory reachable
 * from a live cap can be handed out again (kernel/kernel/invariants.c,
 * check 3); before that invariant was stated precisely, the second call of
 * each sequence below stopped the check kernel.
 *
 * The tests delete boot untypeds, whose memory is then lost until reboot,
 * so this file runs after every other suite that walks the boot untypeds
 * (link order follows file names; test_zz_counters only reads counters).
 */
#include <ktest.h>
#include <sel4/sel4.h>
#include <threads.h>

enum { TAG_NULL = 0, TAG_FRAME = 1, TAG_UNTYPED = 2, TAG_NOTIFICATION = 6, TAG_THREAD = 12 };

static seL4_CPtr slot_cursor;

/* An empty slot of the root CNode, from the top of the BootInfo's empty
 * region downwards (the other suites take theirs from lower down). */
static seL4_CPtr empty_slot(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    if (slot_cursor == 0)
        slot_cursor = bi->empty.end;
    while (slot_cursor > bi->empty.start) {
        slot_cursor--;
        if (seL4_DebugCapIdentify(slot_cursor) == TAG_NULL)
            return slot_cursor;
    }
    KFAIL("out of empty slots");
}

static seL4_Word n_untypeds(void) { return kairos_bootinfo()->untyped.end - kairos_bootinfo()->untyped.start; }

/* The smallest RAM boot untyped of at least 2^13 bytes (a TCB and a frame) that is still there
 * and is not the pool the framework retypes from. */
static seL4_Word small_boot_untyped(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    seL4_Word best = ~0ul;
    for (seL4_Word i = 0; i < n_untypeds(); i++) {
        const seL4_UntypedDesc *d = &bi->untypedList[i];
        if (d->isDevice || d->sizeBits < 13 || bi->untyped.start + i == kt_pool() ||
            seL4_DebugCapIdentify(bi->untyped.start + i) != TAG_UNTYPED)
            continue;
        if (best == ~0ul || d->sizeBits < bi->untypedList[best].sizeBits)
            best = i;
    }
    KASSERT_MSG(best != ~0ul, "no small RAM boot untyped left");
    /* Whatever earlier suites made from it goes first. */
    KASSERT_EQ(seL4_CNode_Revoke(KT_ROOT, bi->untyped.start + best, 64), seL4_NoError);
    return best;
}

static seL4_Word frame_paddr(seL4_CPtr frame)
{
    seL4_RISCV_Page_GetAddress_t a = seL4_RISCV_Page_GetAddress(frame);
    KASSERT_EQ(a.error, seL4_NoError);
    return a.paddr;
}

/* No untyped cap left in the BootInfo's range covers paddr. */
static void expect_no_boot_untyped_covers(seL4_Word paddr)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    for (seL4_Word i = 0; i < n_untypeds(); i++) {
        const seL4_UntypedDesc *d = &bi->untypedList[i];
        if (paddr >= d->paddr && paddr - d->paddr < (1ul << d->sizeBits))
            KASSERT_MSG(seL4_DebugCapIdentify(bi->untyped.start + i) == TAG_NULL,
                        "untyped %lu still covers %#lx", (unsigned long)i, (unsigned long)paddr);
    }
}

/* The thread made from a deleted untyped is still a working TCB. */
static void expect_working_tcb(seL4_CPtr tcb)
{
    KASSERT_EQ(seL4_DebugCapIdentify(tcb), TAG_THREAD);
    KASSERT_EQ(seL4_TCB_SetPriority(tcb, KT_SELF, 10), seL4_NoError);
    seL4_UserContext regs = {0};
    regs.pc = 0x1234;
    KASSERT_EQ(seL4_TCB_WriteRegisters(tcb, false, 0, 1, &regs), seL4_NoError);
    seL4_UserContext back = {0};
    KASSERT_EQ(seL4_TCB_ReadRegisters(tcb, false, 0, 1, &back), seL4_NoError);
    KASSERT_EQ(back.pc, 0x1234);
}

KTEST(untyped_delete, retype_tcb_then_delete_boot_untyped)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    seL4_Word i = small_boot_untyped();
    seL4_CPtr ut = bi->untyped.start + i, tcb = empty_slot(), frame = empty_slot();
    KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_TCBObject, 0, KT_ROOT, 0, 0, tcb, 1), seL4_NoError);
    KASSERT_EQ(seL4_Untyped_Retype(ut, seL4_RISCV_4K_Page, 0, KT_ROOT, 0, 0, frame, 1), seL4_NoError);
    seL4_Word paddr = frame_paddr(frame);
    /* The two-call sequence: the second call used to stop the check kernel. */
    KASSERT_EQ(seL4_CNode_Delete(KT_ROOT, ut, 64), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(ut), TAG_NULL);
    expect_working_tcb(tcb);
    KASSERT_EQ(frame_paddr(frame), paddr);
    /* Nothing can hand the frame's memory out again. */
    expect_no_boot_untyped_covers(paddr);
    KASSERT_EQ(seL4_CNode_Delete(KT_ROOT, tcb, 64), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(KT_ROOT, frame, 64), seL4_NoError);
}

KTEST(untyped_delete, move_retype_then_delete_boot_untyped)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    seL4_Word i = small_boot_untyped();
    seL4_CPtr ut = bi->untyped.start + i, moved = empty_slot(), tcb = empty_slot(), ntfn = empty_slot();
    KASSERT_EQ(seL4_CNode_Move(KT_ROOT, moved, 64, KT_ROOT, ut, 64), seL4_NoError);
    KASSERT_EQ(seL4_Untyped_Retype(moved, seL4_TCBObject, 0, KT_ROOT, 0, 0, tcb, 1), seL4_NoError);
    KASSERT_EQ(seL4_Untyped_Retype(moved, seL4_NotificationObject, 0, KT_ROOT, 0, 0, ntfn, 1), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(KT_ROOT, moved, 64), seL4_NoError);
    expect_working_tcb(tcb);
    /* The notification still works: a badged signal is there to be polled. */
    seL4_CPtr badged = empty_slot();
    KASSERT_EQ(seL4_CNode_Mint(KT_ROOT, badged, 64, KT_ROOT, ntfn, 64, seL4_AllRights, 5), seL4_NoError);
    seL4_Signal(badged);
    seL4_Word badge = 0;
    seL4_Poll(ntfn, &badge);
    KASSERT_EQ(badge, 5);
    KASSERT_EQ(seL4_CNode_Delete(KT_ROOT, badged, 64), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(ntfn), TAG_NOTIFICATION);
    /* Copies of the orphans work and go away like any others. */
    seL4_CPtr copy = empty_slot();
    KASSERT_EQ(seL4_CNode_Copy(KT_ROOT, copy, 64, KT_ROOT, tcb, 64, seL4_AllRights), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(KT_ROOT, tcb, 64), seL4_NoError);
    expect_working_tcb(copy);
    KASSERT_EQ(seL4_CNode_Delete(KT_ROOT, copy, 64), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(KT_ROOT, ntfn, 64), seL4_NoError);
}

KTEST(untyped_delete, child_untyped_deleted_memory_not_reused)
{
    /* A child untyped deleted with a live frame in it: the frame becomes a
     * descendant of the parent, whose watermark lies above it, so retyping
     * from the parent never hands out the frame's memory again, and once
     * the frame is deleted and the parent revoked the memory comes back. */
    seL4_CPtr parent = empty_slot(), child = empty_slot(), frame = empty_slot();
    KASSERT_EQ(seL4_Untyped_Retype(kt_pool(), seL4_UntypedObject, 16, KT_ROOT, 0, 0, parent, 1), seL4_NoError);
    KASSERT_EQ(seL4_Untyped_Retype(parent, seL4_UntypedObject, 14, KT_ROOT, 0, 0, child, 1), seL4_NoError);
    KASSERT_EQ(seL4_Untyped_Retype(child, seL4_RISCV_4K_Page, 0, KT_ROOT, 0, 0, frame, 1), seL4_NoError);
    seL4_Word paddr = frame_paddr(frame);
    KASSERT_EQ(seL4_CNode_Delete(KT_ROOT, child, 64), seL4_NoError);
    /* The rest of the parent: 3 x 2^14 bytes, none of them the frame's. */
    seL4_CPtr more[12];
    for (int k = 0; k < 12; k++) {
        more[k] = empty_slot();
        KASSERT_EQ(seL4_Untyped_Retype(parent, seL4_RISCV_4K_Page, 0, KT_ROOT, 0, 0, more[k], 1), seL4_NoError);
        seL4_Word p = frame_paddr(more[k]);
        KASSERT_MSG(p != paddr, "frame memory %#lx handed out twice", (unsigned long)p);
    }
    seL4_CPtr extra = empty_slot();
    KASSERT_EQ(seL4_Untyped_Retype(parent, seL4_RISCV_4K_Page, 0, KT_ROOT, 0, 0, extra, 1), seL4_NotEnoughMemory);
    /* Revoking the parent removes the orphan too, and all of it is free. */
    KASSERT_EQ(seL4_CNode_Revoke(KT_ROOT, parent, 64), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(frame), TAG_NULL);
    for (int k = 0; k < 12; k++)
        KASSERT_EQ(seL4_DebugCapIdentify(more[k]), TAG_NULL);
    KASSERT_EQ(seL4_Untyped_Retype(parent, seL4_UntypedObject, 16, KT_ROOT, 0, 0, extra, 1), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(KT_ROOT, extra, 64), seL4_NoError);
    KASSERT_EQ(seL4_CNode_Delete(KT_ROOT, parent, 64), seL4_NoError);
}
