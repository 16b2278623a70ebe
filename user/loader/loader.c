/*
 * The system loader: the root task of every image `kairos build` makes.
 *
 * It reads the spec the tool packed after its image (spec.h), runs its
 * operations in order (create objects from untyped memory, fill protection
 * domains' CNodes, build their address spaces, configure scheduling
 * contexts, start the threads) and then serves its endpoint for the rest of
 * the run:
 *   - a passive PD reports the end of its init there (the Microkit
 *     protocol): the loader takes the PD's scheduling context from its
 *     thread and binds it to the PD's notification, so the PD runs from then
 *     on only on time donated by a ppcall or, for a notification, on its own
 *     budget;
 *   - every PD's fault endpoint is this endpoint (badge = PD index + 1): a
 *     fault is printed with the PD's name and the PD stays stopped.
 * The loader runs at priority 255, above every PD (which are at most 254),
 * so no PD runs before the loader blocks in its serve loop.
 */
#include <kairos/kairos.h>
#include <sel4/sel4.h>
#include <stdio.h>
#include <string.h>

#include "spec.h"

#define ROOT seL4_CapInitThreadCNode
/* Where the loader maps a frame to fill it (GiB 192, far above its image). */
#define SCRATCH_VA 0x3000000000ul

static const struct spec_header *spec;
static seL4_CPtr slot_base;
static seL4_Word op_index;

static inline uint64_t rdtime(void)
{
    uint64_t v;
    __asm__ volatile("rdtime %0" : "=r"(v));
    return v;
}

static void fail(const char *what, seL4_Error err)
{
    printf("kairos loader: operation %lu (%s) failed: error %d\n", (unsigned long)op_index, what, (int)err);
    kairos_exit(false, "the loader could not build the system");
}

static void check(seL4_Error err, const char *what)
{
    if (err != seL4_NoError)
        fail(what, err);
}

static seL4_CPtr ref(uint64_t r)
{
    if (r == SPEC_SCHEDCONTROL)
        return kairos_bootinfo()->schedcontrol.start;
    if (r & SPEC_FIXED)
        return (seL4_CPtr)(r & 0xffff);
    if (r >= spec->n_slots)
        fail("slot reference out of range", seL4_RangeError);
    return slot_base + r;
}

static const char *pd_name(uint64_t index)
{
    if (index >= spec->n_pds)
        return "?";
    return (const char *)spec + spec->names_offset + index * SPEC_NAME_LEN;
}

/* ---- untyped memory ------------------------------------------------- */

/* RAM untypeds are used smallest first; an object that does not fit in
 * what is left of one moves on to the next. (The kernel clears an untyped
 * on its first retype: starting with the 512 MiB one would cost some 60
 * million instructions.) The tool orders creations by size, largest
 * first, so alignment wastes little. */
#define MAX_UNTYPEDS 256
static seL4_CPtr ram[MAX_UNTYPEDS];
static seL4_Word ram_count, ram_next;

static void collect_untypeds(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    seL4_Word n = bi->untyped.end - bi->untyped.start;
    for (seL4_Word i = 0; i < n && ram_count < MAX_UNTYPEDS; i++)
        if (!bi->untypedList[i].isDevice)
            ram[ram_count++] = i;
    /* Insertion sort by size, smallest first (at most a few dozen entries). */
    for (seL4_Word i = 1; i < ram_count; i++)
        for (seL4_Word j = i; j > 0 && bi->untypedList[ram[j]].sizeBits < bi->untypedList[ram[j - 1]].sizeBits; j--) {
            seL4_CPtr t = ram[j];
            ram[j] = ram[j - 1];
            ram[j - 1] = t;
        }
}

static void create(seL4_Word type, seL4_Word bits, seL4_CPtr dst)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    while (ram_next < ram_count) {
        seL4_Error e = seL4_Untyped_Retype(bi->untyped.start + ram[ram_next], type, bits, ROOT, 0, 0, dst, 1);
        if (e == seL4_NoError)
            return;
        if (e != seL4_NotEnoughMemory)
            fail("Untyped_Retype", e);
        ram_next++;
    }
    fail("Untyped_Retype: out of memory", seL4_NotEnoughMemory);
}

/* A 4 KiB frame at physical address pa from the device untyped covering
 * it. Retype places each object at the untyped's next suitably aligned
 * address, so the gap up to pa is filled with untyped objects first. */
static seL4_Word frame_paddr(seL4_CPtr frame)
{
    seL4_RISCV_Page_GetAddress_t a = seL4_RISCV_Page_GetAddress(frame);
    check(a.error, "Page_GetAddress");
    return a.paddr;
}

static seL4_CPtr filler_slot(void)
{
    static seL4_CPtr next;
    seL4_BootInfo *bi = kairos_bootinfo();
    if (next == 0)
        next = slot_base + spec->n_slots;
    if (next >= bi->empty.end)
        fail("no free slot for a device filler", seL4_NotEnoughMemory);
    return next++;
}

static void device_frame(seL4_Word pa, seL4_CPtr dst)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    for (seL4_Word i = 0; i < bi->untyped.end - bi->untyped.start; i++) {
        const seL4_UntypedDesc *d = &bi->untypedList[i];
        if (!d->isDevice || pa < d->paddr || pa - d->paddr >= (1ul << d->sizeBits))
            continue;
        seL4_CPtr ut = bi->untyped.start + i;
        check(seL4_Untyped_Retype(ut, seL4_RISCV_4K_Page, 0, ROOT, 0, 0, dst, 1), "device Retype");
        seL4_Word at = frame_paddr(dst);
        if (at == pa)
            return;
        if (at > pa)
            fail("device frame: the untyped is already used past the address", seL4_RangeError);
        check(seL4_CNode_Delete(ROOT, dst, 64), "CNode_Delete");
        seL4_Word cur = at; /* deleting the frame does not give its space back */
        cur += 4096;
        for (int k = 0; k < 64 && cur < pa; k++) {
            seL4_Word bits = 12;
            while (bits < 38 && (cur & ((1ul << (bits + 1)) - 1)) == 0 && cur + (1ul << (bits + 1)) <= pa)
                bits++;
            check(seL4_Untyped_Retype(ut, seL4_UntypedObject, bits, ROOT, 0, 0, filler_slot(), 1), "filler Retype");
            cur += 1ul << bits;
        }
        check(seL4_Untyped_Retype(ut, seL4_RISCV_4K_Page, 0, ROOT, 0, 0, dst, 1), "device Retype");
        if (frame_paddr(dst) != pa)
            fail("device frame at the wrong address", seL4_RangeError);
        return;
    }
    fail("no device untyped covers a memory region's phys_addr", seL4_RangeError);
}

/* ---- filling frames ------------------------------------------------- */

static void scratch_map(seL4_CPtr frame)
{
    for (int k = 0; k < 4; k++) {
        seL4_Error e = seL4_RISCV_Page_Map(frame, seL4_CapInitThreadVSpace, SCRATCH_VA, seL4_ReadWrite,
                                           seL4_RISCV_ExecuteNever);
        if (e == seL4_NoError)
            return;
        if (e != seL4_FailedLookup)
            fail("Page_Map (scratch)", e);
        seL4_CPtr pt = filler_slot();
        create(seL4_RISCV_PageTableObject, 0, pt);
        check(seL4_RISCV_PageTable_Map(pt, seL4_CapInitThreadVSpace, SCRATCH_VA, seL4_RISCV_Default_VMAttributes),
              "PageTable_Map (scratch)");
    }
    fail("Page_Map (scratch)", seL4_FailedLookup);
}

static void load(seL4_CPtr frame, uint64_t offset, uint64_t length)
{
    if (length > 4096 || offset > spec->total_size || length > spec->total_size - offset)
        fail("load outside the spec", seL4_RangeError);
    scratch_map(frame);
    memcpy((void *)SCRATCH_VA, (const char *)spec + offset, length);
    check(seL4_RISCV_Page_Unmap(frame), "Page_Unmap (scratch)");
}

/* ---- passive PDs and faults ----------------------------------------- */

#define MAX_PDS 64
static struct {
    seL4_CPtr tcb, sc, ntfn;
    bool pending;
} passive[MAX_PDS];

static const char *fault_name(seL4_Word label)
{
    switch (label) {
    case seL4_Fault_CapFault: return "capability fault";
    case seL4_Fault_UnknownSyscall: return "unknown system call";
    case seL4_Fault_UserException: return "user exception";
    case seL4_Fault_Timeout: return "timeout fault";
    case seL4_Fault_VMFault: return "virtual memory fault";
    default: return "fault";
    }
}

static void serve(seL4_CPtr ep, seL4_CPtr reply)
{
    for (;;) {
        seL4_Word badge = 0;
        seL4_MessageInfo_t info = seL4_Recv(ep, &badge, reply);
        seL4_Word label = seL4_MessageInfo_get_label(info);
        seL4_Word pd = badge - 1;
        if (badge == 0 || pd >= spec->n_pds) {
            printf("kairos loader: message with unknown badge %lu\n", (unsigned long)badge);
            continue;
        }
        if (label == SPEC_INIT_DONE_LABEL && passive[pd].pending) {
            /* The PD is blocked in Recv on its endpoint (NBSendRecv sent this
             * and waits atomically): take its time away, give it to the
             * notification so signals still run it on its own budget. */
            passive[pd].pending = false;
            check(seL4_SchedContext_UnbindObject(passive[pd].sc, passive[pd].tcb), "SchedContext_UnbindObject");
            check(seL4_SchedContext_Bind(passive[pd].sc, passive[pd].ntfn), "SchedContext_Bind");
            continue;
        }
        if (label == seL4_Fault_VMFault)
            printf("kairos loader: PD '%s': %s at pc %#lx, address %#lx\n", pd_name(pd), fault_name(label),
                   (unsigned long)seL4_GetMR(seL4_VMFault_IP), (unsigned long)seL4_GetMR(seL4_VMFault_Addr));
        else
            printf("kairos loader: PD '%s': %s (label %lu, mr0 %#lx, mr1 %#lx); it stays stopped\n", pd_name(pd),
                   fault_name(label), (unsigned long)label, (unsigned long)seL4_GetMR(0),
                   (unsigned long)seL4_GetMR(1));
    }
}

/* ---- the operations ------------------------------------------------- */

static void start(const struct spec_op *op)
{
    seL4_CPtr tcb = ref(op->a[0]);
#ifdef CONFIG_DEBUG_BUILD
    seL4_DebugNameThread(tcb, pd_name(op->a[5]));
#endif
    seL4_UserContext regs;
    memset(&regs, 0, sizeof(regs));
    regs.pc = op->a[1];
    regs.sp = op->a[2];
    regs.a0 = op->a[3];
    regs.a1 = op->a[4];
    check(seL4_TCB_WriteRegisters(tcb, true, 0, sizeof(regs) / sizeof(seL4_Word), &regs), "TCB_WriteRegisters");
}

static void run(const struct spec_op *op)
{
    const uint64_t *a = op->a;
    switch (op->code) {
    case OP_CREATE:
        create(a[0], a[1], ref(a[2]));
        break;
    case OP_DEVICE_FRAME:
        device_frame(a[0], ref(a[1]));
        break;
    case OP_MINT: {
        /* Into the loader's own CNode the index is a slot reference too. */
        seL4_CapRights_t rights = {{a[4]}};
        seL4_Word index = a[0] == (SPEC_FIXED | ROOT) ? ref(a[1]) : a[1];
        check(seL4_CNode_Mint(ref(a[0]), index, (seL4_Uint8)a[2], ROOT, ref(a[3]), 64, rights, a[5]), "CNode_Mint");
        break;
    }
    case OP_MAP_TABLE:
        check(seL4_RISCV_PageTable_Map(ref(a[0]), ref(a[1]), a[2], seL4_RISCV_Default_VMAttributes), "PageTable_Map");
        break;
    case OP_MAP_FRAME: {
        seL4_CapRights_t rights = {{a[3]}};
        check(seL4_RISCV_Page_Map(ref(a[0]), ref(a[1]), a[2], rights, a[4]), "Page_Map");
        break;
    }
    case OP_LOAD:
        load(ref(a[0]), a[1], a[2]);
        break;
    case OP_ASID_ASSIGN:
        check(seL4_RISCV_ASIDPool_Assign(seL4_CapInitThreadASIDPool, ref(a[0])), "ASIDPool_Assign");
        break;
    case OP_TCB_CONFIGURE:
        check(seL4_TCB_Configure(ref(a[0]), ref(a[1]), a[2], ref(a[3]), 0, a[4], ref(a[5])), "TCB_Configure");
        break;
    case OP_SC_CONFIGURE:
        check(seL4_SchedControl_ConfigureFlags(ref(SPEC_SCHEDCONTROL), ref(a[0]), a[1], a[2], a[3], a[4],
                                               a[1] < a[2] ? seL4_SchedContext_Sporadic : 0),
              "SchedControl_ConfigureFlags");
        break;
    case OP_TCB_SCHED:
        check(seL4_TCB_SetSchedParams(ref(a[0]), seL4_CapInitThreadTCB, 0, a[1], a[2] ? ref(a[2] - 1) : seL4_CapNull,
                                      ref(a[3])),
              "TCB_SetSchedParams");
        break;
    case OP_BIND_NTFN:
        check(seL4_TCB_BindNotification(ref(a[0]), ref(a[1])), "TCB_BindNotification");
        break;
    case OP_IRQ_GET:
        check(seL4_IRQControl_GetTrigger(seL4_CapIRQControl, a[0], a[1], ROOT, ref(a[2]), 64), "IRQControl_GetTrigger");
        break;
    case OP_IRQ_NTFN:
        check(seL4_IRQHandler_SetNotification(ref(a[0]), ref(a[1])), "IRQHandler_SetNotification");
        break;
    case OP_START:
        start(op);
        break;
    case OP_PASSIVE:
        if (a[0] >= MAX_PDS)
            fail("passive: PD index out of range", seL4_RangeError);
        passive[a[0]].tcb = ref(a[1]);
        passive[a[0]].sc = ref(a[2]);
        passive[a[0]].ntfn = ref(a[3]);
        passive[a[0]].pending = true;
        break;
    default:
        fail("unknown operation", seL4_IllegalOperation);
    }
}

int main(void)
{
    uint64_t t0 = rdtime();
    seL4_BootInfo *bi = kairos_bootinfo();
    extern char __kairos_image_end[];
    spec = (const struct spec_header *)(((seL4_Word)__kairos_image_end + 4095) & ~4095ul);
    if (spec->magic != SPEC_MAGIC || spec->version != SPEC_VERSION)
        kairos_exit(false, "loader: no system spec in this image (build it with kairos build)");
    if (spec->ops_offset > spec->total_size || spec->n_ops > (spec->total_size - spec->ops_offset) / sizeof(struct spec_op) ||
        spec->n_pds > MAX_PDS || spec->names_offset > spec->total_size ||
        spec->n_pds * SPEC_NAME_LEN > spec->total_size - spec->names_offset)
        kairos_exit(false, "loader: the system spec is malformed");
    slot_base = bi->empty.start;
    if (spec->n_slots > bi->empty.end - bi->empty.start)
        kairos_exit(false, "loader: the system needs more slots than the root CNode has");
    collect_untypeds();

    const struct spec_op *ops = (const struct spec_op *)((const char *)spec + spec->ops_offset);
    for (op_index = 0; op_index < spec->n_ops; op_index++) {
        const struct spec_op *op = &ops[op_index];
        if (op->code == OP_SERVE) {
            uint64_t ticks = rdtime() - t0;
            printf("kairos loader: %lu protection domains, %lu operations, built in %lu us\n",
                   (unsigned long)spec->n_pds, (unsigned long)spec->n_ops, (unsigned long)(ticks / 10));
            serve(ref(op->a[0]), ref(op->a[1]));
        }
        run(op);
    }
    kairos_exit(false, "loader: the spec has no serve operation");
}
