/* The page the RTC driver writes and the app reads (memory region ticks). */
#ifndef DEVICE_TICKS_H
#define DEVICE_TICKS_H
#include <stdint.h>

struct ticks {
    volatile uint64_t count;      /* interrupts handled */
    volatile uint64_t early;      /* interrupts seen before their alarm time */
    volatile uint64_t last_alarm; /* RTC ns: the alarm armed last */
    volatile uint64_t fired;      /* RTC ns: the alarm of the last interrupt */
    volatile uint64_t last_seen;  /* RTC ns when the driver ran */
};
#endif
