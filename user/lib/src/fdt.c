/*
 * A small read-only flattened-device-tree reader (DTSpec v0.3, format
 * version 16/17) for root tasks: enough to find /chosen and /memory.
 */
#include <kairos/kairos.h>
#include <string.h>

#define FDT_MAGIC 0xd00dfeedu
#define FDT_BEGIN_NODE 1u
#define FDT_END_NODE 2u
#define FDT_PROP 3u
#define FDT_NOP 4u
#define FDT_END 9u

#define FDT_HDR_MAGIC 0
#define FDT_HDR_TOTALSIZE 4
#define FDT_HDR_OFF_STRUCT 8
#define FDT_HDR_OFF_STRINGS 12
#define FDT_HDR_VERSION 20
#define FDT_HDR_SIZE_STRINGS 32
#define FDT_HDR_SIZE_STRUCT 36
#define FDT_HDR_LEN 40

#define FDT_MAX_PATH 256

uint32_t kairos_fdt32(const void *p)
{
    const uint8_t *b = p;
    return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
}

uint64_t kairos_fdt_cells(const void *p, uint32_t cells)
{
    uint64_t v = 0;
    for (uint32_t i = 0; i < cells; i++) {
        v = (v << 32) | kairos_fdt32((const uint8_t *)p + 4 * i);
    }
    return v;
}

static uint32_t hdr(const void *fdt, unsigned off)
{
    return kairos_fdt32((const uint8_t *)fdt + off);
}

uint32_t kairos_fdt_totalsize(const void *fdt)
{
    return hdr(fdt, FDT_HDR_TOTALSIZE);
}

int kairos_fdt_check(const void *fdt, size_t size)
{
    if (fdt == NULL || (size != 0 && size < FDT_HDR_LEN)) {
        return -1;
    }
    if (hdr(fdt, FDT_HDR_MAGIC) != FDT_MAGIC || hdr(fdt, FDT_HDR_VERSION) < 16) {
        return -1;
    }
    uint64_t total = hdr(fdt, FDT_HDR_TOTALSIZE);
    if (total < FDT_HDR_LEN || (size != 0 && total > size)) {
        return -1;
    }
    uint64_t so = hdr(fdt, FDT_HDR_OFF_STRUCT), ss = hdr(fdt, FDT_HDR_SIZE_STRUCT);
    uint64_t to = hdr(fdt, FDT_HDR_OFF_STRINGS), ts = hdr(fdt, FDT_HDR_SIZE_STRINGS);
    if (so + ss > total || to + ts > total || (so & 3) != 0) {
        return -1;
    }
    return 0;
}

static size_t bounded_strlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n] != '\0') {
        n++;
    }
    return n;
}

int kairos_fdt_walk(const void *fdt, kairos_fdt_prop_fn fn, void *ctx)
{
    if (kairos_fdt_check(fdt, 0) != 0) {
        return -1;
    }
    const uint8_t *base = fdt;
    const uint8_t *st = base + hdr(fdt, FDT_HDR_OFF_STRUCT);
    const char *strings = (const char *)base + hdr(fdt, FDT_HDR_OFF_STRINGS);
    uint32_t st_size = hdr(fdt, FDT_HDR_SIZE_STRUCT);
    uint32_t str_size = hdr(fdt, FDT_HDR_SIZE_STRINGS);

    char path[FDT_MAX_PATH];
    size_t plen[FDT_MAX_PATH / 2]; /* path length before each level */
    int depth = 0;
    size_t len = 0;
    path[0] = '\0';

    uint32_t off = 0;
    while (off + 4 <= st_size) {
        uint32_t tok = kairos_fdt32(st + off);
        off += 4;
        switch (tok) {
        case FDT_BEGIN_NODE: {
            const char *name = (const char *)st + off;
            size_t n = bounded_strlen(name, st_size - off);
            if (n == st_size - off) {
                return -1;
            }
            off += (uint32_t)((n + 1 + 3) & ~(size_t)3);
            if (depth >= (int)(sizeof(plen) / sizeof(plen[0]))) {
                return -1;
            }
            plen[depth++] = len;
            if (depth == 1) {
                path[0] = '/';
                path[1] = '\0';
                len = 1;
            } else {
                size_t need = (len > 1 ? 1 : 0) + n;
                if (len + need + 1 > sizeof(path)) {
                    return -1;
                }
                if (len > 1) {
                    path[len++] = '/';
                }
                memcpy(path + len, name, n);
                len += n;
                path[len] = '\0';
            }
            break;
        }
        case FDT_END_NODE:
            if (depth == 0) {
                return -1;
            }
            len = plen[--depth];
            path[len] = '\0';
            break;
        case FDT_PROP: {
            if (off + 8 > st_size || depth == 0) {
                return -1;
            }
            uint32_t vlen = kairos_fdt32(st + off);
            uint32_t nameoff = kairos_fdt32(st + off + 4);
            off += 8;
            if (vlen > st_size - off || nameoff >= str_size) {
                return -1;
            }
            const char *pname = strings + nameoff;
            if (bounded_strlen(pname, str_size - nameoff) == str_size - nameoff) {
                return -1;
            }
            int r = fn(path, pname, st + off, vlen, ctx);
            if (r != 0) {
                return r;
            }
            off += (vlen + 3) & ~3u;
            break;
        }
        case FDT_NOP:
            break;
        case FDT_END:
            return 0;
        default:
            return -1;
        }
    }
    return -1;
}

/* Does node path `node` match pattern `pat`?  Components must match; a
 * pattern component without '@' matches any unit address. */
static bool path_matches(const char *node, const char *pat)
{
    for (;;) {
        while (*node == '/') {
            node++;
        }
        while (*pat == '/') {
            pat++;
        }
        if (*node == '\0' || *pat == '\0') {
            return *node == '\0' && *pat == '\0';
        }
        const char *nc = node, *pc = pat;
        bool pat_has_unit = false;
        while (*pat != '\0' && *pat != '/') {
            pat_has_unit |= *pat == '@';
            pat++;
        }
        while (*node != '\0' && *node != '/') {
            node++;
        }
        size_t pn = (size_t)(pat - pc), nn = (size_t)(node - nc);
        if (pn > nn || memcmp(nc, pc, pn) != 0) {
            return false;
        }
        if (pn != nn && (pat_has_unit || nc[pn] != '@')) {
            return false;
        }
    }
}

struct getprop_ctx {
    const char *path;
    const char *prop;
    const void *val;
    uint32_t len;
};

static int getprop_cb(const char *path, const char *prop, const void *val, uint32_t len,
                      void *vctx)
{
    struct getprop_ctx *c = vctx;
    if (strcmp(prop, c->prop) == 0 && path_matches(path, c->path)) {
        c->val = val;
        c->len = len;
        return 1;
    }
    return 0;
}

const void *kairos_fdt_getprop(const void *fdt, const char *path, const char *prop,
                               uint32_t *len)
{
    struct getprop_ctx c = {path, prop, NULL, 0};
    if (kairos_fdt_walk(fdt, getprop_cb, &c) != 1) {
        return NULL;
    }
    if (len != NULL) {
        *len = c.len;
    }
    return c.val;
}

struct memory_ctx {
    uint32_t addr_cells, size_cells;
    kairos_mem_region_t *out;
    int max, count;
};

static int memory_cb(const char *path, const char *prop, const void *val, uint32_t len,
                     void *vctx)
{
    struct memory_ctx *c = vctx;
    if (strcmp(path, "/") == 0 && len == 4) {
        if (strcmp(prop, "#address-cells") == 0) {
            c->addr_cells = kairos_fdt32(val);
        } else if (strcmp(prop, "#size-cells") == 0) {
            c->size_cells = kairos_fdt32(val);
        }
        return 0;
    }
    if (strcmp(prop, "reg") != 0 || !path_matches(path, "/memory")) {
        return 0;
    }
    uint32_t entry = 4 * (c->addr_cells + c->size_cells);
    if (c->addr_cells == 0 || c->addr_cells > 2 || c->size_cells > 2) {
        return -1;
    }
    for (uint32_t o = 0; o + entry <= len; o += entry) {
        if (c->count < c->max) {
            const uint8_t *p = (const uint8_t *)val + o;
            c->out[c->count].base = kairos_fdt_cells(p, c->addr_cells);
            c->out[c->count].size = kairos_fdt_cells(p + 4 * c->addr_cells, c->size_cells);
        }
        c->count++;
    }
    return 0;
}

int kairos_fdt_memory(const void *fdt, kairos_mem_region_t *out, int max)
{
    /* DTSpec defaults when the root node does not say. */
    struct memory_ctx c = {2, 1, out, max, 0};
    if (kairos_fdt_walk(fdt, memory_cb, &c) != 0) {
        return -1;
    }
    return c.count;
}

const char *kairos_fdt_bootargs(const void *fdt)
{
    uint32_t len;
    const char *s = kairos_fdt_getprop(fdt, "/chosen", "bootargs", &len);
    if (s == NULL || len == 0 || s[len - 1] != '\0') {
        return NULL;
    }
    return s;
}
