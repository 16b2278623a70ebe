"""The generated scheduler on Kairos (user/tasched): the model tasched-3x6,
verified with SPIN, turned into C by kairos tatoc at build time, runs as the
user-level global scheduler for 100 periods of its longest server under QEMU
-icount; the root task itself checks every unit that exactly the model's
choice ran, and from those observations that no server exceeded its budget
in a period and every job met its deadline (user/tasched/tasched.c)."""

from __future__ import annotations

import math
import re

from conftest import REPO, run_debug_root_task
from kairos.ta import library

ELF = REPO / "build" / "debug" / "user" / "tasched" / "tasched.elf"


def test_generated_scheduler_runs_the_verified_schedule(debug_kernel) -> None:
    text = run_debug_root_task(ELF, debug_kernel)
    m = re.search(r"tasched: units run: (.*); model error 0, missed 0; violations 0", text)
    assert m, text[-3000:]
    ran = dict(item.split("=") for item in m.group(1).split())
    w = library.EXAMPLES["tasched-3x6"]
    units = 100 * max(s.period for s in w.servers)
    # Every job released in the run got exactly its execution time.
    assert {t.name: int(ran[t.name]) for t in w.tasks} == \
        {t.name: math.ceil(units / t.period) * t.wcet for t in w.tasks}
    assert "tasched verdict: PASS" in text
