/* Conversions between the API's microseconds and timer ticks. The timebase
 * comes from the device tree (10 MHz on QEMU virt). */
#include <boot.h>
#include <refill.h>
#include <timer.h>

static u64 ticks_per_s;
u64 timer_ticks_per_ms;

void timer_init(u64 timebase_hz)
{
    ticks_per_s = timebase_hz;
    timer_ticks_per_ms = timebase_hz / 1000;
    refill_timebase_changed();
}

/* Exact for periods up to hours: us * hz stays below 2^64 for us < 2^64 / 2^24. */
u64 us_to_ticks(u64 us) { return us / 1000000 * ticks_per_s + (us % 1000000) * ticks_per_s / 1000000; }
u64 ticks_to_us(u64 ticks) { return ticks / ticks_per_s * 1000000 + (ticks % ticks_per_s) * 1000000 / ticks_per_s; }
