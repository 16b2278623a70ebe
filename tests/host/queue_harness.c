/* Host driver for kernel/kernel/queue.c (tests/test_thread_queue.py).
 *
 * Built natively with AddressSanitizer and UBSan together with queue.c (check
 * flavour, so tqueue_violation is there). Threads are NTHREADS zeroed TCBs,
 * named by their index; one queue.
 *
 * Protocol: one command per line on stdin, one answer line per command.
 *   I id prio   queue thread id at priority prio          -> "ok"
 *   R id        take thread id out                        -> "ok"
 *   P           take the head out                          -> "<id>" or "-"
 *   O id prio   thread id, queued, changes priority        -> "ok"
 *   L           the queue from head to tail                -> "<id> ..." or "-"
 *   V           links, ends and order (tqueue_violation)   -> "ok" or the violation
 *   X id prio   thread id's priority field changed without reordering:
 *               a corruption the kernel never makes, for the check's test -> "ok"
 * A command the queue's preconditions forbid (a queued thread queued again,
 * an absent one removed or reordered) answers "refused": the kernel never
 * makes those calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <object.h>
#include <queue.h>

#define NTHREADS 512

/* Each TCB in a naturally aligned 2^TCB_BITS block, as the kernel's are. */
static union {
    struct tcb t;
    char object[1u << TCB_BITS];
} objects[NTHREADS] __attribute__((aligned(1u << TCB_BITS)));
#define threads_at(i) (&objects[(i)].t)
static bool queued[NTHREADS];
static struct thread_queue q;

int main(void)
{
    char line[128];
    while (fgets(line, sizeof(line), stdin)) {
        unsigned id = 0, prio = 0;
        if (sscanf(line, "I %u %u", &id, &prio) == 2) {
            if (id >= NTHREADS || queued[id] || prio >= CONFIG_NUM_PRIORITIES) {
                puts("refused");
                continue;
            }
            threads_at(id)->priority = prio;
            tqueue_insert(&q, threads_at(id));
            queued[id] = true;
            puts("ok");
        } else if (sscanf(line, "R %u", &id) == 1) {
            if (id >= NTHREADS || !queued[id]) {
                puts("refused");
                continue;
            }
            tqueue_remove(&q, threads_at(id));
            queued[id] = false;
            puts("ok");
        } else if (sscanf(line, "O %u %u", &id, &prio) == 2) {
            if (id >= NTHREADS || !queued[id] || prio >= CONFIG_NUM_PRIORITIES) {
                puts("refused");
                continue;
            }
            threads_at(id)->priority = prio;
            tqueue_reorder(&q, threads_at(id));
            puts("ok");
        } else if (sscanf(line, "X %u %u", &id, &prio) == 2) {
            if (id >= NTHREADS || prio >= CONFIG_NUM_PRIORITIES) {
                puts("refused");
                continue;
            }
            threads_at(id)->priority = prio;
            puts("ok");
        } else if (line[0] == 'P') {
            struct tcb *t = tqueue_pop(&q);
            if (!t) {
                puts("-");
                continue;
            }
            unsigned i = (unsigned)((char *)t - (char *)objects) >> TCB_BITS;
            queued[i] = false;
            if (t->queue_next || t->queue_prev)
                printf("%u with links left\n", i);
            else
                printf("%u\n", i);
        } else if (line[0] == 'L') {
            if (!q.head)
                fputs("-", stdout);
            for (struct tcb *t = q.head; t; t = t->queue_next)
                printf("%s%u", t == q.head ? "" : " ", (unsigned)(((char *)t - (char *)objects) >> TCB_BITS));
            putchar('\n');
        } else if (line[0] == 'V') {
            const char *why = tqueue_violation(&q, NTHREADS + 1);
            puts(why ? why : "ok");
        } else {
            fprintf(stderr, "bad command: %s", line);
            return 2;
        }
    }
    return 0;
}
