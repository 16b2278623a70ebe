/* Nested counted loops (3 levels) over a 6x5x4 accumulation and a
   2-D stencil: single-path with statically known addresses. */
int grid[10][12];
int out[8][10];
long total;

long nested_sum(void)
{
    long s = 0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 5; j++)
            for (int k = 0; k < 4; k++)
                s += (i + 1) * (j + 2) + k;
    total = s;
    return s;
}

void stencil(void)
{
    for (int i = 1; i < 9; i++)
        for (int j = 1; j < 11; j++)
            out[i - 1][j - 1] = grid[i - 1][j] + grid[i + 1][j] + grid[i][j - 1] + grid[i][j + 1]
                                - 4 * grid[i][j];
}

int main(void)
{
    stencil();
    return (int)nested_sum();
}
