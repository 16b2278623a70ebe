/*
 * Flattened device tree parser (see fdt.h for what it extracts and why).
 *
 * Blob format (Devicetree Specification, "Flattened Devicetree Format"):
 * a 40-byte big-endian header, a memory reservation block of {u64 address,
 * u64 size} pairs ending with {0, 0}, a structure block of 4-byte aligned
 * big-endian tokens, and a strings block holding property names.
 *
 * Every read goes through rd32/rd64 with an explicit bounds check done
 * before it, because the blob is untrusted input: a bad blob must produce an
 * error message, never a read outside the buffer. Reads are byte-wise, so
 * the blob need not be aligned.
 */
#include <fdt.h>
#include <string.h>

#define FDT_BEGIN_NODE 1u
#define FDT_END_NODE 2u
#define FDT_PROP 3u
#define FDT_NOP 4u
#define FDT_END 9u

/* Header field offsets. */
#define H_MAGIC 0
#define H_TOTALSIZE 4
#define H_OFF_STRUCT 8
#define H_OFF_STRINGS 12
#define H_OFF_RSVMAP 16
#define H_VERSION 20
#define H_LAST_COMP 24
#define H_SIZE_STRINGS 32
#define H_SIZE_STRUCT 36

static u32 rd32(const u8 *p)
{
    return ((u32)p[0] << 24) | ((u32)p[1] << 16) | ((u32)p[2] << 8) | (u32)p[3];
}

static u64 rd64(const u8 *p)
{
    return ((u64)rd32(p) << 32) | (u64)rd32(p + 4);
}

/* ---- error detail ------------------------------------------------------ */

/* Detailed message of the last failure, so fdt_strerror() can say where. */
static char err_buf[128];
static int err_code;

static void err_append(u32 *pos, const char *s)
{
    /* Bounded by the buffer; the last byte stays NUL. */
    for (u32 i = 0; s[i] != '\0' && *pos + 1 < sizeof(err_buf); i++) {
        err_buf[(*pos)++] = s[i];
    }
    err_buf[*pos] = '\0';
}

/* Append a bounded, possibly unterminated name taken from the blob. */
static void err_append_n(u32 *pos, const char *s, u32 n)
{
    for (u32 i = 0; i < n && i < 40 && s[i] != '\0' && *pos + 1 < sizeof(err_buf); i++) {
        char c = s[i];
        err_buf[(*pos)++] = (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    err_buf[*pos] = '\0';
}

static void err_append_num(u32 *pos, u64 v, bool hex)
{
    char tmp[24];
    u32 n = 0;
    u64 base = hex ? 16 : 10;
    if (hex) {
        err_append(pos, "0x");
    }
    /* At most 20 decimal digits in a u64. */
    do {
        u64 d = v % base;
        tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + (d - 10));
        v /= base;
    } while (v != 0 && n < sizeof(tmp));
    while (n > 0 && *pos + 1 < sizeof(err_buf)) {
        err_buf[(*pos)++] = tmp[--n];
    }
    err_buf[*pos] = '\0';
}

/* Record an error: msg, optionally " at offset N", optionally a name. */
static int fail(struct fdt_info *out, int code, const char *msg, u64 offset, const char *name,
                u32 name_len)
{
    u32 pos = 0;
    err_code = code;
    err_buf[0] = '\0';
    err_append(&pos, msg);
    if (name != NULL) {
        err_append(&pos, " '");
        err_append_n(&pos, name, name_len);
        err_append(&pos, "'");
    }
    err_append(&pos, " at offset ");
    err_append_num(&pos, offset, false);
    out->err_offset = (u32)offset;
    return code;
}

const char *fdt_strerror(int err)
{
    if (err == err_code && err != 0 && err_buf[0] != '\0') {
        return err_buf;
    }
    switch (err) {
    case 0: return "no error";
    case FDT_ERR_BADARG: return "no device tree (NULL pointer)";
    case FDT_ERR_TRUNCATED: return "device tree truncated";
    case FDT_ERR_BADMAGIC: return "device tree: bad magic";
    case FDT_ERR_BADVERSION: return "device tree: unsupported version";
    case FDT_ERR_BADLAYOUT: return "device tree: block outside totalsize or misaligned";
    case FDT_ERR_BADRESVMAP: return "device tree: memory reservation block not terminated";
    case FDT_ERR_BADTOKEN: return "device tree: bad structure token";
    case FDT_ERR_BADSTRUCT: return "device tree: malformed structure block";
    case FDT_ERR_BADNAME: return "device tree: unterminated node name";
    case FDT_ERR_BADPROP: return "device tree: property past end of structure block";
    case FDT_ERR_BADSTRING: return "device tree: bad property name offset";
    case FDT_ERR_DEPTH: return "device tree: nodes nested too deeply";
    case FDT_ERR_TOOMANYTOKENS: return "device tree: too many tokens";
    case FDT_ERR_TOOMANYMEM: return "device tree: too many memory ranges";
    case FDT_ERR_TOOMANYRESV: return "device tree: too many reserved ranges";
    case FDT_ERR_BADVALUE: return "device tree: malformed property value";
    case FDT_ERR_OVERFLOW: return "device tree: range wraps around the address space";
    default: return "device tree: unknown error";
    }
}

u32 fdt_total_size(const void *blob)
{
    const u8 *b = blob;
    if (b == NULL || rd32(b + H_MAGIC) != FDT_MAGIC) {
        return 0;
    }
    return rd32(b + H_TOTALSIZE);
}

/* ---- per-node scratch ---------------------------------------------------- */

/* Properties the kernel looks at. Their values are remembered per open node
 * and interpreted when the node ends, because property order is free. */
enum prop_id {
    P_REG,
    P_COMPATIBLE,
    P_DEVICE_TYPE,
    P_STATUS,
    P_INTERRUPTS,
    P_NDEV,
    P_ADDR_CELLS,
    P_SIZE_CELLS,
    P_TIMEBASE,
    P_ISA,
    P_ISA_EXT,
    P_BOOTARGS,
    P_INITRD_START,
    P_INITRD_END,
    P_COUNT
};

static const char *const prop_names[P_COUNT] = {
    [P_REG] = "reg",
    [P_COMPATIBLE] = "compatible",
    [P_DEVICE_TYPE] = "device_type",
    [P_STATUS] = "status",
    [P_INTERRUPTS] = "interrupts",
    [P_NDEV] = "riscv,ndev",
    [P_ADDR_CELLS] = "#address-cells",
    [P_SIZE_CELLS] = "#size-cells",
    [P_TIMEBASE] = "timebase-frequency",
    [P_ISA] = "riscv,isa",
    [P_ISA_EXT] = "riscv,isa-extensions",
    [P_BOOTARGS] = "bootargs",
    [P_INITRD_START] = "linux,initrd-start",
    [P_INITRD_END] = "linux,initrd-end",
};

enum node_kind { K_OTHER, K_ROOT, K_CHOSEN, K_CPUS, K_CPU, K_RESVMEM, K_RESVCHILD };

struct prop_ref {
    u32 off; /* offset of the value in the blob; valid when present */
    u32 len;
    bool present;
};

struct node {
    enum node_kind kind;
    u32 name_off, name_len;  /* node name in the blob (without NUL) */
    bool has_child;          /* a subnode began: no more properties allowed */
    struct prop_ref p[P_COUNT];
};

/* Results that are resolved only after the walk. */
struct walk {
    struct node stack[FDT_MAX_DEPTH];
    /* cpu selection: the first cpu node with reg 0, else the first cpu */
    bool cpu_found, cpu_is_zero, cpu_has_sstc;
    u64 cpu_timebase;
    bool cpus_timebase_found;
    u64 cpus_timebase;
    bool plic_found, clint_found, uart_found, rtc_found, test_found;
};

/* Static scratch (see fdt.h: not reentrant, keeps the boot stack small). */
static struct walk W;

/* ---- value helpers ------------------------------------------------------- */

/* True if the NUL-separated string list [v, v+len) contains s exactly. */
static bool strlist_has(const u8 *v, u32 len, const char *s)
{
    u32 slen = (u32)strlen(s);
    u32 i = 0;
    /* Each iteration consumes one list entry (at least one byte). */
    while (i < len) {
        u32 j = i;
        while (j < len && v[j] != 0) {
            j++;
        }
        /* Entry is [i, j); an unterminated last entry still counts. */
        if (j - i == slen && memcmp(v + i, s, slen) == 0) {
            return true;
        }
        i = j + 1;
    }
    return false;
}

static char lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* riscv,isa: "rv64imafdc_zicsr_..._sstc". Multi-letter extensions follow
 * '_' separators; look for one equal to "sstc" (case-insensitively). */
static bool isa_has_sstc(const u8 *v, u32 len)
{
    static const char want[] = "sstc";
    u32 i = 0;
    /* Skip the base ISA up to the first '_'. */
    while (i < len && v[i] != 0 && v[i] != '_') {
        i++;
    }
    while (i < len && v[i] == '_') {
        u32 start = ++i;
        while (i < len && v[i] != 0 && v[i] != '_') {
            i++;
        }
        if (i - start == 4) {
            bool eq = true;
            for (u32 k = 0; k < 4; k++) {
                if (lower((char)v[start + k]) != want[k]) {
                    eq = false;
                }
            }
            if (eq) {
                return true;
            }
        }
    }
    return false;
}

/* A 1- or 2-cell number (u32 or u64 property). */
static bool read_num(const u8 *blob, const struct prop_ref *r, u64 *val)
{
    if (r->len == 4) {
        *val = rd32(blob + r->off);
        return true;
    }
    if (r->len == 8) {
        *val = rd64(blob + r->off);
        return true;
    }
    return false;
}

/* Read ncells (0..2) big-endian cells at p. */
static u64 read_cells(const u8 *p, u32 ncells)
{
    if (ncells == 0) {
        return 0;
    }
    if (ncells == 1) {
        return rd32(p);
    }
    return rd64(p);
}

static bool node_disabled(const u8 *blob, const struct node *n)
{
    const struct prop_ref *s = &n->p[P_STATUS];
    return s->present && strlist_has(blob + s->off, s->len, "disabled");
}

static bool node_name_is(const u8 *blob, const struct node *n, const char *s)
{
    u32 slen = (u32)strlen(s);
    return n->name_len == slen && memcmp(blob + n->name_off, s, slen) == 0;
}

/* Name is s or starts with s followed by '@' (unit address). */
static bool node_name_base_is(const u8 *blob, const struct node *n, const char *s)
{
    u32 slen = (u32)strlen(s);
    if (n->name_len < slen || memcmp(blob + n->name_off, s, slen) != 0) {
        return false;
    }
    return n->name_len == slen || blob[n->name_off + slen] == '@';
}

/* Cells of the parent of stack[d] (for decoding its reg). Defaults per the
 * spec: #address-cells 2, #size-cells 1. */
static int parent_cells(const u8 *blob, struct fdt_info *out, u32 d, u32 *ac, u32 *sc)
{
    *ac = 2;
    *sc = 1;
    if (d == 0) {
        return 0;
    }
    const struct node *p = &W.stack[d - 1];
    const struct prop_ref *a = &p->p[P_ADDR_CELLS], *s = &p->p[P_SIZE_CELLS];
    if (a->present) {
        if (a->len != 4) {
            return fail(out, FDT_ERR_BADVALUE, "bad #address-cells", a->off, NULL, 0);
        }
        *ac = rd32(blob + a->off);
    }
    if (s->present) {
        if (s->len != 4) {
            return fail(out, FDT_ERR_BADVALUE, "bad #size-cells", s->off, NULL, 0);
        }
        *sc = rd32(blob + s->off);
    }
    return 0;
}

/* Decode reg entry idx of stack[d]. Returns 1 if it exists, 0 if past the
 * end, negative on malformed reg. */
static int reg_entry(const u8 *blob, struct fdt_info *out, u32 d, u32 idx, struct fdt_range *r)
{
    const struct node *n = &W.stack[d];
    const struct prop_ref *reg = &n->p[P_REG];
    u32 ac, sc;
    int e = parent_cells(blob, out, d, &ac, &sc);
    if (e < 0) {
        return e;
    }
    /* 64-bit addresses at most: wider cells (e.g. PCI's 3) are not decoded. */
    if (ac < 1 || ac > 2 || sc > 2) {
        return fail(out, FDT_ERR_BADVALUE, "unsupported #address-cells/#size-cells for reg of",
                    reg->off, (const char *)blob + n->name_off, n->name_len);
    }
    u32 entry = (ac + sc) * 4;
    if (reg->len % entry != 0) {
        return fail(out, FDT_ERR_BADVALUE, "reg length not a multiple of the cells in",
                    reg->off, (const char *)blob + n->name_off, n->name_len);
    }
    if (idx >= reg->len / entry) {
        return 0;
    }
    const u8 *p = blob + reg->off + idx * entry;
    r->base = read_cells(p, ac);
    r->size = read_cells(p + ac * 4, sc);
    if (r->base + r->size < r->base) {
        return fail(out, FDT_ERR_OVERFLOW, "reg range wraps around in", reg->off,
                    (const char *)blob + n->name_off, n->name_len);
    }
    return 1;
}

/* Append every reg entry of stack[d] to arr (capacity cap, count *n).
 * Entries of size 0 describe nothing and are skipped. */
static int add_all_reg(const u8 *blob, struct fdt_info *out, u32 d, struct fdt_range *arr,
                       u32 cap, u32 *n, int full_err, const char *full_msg)
{
    const struct prop_ref *reg = &W.stack[d].p[P_REG];
    /* The entry count is bounded by reg->len / 4 (every entry >= 4 bytes). */
    for (u32 i = 0; i <= reg->len / 4; i++) {
        struct fdt_range r;
        int e = reg_entry(blob, out, d, i, &r);
        if (e <= 0) {
            return e;
        }
        if (r.size == 0) {
            continue;
        }
        if (*n >= cap) {
            return fail(out, full_err, full_msg, reg->off, NULL, 0);
        }
        arr[(*n)++] = r;
    }
    return 0;
}

/* First reg entry of a device node into *r (left unset if reg is absent). */
static int device_reg(const u8 *blob, struct fdt_info *out, u32 d, struct fdt_range *r)
{
    if (!W.stack[d].p[P_REG].present) {
        return 0;
    }
    int e = reg_entry(blob, out, d, 0, r);
    return e < 0 ? e : 0;
}

/* First cell of `interrupts` (the PLIC source number on QEMU virt). */
static int first_irq(const u8 *blob, struct fdt_info *out, const struct node *n, u32 *irq)
{
    const struct prop_ref *r = &n->p[P_INTERRUPTS];
    if (!r->present) {
        return 0;
    }
    if (r->len < 4) {
        return fail(out, FDT_ERR_BADVALUE, "bad interrupts in", r->off,
                    (const char *)blob + n->name_off, n->name_len);
    }
    *irq = rd32(blob + r->off);
    return 0;
}

static int chosen_node(const u8 *blob, struct fdt_info *out, const struct node *n)
{
    const struct prop_ref *s = &n->p[P_INITRD_START], *e = &n->p[P_INITRD_END];
    const struct prop_ref *b = &n->p[P_BOOTARGS];
    if (s->present || e->present) {
        u64 start, end;
        if (!s->present || !e->present) {
            return fail(out, FDT_ERR_BADVALUE, "only one of linux,initrd-start/-end in /chosen",
                        s->present ? s->off : e->off, NULL, 0);
        }
        if (!read_num(blob, s, &start) || !read_num(blob, e, &end)) {
            return fail(out, FDT_ERR_BADVALUE, "linux,initrd-start/-end not 4 or 8 bytes",
                        s->off, NULL, 0);
        }
        if (end < start) {
            return fail(out, FDT_ERR_BADVALUE, "linux,initrd-end below linux,initrd-start",
                        e->off, NULL, 0);
        }
        out->has_initrd = true;
        out->initrd_start = start;
        out->initrd_end = end;
    }
    if (b->present) {
        /* A string property: must be NUL-terminated within its length, and
         * fit our buffer (too long is an error, not a silent cut). */
        const u8 *v = blob + b->off;
        u32 l = 0;
        while (l < b->len && v[l] != 0) {
            l++;
        }
        if (l == b->len && b->len != 0) {
            return fail(out, FDT_ERR_BADVALUE, "bootargs not NUL-terminated", b->off, NULL, 0);
        }
        if (l >= FDT_BOOTARGS_MAX) {
            return fail(out, FDT_ERR_BADVALUE, "bootargs longer than 255 bytes", b->off, NULL,
                        0);
        }
        memcpy(out->bootargs, v, l);
        out->bootargs[l] = '\0';
    }
    return 0;
}

static int cpu_node(const u8 *blob, struct fdt_info *out, u32 d)
{
    const struct node *n = &W.stack[d];
    const struct prop_ref *dt = &n->p[P_DEVICE_TYPE];
    /* A cpu is a /cpus child with device_type "cpu" (cpu-map etc. are not). */
    if (!dt->present || !strlist_has(blob + dt->off, dt->len, "cpu") || node_disabled(blob, n)) {
        return 0;
    }
    bool is_zero = false;
    if (n->p[P_REG].present) {
        struct fdt_range r;
        int e = reg_entry(blob, out, d, 0, &r);
        if (e < 0) {
            return e;
        }
        is_zero = (e == 1 && r.base == 0);
    }
    /* Keep the first cpu, but prefer hart 0 once seen. */
    if (W.cpu_found && (W.cpu_is_zero || !is_zero)) {
        return 0;
    }
    W.cpu_found = true;
    W.cpu_is_zero = is_zero;
    W.cpu_has_sstc = false;
    W.cpu_timebase = 0;
    if (n->p[P_ISA].present && isa_has_sstc(blob + n->p[P_ISA].off, n->p[P_ISA].len)) {
        W.cpu_has_sstc = true;
    }
    if (n->p[P_ISA_EXT].present &&
        strlist_has(blob + n->p[P_ISA_EXT].off, n->p[P_ISA_EXT].len, "sstc")) {
        W.cpu_has_sstc = true;
    }
    if (n->p[P_TIMEBASE].present && !read_num(blob, &n->p[P_TIMEBASE], &W.cpu_timebase)) {
        return fail(out, FDT_ERR_BADVALUE, "bad timebase-frequency in", n->p[P_TIMEBASE].off,
                    (const char *)blob + n->name_off, n->name_len);
    }
    return 0;
}

static bool compat_has(const u8 *blob, const struct node *n, const char *s)
{
    const struct prop_ref *c = &n->p[P_COMPATIBLE];
    return c->present && strlist_has(blob + c->off, c->len, s);
}

static int device_node(const u8 *blob, struct fdt_info *out, u32 d)
{
    const struct node *n = &W.stack[d];
    int e = 0;
    if (!n->p[P_COMPATIBLE].present || node_disabled(blob, n)) {
        return 0;
    }
    if (!W.plic_found && (compat_has(blob, n, "riscv,plic0") ||
                          compat_has(blob, n, "sifive,plic-1.0.0"))) {
        W.plic_found = true;
        e = device_reg(blob, out, d, &out->plic);
        if (e == 0 && n->p[P_NDEV].present) {
            if (n->p[P_NDEV].len != 4) {
                return fail(out, FDT_ERR_BADVALUE, "bad riscv,ndev", n->p[P_NDEV].off, NULL, 0);
            }
            out->plic_ndev = rd32(blob + n->p[P_NDEV].off);
        }
    } else if (!W.clint_found && (compat_has(blob, n, "riscv,clint0") ||
                                  compat_has(blob, n, "sifive,clint0"))) {
        W.clint_found = true;
        e = device_reg(blob, out, d, &out->clint);
    } else if (!W.uart_found && (compat_has(blob, n, "ns16550a") ||
                                 compat_has(blob, n, "ns16550"))) {
        W.uart_found = true;
        e = device_reg(blob, out, d, &out->uart);
        if (e == 0) {
            e = first_irq(blob, out, n, &out->uart_irq);
        }
    } else if (!W.rtc_found && compat_has(blob, n, "google,goldfish-rtc")) {
        W.rtc_found = true;
        e = device_reg(blob, out, d, &out->rtc);
        if (e == 0) {
            e = first_irq(blob, out, n, &out->rtc_irq);
        }
    } else if (!W.test_found &&
               (compat_has(blob, n, "sifive,test0") || compat_has(blob, n, "sifive,test1") ||
                (compat_has(blob, n, "syscon") && node_name_base_is(blob, n, "test")))) {
        W.test_found = true;
        e = device_reg(blob, out, d, &out->test_dev);
    }
    return e;
}

/* Interpret stack[d] now that all its properties and children are known. */
static int end_node(const u8 *blob, struct fdt_info *out, u32 d)
{
    const struct node *n = &W.stack[d];
    int e;
    switch (n->kind) {
    case K_CHOSEN:
        e = chosen_node(blob, out, n);
        break;
    case K_CPUS:
        e = 0;
        if (n->p[P_TIMEBASE].present) {
            if (!read_num(blob, &n->p[P_TIMEBASE], &W.cpus_timebase)) {
                return fail(out, FDT_ERR_BADVALUE, "bad timebase-frequency in /cpus",
                            n->p[P_TIMEBASE].off, NULL, 0);
            }
            W.cpus_timebase_found = true;
        }
        break;
    case K_CPU:
        e = cpu_node(blob, out, d);
        break;
    case K_RESVCHILD:
        e = 0;
        if (n->p[P_REG].present && !node_disabled(blob, n)) {
            e = add_all_reg(blob, out, d, out->resv, FDT_MAX_RESV, &out->n_resv,
                            FDT_ERR_TOOMANYRESV, "more than 16 reserved ranges");
        }
        break;
    default:
        e = 0;
        break;
    }
    if (e < 0) {
        return e;
    }
    /* Memory: a top-level node with device_type "memory" (or, lacking a
     * device_type, named memory / memory@...). */
    if (d == 1 && n->p[P_REG].present && !node_disabled(blob, n)) {
        const struct prop_ref *dt = &n->p[P_DEVICE_TYPE];
        bool is_mem = dt->present ? strlist_has(blob + dt->off, dt->len, "memory")
                                  : node_name_base_is(blob, n, "memory");
        if (is_mem) {
            e = add_all_reg(blob, out, d, out->mem, FDT_MAX_MEM, &out->n_mem,
                            FDT_ERR_TOOMANYMEM, "more than 8 memory ranges");
            if (e < 0) {
                return e;
            }
        }
    }
    return device_node(blob, out, d);
}

/* Kind of a node that begins at depth d (root is 0), from its parent. */
static enum node_kind classify(const u8 *blob, u32 d)
{
    const struct node *n = &W.stack[d];
    if (d == 0) {
        return K_ROOT;
    }
    enum node_kind parent = W.stack[d - 1].kind;
    if (parent == K_ROOT) {
        if (node_name_is(blob, n, "chosen")) {
            return K_CHOSEN;
        }
        if (node_name_is(blob, n, "cpus")) {
            return K_CPUS;
        }
        if (node_name_is(blob, n, "reserved-memory")) {
            return K_RESVMEM;
        }
    } else if (parent == K_CPUS) {
        return K_CPU;
    } else if (parent == K_RESVMEM) {
        return K_RESVCHILD;
    }
    return K_OTHER;
}

/* ---- the walk ------------------------------------------------------------ */

static int parse_header(const u8 *b, u64 max_size, struct fdt_info *out, u32 *st_off,
                        u32 *st_size, u32 *str_off, u32 *str_size)
{
    if (max_size < FDT_HEADER_SIZE) {
        return fail(out, FDT_ERR_TRUNCATED, "truncated: buffer smaller than the FDT header", 0,
                    NULL, 0);
    }
    if (rd32(b + H_MAGIC) != FDT_MAGIC) {
        return fail(out, FDT_ERR_BADMAGIC, "bad magic (not a device tree)", 0, NULL, 0);
    }
    u32 total = rd32(b + H_TOTALSIZE);
    if (total > max_size) {
        return fail(out, FDT_ERR_TRUNCATED, "truncated: totalsize larger than the buffer",
                    H_TOTALSIZE, NULL, 0);
    }
    if (total < FDT_HEADER_SIZE) {
        return fail(out, FDT_ERR_BADLAYOUT, "totalsize smaller than the header", H_TOTALSIZE,
                    NULL, 0);
    }
    /* Version 17 added size_dt_struct, which the bounded walk needs. */
    if (rd32(b + H_VERSION) < 17 || rd32(b + H_LAST_COMP) > 17) {
        return fail(out, FDT_ERR_BADVERSION, "unsupported FDT version", H_VERSION, NULL, 0);
    }
    u64 so = rd32(b + H_OFF_STRUCT), ss = rd32(b + H_SIZE_STRUCT);
    u64 to = rd32(b + H_OFF_STRINGS), ts = rd32(b + H_SIZE_STRINGS);
    u64 ro = rd32(b + H_OFF_RSVMAP);
    /* u64 sums of u32 values cannot wrap. */
    if (so < FDT_HEADER_SIZE || so % 4 != 0 || ss % 4 != 0 || so + ss > total) {
        return fail(out, FDT_ERR_BADLAYOUT, "structure block outside totalsize or misaligned",
                    H_OFF_STRUCT, NULL, 0);
    }
    if (to < FDT_HEADER_SIZE || to + ts > total) {
        return fail(out, FDT_ERR_BADLAYOUT, "strings block outside totalsize", H_OFF_STRINGS,
                    NULL, 0);
    }
    if (ro < FDT_HEADER_SIZE || ro % 8 != 0 || ro >= total) {
        return fail(out, FDT_ERR_BADLAYOUT,
                    "memory reservation block outside totalsize or misaligned", H_OFF_RSVMAP,
                    NULL, 0);
    }
    out->totalsize = total;
    *st_off = (u32)so;
    *st_size = (u32)ss;
    *str_off = (u32)to;
    *str_size = (u32)ts;
    return 0;
}

static int parse_rsvmap(const u8 *b, struct fdt_info *out)
{
    u64 off = rd32(b + H_OFF_RSVMAP);
    /* Each entry is 16 bytes inside totalsize: bounded by totalsize / 16. */
    while (off + 16 <= out->totalsize) {
        u64 base = rd64(b + off), size = rd64(b + off + 8);
        if (base == 0 && size == 0) {
            return 0;
        }
        if (base + size < base) {
            return fail(out, FDT_ERR_OVERFLOW, "memreserve entry wraps around", off, NULL, 0);
        }
        if (size != 0) {
            if (out->n_resv >= FDT_MAX_RESV) {
                return fail(out, FDT_ERR_TOOMANYRESV, "more than 16 reserved ranges", off,
                            NULL, 0);
            }
            out->resv[out->n_resv].base = base;
            out->resv[out->n_resv].size = size;
            out->n_resv++;
        }
        off += 16;
    }
    return fail(out, FDT_ERR_BADRESVMAP, "memory reservation block not terminated", off, NULL,
                0);
}

int fdt_parse(const void *blob, u64 max_size, struct fdt_info *out)
{
    const u8 *b = blob;
    u32 so = 0, ss = 0, to = 0, ts = 0;
    int e;

    if (out == NULL) {
        return FDT_ERR_BADARG;
    }
    memset(out, 0, sizeof(*out));
    memset(&W, 0, sizeof(W));
    if (b == NULL) {
        return fail(out, FDT_ERR_BADARG, "no device tree (NULL pointer)", 0, NULL, 0);
    }
    e = parse_header(b, max_size, out, &so, &ss, &to, &ts);
    if (e < 0) {
        return e;
    }
    e = parse_rsvmap(b, out);
    if (e < 0) {
        return e;
    }

    /* Structure block walk. off is relative to the blob; send is the end of
     * the structure block. Every token advances off by at least 4, so the
     * walk is bounded by ss / 4 tokens; FDT_MAX_TOKENS bounds it further. */
    u64 off = so, send = (u64)so + ss;
    u32 depth = 0;        /* number of open nodes */
    bool root_done = false;
    for (u32 ntok = 0;; ntok++) {
        if (ntok >= FDT_MAX_TOKENS) {
            return fail(out, FDT_ERR_TOOMANYTOKENS, "more than 2^20 structure tokens", off, NULL,
                        0);
        }
        if (off + 4 > send) {
            return fail(out, FDT_ERR_BADSTRUCT, "structure block ends without FDT_END", off,
                        NULL, 0);
        }
        u32 tok = rd32(b + off);
        if (tok == FDT_NOP) {
            off += 4;
            continue;
        }
        if (tok == FDT_END) {
            if (!root_done || depth != 0) {
                return fail(out, FDT_ERR_BADSTRUCT, "FDT_END inside an open node", off, NULL, 0);
            }
            break;
        }
        if (root_done && (tok == FDT_BEGIN_NODE || tok == FDT_PROP || tok == FDT_END_NODE)) {
            return fail(out, FDT_ERR_BADSTRUCT, "token after the root node ended", off, NULL, 0);
        }
        if (tok == FDT_BEGIN_NODE) {
            if (depth >= FDT_MAX_DEPTH) {
                return fail(out, FDT_ERR_DEPTH, "nodes nested deeper than 16", off, NULL, 0);
            }
            u64 name = off + 4, end = name;
            /* Bounded by the structure block end. */
            while (end < send && b[end] != 0) {
                end++;
            }
            if (end >= send) {
                return fail(out, FDT_ERR_BADNAME, "node name runs past the structure block", off,
                            NULL, 0);
            }
            if (depth > 0) {
                W.stack[depth - 1].has_child = true;
            }
            struct node *n = &W.stack[depth];
            memset(n, 0, sizeof(*n));
            n->name_off = (u32)name;
            n->name_len = (u32)(end - name);
            n->kind = classify(b, depth);
            depth++;
            off = (end + 1 + 3) & ~(u64)3;
        } else if (tok == FDT_END_NODE) {
            if (depth == 0) {
                return fail(out, FDT_ERR_BADSTRUCT, "FDT_END_NODE without an open node", off,
                            NULL, 0);
            }
            e = end_node(b, out, depth - 1);
            if (e < 0) {
                return e;
            }
            depth--;
            root_done = (depth == 0);
            off += 4;
        } else if (tok == FDT_PROP) {
            if (depth == 0) {
                return fail(out, FDT_ERR_BADSTRUCT, "property outside any node", off, NULL, 0);
            }
            if (off + 12 > send) {
                return fail(out, FDT_ERR_BADPROP, "property header past the structure block",
                            off, NULL, 0);
            }
            u32 len = rd32(b + off + 4), nameoff = rd32(b + off + 8);
            u64 val = off + 12;
            if (val + len > send) {
                return fail(out, FDT_ERR_BADPROP, "property value past the structure block", off,
                            NULL, 0);
            }
            if (nameoff >= ts) {
                return fail(out, FDT_ERR_BADSTRING, "property name offset outside strings block",
                            off, NULL, 0);
            }
            const char *pname = (const char *)b + to + nameoff;
            u32 maxlen = ts - nameoff, plen = 0;
            while (plen < maxlen && pname[plen] != '\0') {
                plen++;
            }
            if (plen == maxlen) {
                return fail(out, FDT_ERR_BADSTRING, "property name not terminated in strings block",
                            off, NULL, 0);
            }
            struct node *n = &W.stack[depth - 1];
            if (n->has_child) {
                return fail(out, FDT_ERR_BADSTRUCT, "property after a subnode:", off, pname, plen);
            }
            for (u32 i = 0; i < P_COUNT; i++) {
                if (strcmp(pname, prop_names[i]) == 0) {
                    n->p[i].present = true;
                    n->p[i].off = (u32)val;
                    n->p[i].len = len;
                    break;
                }
            }
            off = (val + len + 3) & ~(u64)3;
        } else {
            u32 pos = 0;
            err_code = FDT_ERR_BADTOKEN;
            err_buf[0] = '\0';
            err_append(&pos, "bad structure token ");
            err_append_num(&pos, tok, true);
            err_append(&pos, " at offset ");
            err_append_num(&pos, off, false);
            out->err_offset = (u32)off;
            return FDT_ERR_BADTOKEN;
        }
    }

    /* Resolve what depended on more than one node. */
    out->has_sstc = W.cpu_found && W.cpu_has_sstc;
    out->timebase_freq = W.cpus_timebase_found ? W.cpus_timebase : W.cpu_timebase;
    err_code = 0;
    err_buf[0] = '\0';
    return 0;
}
