/*
 * kairos_exit: the pass/fail convention of Kairos-owned root tasks.
 * The host runner looks for exactly one "kairos-result: ..." line; the
 * kernel's DebugHalt then powers QEMU off.
 */
#include <kairos/kairos.h>

void kairos_exit(bool pass, const char *reason)
{
    if (pass) {
        kairos_puts("kairos-result: PASS\n");
    } else {
        kairos_puts("kairos-result: FAIL (");
        kairos_puts(reason != NULL && reason[0] != '\0' ? reason : "no reason given");
        kairos_puts(")\n");
    }
#ifdef CONFIG_DEBUG_BUILD
    seL4_DebugHalt();
#endif
    kairos_suspend_self();
}
