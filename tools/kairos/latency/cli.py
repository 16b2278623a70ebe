"""The ``kairos latency`` subcommand: non-preemptible regions of a kernel
binary and its worst-case interrupt response (docs/wcet.md, "Interrupt
latency")."""

from __future__ import annotations

import argparse
import sys

from kairos.wcet.errors import WcetError, report_errors


def register(sub) -> None:
    p = sub.add_parser("latency", help="non-preemptible regions and worst-case interrupt response of a kernel",
                       description="Enumerate the kernel's non-preemptible regions (kernel entry, preemption "
                                   "points, wfi), bound each, and bound the worst-case interrupt response. "
                                   "See docs/wcet.md, 'Interrupt latency'.")
    p.add_argument("elf", help="the kernel ELF")
    p.add_argument("--annotations", "-a", action="append", default=[], metavar="FILE",
                   help="annotation file (TOML; repeatable): loop bounds, parameters, preemption points")
    p.add_argument("--param", "-p", action="append", default=[], metavar="NAME=VALUE",
                   help="system parameter declared in an annotation file (repeatable)")
    p.add_argument("--avoid", action="append", default=[], metavar="FUNCTION",
                   help="a kernel function the analysed system never calls (repeatable): no path calls it and "
                        "no region starts in it (as kairos wcet's ENTRY@...,!FUNCTION)")
    p.add_argument("--system", metavar="SYSTEM.xml",
                   help="instantiate the system parameters and the avoided functions from a system description "
                        "(docs/wcet.md 'Interrupt latency' -> 'A described system'); --param overrides")
    p.add_argument("--search-path", action="append", default=[], metavar="DIR",
                   help="--system: where its program images are looked up")
    p.add_argument("--model", "-m", default="u54", help="processor model preset (u54, u54-lru, u54-l2lim, u54-itim, u54-l2lim-itim, simple)")
    p.add_argument("--entry", "-e", default="trap_entry", help="kernel entry symbol (default trap_entry)")
    p.add_argument("--context-budget", type=int, default=None, metavar="N",
                   help="call contexts before the most multiplying functions are shared (default 4000)")
    p.add_argument("--top", type=int, default=10, metavar="N", help="regions in the table (default 10)")
    p.add_argument("--bound-only", action="store_true",
                   help="one solve over all regions: the bound and the worst region, no table of all")
    p.add_argument("--observe", metavar="ROOTTASK.elf",
                   help="also boot ROOTTASK under QEMU, capture every kernel run (gdb single-step), replay each "
                        "region through the model and compare it with its bound; exit status 1 if one exceeds it")
    p.add_argument("--count", type=int, default=5000, metavar="N", help="--observe: kernel runs to capture")
    p.add_argument("--capture-timeout", type=float, default=1800.0, metavar="S",
                   help="--observe: stop capturing after S seconds (default 1800)")
    p.add_argument("--no-return-facts", action="store_true",
                   help="do not tie a tested returned value to the returns that can give it, nor decide a "
                        "callee's branches by the constant arguments of its call context (for comparison)")
    p.add_argument("--no-unwind-facts", action="store_true",
                   help="do not tie a taken preemption point's result to its callers' tests on the handling "
                        "path (to measure what the facts gain)")
    p.add_argument("--no-infeasible-paths", action="store_true",
                   help="do not refine the worst regions by the SMT search for infeasible paths and flag facts "
                        "(as kairos wcet --no-infeasible-paths; for comparison)")
    p.add_argument("--infeasible-budget", type=float, default=None, metavar="SECONDS",
                   help="effort of the infeasible-path search per refined region, in nominal seconds "
                        "(default: kairos wcet's)")
    p.add_argument("--worst-handling", action="store_true",
                   help="charge every region ending at a preemption point the worst handling path of any "
                        "preemption point (the composition before per-poll handling paths; for comparison)")
    p.add_argument("--misses", action="store_true",
                   help="miss census of the worst region: its data-cache misses by reason, the accesses "
                        "charged most and those that wiped the most lines, and the same for the interrupt "
                        "entry when the region ends at sret (also in --json as \"misses\")")
    p.add_argument("--json", metavar="OUT.json", help="write the result as JSON")
    p.add_argument("--html", metavar="OUT.html", help="write an HTML report")
    p.add_argument("--quiet", "-q", action="store_true", help="no table, no progress bar")
    p.set_defaults(func=main)


def parse_params(items: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for it in items:
        name, eq, val = it.partition("=")
        name = name.strip()
        if not eq or not name.isidentifier():
            raise WcetError(f"--param {it!r}: expected NAME=VALUE")
        try:
            v = int(val.strip(), 0)
        except ValueError:
            raise WcetError(f"--param {it!r}: the value must be an integer") from None
        if v < 0:
            raise WcetError(f"--param {it!r}: the value must be >= 0")
        out[name] = v
    return out


def main(args: argparse.Namespace) -> int:
    return report_errors("kairos latency", lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from kairos.latency import regions, report
    from kairos.wcet import annotations as annmod

    if args.top < 1:
        raise WcetError("--top must be at least 1")
    params = parse_params(args.param)
    avoid = list(args.avoid)
    notes: list[str] = []
    if args.system:
        from kairos.system.analysis import latency_inputs
        sys_params, sys_avoid, notes = latency_inputs(args.system, args.search_path, args.elf)
        # never above the limit the kernel enforces (the parameter's default)
        declared = annmod.Annotations()
        for path in args.annotations:
            declared.merge(annmod.load(path))
        sys_params = {k: min(v, declared.parameters[k].default) for k, v in sys_params.items()
                      if k in declared.parameters}
        params = {**sys_params, **params}
        avoid += [n for n in sys_avoid if n not in avoid]
    ann = annmod.Annotations()
    for path in args.annotations:
        ann.merge(annmod.load(path, params))
    unknown = sorted(set(params) - set(ann.parameters))
    if unknown:
        declared = ", ".join(sorted(ann.parameters)) or "none"
        raise WcetError(f"unknown parameter(s) {', '.join(unknown)} (declared in the annotation files: {declared})")
    budget = regions.DEFAULT_CONTEXT_BUDGET if args.context_budget is None else (args.context_budget or None)
    err = Console(stderr=True)
    if args.observe and args.bound_only:
        raise WcetError("--observe needs every region's bound: drop --bound-only")
    kw = dict(model_name=args.model, entry=args.entry, context_budget=budget, table=not args.bound_only,
              top_lengths=args.top, all_lengths=bool(args.observe),
              unwind_facts=not args.no_unwind_facts, return_facts=not args.no_return_facts, per_poll_handling=not args.worst_handling,
              census=args.misses, infeasible_paths=not args.no_infeasible_paths,
              infeasible_budget=args.infeasible_budget, avoid=avoid)
    if args.infeasible_budget is not None and args.infeasible_budget < 0:
        raise WcetError("--infeasible-budget must be >= 0")
    if not args.quiet and err.is_terminal:
        with Progress(TextColumn("[bold]latency[/]"), BarColumn(), TextColumn("{task.description}"),
                      TimeElapsedColumn(), console=err, transient=True) as prog:
            task = prog.add_task("starting", total=1.0)
            res = regions.analyse(args.elf, ann, progress=lambda m, f: prog.update(task, completed=f, description=m),
                                  **kw)
    else:
        res = regions.analyse(args.elf, ann, **kw)
    res.warnings[:0] = notes
    observed = None
    if args.observe:
        from kairos.latency import observe
        if not args.quiet:
            err.print(f"capturing the kernel runs of {args.observe} (single-stepped under QEMU) ...")
        obs = observe.observe(args.elf, args.observe, res, count=args.count, timeout=args.capture_timeout)
        rows, response = observe.compare(res, obs)
        if "latency-stress: done" not in obs.serial and "kairos-result" not in obs.serial:
            err.print("note: the root task did not print its end marker within the capture (see --count, "
                      "--capture-timeout)")
        observed = {"roottask": args.observe, "kernel_runs": obs.runs, "runs_too_long_to_step": obs.skipped,
                    "regions": rows, "response": response,
                    "taken_poll_handling_cycles": max(obs.taken, default=None)}
    if args.json:
        data = report.to_json(res)
        if observed is not None:
            data["observed"] = observed
        import json
        with open(args.json, "w") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
    if args.html:
        report.write_html(res, args.html, top=args.top)
    out = Console(width=max(Console().width, 160))
    if not args.quiet:
        report.print_summary(res, out, top=args.top)
        if res.misses:
            from kairos.wcet.report import print_census_tables
            worst = res.worst
            for part, c in res.misses.items():
                if c is not None:
                    bound = worst.response - worst.handling if part == "region" else res.interrupt_entry
                    print_census_tables(f"{worst.name} ({part})", bound, c, out)
    if observed is not None:
        report.print_observed(observed, out)
        bad = [r for r in observed["regions"] if not r["within"]]
        if bad or not observed["response"]["within"]:
            print(f"kairos latency: {len(bad)} observed region(s) above their bound"
                  + ("" if observed["response"]["within"] else "; observed response above the bound"),
                  file=sys.stderr)
            return 1
    return 0
