/* background: best effort, priority 10, round robin 1 ms; runs when nothing else does. */
#include <kairos/pd.h>

static volatile uint64_t spins;

void init(void)
{
    for (;;)
        spins++;
}
