/* Invocations: a Call, Send or NBSend on an object capability.
 *
 * Every invocation is two steps, as in seL4 (decodeX, then invokeX):
 *  - decode_X validates the whole invocation in seL4's order and fills a
 *    small struct with what the second step needs; it changes no kernel
 *    state (it may only build the error: syscall_error_words);
 *  - perform_X does the work and cannot fail, except where its comment
 *    says it can stop at a preemption point (ERR_PREEMPTED), leaving the
 *    objects consistent for the restarted call.
 * The entry point of each object type, invoke_X, runs the two in order: a
 * bad invocation is harmless by construction. tests/test_decode_pure.py
 * calls the decoders on random invocations and checks that kernel memory
 * is unchanged afterwards. */
#ifndef KAIROS_INVOCATION_H
#define KAIROS_INVOCATION_H

#include <abi.h>
#include <cspace.h>
#include <message.h>
#include <object.h>

/* Invocation labels: seL4 MCS riscv64 numbering (libsel4's generated
 * invocation enum for an MCS, non-SMP riscv64 build). */
enum invocation_label {
    INV_UNTYPED_RETYPE = 1,
    INV_TCB_READ_REGISTERS = 2,
    INV_TCB_WRITE_REGISTERS = 3,
    INV_TCB_COPY_REGISTERS = 4,
    INV_TCB_CONFIGURE = 5,
    INV_TCB_SET_PRIORITY = 6,
    INV_TCB_SET_MC_PRIORITY = 7,
    INV_TCB_SET_SCHED_PARAMS = 8,
    INV_TCB_SET_TIMEOUT_ENDPOINT = 9,
    INV_TCB_SET_IPC_BUFFER = 10,
    INV_TCB_SET_SPACE = 11,
    INV_TCB_SUSPEND = 12,
    INV_TCB_RESUME = 13,
    INV_TCB_BIND_NOTIFICATION = 14,
    INV_TCB_UNBIND_NOTIFICATION = 15,
    INV_TCB_SET_TLS_BASE = 16,
    INV_TCB_SET_FLAGS = 17,
    INV_CNODE_REVOKE = 18,
    INV_CNODE_DELETE = 19,
    INV_CNODE_CANCEL_BADGED_SENDS = 20,
    INV_CNODE_COPY = 21,
    INV_CNODE_MINT = 22,
    INV_CNODE_MOVE = 23,
    INV_CNODE_MUTATE = 24,
    INV_CNODE_ROTATE = 25,
    INV_IRQ_ISSUE_IRQ_HANDLER = 26,
    INV_IRQ_ACK = 27,
    INV_IRQ_SET_HANDLER = 28,
    INV_IRQ_CLEAR_HANDLER = 29,
    INV_DOMAIN_SET = 30,
    INV_SCHED_CONTROL_CONFIGURE_FLAGS = 31,
    INV_SCHED_CONTEXT_BIND = 32,
    INV_SCHED_CONTEXT_UNBIND = 33,
    INV_SCHED_CONTEXT_UNBIND_OBJECT = 34,
    INV_SCHED_CONTEXT_CONSUMED = 35,
    INV_SCHED_CONTEXT_YIELD_TO = 36,
    INV_PAGE_TABLE_MAP = 37,
    INV_PAGE_TABLE_UNMAP = 38,
    INV_PAGE_MAP = 39,
    INV_PAGE_UNMAP = 40,
    INV_PAGE_GET_ADDRESS = 41,
    INV_ASID_CONTROL_MAKE_POOL = 42,
    INV_ASID_POOL_ASSIGN = 43,
    INV_IRQ_ISSUE_IRQ_HANDLER_TRIGGER = 44,
};

struct invocation {
    struct tcb *caller;
    word_t label;
    word_t length;      /* message words available */
    cte_t *slot;        /* slot of the invoked cap */
    cap_t cap;
    bool call;          /* a reply is expected */
    word_t n_extra;     /* extra caps looked up (extraCaps of the message info) */
    cte_t *extra_slot[MSG_MAX_EXTRA_CAPS];
    cap_t extra[MSG_MAX_EXTRA_CAPS]; /* null cap if the slot is empty */
    word_t n_reply;     /* perform steps that return words set them with set_mr and count them here */
};

/* The outcome of decoding: ERR_NONE, or an error. The error's message
 * words and how many there are sit in syscall_error_words and
 * syscall_error_length (as seL4 keeps them in current_syscall_error): the
 * outcome itself is one register, so success costs nothing to return. Only
 * the error constructors below write them, and an error is replied before
 * the next system call can build another. */
struct syscall_error {
    word_t code; /* enum error_code, in a whole register */
};

#define SYSCALL_ERROR_MAX_WORDS 5
extern word_t syscall_error_words[SYSCALL_ERROR_MAX_WORDS];
extern word_t syscall_error_length;

/* Internal status, never seen by user code: a long operation stopped at a
 * preemption point with an interrupt pending. The system call is restarted
 * (the thread re-executes its ecall) once the interrupt has been handled; the
 * object records how far it got, so no work is repeated. */
#define ERR_PREEMPTED ((enum error_code)100)

static inline struct syscall_error no_error(void) { struct syscall_error e = {ERR_NONE}; return e; }
static inline struct syscall_error error0(enum error_code c)
{
    syscall_error_length = 0;
    struct syscall_error e = {c};
    return e;
}
static inline struct syscall_error error1(enum error_code c, word_t a)
{
    syscall_error_words[0] = a;
    syscall_error_length = 1;
    struct syscall_error e = {c};
    return e;
}
static inline struct syscall_error range_error(word_t min, word_t max)
{
    syscall_error_words[0] = min;
    syscall_error_words[1] = max;
    syscall_error_length = 2;
    struct syscall_error e = {ERR_RANGE_ERROR};
    return e;
}

/* Reply to an invocation with error e: its words (syscall_error_words)
 * become the message words (message.c). */
void reply_error(struct tcb *t, struct syscall_error e);

static inline struct syscall_error preempted(void) { struct syscall_error e = {ERR_PREEMPTED}; return e; }

/* The invocations of each object type (kernel/object/): decode, then
 * perform. Each validates in seL4's order (seL4's decode functions for the
 * object, src/object/ and src/arch/riscv/object/), before changing
 * anything. */
struct syscall_error invoke_cnode(struct invocation *inv);
struct syscall_error invoke_untyped(struct invocation *inv);
struct syscall_error invoke_tcb(struct invocation *inv);
struct syscall_error invoke_sched_control(struct invocation *inv);
struct syscall_error invoke_sched_context(struct invocation *inv);
struct syscall_error invoke_domain(struct invocation *inv);
struct syscall_error invoke_irq_control(struct invocation *inv);
struct syscall_error invoke_irq_handler(struct invocation *inv);

/* Report a lookup failure as seL4's FailedLookup error (MR0 = source flag). */
struct syscall_error failed_lookup_error(bool source, const struct lookup_failure *f);

/* Frames, page tables, ASID control and ASID pools: arch_invoke_invocation. */
#include <arch/invocation.h>

#endif
