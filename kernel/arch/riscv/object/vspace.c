/* Invocations on RISC-V caps: PageTable_Map/Unmap, Page_Map/Unmap/GetAddress,
 * ASIDControl_MakePool and ASIDPool_Assign (labels 37-43).
 *
 * Each entry point invoke_X runs a decoder, which makes seL4's checks in
 * seL4's order (seL4's src/arch/riscv/object/objecttype.c and vspace.c
 * decode functions), fills a small struct and changes nothing, then the
 * perform step, which cannot fail (kernel/include/invocation.h). The
 * longest step here is zeroing a page table on PageTable_Unmap (512 stores)
 * or zeroing a new ASID pool (4 KiB); everything else is a walk of at most
 * three levels or a scan of at most 512 pool entries. */
#include <arch/memory.h>
#include <arch/vspace.h>
#include <cdt.h>
#include <cspace.h>
#include <invocation.h>

/* failed_lookup_error (message.c) always answers FailedLookup. Saying so
 * here lets the compiler drop the path from these calls into a perform
 * step: without it, Page_Map keeps the error code in a saved register. */
static struct syscall_error lookup_error(const struct lookup_failure *f)
{
    struct syscall_error e = failed_lookup_error(false, f);
    if (e.code != ERR_FAILED_LOOKUP)
        __builtin_unreachable();
    return e;
}

static struct syscall_error invalid_root_error(void)
{
    struct lookup_failure f = {LOOKUP_INVALID_ROOT, 0, 0, 0};
    return lookup_error(&f);
}

static struct syscall_error missing_capability_error(word_t bits_left)
{
    struct lookup_failure f = {LOOKUP_MISSING_CAPABILITY, bits_left, 0, 0};
    return lookup_error(&f);
}

static pte_t *pt_kptr(paddr_t p) { return (pte_t *)paddr_to_kptr(p); }

/* ---- page tables (labels 37, 38) ---- */

static void perform_page_table_unmap(cte_t *slot)
{
    cap_t c = slot->cap;
    if (cap_is_mapped(c)) {
        unmap_page_table(cap_mapped_asid(c), cap_mapped_vaddr(c), cap_obj(c));
        /* seL4 clears the table: frames and tables below it are no longer
         * reachable through it (their caps keep stale mapping records, which
         * unmap_page and unmap_page_table recognise). 512 stores: bounded. */
        vspace_clear_page(pt_kptr(cap_obj(c)));
    }
    slot->cap = cap_clear_mapping(c);
}

/* PageTable_Map: where the table goes. */
struct page_table_op {
    pte_t *slot;  /* the entry that will point to the table */
    word_t asid;
    word_t base;  /* base of the 1 GiB or 2 MiB region the table covers */
};

/* Validates a PageTable invocation; changes nothing. Unmap refuses a cap
 * with derived copies and an assigned VSpace root (unmapped only by
 * deleting it); Map needs an unmapped table, a VSpace root and a free
 * entry above the 4 KiB level. */
static struct syscall_error decode_page_table(const struct invocation *inv, struct page_table_op *op)
{
    struct tcb *t = inv->caller;
    cap_t cap = inv->cap;

    if (inv->label == INV_PAGE_TABLE_UNMAP) {
        if (!cdt_is_final_cap(inv->slot))
            return error0(ERR_REVOKE_FIRST);
        if (cap_is_mapped(cap) && find_vspace_for_asid(cap_mapped_asid(cap)) == cap_obj(cap))
            return error0(ERR_REVOKE_FIRST);
        return no_error();
    }
    if (inv->label != INV_PAGE_TABLE_MAP)
        return error0(ERR_ILLEGAL_OPERATION);
    if (inv->length < 2 || inv->n_extra < 1)
        return error0(ERR_TRUNCATED_MESSAGE);
    if (cap_is_mapped(cap))
        return error1(ERR_INVALID_CAPABILITY, 0);
    word_t vaddr = get_mr(t, 0);
    cap_t vs = inv->extra[0];
    if (cap_type(vs) != CAP_PAGE_TABLE || !cap_is_mapped(vs))
        return error1(ERR_INVALID_CAPABILITY, 1);
    word_t asid = cap_mapped_asid(vs);
    if (vaddr >= USER_TOP)
        return error1(ERR_INVALID_ARGUMENT, 0);
    paddr_t root = find_vspace_for_asid(asid);
    if (!root)
        return invalid_root_error();
    if (root != cap_obj(vs))
        return error1(ERR_INVALID_CAPABILITY, 1);
    struct pt_slot s = vspace_lookup_pt_slot(pt_kptr(root), vaddr);
    /* Tables already down to the 4 KiB level, or a leaf where the table
     * would go. */
    if (s.bits_left == PAGE_BITS || pte_is_valid(*s.slot))
        return error0(ERR_DELETE_FIRST);
    op->slot = s.slot;
    op->asid = asid;
    op->base = vaddr & ~MASK(s.bits_left);
    return no_error();
}

/* The cap records the region's base; the entry points to the table. */
static void perform_page_table_map(const struct invocation *inv, const struct page_table_op *op)
{
    inv->slot->cap = cap_set_mapping(inv->cap, op->asid, op->base);
    vspace_update_table_entry(op->slot, pte_table(cap_obj(inv->cap)), op->asid);
}

struct syscall_error invoke_page_table(struct invocation *inv)
{
    struct page_table_op op = {0}; /* gcc cannot see that an accepted decode fills it */
    struct syscall_error e = decode_page_table(inv, &op);
    if (e.code != ERR_NONE)
        return e;
    if (inv->label == INV_PAGE_TABLE_UNMAP)
        perform_page_table_unmap(inv->slot);
    else
        perform_page_table_map(inv, &op);
    return no_error();
}

/* ---- frames (labels 39, 40, 41) ---- */

static void perform_page_unmap(cte_t *slot)
{
    cap_t c = slot->cap;
    if (cap_is_mapped(c))
        unmap_page(cap_frame_size(c), cap_mapped_asid(c), cap_mapped_vaddr(c), cap_obj(c));
    slot->cap = cap_clear_mapping(c);
}

/* Page_Map: the entry to write and what goes into it, and the frame cap
 * with its new mapping record. */
struct page_map_op {
    pte_t *slot;
    pte_t pte;
    word_t asid;
    word_t vaddr;
    cte_t *cap_slot;
    cap_t cap;
};

/* Validates Page_Map; changes nothing. */
static inline struct syscall_error decode_page_map(const struct invocation *inv, struct page_map_op *op)
{
    struct tcb *t = inv->caller;
    cap_t frame = inv->cap;

    if (inv->length < 3 || inv->n_extra < 1)
        return error0(ERR_TRUNCATED_MESSAGE);
    word_t vaddr = get_mr(t, 0);
    word_t rights_mask = get_mr(t, 1);
    word_t attr = get_mr(t, 2);
    cap_t vs = inv->extra[0];
    if (cap_type(vs) != CAP_PAGE_TABLE || !cap_is_mapped(vs))
        return error1(ERR_INVALID_CAPABILITY, 1);
    word_t asid = cap_mapped_asid(vs);
    paddr_t root = find_vspace_for_asid(asid);
    if (!root)
        return invalid_root_error();
    if (root != cap_obj(vs))
        return error1(ERR_INVALID_CAPABILITY, 1);
    word_t bits = frame_size_bits(cap_frame_size(frame));
    /* seL4 computes the top without an overflow check; a wrapped top needs
     * an unaligned vaddr, which the alignment check then refuses. */
    if (vaddr + MASK(bits) >= USER_TOP)
        return error1(ERR_INVALID_ARGUMENT, 0);
    if (vaddr & MASK(bits))
        return error0(ERR_ALIGNMENT_ERROR);
    struct pt_slot s = vspace_lookup_pt_slot(pt_kptr(root), vaddr);
    /* A missing level (or a leaf or tables in the way) is reported as the
     * size of the level where the walk stopped: libsel4utils maps a table
     * when it sees 30 or 21 and retries. */
    if (s.bits_left != bits)
        return missing_capability_error(s.bits_left);
    if (cap_is_mapped(frame)) {
        /* A mapped cap may only be remapped where it is (new rights). */
        if (cap_mapped_asid(frame) != asid)
            return error1(ERR_INVALID_CAPABILITY, 1);
        if (cap_mapped_vaddr(frame) != vaddr)
            return error1(ERR_INVALID_ARGUMENT, 0);
    } else if (pte_is_valid(*s.slot)) {
        return error0(ERR_DELETE_FIRST);
    }
    /* The cap keeps its own rights; only the PTE is masked. */
    enum vm_rights rights = mask_vm_rights(cap_frame_rights(frame), rights_mask);
    op->pte = make_user_pte(cap_obj(frame), !(attr & VM_ATTR_EXECUTE_NEVER), rights);
    op->slot = s.slot;
    op->asid = asid;
    op->vaddr = vaddr;
    op->cap_slot = inv->slot;
    op->cap = cap_set_mapping(frame, asid, vaddr);
    return no_error();
}

static inline void perform_page_map(const struct page_map_op *op)
{
    op->cap_slot->cap = op->cap;
    vspace_update_leaf(op->slot, op->pte, op->asid, op->vaddr);
}

/* Not inlined into invoke_frame (see there); decode and perform are
 * inlined here, so the struct between them stays in registers. */
static NOINLINE struct syscall_error invoke_page_map(struct invocation *inv)
{
    struct page_map_op op = {0}; /* gcc cannot see that an accepted decode fills it */
    struct syscall_error e = decode_page_map(inv, &op);
    if (e.code != ERR_NONE)
        return e;
    perform_page_map(&op);
    return no_error();
}

/* Page_GetAddress: only a Call gets the reply; a Send changes no register.
 * Nothing to validate. */
static void perform_page_get_address(struct invocation *inv)
{
    if (inv->call) {
        set_mr(inv->caller, 0, cap_obj(inv->cap));
        inv->n_reply = 1;
    }
}

/* Page_Unmap and Page_GetAddress have nothing to decode. Like
 * invoke_page_map, each a function of its own, tail-called below. */
static NOINLINE struct syscall_error invoke_page_unmap(struct invocation *inv)
{
    perform_page_unmap(inv->slot);
    return no_error();
}

static NOINLINE struct syscall_error invoke_page_get_address(struct invocation *inv)
{
    perform_page_get_address(inv);
    return no_error();
}

/* Every case a tail call: Page_Map pays for no frame of its own here. */
struct syscall_error invoke_frame(struct invocation *inv)
{
    switch (inv->label) {
    case INV_PAGE_MAP:
        return invoke_page_map(inv);
    case INV_PAGE_UNMAP:
        return invoke_page_unmap(inv);
    case INV_PAGE_GET_ADDRESS:
        return invoke_page_get_address(inv);
    default:
        return error0(ERR_ILLEGAL_OPERATION);
    }
}

/* ---- ASID control (label 42) ---- */

/* ASIDControl_MakePool: the pool number and the destination slot. */
struct make_pool_op {
    word_t pool_number;
    cte_t *dest;
};

/* Validates MakePool; changes nothing. */
static struct syscall_error decode_asid_control(const struct invocation *inv, struct make_pool_op *op)
{
    struct tcb *t = inv->caller;

    if (inv->label != INV_ASID_CONTROL_MAKE_POOL)
        return error0(ERR_ILLEGAL_OPERATION);
    if (inv->length < 2 || inv->n_extra < 2)
        return error0(ERR_TRUNCATED_MESSAGE);
    word_t index = get_mr(t, 0);
    word_t depth = get_mr(t, 1);
    cap_t untyped = inv->extra[0];
    cap_t root = inv->extra[1];
    word_t pool_number = asid_first_free_pool();
    if (pool_number == NUM_ASID_POOLS)
        return error0(ERR_DELETE_FIRST);
    if (cap_type(untyped) != CAP_UNTYPED || cap_untyped_size_bits(untyped) != ASID_POOL_BITS ||
        cap_untyped_is_device(untyped))
        return error1(ERR_INVALID_CAPABILITY, 1);
    if (cdt_has_children(inv->extra_slot[0]))
        return error0(ERR_REVOKE_FIRST);
    /* Destination: a CNode-style lookup (seL4's lookupTargetSlot). */
    if (cap_type(root) != CAP_CNODE)
        return invalid_root_error();
    if (depth < 1 || depth > 64)
        return range_error(1, 64);
    struct lookup_result r = lookup_slot_for_cnode_op(root, index, depth);
    if (!r.slot)
        return lookup_error(&r.failure);
    if (!cap_is_null(r.slot->cap))
        return error0(ERR_DELETE_FIRST);
    op->pool_number = pool_number;
    op->dest = r.slot;
    return no_error();
}

/* The untyped is used up whole (its watermark goes to the end, so it
 * cannot be retyped while the pool exists); the pool starts empty. */
static void perform_make_pool(const struct invocation *inv, const struct make_pool_op *op)
{
    cte_t *parent = inv->extra_slot[0];
    paddr_t pool = cap_obj(inv->extra[0]);
    parent->cap.w1 = 1ul << ASID_POOL_BITS; /* cap.h: an untyped's w1 is its watermark */
    vspace_clear_page(paddr_to_kptr(pool));
    cte_insert(cap_asid_pool(pool, op->pool_number << ASID_LOW_BITS), parent, op->dest);
    asid_register_pool(op->pool_number, pool);
}

struct syscall_error invoke_asid_control(struct invocation *inv)
{
    struct make_pool_op op = {0}; /* as above */
    struct syscall_error e = decode_asid_control(inv, &op);
    if (e.code != ERR_NONE)
        return e;
    perform_make_pool(inv, &op);
    return no_error();
}

/* ---- ASID pools (label 43) ---- */

/* Validates ASIDPool_Assign and picks the ASID; changes nothing. */
static struct syscall_error decode_asid_pool(const struct invocation *inv, word_t *asid)
{
    if (inv->label != INV_ASID_POOL_ASSIGN)
        return error0(ERR_ILLEGAL_OPERATION);
    if (inv->n_extra < 1)
        return error0(ERR_TRUNCATED_MESSAGE);
    cap_t vs = inv->extra[0];
    if (cap_type(vs) != CAP_PAGE_TABLE || cap_is_mapped(vs))
        return error1(ERR_INVALID_CAPABILITY, 1);
    word_t base = cap_asid_pool_base(inv->cap);
    paddr_t pool = asid_table[base >> ASID_LOW_BITS];
    if (!pool)
        return invalid_root_error();
    if (pool != cap_obj(inv->cap))
        return error1(ERR_INVALID_CAPABILITY, 0);
    word_t offset = asid_pool_first_free((const struct asid_pool *)paddr_to_kptr(pool), base);
    if (offset == ASID_POOL_ENTRIES)
        return error0(ERR_DELETE_FIRST);
    *asid = base + offset;
    return no_error();
}

/* The table becomes a root, mapped at address 0 of its ASID, with the
 * kernel's half of the address space. */
static void perform_asid_pool_assign(const struct invocation *inv, word_t asid)
{
    cap_t vs = inv->extra[0];
    inv->extra_slot[0]->cap = cap_set_mapping(vs, asid, 0);
    vspace_copy_kernel_mappings(pt_kptr(cap_obj(vs)));
    asid_assign(asid, cap_obj(vs));
}

struct syscall_error invoke_asid_pool(struct invocation *inv)
{
    word_t asid = 0; /* as above */
    struct syscall_error e = decode_asid_pool(inv, &asid);
    if (e.code != ERR_NONE)
        return e;
    perform_asid_pool_assign(inv, asid);
    return no_error();
}
