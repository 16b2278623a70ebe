/* Searching: binary and linear search in a sorted 64-entry table.
   Multi-path; the harness patches `target`. */
#define N 64
unsigned keys[N];
unsigned target = 77;
int found_index;

static void __attribute__((noinline)) fill_keys(void)
{
    for (unsigned i = 0; i < N; i++)
        keys[i] = 3 * i + 1;
}

int binary_search(void)
{
    int lo = 0, hi = N - 1, idx = -1;
    unsigned t = target;
    while (lo <= hi) {
        int mid = (lo + hi) >> 1;
        unsigned k = keys[mid];
        if (k == t) { idx = mid; break; }
        if (k < t) lo = mid + 1; else hi = mid - 1;
    }
    found_index = idx;
    return idx;
}

int linear_search(void)
{
    unsigned t = target;
    for (int i = 0; i < N; i++) {
        if (keys[i] == t) {
            found_index = i;
            return i;
        }
    }
    found_index = -1;
    return -1;
}

int search_main(void)
{
    fill_keys();
    return binary_search() + linear_search();
}

int main(void)
{
    return search_main();
}
