# Kairos on-target test root task (ktest.elf).
#
# Included by the top-level Makefile after user/lib/lib.mk.  Builds
# $(BUILD)/user/tests/ktest.elf from the framework and every
# user/tests/test_*.c.  The test filter is a boot argument:
#   qemu ... -append "ktest=<area>/<name>"   (see docs/user-library.md)

KTEST_SRCS := user/tests/framework/ktest.c user/tests/framework/threads.c $(sort $(wildcard user/tests/test_*.c))
KTEST_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(KTEST_SRCS))
KTEST_ELF := $(BUILD)/user/tests/ktest.elf

$(KTEST_OBJS): USER_CFLAGS += -Iuser/tests/framework

$(eval $(call user-roottask,$(KTEST_ELF),$(KTEST_OBJS)))

ktest-elf: $(KTEST_ELF)
user: ktest-elf
.PHONY: ktest-elf user

-include $(KTEST_OBJS:.o=.d)
