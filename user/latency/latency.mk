# The latency stress root task (docs/wcet.md "Interrupt latency"): a plain
# seL4-ABI program for the release kernel, run by `make latency-check`.
LATENCY_OBJS := $(BUILD)/user/latency/stress.o
LATENCY_ELF := $(BUILD)/user/latency/latency_stress.elf
$(BUILD)/user/latency/stress.o: USER_CFLAGS += -DKAIROS_RELEASE_KERNEL
$(eval $(call user-roottask,$(LATENCY_ELF),$(LATENCY_OBJS)))
user: $(LATENCY_ELF)
-include $(LATENCY_OBJS:.o=.d)
