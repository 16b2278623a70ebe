/*
 * The system spec that `kairos build` packs into the loader's image
 * (tools/kairos/system/pack.py writes it; docs/system-description.md
 * "The packed spec"). All fields are little-endian 64-bit words.
 *
 * The tool has already decided everything: which objects exist, which
 * loader slot holds each capability, what goes into each protection
 * domain's CNode, where each frame is mapped. The loader runs the
 * operations in order; it chooses only which untyped each object comes
 * from.
 */
#ifndef KAIROS_LOADER_SPEC_H
#define KAIROS_LOADER_SPEC_H

#include <stdint.h>

/* Where the spec lies in the loader's address space: a read-only PT_LOAD
 * segment that `kairos build` appends to the loader ELF at the first page
 * boundary after the loader's own image (__kairos_image_end, roottask.ld):
 * the kernel maps a root task's image as one run of pages from its lowest
 * to its highest address. */
#define SPEC_MAGIC 0x5359534f5249414bull /* "KAIROSYS" */
#define SPEC_VERSION 1

struct spec_header {
    uint64_t magic;
    uint64_t version;
    uint64_t n_ops;
    uint64_t ops_offset;   /* from the start of the spec */
    uint64_t n_pds;
    uint64_t names_offset; /* n_pds names of SPEC_NAME_LEN bytes, NUL-padded */
    uint64_t n_slots;      /* loader slots the operations use, from 0 */
    uint64_t total_size;
};

#define SPEC_NAME_LEN 32

struct spec_op {
    uint64_t code;
    uint64_t a[7];
};

/* A capability reference: a loader slot relative to the first empty slot of
 * the BootInfo, or (with SPEC_FIXED) one of the root task's initial caps.
 * SPEC_SCHEDCONTROL stands for the BootInfo's SchedControl cap. */
#define SPEC_FIXED (1ull << 63)
#define SPEC_SCHEDCONTROL (SPEC_FIXED | 0xffff)

enum spec_opcode {
    OP_CREATE = 1,        /* type, size_bits, dst                                   */
    OP_DEVICE_FRAME = 2,  /* paddr, dst: the 4 KiB device frame at paddr             */
    OP_MINT = 3,          /* dst_cnode, dst_index, dst_depth, src, rights, badge;
                           * dst_index is a slot reference when dst_cnode is the
                           * loader's own CNode, else an index in dst_cnode     */
    OP_MAP_TABLE = 4,     /* page_table, vspace, vaddr                                */
    OP_MAP_FRAME = 5,     /* frame, vspace, vaddr, rights, attributes                 */
    OP_LOAD = 6,          /* frame, spec offset, length: copy 4 KiB or less into it   */
    OP_ASID_ASSIGN = 7,   /* vspace                                                   */
    OP_TCB_CONFIGURE = 8, /* tcb, cspace, cspace_data, vspace, buffer vaddr, frame    */
    OP_SC_CONFIGURE = 9,  /* sc, budget_us, period_us, extra_refills, badge           */
    OP_TCB_SCHED = 10,    /* tcb, priority, sc (0: none), fault endpoint              */
    OP_BIND_NTFN = 11,    /* tcb, notification                                        */
    OP_IRQ_GET = 12,      /* irq, trigger (0 level, 1 edge), dst                      */
    OP_IRQ_NTFN = 13,     /* handler, notification                                    */
    OP_START = 14,        /* tcb, pc, sp, a0, a1, pd index                            */
    OP_PASSIVE = 15,      /* pd index, tcb, sc, notification: made passive after init  */
    OP_SERVE = 16,        /* endpoint: the loader's own; the last operation           */
};

/* The label of the message a passive PD sends when its init is done
 * (KAIROS_PD_INIT_DONE_LABEL in <kairos/pd.h>; fault labels are small:
 * seL4_Fault_*). */
#define SPEC_INIT_DONE_LABEL 0x4b44

#endif
