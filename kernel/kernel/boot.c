/* Boot: from the device tree and the root task's ELF (the initrd) to the root
 * task running in the seL4 boot state (seL4's src/kernel/boot.c and the seL4 reference manual, "Initial state"; docs/boot.md).
 *
 * Order: console, device tree, free-memory map, root-task ELF check, boot
 * objects (allocated from free RAM, biggest first), the root task's address
 * space and image, its CNode with every initial cap in seL4's slot order, the
 * BootInfo and extra BootInfo, the untyped caps for everything left, then the
 * first return to user mode. Any bad input stops here with one clear line. */
#include <abi.h>
#include <arch/csr.h>
#include <arch/machine.h>
#include <arch/memory.h>
#include <arch/vspace.h>
#include <boot.h>
#include <cspace.h>
#include <elf.h>
#include <fastpath.h>
#include <fdt.h>
#include <invariants.h>
#include <preemption.h>
#include <kernel.h>
#include <objecttype.h>
#include <regions.h>
#include <string.h>
#include <thread.h>

extern char kernel_image_start[], kernel_image_end[];

/* Kernel devices kept from user space, reserved in 2 MiB units as seL4 does. */
#define KERNEL_DEVICE_ALIGN (1ul << 21)

static struct fdt_info fdt;
static struct region_set free_ram;     /* RAM nobody uses yet */
static struct region_set device_space; /* physical ranges handed out as device untypeds */
static struct elf_image root_elf;
struct boot_stats boot_stats;

NORETURN static void boot_fail(const char *what, const char *detail)
{
    kprintf("kairos: boot failed: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    kernel_halt(true);
}

static void reserve(struct region_set *s, u64 base, u64 end, const char *what)
{
    if (region_remove(s, base, end) != 0)
        boot_fail("too many memory regions while reserving", what);
}

/* Boot allocator: the lowest naturally aligned block of free RAM. */
static paddr_t boot_alloc(u32 size_bits)
{
    u64 size = 1ul << size_bits;
    for (u32 i = 0; i < free_ram.n; i++) {
        u64 base = ALIGN_UP(free_ram.r[i].base, size);
        if (base >= free_ram.r[i].base && base + size <= free_ram.r[i].end && base + size <= KERNEL_WINDOW_SIZE) {
            reserve(&free_ram, base, base + size, "boot object");
            memset(paddr_to_kptr(base), 0, size);
            boot_stats.boot_object_bytes += size;
            return base;
        }
    }
    boot_fail("out of memory for boot objects", NULL);
}

static void init_memory_map(paddr_t dtb_pa)
{
    for (u32 i = 0; i < fdt.n_mem; i++) {
        u64 base = fdt.mem[i].base, end = fdt.mem[i].base + fdt.mem[i].size;
        if (end > KERNEL_WINDOW_SIZE)
            end = KERNEL_WINDOW_SIZE; /* RAM the kernel cannot reach is not handed out */
        if (base < end && region_add(&free_ram, base, end) != 0)
            boot_fail("too many memory banks", NULL);
    }
    if (free_ram.n == 0)
        boot_fail("device tree has no /memory", NULL);
    /* Device space: all of [0, 2^39) that is not RAM, plus the firmware's RAM. */
    region_add(&device_space, 0, CONFIG_PADDR_USER_DEVICE_TOP);
    for (u32 i = 0; i < fdt.n_mem; i++)
        reserve(&device_space, fdt.mem[i].base, fdt.mem[i].base + fdt.mem[i].size, "RAM");
    region_add(&device_space, FIRMWARE_BASE, FIRMWARE_END);
    if (fdt.clint.size)
        reserve(&device_space, ALIGN_DOWN(fdt.clint.base, KERNEL_DEVICE_ALIGN),
                ALIGN_UP(fdt.clint.base + fdt.clint.size, KERNEL_DEVICE_ALIGN), "CLINT");
    if (fdt.plic.size)
        reserve(&device_space, ALIGN_DOWN(fdt.plic.base, KERNEL_DEVICE_ALIGN),
                ALIGN_UP(fdt.plic.base + fdt.plic.size, KERNEL_DEVICE_ALIGN), "PLIC");

    reserve(&free_ram, FIRMWARE_BASE, FIRMWARE_END, "firmware");
    for (u32 i = 0; i < fdt.n_resv; i++)
        reserve(&free_ram, fdt.resv[i].base, fdt.resv[i].base + fdt.resv[i].size, "reserved-memory");
    reserve(&free_ram, kptr_to_paddr(kernel_image_start), ALIGN_UP(kptr_to_paddr(kernel_image_end), 4096),
            "kernel image");
    reserve(&free_ram, ALIGN_DOWN(dtb_pa, 4096), ALIGN_UP(dtb_pa + fdt.totalsize, 4096), "device tree");
    reserve(&free_ram, ALIGN_DOWN(fdt.initrd_start, 4096), ALIGN_UP(fdt.initrd_end, 4096), "initrd");
}

/* The root task's virtual layout, as seL4's (src/kernel/boot.c): image,
 * IPC buffer, BootInfo, extra BootInfo, one page after another. */
struct root_layout {
    vaddr_t image_start, image_end; /* page-aligned */
    vaddr_t ipc_buffer, bootinfo, extra_bi;
    word_t extra_bi_pages;
    vaddr_t end; /* end of the extra BootInfo region */
    word_t image_pages;
    word_t n_l1_tables, n_l0_tables; /* 1 GiB and 2 MiB granules touched */
};

static word_t granules(vaddr_t start, vaddr_t end, u32 bits)
{
    return ((end - 1) >> bits) - (start >> bits) + 1;
}

static struct root_layout plan_root_layout(void)
{
    struct root_layout l;
    l.image_start = ALIGN_DOWN(root_elf.lowest_vaddr, 4096);
    l.image_end = ALIGN_UP(root_elf.highest_vaddr_end, 4096);
    l.image_pages = (l.image_end - l.image_start) >> 12;
    l.ipc_buffer = l.image_end;
    l.bootinfo = l.ipc_buffer + 4096;
    l.extra_bi = l.bootinfo + 4096;
    l.extra_bi_pages = ALIGN_UP(sizeof(struct bootinfo_header) + fdt.totalsize, 4096) >> 12;
    l.end = l.extra_bi + (l.extra_bi_pages << 12);
    if (l.image_end < l.image_start || l.end > USER_TOP || l.end < l.image_start)
        boot_fail("root task image, IPC buffer and BootInfo do not fit below seL4_UserTop", NULL);
    l.n_l1_tables = granules(l.image_start, l.end, 30);
    l.n_l0_tables = granules(l.image_start, l.end, 21);
    return l;
}

static cte_t *root_cnode;

static paddr_t create_root_objects(struct root_layout *l, struct tcb **tcb_out, struct sched_context **sc_out,
                                   paddr_t *vspace_out, paddr_t *pool_out)
{
    /* Biggest first, so alignment leaves no holes between boot objects. */
    paddr_t cnode = boot_alloc(CONFIG_ROOT_CNODE_SIZE_BITS + SLOT_BITS);
    root_cnode = (cte_t *)paddr_to_kptr(cnode);
    *vspace_out = boot_alloc(PAGE_TABLE_BITS);
    *pool_out = boot_alloc(ASID_POOL_BITS);
    paddr_t tcb = boot_alloc(TCB_BITS);
    paddr_t sc = boot_alloc(MIN_SCHED_CONTEXT_BITS);
    *tcb_out = tcb_from_paddr(tcb);
    *sc_out = (struct sched_context *)paddr_to_kptr(sc);
    (void)l;
    return cnode;
}

static word_t next_slot = NUM_INITIAL_CAPS;

static word_t place_cap(cap_t c)
{
    if (next_slot >= (1ul << CONFIG_ROOT_CNODE_SIZE_BITS))
        boot_fail("root CNode too small for the initial caps (root task image too large)", NULL);
    cte_insert_original(c, &root_cnode[next_slot], true);
    return next_slot++;
}

static void put_initial_cap(word_t slot, cap_t c) { cte_insert_original(c, &root_cnode[slot], true); }

#define ROOT_ASID 1

static cap_t mapped_frame_cap(paddr_t pa, vaddr_t va)
{
    return cap_set_mapping(cap_frame(pa, 0, VM_READ_WRITE, false), ROOT_ASID, va);
}

static void map_root_frame(pte_t *root, vaddr_t va, paddr_t pa) { vspace_map_user_page(root, va, pa); }

static void provide_untypeds(struct bootinfo *bi, const struct region_set *set, bool device, word_t *count)
{
    for (u32 i = 0; i < set->n; i++) {
        struct untyped_piece pieces[64];
        u64 base = set->r[i].base;
        /* Cut the range in batches; the cut is greedy from the start, so
         * continuing from the end of the last piece gives the same result. */
        for (int batch = 0; batch < 64 && base < set->r[i].end; batch++) {
            bool truncated = false;
            u32 n = region_cut_untypeds(base, set->r[i].end, MIN_UNTYPED_BITS, MAX_UNTYPED_BITS, pieces,
                                        ARRAY_SIZE(pieces), &truncated);
            for (u32 k = 0; k < n; k++) {
                if (*count >= CONFIG_MAX_NUM_BOOTINFO_UNTYPED_CAPS)
                    return; /* seL4 stops adding silently; so do we */
                word_t size = 1ul << pieces[k].size_bits;
                word_t slot = place_cap(cap_untyped(pieces[k].paddr, pieces[k].size_bits, device, size));
                (void)slot;
                bi->untyped_list[*count].paddr = pieces[k].paddr;
                bi->untyped_list[*count].size_bits = pieces[k].size_bits;
                bi->untyped_list[*count].is_device = device;
                (*count)++;
                if (!device)
                    boot_stats.untyped_ram_bytes += size;
            }
            if (!truncated || n == 0)
                break;
            base = pieces[n - 1].paddr + (1ul << pieces[n - 1].size_bits);
        }
    }
}

static void create_root_task(paddr_t dtb_pa)
{
    const void *image = paddr_to_kptr(fdt.initrd_start);
    u64 image_size = fdt.initrd_end - fdt.initrd_start;
    struct root_layout l = plan_root_layout();
    struct tcb *tcb;
    struct sched_context *sc;
    paddr_t vspace_pa, pool_pa;
    paddr_t cnode_pa = create_root_objects(&l, &tcb, &sc, &vspace_pa, &pool_pa);
    pte_t *vspace = (pte_t *)paddr_to_kptr(vspace_pa);
    vspace_copy_kernel_mappings(vspace);

    /* 1. Paging structures: mid-level tables, then leaf tables, ascending. */
    word_t paging_start = next_slot;
    for (word_t i = 0; i < l.n_l1_tables; i++) {
        vaddr_t va = ALIGN_DOWN(l.image_start, 1ul << 30) + (i << 30);
        paddr_t pt = boot_alloc(PAGE_TABLE_BITS);
        vspace_install_table(vspace, va, 2, pt);
        place_cap(cap_set_mapping(cap_page_table(pt), ROOT_ASID, va));
    }
    for (word_t i = 0; i < l.n_l0_tables; i++) {
        vaddr_t va = ALIGN_DOWN(l.image_start, 1ul << 21) + (i << 21);
        paddr_t pt = boot_alloc(PAGE_TABLE_BITS);
        vspace_install_table(vspace, va, 1, pt);
        place_cap(cap_set_mapping(cap_page_table(pt), ROOT_ASID, va));
    }
    word_t paging_end = next_slot;

    /* 2. Extra BootInfo: one record, the device tree. */
    word_t extra_start = next_slot;
    paddr_t extra_first = 0;
    for (word_t i = 0; i < l.extra_bi_pages; i++) {
        paddr_t pa = boot_alloc(PAGE_BITS);
        if (i == 0)
            extra_first = pa;
        /* Pages come from one free range in ascending order only if contiguous;
         * write page by page so contiguity does not matter. */
        map_root_frame(vspace, l.extra_bi + (i << 12), pa);
        place_cap(mapped_frame_cap(pa, l.extra_bi + (i << 12)));
    }
    word_t extra_end = next_slot;
    {
        struct bootinfo_header hdr = {BOOTINFO_HEADER_FDT, sizeof(hdr) + fdt.totalsize};
        const u8 *dtb = paddr_to_kptr(dtb_pa);
        word_t total = sizeof(hdr) + fdt.totalsize;
        for (word_t off = 0; off < total; off++) {
            u8 byte = off < sizeof(hdr) ? ((const u8 *)&hdr)[off] : dtb[off - sizeof(hdr)];
            cte_t *fslot = &root_cnode[extra_start + (off >> 12)];
            u8 *page = paddr_to_kptr(cap_obj(fslot->cap));
            page[off & 4095] = byte;
        }
    }
    (void)extra_first;

    /* 3. SchedControl, one per core. */
    word_t sched_control_start = place_cap(cap_sched_control(0));
    word_t sched_control_end = next_slot;

    /* 4. The image, one frame per page from first to last. */
    word_t frames_start = next_slot;
    for (word_t i = 0; i < l.image_pages; i++) {
        vaddr_t va = l.image_start + (i << 12);
        paddr_t pa = boot_alloc(PAGE_BITS);
        elf_fill_page(&root_elf, image, va, paddr_to_kptr(pa));
        map_root_frame(vspace, va, pa);
        place_cap(mapped_frame_cap(pa, va));
    }
    word_t frames_end = next_slot;
    (void)image_size;

    /* IPC buffer and BootInfo frames. */
    paddr_t ipc_pa = boot_alloc(PAGE_BITS);
    paddr_t bi_pa = boot_alloc(PAGE_BITS);
    map_root_frame(vspace, l.ipc_buffer, ipc_pa);
    map_root_frame(vspace, l.bootinfo, bi_pa);
    struct bootinfo *bi = paddr_to_kptr(bi_pa);

    /* Initial caps in their fixed slots. */
    cap_t cnode_cap = cap_cnode(cnode_pa, CONFIG_ROOT_CNODE_SIZE_BITS, 64 - CONFIG_ROOT_CNODE_SIZE_BITS, 0);
    cap_t vspace_cap = cap_set_mapping(cap_page_table(vspace_pa), ROOT_ASID, 0);
    cap_t ipc_cap = mapped_frame_cap(ipc_pa, l.ipc_buffer);
    put_initial_cap(SLOT_INIT_TCB, cap_thread(kptr_to_paddr(tcb)));
    put_initial_cap(SLOT_INIT_CNODE, cnode_cap);
    put_initial_cap(SLOT_INIT_VSPACE, vspace_cap);
    put_initial_cap(SLOT_IRQ_CONTROL, cap_irq_control());
    put_initial_cap(SLOT_ASID_CONTROL, cap_asid_control());
    put_initial_cap(SLOT_INIT_ASID_POOL, cap_asid_pool(pool_pa, 0));
    put_initial_cap(SLOT_BOOTINFO_FRAME, mapped_frame_cap(bi_pa, l.bootinfo));
    put_initial_cap(SLOT_INIT_IPC_BUFFER, ipc_cap);
    put_initial_cap(SLOT_DOMAIN, cap_domain());
    put_initial_cap(SLOT_INIT_SC, cap_sched_context(kptr_to_paddr(sc), MIN_SCHED_CONTEXT_BITS));
    asid_boot_init(pool_pa, ROOT_ASID, vspace_pa);

    /* The root thread: its caps, registers and scheduling context. */
    cte_insert(cnode_cap, &root_cnode[SLOT_INIT_CNODE], &tcb->slots[TCB_SLOT_CSPACE]);
    cte_insert(vspace_cap, &root_cnode[SLOT_INIT_VSPACE], &tcb->slots[TCB_SLOT_VSPACE]);
    cte_insert(ipc_cap, &root_cnode[SLOT_INIT_IPC_BUFFER], &tcb->slots[TCB_SLOT_IPC_BUFFER]);
    tcb->ctx.x[REG_A0] = l.bootinfo;
    tcb->ctx.pc = root_elf.entry;
    tcb->ctx.fault_ip = root_elf.entry;
    tcb->ctx.sstatus = SSTATUS_SPIE | SSTATUS_FS_CLEAN;
    tcb->ipc_buffer = l.ipc_buffer;
    tcb->priority = MAX_PRIO;
    tcb->mcp = MAX_PRIO;
    tcb->domain = 0;
    tcb->state = THREAD_RUNNING;
    sched_context_boot_init(sc, MIN_SCHED_CONTEXT_BITS, tcb);
    thread_set_name(tcb, "rootserver", 64);
    debug_register_thread(tcb);
    tcb_count_new(); /* the root thread counts towards CONFIG_MAX_THREADS */

    /* The root task image is copied: the initrd is free RAM again. */
    if (region_add(&free_ram, ALIGN_DOWN(fdt.initrd_start, 4096), ALIGN_UP(fdt.initrd_end, 4096)) != 0)
        boot_fail("too many memory regions", "initrd");

    /* 5. Untypeds: device ranges first, then free RAM, ascending. */
    word_t untyped_start = next_slot;
    word_t n_untyped = 0;
    provide_untypeds(bi, &device_space, true, &n_untyped);
    provide_untypeds(bi, &free_ram, false, &n_untyped);
    word_t untyped_end = next_slot;
    boot_stats.untyped_count = n_untyped;

    bi->extra_len = sizeof(struct bootinfo_header) + fdt.totalsize;
    bi->node_id = 0;
    bi->num_nodes = 1;
    bi->num_io_pt_levels = 0;
    bi->ipc_buffer = l.ipc_buffer;
    bi->empty.start = untyped_end;
    bi->empty.end = 1ul << CONFIG_ROOT_CNODE_SIZE_BITS;
    bi->shared_frames.start = bi->shared_frames.end = 0;
    bi->user_image_frames.start = frames_start;
    bi->user_image_frames.end = frames_end;
    bi->user_image_paging.start = paging_start;
    bi->user_image_paging.end = paging_end;
    bi->io_space_caps.start = bi->io_space_caps.end = 0;
    bi->extra_bi_pages.start = extra_start;
    bi->extra_bi_pages.end = extra_end;
    bi->init_thread_cnode_size_bits = CONFIG_ROOT_CNODE_SIZE_BITS;
    bi->init_thread_domain = 0;
    bi->schedcontrol.start = sched_control_start;
    bi->schedcontrol.end = sched_control_end;
    bi->untyped.start = untyped_start;
    bi->untyped.end = untyped_end;

    current_thread = tcb;
    thread_init_idle();
    invariants_register_slots(root_cnode, 1ul << CONFIG_ROOT_CNODE_SIZE_BITS);
    invariants_register_slots(tcb->slots, TCB_NUM_SLOTS);
}

bool bootargs_has(const char *word)
{
    /* Words are separated by spaces; at most FDT_BOOTARGS_MAX characters. */
    word_t n = strlen(word);
    const char *a = fdt.bootargs;
    for (word_t i = 0; a[i] != '\0' && i < FDT_BOOTARGS_MAX; i++) {
        bool at_start = i == 0 || a[i - 1] == ' ';
        if (at_start && strncmp(&a[i], word, n) == 0 && (a[i + n] == '\0' || a[i + n] == ' '))
            return true;
    }
    return false;
}

void boot_kernel(word_t hart_id, paddr_t dtb_pa)
{
    u64 kernel_entry_instret = read_instret();
    machine_init_console(0x10000000ul); /* QEMU virt's UART until the device tree says otherwise */
    vspace_boot_finish();
    machine_init_traps();
    kprintf("Kairos kernel (%s flavour) booting on hart %lu\n", KAIROS_FLAVOUR_NAME, hart_id);

    if (dtb_pa == 0 || dtb_pa + 64 >= KERNEL_WINDOW_SIZE)
        boot_fail("no device tree passed by the firmware", NULL);
    u32 dtb_size = fdt_total_size(paddr_to_kptr(dtb_pa));
    if (dtb_size == 0 || dtb_size > (1u << 21))
        boot_fail("device tree", "bad magic or size");
    int err = fdt_parse(paddr_to_kptr(dtb_pa), dtb_size, &fdt);
    if (err != 0)
        boot_fail("device tree", fdt_strerror(err));
    if (fdt.uart.size)
        machine_init_console(fdt.uart.base);
    if (!fdt.has_initrd || fdt.initrd_end <= fdt.initrd_start)
        boot_fail("no root task: pass it as an ELF file with -initrd", NULL);
    if (fdt.initrd_end > KERNEL_WINDOW_SIZE)
        boot_fail("initrd outside the memory the kernel can reach", NULL);
    if (fdt.timebase_freq == 0)
        boot_fail("device tree has no timebase-frequency", NULL);
    err = elf_parse(paddr_to_kptr(fdt.initrd_start), fdt.initrd_end - fdt.initrd_start, USER_TOP, &root_elf);
    if (err != 0)
        boot_fail("root task ELF", elf_strerror(err));

    init_memory_map(dtb_pa);
    machine_init_timer(&fdt);
    machine_init_interrupts(&fdt);
    timer_init(fdt.timebase_freq);
#if CONFIG_DEBUG_BUILD
    /* A traced run takes the slow path for every IPC, where the switches are
     * recorded (docs/schedule-traces.md). */
    trace_on = bootargs_has("trace=on");
    fastpath_init(!bootargs_has("fastpath=off") && !trace_on);
#else
    fastpath_init(!bootargs_has("fastpath=off"));
#endif
#if CONFIG_INVARIANT_CHECKS
    preemption_forced = bootargs_has("preempt=force");
#endif
    create_root_task(dtb_pa);

    boot_stats.first_user_instret = read_instret();
    kprintf("Kairos: boot took %lu instructions (instret %lu at boot_kernel, %lu entering the root task)\n",
            (unsigned long)(boot_stats.first_user_instret - kernel_entry_instret), (unsigned long)kernel_entry_instret,
            (unsigned long)boot_stats.first_user_instret);
    kprintf("Kairos: root task entry %p, %lu untypeds (%lu MiB of RAM), boot objects %lu KiB, Sstc %s\n",
            (void *)root_elf.entry, (unsigned long)boot_stats.untyped_count,
            (unsigned long)(boot_stats.untyped_ram_bytes >> 20), (unsigned long)(boot_stats.boot_object_bytes >> 10),
            fdt.has_sstc ? "yes" : "no");
    kernel_exit();
}
