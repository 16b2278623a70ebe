# The system loader (user/loader/loader.c): the root task of every image
# `kairos build` makes; the tool appends the packed spec to this ELF.
LOADER_OBJS := $(BUILD)/user/loader/loader.o
LOADER_ELF := $(BUILD)/user/loader/loader.elf
$(eval $(call user-roottask,$(LOADER_ELF),$(LOADER_OBJS)))
user: $(LOADER_ELF)
-include $(LOADER_OBJS:.o=.d)
