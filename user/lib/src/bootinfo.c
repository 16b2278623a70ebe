/*
 * Extra BootInfo records (seL4's populate_bi_frame): they start one page after
 * the BootInfo frame; each is {id, len} with len counting the 16-byte
 * header; bi->extraLen is the sum of the lens.
 */
#include <kairos/kairos.h>

const seL4_BootInfoHeader *kairos_bootinfo_find(const seL4_BootInfo *bi, seL4_Word id)
{
    if (bi == NULL) {
        return NULL;
    }
    const char *start = (const char *)bi + seL4_BootInfoFrameSize;
    seL4_Word off = 0;
    while (off + sizeof(seL4_BootInfoHeader) <= bi->extraLen) {
        const seL4_BootInfoHeader *h = (const seL4_BootInfoHeader *)(start + off);
        if (h->len < sizeof(seL4_BootInfoHeader) || h->len > bi->extraLen - off) {
            return NULL; /* malformed: would loop or overrun */
        }
        if (h->id == id) {
            return h;
        }
        off += h->len;
    }
    return NULL;
}

const void *kairos_bootinfo_fdt(const seL4_BootInfo *bi, size_t *size)
{
    const seL4_BootInfoHeader *h = kairos_bootinfo_find(bi, SEL4_BOOTINFO_HEADER_FDT);
    if (h == NULL) {
        return NULL;
    }
    if (size != NULL) {
        *size = (size_t)(h->len - sizeof(*h));
    }
    return h + 1;
}

const char *kairos_bootargs(void)
{
    size_t size;
    const void *fdt = kairos_bootinfo_fdt(kairos_bootinfo(), &size);
    if (fdt == NULL || kairos_fdt_check(fdt, size) != 0) {
        return "";
    }
    const char *args = kairos_fdt_bootargs(fdt);
    return args != NULL ? args : "";
}

bool kairos_arg_get(const char *args, const char *key, char *buf, size_t bufsize)
{
    size_t klen = 0;
    while (key[klen] != '\0') {
        klen++;
    }
    const char *p = args;
    while (p != NULL && *p != '\0') {
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        const char *tok = p;
        while (*p != '\0' && *p != ' ' && *p != '\t') {
            p++;
        }
        size_t tlen = (size_t)(p - tok);
        bool match = tlen > klen && tok[klen] == '=';
        for (size_t i = 0; match && i < klen; i++) {
            match = tok[i] == key[i];
        }
        if (match) {
            if (buf != NULL && bufsize > 0) {
                size_t n = tlen - klen - 1;
                if (n > bufsize - 1) {
                    n = bufsize - 1;
                }
                for (size_t i = 0; i < n; i++) {
                    buf[i] = tok[klen + 1 + i];
                }
                buf[n] = '\0';
            }
            return true;
        }
    }
    return false;
}
