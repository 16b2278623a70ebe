/*
 * Kairos root-task runtime: from crt0's _start to main() and back.
 */
#include <kairos/kairos.h>
#include <picotls.h>
#include <stdio.h>

/* The calling thread's IPC buffer (see <sel4/functions.h>). */
seL4_IPCBuffer *__sel4_ipc_buffer;

static seL4_BootInfo *kairos_bi;

extern char __kairos_tls_block[];
extern uint64_t __kairos_stack_bottom[];

#define STACK_CANARY_WORDS 8
#define STACK_CANARY 0x5ca1ab1edeadc0deull

typedef void (*kairos_init_fn)(void);
extern kairos_init_fn __preinit_array_start[], __preinit_array_end[];
extern kairos_init_fn __init_array_start[], __init_array_end[];

int main(int argc, char *argv[]);

void __kairos_runtime_init(seL4_BootInfo *bi);
__attribute__((noreturn)) void __kairos_start_c(seL4_BootInfo *bi);

seL4_BootInfo *kairos_bootinfo(void)
{
    return kairos_bi;
}

bool kairos_stack_intact(void)
{
    for (int i = 0; i < STACK_CANARY_WORDS; i++) {
        if (__kairos_stack_bottom[i] != STACK_CANARY) {
            return false;
        }
    }
    return true;
}

void __kairos_runtime_init(seL4_BootInfo *bi)
{
    for (int i = 0; i < STACK_CANARY_WORDS; i++) {
        __kairos_stack_bottom[i] = STACK_CANARY;
    }

    /* Thread pointer first: picolibc keeps errno in TLS. */
    _init_tls(__kairos_tls_block);
    _set_tls(__kairos_tls_block);

    kairos_bi = bi;
    __sel4_ipc_buffer = bi->ipcBuffer;

    for (kairos_init_fn *f = __preinit_array_start; f < __preinit_array_end; f++) {
        (*f)();
    }
    for (kairos_init_fn *f = __init_array_start; f < __init_array_end; f++) {
        (*f)();
    }
}

void kairos_suspend_self(void)
{
    seL4_TCB_Suspend(seL4_CapInitThreadTCB);
    for (;;) {
        seL4_Yield();
    }
}

void __kairos_start_c(seL4_BootInfo *bi)
{
    static char progname[] = "rootserver";
    static char *argv[] = {progname, NULL};

    __kairos_runtime_init(bi);
    (void)main(1, argv);
    kairos_suspend_self();
}

/* picolibc's exit()/abort() end here. */
__attribute__((noreturn)) void _exit(int status)
{
    if (status != 0) {
        printf("kairos: _exit(%d)\n", status);
    }
    kairos_suspend_self();
}
