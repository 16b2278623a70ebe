# Kairos user library (libsel4-kairos) and root-task runtime.
#
# Included by the top-level Makefile.  Paths are relative to the
# repository root (where make runs).  Inputs:
#   BUILD       output directory (default: build)
# Provides:
#   USER_CC, USER_CFLAGS, USER_ASFLAGS, USER_LDFLAGS, USER_LIBS
#   USER_LIB_SRCS, USER_LIB_OBJS, USER_CRT0, USER_LIB (the archive)
#   pattern rules  $(BUILD)/user/%.o : user/%.c  and  user/%.S
#   $(call user-link,<out.elf>,<objs>)          link command, for a recipe
#   $(eval $(call user-roottask,<out.elf>,<objs>))  a complete link rule
#
# A root task = crt0.o + your objects + libsel4-kairos.a + picolibc,
# linked with user/lib/roottask.ld into a static ELF at 0x400000.

BUILD ?= build

USER_LIB_DIR := user/lib
USER_CC ?= riscv64-unknown-elf-gcc
USER_AR ?= riscv64-unknown-elf-ar

USER_ARCH_FLAGS := -march=rv64imafdc_zicsr_zifencei -mabi=lp64d -mcmodel=medany

USER_CFLAGS := $(USER_ARCH_FLAGS) --specs=picolibc.specs -std=c11 -O2 -g \
	-ffreestanding -fno-common -ffunction-sections -fdata-sections \
	-fno-stack-protector -fno-pic \
	-Wall -Wextra -Werror \
	-I$(USER_LIB_DIR)/include -Ikernel/include/uapi

# kernel/include/uapi: the numbers the kernel and the library share
# (kairos/debug_calls.h).
USER_ASFLAGS := $(USER_ARCH_FLAGS) -g -I$(USER_LIB_DIR)/include -Ikernel/include/uapi

USER_LDFLAGS := $(USER_ARCH_FLAGS) --specs=picolibc.specs -static -nostartfiles \
	-T$(USER_LIB_DIR)/roottask.ld -Wl,--gc-sections -Wl,-z,max-page-size=4096 \
	-Wl,--build-id=none

# Libraries after the objects (picolibc's -lc and libgcc come from the specs).
USER_LIBS := -lc -lgcc

USER_LIB_SRCS := $(wildcard $(USER_LIB_DIR)/src/*.c)
USER_LIB_OBJS := $(patsubst $(USER_LIB_DIR)/%.c,$(BUILD)/user/lib/%.o,$(USER_LIB_SRCS))
USER_CRT0 := $(BUILD)/user/lib/crt0.o
USER_LIB := $(BUILD)/user/lib/libsel4-kairos.a

$(BUILD)/user/%.o: user/%.c
	@mkdir -p $(dir $@)
	$(USER_CC) $(USER_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/user/%.o: user/%.S
	@mkdir -p $(dir $@)
	$(USER_CC) $(USER_ASFLAGS) -MMD -MP -c $< -o $@

$(USER_LIB): $(USER_LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(USER_AR) rcs $@ $^

# $(call user-link,<out.elf>,<objs>): the link command line.
user-link = $(USER_CC) $(USER_LDFLAGS) -o $(1) $(USER_CRT0) $(2) $(USER_LIB) $(USER_LIBS)

# $(eval $(call user-roottask,<out.elf>,<objs>)): rule building <out.elf>.
define user-roottask
$(1): $(2) $(USER_CRT0) $(USER_LIB) $(USER_LIB_DIR)/roottask.ld
	@mkdir -p $$(dir $$@)
	$$(call user-link,$$@,$(2))
endef

user-lib: $(USER_CRT0) $(USER_LIB)
user: user-lib
.PHONY: user-lib user

-include $(USER_LIB_OBJS:.o=.d) $(USER_CRT0:.o=.d)
