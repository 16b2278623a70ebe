/* Recursion for the WCET tests (tests/wcet/test_recursion.py): a doubly
 * recursive Fibonacci, a mutual recursion (ping <-> pong) and a recursive
 * quicksort, each entered with an input that bounds its depth. */

volatile long n_in = 10;
volatile int data[12];
long out;

__attribute__((noinline)) long fib(long n)
{
    if (n < 2)
        return n;
    return fib(n - 1) + fib(n - 2);
}

long pong(long n);

__attribute__((noinline)) long ping(long n)
{
    if (n <= 0)
        return 0;
    return 2 + pong(n - 1);
}

__attribute__((noinline)) long pong(long n)
{
    if (n <= 0)
        return 1;
    return 3 * ping(n - 1);
}

__attribute__((noinline)) void qsort_range(int lo, int hi)
{
    if (lo >= hi)
        return;
    int pivot = data[hi];
    int i = lo;
    for (int j = lo; j < hi; j++) {
        if (data[j] < pivot) {
            int t = data[i];
            data[i] = data[j];
            data[j] = t;
            i++;
        }
    }
    int t = data[i];
    data[i] = data[hi];
    data[hi] = t;
    qsort_range(lo, i - 1);
    qsort_range(i + 1, hi);
}

static long clamp(long n)
{
    return n < 0 ? 0 : n > 10 ? 10 : n;
}

long fib_main(void)
{
    out = fib(clamp(n_in));
    return out;
}

long ping_main(void)
{
    out = ping(clamp(n_in));
    return out;
}

void sort_main(void)
{
    qsort_range(0, 11);
}

int main(void)
{
    fib_main();
    ping_main();
    sort_main();
    return 0;
}
