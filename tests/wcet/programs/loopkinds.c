/* Loop shapes the counted-loop methods cannot bound by themselves, each
 * bounded by one general mechanism of the analyser (tests/wcet/test_loop_kinds.py):
 *
 *   ring_drain   counter loaded from a structure field: bounded from the
 *                annotated system parameter (ring.toml, `parameter`/`of`);
 *   take_extra   limit kept in a stack structure across a call in the loop
 *                (the callee cannot reach a frame whose address never escapes);
 *   emit_error   limit read from a global that is only ever stored with
 *                small constants;
 *   queue_find   walk along a list whose length is a system parameter;
 *   clear_small  memset-like loop whose size the caller checks before the call;
 *   print_digits digits produced by one counted loop, emitted by the next.
 *
 * Each entry is a driver that the tests run on the emulator to compare the
 * observed header counts with the bounds. */

typedef unsigned long word_t;
typedef unsigned int u32;

/* ---- refill-style ring ------------------------------------------------- */

struct slot { word_t time, amount; };
struct ring { u32 head, count, max; struct slot slots[8]; };

struct ring the_ring;
volatile word_t sink;

__attribute__((noinline)) void ring_drain(struct ring *r, word_t used)
{
    for (u32 n = r->count; n > 1 && r->slots[r->head].amount <= used; n--) {
        used -= r->slots[r->head].amount;
        r->head = (r->head + 1) % 8;
        r->count--;
    }
}

/* ---- a limit in a stack structure, a call in the loop ------------------ */

struct request { word_t n_extra; word_t got[3]; word_t label; };
word_t extra_table[64];

__attribute__((noinline)) word_t lookup(word_t key)
{
    sink = key;
    return extra_table[key & 63];
}

/* The structure's address escapes only after the loop. */
__attribute__((noinline)) word_t finish(const struct request *rq)
{
    word_t s = rq->label;
    for (word_t i = 0; i < 3; i++)
        s += rq->got[i];
    return s;
}

__attribute__((noinline)) word_t take_extra(word_t info)
{
    struct request rq;
    rq.n_extra = (info >> 7) & 3;
    rq.label = info >> 12;
    rq.got[0] = rq.got[1] = rq.got[2] = 0;
    for (word_t i = 0; i < rq.n_extra; i++) {
        word_t v = lookup(info + i);
        if (v == 0)
            return 0;
        rq.got[i] = v;
    }
    return finish(&rq);
}

/* ---- a global only stored with constants ------------------------------- */

word_t error_words[5];
word_t error_length;

__attribute__((noinline)) void set_error_range(word_t lo, word_t hi)
{
    error_length = 3;
    error_words[0] = 1;
    error_words[1] = lo;
    error_words[2] = hi;
}

__attribute__((noinline)) void set_error_code(word_t c)
{
    error_length = 1;
    error_words[0] = c;
}

__attribute__((noinline)) void emit_error(void)
{
    for (word_t i = 0; i < error_length; i++)
        sink = error_words[i];
}

/* ---- a list whose length is a parameter -------------------------------- */

struct node { struct node *next; word_t prio; };
struct node nodes[16];
struct node *queue_head;

__attribute__((noinline)) struct node *queue_find(word_t prio)
{
    struct node *p = queue_head;
    while (p && p->prio > prio)
        p = p->next;
    return p;
}

/* ---- a size the caller checks ------------------------------------------ */

unsigned char pool[256];

__attribute__((noinline)) void clear_small(unsigned char *d, word_t n)
{
    for (word_t i = 0; i < n; i++)
        d[i] = 0;
}

__attribute__((noinline)) int reset_pool(word_t size_bits)
{
    if (size_bits >= 7)
        return -1;
    clear_small(pool, 1ul << size_bits);
    return 0;
}

/* ---- digits, then their output ----------------------------------------- */

__attribute__((noinline)) void print_digits(word_t x)
{
    char buf[24];
    int n = 0;
    do {
        buf[n++] = (char)('0' + x % 10);
        x /= 10;
    } while (x != 0 && n < 24);
    while (n > 0)
        sink = (word_t)buf[--n];
}

/* ---- drivers ------------------------------------------------------------ */

word_t input_info, input_prio, input_bits, input_used, input_x, input_count;

int loopkinds_main(void)
{
    the_ring.max = 8;
    the_ring.count = (u32)(input_count % 8) + 1;
    for (u32 i = 0; i < 8; i++)
        the_ring.slots[i].amount = i + 1;
    ring_drain(&the_ring, input_used);
    for (int i = 0; i < 64; i++)
        extra_table[i] = (word_t)i + 1;
    sink = take_extra(input_info);
    if (input_info & 1)
        set_error_range(input_prio, input_bits);
    else
        set_error_code(input_x);
    emit_error();
    for (int i = 0; i < 15; i++) {
        nodes[i].next = &nodes[i + 1];
        nodes[i].prio = (word_t)(100 - i);
    }
    nodes[15].prio = 1;
    queue_head = &nodes[input_count % 16];
    sink = (word_t)queue_find(input_prio);
    reset_pool(input_bits);
    print_digits(input_x);
    return 0;
}

int main(void)
{
    return loopkinds_main();
}
