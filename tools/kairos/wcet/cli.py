"""The ``kairos wcet`` subcommand (and registration of ``kairos trace``)."""

from __future__ import annotations

import argparse

from kairos.wcet.errors import WcetError, report_errors


def register(sub) -> None:
    p = sub.add_parser("wcet", help="static worst-case execution time analysis of a RISC-V ELF",
                       description="Bound the worst-case execution time (in core cycles) of entry "
                                   "points of a riscv64 ELF. See docs/wcet.md.")
    p.add_argument("elf", help="the riscv64 ELF executable")
    p.add_argument("--entry", "-e", action="append", default=[], metavar="SYMBOL[@VIA]",
                   help="entry symbol to analyse (repeatable); SYMBOL@FUNC keeps only paths that call "
                        "FUNC, SYMBOL@FUNC,!OTHER also drops paths that call OTHER")
    p.add_argument("--annotations", "-a", action="append", default=[], metavar="FILE",
                   help="loop-bound annotation file (TOML; repeatable)")
    p.add_argument("--model", "-m", default="u54",
                   help="processor model preset (u54, u54-lru, u54-l2lim, u54-itim, u54-l2lim-itim, or 'simple' "
                        "for a cache-less model)")
    p.add_argument("--sp", metavar="VALUE|SYMBOL", help="stack pointer at the entry (makes stack "
                   "accesses' cache sets known)")
    p.add_argument("--stop-at", action="append", default=[], metavar="FUNC",
                   help="calls to FUNC end the path (e.g. a preemption point)")
    p.add_argument("--irq-entry", metavar="SYMBOL[@VIA]",
                   help="interrupt entry: also report the interrupt-response bound")
    p.add_argument("--context-budget", type=int, default=None, metavar="N",
                   help="share the contexts of the functions whose call strings multiply most until at "
                        "most N contexts remain per entry (default 4000; 0: full virtual inlining)")
    p.add_argument("--no-symbolic-cache", dest="symbolic_cache", action="store_false",
                   help="treat every access through a pointer of unknown value as a miss that may evict "
                        "anything (the analysis before symbolic cache lines; for comparison)")
    p.add_argument("--no-return-facts", action="store_true",
                   help="do not tie a tested returned value to the returns that can give it, nor decide a "
                        "callee's branches by the constant arguments of its call context (to measure the gain)")
    p.add_argument("--no-infeasible-paths", action="store_true",
                   help="do not look for infeasible paths and flag facts (to measure their gain)")
    p.add_argument("--no-precision", action="store_true",
                   help="switch off every precision mechanism of issue 14 together: symbolic cache lines "
                        "(with line and copy walks and object facts), infeasible paths and flag facts, "
                        "SMT loop bounds (annotations are then trusted) and the --stop-at functions' bodies "
                        "left out; the analysis before them, for comparison (docs/wcet.md)")
    p.add_argument("--infeasible-budget", type=float, default=None, metavar="SECONDS",
                   help="effort for the infeasible-path refinement of each entry, in nominal seconds "
                        "(deterministic solver units, the same on any machine; default 4)")
    p.add_argument("--assume-arrays-in-bounds", action="store_true",
                   help="assume a store to a global plus an index never writes a word the program "
                        "accesses at a constant address (documented in docs/wcet.md)")
    p.add_argument("--no-source-bounds", dest="source_bounds", action="store_false",
                   help="do not read loopbound pragmas (_Pragma(\"loopbound min N max M\")) from the C "
                        "sources for loops without a [[loop]] annotation (docs/wcet.md)")
    p.add_argument("--source-dir", action="append", default=[], metavar="DIR",
                   help="root of the source tree when it is no longer where the ELF's DWARF says "
                        "(for loopbound pragmas and source anchors; repeatable)")
    p.add_argument("--json", metavar="OUT.json", help="write results as JSON")
    p.add_argument("--html", metavar="OUT.html", help="write an HTML report with annotated disassembly")
    p.add_argument("--path", action="store_true", help="print the worst-case path")
    p.add_argument("--misses", action="store_true",
                   help="miss census: the data-cache misses charged on each entry's worst path, by reason, "
                        "the accesses charged most and the accesses that wiped the most cached lines "
                        "(also in --json as \"misses\")")
    p.add_argument("--loops", action="store_true",
                   help="only list every reachable loop with its bound or UNBOUNDED (for writing "
                        "annotations); exit status 1 if some loop has no bound")
    p.add_argument("--quiet", "-q", action="store_true", help="no table, no progress bar")
    p.set_defaults(func=main)
    try:
        from kairos.wcet import trace_cli  # owned by the concrete-replay half
    except ImportError:
        trace_cli = None
    if trace_cli is not None and hasattr(trace_cli, "register"):
        trace_cli.register(sub)


def main(args: argparse.Namespace) -> int:
    from rich.console import Console

    err = Console(stderr=True)
    return report_errors("kairos wcet", lambda: _run(args, err))


def _run(args: argparse.Namespace, err) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from kairos.wcet import annotations as annmod
    from kairos.wcet import driver, report

    ann = annmod.Annotations()
    for path in args.annotations:
        ann.merge(annmod.load(path))
    ann.source_bounds = args.source_bounds
    ann.source_dirs = list(args.source_dir)
    entries = list(args.entry)
    if not entries:
        from kairos.wcet.elfimage import ElfImage
        img = ElfImage(args.elf)
        name = img.symbol_name_at(img.entry_point)
        if name is None:
            raise WcetError("no --entry given and the ELF entry point has no symbol")
        entries = [name]
    budget = driver.DEFAULT_CONTEXT_BUDGET if args.context_budget is None else (args.context_budget or None)
    out = Console()
    if args.loops:
        from rich.table import Table
        out = Console(width=max(out.width, 160))
        rows = driver.list_loops(args.elf, entries, ann, budget)
        t = Table(title="loops")
        for col in ("function", "header", "source", "contexts", "bound", "kind", "anchor", "from"):
            t.add_column(col)
        for r in rows:
            bound = "UNBOUNDED" if r.unbounded and not r.bounds else \
                ",".join(str(b) for b in sorted(r.bounds)) + (f" (+{r.unbounded} unbounded)" if r.unbounded else "")
            t.add_row(r.function, f"{r.header:#x}", r.source, str(r.contexts), bound, r.kind, r.anchor, r.origin)
        out.print(t)
        done, total = driver.loop_coverage(rows)
        kinds: dict[str, int] = {}
        for r in rows:
            kinds[r.kind] = kinds.get(r.kind, 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
        pct = 100.0 * done / total if total else 100.0
        out.print(f"{len(rows)} loops: {summary}; bounded by the analyser "
                  f"(automatic, symbolic + parameter, preemption): {done}/{total} = {pct:.0f}%")
        return 1 if any(r.unbounded for r in rows) else 0
    if args.infeasible_budget is not None and args.infeasible_budget < 0:
        raise WcetError("--infeasible-budget must be at least 0 seconds")
    precise = not args.no_precision
    infeasible_opts = {"infeasible_paths": precise and not args.no_infeasible_paths,
                       "infeasible_budget": args.infeasible_budget,
                       "arrays_in_bounds": args.assume_arrays_in_bounds,
                       "smt_loops": precise, "prune_stops": precise,
                       "return_facts": precise and not args.no_return_facts}
    show_progress = not args.quiet and err.is_terminal
    if show_progress:
        with Progress(TextColumn("[bold]wcet[/]"), BarColumn(), TextColumn("{task.description}"),
                      TimeElapsedColumn(), console=err, transient=True) as prog:
            task = prog.add_task("starting", total=1.0)

            def cb(msg: str, frac: float) -> None:
                prog.update(task, completed=frac, description=msg)
            an = driver.run(args.elf, entries, args.model, ann, args.sp, args.stop_at, args.irq_entry, cb,
                            context_budget=budget, symbolic_cache=precise and args.symbolic_cache,
                            census=args.misses, **infeasible_opts)
    else:
        an = driver.run(args.elf, entries, args.model, ann, args.sp, args.stop_at, args.irq_entry,
                        context_budget=budget, symbolic_cache=precise and args.symbolic_cache,
                        census=args.misses, **infeasible_opts)
    if args.json:
        report.write_json(an, args.json)
    if args.html:
        report.write_html(an, args.html)
    if not args.quiet:
        report.print_summary(an, out, show_path=args.path)
        if args.misses:
            report.print_census(an, Console(width=max(out.width, 160)))
    return 0
