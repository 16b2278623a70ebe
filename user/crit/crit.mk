# A criticality-mode switch driven by timeout faults (user/crit/crit.c,
# docs/timed-automata.md "User-level EDF and criticality switch").
CRIT_ELF := $(BUILD)/user/crit/crit.elf
$(eval $(call user-roottask,$(CRIT_ELF),$(BUILD)/user/crit/crit.o))
user: $(CRIT_ELF)
-include $(BUILD)/user/crit/crit.d
