/* greedy: low criticality, priority 200, 3 ms / 10 ms; wants the whole CPU. */
#include <kairos/pd.h>

static volatile uint64_t spins;

void init(void)
{
    for (;;)
        spins++;
}
