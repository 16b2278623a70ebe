/* BootInfo as the kernel hands it over, checked against seL4's rules
 * (docs/boot.md) and the device tree QEMU passed. Also prints
 * the untyped list and a CRC of the device tree, which the host test compares
 * with QEMU's own dump of the tree. */
#include <ktest.h>
#include <sel4/sel4.h>
#include <stdio.h>
#include <string.h>

#define MAX_RANGES 32
typedef struct {
    uint64_t base, end;
} range_t;

static seL4_Word n_untyped(const seL4_BootInfo *bi) { return bi->untyped.end - bi->untyped.start; }

/* Reserved ranges: /reserved-memory children with reg (root cells = 2/2 on virt). */
struct resv_ctx {
    range_t r[MAX_RANGES];
    int n;
};
static int resv_cb(const char *path, const char *prop, const void *val, uint32_t len, void *ctx)
{
    struct resv_ctx *c = ctx;
    if (strncmp(path, "/reserved-memory/", 17) == 0 && strcmp(prop, "reg") == 0 && len >= 16 && c->n < MAX_RANGES) {
        uint64_t base = kairos_fdt_cells(val, 2), size = kairos_fdt_cells((const char *)val + 8, 2);
        c->r[c->n].base = base;
        c->r[c->n].end = base + size;
        c->n++;
    }
    return 0;
}

static bool overlaps(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) { return a0 < b1 && b0 < a1; }

KTEST(bootinfo, untypeds_disjoint_aligned_sized)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    KASSERT(n_untyped(bi) > 0);
    KASSERT(n_untyped(bi) <= CONFIG_MAX_NUM_BOOTINFO_UNTYPED_CAPS);
    for (seL4_Word i = 0; i < n_untyped(bi); i++) {
        const seL4_UntypedDesc *u = &bi->untypedList[i];
        KASSERT_MSG(u->sizeBits >= 4 && u->sizeBits <= 38, "untyped %lu has sizeBits %u", (unsigned long)i,
                    u->sizeBits);
        KASSERT_MSG((u->paddr & ((1ul << u->sizeBits) - 1)) == 0, "untyped %lu at %#lx not aligned to 2^%u",
                    (unsigned long)i, (unsigned long)u->paddr, u->sizeBits);
        for (seL4_Word j = 0; j < i; j++) {
            const seL4_UntypedDesc *v = &bi->untypedList[j];
            KASSERT_MSG(!overlaps(u->paddr, u->paddr + (1ul << u->sizeBits), v->paddr, v->paddr + (1ul << v->sizeBits)),
                        "untypeds %lu and %lu overlap", (unsigned long)j, (unsigned long)i);
        }
    }
}

KTEST(bootinfo, ram_untypeds_inside_memory_outside_reserved)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    const void *fdt = kairos_bootinfo_fdt(bi, NULL);
    KASSERT(fdt != NULL);
    kairos_mem_region_t mem[8];
    int n_mem = kairos_fdt_memory(fdt, mem, 8);
    KASSERT(n_mem > 0 && n_mem <= 8);
    struct resv_ctx resv = {.n = 0};
    kairos_fdt_walk(fdt, resv_cb, &resv);
    uint64_t ram_total = 0, untyped_ram = 0;
    for (int m = 0; m < n_mem; m++)
        ram_total += mem[m].size;
    for (seL4_Word i = 0; i < n_untyped(bi); i++) {
        const seL4_UntypedDesc *u = &bi->untypedList[i];
        uint64_t b = u->paddr, e = u->paddr + (1ul << u->sizeBits);
        bool in_ram = false;
        for (int m = 0; m < n_mem; m++)
            in_ram |= b >= mem[m].base && e <= mem[m].base + mem[m].size;
        if (u->isDevice) {
            /* Device untypeds never touch usable RAM; the firmware's 2 MiB is the exception seL4 makes. */
            for (int m = 0; m < n_mem; m++)
                KASSERT_MSG(!overlaps(b, e, mem[m].base + 0x200000, mem[m].base + mem[m].size),
                            "device untyped %#lx overlaps RAM", (unsigned long)b);
            continue;
        }
        KASSERT_MSG(in_ram, "RAM untyped %#lx/%u outside /memory", (unsigned long)b, u->sizeBits);
        KASSERT_MSG(!overlaps(b, e, 0x80000000ul, 0x80200000ul), "RAM untyped %#lx in the firmware region",
                    (unsigned long)b);
        for (int r = 0; r < resv.n; r++)
            KASSERT_MSG(!overlaps(b, e, resv.r[r].base, resv.r[r].end), "RAM untyped %#lx in reserved [%#lx,%#lx)",
                        (unsigned long)b, (unsigned long)resv.r[r].base, (unsigned long)resv.r[r].end);
        untyped_ram += e - b;
    }
    /* Documented footprint (docs/boot.md): firmware 2 MiB, kernel image,
     * root task image and boot objects, the device tree and its page: at most
     * 8 MiB for this test image. */
    printf("bootinfo: ram %lu untyped-ram %lu footprint %lu\n", (unsigned long)ram_total,
           (unsigned long)untyped_ram, (unsigned long)(ram_total - untyped_ram));
    KASSERT_MSG(untyped_ram + (8ul << 20) >= ram_total, "only %lu of %lu bytes of RAM are untyped",
                (unsigned long)untyped_ram, (unsigned long)ram_total);
}

KTEST(bootinfo, device_untypeds_cover_uart_and_test_device)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    const uint64_t wanted[] = {0x10000000ul, 0x100000ul, 0x101000ul};
    for (unsigned w = 0; w < sizeof(wanted) / sizeof(wanted[0]); w++) {
        bool found = false;
        for (seL4_Word i = 0; i < n_untyped(bi); i++) {
            const seL4_UntypedDesc *u = &bi->untypedList[i];
            if (u->isDevice && wanted[w] >= u->paddr && wanted[w] + 0x100 <= u->paddr + (1ul << u->sizeBits))
                found = true;
        }
        KASSERT_MSG(found, "no device untyped covers %#lx", (unsigned long)wanted[w]);
    }
}

KTEST(bootinfo, slot_regions_contiguous_in_sel4_order)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    KASSERT_EQ(bi->userImagePaging.start, seL4_NumInitialCaps);
    KASSERT(bi->userImagePaging.end > bi->userImagePaging.start);
    KASSERT_EQ(bi->extraBIPages.start, bi->userImagePaging.end);
    KASSERT_EQ(bi->schedcontrol.start, bi->extraBIPages.end);
    KASSERT_EQ(bi->schedcontrol.end - bi->schedcontrol.start, 1);
    KASSERT_EQ(bi->userImageFrames.start, bi->schedcontrol.end);
    KASSERT_EQ(bi->untyped.start, bi->userImageFrames.end);
    KASSERT_EQ(bi->empty.start, bi->untyped.end);
    KASSERT_EQ(bi->empty.end, 1ul << 13);
    KASSERT_EQ(bi->initThreadCNodeSizeBits, 13);
    KASSERT_EQ(bi->sharedFrames.start, bi->sharedFrames.end);
    KASSERT_EQ(bi->numNodes, 1);
    KASSERT_EQ(bi->nodeID, 0);
    KASSERT_EQ(bi->initThreadDomain, 0);
    /* IPC buffer right after the image, BootInfo one page later. */
    extern char _end[];
    uint64_t image_end = ((uint64_t)_end + 0xfff) & ~0xffful;
    KASSERT_EQ((uint64_t)bi->ipcBuffer, image_end);
    KASSERT_EQ((uint64_t)bi, image_end + 4096);
}

KTEST(bootinfo, initial_caps_have_sel4_types)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    static const struct {
        seL4_Word slot;
        seL4_Word tag;
    } want[] = {
        {0, 0}, {1, 12}, {2, 10}, {3, 3}, {4, 14}, {5, 11}, {6, 13}, {7, 0},
        {8, 0}, {9, 1}, {10, 1}, {11, 20}, {12, 0}, {13, 0}, {14, 22}, {15, 0},
    };
    for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        KASSERT_MSG(seL4_DebugCapIdentify(want[i].slot) == want[i].tag, "slot %lu identifies as %lu, want %lu",
                    (unsigned long)want[i].slot, (unsigned long)seL4_DebugCapIdentify(want[i].slot),
                    (unsigned long)want[i].tag);
    for (seL4_Word s = bi->userImagePaging.start; s < bi->userImagePaging.end; s++)
        KASSERT_EQ(seL4_DebugCapIdentify(s), 3);
    for (seL4_Word s = bi->extraBIPages.start; s < bi->extraBIPages.end; s++)
        KASSERT_EQ(seL4_DebugCapIdentify(s), 1);
    KASSERT_EQ(seL4_DebugCapIdentify(bi->schedcontrol.start), 24);
    for (seL4_Word s = bi->userImageFrames.start; s < bi->userImageFrames.end; s++)
        KASSERT_EQ(seL4_DebugCapIdentify(s), 1);
    for (seL4_Word s = bi->untyped.start; s < bi->untyped.end; s++)
        KASSERT_EQ(seL4_DebugCapIdentify(s), 2);
    for (seL4_Word s = bi->empty.start; s < bi->empty.end; s += 97)
        KASSERT_EQ(seL4_DebugCapIdentify(s), 0);
    KASSERT_EQ(seL4_DebugCapIdentify(bi->empty.end - 1), 0);
}

static uint32_t crc32(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}

KTEST(bootinfo, extra_bootinfo_walkable_and_holds_the_device_tree)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    KASSERT(bi->extraLen > 16);
    const uint8_t *base = (const uint8_t *)bi + 4096;
    seL4_Word off = 0, records = 0, fdt_records = 0;
    while (off < bi->extraLen) {
        const seL4_BootInfoHeader *h = (const seL4_BootInfoHeader *)(base + off);
        KASSERT_MSG(h->len >= sizeof(*h), "record at offset %lu has len %lu", (unsigned long)off,
                    (unsigned long)h->len);
        KASSERT(off + h->len <= bi->extraLen);
        if (h->id == SEL4_BOOTINFO_HEADER_FDT) {
            fdt_records++;
            const void *fdt = h + 1;
            KASSERT_EQ(kairos_fdt_check(fdt, h->len - sizeof(*h)), 0);
            KASSERT_EQ(kairos_fdt_totalsize(fdt) + sizeof(*h), h->len);
            printf("bootinfo: dtb-crc32 %#x size %u\n", crc32(fdt, kairos_fdt_totalsize(fdt)),
                   kairos_fdt_totalsize(fdt));
            /* The whole tree in hex, for the host to compare with QEMU's. */
            const uint8_t *bytes = fdt;
            for (uint32_t i = 0; i < kairos_fdt_totalsize(fdt); i += 64) {
                printf("bootinfo: dtb-hex ");
                for (uint32_t k = i; k < i + 64 && k < kairos_fdt_totalsize(fdt); k++)
                    printf("%02x", bytes[k]);
                printf("\n");
            }
        }
        off += h->len;
        KASSERT(++records < 64);
    }
    KASSERT_EQ(off, bi->extraLen);
    KASSERT_EQ(fdt_records, 1);
    KASSERT_EQ(bi->extraBIPages.end - bi->extraBIPages.start, (bi->extraLen + 4095) / 4096);
}

KTEST(bootinfo, gib_untyped_when_ram_allows)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    const void *fdt = kairos_bootinfo_fdt(bi, NULL);
    kairos_mem_region_t mem[8];
    int n_mem = kairos_fdt_memory(fdt, mem, 8);
    KASSERT(n_mem > 0);
    bool has_gib = false;
    for (seL4_Word i = 0; i < n_untyped(bi); i++) {
        const seL4_UntypedDesc *u = &bi->untypedList[i];
        if (!u->isDevice && u->sizeBits >= 30)
            has_gib = true;
    }
    /* With RAM [2 GiB, 2 GiB + size) an aligned GiB exists once size >= 2 GiB
     * (0xC0000000); boot allocations must leave it whole, so that a 1 GiB
     * frame can be retyped (docs/boot.md). */
    bool gib_fits = mem[0].base + mem[0].size >= 0x100000000ul;
    printf("bootinfo: ram-end %#lx gib-untyped %s\n", (unsigned long)(mem[0].base + mem[0].size),
           has_gib ? "yes" : "no");
    KASSERT_EQ(has_gib, gib_fits);
}

KTEST(bootinfo, print_untyped_list)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    for (seL4_Word i = 0; i < n_untyped(bi); i++) {
        const seL4_UntypedDesc *u = &bi->untypedList[i];
        printf("bootinfo: untyped %#lx %u %u\n", (unsigned long)u->paddr, u->sizeBits, u->isDevice);
    }
    KASSERT(n_untyped(bi) > 0);
}
