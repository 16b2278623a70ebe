/* The page the server writes and client_hi reads (memory region stats). */
#ifndef PASSIVE_STATS_H
#define PASSIVE_STATS_H
#include <stdint.h>

struct server_stats {
    volatile uint64_t calls[64]; /* per channel of the server */
};

#define SERVER_OP_ADD 1 /* label: reply with MR0 + MR1 */
#endif
