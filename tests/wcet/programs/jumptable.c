/* A bytecode interpreter whose dispatch is a dense 10-case switch, which
   gcc -O2 compiles to a jump table.  Multi-path; the harness patches
   `program`. */
#define LEN 24
unsigned char program[LEN] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 1, 3, 5, 7, 9, 0, 2, 4, 6, 8, 1, 2, 3};
long acc_out;

long interpret(void)
{
    long acc = 1, reg = 3;
    for (int pc = 0; pc < LEN; pc++) {
        switch (program[pc]) {
        case 0: acc += 7; break;
        case 1: acc ^= reg; break;
        case 2: acc <<= 1; break;
        case 3: reg = acc - reg; break;
        case 4: acc = acc * 3; break;
        case 5: acc -= 11; break;
        case 6: reg += acc >> 2; break;
        case 7: acc |= 0x40; break;
        case 8: acc &= 0xFFFF; break;
        case 9: reg ^= 0x55; acc += reg; break;
        default: acc = 0; break;
        }
    }
    acc_out = acc;
    return acc;
}

int main(void)
{
    return (int)interpret();
}
