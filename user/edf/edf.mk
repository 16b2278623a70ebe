# User-level EDF on Kairos (user/edf/edf.c, docs/timed-automata.md
# "User-level EDF and criticality switch").
EDF_ELF := $(BUILD)/user/edf/edf.elf
$(eval $(call user-roottask,$(EDF_ELF),$(BUILD)/user/edf/edf.o))
user: $(EDF_ELF)
-include $(BUILD)/user/edf/edf.d
