"""`kairos bench run` and `kairos bench compare` (docs/benchmarks.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kairos.bench.results import (
    DEFAULT_THRESHOLD_PCT,
    KAIROS_TARGET,
    SEL4_REFERENCE,
    BenchResult,
    Comparison,
    ResultsError,
    compare,
    load_results,
    previous_run,
    save_results,
)
from kairos.bench.run import BenchError, build, default_bench_dir, default_elf, default_kernel, run_bench
from kairos.runner import RunError


def _console() -> Console:
    # Wide enough for the tables also when the output is a pipe (make, CI).
    return Console(width=None if sys.stdout.isatty() else 120, highlight=False)


def _err(msg: str) -> int:
    print(f"kairos bench: error: {msg}", file=sys.stderr)
    return 2


def results_table(results: list[BenchResult]) -> Table:
    t = Table(title="Kairos benchmarks (instructions, QEMU -icount shift=0)", title_justify="left")
    for col in ("benchmark", "min", "median", "max", "samples", "overhead", "seL4", "vs seL4"):
        t.add_column(col, justify="left" if col == "benchmark" else "right")
    for r in results:
        ref = SEL4_REFERENCE.get(r.name)
        target = KAIROS_TARGET.get(r.name, ref)
        if ref is None:
            ref_s, ratio = "", ""
        else:
            style = "green" if target is not None and r.median <= target else "red"
            ref_s = str(ref)
            ratio = f"[{style}]{r.median / ref:.2f}x[/{style}]"
        t.add_row(r.name, str(r.min), str(r.median), str(r.max), str(r.samples),
                  "" if r.overhead is None else str(r.overhead), ref_s, ratio)
    return t


def comparison_table(c: Comparison, new_label: str, old_label: str) -> Table:
    t = Table(title=f"{new_label} vs {old_label} (medians)", title_justify="left")
    for col in ("benchmark", "old median", "new median", "delta %", ""):
        t.add_column(col, justify="left" if col in ("benchmark", "") else "right")
    for r in c.rows:
        old = "" if r.old is None else str(r.old)
        new = "" if r.new is None else str(r.new)
        delta = "" if r.delta_pct is None else f"{r.delta_pct:+.2f}"
        flag = {"regression": "[bold red]REGRESSION[/bold red]", "improvement": "[green]faster[/green]",
                "new": "[cyan]new[/cyan]", "missing": "[yellow]missing in new run[/yellow]"}.get(r.status, "")
        if r.status == "regression":
            delta = f"[bold red]{delta}[/bold red]"
        t.add_row(r.name, old, new, delta, flag)
    return t


def _print_comparison(console: Console, c: Comparison, new_label: str, old_label: str) -> None:
    console.print(comparison_table(c, new_label, old_label))
    n = len(c.regressions)
    if n:
        names = ", ".join(r.name for r in c.regressions)
        console.print(f"[bold red]{n} regression{'s' if n > 1 else ''} over {c.threshold_pct:g}%:[/bold red] {names}")
    else:
        console.print(f"no regression over {c.threshold_pct:g}%")


def _cmd_run(args: argparse.Namespace) -> int:
    console = _console()
    kernel = Path(args.kernel) if args.kernel else default_kernel()
    elf = Path(args.elf) if args.elf else default_elf()
    bench_dir = Path(args.bench_dir) if args.bench_dir else default_bench_dir()
    try:
        if not args.no_build:
            build()
        run = run_bench(kernel, elf, timeout=args.timeout, firmware_check=args.firmware_check,
                        echo=sys.stdout if args.verbose else None)
    except (RunError, BenchError) as e:
        return _err(str(e))
    console.print(results_table(run.results))
    if run.firmware is not None:
        fw = run.firmware
        other = ", ".join(f"{k} {v}" for k, v in sorted(fw.other.items()))
        console.print(f"firmware: {fw.sbi_calls} SBI calls (ecalls from S-mode), {fw.machine_interrupts} "
                      f"M-mode interrupts in the whole run; "
                      f"other traps logged (kernel traps, firmware boot): {other or 'none'}")
    if args.no_store:
        return 0
    path = save_results(run.results, bench_dir)
    console.print(f"results: {path}")
    console.print(f"latest:  {bench_dir / 'latest.json'}")
    old_path = previous_run(bench_dir, path)
    if old_path is None:
        console.print("no previous run to compare with")
        return 0
    try:
        old = load_results(old_path)
    except ResultsError as e:
        return _err(f"previous run: {e}")
    c = compare(run.results, old, args.threshold)
    _print_comparison(console, c, path.name, old_path.name)
    return 1 if args.fail_on_regression and c.regressions else 0


def _cmd_compare(args: argparse.Namespace) -> int:
    bench_dir = Path(args.bench_dir) if args.bench_dir else default_bench_dir()
    new_path = Path(args.new) if args.new else bench_dir / "latest.json"
    if args.old:
        old_path: Path | None = Path(args.old)
    else:
        old_path = previous_run(bench_dir, new_path)
        if old_path is None:
            return _err(f"no stored run before {new_path} in {bench_dir / 'results'}: give OLD explicitly")
    try:
        new = load_results(new_path)
        old = load_results(old_path)
    except ResultsError as e:
        return _err(str(e))
    c = compare(new, old, args.threshold)
    _print_comparison(_console(), c, new_path.name, old_path.name)
    return 1 if args.fail_on_regression and c.regressions else 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("bench", help="run the benchmark suite, compare stored results",
                       description="Benchmarks of the release kernel (docs/benchmarks.md).")
    bsub = p.add_subparsers(dest="bench_command", required=True)

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--bench-dir", help="where results are stored (default build/bench)")
        q.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD_PCT,
                       help="percent a median may grow before it is a regression (default 2)")
        q.add_argument("--fail-on-regression", action="store_true",
                       help="exit status 1 if some benchmark regressed")

    r = bsub.add_parser("run", help="boot the benchmark root task, store and compare its results")
    r.add_argument("--kernel", help="kernel ELF (default build/release/kernel.elf)")
    r.add_argument("--elf", help="benchmark root task (default build/release/user/bench/bench.elf)")
    r.add_argument("--no-build", action="store_true", help="do not run make first")
    r.add_argument("--no-store", action="store_true", help="print the results only")
    r.add_argument("--firmware-check", action="store_true",
                   help="log QEMU's traps (-d int) and count SBI calls and M-mode interrupts")
    r.add_argument("--timeout", type=float, default=120.0, help="seconds before the run fails")
    r.add_argument("--verbose", "-v", action="store_true", help="stream the console")
    common(r)
    r.set_defaults(func=_cmd_run)

    c = bsub.add_parser("compare", help="compare two stored runs (default: latest vs the previous)")
    c.add_argument("new", nargs="?", help="results JSON (default BENCH_DIR/latest.json)")
    c.add_argument("old", nargs="?", help="results JSON (default: the stored run before NEW)")
    common(c)
    c.set_defaults(func=_cmd_compare)
