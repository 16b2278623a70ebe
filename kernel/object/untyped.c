/* Untyped memory and Untyped_Retype (seL4's src/object/untyped.c; the seL4
 * reference manual, "Untyped Memory" and seL4_Untyped_Retype).
 *
 * An untyped cap names a naturally aligned block of 2^size_bits bytes and
 * carries a watermark (the "free index", in bytes from the base) in its slot.
 * Invariant kept for RAM untypeds: every byte at or above the watermark is
 * zero, so objects are created without clearing them. Boot untypeds start
 * with the watermark at the end (nothing was zeroed at boot); an untyped
 * whose derivation tree has no children is reset on its next retype: the
 * used part is zeroed from the top down in 2^CONFIG_RESET_CHUNK_BITS-byte
 * chunks, the watermark lowered after each chunk and a preemption point
 * taken, so the work is bounded per kernel entry and a restarted call
 * continues where it stopped. Device untypeds are never written. */
#include <arch/csr.h>
#include <arch/memory.h>
#include <cdt.h>
#include <cspace.h>
#include <invariants.h>
#include <invocation.h>
#include <kernel.h>
#include <objecttype.h>
#include <preemption.h>
#include <schedcontext.h>
#include <thread.h>

/* seL4's CONFIG_RETYPE_FAN_OUT_LIMIT: at most this many objects per call,
 * which bounds the slot checks and the creation loop of one retype. */
#ifndef CONFIG_RETYPE_FAN_OUT_LIMIT
#define CONFIG_RETYPE_FAN_OUT_LIMIT 256
#endif

#define RESET_CHUNK (1ul << CONFIG_RESET_CHUNK_BITS)

/* Zero one reset chunk. Written out as straight-line word stores: resets
 * zero all of RAM at least once, and a loop-free body of 32 stores costs
 * less than memset's loop (about a quarter less host time under QEMU). */
_Static_assert(CONFIG_RESET_CHUNK_BITS == 8, "zero_chunk writes 256 bytes");
static void zero_chunk(void *p)
{
    volatile u64 *w = p; /* volatile: keep the stores, no call to memset */
    w[0] = 0; w[1] = 0; w[2] = 0; w[3] = 0; w[4] = 0; w[5] = 0; w[6] = 0; w[7] = 0;
    w[8] = 0; w[9] = 0; w[10] = 0; w[11] = 0; w[12] = 0; w[13] = 0; w[14] = 0; w[15] = 0;
    w[16] = 0; w[17] = 0; w[18] = 0; w[19] = 0; w[20] = 0; w[21] = 0; w[22] = 0; w[23] = 0;
    w[24] = 0; w[25] = 0; w[26] = 0; w[27] = 0; w[28] = 0; w[29] = 0; w[30] = 0; w[31] = 0;
}

/* Zero an untyped smaller than one reset chunk: 2^size_bits bytes with
 * MIN_UNTYPED_BITS <= size_bits < CONFIG_RESET_CHUNK_BITS, naturally
 * aligned, so whole words, at most 16 of them. A word loop bounded by that
 * constant rather than memset, whose byte loop the WCET analysis must
 * count as 128 stores. */
_Static_assert(MIN_UNTYPED_BITS >= 3, "a small untyped is whole words");
static void zero_small_untyped(void *p, word_t size_bits)
{
    volatile u64 *w = p; /* volatile: no call to memset */
    for (word_t n = 0; n < RESET_CHUNK / 16 && n < (1ul << size_bits) / 8; n++)
        w[n] = 0;
}

static cap_t untyped_set_free_index(cap_t c, word_t free_index)
{
    c.w1 = free_index; /* cap.h: w1 of an untyped cap is the watermark */
    return c;
}

word_t object_size_bits(enum object_type type, word_t user_size_bits)
{
    switch (type) {
    case OBJ_UNTYPED:
    case OBJ_SCHED_CONTEXT:
        return user_size_bits;
    case OBJ_TCB:
        return TCB_BITS;
    case OBJ_ENDPOINT:
        return ENDPOINT_BITS;
    case OBJ_NOTIFICATION:
        return NOTIFICATION_BITS;
    case OBJ_CNODE:
        return user_size_bits + SLOT_BITS;
    case OBJ_REPLY:
        return REPLY_BITS;
    case OBJ_GIGA_PAGE:
    case OBJ_SMALL_PAGE:
    case OBJ_LARGE_PAGE:
    case OBJ_PAGE_TABLE:
    case OBJ_TYPE_COUNT:
        break;
    }
    return arch_object_size_bits(type);
}

/* The non-zero defaults of a new thread: everything else (registers, FP
 * state, slots, links) is the zero the memory already holds. Inactive,
 * priority 0, MCP 0, domain 0, no scheduling context, FPU enabled (flags 0,
 * FS clean as for every thread that may use the FPU), user mode on return. */
static void init_new_tcb(struct tcb *t)
{
    t->state = THREAD_INACTIVE;
    t->priority = 0;
    t->mcp = 0;
    t->domain = 0;
    t->flags = 0;
    t->ctx.sstatus = SSTATUS_SPIE | SSTATUS_FS_CLEAN;
#if CONFIG_DEBUG_BUILD
    /* seL4 debug builds name a new thread after its creator. */
    {
        char name[CONFIG_TCB_NAME_LENGTH];
        static const char prefix[] = "child of: '";
        const char *parent = current_thread ? thread_name(current_thread) : "";
        word_t n = 0;
        for (word_t i = 0; i < sizeof(prefix) - 1; i++)
            name[n++] = prefix[i];
        /* Room is left for the closing quote and the terminator. */
        for (word_t i = 0; i < sizeof(name) - sizeof(prefix) - 1 && parent[i]; i++)
            name[n++] = parent[i];
        name[n++] = '\'';
        name[n] = '\0';
        thread_set_name(t, name, sizeof(name));
    }
#endif
    debug_register_thread(t);
    invariants_register_slots(t->slots, TCB_NUM_SLOTS);
    tcb_count_new(); /* admitted by decode_untyped (tcb_room) */
}

cap_t create_object(enum object_type type, paddr_t paddr, word_t size_bits, bool device)
{
    switch (type) {
    case OBJ_UNTYPED:
        /* A child untyped starts empty: its memory is above the parent's old
         * watermark, hence already zero. */
        return cap_untyped(paddr, (u32)size_bits, device, 0);
    case OBJ_TCB:
        init_new_tcb(tcb_from_paddr(paddr));
        return cap_thread(paddr);
    case OBJ_ENDPOINT:
        return cap_endpoint(paddr, RIGHTS_ALL, 0);
    case OBJ_NOTIFICATION:
        return cap_notification(paddr, RIGHT_READ | RIGHT_WRITE, 0);
    case OBJ_CNODE:
        invariants_register_slots((cte_t *)paddr_to_kptr(paddr), 1ul << size_bits);
        return cap_cnode(paddr, (u32)size_bits, 0, 0);
    case OBJ_SCHED_CONTEXT:
        /* Unconfigured, unbound, ring capacity from its size (schedcontext.c). */
        sched_context_init((struct sched_context *)paddr_to_kptr(paddr), (u32)size_bits);
        return cap_sched_context(paddr, (u32)size_bits);
    case OBJ_REPLY:
        return cap_reply(paddr, true);
    case OBJ_GIGA_PAGE:
    case OBJ_SMALL_PAGE:
    case OBJ_LARGE_PAGE:
    case OBJ_PAGE_TABLE:
    case OBJ_TYPE_COUNT:
        break;
    }
    return arch_create_object(type, paddr, size_bits, device);
}

static bool is_frame_type(word_t type)
{
    return type == OBJ_SMALL_PAGE || type == OBJ_LARGE_PAGE || type == OBJ_GIGA_PAGE;
}

/* Zero the used part of an untyped with no children, top down, and bring its
 * watermark to 0. Returns false if it stopped at a preemption point; the
 * watermark then says how far it got (everything at or above it is zero). */
static bool reset_untyped(cte_t *slot)
{
    cap_t c = slot->cap;
    word_t used = cap_untyped_free_index(c);
    word_t size_bits = cap_untyped_size_bits(c);
    paddr_t base = cap_obj(c);
    if (used == 0)
        return true;
    if (cap_untyped_is_device(c) || size_bits < CONFIG_RESET_CHUNK_BITS) {
        /* Device memory is never written; an untyped smaller than one chunk
         * is cleared in one step (at most 128 bytes). */
        if (!cap_untyped_is_device(c))
            zero_small_untyped(paddr_to_kptr(base), size_bits);
        slot->cap = untyped_set_free_index(c, 0);
        return true;
    }
    /* The chunk holding the last used byte first, then downwards. The loop
     * runs at most used / RESET_CHUNK <= 2^(38 - 8) times (the constant bound
     * below) and takes a preemption point after every chunk, so one kernel
     * entry keeps zeroing only while no interrupt is pending. */
    word_t offset = ALIGN_DOWN(used - 1, RESET_CHUNK);
    for (word_t n = 0; n < BIT(MAX_UNTYPED_BITS - CONFIG_RESET_CHUNK_BITS); n++) {
        zero_chunk(paddr_to_kptr(base + offset));
        slot->cap = untyped_set_free_index(slot->cap, offset);
        if (offset == 0)
            return true;
        if (preemption_point_unforced())
            return false;
        offset -= RESET_CHUNK;
    }
    return true; /* not reached: offset reaches 0 within the bound */
}

/* Untyped_Retype, decoded: the untyped's slot, what to make and where,
 * and how far the call has got. Destination slots [0, checked) were found
 * empty by this call (by this entry's decode or an earlier entry), `done`
 * objects exist already, the first at `first`. `ready`: the checks after
 * the slot check (memory, device) passed in this entry. */
struct retype_op {
    cte_t *ut_slot;
    cte_t *dest;
    enum object_type type;
    word_t user_size_bits, obj_bits, count, checked, done;
    paddr_t first;
    bool reset, ready;
};

/* The end of the group of destination slots that starts at `from`. */
static word_t check_group_end(word_t from, word_t count)
{
    return count - from > CONFIG_RETYPE_CHECK_CHUNK ? from + CONFIG_RETYPE_CHECK_CHUNK : count;
}

/* The first of dest[from] .. dest[to - 1] that holds a cap, or `to` if all
 * are empty. to - from <= CONFIG_RETYPE_CHECK_CHUNK: the constant in the
 * condition is the loop's bound. */
static word_t first_full_slot(const cte_t *dest, word_t from, word_t to)
{
    for (word_t n = 0; n < CONFIG_RETYPE_CHECK_CHUNK && from + n < to; n++)
        if (!cap_is_null(dest[from + n].cap))
            return from + n;
    return to;
}

/* Record in the caller's TCB how far the call got, for its restart. */
static void retype_record(struct tcb *caller, const struct retype_op *op, word_t checked, word_t done,
                          paddr_t first)
{
    caller->retype.untyped = op->ut_slot;
    caller->retype.dest = op->dest;
    caller->retype.type = op->type;
    caller->retype.user_size_bits = op->user_size_bits;
    caller->retype.count = op->count;
    caller->retype.checked = checked;
    caller->retype.done = done;
    caller->retype.first = first;
}

/* The perform step; it stops only at a preemption point (ERR_PREEMPTED,
 * progress recorded in the caller's TCB for the re-executed call).
 *
 * 1. The destination slots the decode left unchecked, a group of
 *    CONFIG_RETYPE_CHECK_CHUNK per region, a preemption point before each
 *    group. No object exists yet, so a stop here changes nothing but the
 *    record. If a group holds a cap, or the decode's memory or device check
 *    failed, the call stops here too, with the record at that group: the
 *    re-executed call's decode then returns the error (DeleteFirst, then
 *    NotEnoughMemory, InvalidArgument: seL4's order), and no object was made.
 * 2. The reset of an untyped without children (its own preemption points).
 * 3. Objects `done` to `count` - 1, back to back. After each object the
 *    watermark moves past it and, unless it was the last, a preemption
 *    point follows. So at every stop the untyped is as if `done` objects had
 *    been asked for: a call that is never re-executed (its thread deleted,
 *    say) leaves no memory behind that no object uses. Each slot is tested
 *    again just before its object goes in: a slot checked in an earlier
 *    entry may have been filled by another thread while the call was
 *    stopped; the call then stops with the record at that slot and its
 *    decode returns DeleteFirst (the objects already made stay). */
static struct syscall_error perform_untyped_retype(struct tcb *caller, const struct retype_op *op)
{
    if (op->checked < op->count) {
        word_t checked = op->checked;
        /* At most (256 - 16) / 16 groups: the decode checked the first. */
        for (word_t n = 0; n < CONFIG_RETYPE_FAN_OUT_LIMIT / CONFIG_RETYPE_CHECK_CHUNK && checked < op->count;
             n++) {
            if (preemption_point()) {
                retype_record(caller, op, checked, 0, 0);
                return preempted();
            }
            word_t to = check_group_end(checked, op->count);
            if (first_full_slot(op->dest, checked, to) != to)
                break;
            checked = to;
        }
        if (checked < op->count || !op->ready) {
            retype_record(caller, op, checked, 0, 0);
            return preempted();
        }
    }
    if (op->reset && !reset_untyped(op->ut_slot)) {
        retype_record(caller, op, op->count, 0, 0);
        return preempted();
    }
    cte_t *ut_slot = op->ut_slot;
    paddr_t base = cap_obj(ut_slot->cap);
    bool device = cap_untyped_is_device(ut_slot->cap);
    word_t obj_bits = op->obj_bits;
    /* Back to back from the watermark rounded up to the object size (the
     * base after a reset), or where the stopped run put its first. */
    paddr_t first = op->done == 0 ? ALIGN_UP(base + cap_untyped_free_index(ut_slot->cap), 1ul << obj_bits)
                                  : op->first;
    /* count <= CONFIG_RETYPE_FAN_OUT_LIMIT (checked by the decoder); the
     * constant in the condition makes the bound visible to the analyser,
     * and the preemption point after each object makes one object the
     * longest step. */
    for (word_t i = op->done; i < CONFIG_RETYPE_FAN_OUT_LIMIT;) {
        if (!cap_is_null(op->dest[i].cap)) {
            retype_record(caller, op, op->count, i, first);
            return preempted();
        }
        paddr_t obj = first + (i << obj_bits);
        ut_slot->cap = untyped_set_free_index(ut_slot->cap, obj + (1ul << obj_bits) - base);
        cdt_insert_new_cap(ut_slot, &op->dest[i], create_object(op->type, obj, op->user_size_bits, device));
        if (++i == op->count)
            break;
        if (preemption_point()) {
            retype_record(caller, op, op->count, i, first);
            return preempted();
        }
    }
    caller->retype.untyped = NULL;
    return no_error();
}

/* How far a stopped run of this call got: the caller's record names the
 * same untyped slot, destination, type, size and count; once objects exist
 * (done > 0, all slots checked) the untyped's watermark must still be right
 * after them (nothing was taken from it since). Otherwise {0, 0}: a new
 * call. Whatever the record says, objects only ever come from above the
 * watermark, so a stale record cannot make two objects share memory, and
 * each slot is tested again before an object goes in. */
struct retype_progress {
    word_t checked, done;
};
static struct retype_progress retype_stopped_at(const struct tcb *t, const cte_t *ut_slot, const cte_t *dest,
                                                word_t type, word_t user_size_bits, word_t obj_bits, word_t count)
{
    struct retype_progress p = {0, 0};
    word_t checked = t->retype.checked, done = t->retype.done;
    bool same = t->retype.untyped == ut_slot && t->retype.dest == dest && t->retype.type == type &&
                t->retype.user_size_bits == user_size_bits && t->retype.count == count && checked != 0 &&
                checked <= count;
    if (!same)
        return p;
    if (done != 0 &&
        (checked != count || done >= count ||
         cap_obj(ut_slot->cap) + cap_untyped_free_index(ut_slot->cap) != t->retype.first + (done << obj_bits)))
        return p;
    p.checked = checked;
    p.done = done;
    return p;
}

/* Validates the invocation in seL4's order and fills *op; changes nothing.
 * The destination check (seL4's step 13) covers one group of slots per
 * kernel entry: the first group for a new call, the next unchecked group
 * for a call stopped in its check, the next object's slot for a call
 * stopped while making objects. The checks after it (memory, device) are
 * returned only once every slot has been checked; until then `ready` says
 * whether they passed. */
static struct syscall_error decode_untyped(const struct invocation *inv, struct retype_op *op)
{
    if (inv->label != INV_UNTYPED_RETYPE)
        return error0(ERR_ILLEGAL_OPERATION);
    if (inv->length < 6 || inv->n_extra < 1)
        return error0(ERR_TRUNCATED_MESSAGE);
    struct tcb *t = inv->caller;
    word_t type = get_mr(t, 0);
    word_t user_size_bits = get_mr(t, 1);
    word_t node_index = get_mr(t, 2);
    word_t node_depth = get_mr(t, 3);
    word_t node_offset = get_mr(t, 4);
    word_t count = get_mr(t, 5);
    cap_t root = inv->extra[0];

    if (type >= OBJ_TYPE_COUNT)
        return error1(ERR_INVALID_ARGUMENT, 0);
    word_t obj_bits = object_size_bits((enum object_type)type, user_size_bits);
    if (user_size_bits >= 64 || obj_bits > MAX_UNTYPED_BITS)
        return range_error(0, MAX_UNTYPED_BITS);
    if (type == OBJ_CNODE && user_size_bits == 0)
        return error1(ERR_INVALID_ARGUMENT, 1);
    if (type == OBJ_UNTYPED && user_size_bits < MIN_UNTYPED_BITS)
        return error1(ERR_INVALID_ARGUMENT, 1);
    if (type == OBJ_SCHED_CONTEXT && user_size_bits < MIN_SCHED_CONTEXT_BITS)
        return error1(ERR_INVALID_ARGUMENT, 1);

    /* The destination CNode: the root itself at depth 0, else the cap in the
     * slot that (index, depth) names from the root (a target lookup). */
    cap_t node = root;
    if (node_depth != 0) {
        cte_t *node_slot;
        struct syscall_error e = lookup_slot_checked(false, root, node_index, node_depth, &node_slot);
        if (e.code != ERR_NONE)
            return e;
        node = node_slot->cap;
    }
    if (cap_type(node) != CAP_CNODE) {
        struct lookup_failure f = {LOOKUP_MISSING_CAPABILITY, node_depth, 0, 0};
        return failed_lookup_error(false, &f);
    }
    word_t node_size = 1ul << cap_cnode_radix(node);
    if (node_offset > node_size - 1)
        return range_error(0, node_size - 1);
    if (count < 1 || count > CONFIG_RETYPE_FAN_OUT_LIMIT)
        return range_error(1, CONFIG_RETYPE_FAN_OUT_LIMIT);
    if (count > node_size - node_offset)
        return range_error(1, node_size - node_offset);
    cte_t *dest = cnode_slots(node) + node_offset;

    struct retype_progress p = retype_stopped_at(t, inv->slot, dest, type, user_size_bits, obj_bits, count);
    word_t from = p.checked == count ? p.done : p.checked;
    word_t to = p.checked == count ? p.done + 1 : check_group_end(p.checked, count);
    if (first_full_slot(dest, from, to) != to)
        return error0(ERR_DELETE_FIRST);
    word_t checked = p.checked == count ? count : to;

    /* No children: the untyped will be reset, so all of it is available. A
     * call that goes on needs room for the rest right above the watermark
     * (its objects are children: no reset). */
    bool reset = p.done == 0 && !cdt_has_children(inv->slot);
    word_t size = 1ul << cap_untyped_size_bits(inv->cap);
    word_t available = size - (reset ? 0 : cap_untyped_free_index(inv->cap));
    bool memory_ok = (available >> obj_bits) >= count - p.done;
    bool type_ok = !cap_untyped_is_device(inv->cap) || type == OBJ_UNTYPED || is_frame_type(type);
    /* Kairos: at most CONFIG_MAX_THREADS TCBs exist (a system parameter
     * that bounds every thread queue; docs/object-model.md "Thread
     * limit"). The TCBs still to be made must fit in what is left; a
     * stopped call's objects are counted already. Checked last, so every
     * error seL4 would give comes first and this one only where seL4 would
     * have made the threads. The error is NotEnoughMemory, seL4's answer
     * when the objects asked for cannot be had (none of seL4's other errors
     * says "too many"; a RangeError would blame an argument, num_objects,
     * whose range depends on other threads' objects); its MR0, bytes
     * available, is the room for TCBs in bytes, so a caller that divides it
     * by the object size learns how many TCBs it may still make. */
    word_t thread_room = tcb_room();
    bool threads_ok = type != OBJ_TCB || count - p.done <= thread_room;
    if (checked == count) {
        if (!memory_ok)
            return error1(ERR_NOT_ENOUGH_MEMORY, available);
        if (!type_ok)
            return error1(ERR_INVALID_ARGUMENT, 1);
        if (!threads_ok)
            return error1(ERR_NOT_ENOUGH_MEMORY, thread_room << TCB_BITS);
    }

    op->ut_slot = inv->slot;
    op->dest = dest;
    op->type = (enum object_type)type;
    op->user_size_bits = user_size_bits;
    op->obj_bits = obj_bits;
    op->count = count;
    op->checked = checked;
    op->done = p.done;
    op->first = p.done != 0 ? t->retype.first : 0;
    op->reset = reset;
    op->ready = memory_ok && type_ok && threads_ok;
    return no_error();
}

struct syscall_error invoke_untyped(struct invocation *inv)
{
    /* Zeroed: gcc cannot see that every error code is non-zero. */
    struct retype_op op = {0};
    struct syscall_error e = decode_untyped(inv, &op);
    if (e.code != ERR_NONE) {
        /* An error ends the call: a stopped run's record goes with it, so
         * the next call with the same arguments checks its whole
         * destination again. */
        inv->caller->retype.untyped = NULL;
        return e;
    }
    return perform_untyped_retype(inv->caller, &op);
}

#if CONFIG_INVARIANT_CHECKS
#include <untyped.h> /* here, so the check-only code stays at the end of the file */

/* The descendants of an untyped follow it in the derivation list; each
 * object's caps form one run there (every cap to an object derives from the
 * one retype made), and a child untyped's descendants follow it. */
word_t untyped_used_bytes(const cte_t *slot)
{
    word_t used = 0;
    const cte_t *last_counted = NULL;
    const cte_t *d = mdb_next(slot);
    /* Check flavour only; bounded by the number of slots in the system
     * (the list has no cycles: the checker established that first). */
    while (d && cdt_is_parent_of(slot, d)) {
        if (cap_type(d->cap) == CAP_UNTYPED) {
            used += cap_object_size(d->cap);
            const cte_t *u = d;
            d = mdb_next(d);
            while (d && cdt_is_parent_of(u, d))
                d = mdb_next(d); /* inside the child untyped */
            last_counted = NULL;
            continue;
        }
        if (cap_is_physical(d->cap) && !(last_counted && same_object_as(last_counted->cap, d->cap))) {
            used += cap_object_size(d->cap);
            last_counted = d;
        }
        d = mdb_next(d);
    }
    return used;
}
#endif
