"""Orchestration of one WCET analysis: ELF → CFG → loops/bounds → values →
micro-architecture → IPET, for several entry specifications.

An *entry specification* is ``SYMBOL`` or ``SYMBOL@VIA[,VIA2...]``: the
analysis starts at ``SYMBOL`` and, with ``@VIA``, only paths that call every
function ``VIA`` count (e.g. ``trap_entry@handle_syscall`` is the system-call
unit of a kernel whose trap vector dispatches to several handlers).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from kairos.wcet import ipet
from kairos.wcet.annotations import Annotations
from kairos.wcet.bounds import BoundAnalysis
from kairos.wcet.cfg import Context, Program, build_program
from kairos.wcet.elfimage import ElfImage
from kairos.wcet.errors import WcetError
from kairos.wcet.valueanalysis import ValueInfo

SIMPLE_MODEL = "simple"
#: Above this many call contexts per entry, the functions whose call strings
#: multiply most get one shared context each (``Program.limit_contexts``).
DEFAULT_CONTEXT_BUDGET = 4000


@dataclass
class EntrySpec:
    text: str
    symbol: str
    via: list[str] = field(default_factory=list)
    avoid: list[str] = field(default_factory=list)

    @staticmethod
    def parse(text: str) -> "EntrySpec":
        sym, _, via = text.partition("@")
        sym = sym.strip()
        if not sym:
            raise WcetError(f"bad entry {text!r}: expected SYMBOL or SYMBOL@FUNCTION[,!FUNCTION]")
        names = [v.strip() for v in via.split(",") if v.strip()] if via else []
        vias = [n for n in names if not n.startswith("!")]
        avoid = [n[1:].strip() for n in names if n.startswith("!")]
        if any(not a for a in avoid):
            raise WcetError(f"bad entry {text!r}: '!' must be followed by a function name")
        return EntrySpec(text, sym, vias, avoid)


@dataclass
class EntryResult:
    spec: EntrySpec
    result: ipet.IpetResult
    seconds: float
    costs: object | None = None     # microarch.BlockCosts when available
    refinement: object | None = None   # infeasible.Refinement when infeasible paths were removed

    @property
    def name(self) -> str:
        return self.spec.text

    @property
    def bound(self) -> int:
        return self.result.bound


@dataclass
class Analysis:
    image: ElfImage
    program: Program
    model_name: str
    results: list[EntryResult]
    annotations: Annotations
    seconds: float
    interrupt_response: dict | None = None
    warnings: list[str] = field(default_factory=list)


def _via_constraint(program: Program, via: list[str], avoid: list[str] = ()) -> Callable:
    """ILP constraints: every ``via`` function is called at least once, no
    ``avoid`` function is ever called."""
    targets = [(v, program.image.symbol(v).addr, True) for v in via] + \
              [(v, program.image.symbol(v).addr, False) for v in avoid]

    def fn(g: ipet.InlinedGraph) -> list[ipet.Constraint]:
        out = []
        for name, addr, must in targets:
            terms = []
            for e, (a, b) in enumerate(g.edges):
                if b >= 0 and g.nodes[b].block is not None and g.nodes[b].block.start == addr \
                        and g.nodes[b].func.entry == addr and a != b and (a < 0 or g.nodes[a].ctx != g.nodes[b].ctx):
                    terms.append((e, -1.0 if must else 1.0))
            if must:
                if not terms:
                    raise WcetError(f"entry restriction @{name}: {name} is not called on any path")
                out.append(ipet.Constraint(terms, -1.0))   # -(calls) <= -1
            elif terms:
                out.append(ipet.Constraint(terms, 0.0, equal=True))   # calls == 0
        return out
    return fn


def run(elf: str, entries: list[str], model_name: str = "u54", annotations: Annotations | None = None,
        sp0: str | int | None = None, stop_at: list[str] = (), irq_entry: str | None = None,
        progress: Callable[[str, float], None] | None = None,
        context_budget: int | None = DEFAULT_CONTEXT_BUDGET, symbolic_cache: bool = True,
        infeasible_paths: bool = True, infeasible_budget: float | None = None,
        arrays_in_bounds: bool = False) -> Analysis:
    """``symbolic_cache=False`` turns off the cache analysis of accesses
    through pointers of unknown value (each then costs a miss and may evict
    anything), to show what that precision gains.  ``infeasible_paths``
    refines each entry's ILP with infeasible paths and flag facts
    (``infeasible.py``); ``arrays_in_bounds`` is its optional assumption."""
    t0 = time.perf_counter()
    ann = annotations or Annotations()
    say = progress or (lambda msg, frac: None)
    say("loading ELF", 0.0)
    image = ElfImage(elf)
    specs = [EntrySpec.parse(e) for e in entries]
    if irq_entry is not None:
        irq_spec = EntrySpec.parse(irq_entry)
        if all(s.text != irq_spec.text for s in specs):
            specs.append(irq_spec)
    if not specs:
        raise WcetError("no entry given (use --entry SYMBOL)")
    model = None
    if model_name != SIMPLE_MODEL:
        from kairos.wcet import model as modelmod
        model = modelmod.get_preset(model_name)
    say("building control-flow graphs", 0.05)
    symbols = list(dict.fromkeys(s.symbol for s in specs))
    program = build_program(image, symbols, noreturn=ann.noreturn)
    bounds = BoundAnalysis(program, ann)
    stop_addrs = [image.symbol(s).addr for s in stop_at]
    sp_val: int | None
    if sp0 is None:
        sp_val = None
    elif isinstance(sp0, int):
        sp_val = sp0
    else:
        try:
            sp_val = int(sp0, 0)
        except ValueError:
            sp_val = image.symbol(sp0).addr
    # per entry: the program view restricted to its @VIA paths
    views: dict[str, Program] = {}
    for sp in specs:
        if sp.text not in views:
            views[sp.text] = program.restricted(sp.symbol, [image.symbol(v).addr for v in sp.via]) \
                if sp.via else program
    flattened: list[str] = []
    if context_budget:
        supported = True
        if model is not None:
            from kairos.wcet import microarch
            supported = getattr(microarch, "SUPPORTS_CONTEXT_POLICY", False)
        for sp in specs:
            view = views[sp.text]
            if supported:
                flattened += [n for n in view.limit_contexts(sp.symbol, context_budget) if n not in flattened]
            else:
                n = sum(view.context_counts(sp.symbol).values())
                if n > context_budget:
                    raise WcetError(
                        f"{sp.text} has {n} call contexts, more than the budget of {context_budget}; the "
                        f"{model_name} cache analysis cannot share contexts yet (microarch lacks "
                        f"SUPPORTS_CONTEXT_POLICY): use --model simple, or --context-budget 0 to "
                        f"inline fully (slow)")
    say("value analysis", 0.1)
    values = ValueInfo(program, sp0=sp_val, bounds=bounds)
    forests = ipet._Forests()
    results: list[EntryResult] = []
    costs_cache: dict[str, object] = {}
    facts_cache: dict[int, object] = {}
    n = len(specs)
    for i, spec in enumerate(specs):
        te = time.perf_counter()
        base = 0.15 + 0.85 * i / n
        costs = None
        view = views[spec.text]
        if model is not None:
            costs = costs_cache.get((id(view), spec.symbol))
            if costs is None:
                say(f"{spec.text}: cache and pipeline analysis", base)
                from kairos.wcet import microarch
                costs = microarch.analyse(view, spec.symbol, model, values, symbolic=symbolic_cache)
                costs_cache[(id(view), spec.symbol)] = costs
            cost_fn = lambda ctx, blk, c=costs: c.cost(ctx, blk.start)  # noqa: E731
            pen_fn = lambda ctx, lp, c=costs: c.first_miss_penalty(ctx, lp.header)  # noqa: E731
        else:
            cost_fn, pen_fn = ipet.simple_cost, None
        say(f"{spec.text}: path analysis", base + 0.6 / n)
        extra = [_via_constraint(program, spec.via, spec.avoid)] if spec.via or spec.avoid else []

        def solve(more: list, view=view, spec=spec, cost_fn=cost_fn, pen_fn=pen_fn, extra=extra):
            return ipet.solve(view, spec.symbol, bounds, cost_fn, pen_fn, stop_at=stop_addrs,
                              extra_constraints=extra + more, forests=forests)
        refinement = None
        try:
            if infeasible_paths:
                from kairos.wcet import infeasible
                say(f"{spec.text}: infeasible paths", base + 0.7 / n)
                facts = facts_cache.get(id(view))
                if facts is None:
                    facts = facts_cache[id(view)] = infeasible.ProgramFacts(view, arrays_in_bounds)
                res, refinement = infeasible.refine(
                    view, spec.symbol, solve, forests, facts=facts,
                    budget=infeasible.DEFAULT_BUDGET if infeasible_budget is None else infeasible_budget)
            else:
                res = solve([])
        except WcetError as exc:
            if spec.text != spec.symbol and str(exc).startswith("no feasible path"):
                raise WcetError(f"{spec.text}: {exc}") from None
            raise
        results.append(EntryResult(spec, res, time.perf_counter() - te, costs, refinement))
    unused = bounds.unused_annotations()
    irq = None
    if irq_entry is not None:
        irq_res = next(r for r in results if r.spec.text == EntrySpec.parse(irq_entry).text)
        others = [r for r in results if r is not irq_res] or [irq_res]
        worst = max(others, key=lambda r: r.bound)
        irq = {"interrupt_entry": irq_res.name, "interrupt_entry_cycles": irq_res.bound,
               "longest_masked_path": worst.name, "longest_masked_cycles": worst.bound,
               "bound_cycles": worst.bound + irq_res.bound}
    say("done", 1.0)
    an = Analysis(image, program, model_name, results, ann, time.perf_counter() - t0, irq)
    if flattened:
        an.warnings.append("shared call contexts (context-insensitive) for: " + ", ".join(flattened))
    if model is not None and symbolic_cache and not values.symbolic_bases:
        an.warnings.append("no DWARF variable information: pointers of unknown value may address devices, "
                           "so their accesses are not cached (as --no-symbolic-cache)")
    an.warnings.extend(unused)
    return an


def context_names(program: Program, ctx: Context, root: str) -> list[str]:
    names = [root]
    if ctx and ctx[0] < 0:
        names = ["...", program.functions[-ctx[0]].name]
        ctx = ctx[1:]
    for site in ctx:
        for f in program.functions.values():
            for bs, callee in f.calls:
                if f.blocks[bs].last.addr == site:
                    names.append(program.functions[callee].name)
                    break
            else:
                continue
            break
    return names


@dataclass
class LoopRow:
    function: str
    header: int
    source: str
    contexts: int
    bounds: list[int]          # distinct bounds over contexts (empty: unbounded somewhere)
    unbounded: int             # contexts without a bound
    origin: str
    kind: str = ""             # automatic, symbolic + parameter, preemption, trusted, halt, unbounded
    anchor: str = ""           # `loop = N` of the function (source order), for annotations


def list_loops(elf: str, entries: list[str], annotations: Annotations | None = None,
               context_budget: int | None = DEFAULT_CONTEXT_BUDGET) -> list[LoopRow]:
    """Every loop reachable from the entries with its bounds (per context),
    without stopping at the first unbounded one: for writing annotations."""
    from kairos.wcet.loops import find_loops
    ann = annotations or Annotations()
    image = ElfImage(elf)
    specs = [EntrySpec.parse(e) for e in entries]
    symbols = list(dict.fromkeys(s.symbol for s in specs))
    program = build_program(image, symbols, noreturn=ann.noreturn)
    if context_budget:
        for s in symbols:
            program.limit_contexts(s, context_budget)
    from kairos.wcet.anchors import loop_order
    bounds = BoundAnalysis(program, ann)
    rows: dict[tuple[int, int], LoopRow] = {}
    rank = {"unbounded": 0, "trusted": 1, "preemption": 2, "symbolic + parameter": 3, "automatic": 4}
    for s in symbols:
        forests: dict[int, object] = {}
        for ctx, f in program.contexts(s):
            fo = forests.get(f.entry)
            if fo is None:
                fo = forests[f.entry] = find_loops(f)
            order = None
            for lp in fo.loops:
                key = (f.entry, lp.header)
                row = rows.get(key)
                if row is None:
                    order = order or loop_order(image, fo)
                    row = rows[key] = LoopRow(f.name, lp.header, image.source_of(lp.header), 0, [], 0, "",
                                              anchor=f"loop = {order.index(lp) + 1}")
                row.contexts += 1
                if lp.is_infinite:
                    row.origin, row.kind = "halt loop (path ends)", "halt"
                    continue
                try:
                    b = bounds.bound(fo, lp, context_names(program, ctx, program.function(s).name), ctx)
                except WcetError as exc:
                    if "refuted" in str(exc) or "stale anchor" in str(exc):
                        raise
                    row.unbounded += 1
                    row.kind = "unbounded"
                    continue
                if b.max not in row.bounds:
                    row.bounds.append(b.max)
                # a loop counts by its weakest context
                if not row.kind or rank.get(b.kind, 0) < rank.get(row.kind, 5):
                    row.origin, row.kind = b.source, b.kind
    return sorted(rows.values(), key=lambda r: (r.function, r.header))


def loop_coverage(rows: list[LoopRow]) -> tuple[int, int]:
    """(loops bounded by the analyser: automatic, symbolic + parameter or
    preemption; loops that need a bound, i.e. all but halt loops)."""
    from kairos.wcet.bounds import PROVEN_KINDS
    need = [r for r in rows if r.kind != "halt"]
    return sum(1 for r in need if r.kind in PROVEN_KINDS and not r.unbounded), len(need)

