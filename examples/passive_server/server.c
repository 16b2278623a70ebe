/* server: passive, priority 200. protected(): a fixed amount of work (about
 * 100 µs under -icount), then the sum of the two message words, counted
 * per calling channel in the shared stats page. */
#include <kairos/pd.h>
#include <stdio.h>

#include "stats.h"

#define WORK_ITERATIONS 25000ul

uint64_t stats; /* set by kairos build (setvar_vaddr) */
static volatile uint64_t sink;

void init(void)
{
    printf("server: init done, becoming passive\n");
}

seL4_MessageInfo_t protected(kairos_channel ch, seL4_MessageInfo_t msginfo)
{
    struct server_stats *s = (struct server_stats *)stats;
    if (kairos_msginfo_get_label(msginfo) != SERVER_OP_ADD || seL4_MessageInfo_get_length(msginfo) != 2)
        return kairos_msginfo_new(0, 0);
    uint64_t x = sink;
    for (seL4_Word i = 0; i < WORK_ITERATIONS; i++)
        x = x * 6364136223846793005ull + i;
    sink = x;
    s->calls[ch]++;
    kairos_mr_set(0, kairos_mr_get(0) + kairos_mr_get(1));
    return kairos_msginfo_new(SERVER_OP_ADD, 1);
}
