/* Calls through function pointers for the WCET tests
 * (tests/wcet/test_indirect_calls.py): one through a pointer variable the
 * program may change (its target needs a [[call]] annotation), one through
 * a constant pointer the compiler leaves as an indirect call. */

volatile long x_in = 5;
long out;

__attribute__((noinline)) long twice(long x)
{
    long s = 0;
    for (int i = 0; i < 8; i++)
        s += x;
    return s / 4;
}

__attribute__((noinline)) long square(long x)
{
    return x * x;
}

const int not_code = 7;

long (*volatile hook)(long) = twice;

__attribute__((noinline)) long apply_hook(long x)
{
    return hook(x) + 1;
}

long hook_main(void)
{
    out = apply_hook(x_in);
    return out;
}

long square_main(void)
{
    long (*volatile f)(long) = square;
    out = f(x_in);
    return out;
}

void switch_main(void);

int main(void)
{
    hook_main();
    switch_main();
    square_main();
    return 0;
}

void switch_main(void);

/* A switch on the outer loop's counter inside an inner loop (TACLeBench's
 * bitcount): gcc scales the counter into the jump table's address in the
 * outer loop and checks its range in the inner one. */
volatile unsigned inner_n = 3;
long acc;

__attribute__((noinline)) long op0(long x) { return x + 1; }
__attribute__((noinline)) long op1(long x) { return x ^ 5; }
__attribute__((noinline)) long op2(long x) { return x * 3; }
__attribute__((noinline)) long op3(long x) { return x - 7; }
__attribute__((noinline)) long op4(long x) { return x << 2; }
__attribute__((noinline)) long op5(long x) { return x | 9; }

void switch_main(void)
{
    for (unsigned i = 0; i < 6; i++) {
        for (unsigned j = 0; j < inner_n && j < 4; j++) {
            switch (i) {
            case 0: acc += op0(j); break;
            case 1: acc += op1(j); break;
            case 2: acc += op2(j); break;
            case 3: acc += op3(j); break;
            case 4: acc += op4(j); break;
            case 5: acc += op5(j); break;
            default: break;
            }
        }
    }
}
