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

int main(void)
{
    hook_main();
    square_main();
    return 0;
}
