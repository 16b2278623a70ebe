/*
 * ELF64 validation and page filling for loading the root task.
 *
 * The root task arrives as an ordinary static riscv64 ELF file (the initrd),
 * untrusted. elf_parse() checks everything the loader relies on and reduces
 * the file to a list of loadable segments; elf_fill_page() then produces the
 * contents of any 4 KiB page of the image, so the kernel can copy the image
 * page by page into frames without ever reading outside the file.
 *
 * Segments: PT_LOAD program headers with p_memsz > 0, sorted by vaddr in
 * struct elf_image (error messages number segments by their index in the
 * program header table). Segments may share a page (their byte ranges may
 * not overlap); p_align is not checked (any alignment >= 4 KiB is fine, and
 * loading is byte-exact so smaller ones work too).
 */
#ifndef KAIROS_ELF_H
#define KAIROS_ELF_H

#include <types.h>

#define ELF_MAX_SEGMENTS 16
#define ELF_PAGE_SIZE 4096u

/* Segment flags (p_flags). */
#define ELF_PF_X 1u
#define ELF_PF_W 2u
#define ELF_PF_R 4u

/* Error codes (negative); elf_strerror() gives a one-line message. */
#define ELF_ERR_BADARG (-1)          /* NULL pointer */
#define ELF_ERR_TOO_SMALL (-2)       /* smaller than the ELF header */
#define ELF_ERR_BAD_MAGIC (-3)
#define ELF_ERR_NOT_64 (-4)          /* not ELFCLASS64 */
#define ELF_ERR_NOT_LE (-5)          /* not little-endian */
#define ELF_ERR_BAD_VERSION (-6)     /* EI_VERSION / e_version not 1 */
#define ELF_ERR_WRONG_MACHINE (-7)   /* e_machine != EM_RISCV */
#define ELF_ERR_DYN (-8)             /* ET_DYN: position-independent */
#define ELF_ERR_NOT_EXEC (-9)        /* other e_type */
#define ELF_ERR_PHENTSIZE (-10)      /* e_phentsize != 56 */
#define ELF_ERR_PH_OUTSIDE (-11)     /* program header table outside the file */
#define ELF_ERR_NO_LOAD (-12)        /* no PT_LOAD with memsz > 0 */
#define ELF_ERR_TOO_MANY (-13)       /* more than ELF_MAX_SEGMENTS */
#define ELF_ERR_TRUNCATED (-14)      /* segment file range past end of file */
#define ELF_ERR_FILESZ (-15)         /* p_filesz > p_memsz */
#define ELF_ERR_OVERFLOW (-16)       /* vaddr + memsz (or offset + filesz) wraps */
#define ELF_ERR_ABOVE_TOP (-17)      /* segment ends above user_top */
#define ELF_ERR_OVERLAP (-18)        /* two segments overlap in virtual address */
#define ELF_ERR_ENTRY (-19)          /* entry point not inside a loadable segment */
#define ELF_ERR_MIN (-19)

#define EM_RISCV 243

struct elf_segment {
    u64 vaddr, memsz, offset, filesz;
    u32 flags; /* ELF_PF_* */
};

struct elf_image {
    u64 entry;
    u32 n_seg;
    struct elf_segment seg[ELF_MAX_SEGMENTS]; /* sorted by vaddr */
    u64 lowest_vaddr, highest_vaddr_end;      /* [lowest, highest_end) spans all segments */
};

/* Validate the ELF file data[0, size) and describe its loadable segments.
 * user_top: every segment must end at or below it. Returns 0 or ELF_ERR_*. */
int elf_parse(const void *data, u64 size, u64 user_top, struct elf_image *out);

/* One-line message; for the most recent elf_parse() failure it carries the
 * detail (e.g. "truncated ELF: segment 2 file range past end"). */
const char *elf_strerror(int err);

/* Fill the 4 KiB page at page_vaddr (aligned down if not aligned) with the
 * bytes of every loadable segment that intersects it; zero elsewhere (bss
 * and gaps). img must come from a successful elf_parse() of the same data. */
void elf_fill_page(const struct elf_image *img, const void *data, u64 page_vaddr, void *page4k);

#endif
