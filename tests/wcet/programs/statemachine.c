/* A tokenizer state machine over a 32-byte input: counts numbers, words
   and punctuation.  Multi-path; the harness patches `input`. */
#define LEN 32
char input[LEN] = "ab 12, cd;e 345 fg. 6 hij 7,,8 k";
int counts[3];

enum { IDLE, WORD, NUMBER };

static int cls(char c)
{
    if (c >= '0' && c <= '9') return 1;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return 2;
    if (c == ',' || c == ';' || c == '.') return 3;
    return 0;
}

void tokenize(void)
{
    int state = IDLE;
    int nw = 0, nn = 0, np = 0;
    for (int i = 0; i < LEN; i++) {
        int c = cls(input[i]);
        if (c == 3) np++;
        if (state == IDLE) {
            if (c == 1) { state = NUMBER; nn++; }
            else if (c == 2) { state = WORD; nw++; }
        } else if (state == WORD) {
            if (c != 2 && c != 1) state = IDLE;
        } else {
            if (c == 2) { state = WORD; nw++; }
            else if (c != 1) state = IDLE;
        }
    }
    counts[0] = nw;
    counts[1] = nn;
    counts[2] = np;
}

int main(void)
{
    tokenize();
    return counts[0];
}
