"""A criticality-mode switch on Kairos (user/crit): the HI task H runs on a
sporadic SC with its LO budget and a timeout-fault endpoint; its planted
overrun job exhausts the LO budget, the handler gets the timeout fault and
switches to HI mode (H gets its HI budget, the LO tasks are suspended).
Under QEMU -icount: the switch happens in the overrun job, H meets every
deadline, the LO tasks complete jobs only in LO mode (user/crit/crit.c)."""

from __future__ import annotations

import re

from conftest import REPO, run_debug_root_task

ELF = REPO / "build" / "debug" / "user" / "crit" / "crit.elf"
RUN_MS = 4000  # crit.c RUN_MS


def test_overrun_of_the_hi_task_switches_to_hi_mode(debug_kernel) -> None:
    text = run_debug_root_task(ELF, debug_kernel)

    m = re.search(r"crit: workload (.*) \(criticality/work/LO budget/period ms\); H HI budget (\d+), "
                  r"job (\d+) works (\d+) ms", text)
    assert m, text[-3000:]
    tasks = {}
    for item in m.group(1).split():
        name, nums = item.split("=")
        crit, work, budget, period = nums.split("/")
        tasks[name] = (crit, int(work), int(budget), int(period))
    hi_budget, overrun_job, overrun_work = map(int, m.groups()[1:])
    (hi_name, (_, hi_work, lo_budget, hi_period)), = [(n, t) for n, t in tasks.items() if t[0] == "HI"]
    # The planted job overruns the LO budget and fits the HI budget; normal jobs fit the LO budget.
    assert hi_work < lo_budget < overrun_work < hi_budget <= hi_period

    m = re.search(r"crit: switch to HI mode at (\d+) ms, in H job (\d+); (\d+) timeout faults", text)
    assert m, text[-3000:]
    switch_ms, switch_job, faults = map(int, m.groups())
    assert switch_job == overrun_job and faults == 1
    # Inside the overrun job's period, no earlier than it could have used its LO budget.
    assert overrun_job * hi_period + lo_budget <= switch_ms < (overrun_job + 1) * hi_period

    rows = {}
    for name in tasks:
        m = re.search(rf"crit: task {name}: released (\d+), completed (\d+) \(LO mode (\d+), HI mode (\d+)\), "
                      rf"dropped (\d+), missed (\d+)", text)
        assert m, (name, text[-3000:])
        rows[name] = tuple(map(int, m.groups()))
    for name, (crit, _, _, period) in tasks.items():
        released, completed, lo_done, hi_done, dropped, missed = rows[name]
        assert lo_done + hi_done == completed
        assert released + dropped == RUN_MS // period
        if crit == "HI":
            assert released == completed == RUN_MS // period and missed == 0
            assert lo_done == overrun_job and hi_done == completed - overrun_job
        else:
            # Every LO job released before the switch ran in LO mode (the one
            # caught running at the switch excepted); none ran in HI mode.
            assert lo_done >= switch_ms // period and hi_done == 0 and missed == 0
            assert dropped == RUN_MS // period - released > 0
    assert "crit verdict: PASS" in text
