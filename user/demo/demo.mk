# The default system (`make run`): the mixed-criticality demonstration
# (user/demo/mcs_demo.c, docs/scheduling.md "Demonstration").
DEMO_OBJS := $(BUILD)/user/demo/mcs_demo.o
DEMO_ELF := $(BUILD)/user/demo/mcs_demo.elf
$(eval $(call user-roottask,$(DEMO_ELF),$(DEMO_OBJS)))
user: $(DEMO_ELF)
-include $(DEMO_OBJS:.o=.d)
