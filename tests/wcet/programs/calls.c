/* A recursion-free call chain: chain_main -> stage1 -> stage2 -> stage3,
   each with a counted loop; a leaf helper called from two sites.
   Single-path with statically known addresses. */
int buf[32];
int result;

static int __attribute__((noinline)) leaf(int x)
{
    return (x * 5 + 3) ^ (x >> 2);
}

static int __attribute__((noinline)) stage3(int seed)
{
    int s = 0;
    for (int i = 0; i < 8; i++)
        s += buf[i + 16] + leaf(seed + i);
    return s;
}

static int __attribute__((noinline)) stage2(int seed)
{
    for (int i = 0; i < 16; i++)
        buf[i] = leaf(seed + i);
    return stage3(seed) + buf[7];
}

static int __attribute__((noinline)) stage1(int seed)
{
    int a = stage2(seed);
    int b = stage2(seed + 1);
    return a - b;
}

int chain_main(void)
{
    result = stage1(11);
    return result;
}

int main(void)
{
    return chain_main();
}
