/* The IPC fastpath for Call and ReplyRecv (kernel/kernel/fastpath.c). */
#ifndef KAIROS_FASTPATH_H
#define KAIROS_FASTPATH_H

#include <types.h>

/* Whether trap.S's Call and ReplyRecv go through the fastpath's checks
 * (otherwise straight to the slow path). Set at boot ("fastpath=off" in
 * the kernel's boot arguments turns it off) and, in debug builds, by the
 * Kairos-specific system call KAIROS_SYS_DEBUG_FASTPATH. */
extern bool fastpath_enabled;

void fastpath_init(bool enabled);
/* Entry points from trap.S; both fall back to handle_syscall. */
NORETURN void fastpath_call(void);
NORETURN void fastpath_reply_recv(void);

/* The slow path (syscall.c). */
NORETURN void handle_syscall(word_t number);
/* Check flavour: run the invariant checker at the end of a system call,
 * its time charged to no scheduling context. */
void syscall_check_invariants(void);

/* True if the boot arguments contain the word `word` (boot.c). */
bool bootargs_has(const char *word);

#endif
