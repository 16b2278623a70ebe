"""Output of ``kairos latency``: a table, JSON and HTML.

Regions are listed per *site* (the kernel entry's handler, a preemption-point
call, a ``wfi``): a site reached through several call contexts is one row
with the worst of them and the number of contexts.

JSON (``--json OUT``)::

    {"elf", "model", "entry", "bound_cycles", "interrupt_entry_cycles",
     "handling_cycles": {kind: cycles}, "poll_handling": [{function, source, cycles, contexts}],
     "parameters": {name: {value, default, note}}, "avoided": [function, ...],
     "preemption_points": [...], "region_starts": N, "analysis_seconds",
     "worst_region": {...},
     "regions": [{"name", "kind", "site", "source", "function", "context",
                  "contexts", "response_cycles", "length_cycles" | null,
                  "end", "handling_cycles", "worst_path": [{function, source, ...}]}],
     "warnings": [...]}
"""

from __future__ import annotations

import html
import json

from rich.console import Console
from rich.table import Table

from kairos.latency.regions import LatencyResult, Region
from kairos.wcet.elfimage import ElfImage
from kairos.wcet.ipet import PathStep


def by_site(res: LatencyResult) -> list[tuple[Region, int]]:
    """The worst region per site (kind, site), with its number of contexts,
    in order of response."""
    best: dict[tuple, Region] = {}
    count: dict[tuple, int] = {}
    for r in res.regions:
        key = (r.start.kind, r.start.site)
        count[key] = count.get(key, 0) + 1
        cur = best.get(key)
        if cur is None or r.response > cur.response or \
                (r.response == cur.response and cur.length is None and r.length is not None):
            best[key] = r
    rows = sorted(best.items(), key=lambda kv: -kv[1].response)
    return [(r, count[k]) for k, r in rows]


def path_summary(image: ElfImage, path: list[PathStep], limit: int = 12) -> list[dict]:
    """The worst path by function, in path order: each function's cycles on
    the path and the source line of its costliest block."""
    order: list[str] = []
    cycles: dict[str, int] = {}
    top: dict[str, tuple[int, int]] = {}
    for st in path:
        c = st.cycles * st.count
        if st.function not in cycles:
            order.append(st.function)
            cycles[st.function] = 0
        cycles[st.function] += c
        if c > top.get(st.function, (-1, 0))[0]:
            top[st.function] = (c, st.block)
    rows = [{"function": f, "source": image.source_of(top[f][1]), "cycles": cycles[f]} for f in order]
    if len(rows) > limit:
        keep = {id(r) for r in sorted(rows, key=lambda r: -r["cycles"])[:limit]}
        rows = [r for r in rows if id(r) in keep]
    return rows


def to_json(res: LatencyResult) -> dict:
    image = ElfImage(res.elf)
    worst = res.worst
    regions = []
    for r, n in by_site(res):
        regions.append({
            "name": r.name, "kind": r.start.kind, "site": f"{r.start.site:#x}", "source": r.source,
            "function": r.start.function, "context": r.chain, "contexts": n,
            "response_cycles": r.response, "length_cycles": r.length, "end": r.end,
            "handling_cycles": r.handling,
            "worst_path": path_summary(image, r.length_path or r.response_path, limit=40)})
    return {"elf": res.elf, "model": res.model, "entry": res.entry, "bound_cycles": res.bound,
            "interrupt_entry_cycles": res.interrupt_entry, "handling_cycles": res.handling,
            "poll_handling": [{"function": f, "source": src, "cycles": v, "contexts": n}
                              for f, src, v, n in res.poll_handling],
            "parameters": res.parameters, "avoided": res.avoided, "preemption_points": res.polls,
            "region_starts": res.starts,
            "analysis_seconds": round(res.seconds, 2),
            "worst_region": {"name": worst.name, "context": worst.chain, "response_cycles": worst.response,
                             "length_cycles": worst.length, "end": worst.end},
            "regions": regions, "warnings": res.warnings, "misses": res.misses,
            "infeasible_paths": {name: ref.as_dict() for name, ref in res.refinements.items()}}


def write_json(res: LatencyResult, path: str) -> None:
    with open(path, "w") as fh:
        json.dump(to_json(res), fh, indent=2)
        fh.write("\n")


def _fmt(v: int | None) -> str:
    return "-" if v is None else f"{v:,}"


def print_summary(res: LatencyResult, console: Console, top: int = 10, show_paths: bool = True) -> None:
    image = ElfImage(res.elf)
    w = res.worst
    console.print(f"worst-case interrupt response: [bold]{res.bound:,}[/] cycles ({res.model} model) = "
                  f"region '{w.name}' with the handling path of its end ({w.end}: {w.handling:,})")
    ht = Table(title="handling paths (end of a region -> sret to the handler thread)")
    ht.add_column("from")
    ht.add_column("cycles", justify="right")
    for k, v in res.handling.items():
        ht.add_row(k, f"{v:,}")
    for f, src, v, n in res.poll_handling:
        ht.add_row(f"  after the preemption point in {f} ({src}), worst of {n} context(s)", f"{v:,}")
    console.print(ht)
    rows = by_site(res)
    t = Table(title=f"non-preemptible regions: top {min(top, len(rows))} of {len(rows)} sites "
                    f"({res.starts} starts with contexts)")
    for col, just in (("#", "right"), ("region (start)", "left"), ("contexts", "right"),
                      ("response", "right"), ("length", "right"), ("ends at", "left")):
        t.add_column(col, justify=just)
    for i, (r, n) in enumerate(rows[:top], 1):
        t.add_row(str(i), r.name, str(n), f"{r.response:,}", _fmt(r.length), r.end)
    console.print(t)
    if show_paths:
        for i, (r, _n) in enumerate(rows[:top], 1):
            path = r.length_path or r.response_path
            steps = path_summary(image, path, limit=8)
            console.print(f"#{i} {r.name}: " + " > ".join(f"{s['function']} ({s['source']}, {s['cycles']:,})"
                                                        for s in steps))
    for name, ref in res.refinements.items():
        console.print(f"infeasible paths in '{name}': {ref.bound_before:,} -> {ref.bound_after:,} cycles, "
                      f"{len(ref.conflicts)} facts, {ref.iterations} re-solves ({ref.stopped})")
    if res.parameters:
        console.print("parameters: " + ", ".join(f"{k}={v['value']}" for k, v in res.parameters.items()))
    if res.avoided:
        console.print("avoided (never called by the analysed system): " + ", ".join(res.avoided))
    for wmsg in res.warnings:
        console.print(f"note: {wmsg}")
    console.print(f"analysis time {res.seconds:.1f} s")


def print_observed(observed: dict, console: Console) -> None:
    rs = observed["response"]
    t = Table(title=f"observed regions ({observed['kernel_runs']} kernel runs of {observed['roottask']}, "
                    f"replayed from polluted caches; observed = {rs.get('replays', 'as modelled')})")
    for col, just in (("region", "left"), ("seen", "right"), ("observed max", "right"),
                      ("instructions", "right"), ("seeded only", "right"), ("bound", "right"),
                      ("bound/observed", "right")):
        t.add_column(col, justify=just)
    for r in observed["regions"]:
        t.add_row(r["region"], str(r["observations"]), f"{r['observed_max_cycles']:,}",
                  f"{r['observed_max_instructions']:,}", f"{r.get('observed_max_seeded_cycles', 0):,}",
                  _fmt(r["bound_cycles"]),
                  "-" if r["ratio"] is None else f"{r['ratio']:.2f}" + ("" if r["within"] else " EXCEEDED"))
    console.print(t)
    console.print(f"observed response: longest region {rs['observed_longest_region_cycles']:,} + interrupt entry "
                  f"{rs['observed_interrupt_entry_cycles']:,} = {rs['observed_response_cycles']:,} cycles; bound "
                  f"{rs['bound_cycles']:,} (ratio {rs['ratio']}; seeded replay alone "
                  f"{rs.get('observed_response_seeded_cycles', 0):,}, ratio {rs.get('ratio_seeded')})"
                  + ("" if rs["within"] else " EXCEEDED"))


def write_html(res: LatencyResult, path: str, top: int = 10) -> None:
    image = ElfImage(res.elf)
    e = html.escape
    rows = by_site(res)
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>kairos latency</title><style>",
           "body{font-family:sans-serif;margin:2em} table{border-collapse:collapse;margin:1em 0}",
           "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left} td.n{text-align:right}",
           ".bar{background:#e66;height:10px}</style></head><body>",
           f"<h1>Interrupt latency of {e(res.elf)}</h1>",
           f"<p>Worst-case interrupt response: <b>{res.bound:,}</b> cycles ({e(res.model)} model); "
           f"region starts: {res.starts}; preemption points: {e(', '.join(res.polls))}.</p>",
           "<h2>Handling paths</h2><table><tr><th>from</th><th>cycles</th></tr>"]
    for k, v in res.handling.items():
        out.append(f"<tr><td>{e(k)}</td><td class=n>{v:,}</td></tr>")
    for f, src, v, n in res.poll_handling:
        out.append(f"<tr><td>after the preemption point in {e(f)} ({e(src)}), worst of {n} context(s)</td>"
                   f"<td class=n>{v:,}</td></tr>")
    out.append("</table><h2>Parameters</h2><table><tr><th>name</th><th>value</th><th>default</th>"
               "<th>meaning</th></tr>")
    for k, v in res.parameters.items():
        out.append(f"<tr><td>{e(k)}</td><td class=n>{v['value']}</td><td class=n>{v['default']}</td>"
                   f"<td>{e(v['note'])}</td></tr>")
    if res.avoided:
        out.append("</table><p>Avoided (never called by the analysed system): "
                   f"{e(', '.join(res.avoided))}.</p><table>")
    out.append("</table><h2>Regions by site</h2><table><tr><th>#</th><th>region (start)</th><th>contexts</th>"
               "<th>response</th><th>length</th><th>ends at</th><th></th></tr>")
    for i, (r, n) in enumerate(rows, 1):
        width = int(300 * r.response / max(res.bound, 1))
        out.append(f"<tr><td class=n>{i}</td><td><a href='#r{i}'>{e(r.name)}</a></td><td class=n>{n}</td>"
                   f"<td class=n>{r.response:,}</td><td class=n>{_fmt(r.length)}</td><td>{e(r.end)}</td>"
                   f"<td><div class=bar style='width:{width}px'></div></td></tr>")
    out.append("</table>")
    for i, (r, _n) in enumerate(rows[:top], 1):
        out.append(f"<h3 id='r{i}'>#{i} {e(r.name)}</h3><p>context: {' &gt; '.join(e(c) for c in r.chain)}</p>"
                   "<table><tr><th>function</th><th>costliest line</th><th>cycles on the path</th></tr>")
        for s in path_summary(image, r.length_path or r.response_path, limit=40):
            out.append(f"<tr><td>{e(s['function'])}</td><td>{e(s['source'])}</td>"
                       f"<td class=n>{s['cycles']:,}</td></tr>")
        out.append("</table>")
    if res.refinements:
        out.append("<h2>Infeasible paths</h2><ul>" + "".join(
            f"<li>{e(name)}: {ref.bound_before:,} &rarr; {ref.bound_after:,} cycles, {len(ref.conflicts)} facts "
            f"({e(ref.stopped)})<ul>" + "".join(f"<li>{e(c.text)} ({e(', '.join(c.sources))})</li>"
                                                for c in ref.conflicts) + "</ul></li>"
            for name, ref in res.refinements.items()) + "</ul>")
    if res.warnings:
        out.append("<h2>Notes</h2><ul>" + "".join(f"<li>{e(w)}</li>" for w in res.warnings) + "</ul>")
    out.append("</body></html>")
    with open(path, "w") as fh:
        fh.write("\n".join(out))
