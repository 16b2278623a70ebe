/* Root-task set-up helpers (kairos/roottask.h). */
#include <kairos/kairos.h>
#include <kairos/roottask.h>
#include <stdio.h>

static seL4_CPtr pool, next_slot;
static bool failed;

void kairos_rt_init(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    seL4_Word best = ~0ul;
    for (seL4_Word i = 0; i < bi->untyped.end - bi->untyped.start; i++) {
        const seL4_UntypedDesc *u = &bi->untypedList[i];
        if (u->isDevice || u->sizeBits < 16)
            continue;
        if (best == ~0ul || u->sizeBits < bi->untypedList[best].sizeBits)
            best = i; /* the smallest that is big enough */
    }
    if (best == ~0ul)
        kairos_exit(false, "no RAM untyped of 64 KiB");
    pool = bi->untyped.start + best;
    next_slot = bi->empty.start;
}

bool kairos_rt_check(seL4_Error e, const char *what)
{
    if (e != seL4_NoError && !failed) {
        failed = true;
        printf("set-up: %s failed: error %d\n", what, (int)e);
    }
    return e == seL4_NoError;
}

bool kairos_rt_failed(void) { return failed; }

seL4_CPtr kairos_rt_make(seL4_Word type, seL4_Word bits)
{
    seL4_CPtr s = next_slot++;
    kairos_rt_check(seL4_Untyped_Retype(pool, type, bits, seL4_CapInitThreadCNode, 0, 0, s, 1),
                    "Untyped_Retype");
    return s;
}

seL4_UserContext kairos_rt_thread_regs(void (*fn)(seL4_Word, seL4_Word), seL4_Word arg0, void *stack_top)
{
    seL4_UserContext regs = {0};
    seL4_Word gp, tp;
    __asm__ volatile("mv %0, gp" : "=r"(gp));
    __asm__ volatile("mv %0, tp" : "=r"(tp));
    regs.pc = (seL4_Word)fn;
    regs.sp = (seL4_Word)stack_top;
    regs.gp = gp;
    regs.tp = tp;
    regs.a0 = arg0;
    return regs;
}
