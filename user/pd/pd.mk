# The protection-domain runtime (include/kairos/pd.h) and the rule that
# links a PD program: pd crt0 + your objects + pd.o + libsel4-kairos.a +
# picolibc, with the root-task linker script (a static ELF at 0x400000;
# each PD has its own address space). PDs get a 16 KiB malloc heap.
#   $(eval $(call user-pd,<out.elf>,<objs>))
USER_CFLAGS += -Iuser/pd/include
PD_CRT0 := $(BUILD)/user/pd/crt0.o
PD_RUNTIME := $(BUILD)/user/pd/pd.o

define user-pd
$(1): $(2) $(PD_CRT0) $(PD_RUNTIME) $(USER_LIB) $(USER_LIB_DIR)/roottask.ld
	@mkdir -p $$(dir $$@)
	$$(USER_CC) $$(USER_LDFLAGS) -Wl,--defsym=__kairos_heap_size=0x4000 -o $$@ $(PD_CRT0) $(2) $(PD_RUNTIME) \
	    -Wl,--start-group $$(USER_LIB) $$(USER_LIBS) -Wl,--end-group
endef

user: $(PD_CRT0) $(PD_RUNTIME)
-include $(PD_CRT0:.o=.d) $(PD_RUNTIME:.o=.d)
