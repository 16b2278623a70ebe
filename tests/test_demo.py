"""The MCS demonstration (examples/demo/system.xml built by `kairos build`,
the default `make run`) and
the exact scheduling figures under QEMU's -icount (docs/scheduling.md).

The demo runs under `-icount shift=0`: one instruction is one nanosecond of
virtual time, so budgets, deadlines and overruns are measured in a machine
whose timing does not depend on the host. The checks:

- the last demo line is `demo verdict: PASS` and `kairos run` passes;
- there are 100 period lines, and in every one the critical thread met its
  deadline and the greedy thread consumed at most its 3000 µs budget plus a
  tolerance of 10 µs (one kernel entry: the entry that notices the expiry
  runs past it; seL4's kernel WCET constant). Consumed is rounded down to
  whole µs;
- with `-icount shift=0,sleep=off` two runs print identical period lines
  (with the default sleep=on QEMU lets host time into virtual time while
  the CPU is halted, and figures may differ by 1 µs between runs; the
  verdict, with its margins, does not);
- the on-target `sched` area, booted with icount=1 under -icount, checks
  its timing tightly (overrun at most 10 µs, releases a period apart less
  the 10 µs slack, the release queue's order) and the kernel's counters
  report the measurements the document quotes.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from conftest import REPO
from kairos.cli import main
from kairos.runner import run

DEMO_XML = REPO / "examples" / "demo" / "system.xml"
DEMO_PDS = REPO / "build" / "debug" / "examples" / "demo"
KTEST_ELF = REPO / "build" / "check" / "user" / "tests" / "ktest.elf"
PERIOD = re.compile(
    r"^period +(\d+): critical +(\d+) us +greedy +(\d+) us +background +(\d+) us +monitor +(\d+) us +"
    r"critical job done at \+(\d+) us: deadline (met|MISSED)$")
GREEDY_BUDGET_US = 3000
GREEDY_TOLERANCE_US = 10
PERIOD_US = 10000


def build_user(flavour: str) -> None:
    proc = subprocess.run(["make", "-s", "--no-print-directory", f"FLAVOUR={flavour}", "user"], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def demo_elf(debug_kernel, tmp_path_factory) -> Path:
    """The image `make run` boots: the description through `kairos build`."""
    build_user("debug")
    image = tmp_path_factory.mktemp("demo") / "demo.elf"
    assert main(["build", str(DEMO_XML), "--search-path", str(DEMO_PDS), "-o", str(image), "-q"]) == 0
    assert image.is_file()
    return image


def period_lines(lines: list[str]) -> list[re.Match]:
    return [m for m in (PERIOD.match(l) for l in lines) if m]


def test_demo_passes_under_icount(debug_kernel, demo_elf):
    r = run(demo_elf, kernel=debug_kernel, timeout=120, icount=True)
    detail = "\n".join(r.lines[-30:])
    assert r.passed, f"{r.reason}\n{detail}"
    verdicts = [l for l in r.lines if l.startswith("demo verdict:")]
    assert verdicts == ["demo verdict: PASS"], detail
    periods = period_lines(r.lines)
    assert [int(m.group(1)) for m in periods] == list(range(100)), detail
    for m in periods:
        critical, greedy, background = int(m.group(2)), int(m.group(3)), int(m.group(4))
        done_at = int(m.group(6))
        assert m.group(7) == "met", m.group(0)
        assert done_at < PERIOD_US, m.group(0)
        assert greedy <= GREEDY_BUDGET_US + GREEDY_TOLERANCE_US, m.group(0)
        # Throttled, not idle: it takes (about) its whole budget every period.
        assert greedy >= GREEDY_BUDGET_US - GREEDY_TOLERANCE_US, m.group(0)
        assert 0 < critical <= 2000, m.group(0)
        assert background > 0, m.group(0)
    assert r.lines.index(verdicts[0]) > r.lines.index(periods[-1].group(0))


def test_demo_is_bit_exact_without_icount_sleep(debug_kernel, demo_elf):
    outs = []
    for _ in range(2):
        r = run(demo_elf, kernel=debug_kernel, timeout=120, extra_qemu=["-icount", "shift=0,sleep=off"])
        assert r.passed, r.reason
        outs.append([m.group(0) for m in period_lines(r.lines)])
    assert len(outs[0]) == 100
    assert outs[0] == outs[1]


def test_budget_overrun_and_kernel_figures_under_icount(check_kernel):
    build_user("check")
    # The whole sched area with icount=1: its timing checks are tight here
    # (without -icount they are loose or skipped, docs/scheduling.md "Tests").
    r = run(KTEST_ELF, kernel=check_kernel, timeout=300, icount=True, append="ktest=sched icount=1")
    detail = "\n".join(r.lines[-40:])
    assert r.passed, f"{r.reason}\n{detail}"
    burst = [l for l in r.lines if "budget_enforcement_accuracy:" in l and "bursts" in l]
    assert burst, detail
    overrun = int(re.search(r"overrun (\d+) us", burst[0]).group(1))
    assert overrun <= 10, burst[0]
    counters = [l for l in r.lines if l.startswith("sched-counters:")]
    assert counters, detail
    values = dict(re.findall(r"([a-z-]+) (\d+)", counters[0]))
    # One tick is 100 instructions under -icount shift=0 at 10 MHz: the
    # overrun is the timer interrupt's entry up to its time stamp.
    assert int(values["overrun-max-ticks"]) <= 10 * 10, counters[0]
    assert 0 < int(values["reprogram-instret"]) < 100, counters[0]
    assert 0 < int(values["sc-switch-max-instret"]) < 2000, counters[0]
