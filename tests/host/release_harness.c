/* Host driver for kernel/kernel/release.c (tests/test_release_queue.py).
 *
 * Built natively with AddressSanitizer and UBSan together with release.c.
 * Threads are CONFIG_MAX_SPORADIC_SCS zeroed TCBs, named by their index,
 * each bound to a scheduling context of the same index.
 *
 * Protocol: one command per line on stdin, one answer line per command.
 *   I id time     queue thread id to be released at time -> "ok"
 *   R id          take thread id out                     -> "ok"
 *   P             take the first thread out, as the release loop does
 *                 (stale entries at the top leave first, a deferred first
 *                 entry is re-keyed first)             -> "<id> <time>"
 *   F id          SC id is deleted: its slot goes        -> "ok"
 *   Q time        the first thread (stale entries at the top leave
 *                 first, as for P) goes back with a new release time, as
 *                 the release loop re-queues one whose head moved -> "<id>"
 *   C             entries in the heap, live or stale     -> "<count>"
 *   D             queued threads that are deferred (their slot keeps an
 *                 earlier key, release.h)                -> "<count>"
 *   V             the heap's invariants                  -> "ok" or the violation
 * A command the queue's preconditions forbid (a queued thread queued
 * again, an absent one removed, the slot of a queued thread forgotten)
 * answers "refused": the kernel never makes those calls (thread.c checks
 * first). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <release.h>

static struct tcb threads[CONFIG_MAX_SPORADIC_SCS];
static struct sched_context scs[CONFIG_MAX_SPORADIC_SCS];
static struct release_queue q;

/* What the release loop does before it looks at the first entry: stale
 * entries leave, a deferred one gets its thread's own key; each is one
 * step of the loop (thread.c release_ready_threads). */
static void settle(void)
{
    while (q.count != 0) {
        struct tcb *t = release_queue_first(&q);
        if (!t)
            release_queue_take_first(&q);
        else if (t->release_deferred)
            release_queue_settle_first(&q);
        else
            return;
    }
}

int main(void)
{
    for (unsigned i = 0; i < CONFIG_MAX_SPORADIC_SCS; i++) {
        threads[i].sc = &scs[i];
        scs[i].tcb = &threads[i];
    }
    char line[128];
    while (fgets(line, sizeof(line), stdin)) {
        unsigned id = 0;
        unsigned long long time = 0;
        if (sscanf(line, "I %u %llu", &id, &time) == 2) {
            if (id >= CONFIG_MAX_SPORADIC_SCS || release_queue_holds(&threads[id])) {
                puts("refused");
                continue;
            }
            release_queue_insert(&q, &threads[id], time);
            puts("ok");
        } else if (sscanf(line, "R %u", &id) == 1) {
            if (id >= CONFIG_MAX_SPORADIC_SCS || !release_queue_holds(&threads[id])) {
                puts("refused");
                continue;
            }
            release_queue_remove(&q, &threads[id]);
            puts("ok");
        } else if (sscanf(line, "F %u", &id) == 1) {
            if (id >= CONFIG_MAX_SPORADIC_SCS || release_queue_holds(&threads[id])) {
                puts("refused");
                continue;
            }
            release_queue_forget_sc(&q, &scs[id]);
            puts("ok");
        } else if (sscanf(line, "Q %llu", &time) == 1) {
            settle();
            if (q.count == 0) {
                puts("refused");
                continue;
            }
            struct tcb *t = release_queue_first(&q);
            release_queue_requeue_first(&q, time);
            printf("%ld\n", (long)(t - threads));
        } else if (line[0] == 'P') {
            struct tcb *t = NULL;
            u64 time = 0;
            settle();
            if (q.count != 0) {
                time = q.heap[0].time;
                t = release_queue_take_first(&q);
            }
            if (!t)
                puts("refused");
            else
                printf("%ld %" PRIu64 "\n", (long)(t - threads), time);
        } else if (line[0] == 'D') {
            unsigned n = 0;
            for (unsigned i = 0; i < CONFIG_MAX_SPORADIC_SCS; i++)
                n += threads[i].in_release_queue && threads[i].release_deferred;
            printf("%u\n", n);
        } else if (line[0] == 'C') {
            printf("%u\n", q.count);
        } else if (line[0] == 'V') {
            const char *why = release_queue_violation(&q);
            puts(why ? why : "ok");
        } else {
            fprintf(stderr, "release_harness: bad command: %s", line);
            return 2;
        }
        fflush(stdout);
    }
    return 0;
}
