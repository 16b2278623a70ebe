/* rtc: the goldfish RTC driver (examples/device/system.xml). Arms the alarm
 * 1 ms (RTC time) ahead; on each interrupt (irq id 1) records when it ran,
 * clears and acknowledges the interrupt, notifies the app, arms the next. */
#include <kairos/pd.h>

#include "ticks.h"

/* Goldfish RTC registers (byte offsets, 32-bit accesses). */
#define RTC_TIME_LOW 0x00
#define RTC_TIME_HIGH 0x04
#define RTC_ALARM_LOW 0x08
#define RTC_ALARM_HIGH 0x0c
#define RTC_IRQ_ENABLED 0x10
#define RTC_CLEAR_INTERRUPT 0x1c

#define IRQ_ID 1
#define CH_APP 0
#define TICK_NS 1000000ull

uint64_t rtc_regs; /* set by kairos build (setvar_vaddr) */
uint64_t ticks;

static uint32_t volatile *reg(unsigned offset)
{
    return (uint32_t volatile *)(rtc_regs + offset);
}

static uint64_t rtc_now(void)
{
    uint64_t lo = *reg(RTC_TIME_LOW); /* reading TIME_LOW latches TIME_HIGH */
    uint64_t hi = *reg(RTC_TIME_HIGH);
    return hi << 32 | lo;
}

static void arm(uint64_t when)
{
    struct ticks *t = (struct ticks *)ticks;
    t->last_alarm = when;
    *reg(RTC_ALARM_HIGH) = (uint32_t)(when >> 32);
    *reg(RTC_ALARM_LOW) = (uint32_t)when; /* writing the low half arms it */
}

void init(void)
{
    *reg(RTC_CLEAR_INTERRUPT) = 1;
    *reg(RTC_IRQ_ENABLED) = 1;
    arm(rtc_now() + TICK_NS);
}

void notified(kairos_channel ch)
{
    if (ch != IRQ_ID)
        return;
    struct ticks *t = (struct ticks *)ticks;
    uint64_t now = rtc_now();
    t->last_seen = now;
    t->fired = t->last_alarm;
    if (now < t->last_alarm)
        t->early++;
    t->count++;
    *reg(RTC_CLEAR_INTERRUPT) = 1;
    kairos_irq_ack(IRQ_ID);
    kairos_notify(CH_APP);
    arm(now + TICK_NS);
}
