/* client_lo: low criticality, priority 100, 3 ms / 10 ms. One ppcall a
 * period, then Yield until the next refill. */
#include <kairos/pd.h>

#include "stats.h"

void init(void)
{
    for (seL4_Word job = 0;; job++) {
        kairos_mr_set(0, job);
        kairos_mr_set(1, 1000);
        (void)kairos_ppcall(0, kairos_msginfo_new(SERVER_OP_ADD, 2));
        seL4_Yield();
    }
}
