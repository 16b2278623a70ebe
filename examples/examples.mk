# Example systems (examples/*/system.xml, docs/system-description.md): every
# examples/<system>/<pd>.c is one protection domain's program, linked into
# $(BUILD)/examples/<system>/<pd>.elf with the PD runtime. `kairos build
# examples/<system>/system.xml --search-path $(BUILD)/examples/<system>`
# packs them with the loader.
EXAMPLE_SRCS := $(wildcard examples/*/*.c)
EXAMPLE_ELFS := $(patsubst examples/%.c,$(BUILD)/examples/%.elf,$(EXAMPLE_SRCS))

$(BUILD)/examples/%.o: examples/%.c
	@mkdir -p $(dir $@)
	$(USER_CC) $(USER_CFLAGS) -MMD -MP -c $< -o $@

$(foreach e,$(EXAMPLE_ELFS),$(eval $(call user-pd,$(e),$(e:.elf=.o))))
user: $(EXAMPLE_ELFS)
-include $(EXAMPLE_ELFS:.elf=.d)
