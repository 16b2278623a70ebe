"""`make tabench`: the user-level schedulers' cost per time unit, generated
(kairos tatoc) against hand-written, 2 to 7 servers (user/tasched/tabench.c,
docs/timed-automata.md "Overhead"). Boots the root task under QEMU
-icount, where rdcycle counts instructions, and prints its figures as a
table.

    python -m kairos.ta.tabench [--elf ELF] [--kernel KERNEL] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

LINE = re.compile(r"^TABENCH (\{.*\})\s*$", re.M)
FIELDS = ("decision_median", "decision_max", "release_median", "release_max")


class TabenchError(Exception):
    """The run failed or printed something unusable; the message is one line."""


def parse(output: str) -> list[dict]:
    """The TABENCH records of a run, checked for shape."""
    rows = []
    for m in LINE.finditer(output):
        try:
            row = json.loads(m.group(1))
        except json.JSONDecodeError as e:
            raise TabenchError(f"unreadable TABENCH line: {m.group(1)[:80]} ({e.msg})") from None
        if row.get("impl") not in ("gen", "hand") or not isinstance(row.get("servers"), int) \
                or not all(isinstance(row.get(f), int) for f in FIELDS):
            raise TabenchError(f"TABENCH line without its fields: {m.group(1)[:80]}")
        rows.append(row)
    if "tabench verdict: PASS" not in output:
        fails = re.findall(r"^tabench: FAIL: .*$", output, re.M)
        raise TabenchError(fails[0] if fails else "no 'tabench verdict: PASS' in the output")
    return rows


def run(elf: Path, kernel: Path, timeout: int = 300) -> list[dict]:
    from kairos.runner import run as boot
    # sleep=off: the instruction counts do not depend on the host.
    result = boot(elf, kernel, timeout=timeout, extra_qemu=["-icount", "shift=0,sleep=off"])
    if not result.passed:
        raise TabenchError(f"{elf}: {result.reason}")
    return parse(result.output)


def table(rows: list[dict]) -> str:
    by = {(r["impl"], r["servers"]): r for r in rows}
    out = ["servers | generated: decision (median/max) | release (median/max) | "
           "hand-written: decision | release | generated / hand (decision median)"]
    for n in sorted({r["servers"] for r in rows}):
        g, h = by.get(("gen", n)), by.get(("hand", n))
        if g is None or h is None:
            continue
        out.append(f"{n} | {g['decision_median']}/{g['decision_max']} | {g['release_median']}/{g['release_max']} | "
                   f"{h['decision_median']}/{h['decision_max']} | {h['release_median']}/{h['release_max']} | "
                   f"{g['decision_median'] / h['decision_median']:.0f}x")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kairos.ta.tabench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--elf", type=Path, default=Path("build/debug/user/tasched/tabench.elf"))
    ap.add_argument("--kernel", type=Path, default=Path("build/debug/kernel.elf"))
    ap.add_argument("--json", type=Path, help="also write the records here")
    args = ap.parse_args(argv)
    for p in (args.elf, args.kernel):
        if not p.is_file():
            print(f"tabench: error: {p}: no such file (make FLAVOUR=debug kernel user)", file=sys.stderr)
            return 2
    try:
        rows = run(args.elf, args.kernel)
    except TabenchError as e:
        print(f"tabench: error: {e}", file=sys.stderr)
        return 1
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
