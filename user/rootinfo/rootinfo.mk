# The default system: rootinfo, a BootInfo summary.
ROOTINFO_OBJS := $(BUILD)/user/rootinfo/main.o
ROOTINFO_ELF := $(BUILD)/user/rootinfo/rootinfo.elf
$(eval $(call user-roottask,$(ROOTINFO_ELF),$(ROOTINFO_OBJS)))
user: $(ROOTINFO_ELF)
-include $(ROOTINFO_OBJS:.o=.d)
