/* Infeasible paths the analyser must find (tools/kairos/wcet/infeasible.py),
   and feasible look-alikes it must not cut.  `heavy` has a loop, so the
   path analysis summarises its calls; `noipa` keeps gcc from proving the
   facts itself and folding the branches away. */
volatile int sink;
int input;             /* inputs, patched by the tests */
int input2;
int flag;
int g;
int *alias_ptr = &g;   /* g's address is in initialised data: g escapes */
int h;

#define HELPER __attribute__((noipa, noinline))

HELPER static void heavy(int n)
{
    for (int i = 0; i < 40; i++)
        sink = sink * 3 + n + i;
}

/* The two calls exclude each other: x > 10, then x <= 10 on the same x. */
int correlated(void)
{
    int x = input;
    if (x > 10)
        heavy(1);
    __asm__ volatile("" : "+r"(x));   /* gcc cannot merge the tests; x is unchanged */
    if (x <= 10)
        heavy(2);
    return 0;
}

/* Look-alike: the second test reads another input; both calls can run. */
int correlated_lookalike(void)
{
    if (input > 10)
        heavy(1);
    if (input2 <= 10)
        heavy(2);
    return 0;
}

/* A flag cleared after its use: heavy runs once per entry. */
HELPER static void consume(void)
{
    if (flag)
        heavy(3);
    flag = 0;
}

int flag_entry(void)
{
    flag = input;
    consume();
    consume();
    consume();
    return 0;
}

/* Look-alike: the flag is cleared only on some paths; heavy may run thrice. */
HELPER static void consume_partial(void)
{
    if (h) {
        heavy(3);
        if (input2)
            h = 0;
    }
}

int flag_lookalike(void)
{
    h = input;
    consume_partial();
    consume_partial();
    consume_partial();
    return 0;
}

/* A function that always returns 0 (it has a loop: a summarised call). */
HELPER static int never(int n)
{
    for (int i = 0; i < 16; i++)
        sink = sink + n + i;
    return 0;
}

int const_return(void)
{
    if (never(input))
        heavy(4);
    return 0;
}

/* Look-alike: g is written through a pointer that may point to it. */
int alias_lookalike(void)
{
    g = 0;
    *alias_ptr = input;
    if (g)
        heavy(5);
    return 0;
}

/* Look-alike: a pointer into garr, computed with an index in one block and
   handed to a helper with a loop in another, may overwrite garr[3]. */
int garr[8];

HELPER static void put(int *p, int v)
{
    for (int i = 0; i < 4; i++)
        sink = sink + i;
    *p = v;
}

int pointer_lookalike(void)
{
    int *p = &garr[input & 7];
    garr[3] = 0;
    if (input2)
        sink = 1;
    put(p, 1);
    if (garr[3])
        heavy(6);
    return 0;
}

/* Look-alike: an object's word stored on one branch only, then tested in
   the block where both branches join.  The store's value (0) holds on the
   path through the store alone: on the other branch the word keeps what it
   held (1), and heavy runs.  The pointer is loaded from memory, so the
   analysis sees an object of unknown address; the join does enough work
   that gcc keeps it one block instead of copying it into both branches. */
struct obj {
    int a, b;
};
struct obj the_obj = {1, 0};
int work;
struct obj *obj_ptr = &the_obj;

int store_lookalike(void)
{
    struct obj *o = obj_ptr;
    if (input) {
        o->a = 0;
        sink = sink * 5 + input;
        sink = sink * 7 + input;
    } else {
        sink = 2;
    }
    /* (work, not the volatile sink: a store to an untracked word stops the
       forwarding of object memory the look-alike is about) */
    work = work * 9 + input2;
    __asm__ volatile("" ::: "memory");
    work = work * 11 + input2;
    __asm__ volatile("" ::: "memory");   /* gcc cannot know o->a here: the load is in the join */
    if (o->a)
        heavy(7);
    return 0;
}

int main(void)
{
    return correlated() + correlated_lookalike() + flag_entry() + flag_lookalike() + const_return() +
           alias_lookalike() + pointer_lookalike() + store_lookalike();
}
