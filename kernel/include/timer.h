/* Time: ticks of the platform timer inside the kernel, microseconds at the API. */
#ifndef KAIROS_TIMER_H
#define KAIROS_TIMER_H

#include <types.h>

extern u64 timer_ticks_per_ms;
/*@ assigns \nothing; */
u64 us_to_ticks(u64 us);
u64 ticks_to_us(u64 ticks);

#endif
