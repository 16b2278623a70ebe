/* Kernel object layouts shared by the generic kernel. Sizes are fixed by the
 * ABI (abi.h); each layout is checked against its object size. */
#ifndef KAIROS_OBJECT_H
#define KAIROS_OBJECT_H

#include <abi.h>
#include <arch/context.h>
#include <cap.h>
#include <config.h>
#include <queue.h>
#include <types.h>

/* Derivation-tree links, as in seL4: slots form one doubly linked list in
 * depth-first order of derivation; a slot's children follow it and are
 * recognised by the revocable / first-badged flags and the objects they name. */
typedef struct mdb {
    word_t prev; /* kernel address of the previous slot, or 0 */
    word_t next; /* kernel address of the next slot | MDB_REVOCABLE | MDB_FIRST_BADGED */
} mdb_t;
#define MDB_REVOCABLE 1ul
#define MDB_FIRST_BADGED 2ul
#define MDB_FLAGS 3ul

/* Every slot is 32-byte aligned: CNodes and TCBs are naturally aligned
 * objects, and the type's alignment places the kernel's own slots (the TCB's
 * array, irq_slot) so too.  A slot then never straddles a cache line, which
 * the WCET analysis relies on (wcet-annotations.toml, the mdb [[pointer]]
 * facts). */
typedef struct __attribute__((aligned(1u << SLOT_BITS))) cte {
    cap_t cap;
    mdb_t mdb;
} cte_t;
_Static_assert(sizeof(cte_t) == (1u << SLOT_BITS), "a slot is 32 bytes");

/* The link word's two halves, for the derivation tree's proofs (make prove,
 * set `cdt`; docs/proofs.md "Capability derivation tree"). WP's typed memory
 * model has no integer view of a pointer, so it cannot see that masking the
 * flag bits off a slot's address gives the slot back: link_slot(w) is the
 * slot a word names, left abstract, and the contracts of mdb_slot,
 * mdb_link and mdb_add_flags below are taken as given (they hold because
 * every slot is 32-byte aligned, so a slot's address has its two low bits
 * clear). */
/*@ axiomatic mdb_link_word {
      logic struct cte *link_slot(word_t w);
    } */

/* The slot a link word names (the flags masked off). */
/*@ assigns \nothing;
    ensures \result == link_slot(w); */
static inline struct cte *mdb_slot(word_t w) { return (struct cte *)(w & ~MDB_FLAGS); }

/* The link word naming slot p with the given flags. */
/*@ requires flags <= MDB_FLAGS;
    assigns \nothing;
    ensures link_slot(\result) == p && (\result & MDB_FLAGS) == flags; */
static inline word_t mdb_link(const struct cte *p, word_t flags) { return (word_t)p | flags; }

/* The link word w with the flags f set as well (the same slot). */
/*@ requires f <= MDB_FLAGS;
    assigns \nothing;
    ensures link_slot(\result) == link_slot(w) && (\result & MDB_FLAGS) == ((w & MDB_FLAGS) | f); */
static inline word_t mdb_add_flags(word_t w, word_t f) { return w | f; }

/*@ requires \valid_read(s);
    assigns \nothing;
    ensures \result == link_slot(s->mdb.next); */
static inline struct cte *mdb_next(const cte_t *s) { return mdb_slot(s->mdb.next); }
static inline struct cte *mdb_prev(const cte_t *s) { return (struct cte *)s->mdb.prev; }

enum thread_state {
    THREAD_INACTIVE = 0,
    THREAD_RUNNING,
    THREAD_RESTART,
    THREAD_BLOCKED_ON_RECEIVE,
    THREAD_BLOCKED_ON_SEND,
    THREAD_BLOCKED_ON_REPLY,
    THREAD_BLOCKED_ON_NOTIFICATION,
    THREAD_IDLE,
};

/* Slots inside a TCB that hold the caps it was configured with. */
enum tcb_slot {
    TCB_SLOT_CSPACE = 0,
    TCB_SLOT_VSPACE,
    TCB_SLOT_IPC_BUFFER,
    TCB_SLOT_FAULT_HANDLER,
    TCB_SLOT_TIMEOUT_HANDLER,
    TCB_NUM_SLOTS,
};

struct sched_context;
struct notification;
struct reply;

/* A fault a thread raised, kept in its TCB while the fault message is on its
 * way to the handler and until the handler replies (fault.c). */
struct fault {
    enum fault_label type; /* FAULT_NULL: no fault pending */
    word_t ip;        /* faulting pc (the ecall for syscall faults) */
    word_t addr;      /* VMFault: stval; CapFault: the cptr */
    word_t prefetch;  /* VMFault: 1 for instruction fetches */
    word_t fsr;       /* VMFault: 5 load, 7 store/AMO, 1 fetch */
    word_t number;    /* UserException: scause; UnknownSyscall: syscall number */
    word_t in_recv_phase; /* CapFault */
};

/* What a thread blocked in IPC is doing (endpoint.c), kept in its TCB. */
#define IPC_IS_CALL 1u          /* blocked on send: a Call (or a fault message) */
#define IPC_CAN_GRANT 2u        /* the endpoint cap it sent on had Grant */
#define IPC_CAN_GRANT_REPLY 4u  /* ... GrantReply */

struct tcb {
    struct user_context ctx;
    cte_t slots[TCB_NUM_SLOTS];
    /* One cache line (asserted below; TCB objects are naturally aligned)
     * for what the scheduler and the wait queues read of a thread they only
     * pass, and what an unlink writes:
     * a walk of a wait queue (tqueue_insert: priority and queue_prev;
     * sender_with_badge: ipc_badge and queue_next) touches one line per
     * thread, and so does a ready-queue removal on each of the three
     * threads it touches (docs/wcet.md, per-line cache charges). */
    enum thread_state state;
    u32 priority;
    struct tcb *queue_next;
    struct tcb *queue_prev;
    word_t ipc_badge;
    struct tcb *ready_next; /* ready queue of its priority */
    struct tcb *ready_prev;
    struct sched_context *sc;
    bool in_ready_queue;
    bool in_release_queue; /* queued in its SC's release-heap slot (release.h) */
    /* Queued in a slot whose key comes before its own (release.h
     * "deferred"): its own key is release_time, release_seq below. */
    bool release_deferred;
    /* The send phase of its ReplyRecv, NBSendRecv or NBSendWait is done and
     * the poll between the phases was taken (syscall.c): re-executing that
     * ecall does only the receive. Cleared when it does, and wherever the
     * thread's registers or restart point are changed from outside. */
    bool send_done;
    /* While blocked on a notification (or, with IPC, an endpoint): the
     * object whose wait queue it is in (queue.h; the links above). */
    void *blocking_object;
    /* IPC (endpoint.c, reply.c): blocked on send, the badge of the cap
     * (above) and IPC_* flags; blocked on receive, the reply object given
     * to the receive (or NULL); blocked on reply, the reply object it
     * waits on. */
    u32 ipc_flags;
    struct reply *reply;
    u32 mcp;
    u32 domain;
    word_t flags;          /* seL4_TCBFlag bits: bit 0 = FPU disabled */
    vaddr_t ipc_buffer;    /* user address of the IPC buffer, 0 if none */
    struct notification *bound_notification; /* TCB_BindNotification, or NULL */
    struct fault fault; /* pending fault message (FAULT_NULL: none) */
    /* SchedContext_YieldTo that made another thread run first (seL4's
     * tcbYieldTo): the context yielded to, whose consumed time this thread
     * is told when it next runs; NULL otherwise. */
    struct sched_context *yield_to;
    /* An Untyped_Retype of this thread stopped at a preemption point
     * (untyped.c): its first `checked` destination slots were found empty,
     * and `done` objects were made, the first at `first`. The restarted call
     * goes on from there if it is the same call and, once objects exist,
     * the untyped's watermark is still right after them. */
    struct {
        const cte_t *untyped; /* NULL: nothing to go on with */
        const cte_t *dest;
        word_t type, user_size_bits, count, checked, done;
        paddr_t first;
    } retype;
    /* While release_deferred: the key it was queued with (release.h). */
    u64 release_time, release_seq;
#if CONFIG_DEBUG_BUILD
    struct tcb *debug_next; /* every TCB, for DebugDumpScheduler */
    struct tcb *debug_prev;
    char name[CONFIG_TCB_NAME_LENGTH];
#endif
};
_Static_assert(sizeof(struct tcb) <= (1u << TCB_BITS), "TCB fits its object");
/* 64: the U54's L1 data-cache line (docs/processor-model.md). */
_Static_assert(__builtin_offsetof(struct tcb, state) % 64 == 0 &&
                   __builtin_offsetof(struct tcb, release_deferred) < __builtin_offsetof(struct tcb, state) + 64,
               "the TCB's scheduling fields share one cache line");

#define TCB_FLAG_FPU_DISABLED 1ul

/* Scheduling context header. A 2^7-byte context must hold two 16-byte refills,
 * so the header is at most 96 bytes (seL4's, whose size the ConfigureFlags
 * RangeError reveals: refill.h refill_capacity); the refill ring follows it. */
#define SC_HEADER_BYTES 96ul
struct refill {
    u64 release_time; /* timer ticks */
    u64 amount;       /* timer ticks */
};
struct sched_context {
    u64 period;        /* ticks; 0 = round robin */
    u64 budget;        /* ticks; 0 = never configured (grants no time) */
    u64 consumed;      /* ticks since the last Consumed/timeout */
    word_t badge;
    struct tcb *tcb;   /* bound thread */
    struct notification *notification; /* bound notification (SchedContext_Bind) */
    void *reply;       /* head of the call stack (the IPC work's reply objects) */
    struct tcb *yield_from; /* thread that did YieldTo to this context */
    u32 refill_max;    /* ring size: configured (refill_new), at most
                        * refill_max_for_size(size_bits) <= CONFIG_MAX_REFILLS */
    u32 refill_head;   /* ring index of the head refill */
    u32 refill_count;  /* refills in use (0 until configured) */
    u32 size_bits;
    u32 release_pos;   /* 1 + index of its slot in the release heap, else 0 (release.h) */
    bool sporadic;     /* ConfigureFlags flag bit 0 */
};
_Static_assert(sizeof(struct sched_context) <= SC_HEADER_BYTES, "SC header at most 96 bytes");
#ifndef __FRAMAC__
static inline struct refill *sc_refills(struct sched_context *sc)
{
    return (struct refill *)((u8 *)sc + SC_HEADER_BYTES);
}
#else
/* For the proofs (docs/proofs.md "Memory model"): WP's typed memory model
 * cannot follow the cast above, so the ring is a logic function of the
 * context, an array of refills separate from the header; that the object
 * really holds it is the _Static_assert and refill_capacity above. */
/*@ axiomatic SCRefills {
      logic struct refill *Refills(struct sched_context *sc);
    } */
/*@ assigns \nothing;
    ensures \result == Refills(sc); */
struct refill *sc_refills(struct sched_context *sc);
#endif

/* Notification object (2^6 bytes; kernel/object/notification.c). Idle:
 * nothing pending, nobody waiting. Waiting: threads queued, word unused.
 * Active: signals arrived and nobody waited; `word` is the OR of their
 * badges (possibly 0: a signal with badge 0 still makes it active). */
enum notification_state {
    NTFN_IDLE = 0, /* zeroed memory is a fresh notification */
    NTFN_WAITING,
    NTFN_ACTIVE,
};
struct notification {
    struct thread_queue queue; /* waiting threads, by priority */
    word_t state;              /* enum notification_state */
    word_t word;               /* accumulated badges while active */
    struct tcb *bound_tcb;     /* TCB_BindNotification */
    struct sched_context *sc;  /* SchedContext_Bind: lent to a passive bound waiter */
};
_Static_assert(sizeof(struct notification) <= (1u << NOTIFICATION_BITS), "notification fits its object");

/* Endpoint (2^4 bytes; kernel/object/endpoint.c): one queue of threads,
 * all senders or all receivers (the head's state says which); empty = idle. */
struct endpoint {
    struct thread_queue queue;
};
_Static_assert(sizeof(struct endpoint) <= (1u << ENDPOINT_BITS), "endpoint fits its object");

/* Reply object (2^5 bytes; kernel/object/reply.c). While a caller waits on
 * it, `tcb` is the caller; while a receiver holds it in a blocked receive,
 * `tcb` is the receiver. The call stack of a scheduling context: the SC
 * points at the newest reply whose caller donated it (sc->reply); each reply
 * links to the one pushed before it (prev) and the one pushed after it
 * (next); the newest has next == NULL and head_sc == the SC. */
struct reply {
    struct tcb *tcb;
    struct reply *prev;
    struct reply *next;
    struct sched_context *head_sc;
};
_Static_assert(sizeof(struct reply) <= (1u << REPLY_BITS), "reply fits its object");

#endif
