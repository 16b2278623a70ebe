"""User-level EDF on Kairos (user/edf): a scheduler thread at priority 255
releases jobs every 10 ms and orders two tasks by absolute deadline with
TCB_SetPriority; under QEMU -icount, 100 periods of the longest task under
EDF meet every deadline (completion times read with rdtime), while the same
jobs under rate-monotonic priorities miss (user/edf/edf.c)."""

from __future__ import annotations

import math
import re
import subprocess

from conftest import REPO
from kairos.runner import run

ELF = REPO / "build" / "debug" / "user" / "edf" / "edf.elf"


def rm_response_time(tasks: list[tuple[int, int]], i: int) -> float:
    """Response time of task i (work, period) under rate-monotonic priorities
    (Joseph and Pandya's recurrence); inf once it passes the period."""
    order = sorted(range(len(tasks)), key=lambda j: tasks[j][1])
    higher = [tasks[j] for j in order[:order.index(i)]]
    r = tasks[i][0]
    while r <= tasks[i][1]:
        nxt = tasks[i][0] + sum(math.ceil(r / p) * c for c, p in higher)
        if nxt == r:
            return r
        r = nxt
    return math.inf


def test_user_level_edf_meets_every_deadline_where_rate_monotonic_misses(debug_kernel) -> None:
    proc = subprocess.run(["make", "-s", "--no-print-directory", "FLAVOUR=debug", "user"], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = run(ELF, debug_kernel, icount=True, timeout=300)
    text = result.output
    assert result.passed, result.reason + text[-3000:]

    m = re.search(r"edf: workload (.*) \(work/WCET/period ms\)", text)
    assert m, text[-3000:]
    workload = {}
    for item in m.group(1).split():
        name, nums = item.split("=")
        work, wcet, period = map(int, nums.split("/"))
        workload[name] = (work, wcet, period)
    # The reservations fit one CPU (EDF's test) and the work alone does not
    # fit rate-monotonic priorities: EDF is needed.
    assert sum(wcet / period for _, wcet, period in workload.values()) <= 1.0
    tasks = [(w, p) for w, _, p in workload.values()]
    assert any(rm_response_time(tasks, i) > tasks[i][1] for i in range(len(tasks)))

    longest = max(p for _, _, p in workload.values())
    jobs = dict(EDF=100 * longest, RM=20 * longest)
    for policy, run_ms in jobs.items():
        for name, (work, _, period) in workload.items():
            m = re.search(rf"edf: {policy} task {name}: released (\d+), completed (\d+), max response (\d+) us, "
                          rf"deadline (\d+) us, missed (\d+)", text)
            assert m, (policy, name, text[-3000:])
            released, completed, response, deadline, missed = map(int, m.groups())
            assert released == run_ms // period
            assert deadline == period * 1000
            assert response >= work * 1000  # a job cannot finish before its work is done
            if policy == "EDF":
                assert completed == released and missed == 0, m.group(0)
                assert response <= deadline, m.group(0)
    m = re.search(r"edf: EDF (\d+) ms: (\d+) misses; rate-monotonic (\d+) ms: (\d+) misses", text)
    assert m, text[-3000:]
    assert int(m.group(1)) == jobs["EDF"] and int(m.group(2)) == 0
    assert int(m.group(3)) == jobs["RM"] and int(m.group(4)) > 0
    assert "edf verdict: PASS" in text
