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

from kairos.wcet import argfacts, infeasible, ipet, microarch, returnfacts
from kairos.wcet.annotations import Annotations
from kairos.wcet.bounds import BoundAnalysis
from kairos.wcet.cfg import BasicBlock, Context, Function, Program, Term, build_program
from kairos.wcet.elfimage import ElfImage
from kairos.wcet.errors import AnnotationError, InfeasiblePath, WcetError
from kairos.wcet.model import ProcessorModel, get_preset, preset_for
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

    @property
    def view(self) -> tuple:
        """Which program view the entry is analysed on: entries with the
        same symbol and @VIA functions share one."""
        return (self.symbol, tuple(self.via)) if self.via else ()


@dataclass
class EntryResult:
    spec: EntrySpec
    result: ipet.IpetResult
    seconds: float
    costs: microarch.BlockCosts | None = None      # None with the simple model
    refinement: infeasible.Refinement | None = None   # when infeasible paths were removed

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


def via_constraint(program: Program, via: list[str], avoid: list[str] = ()) -> Callable:
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
        arrays_in_bounds: bool = False, smt_loops: bool = True, census: bool = False,
        prune_stops: bool = True, return_facts: bool = True, itim_code: bool = True) -> Analysis:
    """Analyse every entry: parse the specifications, build the program and
    one view per restriction, share call contexts above ``context_budget``,
    run the value analysis, then per entry the block costs and the path.

    ``symbolic_cache=False`` turns off the cache analysis of accesses
    through pointers of unknown value (each then costs a miss and may evict
    anything), to show what that precision gains.  ``infeasible_paths``
    refines each entry's ILP with infeasible paths and flag facts
    (``infeasible.py``); ``arrays_in_bounds`` is its optional assumption.
    ``smt_loops=False`` bounds loops without the solver (annotations unchecked).
    ``census`` records why each data access misses (``microarch.MissRecord``).
    ``prune_stops`` analyses the ``stop_at`` functions as one path-ending
    block each, without their callees (``_without_stop_bodies``).
    ``return_facts`` ties each tested returned value to the returns that can
    give it (``returnfacts``).  ``itim_code=False``: the program runs no code
    from the model's ITIM (``model.preset_for``)."""
    t0 = time.perf_counter()
    ann = annotations or Annotations()
    say = progress or (lambda msg, frac: None)
    say("loading ELF", 0.0)
    image = ElfImage(elf)
    specs = _entry_specs(entries, irq_entry)
    model = None if model_name == SIMPLE_MODEL else preset_for(model_name, image, itim_code)
    say("building control-flow graphs", 0.05)
    program = build_program(image, list(dict.fromkeys(s.symbol for s in specs)), noreturn=ann.noreturn,
                            recursion=ann.recursion, calls=ann.calls)
    stop_addrs = [image.symbol(s).addr for s in stop_at]
    if prune_stops:
        program = _without_stop_bodies(program, stop_addrs)
    bounds = BoundAnalysis(program, ann)
    bounds.smt = smt_loops
    views: dict[tuple, Program] = {}
    for sp in specs:
        if sp.view not in views:
            views[sp.view] = _view(program, image, sp)
    flattened = _share_contexts(views, specs, context_budget)
    say("value analysis", 0.1)
    values = ValueInfo(program, sp0=_stack_pointer(image, sp0), bounds=bounds)
    objects, object_notes = microarch.object_facts(image, ann)
    entry = _EntryAnalysis(program, bounds, values, model, stop_addrs,
                           symbolic_cache, infeasible_paths, infeasible_budget, arrays_in_bounds, say,
                           objects)
    entry.census = census
    entry.return_facts = return_facts
    results = [entry.run(sp, views[sp.view], 0.15 + 0.85 * i / len(specs), len(specs))
               for i, sp in enumerate(specs)]
    say("done", 1.0)
    an = Analysis(image, program, model_name, results, ann, time.perf_counter() - t0,
                  _interrupt_response(results, irq_entry))
    if flattened:
        an.warnings.append("shared call contexts (context-insensitive) for: " + ", ".join(flattened))
    if model is not None and symbolic_cache and not values.symbolic_bases:
        an.warnings.append("no DWARF variable information: pointers of unknown value may address devices, "
                           "so their accesses are not cached (as --no-symbolic-cache)")
    an.warnings.extend(bounds.unused_annotations())
    an.warnings.extend(f"{a.origin}: annotation matches no analysed {kind} ({a.function or hex(a.address or 0)})"
                       for kind, anns in (("recursion", ann.recursion), ("indirect call", ann.calls))
                       for a in anns if not a.used)
    if model is not None and symbolic_cache:
        an.warnings.extend(object_notes)
    return an


def _entry_specs(entries: list[str], irq_entry: str | None) -> list[EntrySpec]:
    """The entries to analyse; the interrupt entry is one of them."""
    specs = [EntrySpec.parse(e) for e in entries]
    if irq_entry is not None:
        irq_spec = EntrySpec.parse(irq_entry)
        if all(s.text != irq_spec.text for s in specs):
            specs.append(irq_spec)
    if not specs:
        raise WcetError("no entry given (use --entry SYMBOL)")
    return specs


def _stack_pointer(image: ElfImage, sp0: str | int | None) -> int | None:
    """``--sp``: a number or a symbol's address."""
    if sp0 is None or isinstance(sp0, int):
        return sp0
    try:
        return int(sp0, 0)
    except ValueError:
        return image.symbol(sp0).addr


def _without_stop_bodies(program: Program, stops: list[int]) -> Program:
    """The program in which each ``--stop-at`` function is one block that
    ends the path, and the functions called only below them are gone.

    A call of a stop function ends every path at the call block (``ipet``),
    so nothing the function does reaches an analysed path: its body and its
    callees only cost the analyses that do not know the stop (value
    analysis, loop bounds, the cache analysis, the infeasible-path facts).
    What they would have contributed is all sound to drop: a loop around a
    stop call leaves it only on paths that did not make the call, so the
    lines the callee touches, the globals it writes or lets escape, and its
    loops' bounds are on no path.  On the kernel, ``kernel_panic``'s
    ``kprintf`` and ``put_number`` loops (trusted annotations whose checks
    ran the solver to the end of their budget) are no longer bounded."""
    stops = {a for a in stops if a in program.functions and a not in program.entries.values()}
    if not stops:
        return program
    keep: set[int] = set()
    work = list(program.entries.values())
    while work:
        fe = work.pop()
        if fe in keep or fe not in program.functions:
            continue
        keep.add(fe)
        if fe not in stops:
            work.extend(c for _bs, c in program.functions[fe].calls)
    view = Program(program.image)
    for fe in sorted(keep):
        f = program.functions[fe]
        if fe in stops:
            b = f.blocks[f.entry]
            stub = Function(f.name, f.entry, returns=False)
            stub.blocks[f.entry] = BasicBlock(b.start, b.end, b.instrs, b.func, Term.HALT)
            f = stub
        view.functions[fe] = f
    view.entries = dict(program.entries)
    view.flatten = set(program.flatten) & keep
    view.recursion, view.recursive_scc = program.recursion, program.recursive_scc
    view.callgraph = program.callgraph.subgraph(keep).copy()
    # a stop called only below another stop is gone with that one's body
    for fe in stops & keep:
        view.callgraph.remove_edges_from(list(view.callgraph.out_edges(fe)))
    view.reindex()
    return view


def _view(program: Program, image: ElfImage, spec: EntrySpec) -> Program:
    """The program restricted to the entry's @VIA paths."""
    if not spec.via:
        return program
    return program.restricted(spec.symbol, [image.symbol(v).addr for v in spec.via])


def _share_contexts(views: dict[tuple, Program], specs: list[EntrySpec], budget: int | None) -> list[str]:
    """Above ``budget`` call contexts per entry, the functions whose call
    strings multiply most get one shared context (``Program.limit_contexts``);
    the names of those functions."""
    flattened: list[str] = []
    if budget:
        for sp in specs:
            flattened += [n for n in views[sp.view].limit_contexts(sp.symbol, budget) if n not in flattened]
    return flattened


def _interrupt_response(results: list[EntryResult], irq_entry: str | None) -> dict | None:
    """The longest path with interrupts masked (the longest other entry)
    plus the interrupt entry."""
    if irq_entry is None:
        return None
    irq_res = next(r for r in results if r.spec.text == EntrySpec.parse(irq_entry).text)
    others = [r for r in results if r is not irq_res] or [irq_res]
    worst = max(others, key=lambda r: r.bound)
    return {"interrupt_entry": irq_res.name, "interrupt_entry_cycles": irq_res.bound,
            "longest_masked_path": worst.name, "longest_masked_cycles": worst.bound,
            "bound_cycles": worst.bound + irq_res.bound}


class _EntryAnalysis:
    """Per entry: block costs (cached per view and symbol), then the path
    (IPET), refined by infeasible paths when asked."""

    def __init__(self, program: Program, bounds: BoundAnalysis, values: ValueInfo, model: ProcessorModel | None,
                 stop_addrs: list[int], symbolic_cache: bool, infeasible_paths: bool,
                 infeasible_budget: float | None, arrays_in_bounds: bool,
                 say: Callable[[str, float], None], objects: dict[int, dict[int, int]] | None = None) -> None:
        self.program, self.bounds, self.values, self.model = program, bounds, values, model
        self.stop_addrs = stop_addrs
        self.symbolic_cache = symbolic_cache
        self.infeasible_paths, self.infeasible_budget = infeasible_paths, infeasible_budget
        self.arrays_in_bounds = arrays_in_bounds
        self.say = say
        self.objects = objects
        self.graphs = ipet.GraphCache()
        self._costs: dict[tuple[Program, str], microarch.BlockCosts] = {}
        self._facts: dict[Program, infeasible.ProgramFacts] = {}
        self.census = False
        self.return_facts = True

    def costs(self, view: Program, spec: EntrySpec, progress: float) -> microarch.BlockCosts:
        key = (view, spec.symbol)
        if key not in self._costs:
            self.say(f"{spec.text}: cache and pipeline analysis", progress)
            self._costs[key] = microarch.analyse(view, spec.symbol, self.model, self.values,
                                                 symbolic=self.symbolic_cache, objects=self.objects,
                                                 census=self.census)
        return self._costs[key]

    def run(self, spec: EntrySpec, view: Program, base: float, n: int) -> EntryResult:
        te = time.perf_counter()
        costs = None
        if self.model is not None:
            costs = self.costs(view, spec, base)
            cost_fn = lambda ctx, blk, c=costs: c.cost(ctx, blk.start)  # noqa: E731
            pen_fn = lambda ctx, lp, c=costs: c.first_miss_penalty(ctx, lp.header)  # noqa: E731
        else:
            cost_fn, pen_fn = ipet.simple_cost, None
        self.say(f"{spec.text}: path analysis", base + 0.6 / n)
        extra = [via_constraint(self.program, spec.via, spec.avoid)] if spec.via or spec.avoid else []
        if self.return_facts:
            extra.append(returnfacts.constraints(view, self.values))
            extra.append(argfacts.constraints(view))

        def solve(more: list) -> ipet.IpetResult:
            return ipet.solve(view, spec.symbol, self.bounds, cost_fn, pen_fn, stop_at=self.stop_addrs,
                              extra_constraints=extra + more, forests=self.graphs)
        refinement = None
        try:
            # infeasible.py's call summaries assume an acyclic call graph
            if self.infeasible_paths and not view.recursive_scc:
                self.say(f"{spec.text}: infeasible paths", base + 0.7 / n)
                facts = self._facts.get(view)
                if facts is None:
                    facts = self._facts[view] = infeasible.ProgramFacts(view, self.arrays_in_bounds)
                budget = infeasible.DEFAULT_BUDGET if self.infeasible_budget is None else self.infeasible_budget
                res, refinement = infeasible.refine(view, spec.symbol, solve, self.graphs, facts=facts,
                                                    budget=budget)
            else:
                res = solve([])
        except InfeasiblePath as exc:
            if spec.text != spec.symbol:
                raise InfeasiblePath(f"{spec.text}: {exc}") from None
            raise
        return EntryResult(spec, res, time.perf_counter() - te, costs, refinement)


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
    program = build_program(image, symbols, noreturn=ann.noreturn, recursion=ann.recursion, calls=ann.calls)
    if context_budget:
        for s in symbols:
            program.limit_contexts(s, context_budget)
    from kairos.wcet.anchors import loop_order
    bounds = BoundAnalysis(program, ann)
    rows: dict[tuple[int, int], LoopRow] = {}
    rank = {"unbounded": 0, "trusted": 1, "pragma": 1, "preemption": 2, "symbolic + parameter": 3, "automatic": 4}
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
                except AnnotationError:
                    raise
                except WcetError:
                    row.unbounded += 1
                    row.kind = "unbounded"
                    why = bounds.pragma_reason(fo, lp)
                    if why:
                        row.origin = f"no loopbound pragma: {why}"
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

