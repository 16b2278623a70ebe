# The on-target fuzzer (`make fuzz`, docs/robustness.md): a root task that
# makes random and hostile system calls from several threads at once.
FUZZ_OBJS := $(BUILD)/user/fuzz/fuzz.o
FUZZ_ELF := $(BUILD)/user/fuzz/fuzz.elf
$(eval $(call user-roottask,$(FUZZ_ELF),$(FUZZ_OBJS)))
user: $(FUZZ_ELF)
-include $(FUZZ_OBJS:.o=.d)

# Temporal isolation under attack (user/fuzz/isolation.c, tests/test_fuzz.py).
ISOLATION_OBJS := $(BUILD)/user/fuzz/isolation.o
ISOLATION_ELF := $(BUILD)/user/fuzz/isolation.elf
$(eval $(call user-roottask,$(ISOLATION_ELF),$(ISOLATION_OBJS)))
user: $(ISOLATION_ELF)
-include $(ISOLATION_OBJS:.o=.d)
