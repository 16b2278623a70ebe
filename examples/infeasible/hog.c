/* hog: priority 200, 6 ms / 10 ms; spins (examples/infeasible/system.xml). */
#include <kairos/pd.h>

static volatile uint64_t spins;

void init(void)
{
    for (;;)
        spins++;
}
