/* Kairos's debug-only system calls: counters and the fastpath switch
 * (docs/kernel.md). */
#include <kairos/kairos.h>

seL4_Word kairos_debug_counter(seL4_Word id)
{
    register seL4_Word a0 __asm__("a0") = id;
    register seL4_Word a7 __asm__("a7") = (seL4_Word)KAIROS_SYS_DEBUG_COUNTER;
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a7) : "memory");
    return a0;
}

bool kairos_debug_set_fastpath(bool on)
{
    register seL4_Word a0 __asm__("a0") = on;
    register seL4_Word a7 __asm__("a7") = (seL4_Word)KAIROS_SYS_DEBUG_FASTPATH;
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a7) : "memory");
    return a0 != 0;
}
