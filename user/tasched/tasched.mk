# A user-level reservation scheduler generated from a verified model
# (user/tasched/tasched.c, docs/timed-automata.md "On Kairos"): the model
# comes from the library and the scheduler code from `kairos tatoc`, both at
# build time.
TASCHED_GEN := $(BUILD)/user/tasched/gen
TASCHED_ELF := $(BUILD)/user/tasched/tasched.elf
TASCHED_OBJS := $(BUILD)/user/tasched/tasched.o $(TASCHED_GEN)/ta_sched.o

$(TASCHED_GEN)/model.xml: tools/kairos/ta/library.py
	@mkdir -p $(dir $@)
	$(KAIROS) ta library tasched-3x6 -o $@

$(TASCHED_GEN)/ta_sched.c $(TASCHED_GEN)/ta_sched.h &: $(TASCHED_GEN)/model.xml tools/kairos/ta/tatoc.py
	$(KAIROS) tatoc $< -o $(TASCHED_GEN) >/dev/null

$(TASCHED_GEN)/ta_sched.o: $(TASCHED_GEN)/ta_sched.c $(TASCHED_GEN)/ta_sched.h
	$(USER_CC) $(USER_CFLAGS) -c $< -o $@

$(BUILD)/user/tasched/tasched.o: USER_CFLAGS += -I$(TASCHED_GEN)
$(BUILD)/user/tasched/tasched.o: $(TASCHED_GEN)/ta_sched.h

$(eval $(call user-roottask,$(TASCHED_ELF),$(TASCHED_OBJS)))
user: $(TASCHED_ELF)
-include $(BUILD)/user/tasched/tasched.d

# Frama-C/WP proofs of the generated scheduler code, every goal within a
# fixed timeout (docs/timed-automata.md "Proofs of the generated code"): the
# same model and generator as the code tasched runs, so the same C. Part of
# `make prove` (the line below) and of CI (`make test` runs it in
# tests/ta/test_tatoc_proofs.py, which asserts every goal).
.PHONY: prove-tatoc
prove-tatoc: bootstrap $(TASCHED_GEN)/model.xml
	$(KAIROS) tatoc $(TASCHED_GEN)/model.xml -o $(BUILD)/prove-tatoc --prove
prove: prove-tatoc

# The overhead benchmark (user/tasched/tabench.c, docs/timed-automata.md
# "Overhead"): the library's paper-N models for 2 to 7 servers, each
# generated with its own prefix (taN_) into one program beside a
# hand-written scheduler.
TABENCH_N := 2 3 4 5 6 7
TABENCH_GEN := $(BUILD)/user/tasched/tabench-gen
TABENCH_ELF := $(BUILD)/user/tasched/tabench.elf
TABENCH_OBJS := $(BUILD)/user/tasched/tabench.o $(foreach n,$(TABENCH_N),$(TABENCH_GEN)/ta$(n)_sched.o)

$(TABENCH_GEN)/paper-%.xml: tools/kairos/ta/library.py
	@mkdir -p $(dir $@)
	$(KAIROS) ta library paper-$* -o $@

$(TABENCH_GEN)/ta%_sched.c $(TABENCH_GEN)/ta%_sched.h &: $(TABENCH_GEN)/paper-%.xml tools/kairos/ta/tatoc.py
	$(KAIROS) tatoc $< -o $(TABENCH_GEN) --prefix ta$* >/dev/null

$(TABENCH_GEN)/ta%_sched.o: $(TABENCH_GEN)/ta%_sched.c $(TABENCH_GEN)/ta%_sched.h
	$(USER_CC) $(USER_CFLAGS) -c $< -o $@

$(BUILD)/user/tasched/tabench.o: USER_CFLAGS += -I$(TABENCH_GEN)
$(BUILD)/user/tasched/tabench.o: $(foreach n,$(TABENCH_N),$(TABENCH_GEN)/ta$(n)_sched.h)

$(eval $(call user-roottask,$(TABENCH_ELF),$(TABENCH_OBJS)))
user: $(TABENCH_ELF)
-include $(BUILD)/user/tasched/tabench.d

# `make tabench`: run it under QEMU -icount and print the table (debug
# kernel: the figures are user-mode instructions of the schedulers alone).
.PHONY: tabench
tabench: bootstrap
	@$(MAKE) --no-print-directory FLAVOUR=debug kernel build/debug/user/tasched/tabench.elf
	$(PYTHON) -m kairos.ta.tabench --json build/debug/user/tasched/tabench.json
