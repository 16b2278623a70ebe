# The benchmark root task (issue 6, docs/benchmarks.md): a plain seL4-ABI
# program (seL4 API headers + crt0, no Kairos extensions, no debug calls),
# meant for the release kernel: `make bench`, `kairos bench run`.
BENCH_OBJS := $(BUILD)/user/bench/bench.o
BENCH_ELF := $(BUILD)/user/bench/bench.elf
# KAIROS_RELEASE_KERNEL hides the debug system calls from <sel4/sel4.h>, so
# the program cannot use one by accident (they do not exist in release).
$(BUILD)/user/bench/bench.o: USER_CFLAGS += -DKAIROS_RELEASE_KERNEL
$(eval $(call user-roottask,$(BENCH_ELF),$(BENCH_OBJS)))
user: $(BENCH_ELF)
-include $(BENCH_OBJS:.o=.d)
