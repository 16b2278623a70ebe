# Kairos top-level build.
#   make run               boot the default system (debug kernel) on QEMU: the BootInfo
#                          summary (user/rootinfo), then the mixed-criticality
#                          demonstration (examples/demo/system.xml, built by
#                          kairos build), deterministic under -icount
#   make test              every test: host unit tests, analyser tests, on-target suites
#   make bench             benchmarks (release kernel)
#   make latency-check     interrupt latency: regions bounded, stress task replayed
#   make prove             Frama-C/WP proofs of kernel code (docs/proofs.md)
#   make campaign          long campaigns outside CI (the whole generated scheduler's proof)
#   make kernel FLAVOUR=release|debug|check
# Flavours are defined once, here and in kernel/include/config.h:
#   debug   seL4 debug system calls and kernel printing, -O2
#   check   debug + the kernel invariant checker (Kairos's own tests)
#   release no debug calls or printing, fastpath on (benchmarks)

FLAVOUR ?= debug
BUILD ?= build/$(FLAVOUR)
CROSS ?= riscv64-unknown-elf-
CC := $(CROSS)gcc
OBJCOPY := $(CROSS)objcopy
PYTHON := .venv/bin/python
KAIROS := .venv/bin/kairos

ifeq ($(filter $(FLAVOUR),debug check release),)
$(error FLAVOUR must be debug, check or release)
endif
FLAVOUR_DEFINE := KAIROS_FLAVOUR_$(shell echo $(FLAVOUR) | tr a-z A-Z)

# ---- kernel ----
KERNEL_ARCH := riscv
KERNEL_SRCS := $(wildcard kernel/kernel/*.c kernel/object/*.c kernel/lib/*.c \
                 kernel/arch/$(KERNEL_ARCH)/*.c kernel/arch/$(KERNEL_ARCH)/object/*.c)
KERNEL_ASM := $(wildcard kernel/arch/$(KERNEL_ARCH)/*.S)
KERNEL_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(KERNEL_SRCS)) $(patsubst %.S,$(BUILD)/%.o,$(KERNEL_ASM))
# -fno-jump-tables: a switch's table is a .rodata load at an index the WCET
# analysis cannot know, a data-cache miss after any access at an unknown set;
# a compare chain costs a few cycles (docs/wcet.md "Interrupt latency").
# -falign-functions=64: each function starts on an I-cache line, so a call
# fetches no line it shares with the code before it (fewer I-line misses per
# call in the WCET analysis; about 9 KiB of padding that is never executed).
# -ffunction-sections: a section per function, so that the linker script can
# gather the functions a board runs from the ITIM (kernel/arch/riscv/itim.ld).
KERNEL_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -ffreestanding -fno-builtin -nostdlib \
    -march=rv64imac_zicsr_zifencei -mabi=lp64 -mcmodel=medany -mno-relax -fno-pic \
    -fno-stack-protector -fomit-frame-pointer -fno-common -fno-asynchronous-unwind-tables -fno-jump-tables \
    -falign-functions=64 -ffunction-sections \
    -D$(FLAVOUR_DEFINE) -Ikernel/include -Ikernel/arch/$(KERNEL_ARCH)/include -MMD -MP
KERNEL_ASFLAGS := -march=rv64imafdc_zicsr_zifencei -mabi=lp64 -mno-relax -D__ASSEMBLER__ \
    -D$(FLAVOUR_DEFINE) -Ikernel/include -Ikernel/arch/$(KERNEL_ARCH)/include -MMD -MP
KERNEL_ELF := $(BUILD)/kernel.elf

.PHONY: all kernel run test campaign bench fuzz fuzz-campaign latency-check prove bootstrap clean user
all: kernel user

kernel: $(KERNEL_ELF)

# The Makefile is a prerequisite: its flags (KERNEL_CFLAGS) shape the code the
# WCET figures are measured on, so a flag change rebuilds the kernel.
$(BUILD)/kernel/%.o: kernel/%.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(KERNEL_CFLAGS) -c $< -o $@

$(BUILD)/kernel/%.o: kernel/%.S Makefile
	@mkdir -p $(dir $@)
	$(CC) $(KERNEL_ASFLAGS) -c $< -o $@

$(KERNEL_ELF): $(KERNEL_OBJS) kernel/arch/$(KERNEL_ARCH)/kernel.ld kernel/arch/$(KERNEL_ARCH)/itim.ld
	$(CC) $(KERNEL_CFLAGS) -T kernel/arch/$(KERNEL_ARCH)/kernel.ld -Wl,--no-relax -Wl,-z,noexecstack \
	    -Wl,--build-id=none -o $@ $(KERNEL_OBJS)
	@$(CROSS)size $@ | tail -1 | awk '{printf "kernel: text %d bytes, data %d, bss %d\n", $$1, $$2, $$3}'

-include $(KERNEL_OBJS:.o=.d)

# ---- user side: library, root tasks, on-target test suite ----
-include user/lib/lib.mk
-include user/tests/tests.mk
-include user/rootinfo/rootinfo.mk
-include user/bench/bench.mk
-include user/tasched/tasched.mk
-include user/fuzz/fuzz.mk
-include user/latency/latency.mk
-include user/edf/edf.mk
-include user/crit/crit.mk
-include user/pd/pd.mk
-include user/loader/loader.mk
-include examples/examples.mk

# ---- entry points ----
bootstrap:
	@scripts/bootstrap.sh

run: bootstrap
	@$(MAKE) --no-print-directory FLAVOUR=debug kernel user
	$(KAIROS) run --kernel build/debug/kernel.elf build/debug/user/rootinfo/rootinfo.elf --timeout 60
	$(KAIROS) build examples/demo/system.xml --search-path build/debug/examples/demo -o build/debug/examples/demo.elf
	$(KAIROS) run --kernel build/debug/kernel.elf build/debug/examples/demo.elf --icount --timeout 120

# The tests run on every core: TEST_JOBS pytest-xdist workers (default: the
# number of processors; TEST_JOBS=0 runs them in one process, serially), each
# test module one unit of work, the longest units first (tests/conftest.py).
# Everything the tests build is built here first, so that their own `make`
# calls find it up to date and two workers never build the same file at once.
TEST_JOBS ?= $(shell nproc)
test: bootstrap
	@$(MAKE) --no-print-directory FLAVOUR=check kernel user
	@$(MAKE) --no-print-directory FLAVOUR=debug kernel user
	@$(MAKE) --no-print-directory FLAVOUR=release kernel build/release/user/bench/bench.elf \
	    build/release/user/latency/latency_stress.elf
	$(PYTHON) -m pytest -q -m "not campaign" -n $(TEST_JOBS) --dist loadgroup --durations=30 tests \
	    $(if $(KTEST),-k ktest,) $(PYTEST_ARGS)

# Long campaigns that do not fit CI's 40 minutes (tests marked `campaign`):
# today two refill-sum mutants of the kernel proofs (docs/proofs.md).
campaign: bootstrap
	$(PYTHON) -m pytest -q -m campaign -n $(TEST_JOBS) --dist loadgroup tests $(PYTEST_ARGS)

# Benchmarks (docs/benchmarks.md): the release kernel and user/bench under
# -icount; prints the table, the results file (build/bench/results/<UTC>.json,
# also build/bench/latest.json) and the comparison with the previous run.
bench: bootstrap
	@$(MAKE) --no-print-directory FLAVOUR=release kernel build/release/user/bench/bench.elf
	$(KAIROS) bench run --no-build --firmware-check $(BENCH_ARGS)

# The on-target fuzzer (docs/robustness.md) on the check kernel under
# -icount (deterministic): SEED, CALLS (system calls in all), INVARIANTS (the
# invariant checker runs after every N-th kernel entry, N a power of two),
# REPLAY=N prints every call from the N-th on. TIMEOUT in seconds.
SEED ?= 1
CALLS ?= 100000
INVARIANTS ?= 16
TIMEOUT ?= 1800
fuzz: bootstrap
	@$(MAKE) --no-print-directory FLAVOUR=check kernel build/check/user/fuzz/fuzz.elf
	$(PYTHON) -m kairos.fuzz --seed $(SEED) --calls $(CALLS) --invariants $(INVARIANTS) \
	    --timeout $(TIMEOUT) $(if $(REPLAY),--replay $(REPLAY),)

# The campaign of docs/robustness.md: 10^7 calls (about an hour on 2 cores).
fuzz-campaign:
	@$(MAKE) --no-print-directory fuzz CALLS=10000000 TIMEOUT=21600

# Interrupt latency checked against reality (docs/wcet.md "Interrupt latency"):
# every region of the release kernel bounded, the stress root task's kernel
# runs captured under QEMU and replayed region by region (tens of minutes).
latency-check: bootstrap
	@$(MAKE) --no-print-directory FLAVOUR=release kernel build/release/user/latency/latency_stress.elf
	@mkdir -p build/latency
	$(KAIROS) latency build/release/kernel.elf -a kernel/wcet-annotations.toml \
	    --observe build/release/user/latency/latency_stress.elf \
	    --json build/latency/observed.json --html build/latency/regions.html

# Frama-C/WP proofs (docs/proofs.md): each proof set is proofs/NAME.args;
# another set is one more file and one more line here (PROOF_SETS += NAME).
# Prints `prove: proved N/M goals` and fails unless N = M.
PROOF_SETS := refill refill-order refill-charge refill-window refill-history ready ready-callers tqueue tqueue-insert release release-order release-backptr cdt
prove: bootstrap
	proofs/prove.sh $(PROOF_SETS)

clean:
	rm -rf build
