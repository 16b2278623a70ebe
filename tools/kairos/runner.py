"""`kairos run`: boot a root task on the Kairos kernel under QEMU and decide the outcome.

The verdict convention (docs/running.md):

* Kairos's own root tasks end with a line ``kairos-result: PASS`` or
  ``kairos-result: FAIL (<reason>)`` and then halt the machine.
* For any other program, ``--expect REGEX`` passes the run as soon as a console
  line matches, ``--fail REGEX`` fails it; seL4 programs have no exit status.
* A kernel panic or a boot failure fails the run unless ``--expect`` matches
  that very line; so does QEMU exiting without a verdict, or the timeout.
"""

from __future__ import annotations

import argparse
import os
import re
import selectors
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULT_RE = re.compile(r"kairos-result: (PASS|FAIL)(?: \((.*)\))?")
KERNEL_FAILURE_RE = re.compile(r"KAIROS PANIC|kairos: boot failed")


@dataclass
class RunResult:
    passed: bool
    reason: str
    output: str
    elapsed: float
    lines: list[str] = field(default_factory=list)


class RunError(Exception):
    """A run could not be started (missing file, bad option)."""


def parse_memory(text: str) -> str:
    """Accept 512M, 2G, 3072 (MiB) and return QEMU's -m argument."""
    m = re.fullmatch(r"(\d+)([MmGg]?)", text.strip())
    if not m:
        raise RunError(f"bad memory size {text!r}: use e.g. 512M, 2G or 3072")
    value, unit = int(m.group(1)), m.group(2).upper()
    mib = value * 1024 if unit == "G" else value
    if mib < 64:
        raise RunError(f"memory size {text!r} is below 64 MiB")
    return f"{mib}M"


def default_kernel(flavour: str) -> Path:
    return REPO_ROOT / "build" / flavour / "kernel.elf"


def build_kernel(flavour: str) -> Path:
    """Build the kernel of the given flavour with the top-level Makefile."""
    proc = subprocess.run(
        ["make", "--no-print-directory", "-s", f"FLAVOUR={flavour}", "kernel"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RunError(f"kernel build failed:\n{proc.stdout}{proc.stderr}")
    return default_kernel(flavour)


def qemu_command(
    kernel: Path,
    roottask: Path | None,
    memory: str = "1024M",
    append: str | None = None,
    icount: bool = False,
    extra: list[str] | None = None,
    icount_shift: int = 0,
) -> list[str]:
    qemu = shutil.which("qemu-system-riscv64")
    if qemu is None:
        raise RunError("qemu-system-riscv64 not found: run scripts/bootstrap.sh")
    cmd = [
        qemu, "-machine", "virt", "-smp", "1", "-m", memory, "-bios", "default",
        "-display", "none", "-serial", "stdio", "-monitor", "none", "-no-reboot",
        "-kernel", str(kernel),
    ]
    if roottask is not None:
        cmd += ["-initrd", str(roottask)]
    if append:
        cmd += ["-append", append]
    if icount:
        # One instruction is 2^icount_shift nanoseconds of virtual time
        # (shift 0: one). (sleep=off would make idle periods exact too, but
        # then a guest idling until a device's host-clocked event, like the
        # goldfish RTC alarm, never wakes; tests that need bit-exact idle
        # time pass it themselves.)
        cmd += ["-icount", f"shift={icount_shift}"]
    if extra:
        cmd += extra
    return cmd


def run(
    roottask: Path | str | None,
    kernel: Path | str | None = None,
    flavour: str = "debug",
    memory: str = "1G",
    timeout: float = 60.0,
    expect: str | None = None,
    fail: str | None = None,
    append: str | None = None,
    icount: bool = False,
    echo: TextIO | None = None,
    extra_qemu: list[str] | None = None,
    icount_shift: int = 0,
) -> RunResult:
    """Boot `roottask` and return the verdict with the whole console output."""
    if roottask is not None:
        roottask = Path(roottask)
        if not roottask.is_file():
            raise RunError(f"root task {roottask} does not exist")
    kernel_path = Path(kernel) if kernel else build_kernel(flavour)
    if not kernel_path.is_file():
        raise RunError(f"kernel {kernel_path} does not exist")
    expect_re = re.compile(expect) if expect else None
    fail_re = re.compile(fail) if fail else None
    cmd = qemu_command(kernel_path, roottask, parse_memory(memory), append, icount, extra_qemu, icount_shift)

    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    os.set_blocking(proc.stdout.fileno(), False)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    pending = b""
    lines: list[str] = []
    chunks: list[str] = []
    verdict: tuple[bool, str] | None = None

    def judge(line: str) -> tuple[bool, str] | None:
        if expect_re and expect_re.search(line):
            return True, f"matched --expect: {line.strip()}"
        if fail_re and fail_re.search(line):
            return False, f"matched --fail: {line.strip()}"
        if KERNEL_FAILURE_RE.search(line):
            return False, line.strip()
        m = RESULT_RE.search(line)
        if m and not expect_re:
            return (m.group(1) == "PASS"), line.strip()
        return None

    try:
        while verdict is None:
            remaining = timeout - (time.monotonic() - start)
            if remaining <= 0:
                verdict = (False, f"timeout after {timeout:g} s")
                break
            events = sel.select(timeout=min(remaining, 0.5))
            data = b""
            if events:
                try:
                    data = proc.stdout.read() or b""
                except BlockingIOError:
                    data = b""
            if data:
                text = data.decode("utf-8", errors="replace")
                chunks.append(text)
                if echo is not None:
                    echo.write(text)
                    echo.flush()
                pending += data
                while b"\n" in pending:
                    raw, pending = pending.split(b"\n", 1)
                    line = raw.decode("utf-8", errors="replace").rstrip("\r")
                    lines.append(line)
                    verdict = judge(line)
                    if verdict is not None:
                        break
            elif proc.poll() is not None:
                if pending:
                    line = pending.decode("utf-8", errors="replace").rstrip("\r")
                    lines.append(line)
                    verdict = judge(line)
                    pending = b""
                if verdict is None:
                    verdict = (False, f"QEMU exited (status {proc.returncode}) without a verdict")
    finally:
        if proc.poll() is None:
            # Give a halting machine a moment to power off by itself.
            try:
                proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        sel.close()
        proc.stdout.close()
    passed, reason = verdict
    return RunResult(passed, reason, "".join(chunks), time.monotonic() - start, lines)


def _cmd_run(args: argparse.Namespace) -> int:
    try:
        result = run(
            args.roottask,
            kernel=args.kernel,
            flavour=args.flavour,
            memory=args.memory,
            timeout=args.timeout,
            expect=args.expect,
            fail=args.fail,
            append=args.append,
            icount=args.icount,
            echo=None if args.quiet else sys.stdout,
        )
    except (RunError, re.error) as e:
        print(f"kairos run: error: {e}", file=sys.stderr)
        return 2
    status = "PASS" if result.passed else "FAIL"
    print(f"\nkairos run: {status}: {result.reason} ({result.elapsed:.1f} s)", file=sys.stderr)
    return 0 if result.passed else 1


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("run", help="boot a root task ELF on Kairos under QEMU")
    p.add_argument("roottask", help="the root task: any static riscv64 ELF")
    p.add_argument("--kernel", help="kernel ELF (default: build the --flavour kernel)")
    p.add_argument("--flavour", default="debug", choices=["debug", "check", "release"])
    p.add_argument("--memory", "-m", default="1G", help="RAM size, e.g. 512M, 2G, 3072 (MiB)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds before the run fails")
    p.add_argument("--expect", help="pass when a console line matches this regex")
    p.add_argument("--fail", help="fail when a console line matches this regex")
    p.add_argument("--append", help="kernel command line (the root task reads it from the device tree)")
    p.add_argument("--icount", action="store_true", help="deterministic instruction counting (-icount shift=0)")
    p.add_argument("--quiet", "-q", action="store_true", help="do not stream the console")
    p.set_defaults(func=_cmd_run)
