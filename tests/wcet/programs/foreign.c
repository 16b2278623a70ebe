/* Small programs in the style of the WCET community's benchmark suites
 * (Mälardalen, TACLeBench), written for these tests: the analyser has no
 * annotation for any of them (tests/wcet/test_foreign.py).  Built with the
 * flags of progbuild.CFLAGS. */

typedef unsigned long word_t;

volatile word_t out;
word_t seed_in, n_in;

/* Fibonacci by iteration, a constant count. */
__attribute__((noinline)) word_t fib(void)
{
    word_t a = 0, b = 1;
    for (int i = 0; i < 30; i++) {
        word_t t = a + b;
        a = b;
        b = t;
    }
    return a;
}

/* Insertion sort of a fixed array (triangular nest). */
int keys[20];

__attribute__((noinline)) void insort(void)
{
    for (int i = 1; i < 20; i++) {
        int k = keys[i], j = i - 1;
        while (j >= 0 && keys[j] > k) {
            keys[j + 1] = keys[j];
            j--;
        }
        keys[j + 1] = k;
    }
}

/* Square root by bisection: 32 halvings of the interval. */
__attribute__((noinline)) word_t isqrt(word_t x)
{
    word_t lo = 0, hi = 1ul << 32;
    for (int i = 0; i < 33; i++) {
        word_t mid = (lo + hi) / 2;
        if (mid * mid <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* A count from an input clamped before the loop (expint-style). */
__attribute__((noinline)) word_t series(word_t n)
{
    if (n > 50)
        n = 50;
    word_t s = 0;
    for (word_t i = 0; i < n; i++)
        s += i * i;
    return s;
}

/* No bound exists in the code: the Collatz walk of an input. */
__attribute__((noinline)) word_t collatz(word_t x)
{
    word_t steps = 0;
    while (x > 1) {
        x = (x & 1) ? 3 * x + 1 : x / 2;
        steps++;
    }
    return steps;
}

int foreign_main(void)
{
    out = fib();
    for (int i = 0; i < 20; i++)
        keys[i] = (int)((seed_in * (word_t)(i + 7)) % 101);
    insort();
    out = isqrt(seed_in);
    out = series(n_in);
    return 0;
}

int main(void)
{
    out = collatz(seed_in);
    return foreign_main();
}
