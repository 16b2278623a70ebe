/*
 * Self-tests of the ktest framework and the user library: pure
 * computations, plus sanity checks of what the kernel handed over.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ktest.h>
#include <sel4/sel4.h>

KTEST(framework, arithmetic)
{
    volatile int two = 2;
    KASSERT(two + two == 4);
    KASSERT_EQ(two * 21, 42);
    KASSERT_NE(two, 3);
}

KTEST(framework, filter_syntax)
{
    KASSERT(ktest_filter_matches("", "ipc", "call"));
    KASSERT(ktest_filter_matches("ipc/call", "ipc", "call"));
    KASSERT(!ktest_filter_matches("ipc/cal", "ipc", "call"));
    KASSERT(ktest_filter_matches("ipc/c*", "ipc", "call"));
    KASSERT(ktest_filter_matches("*", "ipc", "call"));
    KASSERT(ktest_filter_matches("ipc", "ipc", "call"));
    KASSERT(!ktest_filter_matches("ip", "ipc", "call"));
    KASSERT(ktest_filter_matches("cnode/*,ipc/call", "ipc", "call"));
    KASSERT(!ktest_filter_matches("cnode/*,ipc/recv", "ipc", "call"));
}

KTEST(framework, bootargs_parsing)
{
    char buf[32];
    KASSERT(kairos_arg_get("console=x ktest=ipc/* foo", "ktest", buf, sizeof(buf)));
    KASSERT(strcmp(buf, "ipc/*") == 0);
    KASSERT(!kairos_arg_get("ktestx=1 xktest=2", "ktest", buf, sizeof(buf)));
    KASSERT(kairos_arg_get("ktest=abcdefgh", "ktest", buf, 4));
    KASSERT(strcmp(buf, "abc") == 0);
}

KTEST(framework, libc_and_tls)
{
    char buf[40];
    snprintf(buf, sizeof(buf), "%lx-%d-%s", 0xabcul, -7, "ok");
    KASSERT_MSG(strcmp(buf, "abc--7-ok") == 0, "snprintf gave \"%s\"", buf);
    /* errno lives in picolibc's TLS block: exercises tp set-up. */
    errno = 0;
    (void)strtol("999999999999999999999999", NULL, 10);
    KASSERT_EQ(errno, ERANGE);
    void *p = malloc(1000);
    KASSERT(p != NULL);
    memset(p, 0x5a, 1000);
    free(p);
}

KTEST(framework, messageinfo_packing)
{
    seL4_MessageInfo_t mi = seL4_MessageInfo_new(0x123, 5, 2, 17);
    KASSERT_EQ(mi.words[0], (0x123ul << 12) | (5ul << 9) | (2ul << 7) | 17ul);
    KASSERT_EQ(seL4_MessageInfo_get_label(mi), 0x123);
    KASSERT_EQ(seL4_MessageInfo_get_capsUnwrapped(mi), 5);
    KASSERT_EQ(seL4_MessageInfo_get_extraCaps(mi), 2);
    KASSERT_EQ(seL4_MessageInfo_get_length(mi), 17);
    mi = seL4_MessageInfo_set_label(mi, 0xfffffffffffffull);
    KASSERT_EQ(seL4_MessageInfo_get_label(mi), 0xfffffffffffffull);
    KASSERT_EQ(seL4_MessageInfo_get_length(mi), 17);
    mi = seL4_MessageInfo_set_length(mi, seL4_MsgMaxLength);
    KASSERT_EQ(seL4_MessageInfo_get_length(mi), 120);
    KASSERT_EQ(seL4_MessageInfo_new(0, 0, 0, 0x80).words[0], 0); /* length is 7 bits */
}

KTEST(framework, rights_and_capdata)
{
    KASSERT_EQ(seL4_AllRights.words[0], 0xf);
    KASSERT_EQ(seL4_CanWrite.words[0], 0x1);
    KASSERT_EQ(seL4_CanRead.words[0], 0x2);
    KASSERT_EQ(seL4_CanGrant.words[0], 0x4);
    KASSERT_EQ(seL4_CanGrantReply.words[0], 0x8);
    KASSERT_EQ(seL4_ReadWrite.words[0], 0x3);
    KASSERT_EQ(seL4_NoRights.words[0], 0);
    KASSERT_EQ(seL4_CNode_CapData_new(0, 51).words[0], 51);
    KASSERT_EQ(seL4_CNode_CapData_new(5, 3).words[0], (5ul << 6) | 3);
    KASSERT_EQ(seL4_CNode_CapData_get_guardSize(seL4_CNode_CapData_new(5, 3)), 3);
    KASSERT_EQ(seL4_MaxExtraRefills(7), 0);
    KASSERT_EQ(seL4_MaxExtraRefills(8), 8);
}

KTEST(bootinfo, sanity)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    KASSERT(bi != NULL);
    KASSERT_EQ((uintptr_t)bi % 4096, 0);
    KASSERT(bi->ipcBuffer != NULL);
    KASSERT_EQ((uintptr_t)bi->ipcBuffer % 1024, 0);
    KASSERT_EQ(seL4_GetIPCBuffer(), bi->ipcBuffer);
    /* IPC buffer on the page right before the BootInfo (seL4's root-task
     * layout, src/kernel/boot.c). */
    KASSERT_EQ((uintptr_t)bi->ipcBuffer + 4096, (uintptr_t)bi);
    KASSERT_EQ(bi->initThreadCNodeSizeBits, CONFIG_ROOT_CNODE_SIZE_BITS);
    KASSERT_EQ(bi->nodeID, 0);
    KASSERT_EQ(bi->numNodes, 1);
    KASSERT_EQ(bi->empty.end, 1ul << CONFIG_ROOT_CNODE_SIZE_BITS);
    KASSERT(bi->empty.start <= bi->empty.end);
    KASSERT(bi->untyped.start <= bi->untyped.end);
    KASSERT(bi->untyped.end - bi->untyped.start <= CONFIG_MAX_NUM_BOOTINFO_UNTYPED_CAPS);
    KASSERT_EQ(bi->schedcontrol.end - bi->schedcontrol.start, 1);
}

KTEST(bootinfo, device_tree)
{
    size_t size = 0;
    const void *fdt = kairos_bootinfo_fdt(kairos_bootinfo(), &size);
    KASSERT(fdt != NULL);
    KASSERT_EQ(kairos_fdt_check(fdt, size), 0);
    KASSERT(kairos_fdt_totalsize(fdt) <= size);
    kairos_mem_region_t mem[4];
    int n = kairos_fdt_memory(fdt, mem, 4);
    KASSERT(n >= 1);
    KASSERT_EQ(mem[0].base, 0x80000000ul);
    KASSERT(mem[0].size >= 64ul << 20);
    KASSERT(kairos_fdt_getprop(fdt, "/chosen", "no-such-property", NULL) == NULL);
}

KTEST(debug, cap_identify)
{
    KASSERT_EQ(seL4_DebugCapIdentify(seL4_CapNull), 0);
    KASSERT_EQ(seL4_DebugCapIdentify(seL4_CapInitThreadTCB), 12);
    KASSERT_EQ(seL4_DebugCapIdentify(seL4_CapInitThreadCNode), 10);
    KASSERT_EQ(seL4_DebugCapIdentify(seL4_CapInitThreadVSpace), 3);
    KASSERT_EQ(seL4_DebugCapIdentify(seL4_CapInitThreadSC), 22);
}
