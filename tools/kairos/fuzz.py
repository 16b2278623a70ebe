"""`kairos fuzz`: run the on-target fuzzer (user/fuzz) on the check kernel.

The run is deterministic: QEMU counts instructions (``-icount shift=0``) and
skips idle time exactly (``sleep=off``), so a seed names one run. The root
task prints its figures as ``fuzz: ...`` lines and ends with the usual
``kairos-result`` verdict; a kernel panic (an invariant violation is one),
a boot failure, the timeout or QEMU exiting without a verdict fail the run.
docs/robustness.md describes the fuzzer and its figures.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from kairos.runner import REPO_ROOT, RunError, RunResult, run

FUZZ_ELF = REPO_ROOT / "build" / "check" / "user" / "fuzz" / "fuzz.elf"
CHECK_KERNEL = REPO_ROOT / "build" / "check" / "kernel.elf"
INVARIANT_PERIODS = [1 << k for k in range(11)]
QEMU_ICOUNT = ["-icount", "shift=0,sleep=off"]


@dataclass
class FuzzReport:
    """The figures of one run (None where the run stopped before printing them)."""

    calls: int | None = None
    returned: int | None = None
    worker_calls: list[int] | None = None
    incarnations_ran: int | None = None
    incarnations: int | None = None
    deliberate_faults: int | None = None
    timeout_faults: int | None = None
    fault_messages: int | None = None
    irqs: int | None = None
    kernel_entries: int | None = None
    invariant_checks: int | None = None
    digest: str | None = None
    hangs: int | None = None


def _int(pattern: str, text: str) -> int | None:
    m = re.search(pattern, text)
    return int(m.group(1)) if m else None


def parse_report(lines: list[str]) -> FuzzReport:
    text = "\n".join(l for l in lines if l.startswith("fuzz: "))
    r = FuzzReport()
    r.calls = _int(r"fuzz: calls (\d+) issued", text)
    r.returned = _int(r"issued by the workers, (\d+) returned", text)
    m = re.search(r"fuzz: calls returned per worker slot:((?: \d+)+)", text)
    r.worker_calls = [int(x) for x in m.group(1).split()] if m else None
    m = re.search(r"threads run (\d+) of (\d+) worker incarnations", text)
    if m:
        r.incarnations_ran, r.incarnations = int(m.group(1)), int(m.group(2))
    r.deliberate_faults = _int(r"deliberate faults (\d+)", text)
    m = re.search(r"fault messages handled: cap (\d+), unknown syscall (\d+), user exception (\d+), vm (\d+), "
                  r"timeout (\d+)", text)
    if m:
        r.fault_messages = sum(int(m.group(k)) for k in range(1, 5))
        r.timeout_faults = int(m.group(5))
    r.irqs = _int(r"device interrupts delivered (\d+)", text)
    r.kernel_entries = _int(r"kernel entries (\d+)", text)
    r.invariant_checks = _int(r"invariant checks (\d+)", text)
    m = re.search(r"fuzz: digest ([0-9a-f]+)", text)
    r.digest = m.group(1) if m else None
    r.hangs = _int(r"hangs (\d+)", text)
    return r


def append_line(seed: int, calls: int, invariants: int, replay: int | None) -> str:
    if invariants not in INVARIANT_PERIODS:
        raise RunError(f"--invariants {invariants}: must be a power of two from 1 to 1024")
    words = [f"seed={seed}", f"calls={calls}", f"invariants={invariants}"]
    if replay is not None:
        words.append(f"replay={replay}")
    return " ".join(words)


def fuzz(seed: int, calls: int, invariants: int = 16, replay: int | None = None, timeout: float = 1800.0,
         memory: str = "1G", echo=None, kernel: Path = CHECK_KERNEL, elf: Path = FUZZ_ELF) -> tuple[RunResult, FuzzReport]:
    append = append_line(seed, calls, invariants, replay)
    if seed < 0 or calls < 1:
        raise RunError(f"--seed {seed} --calls {calls}: the seed must be >= 0 and the calls >= 1")
    for p in (kernel, elf):
        if not p.is_file():
            raise RunError(f"{p} does not exist: build it with `make fuzz` or `make FLAVOUR=check kernel user`")
    result = run(elf, kernel=kernel, memory=memory, timeout=timeout, append=append, echo=echo, extra_qemu=QEMU_ICOUNT)
    return result, parse_report(result.lines)


def _cmd_fuzz(args: argparse.Namespace) -> int:
    try:
        result, report = fuzz(args.seed, args.calls, args.invariants, args.replay, args.timeout,
                              echo=sys.stdout)
    except RunError as e:
        print(f"kairos fuzz: error: {e}", file=sys.stderr)
        return 2
    status = "PASS" if result.passed else "FAIL"
    print(f"\nkairos fuzz: {status}: {result.reason} ({result.elapsed:.1f} s, seed {args.seed})", file=sys.stderr)
    return 0 if result.passed else 1


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("fuzz", help="run the on-target fuzzer (user/fuzz) on the check kernel")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--calls", type=int, default=100000, help="system calls in all")
    p.add_argument("--invariants", type=int, default=16,
                   help="check kernel invariants after every N-th kernel entry (a power of two, 1..1024)")
    p.add_argument("--replay", type=int, help="print every call from this call number on")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds before the run fails")
    p.set_defaults(func=_cmd_fuzz)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kairos fuzz")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(["fuzz", *(argv if argv is not None else sys.argv[1:])])
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
