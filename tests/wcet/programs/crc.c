/* CRC-32 (reflected, poly 0xEDB88320) of a 64-byte message.
   crc_bitwise is branch-free, hence single-path with statically known data
   addresses; crc_table uses a 256-entry table indexed by data. */
#define LEN 64
unsigned char msg[LEN] = "The quick brown fox jumps over the lazy dog, 0123456789 abcdefgh";
unsigned crc_out;
static unsigned table[256];

unsigned crc_bitwise(void)
{
    unsigned crc = 0xFFFFFFFFu;
    for (int i = 0; i < LEN; i++) {
        crc ^= msg[i];
        for (int b = 0; b < 8; b++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    crc_out = ~crc;
    return crc_out;
}

static void __attribute__((noinline)) crc_init_table(void)
{
    for (unsigned n = 0; n < 256; n++) {
        unsigned c = n;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
        table[n] = c;
    }
}

unsigned crc_table(void)
{
    crc_init_table();
    unsigned crc = 0xFFFFFFFFu;
    for (int i = 0; i < LEN; i++)
        crc = table[(crc ^ msg[i]) & 0xFF] ^ (crc >> 8);
    crc_out = ~crc;
    return crc_out;
}

int main(void)
{
    return (int)(crc_bitwise() ^ crc_table());
}
