/*
 * The protection-domain runtime: what a program named by a system
 * description (docs/system-description.md) links against.
 *
 * A PD is a few functions, as in the seL4 Microkit:
 *   void init(void);                          run once, on the PD's own budget
 *   void notified(kairos_channel ch);         a notification on channel ch (or an irq id)
 *   seL4_MessageInfo_t protected(kairos_channel ch, seL4_MessageInfo_t msg);
 *                                             a ppcall on channel ch; the result is the reply
 * and calls
 *   kairos_notify(ch), kairos_ppcall(ch, msg), kairos_irq_ack(id),
 *   kairos_mr_set(i, w), kairos_mr_get(i), kairos_msginfo_new(label, count).
 * A PD that never gets ppcalls may leave out `protected`; one that never
 * gets notifications may leave out `notified`.
 *
 * The runtime's loop, after init: receive on the PD's input capability;
 * a badge with bit 63 set is a ppcall (bits 0-5 the channel), any other
 * badge a set of notification bits, one per channel or irq id. A passive PD
 * first reports the end of its init to the loader, which then takes its
 * scheduling context away (docs/system-description.md "Passive PDs").
 *
 * Besides these, a PD may make any seL4 call on the capabilities it holds
 * (the CSpace layout below); printf works on debug kernels.
 */
#ifndef KAIROS_PD_H
#define KAIROS_PD_H

#include <stdbool.h>
#include <stdint.h>
#include <sel4/sel4.h>

typedef seL4_Word kairos_channel;

/* ---- a PD's CSpace (a 512-slot CNode, resolved with 64 bits) --------- */
#define KAIROS_PD_INPUT 1          /* endpoint (if the PD can be ppcalled), else its notification */
#define KAIROS_PD_REPLY 2          /* reply object */
#define KAIROS_PD_LOADER 3         /* the loader's endpoint (passive PDs: the init-done report) */
#define KAIROS_PD_NOTIFY_BASE 10   /* + channel id: the peer's notification, badge 1 << peer id */
#define KAIROS_PD_PPCALL_BASE 74   /* + channel id: the peer's endpoint, badge bit 63 | peer id */
#define KAIROS_PD_IRQ_BASE 138     /* + irq id: the IRQ handler */
#define KAIROS_PD_SC_BASE 202      /* + schedcontext id: another PD's scheduling context */
#define KAIROS_PD_CNODE_BITS 9

#define KAIROS_PD_MAX_CHANNEL 62
#define KAIROS_PPCALL_BADGE (1ull << 63)

/* ---- a PD's address space beyond its program image ------------------ */
#define KAIROS_PD_STACK_TOP 0x3fff100000ul   /* the stack grows down from here (stack_size bytes) */
#define KAIROS_PD_IPC_BUFFER 0x3fff101000ul  /* one page */

/* Flags the loader passes in a0 at start. */
#define KAIROS_PD_FLAG_PASSIVE 1ul
#define KAIROS_PD_FLAG_ENDPOINT 2ul

/* The label of a passive PD's end-of-init report to the loader
 * (SPEC_INIT_DONE_LABEL in user/loader/spec.h). */
#define KAIROS_PD_INIT_DONE_LABEL 0x4b44

/* ---- entry points the PD provides ---------------------------------- */
void init(void);
void notified(kairos_channel ch);
seL4_MessageInfo_t protected(kairos_channel ch, seL4_MessageInfo_t msginfo);

/* ---- calls --------------------------------------------------------- */
static inline void kairos_notify(kairos_channel ch)
{
    seL4_Signal(KAIROS_PD_NOTIFY_BASE + ch);
}

static inline seL4_MessageInfo_t kairos_ppcall(kairos_channel ch, seL4_MessageInfo_t msginfo)
{
    return seL4_Call(KAIROS_PD_PPCALL_BASE + ch, msginfo);
}

static inline void kairos_irq_ack(kairos_channel id)
{
    (void)seL4_IRQHandler_Ack(KAIROS_PD_IRQ_BASE + id);
}

static inline seL4_MessageInfo_t kairos_msginfo_new(seL4_Word label, seL4_Word count)
{
    return seL4_MessageInfo_new(label, 0, 0, count);
}

static inline seL4_Word kairos_msginfo_get_label(seL4_MessageInfo_t msginfo)
{
    return seL4_MessageInfo_get_label(msginfo);
}

static inline void kairos_mr_set(seL4_Word i, seL4_Word value)
{
    seL4_SetMR((int)i, value);
}

static inline seL4_Word kairos_mr_get(seL4_Word i)
{
    return seL4_GetMR((int)i);
}

/* The time (µs) consumed by the scheduling context this PD holds a
 * capability to (<schedcontext pd=... id=.../>) since the last call;
 * ~0 on error. */
seL4_Word kairos_sc_consumed(seL4_Word id);

/* This PD's name, from the description. */
const char *kairos_pd_name(void);

#endif
