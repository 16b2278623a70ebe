/* IRQ control and IRQ handlers (labels 26-29 and 44; seL4's src/object/interrupt.c and
 * src/arch/riscv/object/interrupt.c), and the delivery of an interrupt as a
 * notification signal.
 *
 * State per IRQ number: inactive (no handler cap; masked at the PLIC),
 * signal (a handler cap exists; enabled unless an interrupt is waiting for
 * its Ack), or reserved (the kernel timer's number). Each IRQ has a slot
 * holding a copy of the notification cap given to SetNotification, a child
 * of that cap in the derivation tree as in seL4: deleting or revoking the
 * user's cap removes it, and it keeps the notification alive.
 *
 * Masking protocol (PLIC spec 1.0.0): an interrupt is claimed (the PLIC
 * gateway then holds further requests from that source), its source is
 * disabled, and the handler's notification is signalled. IRQHandler_Ack
 * re-enables the source and then completes the claim (a completion for a
 * disabled source is ignored by the PLIC). A source whose handler cap is
 * deleted while its claim is outstanding is completed and stays disabled. */
#include <arch/machine.h>
#include <cdt.h>
#include <invariants.h>
#include <invocation.h>
#include <irq.h>
#include <kernel.h>
#include <notification.h>

enum irq_state {
    IRQ_INACTIVE = 0,
    IRQ_SIGNAL,
    IRQ_RESERVED,
};

static u8 irq_state[IRQ_TABLE_SIZE];
static bool irq_claimed[IRQ_TABLE_SIZE]; /* claimed at the PLIC, not yet completed */
static cte_t irq_slot[IRQ_TABLE_SIZE];   /* notification cap (SetNotification) */
static word_t max_irq;                   /* the kernel timer's number: PLIC sources are below it */

void irq_init(word_t ndev)
{
    if (ndev > IRQ_TABLE_SIZE - 2) {
        kprintf("Kairos: PLIC has %lu sources; IRQs above %u are not available\n", ndev, IRQ_TABLE_SIZE - 2);
        ndev = IRQ_TABLE_SIZE - 2;
    }
    max_irq = ndev + 1;
    irq_state[max_irq] = IRQ_RESERVED;
    invariants_register_slots(irq_slot, IRQ_TABLE_SIZE);
}

/* ---- IRQ control ---- */

/* IRQControl_Get / GetTrigger, decoded: the IRQ and the empty slot its
 * handler cap goes to. */
struct irq_control_op {
    word_t irq;
    cte_t *dest;
};

/* Steps 2-5 of seL4's IRQ-control decode: the number, its state, the
 * destination slot (a target lookup), empty. */
static struct syscall_error decode_issue_handler(const struct invocation *inv, word_t irq, word_t index, word_t depth,
                                                 struct irq_control_op *op)
{
    if (irq == 0 || irq > max_irq)
        return range_error(1, max_irq);
    if (irq_state[irq] != IRQ_INACTIVE)
        return error0(ERR_REVOKE_FIRST); /* issued already, or the kernel timer */
    cte_t *dest;
    struct syscall_error e = lookup_slot_checked(false, inv->extra[0], index, depth, &dest);
    if (e.code != ERR_NONE)
        return e;
    if (!cap_is_null(dest->cap))
        return error0(ERR_DELETE_FIRST);
    op->irq = irq;
    op->dest = dest;
    return no_error();
}

/* Validates the invocation and fills *op; changes nothing. */
static struct syscall_error decode_irq_control(const struct invocation *inv, struct irq_control_op *op)
{
    struct tcb *caller = inv->caller;
    switch (inv->label) {
    case INV_IRQ_ISSUE_IRQ_HANDLER:
        if (inv->length < 3 || inv->n_extra < 1)
            return error0(ERR_TRUNCATED_MESSAGE);
        return decode_issue_handler(inv, get_mr(caller, 0), get_mr(caller, 1), get_mr(caller, 2), op);
    case INV_IRQ_ISSUE_IRQ_HANDLER_TRIGGER:
        /* MR1 (edge/level) is accepted and has no effect on the PLIC. */
        if (inv->length < 4 || inv->n_extra < 1)
            return error0(ERR_TRUNCATED_MESSAGE);
        return decode_issue_handler(inv, get_mr(caller, 0), get_mr(caller, 2), get_mr(caller, 3), op);
    default:
        return error0(ERR_ILLEGAL_OPERATION);
    }
}

/* The handler cap, a revocable child of IRQ control; seL4's
 * setIRQState(IRQSignal) unmasks the source at once. Cannot fail. */
static void perform_issue_handler(const struct invocation *inv, const struct irq_control_op *op)
{
    irq_state[op->irq] = IRQ_SIGNAL;
    irq_claimed[op->irq] = false;
    cte_insert(cap_irq_handler(op->irq), inv->slot, op->dest);
    machine_irq_unmask(op->irq);
}

struct syscall_error invoke_irq_control(struct invocation *inv)
{
    struct irq_control_op op;
    struct syscall_error e = decode_irq_control(inv, &op);
    if (e.code != ERR_NONE)
        return e;
    perform_issue_handler(inv, &op);
    return no_error();
}

/* ---- IRQ handlers ---- */

/* Validates an IRQHandler invocation; changes nothing. Ack and Clear have
 * nothing to check; SetNotification needs a notification cap with Write. */
static struct syscall_error decode_irq_handler(const struct invocation *inv)
{
    switch (inv->label) {
    case INV_IRQ_ACK:
    case INV_IRQ_CLEAR_HANDLER:
        return no_error();
    case INV_IRQ_SET_HANDLER: {
        if (inv->n_extra < 1)
            return error0(ERR_TRUNCATED_MESSAGE);
        cap_t c = inv->extra[0];
        if (cap_type(c) != CAP_NOTIFICATION || !(cap_rights(c) & RIGHT_WRITE))
            return error1(ERR_INVALID_CAPABILITY, 0); /* seL4 reports 0 here */
        return no_error();
    }
    default:
        return error0(ERR_ILLEGAL_OPERATION);
    }
}

/* Can stop only at a preemption point: replacing or clearing the
 * notification deletes the old cap, and deleting its last cap restarts its
 * waiters preemptibly (seL4 does this with cteDeleteOne, in one go). A
 * preempted delete leaves the old cap in place and the call is re-executed,
 * checks included. */
static struct syscall_error perform_irq_handler(const struct invocation *inv)
{
    word_t irq = cap_irq(inv->cap);
    cte_t *slot = &irq_slot[irq];
    switch (inv->label) {
    case INV_IRQ_ACK:
        /* Unmask first: the PLIC ignores the completion of a disabled source. */
        machine_irq_unmask(irq);
        if (irq_claimed[irq]) {
            machine_irq_complete(irq);
            irq_claimed[irq] = false;
        }
        return no_error();
    case INV_IRQ_SET_HANDLER: {
        struct syscall_error e = cte_delete(slot, true);
        if (e.code != ERR_NONE)
            return e;
        cte_insert(inv->extra[0], inv->extra_slot[0], slot);
        return no_error();
    }
    default: /* INV_IRQ_CLEAR_HANDLER */
        return cte_delete(slot, true);
    }
}

struct syscall_error invoke_irq_handler(struct invocation *inv)
{
    struct syscall_error e = decode_irq_handler(inv);
    if (e.code != ERR_NONE)
        return e;
    return perform_irq_handler(inv);
}

/* Empty an IRQ's notification slot after its cap was finalised: what cdt.c's
 * emptySlot does (unlink; the first cap of a badge hands that mark on).
 * Written out here because irq_handler_deleted runs inside finalise_cap, and
 * going through cte_delete_one would call finalise_cap again (recursion,
 * which the kernel does not use and the WCET analyser rejects). */
static void empty_irq_slot(cte_t *slot)
{
    cte_t *prev = mdb_prev(slot);
    cte_t *next = mdb_next(slot);
    if (prev)
        prev->mdb.next = (word_t)next | (prev->mdb.next & MDB_FLAGS);
    if (next) {
        next->mdb.prev = (word_t)prev;
        if (slot->mdb.next & MDB_FIRST_BADGED)
            next->mdb.next |= MDB_FIRST_BADGED;
    }
    slot->cap = cap_null();
    slot->mdb.prev = 0;
    slot->mdb.next = 0;
}

bool irq_handler_deleted(word_t irq)
{
    cte_t *slot = &irq_slot[irq];
    /* seL4's deletingIRQHandler: the notification cap goes (finalising the
     * notification if it was the last cap to it; a pending interrupt stops
     * that at a preemption point, and the re-executed delete goes on). */
    if (!cap_is_null(slot->cap)) {
        if (cdt_is_final_cap(slot) && !notification_finalise(notification_from_cap(slot->cap)))
            return false;
        empty_irq_slot(slot);
    }
    /* deletedIRQHandler: inactive and masked; an outstanding claim is
     * completed so the source is usable when the IRQ is issued again. */
    machine_irq_mask(irq);
    if (irq_claimed[irq]) {
        machine_irq_complete(irq);
        irq_claimed[irq] = false;
    }
    irq_state[irq] = IRQ_INACTIVE;
    return true;
}

/* ---- delivery ---- */

void irq_handle(word_t irq)
{
    if (irq == 0 || irq >= max_irq || irq_state[irq] != IRQ_SIGNAL) {
        /* Only issued sources are enabled, so this is not expected: finish
         * the claim while the source is still enabled, then disable it. */
        machine_irq_complete(irq);
        machine_irq_mask(irq);
        return;
    }
    machine_irq_mask(irq);
    irq_claimed[irq] = true;
    cap_t c = irq_slot[irq].cap;
    if (cap_type(c) == CAP_NOTIFICATION && (cap_rights(c) & RIGHT_WRITE))
        notification_signal(notification_from_cap(c), cap_badge(c));
    else
        debug_printf("Kairos: undelivered IRQ %lu (no notification set); masked until IRQHandler_Ack\n", irq);
}
