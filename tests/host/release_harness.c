/* Host driver for kernel/kernel/release.c (tests/test_release_queue.py).
 *
 * Built natively with AddressSanitizer and UBSan together with release.c.
 * Threads are CONFIG_MAX_SPORADIC_SCS zeroed TCBs, named by their index.
 *
 * Protocol: one command per line on stdin, one answer line per command.
 *   I id time     queue thread id to be released at time -> "ok"
 *   R id          take thread id out                     -> "ok"
 *   P             take the first thread out              -> "<id> <time>"
 *   V             the heap's invariants                  -> "ok" or the violation
 * A command the queue's preconditions forbid (a queued thread queued
 * again, an absent one removed, a full queue) answers "refused": the
 * kernel never makes those calls (thread.c checks first). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <release.h>

static struct tcb threads[CONFIG_MAX_SPORADIC_SCS];
static struct release_queue q;

int main(void)
{
    char line[128];
    while (fgets(line, sizeof(line), stdin)) {
        unsigned id = 0;
        unsigned long long time = 0;
        if (sscanf(line, "I %u %llu", &id, &time) == 2) {
            if (id >= CONFIG_MAX_SPORADIC_SCS || release_queue_holds(&threads[id]) ||
                q.count == CONFIG_MAX_SPORADIC_SCS) {
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
        } else if (line[0] == 'P') {
            if (q.count == 0) {
                puts("refused");
                continue;
            }
            struct release_entry first = q.heap[0];
            release_queue_remove(&q, first.tcb);
            printf("%ld %" PRIu64 "\n", (long)(first.tcb - threads), first.time);
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
