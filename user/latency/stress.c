/*
 * latency stress: drives the kernel into its longest non-preemptible regions
 * (docs/wcet.md, "Interrupt latency"), so that `kairos latency --observe`
 * can replay what the kernel really did in each region and compare it with
 * the region's static bound.
 *
 * A plain seL4-ABI root task for the release kernel (like user/bench: seL4
 * API only, output on the QEMU virt NS16550 mapped from its device
 * untyped). Each scenario prints `latency-stress: NAME ok`; the run ends
 * with `latency-stress: done`, a setup error with `latency-stress: FAIL`.
 *
 * Scenarios, each with the kernel's system parameters in mind:
 *   ep_queue_delete   NT threads wait on one endpoint; deleting its last cap
 *                     restarts them one per preemption point
 *   ntfn_queue_delete the same on a notification
 *   revoke            NT derived caps revoked, one delete per preemption point
 *   release_queue     NT threads on short sporadic budgets, throttled and
 *                     released by the timer (release queue, wake-ups)
 *   refill_ring       one thread blocking part way through its budget many
 *                     times, filling its SC's refill ring
 *   long_messages     Call/ReplyRecv with the longest message (120 words)
 *   short_calls       Call/ReplyRecv of 4 words, the fastpaths' size (the
 *                     region from the kernel entry to fastpath_reply_recv
 *                     has the largest bound; longer messages go to the
 *                     slow path from the trap vector)
 *   deep_cspace       a thread whose CSpace is a chain of DEPTH CNodes
 *                     invokes a cap at the bottom
 *   cap_transfer      Call and ReplyRecv with 120 words and extra caps: one
 *                     transferred into the receiver's slot, the others
 *                     endpoint caps whose badges are unwrapped
 *   irq_wakeup        the UART's transmitter-empty interrupt signals the
 *                     notification bound to a thread of the highest
 *                     priority blocked on an endpoint, its SC's refill
 *                     ring fragmented:
 *                     the interrupt entry wakes it (refill check), preempts
 *                     the root, switches SCs and reprograms the timer
 *   tcb_configure     TCB_Configure with every cap, each time replacing an
 *                     IPC-buffer frame cap that is the last of its frame
 *   sc_delete         NT_SC threads on sporadic SCs throttled at once; the
 *                     last cap of each SC is deleted while its entry is in
 *                     the release heap (finalisation: unbind, the entry
 *                     taken out of the heap and the hole sifted)
 *   sched_params      TCB_SetSchedParams replacing a fault endpoint cap that
 *                     is the last cap of an endpoint with NT_FAULT waiters
 *                     (finalised, one waiter per preemption point), then
 *                     in the region after the last poll: the new fault
 *                     endpoint's cap inserted, the priority set and an SC
 *                     with a fragmented refill ring bound to the runnable
 *                     thread (the worst path of the region after
 *                     endpoint_finalise's poll as the analysis lists it)
 *   long_queue        NT_ALL threads wait on one endpoint; each in turn is
 *                     raised above all the others, so that its re-insertion
 *                     walks the whole wait queue from its tail (queue.c)
 *
 * Placement (docs/wcet.md "Checked against reality"): the WCET bound
 * assumes that any two objects at unknown addresses may share L1 sets (the
 * U54's L1s replace randomly, so the analysis keeps one sure way of 4 KiB:
 * docs/processor-model.md §3). A user decides where its objects lie by how
 * it retypes them, so this task places them as an adversary would: every
 * object smaller than a page is retyped into a 4 KiB untyped of its own and
 * so starts at a page boundary; TCBs, SCs, endpoints, notifications, reply
 * objects and IPC buffers then all begin in L1 set 0, and the same field of
 * any two of them is in the same set.
 */
#include <sel4/sel4.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROOT seL4_CapInitThreadCNode
#define SELF seL4_CapInitThreadTCB
#define PRIO_ROOT_HIGH 254
#define PRIO_ROOT_LOW 10
#define PRIO_WORKER 100
#define LONG_US 5000000ul

#define NT 16            /* worker threads of most scenarios: queue and release-queue length */
#define NT_ALL 40        /* worker threads in all (long_queue): with the root 41 of CONFIG_MAX_THREADS = 64 TCBs */
#define PAGE_BITS 12     /* an L1 way of the U54: 4 KiB, 64 sets of 64-byte lines */
#define STACK_WORDS 512
#define DEPTH 4          /* CNode levels of the deep CSpace (8 bits each): the kernel allows CONFIG_MAX_CSPACE_DEPTH = 4 */
#define MSG_WORDS 120    /* seL4_MsgMaxLength */
#define CALLS 8

#define UART_PADDR 0x10000000ul /* QEMU virt */
#define UART_IRQ 10             /* QEMU virt: the NS16550's PLIC source */
#define UART_IER_THRI 0x02      /* interrupt while the transmitter holding register is empty */
#define IRQS 8
#define UART_VA 0x40000000ul
#define IPCBUF_VA 0x40100000ul
#define IPCBUF2_VA 0x40200000ul /* tcb_configure's buffer address (never used: the thread does not run) */
#define CONFIGURES 4
#define NT_SC 8
#define NT_FAULT 8

static seL4_BootInfo *bi;
static seL4_CPtr next_slot, slot_end, ram_untyped, sched_control;
static volatile uint8_t *uart;

/* ---- output ---------------------------------------------------------- */

static void out_char(char c)
{
    if (!uart)
        return;
    while (!(uart[5] & 0x20)) /* LSR.THRE */
        ;
    uart[0] = (uint8_t)c;
}

static void out_str(const char *s)
{
    for (; *s; s++) {
        if (*s == '\n')
            out_char('\r');
        out_char(*s);
    }
}

static void out_u64(uint64_t v)
{
    char buf[24];
    int n = 0;
    do {
        buf[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        out_char(buf[--n]);
}

static void __attribute__((noreturn)) stop(void)
{
    seL4_TCB_Suspend(SELF);
    for (;;)
        seL4_Yield();
}

static void fail(const char *what, seL4_Word code)
{
    out_str("latency-stress: FAIL ");
    out_str(what);
    out_str(" (");
    out_u64(code);
    out_str(")\n");
    stop();
}

static void check(seL4_Error e, const char *what)
{
    if (e != seL4_NoError)
        fail(what, (seL4_Word)e);
}

static void done(const char *name)
{
    out_str("latency-stress: ");
    out_str(name);
    out_str(" ok\n");
}

/* ---- objects ---------------------------------------------------------- */

static seL4_CPtr alloc_slot(void)
{
    if (next_slot >= slot_end)
        fail("out of CNode slots", next_slot);
    return next_slot++;
}

static seL4_CPtr make_from(seL4_CPtr untyped, seL4_Word type, seL4_Word size_bits)
{
    seL4_CPtr s = alloc_slot();
    check(seL4_Untyped_Retype(untyped, type, size_bits, ROOT, 0, 0, s, 1), "Untyped_Retype");
    return s;
}

/* Page-sized untypeds made ahead, PAGE_BATCH at a time (one Retype each
 * batch: fewer kernel runs for the single-stepping capture). */
#define PAGE_BATCH 32
static seL4_CPtr page_ut_next, page_ut_end;

static seL4_CPtr page_untyped(void)
{
    if (page_ut_next == page_ut_end) {
        if (slot_end - next_slot < PAGE_BATCH)
            fail("out of CNode slots", next_slot);
        check(seL4_Untyped_Retype(ram_untyped, seL4_UntypedObject, PAGE_BITS, ROOT, 0, 0, next_slot, PAGE_BATCH),
              "Untyped_Retype (pages)");
        page_ut_next = next_slot;
        next_slot += PAGE_BATCH;
        page_ut_end = next_slot;
    }
    return page_ut_next++;
}

/* The object's size in bytes as a power of two: the types this task makes. */
static seL4_Word object_bits(seL4_Word type, seL4_Word size_bits)
{
    switch (type) {
    case seL4_TCBObject:
        return seL4_TCBBits;
    case seL4_EndpointObject:
        return seL4_EndpointBits;
    case seL4_NotificationObject:
        return seL4_NotificationBits;
    case seL4_ReplyObject:
        return seL4_ReplyBits;
    case seL4_SchedContextObject:
        return size_bits;
    case seL4_CapTableObject:
        return size_bits + seL4_SlotBits;
    default:
        return PAGE_BITS; /* pages, page tables: page-aligned anyway */
    }
}

/* Every object below a page at a page boundary (the placement above). */
static seL4_CPtr make(seL4_Word type, seL4_Word size_bits)
{
    if (object_bits(type, size_bits) < PAGE_BITS)
        return make_from(page_untyped(), type, size_bits);
    return make_from(ram_untyped, type, size_bits);
}

static void find_ram_untyped(void)
{
    seL4_Word best = ~0ul, n = bi->untyped.end - bi->untyped.start;
    for (seL4_Word i = 0; i < n; i++)
        if (!bi->untypedList[i].isDevice && (best == ~0ul || bi->untypedList[i].sizeBits > bi->untypedList[best].sizeBits))
            best = i;
    if (best == ~0ul || bi->untypedList[best].sizeBits < 22)
        stop();
    ram_untyped = bi->untyped.start + best;
}

static void map_frame(seL4_CPtr frame, seL4_Word va)
{
    for (int level = 0; level < 4; level++) {
        seL4_Error e = seL4_RISCV_Page_Map(frame, seL4_CapInitThreadVSpace, va, seL4_ReadWrite,
                                           seL4_RISCV_Default_VMAttributes);
        if (e == seL4_NoError)
            return;
        if (e != seL4_FailedLookup)
            fail("Page_Map", (seL4_Word)e);
        seL4_CPtr pt = make(seL4_RISCV_PageTableObject, 0);
        check(seL4_RISCV_PageTable_Map(pt, seL4_CapInitThreadVSpace, va, seL4_RISCV_Default_VMAttributes),
              "PageTable_Map");
    }
    fail("Page_Map: no page table", va);
}

/* The UART page from the device untyped that covers it: the pages before it
 * go first, as untyped children (untypeds are carved from the bottom). */
static void map_uart(void)
{
    seL4_Word n = bi->untyped.end - bi->untyped.start;
    for (seL4_Word i = 0; i < n; i++) {
        const seL4_UntypedDesc *u = &bi->untypedList[i];
        if (!u->isDevice || UART_PADDR < u->paddr || UART_PADDR - u->paddr >= (1ul << u->sizeBits))
            continue;
        seL4_CPtr ut = bi->untyped.start + i;
        seL4_Word offset = UART_PADDR - u->paddr;
        for (int b = u->sizeBits - 1; b >= seL4_PageBits; b--)
            if (offset & (1ul << b))
                make_from(ut, seL4_UntypedObject, (seL4_Word)b);
        map_frame(make_from(ut, seL4_RISCV_4K_Page, 0), UART_VA);
        uart = (volatile uint8_t *)UART_VA;
        uart[1] = 0; /* no UART interrupts */
        return;
    }
    stop(); /* nowhere to print: the host sees no verdict and fails */
}

/* ---- threads ----------------------------------------------------------- */

typedef void (*thread_fn)(seL4_Word, seL4_Word, seL4_Word);

static seL4_Word stacks[NT_ALL][STACK_WORDS] __attribute__((aligned(16)));
static seL4_CPtr worker_tcb[NT_ALL], worker_sc[NT_ALL];

static seL4_Word reg(int which)
{
    seL4_Word v;
    if (which == 3)
        __asm__ volatile("mv %0, gp" : "=r"(v));
    else
        __asm__ volatile("mv %0, tp" : "=r"(v));
    return v;
}

static void configure_sc(seL4_CPtr sc, seL4_Word budget, seL4_Word period, seL4_Word extra)
{
    check(seL4_SchedControl_ConfigureFlags(sched_control, sc, budget, period, extra, 0, 0), "SchedControl_Configure");
}

/* Worker i: its registers set and resumed; it runs once the root lowers its priority. */
static void start(int i, thread_fn fn, seL4_Word a0, seL4_Word a1)
{
    seL4_UserContext r = {0};
    r.pc = (seL4_Word)fn;
    r.sp = (seL4_Word)&stacks[i][STACK_WORDS];
    r.gp = reg(3);
    r.tp = reg(4);
    r.a0 = a0;
    r.a1 = a1;
    r.a2 = (seL4_Word)i;
    check(seL4_TCB_WriteRegisters(worker_tcb[i], 1, 0, sizeof(r) / sizeof(seL4_Word), &r), "TCB_WriteRegisters");
}

/* Let the workers run until they have all blocked (or are throttled). */
static void let_run(void)
{
    check(seL4_TCB_SetPriority(SELF, SELF, PRIO_ROOT_LOW), "TCB_SetPriority (low)");
    check(seL4_TCB_SetPriority(SELF, SELF, PRIO_ROOT_HIGH), "TCB_SetPriority (high)");
}

static void stop_workers(int n)
{
    for (int i = 0; i < n; i++)
        check(seL4_TCB_Suspend(worker_tcb[i]), "TCB_Suspend");
}

static void spin(seL4_Word n)
{
    for (volatile seL4_Word k = 0; k < n; k++)
        ;
}

static void wait_fn(seL4_Word obj, seL4_Word a1, seL4_Word a2)
{
    (void)a1;
    (void)a2;
    for (;;)
        seL4_Wait(obj, NULL);
}

static void spin_fn(seL4_Word a0, seL4_Word a1, seL4_Word a2)
{
    (void)a0;
    (void)a1;
    (void)a2;
    for (;;)
        ;
}

/* Runs part of its budget, then blocks until signalled, over and over. */
static void fragment_fn(seL4_Word ntfn, seL4_Word a1, seL4_Word a2)
{
    (void)a1;
    (void)a2;
    for (;;) {
        spin(2000);
        seL4_Wait(ntfn, NULL);
    }
}

static seL4_CPtr reply_obj;

static void server_fn(seL4_Word ep, seL4_Word a1, seL4_Word a2)
{
    (void)a1;
    (void)a2;
    seL4_Word badge;
    seL4_Recv(ep, &badge, reply_obj);
    for (;;) {
        for (int k = 0; k < MSG_WORDS; k++)
            seL4_SetMR(k, (seL4_Word)k);
        seL4_ReplyRecv(ep, seL4_MessageInfo_new(0, 0, 0, MSG_WORDS), &badge, reply_obj);
    }
}

/* cap_transfer: the server receives 120 words and three caps (the first
 * into RECV_SERVER, the two endpoint caps unwrapped to their badges),
 * empties its receive slot and answers with 120 words and a cap, which the
 * kernel copies into the caller's RECV_CALLER. */
static seL4_CPtr recv_server, recv_caller, xfer_ntfn;
static volatile seL4_Word xfer_bad; /* calls the server saw without 3 caps, 2 unwrapped to badges 1, 2 */

static void xfer_server_fn(seL4_Word ep, seL4_Word a1, seL4_Word a2)
{
    (void)a1;
    (void)a2;
    /* Its own IPC buffer, written directly: the workers share the root's
     * thread pointer, so seL4_SetCap and friends would write the root's. */
    seL4_IPCBuffer *b = (seL4_IPCBuffer *)IPCBUF_VA;
    seL4_Word badge;
    b->receiveCNode = ROOT;
    b->receiveIndex = recv_server;
    b->receiveDepth = seL4_WordBits;
    seL4_MessageInfo_t info = seL4_Recv(ep, &badge, reply_obj);
    for (;;) {
        if (seL4_MessageInfo_get_extraCaps(info) != 3 || seL4_MessageInfo_get_capsUnwrapped(info) != 6 ||
            b->caps_or_badges[1] != 1 || b->caps_or_badges[2] != 2)
            xfer_bad++;
        seL4_CNode_Delete(ROOT, recv_server, seL4_WordBits);
        for (int k = 0; k < MSG_WORDS; k++)
            b->msg[k] = (seL4_Word)k;
        b->caps_or_badges[0] = xfer_ntfn;
        b->receiveCNode = ROOT;
        b->receiveIndex = recv_server;
        b->receiveDepth = seL4_WordBits;
        info = seL4_ReplyRecv(ep, seL4_MessageInfo_new(0, 0, 1, MSG_WORDS), &badge, reply_obj);
    }
}

/* Signals the notification at cptr 0 of its deep CSpace CALLS times, then
 * waits on the endpoint at cptr 1 (for ever: the root suspends it). */
static void deep_fn(seL4_Word a0, seL4_Word a1, seL4_Word a2)
{
    (void)a0;
    (void)a1;
    (void)a2;
    for (int k = 0; k < CALLS; k++)
        seL4_Signal(0);
    for (;;)
        seL4_Wait(1, NULL);
}

/* ---- scenarios ----------------------------------------------------------- */

static void queue_delete(seL4_Word type, const char *name)
{
    seL4_CPtr obj = make(type, 0);
    for (int i = 0; i < NT; i++)
        start(i, wait_fn, obj, 0);
    let_run(); /* all NT now wait on obj */
    check(seL4_CNode_Delete(ROOT, obj, seL4_WordBits), "CNode_Delete");
    stop_workers(NT); /* restarted, not yet run: the root is above them */
    done(name);
}

static void revoke(void)
{
    seL4_CPtr ep = make(seL4_EndpointObject, 0);
    for (int i = 0; i < NT; i++)
        check(seL4_CNode_Mint(ROOT, alloc_slot(), seL4_WordBits, ROOT, ep, seL4_WordBits, seL4_AllRights,
                              (seL4_Word)i + 1), "CNode_Mint");
    check(seL4_CNode_Revoke(ROOT, ep, seL4_WordBits), "CNode_Revoke");
    check(seL4_CNode_Delete(ROOT, ep, seL4_WordBits), "CNode_Delete");
    done("revoke");
}

static void release_queue(void)
{
    for (int i = 0; i < NT; i++) {
        configure_sc(worker_sc[i], 100, 10000, 0); /* 0.1 ms every 10 ms: NT of them fit */
        start(i, spin_fn, 0, 0);
    }
    /* The root runs only while every worker is throttled; each pass of this
     * loop lasts several periods of virtual time. */
    check(seL4_TCB_SetPriority(SELF, SELF, PRIO_ROOT_LOW), "TCB_SetPriority (low)");
    spin(4000000);
    check(seL4_TCB_SetPriority(SELF, SELF, PRIO_ROOT_HIGH), "TCB_SetPriority (high)");
    stop_workers(NT);
    done("release_queue");
}

static void refill_ring(void)
{
    seL4_CPtr ntfn = make(seL4_NotificationObject, 0);
    /* As many refills as the SC object holds: try from 64 down. */
    seL4_Word extra = 64;
    while (seL4_SchedControl_ConfigureFlags(sched_control, worker_sc[0], 1000, 20000, extra, 0, 0) != seL4_NoError)
        if (extra-- == 0)
            fail("SchedControl_Configure (refills)", 0);
    start(0, fragment_fn, ntfn, 0);
    check(seL4_TCB_SetPriority(SELF, SELF, PRIO_ROOT_LOW), "TCB_SetPriority (low)");
    for (int k = 0; k < 4 * (int)extra + 8; k++)
        seL4_Signal(ntfn);
    check(seL4_TCB_SetPriority(SELF, SELF, PRIO_ROOT_HIGH), "TCB_SetPriority (high)");
    stop_workers(1);
    out_str("latency-stress: refill_ring extra_refills ");
    out_u64(extra);
    out_str("\n");
    done("refill_ring");
}

static void long_messages(void)
{
    seL4_CPtr ep = make(seL4_EndpointObject, 0);
    reply_obj = make(seL4_ReplyObject, 0);
    seL4_CPtr buf = make(seL4_RISCV_4K_Page, 0);
    map_frame(buf, IPCBUF_VA);
    configure_sc(worker_sc[0], LONG_US, LONG_US, 0);
    check(seL4_TCB_SetIPCBuffer(worker_tcb[0], IPCBUF_VA, buf), "TCB_SetIPCBuffer");
    start(0, server_fn, ep, 0);
    let_run(); /* the server waits */
    for (int k = 0; k < CALLS; k++) {
        for (int w = 0; w < MSG_WORDS; w++)
            seL4_SetMR(w, (seL4_Word)w);
        seL4_MessageInfo_t info = seL4_Call(ep, seL4_MessageInfo_new(0, 0, 0, MSG_WORDS));
        if (seL4_MessageInfo_get_length(info) != MSG_WORDS)
            fail("long reply", seL4_MessageInfo_get_length(info));
    }
    stop_workers(1);
    done("long_messages");
}

#define SHORT_WORDS 4

static void short_server_fn(seL4_Word ep, seL4_Word a1, seL4_Word a2)
{
    (void)a1;
    (void)a2;
    seL4_Word badge;
    seL4_Recv(ep, &badge, reply_obj);
    for (;;)
        seL4_ReplyRecv(ep, seL4_MessageInfo_new(0, 0, 0, SHORT_WORDS), &badge, reply_obj);
}

static void short_calls(void)
{
    seL4_CPtr ep = make(seL4_EndpointObject, 0);
    reply_obj = make(seL4_ReplyObject, 0);
    configure_sc(worker_sc[0], LONG_US, LONG_US, 0);
    start(0, short_server_fn, ep, 0);
    let_run(); /* the server waits */
    for (int k = 0; k < CALLS; k++) {
        seL4_MessageInfo_t info = seL4_Call(ep, seL4_MessageInfo_new(0, 0, 0, SHORT_WORDS));
        if (seL4_MessageInfo_get_length(info) != SHORT_WORDS)
            fail("short reply", seL4_MessageInfo_get_length(info));
    }
    stop_workers(1);
    done("short_calls");
}

/* A chain of DEPTH CNodes of 2^8 slots, each cap to them with an 8-bit zero
 * guard: cptr 0 walks slot 0 of every level (16 bits each, 64 in all) to a
 * notification minted with a badge in the last one, cptr 1 to an endpoint
 * next to it. */
#define DEEP_BADGE 0x5a
/* CNode cap data: guard size 8 (bits 0-5), guard 0 (the bits above). */
#define GUARD_8 8

static void deep_cspace(void)
{
    seL4_CPtr level[DEPTH];
    for (int d = 0; d < DEPTH; d++)
        level[d] = make(seL4_CapTableObject, 8);
    seL4_CPtr ntfn = make(seL4_NotificationObject, 0);
    seL4_CPtr ep = make(seL4_EndpointObject, 0);
    for (int d = 0; d + 1 < DEPTH; d++)
        check(seL4_CNode_Mint(level[d], 0, 8, ROOT, level[d + 1], seL4_WordBits, seL4_AllRights, GUARD_8),
              "CNode_Mint (guard)");
    check(seL4_CNode_Mint(level[DEPTH - 1], 0, 8, ROOT, ntfn, seL4_WordBits, seL4_AllRights, DEEP_BADGE),
          "CNode_Mint");
    check(seL4_CNode_Copy(level[DEPTH - 1], 1, 8, ROOT, ep, seL4_WordBits, seL4_AllRights), "CNode_Copy");
    configure_sc(worker_sc[0], LONG_US, LONG_US, 0);
    check(seL4_TCB_SetSpace(worker_tcb[0], seL4_CapNull, level[0], GUARD_8, seL4_CapInitThreadVSpace, 0),
          "TCB_SetSpace");
    start(0, deep_fn, 0, 0);
    let_run();
    stop_workers(1);
    seL4_Word badge = 0;
    seL4_Poll(ntfn, &badge);
    if (badge != DEEP_BADGE) /* the signals went through all DEPTH levels */
        fail("deep_cspace: badge", badge);
    done("deep_cspace");
}

/* irq_wakeup's handler thread: on each interrupt it masks the UART's,
 * reads IIR (which clears the transmitter-empty condition) and
 * acknowledges. */
static seL4_CPtr irq_handler;
static volatile seL4_Word irqs_seen;

static void irq_fn(seL4_Word ep, seL4_Word reply, seL4_Word a2)
{
    (void)a2;
    seL4_Word badge;
    for (;;) {
        /* Blocked on an endpoint, woken through its bound notification: the
         * signal cancels the receive (endpoint_cancel_ipc, the reply object
         * unlinked) as on the interrupt entry's worst path. */
        seL4_Recv(ep, &badge, reply);
        uart[1] = 0;
        (void)uart[2];
        irqs_seen++;
        seL4_IRQHandler_Ack(irq_handler);
    }
}

static void irq_wakeup(void)
{
    seL4_CPtr ntfn = make(seL4_NotificationObject, 0);
    irq_handler = alloc_slot();
    check(seL4_IRQControl_Get(seL4_CapIRQControl, UART_IRQ, ROOT, irq_handler, seL4_WordBits), "IRQControl_Get");
    check(seL4_IRQHandler_SetNotification(irq_handler, ntfn), "IRQHandler_SetNotification");
    /* a fragmented refill ring, as refill_ring left worker 0's: blocking
     * part way through each budget, the most refills the SC holds */
    seL4_Word extra = 64;
    while (seL4_SchedControl_ConfigureFlags(sched_control, worker_sc[1], 1000, 20000, extra, 0, 0) != seL4_NoError)
        if (extra-- == 0)
            fail("SchedControl_Configure (refills)", 0);
    seL4_CPtr ep = make(seL4_EndpointObject, 0), reply = make(seL4_ReplyObject, 0);
    check(seL4_TCB_BindNotification(worker_tcb[1], ntfn), "TCB_BindNotification");
    check(seL4_TCB_SetPriority(worker_tcb[1], SELF, seL4_MaxPrio), "TCB_SetPriority (irq)");
    start(1, irq_fn, ep, reply);
    for (int k = 0; k < IRQS; k++) {
        seL4_Word before = irqs_seen;
        uart[1] = UART_IER_THRI; /* the holding register is empty: the interrupt is raised at once */
        for (seL4_Word spins = 0; irqs_seen == before; spins++)
            if (spins > 10000000)
                fail("irq_wakeup: no interrupt", (seL4_Word)k);
        spin(3000); /* some of the handler's budget used between interrupts */
    }
    stop_workers(2);
    uart[1] = 0;
    check(seL4_TCB_SetPriority(worker_tcb[1], SELF, PRIO_WORKER), "TCB_SetPriority (irq back)");
    check(seL4_TCB_UnbindNotification(worker_tcb[1]), "TCB_UnbindNotification");
    check(seL4_CNode_Delete(ROOT, irq_handler, seL4_WordBits), "CNode_Delete (irq handler)");
    done("irq_wakeup");
}

static void cap_transfer(void)
{
    seL4_CPtr ep = make(seL4_EndpointObject, 0);
    reply_obj = make(seL4_ReplyObject, 0);
    xfer_ntfn = make(seL4_NotificationObject, 0);
    recv_server = alloc_slot();
    recv_caller = alloc_slot();
    seL4_CPtr badged[2];
    for (int b = 0; b < 2; b++) {
        badged[b] = alloc_slot();
        check(seL4_CNode_Mint(ROOT, badged[b], seL4_WordBits, ROOT, ep, seL4_WordBits, seL4_AllRights,
                              (seL4_Word)b + 1), "CNode_Mint");
    }
    /* worker 0: the IPC buffer long_messages gave it, back in the root's
     * CSpace (deep_cspace left it in the chain of CNodes) */
    check(seL4_TCB_SetSpace(worker_tcb[0], seL4_CapNull, ROOT, 0, seL4_CapInitThreadVSpace, 0), "TCB_SetSpace");
    configure_sc(worker_sc[0], LONG_US, LONG_US, 0);
    start(0, xfer_server_fn, ep, 0);
    let_run(); /* the server waits */
    for (int k = 0; k < CALLS; k++) {
        for (int w = 0; w < MSG_WORDS; w++)
            seL4_SetMR(w, (seL4_Word)w);
        seL4_SetCap(0, xfer_ntfn);
        seL4_SetCap(1, badged[0]);
        seL4_SetCap(2, badged[1]);
        seL4_SetCapReceivePath(ROOT, recv_caller, seL4_WordBits);
        seL4_MessageInfo_t info = seL4_Call(badged[0], seL4_MessageInfo_new(0, 0, 3, MSG_WORDS));
        if (seL4_MessageInfo_get_length(info) != MSG_WORDS || seL4_MessageInfo_get_extraCaps(info) != 1)
            fail("cap_transfer: reply", seL4_MessageInfo_get_extraCaps(info));
        /* the cap came: deleting it succeeds, deleting the empty slot too */
        check(seL4_CNode_Delete(ROOT, recv_caller, seL4_WordBits), "CNode_Delete (received cap)");
    }
    stop_workers(1);
    if (xfer_bad)
        fail("cap_transfer: calls without the caps", xfer_bad);
    done("cap_transfer");
}

/* All NT_ALL workers wait on one endpoint at one priority (FIFO); then each
 * in turn gets a priority above every other waiter's, and the kernel
 * re-inserts it (endpoint_reorder): a walk from the tail over all the
 * others, the longest the queue can have with this many threads. */
static void long_queue(void)
{
    seL4_CPtr ep = make(seL4_EndpointObject, 0);
    /* the SCs the earlier scenarios reconfigured (the first NT) back to one
     * long budget; the others still have theirs from main (fewer kernel runs
     * to single-step: make latency-check's time) */
    for (int i = 0; i < NT_ALL; i++) {
        if (i < NT)
            configure_sc(worker_sc[i], LONG_US, LONG_US, 0);
        start(i, wait_fn, ep, 0);
    }
    let_run(); /* all NT_ALL wait on ep */
    for (int i = 0; i < NT_ALL; i++)
        check(seL4_TCB_SetPriority(worker_tcb[i], SELF, PRIO_WORKER + 1 + (seL4_Word)i), "TCB_SetPriority (reorder)");
    /* A 120-word send to the queue's head, the highest priority. */
    for (int w = 0; w < MSG_WORDS; w++)
        seL4_SetMR(w, (seL4_Word)w);
    seL4_Send(ep, seL4_MessageInfo_new(0, 0, 0, MSG_WORDS));
    stop_workers(NT_ALL);
    done("long_queue");
}

static void tcb_configure(void)
{
    for (int r = 0; r < CONFIGURES; r++) {
        seL4_CPtr frame = make(seL4_RISCV_4K_Page, 0);
        check(seL4_TCB_Configure(worker_tcb[2], ROOT, 0, seL4_CapInitThreadVSpace, 0, IPCBUF2_VA, frame),
              "TCB_Configure");
        /* the TCB's copy is now the frame's last cap: the next Configure deletes it for good */
        check(seL4_CNode_Delete(ROOT, frame, seL4_WordBits), "CNode_Delete (frame)");
    }
    check(seL4_TCB_Configure(worker_tcb[2], ROOT, 0, seL4_CapInitThreadVSpace, 0, 0, seL4_CapNull), "TCB_Configure");
    done("tcb_configure");
}

static void sched_params(void)
{
    /* worker 2 runnable (below the root, so it does not run), unbound; the
     * waiters are workers 3 .. 3 + NT_FAULT - 1 */
    seL4_CPtr fault_ep = make(seL4_EndpointObject, 0), next_ep = make(seL4_EndpointObject, 0);
    for (int i = 3; i < 3 + NT_FAULT; i++) {
        configure_sc(worker_sc[i], LONG_US, LONG_US, 0);
        start(i, wait_fn, fault_ep, 0);
    }
    let_run(); /* NT_FAULT threads wait on fault_ep */
    check(seL4_TCB_SetSchedParams(worker_tcb[2], SELF, 0, PRIO_WORKER, seL4_CapNull, fault_ep),
          "TCB_SetSchedParams (fault endpoint)");
    start(2, spin_fn, 0, 0);
    /* irq_wakeup's handler SC (its ring fragmented by the interrupts), taken from worker 1 */
    check(seL4_TCB_SetSchedParams(worker_tcb[1], SELF, 0, PRIO_WORKER, seL4_CapNull, seL4_CapNull),
          "TCB_SetSchedParams (unbind)");
    /* the TCB's copy becomes the endpoint's last cap */
    check(seL4_CNode_Delete(ROOT, fault_ep, seL4_WordBits), "CNode_Delete (fault endpoint)");
    check(seL4_TCB_SetSchedParams(worker_tcb[2], SELF, 0, PRIO_WORKER + 1, worker_sc[1], next_ep),
          "TCB_SetSchedParams (replace)");
    stop_workers(3 + NT_FAULT);
    /* the workers of later scenarios get their SCs back */
    check(seL4_TCB_SetSchedParams(worker_tcb[2], SELF, 0, PRIO_WORKER, seL4_CapNull, seL4_CapNull),
          "TCB_SetSchedParams (unbind)");
    check(seL4_TCB_SetSchedParams(worker_tcb[1], SELF, 0, PRIO_WORKER, worker_sc[1], seL4_CapNull),
          "TCB_SetSchedParams (worker 1)");
    check(seL4_TCB_SetSchedParams(worker_tcb[2], SELF, 0, PRIO_WORKER, worker_sc[2], seL4_CapNull),
          "TCB_SetSchedParams (worker 2)");
    done("sched_params");
}

static void sc_delete(void)
{
    seL4_CPtr sc[NT_SC];
    for (int i = 0; i < NT_SC; i++) {
        sc[i] = make(seL4_SchedContextObject, 10);
        configure_sc(sc[i], 100, 10000 + 100 * (seL4_Word)i, 0); /* different periods: different release times */
        check(seL4_TCB_SetSchedParams(worker_tcb[i], SELF, 0, PRIO_WORKER, seL4_CapNull, seL4_CapNull),
              "TCB_SetSchedParams (unbind)");
        check(seL4_TCB_SetSchedParams(worker_tcb[i], SELF, 0, PRIO_WORKER, sc[i], seL4_CapNull), "TCB_SetSchedParams");
        start(i, spin_fn, 0, 0);
    }
    check(seL4_TCB_SetPriority(SELF, SELF, PRIO_ROOT_LOW), "TCB_SetPriority (low)");
    spin(1000000);
    check(seL4_TCB_SetPriority(SELF, SELF, PRIO_ROOT_HIGH), "TCB_SetPriority (high)");
    /* the root runs: every worker is throttled, its SC's entry in the heap */
    for (int i = NT_SC - 1; i >= 0; i--)
        check(seL4_CNode_Delete(ROOT, sc[i], seL4_WordBits), "CNode_Delete (SC)");
    stop_workers(NT_SC);
    done("sc_delete");
}

int main(void)
{
    bi = (seL4_BootInfo *)((seL4_Word)seL4_GetIPCBuffer() + 4096);
    if (bi->ipcBuffer != seL4_GetIPCBuffer())
        stop();
    next_slot = bi->empty.start;
    slot_end = bi->empty.end;
    sched_control = bi->schedcontrol.start;
    find_ram_untyped();
    map_uart();
    out_str("\nlatency-stress: start\n");
    configure_sc(seL4_CapInitThreadSC, LONG_US, LONG_US, 0);
    check(seL4_TCB_SetPriority(SELF, SELF, PRIO_ROOT_HIGH), "TCB_SetPriority");
    for (int i = 0; i < NT_ALL; i++) {
        worker_tcb[i] = make(seL4_TCBObject, 0);
        worker_sc[i] = make(seL4_SchedContextObject, 10);
        configure_sc(worker_sc[i], LONG_US, LONG_US, 0);
        check(seL4_TCB_Configure(worker_tcb[i], ROOT, 0, seL4_CapInitThreadVSpace, 0, 0, seL4_CapNull),
              "TCB_Configure");
        check(seL4_TCB_SetSchedParams(worker_tcb[i], SELF, 0, PRIO_WORKER, worker_sc[i], seL4_CapNull),
              "TCB_SetSchedParams");
    }
    queue_delete(seL4_EndpointObject, "ep_queue_delete");
    queue_delete(seL4_NotificationObject, "ntfn_queue_delete");
    revoke();
    release_queue();
    refill_ring();
    long_messages();
    short_calls();
    deep_cspace();
    cap_transfer();
    irq_wakeup();
    tcb_configure();
    sched_params();
    long_queue();
    sc_delete();
    out_str("latency-stress: done\n");
    stop();
    return 0;
}
