/* Message registers and invocation replies (kernel/kernel/message.c): how
 * the kernel reads the words of a message and writes the words of a reply.
 *
 * Message word i travels in a2-a5 for i < NUM_MSG_REGISTERS and in the
 * sender's IPC buffer (msg[i], abi.h BUF_MSG) after that; a thread without
 * an IPC buffer has only the register words. A reply to an invocation is a
 * message info in a1 (label 0 on success, the error code otherwise) with
 * its words set the same way. */
#ifndef KAIROS_MESSAGE_H
#define KAIROS_MESSAGE_H

#include <abi.h>
#include <cap.h>
#include <object.h>
#include <arch/memory.h>

/* The kernel address of t's IPC buffer, or NULL if it has none (no frame
 * cap in its buffer slot, or address 0). */
static inline word_t *ipc_buffer_kptr(struct tcb *t)
{
    cap_t c = t->slots[TCB_SLOT_IPC_BUFFER].cap;
    if (cap_type(c) != CAP_FRAME || t->ipc_buffer == 0)
        return NULL;
    word_t size_bits = 12 + 9 * cap_frame_size(c);
    word_t k = (word_t)paddr_to_kptr(cap_obj(c) + (t->ipc_buffer & MASK(size_bits)));
    /* A no-op (TCB_SetIPCBuffer and Configure refuse an address not aligned
     * to 2^IPC_BUFFER_SIZE_BITS, and frames are page-aligned) that shows
     * the WCET analysis the buffer's alignment: its 64-byte lines hold
     * whole runs of eight words (copy_mrs). */
    return (word_t *)(k & ~MASK(IPC_BUFFER_SIZE_BITS));
}

/* Message word i from t's IPC buffer (0 without one). */
word_t get_mr_from_buffer(struct tcb *t, word_t i);

/* Message word i: the first NUM_MSG_REGISTERS travel in a2-a5, the rest in
 * the IPC buffer (0 without one). Inline: decoders read their few register
 * words on every invocation. */
static inline word_t get_mr(struct tcb *t, word_t i)
{
    if (i < NUM_MSG_REGISTERS)
        return t->ctx.x[REG_A2 + i];
    return get_mr_from_buffer(t, i);
}

/* Set message word i of t (dropped if it is a buffer word and t has no
 * buffer). */
void set_mr(struct tcb *t, word_t i, word_t v);

/* Reply to an invocation: label 0 and n return words already set by
 * set_mr (reported as at most the register words without a buffer). */
void reply_success(struct tcb *t, word_t n);

#endif
