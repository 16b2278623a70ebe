/*
 * Kairos user library: kernel configuration as seen by user programs.
 *
 * These are the configuration values of the seL4 MCS riscv64 build whose
 * ABI Kairos implements (seL4's default MCS riscv64 configuration).
 * Programs test them with #ifdef / #if, exactly as they would against a
 * seL4 build's generated configuration header.
 */
#ifndef SEL4_CONFIG_H
#define SEL4_CONFIG_H

#define CONFIG_KERNEL_MCS 1
#define CONFIG_ARCH_RISCV 1
#define CONFIG_ARCH_RISCV64 1
#define CONFIG_SEL4_ARCH_RISCV64 1
#define CONFIG_RISCV_SV39 1
#define CONFIG_PLAT_QEMU_RISCV_VIRT 1
#define CONFIG_WORD_SIZE 64
#define CONFIG_PT_LEVELS 3
#define CONFIG_HAVE_FPU 1
#define CONFIG_RISCV_EXT_F 1
#define CONFIG_RISCV_EXT_D 1

#define CONFIG_ROOT_CNODE_SIZE_BITS 13
#define CONFIG_MAX_NUM_NODES 1
#define CONFIG_NUM_PRIORITIES 256
#define CONFIG_NUM_DOMAINS 1
#define CONFIG_BOOT_THREAD_TIME_SLICE 5
#define CONFIG_MAX_NUM_BOOTINFO_UNTYPED_CAPS 230
#define CONFIG_RETYPE_FAN_OUT_LIMIT 256
#define CONFIG_RESET_CHUNK_BITS 8
#define CONFIG_MAX_NUM_WORK_UNITS_PER_PREEMPTION 100
#define CONFIG_KERNEL_WCET_SCALE 1
#define CONFIG_KERNEL_STATIC_MAX_PERIOD_US 0
#define CONFIG_PADDR_USER_DEVICE_TOP 0x8000000000ull
#define CONFIG_FASTPATH 1

/*
 * The debug system calls (seL4_Debug*) exist in the "debug" and "check"
 * kernel flavours.  A program built for the release kernel defines
 * KAIROS_RELEASE_KERNEL before including <sel4/sel4.h>.
 */
#ifndef KAIROS_RELEASE_KERNEL
#define CONFIG_DEBUG_BUILD 1
#define CONFIG_PRINTING 1
#endif

#endif /* SEL4_CONFIG_H */
