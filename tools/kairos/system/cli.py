"""`kairos build`: a system description to a bootable image (docs/system-description.md)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kairos.runner import REPO_ROOT, RunError, parse_memory
from kairos.system.pack import PackError, build_image
from kairos.system.parse import DescriptionError, parse_system
from kairos.wcet.model import preset_names


def default_loader(flavour: str) -> Path:
    return REPO_ROOT / "build" / flavour / "user" / "loader" / "loader.elf"


def make_loader(flavour: str) -> Path:
    target = default_loader(flavour).relative_to(REPO_ROOT)
    proc = subprocess.run(["make", "--no-print-directory", "-s", f"FLAVOUR={flavour}", str(target)],
                          cwd=REPO_ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RunError(f"loader build failed:\n{proc.stdout}{proc.stderr}")
    return default_loader(flavour)


def write_atomically(path: Path, data: bytes) -> None:
    """Write through a temporary file in the same directory: a failure leaves
    no half-written image behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _cmd_build(args: argparse.Namespace) -> int:
    start = time.monotonic()
    search = [Path(p) for p in args.search_path]
    try:
        memory = int(parse_memory(args.memory)[:-1]) << 20
        system = parse_system(args.system, search, memory)
    except DescriptionError as e:
        print(f"kairos build: error: {e}", file=sys.stderr)
        return 2
    except RunError as e:
        print(f"kairos build: error: {e}", file=sys.stderr)
        return 2
    try:
        loader = Path(args.loader) if args.loader else make_loader(args.flavour)
        if not loader.is_file():
            raise RunError(f"loader {loader} does not exist")
        image = build_image(system, loader)
    except PackError as e:
        print(f"kairos build: error: {args.system}:{e.line}: {e}", file=sys.stderr)
        return 2
    except (RunError, ValueError, OSError) as e:
        print(f"kairos build: error: {e}", file=sys.stderr)
        return 2
    write_atomically(Path(args.output), image)
    if not args.quiet:
        print(f"kairos build: {args.output}: {len(system.pds)} protection domains, {len(image)} bytes "
              f"({time.monotonic() - start:.2f} s)")
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("build", help="build a bootable image from a system description (XML)")
    p.add_argument("system", help="the system description (docs/system-description.md)")
    p.add_argument("-o", "--output", required=True, help="the image: a root task ELF for `kairos run`")
    p.add_argument("--search-path", action="append", default=[],
                   help="a directory where program images are looked up (after the description's own)")
    p.add_argument("--flavour", default="debug", choices=["debug", "check", "release"],
                   help="which build's loader to use (default debug)")
    p.add_argument("--loader", help="the loader ELF (default: build/<flavour>/user/loader/loader.elf, made if needed)")
    p.add_argument("--memory", "-m", default="1G", help="the platform's RAM, as for kairos run (default 1G)")
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(func=_cmd_build)
    register_analyze(sub)
    register_trace_schedule(sub)


def _print_analysis(a, out) -> None:
    from rich.table import Table

    def us(v: float | None) -> str:
        return "-" if v is None else f"{v:,.1f}"

    t = Table(title=f"{a.system}: response-time analysis (times in µs, {a.cpu_mhz:g} cycles per µs)")
    for col in ("PD", "prio", "crit", "budget/period", "job", "WCET", "from", "C", "B", "R", "D", "slack",
                "U", "+budget", "verdict"):
        t.add_column(col, justify="left" if col in ("PD", "job", "from", "verdict") else "right")
    for r in a.pds:
        t.add_row(r.name, str(r.priority), str(r.criticality), f"{r.budget}/{r.period}", r.job_entry,
                  us(r.wcet_us), r.wcet_source, us(r.demand_us) if r.kind == "active" else "-",
                  us(r.blocking_us) if r.kind == "active" else "-", us(r.response_us),
                  str(r.deadline) if r.kind == "active" else "-", us(r.slack_us),
                  f"{r.utilisation:.3f}" if r.kind == "active" else "-",
                  "-" if r.sensitivity_us is None else str(r.sensitivity_us), r.verdict)
    out.print(t)
    k = a.kernel
    out.print(f"kernel (per entry): system call {k['syscall_us']:,.1f} µs, exception {k['exception_us']:,.1f} µs, "
              f"interrupt {k['interrupt_us']:,.1f} µs, interrupt response {k['interrupt_response_us']:,.1f} µs "
              f"({k['source']})")
    for r in a.pds:
        for n in r.notes:
            out.print(f"note: {r.name}: {n}")
    for m in a.missing:
        out.print(f"missing: {m}")
    misses = [r.name for r in a.pds if r.verdict.startswith("MISS")]
    out.print(f"total reserved utilisation {a.total_utilisation:.3f}; verdict: "
              + ("schedulable" if a.schedulable else "NOT schedulable"
                 + (f" ({', '.join(misses)} may miss {'its' if len(misses) == 1 else 'their'} deadline)"
                    if misses else "")))


def _cmd_analyze(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from rich.console import Console

    from kairos.runner import build_kernel, default_kernel
    from kairos.system.analysis import AnalysisError, Analyser, kernel_costs_for, kernel_costs_from_json

    search = [Path(p) for p in args.search_path]
    try:
        system = parse_system(args.system, search)
    except DescriptionError as e:
        print(f"kairos analyze: error: {e}", file=sys.stderr)
        return 2
    try:
        if args.cpu_mhz <= 0:
            raise AnalysisError("--cpu-mhz must be positive")
        if args.kernel_wcet:
            kernel = kernel_costs_from_json(Path(args.kernel_wcet))
        else:
            elf = Path(args.kernel) if args.kernel else build_kernel(args.flavour)
            if not elf.is_file():
                raise AnalysisError(f"kernel {elf} does not exist")
            kernel = kernel_costs_for(system, elf, REPO_ROOT / "kernel" / "wcet-annotations.toml",
                                      REPO_ROOT / "build" / args.flavour / "analysis", args.model)
        a = Analyser(system, kernel, args.cpu_mhz, use_wcet_tool=not args.declared_only, model=args.model).run()
    except (AnalysisError, RunError) as e:
        print(f"kairos analyze: error: {e}", file=sys.stderr)
        return 2
    if args.json:
        write_atomically(Path(args.json), (json.dumps(asdict(a), indent=2) + "\n").encode())
    if not args.quiet:
        _print_analysis(a, Console(width=200))
    return 0 if a.schedulable else 1


def register_analyze(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("analyze", help="response-time analysis of a system description (docs/analysis.md)")
    p.add_argument("system", help="the system description")
    p.add_argument("--search-path", action="append", default=[], help="where program images are looked up")
    p.add_argument("--kernel-wcet", metavar="FILE.json",
                   help="kernel overheads from this `kairos wcet --json` report (default: analyse the kernel "
                        "with this system's loop bounds, cached under build/<flavour>/analysis)")
    p.add_argument("--kernel", help="the kernel ELF to analyse (default: build/<flavour>/kernel.elf)")
    p.add_argument("--flavour", default="debug", choices=["debug", "check", "release"])
    p.add_argument("--model", default="simple", choices=["simple", *preset_names()],
                   help="processor model for kairos wcet (default simple: at least one cycle per instruction, "
                        "an upper bound of time on QEMU -icount; u54 for the SiFive U54; the -itim presets "
                        "run the kernel's hot code from the ITIM and the PDs' code from the I-cache it leaves)")
    p.add_argument("--cpu-mhz", type=float, default=1000.0,
                   help="cycles per microsecond (default 1000: one model cycle is 1 ns, the time base of "
                        "QEMU -icount shift=0)")
    p.add_argument("--declared-only", action="store_true",
                   help="do not run kairos wcet on PD programs; use declared WCETs or budgets")
    p.add_argument("--json", metavar="OUT.json", help="write the results as JSON")
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(func=_cmd_analyze)


def _cmd_trace_schedule(args: argparse.Namespace) -> int:
    import json

    from rich.console import Console
    from rich.table import Table

    from kairos.runner import run
    from kairos.system.analysis import job_entry
    from kairos.system.schedtrace import TraceError, gantt, parse_trace, thread_stats

    kinds: dict[str, str] = {}
    deadlines: dict[str, float] = {}
    if args.system:
        try:
            system = parse_system(args.system, [Path(p) for p in args.search_path])
        except DescriptionError as e:
            print(f"kairos trace schedule: error: {e}", file=sys.stderr)
            return 2
        kinds = {p.name: job_entry(system, p) for p in system.pds if not p.passive}
        deadlines = {p.name: float(p.deadline) for p in system.pds if not p.passive}
    try:
        if args.log:
            lines = Path(args.log).read_text(errors="replace").splitlines()
        else:
            r = run(args.image, kernel=args.kernel, flavour=args.flavour, timeout=args.timeout, icount=True,
                    append="trace=on", expect=r"^ktrace-end$", memory=args.memory)
            lines = r.lines
            if not r.passed:
                raise TraceError(f"the run ended without a trace: {r.reason}")
            if args.save_log:
                Path(args.save_log).write_text("\n".join(lines) + "\n")
        trace = parse_trace(lines)
    except (TraceError, RunError, OSError) as e:
        print(f"kairos trace schedule: error: {e}", file=sys.stderr)
        return 2
    stats = thread_stats(trace, kinds, deadlines)
    paths = [p for p in (args.png, args.svg) if p]
    if paths:
        window = None
        if args.window:
            lo, _, hi = args.window.partition(":")
            window = (float(lo), float(hi))
        gantt(trace, stats, paths, title=f"{args.image}: schedule", window=window)
    out = Console(width=160)
    t = Table(title=f"schedule trace: {len(trace.events)} events ({trace.dropped} dropped), "
                    f"{trace.end_us:,.0f} µs, {trace.ticks_per_us:g} ticks per µs")
    for col in ("thread", "job", "jobs", "worst response (µs)", "deadline (µs)", "misses", "max used per job (µs)",
                "busy (µs)", "budget exhausted", "timeouts"):
        t.add_column(col, justify="left" if col in ("thread", "job") else "right")
    rows = {}
    for name, s in stats.items():
        worst = s.worst_response_us()
        rows[name] = {"job_kind": s.job_kind, "jobs": len(s.completed()), "worst_response_us": worst,
                      "deadline_us": s.deadline_us, "misses": len(s.misses()),
                      "max_used_per_job_us": s.max_job_busy_us(), "busy_us": s.busy_us,
                      "budget_exhausted": len(s.throttles), "timeouts": len(s.timeouts)}
        t.add_row(name, s.job_kind, str(len(s.completed())), "-" if worst is None else f"{worst:,.1f}",
                  "-" if s.deadline_us is None else f"{s.deadline_us:,.0f}", str(len(s.misses())),
                  f"{s.max_job_busy_us():,.1f}", f"{s.busy_us:,.0f}", str(len(s.throttles)), str(len(s.timeouts)))
    out.print(t)
    for p in paths:
        out.print(f"wrote {p}")
    if args.json:
        write_atomically(Path(args.json), (json.dumps({"ticks_per_us": trace.ticks_per_us, "events": len(trace.events),
                                                      "dropped": trace.dropped, "end_us": trace.end_us,
                                                      "threads": rows}, indent=2) + "\n").encode())
    return 0


def register_trace_schedule(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    # Reached as `kairos trace schedule ...` (cli.main routes it here: `kairos
    # trace` itself is the WCET trace-validation command).
    p = sub.add_parser("trace-schedule", help="run an image with the kernel's schedule trace: table and Gantt chart "
                                              "(also: kairos trace schedule)")
    p.add_argument("image", help="a root task image (from kairos build)")
    p.add_argument("--system", help="its description: job kinds and deadlines per PD")
    p.add_argument("--search-path", action="append", default=[])
    p.add_argument("--png", help="write the Gantt chart as PNG")
    p.add_argument("--svg", help="write the Gantt chart as SVG")
    p.add_argument("--window", metavar="FROM:TO", help="chart only this time window (µs)")
    p.add_argument("--json", metavar="OUT.json", help="per-thread figures as JSON")
    p.add_argument("--log", help="read the trace from this console log instead of running the image")
    p.add_argument("--save-log", help="write the run's console log here")
    p.add_argument("--kernel", help="kernel ELF (default: build the --flavour kernel)")
    p.add_argument("--flavour", default="debug", choices=["debug", "check"])
    p.add_argument("--memory", "-m", default="1G")
    p.add_argument("--timeout", type=float, default=300.0)
    p.set_defaults(func=_cmd_trace_schedule)
