/* rootinfo: the default Kairos system. Prints a summary of the BootInfo the
 * kernel handed over (untypeds, free memory, slot regions, the device tree's
 * memory) and powers the machine off. Written against the plain seL4 API. */
#include <kairos/kairos.h>
#include <sel4/sel4.h>
#include <stdio.h>

static void print_region(const char *name, seL4_SlotRegion r)
{
    printf("  %-18s [%lu, %lu)  %lu slots\n", name, (unsigned long)r.start, (unsigned long)r.end,
           (unsigned long)(r.end - r.start));
}

int main(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    unsigned long ram = 0, device = 0, n_ram = 0, n_dev = 0, largest = 0;
    for (seL4_Word i = 0; i < bi->untyped.end - bi->untyped.start; i++) {
        const seL4_UntypedDesc *u = &bi->untypedList[i];
        unsigned long size = 1ul << u->sizeBits;
        if (u->isDevice) {
            device += size;
            n_dev++;
        } else {
            ram += size;
            n_ram++;
            if (u->sizeBits > largest)
                largest = u->sizeBits;
        }
    }
    printf("Kairos BootInfo summary\n");
    printf("  untypeds: %lu (%lu RAM, %lu device)\n", (unsigned long)(bi->untyped.end - bi->untyped.start), n_ram,
           n_dev);
    printf("  free memory: %lu bytes (%lu MiB) of RAM untyped; largest RAM untyped 2^%lu bytes\n", ram, ram >> 20,
           largest);
    printf("  device untyped: %lu MiB of physical address space\n", device >> 20);
    printf("  empty slots: [%lu, %lu)\n", (unsigned long)bi->empty.start, (unsigned long)bi->empty.end);
    printf("  slot regions:\n");
    print_region("userImagePaging", bi->userImagePaging);
    print_region("extraBIPages", bi->extraBIPages);
    print_region("schedcontrol", bi->schedcontrol);
    print_region("userImageFrames", bi->userImageFrames);
    print_region("untyped", bi->untyped);
    print_region("empty", bi->empty);
    printf("  IPC buffer at %p, CNode of 2^%lu slots\n", (void *)bi->ipcBuffer,
           (unsigned long)bi->initThreadCNodeSizeBits);

    size_t fdt_size = 0;
    const void *fdt = kairos_bootinfo_fdt(bi, &fdt_size);
    if (!fdt) {
        kairos_exit(false, "no device tree in the extra BootInfo");
    }
    kairos_mem_region_t mem[8];
    int n = kairos_fdt_memory(fdt, mem, 8);
    printf("  device tree: %lu bytes; memory:", (unsigned long)fdt_size);
    for (int i = 0; i < n && i < 8; i++)
        printf(" [%#lx, %#lx)", (unsigned long)mem[i].base, (unsigned long)(mem[i].base + mem[i].size));
    printf("\n");
    bool ok = n > 0 && ram > 0 && bi->empty.end == (1ul << bi->initThreadCNodeSizeBits);
    kairos_exit(ok, ok ? NULL : "BootInfo summary inconsistent");
}
