/* app: told of each RTC tick on channel 0 (examples/device/system.xml).
 * After 20 ticks: `device verdict: PASS` if every tick came after its
 * alarm time and none was lost, then ends the run. */
#include <kairos/kairos.h>
#include <kairos/pd.h>
#include <stdio.h>

#include "ticks.h"

#define TICKS 20

uint64_t ticks; /* set by kairos build (setvar_vaddr) */
static seL4_Word seen;

void init(void)
{
}

void notified(kairos_channel ch)
{
    struct ticks *t = (struct ticks *)ticks;
    if (ch != 0)
        return;
    seen++;
    printf("device: tick %2lu: driver handled %lu interrupts, alarm at %lu ns, driver ran at %lu ns\n",
           (unsigned long)seen, (unsigned long)t->count, (unsigned long)t->fired, (unsigned long)t->last_seen);
    if (seen < TICKS)
        return;
    const char *reason = NULL;
    if (t->early)
        reason = "an interrupt came before its alarm time";
    else if (t->count < TICKS)
        reason = "the driver counted fewer interrupts than the app was told of";
    if (reason) {
        printf("device verdict: FAIL (%s)\n", reason);
        kairos_exit(false, reason);
    }
    printf("device verdict: PASS\n");
    kairos_exit(true, NULL);
}
