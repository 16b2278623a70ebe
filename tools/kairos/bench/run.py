"""Booting the benchmark root task and collecting its results.

The run is `kairos run`'s (kairos.runner) with `-icount shift=0,sleep=off`: the root
task prints one `BENCH {json}` line per benchmark and then `bench: done`,
and suspends itself (there is no halt call in a release kernel), so the
runner stops QEMU when it sees that line.

Firmware check (`firmware_check=True`): QEMU also logs every trap
(`-d int`). An SBI call is an ecall from S-mode (`supervisor_ecall`), and
the firmware's own timer would show as a machine-timer interrupt; Kairos
programs the timer through Sstc (stimecmp), so both counts should be zero
for the whole run, hence for every measured path.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from kairos.bench.results import BenchResult, ResultsError, parse_output
from kairos.runner import REPO_ROOT, RunError, run

DONE_LINE = r"^bench: done"
FAIL_LINE = r"^bench: FAIL"
_TRAP = re.compile(r"riscv_cpu_do_interrupt: .*async:(\d), cause:([0-9a-f]+), epc:0x([0-9a-f]+).*desc=(\S+)")


def default_kernel() -> Path:
    return REPO_ROOT / "build" / "release" / "kernel.elf"


def default_elf() -> Path:
    return REPO_ROOT / "build" / "release" / "user" / "bench" / "bench.elf"


def default_bench_dir() -> Path:
    return REPO_ROOT / "build" / "bench"


def build() -> None:
    """Build the release kernel and the bench ELF (only those targets)."""
    cmd = ["make", "--no-print-directory", "-s", "FLAVOUR=release", "kernel",
           str(default_elf().relative_to(REPO_ROOT))]
    proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RunError(f"build failed ({' '.join(cmd)}):\n{proc.stdout}{proc.stderr}")


@dataclass
class FirmwareTraps:
    """Traps QEMU logged that involve the firmware (M-mode)."""

    supervisor_ecalls: int = 0  # SBI calls
    machine_interrupts: int = 0  # e.g. the M-mode timer
    other: Counter[str] = field(default_factory=Counter)  # everything else QEMU logged, by description

    @property
    def sbi_calls(self) -> int:
        return self.supervisor_ecalls


def count_firmware_traps(log: str) -> FirmwareTraps:
    t = FirmwareTraps()
    for line in log.splitlines():
        m = _TRAP.search(line)
        if not m:
            continue
        is_async, cause, desc = m.group(1) == "1", int(m.group(2), 16), m.group(4)
        if not is_async and cause == 9:
            t.supervisor_ecalls += 1
        elif is_async and cause in (3, 7, 11):  # machine software, timer, external
            t.machine_interrupts += 1
        else:
            t.other[desc] += 1
    return t


@dataclass
class BenchRun:
    results: list[BenchResult]
    lines: list[str]
    elapsed: float
    firmware: FirmwareTraps | None = None


class BenchError(Exception):
    """The benchmark run failed (the message says how, on one line or a few)."""


def run_bench(kernel: Path, elf: Path, timeout: float = 120.0, firmware_check: bool = False,
              echo: TextIO | None = None) -> BenchRun:
    extra: list[str] = []
    log_dir = tempfile.TemporaryDirectory(prefix="kairos-bench-") if firmware_check else None
    log_path = Path(log_dir.name) / "traps.log" if log_dir else None
    if log_path is not None:
        extra = ["-d", "int", "-D", str(log_path)]
    try:
        # sleep=off: an idle guest's virtual time jumps straight to the next
        # timer deadline instead of following the host clock, so every time
        # value the kernel reads, and with it every path it takes (e.g.
        # whether the timer needs reprogramming), is the same on every run.
        # The benchmarks wait for no host-clocked device event (the RTC).
        result = run(elf, kernel=kernel, flavour="release", expect=DONE_LINE, fail=FAIL_LINE,
                     timeout=timeout, echo=echo, extra_qemu=["-icount", "shift=0,sleep=off", *extra])
        if not result.passed:
            tail = "\n".join(result.lines[-8:])
            raise BenchError(f"bench run failed: {result.reason}\n{tail}")
        try:
            results = parse_output(result.lines)
        except ResultsError as e:
            raise BenchError(str(e)) from None
        if not results:
            raise BenchError("bench run printed no BENCH lines")
        firmware = None
        if log_path is not None:
            firmware = count_firmware_traps(log_path.read_text(errors="replace") if log_path.exists() else "")
        return BenchRun(results, result.lines, result.elapsed, firmware)
    finally:
        if log_dir is not None:
            log_dir.cleanup()
