/*
 * The protection-domain runtime (include/kairos/pd.h): start-up, the
 * receive loop that dispatches to init/notified/protected, and the pieces
 * of the root-task runtime a PD needs in its own form (IPC buffer, TLS,
 * stopping). Linked instead of user/lib's runtime.c.
 */
#include <kairos/kairos.h>
#include <kairos/pd.h>
#include <picotls.h>
#include <stdio.h>

seL4_IPCBuffer *__sel4_ipc_buffer;

/* Patched by `kairos build` (the PD's name from the description). */
volatile char kairos_pd_name_text[32] = "pd";

extern char __kairos_tls_block[];

typedef void (*kairos_init_fn)(void);
extern kairos_init_fn __preinit_array_start[], __preinit_array_end[];
extern kairos_init_fn __init_array_start[], __init_array_end[];

__attribute__((noreturn)) void __kairos_pd_start(seL4_Word flags, seL4_Word ipc_buffer);

const char *kairos_pd_name(void)
{
    return (const char *)kairos_pd_name_text;
}

/* A PD has no BootInfo; the root-task API answers NULL. */
seL4_BootInfo *kairos_bootinfo(void)
{
    return NULL;
}

bool kairos_stack_intact(void)
{
    return true;
}

/* A PD holds no capability to its own TCB, so it cannot suspend itself:
 * it waits on the null capability instead, a capability fault that goes
 * to the loader, which prints it and leaves the PD stopped. */
void kairos_suspend_self(void)
{
    for (;;)
        seL4_Wait(seL4_CapNull, NULL);
}

__attribute__((noreturn)) void _exit(int status)
{
    printf("kairos: PD '%s': _exit(%d)\n", kairos_pd_name(), status);
    kairos_suspend_self();
}

__attribute__((weak)) void notified(kairos_channel ch)
{
    printf("kairos: PD '%s': notification on channel %lu, but it has no notified()\n", kairos_pd_name(),
           (unsigned long)ch);
}

__attribute__((weak)) seL4_MessageInfo_t protected(kairos_channel ch, seL4_MessageInfo_t msginfo)
{
    (void)msginfo;
    printf("kairos: PD '%s': ppcall on channel %lu, but it has no protected()\n", kairos_pd_name(),
           (unsigned long)ch);
    return seL4_MessageInfo_new(0, 0, 0, 0);
}

seL4_Word kairos_sc_consumed(seL4_Word id)
{
    seL4_SchedContext_Consumed_t r = seL4_SchedContext_Consumed(KAIROS_PD_SC_BASE + id);
    return r.error == seL4_NoError ? r.consumed : ~0ul;
}

static void dispatch_notifications(seL4_Word badge)
{
    for (kairos_channel ch = 0; badge != 0 && ch <= KAIROS_PD_MAX_CHANNEL; ch++, badge >>= 1)
        if (badge & 1)
            notified(ch);
}

void __kairos_pd_start(seL4_Word flags, seL4_Word ipc_buffer)
{
    _init_tls(__kairos_tls_block);
    _set_tls(__kairos_tls_block);
    __sel4_ipc_buffer = (seL4_IPCBuffer *)ipc_buffer;
    for (kairos_init_fn *f = __preinit_array_start; f < __preinit_array_end; f++)
        (*f)();
    for (kairos_init_fn *f = __init_array_start; f < __init_array_end; f++)
        (*f)();

    init();

    bool endpoint = flags & KAIROS_PD_FLAG_ENDPOINT;
    seL4_Word badge = 0;
    seL4_MessageInfo_t info;
    if (flags & KAIROS_PD_FLAG_PASSIVE) {
        /* Report and wait in one call: the loader may take the scheduling
         * context only once this thread is blocked on its input. */
        info = seL4_NBSendRecv(KAIROS_PD_LOADER, seL4_MessageInfo_new(KAIROS_PD_INIT_DONE_LABEL, 0, 0, 0), KAIROS_PD_INPUT, &badge,
                               KAIROS_PD_REPLY);
    } else if (endpoint) {
        info = seL4_Recv(KAIROS_PD_INPUT, &badge, KAIROS_PD_REPLY);
    } else {
        info = seL4_Wait(KAIROS_PD_INPUT, &badge);
    }
    for (;;) {
        if (badge & KAIROS_PPCALL_BADGE) {
            seL4_MessageInfo_t reply = protected(badge & 0x3f, info);
            info = seL4_ReplyRecv(KAIROS_PD_INPUT, reply, &badge, KAIROS_PD_REPLY);
            continue;
        }
        dispatch_notifications(badge);
        if (endpoint)
            info = seL4_Recv(KAIROS_PD_INPUT, &badge, KAIROS_PD_REPLY);
        else
            info = seL4_Wait(KAIROS_PD_INPUT, &badge);
    }
}
