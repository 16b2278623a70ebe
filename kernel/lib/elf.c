/*
 * ELF64 validation and loading helpers (see elf.h).
 *
 * Layout facts used (ELF-64 Object File Format / System V gABI):
 *  Ehdr (64 bytes): e_ident[16] (magic 7f 'E' 'L' 'F', EI_CLASS at 4,
 *  EI_DATA at 5, EI_VERSION at 6), e_type u16 @16, e_machine u16 @18,
 *  e_version u32 @20, e_entry u64 @24, e_phoff u64 @32, e_phentsize u16 @54,
 *  e_phnum u16 @56.
 *  Phdr (56 bytes): p_type u32 @0, p_flags u32 @4, p_offset u64 @8,
 *  p_vaddr u64 @16, p_paddr u64 @24, p_filesz u64 @32, p_memsz u64 @40,
 *  p_align u64 @48.
 *
 * All fields are read byte-wise (little-endian) after a bounds check, so the
 * file may sit at any alignment and nothing outside [data, data+size) is read.
 */
#include <elf.h>
#include <string.h>

#define EHDR_SIZE 64u
#define PHDR_SIZE 56u
#define ELFCLASS64 2
#define ELFDATA2LSB 1
#define EV_CURRENT 1
#define ET_EXEC 2
#define ET_DYN 3
#define PT_LOAD 1u

static u16 rd16(const u8 *p)
{
    return (u16)(p[0] | (p[1] << 8));
}

static u32 rd32(const u8 *p)
{
    return (u32)p[0] | ((u32)p[1] << 8) | ((u32)p[2] << 16) | ((u32)p[3] << 24);
}

static u64 rd64(const u8 *p)
{
    return (u64)rd32(p) | ((u64)rd32(p + 4) << 32);
}

/* ---- error detail ------------------------------------------------------ */

static char err_buf[96];
static int err_code;

static void err_append(u32 *pos, const char *s)
{
    for (u32 i = 0; s[i] != '\0' && *pos + 1 < sizeof(err_buf); i++) {
        err_buf[(*pos)++] = s[i];
    }
    err_buf[*pos] = '\0';
}

static void err_append_num(u32 *pos, u64 v)
{
    char tmp[24];
    u32 n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0 && n < sizeof(tmp));
    while (n > 0 && *pos + 1 < sizeof(err_buf)) {
        err_buf[(*pos)++] = tmp[--n];
    }
    err_buf[*pos] = '\0';
}

static const char *generic_msg(int err)
{
    switch (err) {
    case 0: return "no error";
    case ELF_ERR_BADARG: return "no ELF (NULL pointer)";
    case ELF_ERR_TOO_SMALL: return "not an ELF file: smaller than the ELF header";
    case ELF_ERR_BAD_MAGIC: return "not an ELF file: bad magic";
    case ELF_ERR_NOT_64: return "not a 64-bit ELF (ELFCLASS64 required)";
    case ELF_ERR_NOT_LE: return "not a little-endian ELF";
    case ELF_ERR_BAD_VERSION: return "unsupported ELF version";
    case ELF_ERR_WRONG_MACHINE: return "wrong architecture: ELF is not RISC-V (EM_RISCV=243)";
    case ELF_ERR_DYN: return "position-independent (ET_DYN) ELF not supported";
    case ELF_ERR_NOT_EXEC: return "ELF is not an executable (ET_EXEC required)";
    case ELF_ERR_PHENTSIZE: return "bad ELF program header size (e_phentsize != 56)";
    case ELF_ERR_PH_OUTSIDE: return "ELF program headers outside the file";
    case ELF_ERR_NO_LOAD: return "ELF has no loadable segment";
    case ELF_ERR_TOO_MANY: return "ELF has too many loadable segments (max 16)";
    case ELF_ERR_TRUNCATED: return "truncated ELF: segment file range past end";
    case ELF_ERR_FILESZ: return "ELF segment has filesz > memsz";
    case ELF_ERR_OVERFLOW: return "ELF segment address range overflows";
    case ELF_ERR_ABOVE_TOP: return "ELF segment ends above the user address space top";
    case ELF_ERR_OVERLAP: return "ELF segments overlap in virtual memory";
    case ELF_ERR_ENTRY: return "ELF entry point is outside every loadable segment";
    default: return "unknown ELF error";
    }
}

/* Record an error; with seg >= 0 the message names the segment, built from
 * prefix + " N" + suffix (e.g. "truncated ELF: segment" 3 "file range..."). */
static int fail_seg(int code, const char *prefix, int seg, const char *suffix)
{
    u32 pos = 0;
    err_code = code;
    err_buf[0] = '\0';
    err_append(&pos, prefix);
    if (seg >= 0) {
        err_append(&pos, " ");
        err_append_num(&pos, (u64)seg);
        err_append(&pos, suffix);
    }
    return code;
}

static int fail(int code)
{
    return fail_seg(code, generic_msg(code), -1, "");
}

const char *elf_strerror(int err)
{
    if (err != 0 && err == err_code && err_buf[0] != '\0') {
        return err_buf;
    }
    return generic_msg(err);
}

/* ---- parsing ------------------------------------------------------------- */

int elf_parse(const void *data, u64 size, u64 user_top, struct elf_image *out)
{
    const u8 *d = data;
    if (out == NULL) {
        return ELF_ERR_BADARG;
    }
    memset(out, 0, sizeof(*out));
    if (d == NULL) {
        return fail(ELF_ERR_BADARG);
    }
    if (size < EHDR_SIZE) {
        return fail(ELF_ERR_TOO_SMALL);
    }
    if (d[0] != 0x7f || d[1] != 'E' || d[2] != 'L' || d[3] != 'F') {
        return fail(ELF_ERR_BAD_MAGIC);
    }
    if (d[4] != ELFCLASS64) {
        return fail(ELF_ERR_NOT_64);
    }
    if (d[5] != ELFDATA2LSB) {
        return fail(ELF_ERR_NOT_LE);
    }
    if (d[6] != EV_CURRENT || rd32(d + 20) != EV_CURRENT) {
        return fail(ELF_ERR_BAD_VERSION);
    }
    if (rd16(d + 18) != EM_RISCV) {
        return fail(ELF_ERR_WRONG_MACHINE);
    }
    u16 type = rd16(d + 16);
    if (type == ET_DYN) {
        return fail(ELF_ERR_DYN);
    }
    if (type != ET_EXEC) {
        return fail(ELF_ERR_NOT_EXEC);
    }
    u64 entry = rd64(d + 24), phoff = rd64(d + 32);
    u32 phentsize = rd16(d + 54), phnum = rd16(d + 56);
    if (phentsize != PHDR_SIZE) {
        return fail(ELF_ERR_PHENTSIZE);
    }
    /* phnum <= 65535, so phnum * 56 < 2^22: only phoff + that can wrap. */
    u64 phbytes = (u64)phnum * PHDR_SIZE;
    if (phoff > size || phbytes > size - phoff) {
        return fail(ELF_ERR_PH_OUTSIDE);
    }

    /* Collect loadable segments in program header order; the loop is bounded
     * by phnum (<= 65535), each header checked to lie in the file above. */
    for (u32 i = 0; i < phnum; i++) {
        const u8 *ph = d + phoff + (u64)i * PHDR_SIZE;
        if (rd32(ph) != PT_LOAD) {
            continue;
        }
        struct elf_segment s;
        s.flags = rd32(ph + 4);
        s.offset = rd64(ph + 8);
        s.vaddr = rd64(ph + 16);
        s.filesz = rd64(ph + 32);
        s.memsz = rd64(ph + 40);
        if (s.memsz == 0) {
            continue; /* occupies no memory: nothing to load */
        }
        if (out->n_seg >= ELF_MAX_SEGMENTS) {
            return fail(ELF_ERR_TOO_MANY);
        }
        if (s.offset > size || s.filesz > size - s.offset) {
            return fail_seg(ELF_ERR_TRUNCATED, "truncated ELF: segment", (int)i,
                            " file range past end");
        }
        if (s.filesz > s.memsz) {
            return fail_seg(ELF_ERR_FILESZ, "ELF segment", (int)i, " has filesz > memsz");
        }
        if (s.vaddr + s.memsz < s.vaddr) {
            return fail_seg(ELF_ERR_OVERFLOW, "ELF segment", (int)i,
                            " address range overflows");
        }
        if (s.vaddr + s.memsz > user_top) {
            return fail_seg(ELF_ERR_ABOVE_TOP, "ELF segment", (int)i,
                            " ends above the user address space top");
        }
        /* Byte ranges must be disjoint (sharing a page is fine). */
        for (u32 j = 0; j < out->n_seg; j++) {
            const struct elf_segment *o = &out->seg[j];
            if (s.vaddr < o->vaddr + o->memsz && o->vaddr < s.vaddr + s.memsz) {
                return fail_seg(ELF_ERR_OVERLAP, "ELF segments overlap: segment", (int)i,
                                " overlaps an earlier loadable segment");
            }
        }
        out->seg[out->n_seg++] = s;
    }
    if (out->n_seg == 0) {
        return fail(ELF_ERR_NO_LOAD);
    }

    /* Insertion sort by vaddr (at most 16 entries). */
    for (u32 i = 1; i < out->n_seg; i++) {
        struct elf_segment s = out->seg[i];
        u32 j = i;
        while (j > 0 && out->seg[j - 1].vaddr > s.vaddr) {
            out->seg[j] = out->seg[j - 1];
            j--;
        }
        out->seg[j] = s;
    }
    out->lowest_vaddr = out->seg[0].vaddr;
    out->highest_vaddr_end = 0;
    bool entry_ok = false;
    for (u32 i = 0; i < out->n_seg; i++) {
        u64 end = out->seg[i].vaddr + out->seg[i].memsz;
        if (end > out->highest_vaddr_end) {
            out->highest_vaddr_end = end;
        }
        if (entry >= out->seg[i].vaddr && entry < end) {
            entry_ok = true;
        }
    }
    if (!entry_ok) {
        return fail(ELF_ERR_ENTRY);
    }
    out->entry = entry;
    err_code = 0;
    err_buf[0] = '\0';
    return 0;
}

void elf_fill_page(const struct elf_image *img, const void *data, u64 page_vaddr, void *page4k)
{
    const u8 *d = data;
    u8 *page = page4k;
    u64 pstart = page_vaddr & ~(u64)(ELF_PAGE_SIZE - 1);
    u64 pend = pstart + ELF_PAGE_SIZE; /* 0 if the page is the last of the space */

    memset(page, 0, ELF_PAGE_SIZE);
    if (img == NULL || d == NULL) {
        return;
    }
    u32 n = img->n_seg <= ELF_MAX_SEGMENTS ? img->n_seg : ELF_MAX_SEGMENTS;
    for (u32 i = 0; i < n; i++) {
        const struct elf_segment *s = &img->seg[i];
        /* Only the file-backed part [vaddr, vaddr + filesz) has bytes to
         * copy; the rest of memsz is bss and stays zero. elf_parse()
         * checked vaddr + memsz does not wrap and offset + filesz <= size. */
        u64 fstart = s->vaddr, fend = s->vaddr + s->filesz;
        u64 lo = fstart > pstart ? fstart : pstart;
        u64 hi = (pend != 0 && fend > pend) ? pend : fend;
        if (lo >= hi) {
            continue;
        }
        memcpy(page + (lo - pstart), d + s->offset + (lo - fstart), (size_t)(hi - lo));
    }
}
