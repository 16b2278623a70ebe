/* 8x8 integer matrix multiply C = A * B: single-path. */
#define N 8
int A[N][N], B[N][N], C[N][N];

void matmul(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int s = 0;
            for (int k = 0; k < N; k++)
                s += A[i][k] * B[k][j];
            C[i][j] = s;
        }
}

int main(void)
{
    matmul();
    return C[1][2];
}
