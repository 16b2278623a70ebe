/* Sorting: bubble sort (fixed passes, so its loop bounds are exact) and
   insertion sort (data-dependent inner loop) of a 16-element global array.
   Multi-path (data-dependent swaps); the harness patches `data`. */
#define N 16
int data[N] = {9, 3, 14, 1, 7, 12, 0, 5, 15, 2, 11, 6, 8, 13, 4, 10};

void bubble_sort(void)
{
    for (int i = 0; i < N - 1; i++) {
        for (int j = 0; j < N - 1; j++) {
            if (data[j] > data[j + 1]) {
                int t = data[j];
                data[j] = data[j + 1];
                data[j + 1] = t;
            }
        }
    }
}

void insertion_sort(void)
{
    for (int i = 1; i < N; i++) {
        int v = data[i];
        int j = i - 1;
        while (j >= 0 && data[j] > v) {
            data[j + 1] = data[j];
            j--;
        }
        data[j + 1] = v;
    }
}

int main(void)
{
    bubble_sort();
    return data[0];
}
