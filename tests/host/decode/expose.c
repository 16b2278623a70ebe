/* The decode steps of the kernel's invocations, made callable from the
 * decode-purity harness (decode_pure.c). Each object file is compiled
 * here as it is in the kernel (included, so its static decoders are in
 * scope), and one wrapper per object type calls the decoder the kernel's
 * invoke_X would call for the label, with the decoded struct thrown away.
 * The perform steps are compiled but never called. */
#include "../../../kernel/object/cnode.c"
#include "../../../kernel/object/domain.c"
#include "../../../kernel/object/irq.c"
#include "../../../kernel/object/schedcontext.c"
#include "../../../kernel/object/schedcontrol.c"
#include "../../../kernel/object/tcb.c"
#include "../../../kernel/object/untyped.c"
#include "../../../kernel/arch/riscv/object/vspace.c"
#include <string.h>

struct syscall_error pure_decode(struct invocation *inv);
void irq_tables_snapshot(unsigned char *out, word_t *len);
void irq_tables_setup(word_t ndev, word_t issued_mask);

static struct syscall_error decode_tcb_label(const struct invocation *inv)
{
    struct tcb_op op;
    op.target = cap_tcb(inv->cap);
    switch (inv->label) {
    case INV_TCB_READ_REGISTERS:
        return decode_read_registers(inv, &op);
    case INV_TCB_WRITE_REGISTERS:
        return decode_write_registers(inv, &op);
    case INV_TCB_COPY_REGISTERS:
        return decode_copy_registers(inv, &op);
    case INV_TCB_CONFIGURE:
        return decode_configure(inv, &op);
    case INV_TCB_SET_PRIORITY:
    case INV_TCB_SET_MC_PRIORITY:
        return decode_set_priority(inv, &op);
    case INV_TCB_SET_SCHED_PARAMS:
        return decode_set_sched_params(inv, &op);
    case INV_TCB_SET_TIMEOUT_ENDPOINT:
        return decode_set_timeout_endpoint(inv, &op);
    case INV_TCB_SET_IPC_BUFFER:
        return decode_set_ipc_buffer(inv, &op);
    case INV_TCB_SET_SPACE:
        return decode_set_space(inv, &op);
    case INV_TCB_SUSPEND:
    case INV_TCB_RESUME:
        return no_error(); /* nothing to decode */
    case INV_TCB_BIND_NOTIFICATION:
        return decode_bind_notification(inv, &op);
    case INV_TCB_UNBIND_NOTIFICATION:
        return decode_unbind_notification(&op);
    case INV_TCB_SET_TLS_BASE:
        return decode_set_tls_base(inv, &op);
    case INV_TCB_SET_FLAGS:
        return decode_set_flags(inv, &op);
    default:
        return error0(ERR_ILLEGAL_OPERATION);
    }
}

/* invoke_frame: Page_Unmap and Page_GetAddress have nothing to decode. */
static struct syscall_error decode_frame_label(const struct invocation *inv)
{
    struct page_map_op op;
    switch (inv->label) {
    case INV_PAGE_MAP:
        return decode_page_map(inv, &op);
    case INV_PAGE_UNMAP:
    case INV_PAGE_GET_ADDRESS:
        return no_error();
    default:
        return error0(ERR_ILLEGAL_OPERATION);
    }
}

struct syscall_error pure_decode(struct invocation *inv)
{
    switch (cap_type(inv->cap)) {
    case CAP_CNODE: {
        struct cnode_op op;
        return decode_cnode(inv, &op);
    }
    case CAP_DOMAIN: {
        struct domain_op op;
        return decode_domain(inv, &op);
    }
    case CAP_IRQ_CONTROL: {
        struct irq_control_op op;
        return decode_irq_control(inv, &op);
    }
    case CAP_IRQ_HANDLER:
        return decode_irq_handler(inv);
    case CAP_SCHED_CONTEXT: {
        struct sched_context_op op;
        return decode_sched_context(inv, &op);
    }
    case CAP_SCHED_CONTROL: {
        struct sched_control_op op;
        return decode_sched_control(inv, &op);
    }
    case CAP_THREAD:
        return decode_tcb_label(inv);
    case CAP_UNTYPED: {
        struct retype_op op;
        return decode_untyped(inv, &op);
    }
    case CAP_PAGE_TABLE: {
        struct page_table_op op;
        return decode_page_table(inv, &op);
    }
    case CAP_FRAME:
        return decode_frame_label(inv);
    case CAP_ASID_CONTROL: {
        struct make_pool_op op;
        return decode_asid_control(inv, &op);
    }
    case CAP_ASID_POOL: {
        word_t asid;
        return decode_asid_pool(inv, &asid);
    }
    default:
        return error1(ERR_INVALID_CAPABILITY, 0);
    }
}

/* irq.c's tables and the ASID table (asid.c) are kernel state outside the
 * objects: part of the snapshot. */
void irq_tables_snapshot(unsigned char *out, word_t *len)
{
    word_t n = 0;
    memcpy(out + n, asid_table, sizeof(asid_table)), n += sizeof(asid_table);
    memcpy(out + n, irq_state, sizeof(irq_state)), n += sizeof(irq_state);
    memcpy(out + n, irq_claimed, sizeof(irq_claimed)), n += sizeof(irq_claimed);
    memcpy(out + n, irq_slot, sizeof(irq_slot)), n += sizeof(irq_slot);
    memcpy(out + n, &max_irq, sizeof(max_irq)), n += sizeof(max_irq);
    *len = n;
}

void irq_tables_setup(word_t ndev, word_t issued_mask)
{
    memset(irq_state, 0, sizeof(irq_state));
    max_irq = ndev + 1;
    irq_state[max_irq] = IRQ_RESERVED;
    for (word_t i = 1; i < max_irq && i < 64; i++)
        if (issued_mask & (1ul << i))
            irq_state[i] = IRQ_SIGNAL;
}
