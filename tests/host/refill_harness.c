/* Host driver for kernel/kernel/refill.c (tests/test_refill_model.py).
 *
 * Built natively with AddressSanitizer and UBSan together with refill.c. The
 * scheduling context lives in a heap block of exactly 2^size_bits bytes, as
 * the object would, so a ring index past the object is an ASan report.
 *
 * Protocol: one command per line on stdin, one answer line per command.
 *   T hz                                   timebase (ticks per second) -> "ok"
 *   K size_bits                            -> "<refill_capacity> <refill_max_for_size>"
 *   N size_bits max budget period sporadic now
 *                                          new object, refill_new
 *   U period budget max usage now          refill_update
 *   C usage now                            refill_budget_check
 *   B now                                  refill_unblock_check
 *   Y usage now                            refill_yield
 *   S sporadic                             set the sporadic flag
 *   D now                                  state only
 *   E                                      -> "end" (flush)
 * Answer to N/U/C/B/Y/D:
 *   "<ret> <ready(now)> <sufficient(0)> <valid> <period> <budget> <max> <head> <count> : t a t a ..."
 * with the refills from head to tail (times and amounts in ticks).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <refill.h>
#include <timer.h>

static u64 hz = 10000000; /* QEMU virt */
u64 timer_ticks_per_ms;

/* The kernel's conversion (kernel/kernel/timer.c), for the host. */
u64 us_to_ticks(u64 us) { return us / 1000000 * hz + (us % 1000000) * hz / 1000000; }
u64 ticks_to_us(u64 ticks) { return ticks / hz * 1000000 + (ticks % hz) * 1000000 / hz; }

static struct sched_context *sc;
static void *block;

static void dump(int ret, u64 now)
{
    printf("%d %d %d %d %" PRIu64 " %" PRIu64 " %u %u %u :", ret, refill_ready(sc, now),
           refill_sufficient(sc, 0), refill_valid(sc), sc->period, sc->budget, sc->refill_max,
           sc->refill_head, sc->refill_count);
    u32 i = sc->refill_head;
    for (u32 n = 0; n < sc->refill_count; n++) {
        struct refill *r = refill_at(sc, i);
        printf(" %" PRIu64 " %" PRIu64, r->release_time, r->amount);
        i = refill_index_add(sc, i, 1);
    }
    printf("\n");
}

int main(void)
{
    char line[512];
    refill_timebase_changed();
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    while (fgets(line, sizeof line, stdin)) {
        char op = line[0];
        u64 a = 0, b = 0, c = 0, d = 0, e = 0, f = 0;
        int n = sscanf(line + 1, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
                       &a, &b, &c, &d, &e, &f);
        switch (op) {
        case 'T':
            hz = a;
            timer_ticks_per_ms = hz / 1000;
            refill_timebase_changed();
            printf("ok\n");
            break;
        case 'K':
            printf("%lu %u\n", refill_capacity(a), refill_max_for_size(a));
            break;
        case 'N': {
            if (n != 6) goto bad;
            free(block);
            size_t size = (size_t)1 << a;
            block = aligned_alloc(size < 4096 ? size : 4096, size);
            if (!block) goto bad;
            memset(block, 0, size);
            sc = block;
            /* What the Untyped code does (untyped.c / schedcontext.c). */
            sc->size_bits = (u32)a;
            sc->refill_max = refill_max_for_size(a);
            sc->sporadic = e != 0;
            refill_new(sc, b, c, d, f);
            dump(0, f);
            break;
        }
        case 'U':
            if (n != 5 || !sc) goto bad;
            refill_update(sc, a, b, c, d, e);
            dump(0, e);
            break;
        case 'C':
            if (n != 2 || !sc) goto bad;
            dump(refill_budget_check(sc, a, b), b);
            break;
        case 'B':
            if (n != 1 || !sc) goto bad;
            dump(refill_unblock_check(sc, a), a);
            break;
        case 'Y':
            if (n != 2 || !sc) goto bad;
            dump(refill_yield(sc, a, b), b);
            break;
        case 'S':
            if (n != 1 || !sc) goto bad;
            sc->sporadic = a != 0;
            printf("ok\n");
            break;
        case 'D':
            if (n != 1 || !sc) goto bad;
            dump(0, a);
            break;
        case 'E':
            printf("end\n");
            fflush(stdout);
            break;
        default:
        bad:
            printf("error %s", line);
            fflush(stdout);
            return 1;
        }
    }
    free(block);
    return 0;
}
