"""Shared fixtures for the host-side tests: built kernels and a cross compiler."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import resource
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CROSS_GCC = "riscv64-unknown-elf-gcc"


def pytest_configure(config: pytest.Config) -> None:
    # `make test` deselects these (-m "not campaign"); `make campaign` runs them.
    config.addinivalue_line("markers", "campaign: a long run outside CI's budget (make campaign)")
    config._kairos_wall0 = time.monotonic()


# Scheduling on several workers. `make test` runs `pytest -n N --dist
# loadgroup` (pytest-xdist): a work unit (an xdist_group) goes whole to one
# worker, and the controller hands the units out in collection order, each to
# the first worker that is free. Every test of a module is one unit (a group
# named after the module) unless it names its own group, so a module's fixtures
# (compiled harnesses, analyses of the kernel) are made once in one worker;
# the tests of a module in SPLIT_MODULES, which share only session fixtures
# and take minutes each, are a unit each. The units are ordered longest first
# by UNIT_CPU_S, so the long poles start at once and the short units fill the
# end (longest processing time first), then the units that run alone
# (below). Serial runs keep pytest's order.

# Processor seconds of the longest units, keyed by module, test or
# parametrized test: measured in a parallel run (build/reports/test-cpu.json;
# main 999e422 + pytest-xdist, rounded up), except where a comment names the
# documented figure. A unit not listed counts as DEFAULT_UNIT_CPU_S. Only the
# order depends on them: a stale figure costs wall time, never a result.
UNIT_CPU_S: dict[str, float] = {
    # the whole-file proof of tasched's scheduler, two Frama-C processes
    # (docs/timed-automata.md "Proofs of the generated code")
    "tests/ta/test_tatoc_proofs.py::test_make_prove_tatoc_proves_every_goal_of_the_tasched_scheduler": 630,
    "tests/test_prove.py::test_prove": 180,                   # the kernel's proof sets (docs/proofs.md)
    "tests/wcet/test_smt_loops.py": 150,
    "tests/wcet/test_kernel_wcet.py": 70,
    "tests/wcet/test_latency_guard.py": 56,
    "tests/wcet/test_kernel_trace.py": 80,
    "tests/system/test_analysis.py": 75,
    "tests/ta/test_ta.py": 46,
    "tests/test_fuzz.py": 42,
    "tests/ta/test_edf_target.py": 41,
    "tests/test_ktest.py::test_on_target_suite": 40,
    "tests/test_prove.py::test_mutated_code_fails": 30,
    "tests/test_ktest.py::test_on_target_suites_with_forced_preemption": 27,
    "tests/ta/test_tatoc_proofs.py::test_slice_of_the_tasched_scheduler_is_proved": 27,
    "tests/test_decode_pure.py": 24,
    "tests/wcet/test_foreign.py": 24,
    "tests/test_demo.py": 18,
    "tests/ta/test_tatoc_proofs.py::test_update_function_is_proved_and_its_mutant_is_not": 16,
    "tests/test_host_fuzz.py": 13,
    "tests/test_host_units.py": 11,
}
DEFAULT_UNIT_CPU_S = 5.0
SPLIT_MODULES = {"tests/test_ktest.py", "tests/test_prove.py", "tests/ta/test_tatoc_proofs.py"}


def _unit(item: pytest.Item) -> str:
    module = item.nodeid.split("::", 1)[0]
    return item.nodeid if module in SPLIT_MODULES else module


def _unit_cpu_s(unit: str) -> float:
    for key in (unit, unit.split("[", 1)[0], unit.split("::", 1)[0]):
        if key in UNIT_CPU_S:
            return UNIT_CPU_S[key]
    return DEFAULT_UNIT_CPU_S


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook appends the group to the node id
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not (hasattr(config, "workerinput") and config.getvalue("loadgroup")):
        return  # not an xdist worker under --dist loadgroup (workers collect, the controller schedules)
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        unit = _unit(item)
        units.setdefault(unit, []).append(item)
        # a test without a group is a unit of its own
        if unit != item.nodeid and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(unit))
    cost = {u: _unit_cpu_s(u) for u in units}
    # The units with a test that runs alone (ALONE) come last: early, one
    # would keep a worker waiting for the other's long unit (the proof).
    alone = {u: any(it.nodeid in ALONE for it in units[u]) for u in units}
    items[:] = [it for u in sorted(units, key=lambda u: (alone[u], -cost[u])) for it in units[u]]


# Tests that run alone. A QEMU run whose guest clock follows the host's (no
# -icount: the latency stress run) checks periods and wake-up orders that a
# long host stall breaks; beside another worker's provers or QEMU, at a load
# average of 15, four on-target tests failed when the 2 and 3 GiB suites
# still ran so (a periodic thread's jobs, a throttled thread's release, a
# wake-up order; they now run under -icount, tests/test_ktest.py). Such a
# test holds an exclusive lock while it runs, every other test a shared one,
# so it runs with no other test beside it (a worker idles meanwhile). The
# lock is two flock(2) files: a turnstile that a test takes and drops before
# the shared lock, and that an exclusive test holds while it waits, so that
# a stream of shared holders cannot starve it.
ALONE = {
    "tests/test_latency_stress.py::test_stress_task_runs_every_scenario",
}


@contextlib.contextmanager
def _alone_or_beside(item: pytest.Item):
    if not hasattr(item.config, "workerinput"):
        yield  # one process: every test runs alone
        return
    locks = REPO / "build" / "test-locks"
    locks.mkdir(parents=True, exist_ok=True)
    alone = item.nodeid.split("@", 1)[0] in ALONE
    with open(locks / "turnstile", "a") as turn, open(locks / "run", "a") as run_lock:
        fcntl.flock(turn, fcntl.LOCK_EX)
        fcntl.flock(run_lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        fcntl.flock(turn, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(run_lock, fcntl.LOCK_UN)


# Processor time per test. `make test` runs the suite on every core
# (pytest-xdist), where a test's wall time says more about what ran beside it
# than about the test; the processor time of the test's process and of the
# programs it ran and waited for (compilers, QEMU, provers) does not depend on
# the load. Each phase's report carries it as the user property `cpu_s`
# (reports travel from xdist's workers to the controller with their user
# properties); the controller sums them, prints the total and the costliest
# tests, and writes build/reports/test-cpu.json.

_CPU_TABLE: dict[str, float] = {}  # nodeid -> processor seconds (controller side)


def _cpu_now() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    # the lock covers setup (module fixtures too), call and teardown
    with _alone_or_beside(item):
        item._kairos_cpu_mark = _cpu_now()
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    rep = yield
    now = _cpu_now()
    mark = getattr(item, "_kairos_cpu_mark", now)
    item._kairos_cpu_mark = now
    rep.user_properties.append(("cpu_s", round(now - mark, 3)))
    return rep


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    phases = [v for k, v in report.user_properties if k == "cpu_s"]
    if phases:
        nodeid = report.nodeid.split("@", 1)[0]  # without xdist's group suffix
        _CPU_TABLE[nodeid] = _CPU_TABLE.get(nodeid, 0.0) + sum(phases)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not _CPU_TABLE:
        return  # an xdist worker: the controller reports
    total = sum(_CPU_TABLE.values())
    wall = time.monotonic() - config._kairos_wall0
    workers = getattr(config.option, "numprocesses", None) or 1
    load = os.getloadavg()
    tr = terminalreporter
    tr.write_sep("-", "processor time per test (the test's process and the programs it waited for)")
    for nodeid, cpu in sorted(_CPU_TABLE.items(), key=lambda kv: -kv[1])[:15]:
        tr.write_line(f"{cpu:9.1f} s  {nodeid}")
    tr.write_line(f"tests: {total:.0f} s of processor time in {len(_CPU_TABLE)} tests, "
                  f"{wall:.0f} s of wall clock, {workers} worker(s), "
                  f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    out = REPO / "build" / "reports"
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "test-cpu.json").write_text(json.dumps(
            {"total_cpu_s": round(total, 1), "wall_s": round(wall, 1), "workers": workers,
             "loadavg": load, "cpu_s": dict(sorted(_CPU_TABLE.items(), key=lambda kv: -kv[1]))}, indent=1) + "\n")
    except OSError as e:
        tr.write_line(f"build/reports/test-cpu.json not written: {e}")


def build_flavour(flavour: str) -> Path:
    proc = subprocess.run(["make", "-s", "--no-print-directory", f"FLAVOUR={flavour}", "kernel"],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, f"kernel build ({flavour}) failed:\n{proc.stdout}{proc.stderr}"
    return REPO / "build" / flavour / "kernel.elf"


def kernel_max_refills() -> int:
    """CONFIG_MAX_REFILLS: config.h defines it as KAIROS_MAX_REFILLS, whose
    one home (shared with the user library) is kernel/include/uapi/kairos/limits.h."""
    import re
    config = (REPO / "kernel" / "include" / "config.h").read_text()
    assert re.search(r"^#define CONFIG_MAX_REFILLS KAIROS_MAX_REFILLS$", config, re.M), \
        "kernel/include/config.h does not define CONFIG_MAX_REFILLS as KAIROS_MAX_REFILLS"
    limits = (REPO / "kernel" / "include" / "uapi" / "kairos" / "limits.h").read_text()
    m = re.search(r"^#define KAIROS_MAX_REFILLS (\d+)$", limits, re.M)
    assert m, "kernel/include/uapi/kairos/limits.h defines no KAIROS_MAX_REFILLS"
    return int(m.group(1))


def build_debug_user() -> None:
    """The debug flavour's user programs (root tasks, PD images, examples)."""
    proc = subprocess.run(["make", "-s", "--no-print-directory", "FLAVOUR=debug", "user"], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def run_debug_root_task(elf: Path, kernel: Path) -> str:
    """Build the debug user programs, run the root task `elf` under QEMU
    with `-icount shift=0,sleep=off` (idle time skipped exactly, so host load
    cannot shift the guest's clock) and return its output; fails unless the
    run passed."""
    from kairos.runner import run
    build_debug_user()
    result = run(elf, kernel, timeout=300, extra_qemu=["-icount", "shift=0,sleep=off"])
    assert result.passed, result.reason + result.output[-3000:]
    return result.output


@pytest.fixture(scope="session")
def debug_kernel() -> Path:
    return build_flavour("debug")


@pytest.fixture(scope="session")
def debug_user(debug_kernel) -> Path:
    """The debug kernel, with the debug user programs built."""
    build_debug_user()
    return debug_kernel


@pytest.fixture(scope="session")
def check_kernel() -> Path:
    return build_flavour("check")


@pytest.fixture(scope="session")
def cross_gcc() -> str:
    path = shutil.which(CROSS_GCC)
    assert path, f"{CROSS_GCC} is missing: run scripts/bootstrap.sh"
    return path


def compile_plain(tmp: Path, name: str, source: str, *flags: str) -> Path:
    """Build a root task with a plain `gcc -nostdlib -static` (no Kairos runtime)."""
    src = tmp / f"{name}.c"
    src.write_text(source)
    out = tmp / f"{name}.elf"
    cmd = [CROSS_GCC, "-O2", "-nostdlib", "-static", "-march=rv64imac", "-mabi=lp64", "-mcmodel=medany", "-o", str(out), str(src), *flags]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"
    return out


@pytest.fixture
def private_solver_cache(tmp_path, monkeypatch):
    """An empty on-disk SMT answer cache and an empty in-process memo, so a
    test sees the solver's own answers, not ones an earlier run stored."""
    monkeypatch.setenv("KAIROS_WCET_CACHE", str(tmp_path / "smt-cache"))
    from kairos.wcet import smtloops
    smtloops._memo.clear()
