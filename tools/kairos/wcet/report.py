"""Output of ``kairos wcet``: a rich table, JSON and an HTML report.

JSON (``--json OUT``)::

    {"elf": ..., "model": "u54", "analysis_seconds": 1.2,
     "entries": [{"name": "trap_entry@handle_syscall", "symbol": "trap_entry",
                  "bound_cycles": 12345,
                  "worst_path": [{"function", "context", "block", "count",
                                  "cycles_per_execution", "cycles_total",
                                  ["loop_header_executions"]}, ...],
                  "per_function": {"name": cycles, ...},
                  "loops": [{"function", "header", "context", "bound", "source"}],
                  "stats": {...},
                  "infeasible_paths": {"bound_before", "bound_after", "iterations",
                                       "seconds", "stopped", "facts": [{"kind", "text",
                                       "sources", "terms"}]} | null,
                  "misses": {...} | null}],   # with --misses: see ``miss_census``
     "interrupt_response": {...} | null}

HTML (``--html OUT``): per entry, the annotated disassembly of every function
on the analysed graph with per-block execution counts (summed over contexts)
and cycles, rows heat-coloured by their share of the bound.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict

from rich.console import Console
from rich.table import Table

from kairos.wcet.driver import Analysis, EntryResult


def _loop_rows(er: EntryResult, an: Analysis) -> list[dict]:
    out = []
    for li in er.result.loops:
        out.append({"function": li.loop.func.name, "header": f"{li.loop.header:#x}",
                    "source": an.image.source_of(li.loop.header),
                    "context": [f"{c:#x}" for c in li.ctx], "bound": li.bound, "bound_source": li.source,
                    "total_per_outer_entry": li.total})
    return out


def _function_at(image, addr: int) -> str:
    sa = image.symbol_at(addr)
    return "?" if sa is None else sa[0]


def miss_census(er: EntryResult, an: Analysis, top: int = 15) -> dict | None:
    """The data-cache misses charged on an entry's worst path (the blocks
    the ILP solution executes, weighted by their counts), from the census of
    the cache analysis (``driver.run(census=True)``): totals per reason, the
    accesses charged most, and the accesses whose possible refills removed
    the most guarantees (lines wiped, and the later misses on those lines)."""
    return census_of(er.costs, er.result, an.image, top)


def census_of(costs, result, image, top: int = 15) -> dict | None:
    """``miss_census`` of one ILP solution ``result`` (``ipet.IpetResult``)
    over block costs ``costs`` (``microarch.BlockCosts`` with the census)
    of the ELF ``image``; also the worst region of ``kairos latency
    --misses``."""
    if costs is None or not costs.census_on:
        return None
    lv = next(lv for lv in costs.model.caches if lv.serves == "data")
    pen = lv.miss_penalty
    reasons: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    accesses: dict[int, dict] = {}
    wipers: dict[int, dict] = {}

    def wiper_row(addr: int, kind: str) -> dict:
        w = wipers.get(addr)
        if w is None:
            w = wipers[addr] = {"addr": f"{addr:#x}", "function": _function_at(image, addr),
                                "source": image.source_of(addr), "kind": kind,
                                "lines_wiped": 0, "misses_caused": 0.0}
        return w

    total = 0
    for key, n in result.counts.items():
        if n <= 0:
            continue
        for rec in costs.census.get(key, ()):
            if rec.cycles:
                reason = rec.reason or "?"
                reasons[reason][0] += n * rec.cycles / pen
                reasons[reason][1] += n * rec.cycles
                total += n * rec.cycles
                a = accesses.get(rec.addr)
                if a is None:
                    a = accesses[rec.addr] = {"addr": f"{rec.addr:#x}",
                                              "function": _function_at(image, rec.addr),
                                              "source": image.source_of(rec.addr), "reasons": {},
                                              "executions": 0, "misses": 0.0, "cycles": 0}
                a["executions"] += n
                a["misses"] += n * rec.cycles / pen
                a["cycles"] += n * rec.cycles
                a["reasons"][reason] = a["reasons"].get(reason, 0) + n * rec.cycles
                if rec.wiper is not None:
                    wiper_row(*rec.wiper)["misses_caused"] += n * rec.cycles / pen
            if rec.wiped:
                wiper_row(rec.addr, rec.kind)["lines_wiped"] += n * rec.wiped
    for a in accesses.values():
        a["misses"] = round(a["misses"], 1)
        a["reasons"] = dict(sorted(a["reasons"].items(), key=lambda kv: -kv[1]))
    for w in wipers.values():
        w["misses_caused"] = round(w["misses_caused"], 1)
    return {"miss_penalty": pen, "cycles": total, "misses": round(total / pen, 1),
            "loop_entry_cycles": result.loop_penalties,
            "by_reason": {k: {"misses": round(v[0], 1), "cycles": v[1]}
                          for k, v in sorted(reasons.items(), key=lambda kv: -kv[1][1])},
            "accesses": sorted(accesses.values(), key=lambda a: -a["cycles"])[:top],
            "wipers": sorted(wipers.values(), key=lambda w: (-w["misses_caused"], -w["lines_wiped"]))[:top]}


def print_census(an: Analysis, console: Console, top: int = 15) -> None:
    """The ``--misses`` tables of every entry."""
    for er in an.results:
        c = miss_census(er, an, top)
        if c is not None:
            print_census_tables(er.name, er.bound, c, console)


def print_census_tables(name: str, bound: int, c: dict, console: Console) -> None:
    """The three tables of one census (``census_of``) of a path bounded by ``bound``."""
    t = Table(title=f"{name}: data-cache misses on the worst path by reason "
                    f"({c['misses']:,} misses, {c['cycles']:,} cycles of {bound:,})")
    for col in ("reason", "misses", "cycles"):
        t.add_column(col, justify="left" if col == "reason" else "right")
    for k, v in c["by_reason"].items():
        t.add_row(k, f"{v['misses']:,}", f"{v['cycles']:,}")
    console.print(t)
    t = Table(title=f"{name}: accesses charged the most")
    for col in ("function", "source", "addr", "execs", "misses", "cycles", "reason"):
        t.add_column(col, justify="right" if col in ("execs", "misses", "cycles") else "left")
    for a in c["accesses"]:
        t.add_row(a["function"], a["source"], a["addr"], f"{a['executions']:,}", f"{a['misses']:,}",
                  f"{a['cycles']:,}", next(iter(a["reasons"]), ""))
    console.print(t)
    t = Table(title=f"{name}: accesses whose possible refills removed the most guarantees")
    for col in ("function", "source", "addr", "kind", "lines wiped", "later misses"):
        t.add_column(col, justify="right" if col in ("lines wiped", "later misses") else "left")
    for w in c["wipers"]:
        t.add_row(w["function"], w["source"], w["addr"], w["kind"], f"{w['lines_wiped']:,}",
                  f"{w['misses_caused']:,}")
    console.print(t)


def to_json(an: Analysis) -> dict:
    entries = []
    for er in an.results:
        r = er.result
        entries.append({
            "name": er.name,
            "symbol": er.spec.symbol,
            "via": er.spec.via,
            "bound_cycles": r.bound,
            "loop_entry_penalty_cycles": r.loop_penalties,
            "worst_path": [s.as_dict() for s in r.path],
            "per_function": dict(sorted(r.per_function.items(), key=lambda kv: -kv[1])),
            "loops": _loop_rows(er, an),
            "stats": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.stats.items()}
                     | {"seconds": round(er.seconds, 3)},
            "infeasible_paths": er.refinement.as_dict() if er.refinement is not None else None,
            "misses": miss_census(er, an),
        })
    return {"elf": an.image.path, "model": an.model_name, "analysis_seconds": round(an.seconds, 3),
            "annotation_files": an.annotations.paths, "warnings": an.warnings, "entries": entries,
            "interrupt_response": an.interrupt_response}


def write_json(an: Analysis, path: str) -> None:
    with open(path, "w") as fh:
        json.dump(to_json(an), fh, indent=2)
        fh.write("\n")


def print_summary(an: Analysis, console: Console, show_path: bool = False) -> None:
    t = Table(title=f"WCET bounds ({an.model_name} model)", show_lines=False)
    t.add_column("entry")
    t.add_column("bound (cycles)", justify="right")
    t.add_column("contexts", justify="right")
    t.add_column("ILP vars", justify="right")
    t.add_column("loops", justify="right")
    t.add_column("time (s)", justify="right")
    for er in an.results:
        r = er.result
        t.add_row(er.name, f"{r.bound:,}", f"{int(r.stats['contexts'])}", f"{int(r.stats['variables'])}",
                  f"{len(r.loops)}", f"{er.seconds:.2f}")
    console.print(t)
    for er in an.results:
        r = er.result
        ft = Table(title=f"{er.name}: per-function breakdown (top 10)")
        ft.add_column("function")
        ft.add_column("cycles", justify="right")
        ft.add_column("share", justify="right")
        for name, cyc in sorted(r.per_function.items(), key=lambda kv: -kv[1])[:10]:
            if cyc:
                ft.add_row(name, f"{cyc:,}", f"{100.0 * cyc / max(r.bound, 1):.1f}%")
        console.print(ft)
        ref = er.refinement
        if ref is not None:
            console.print(f"{er.name}: infeasible paths: {ref.bound_before:,} -> {ref.bound_after:,} cycles, "
                          f"{len(ref.conflicts)} facts, {ref.iterations} re-solves, {ref.seconds:.1f} s "
                          f"({ref.stopped})")
            for c in ref.conflicts:
                console.print(f"  {c.kind}: {c.text} [{'; '.join(c.sources)}]", highlight=False, markup=False)
        if show_path:
            pt = Table(title=f"{er.name}: worst-case path")
            for col in ("function", "block", "count", "cycles/exec", "total", "loop"):
                pt.add_column(col, justify="right" if col not in ("function", "block") else "left")
            for s in r.path:
                pt.add_row(s.function, f"{s.block:#x}", str(s.count), str(s.cycles), f"{s.cycles * s.count:,}",
                           "" if s.loop_iterations is None else f"x{s.loop_iterations}")
            console.print(pt)
    if an.interrupt_response:
        ir = an.interrupt_response
        console.print(f"interrupt-response bound: {ir['bound_cycles']:,} cycles = longest masked path "
                      f"{ir['longest_masked_path']} ({ir['longest_masked_cycles']:,}) + interrupt entry "
                      f"{ir['interrupt_entry']} ({ir['interrupt_entry_cycles']:,})")
    for w in an.warnings:
        console.print(f"note: {w}")
    console.print(f"analysis time {an.seconds:.2f} s")


def _heat(frac: float) -> str:
    frac = max(0.0, min(1.0, frac))
    if frac == 0:
        return "#ffffff"
    # white -> yellow -> red, emphasising small shares (sqrt)
    f = frac ** 0.5
    r = 255
    g = int(255 - 200 * f)
    b = int(230 - 230 * min(1.0, f * 2))
    return f"#{r:02x}{g:02x}{max(b, 0):02x}"


def write_html(an: Analysis, path: str) -> None:
    img = an.image
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>kairos wcet report</title>",
             "<style>body{font-family:sans-serif;margin:1em} table{border-collapse:collapse}"
             " td,th{padding:1px 6px;font-family:monospace;font-size:12px} th{text-align:left;background:#eee}"
             " .num{text-align:right} h3{margin-top:1.5em}</style></head><body>",
             f"<h1>WCET report: {html.escape(img.path)}</h1>",
             f"<p>model <b>{html.escape(an.model_name)}</b>; analysis time {an.seconds:.2f} s</p><ul>"]
    for er in an.results:
        parts.append(f"<li><a href='#{html.escape(er.name)}'>{html.escape(er.name)}</a>: "
                     f"<b>{er.bound:,}</b> cycles</li>")
    parts.append("</ul>")
    if an.interrupt_response:
        ir = an.interrupt_response
        parts.append(f"<p>Interrupt-response bound: <b>{ir['bound_cycles']:,}</b> cycles</p>")
    for er in an.results:
        r = er.result
        bound = max(r.bound, 1)
        parts.append(f"<h2 id='{html.escape(er.name)}'>{html.escape(er.name)}: {r.bound:,} cycles</h2>")
        ref = er.refinement
        if ref is not None:
            parts.append(f"<p>Infeasible paths: {ref.bound_before:,} &rarr; {ref.bound_after:,} cycles "
                         f"({ref.iterations} re-solves, {ref.seconds:.1f} s, {html.escape(ref.stopped)})</p><ul>")
            for c in ref.conflicts:
                parts.append(f"<li>{html.escape(c.kind)}: {html.escape(c.text)} "
                             f"<small>{html.escape('; '.join(c.sources))}</small></li>")
            parts.append("</ul>")
        # aggregate over contexts: per (function entry, block start)
        agg_cnt: dict[tuple[str, int], int] = defaultdict(int)
        agg_cyc: dict[tuple[str, int], int] = defaultdict(int)
        for (ctx, bs), cnt in r.counts.items():
            fname = r.functions[(ctx, bs)]
            agg_cnt[(fname, bs)] += cnt
            agg_cyc[(fname, bs)] += cnt * r.costs[(ctx, bs)]
        funcs = sorted({f for f, _ in agg_cnt}, key=lambda f: -r.per_function.get(f, 0))
        for fname in funcs:
            fn = an.program.function(fname) if fname in an.program.entries or img.has_symbol(fname) else None
            if fn is None:
                continue
            share = r.per_function.get(fname, 0) / bound
            parts.append(f"<h3>{html.escape(fname)} &mdash; {r.per_function.get(fname, 0):,} cycles "
                         f"({100 * share:.1f}%)</h3><table><tr><th>address</th><th>source</th><th>instruction</th>"
                         f"<th>count</th><th>block cycles</th><th>share</th></tr>")
            for bs in sorted(fn.blocks):
                blk = fn.blocks[bs]
                cnt = agg_cnt.get((fname, bs), 0)
                cyc = agg_cyc.get((fname, bs), 0)
                frac = cyc / bound
                colour = _heat(frac)
                for k, ins in enumerate(blk.instrs):
                    first = k == 0
                    parts.append(
                        f"<tr style='background:{colour}'><td>{ins.addr:#x}</td>"
                        f"<td>{html.escape(img.source_of(ins.addr)) if first else ''}</td>"
                        f"<td>{html.escape(ins.text())}</td>"
                        f"<td class='num'>{cnt if first else ''}</td>"
                        f"<td class='num'>{cyc if first else ''}</td>"
                        f"<td class='num'>{f'{100 * frac:.1f}%' if first else ''}</td></tr>")
            parts.append("</table>")
        parts.append("<h3>Loops</h3><table><tr><th>function</th><th>header</th><th>source</th><th>bound</th>"
                     "<th>from</th></tr>")
        for row in _loop_rows(er, an):
            parts.append(f"<tr><td>{html.escape(row['function'])}</td><td>{row['header']}</td>"
                         f"<td>{html.escape(row['source'])}</td><td class='num'>{row['bound']}</td>"
                         f"<td>{html.escape(row['bound_source'])}</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    with open(path, "w") as fh:
        fh.write("\n".join(parts))
