"""Non-preemptible regions of a kernel binary and its worst-case interrupt
response (Blackham, PhD thesis 2013, ch. 5: every preemption point is a start
node, every later point is taken).

The kernel runs with interrupts masked.  An interrupt that arrives while it
runs waits until the kernel reaches one of three *ends*:

* a call of a preemption-point function (``preemption = [...]`` in the
  annotation files), which finds it pending and unwinds;
* a ``wfi`` instruction, which returns at once when it is pending;
* ``sret``, after which it is taken in user mode.

A *region* runs from a *start* to the first end on its path.  The starts are
the kernel entry (one region per handler the trap vector jumps to), the
return site of every preemption-point call in every call context (the poll
found nothing pending) and the instruction after every ``wfi`` that is not a
halt loop (the kernel handles what woke it with interrupts masked).  Both are
found in the binary: by symbol and by instruction, never by address.

The response to an interrupt that arrives in a region is at most the
region's length plus the *handling path* from its end to the return to user
mode of the thread that handles it:

* from a taken poll: the poll reads the pending interrupt and returns true,
  the operation unwinds, the interrupt is handled and the kernel exits (the
  continuation is analysed from the entry of the poll function in the
  context of that call, with polls as ordinary calls: the interrupt is
  pending, so each later poll is taken, Blackham's assumption);  where the
  return site tests the returned value (``beqz``/``bnez a0``), the handling
  path takes the "pending" side and a region starting there the other side
  (``poll_branches``);
* from ``wfi``: the code after it, up to ``sret``;
* from ``sret``: the interrupt entry (trap vector to ``sret``).

Each region is solved with the handling path of its end charged on the end
(``ipet`` sink costs), so the worst response is a maximum over regions of
(region + continuation of that region's end): the handling after a taken poll
is not counted twice (the whole-entry bound of ``kairos wcet`` already
contains it and then adds the interrupt entry).  A path into a function that
never returns (``kernel_panic``) or a halt loop ends the system, not a
response, and is charged nothing after it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from kairos.latency import unwind
from kairos.wcet import argfacts, driver, infeasible, ipet, returnfacts
from kairos.wcet.annotations import Annotations
from kairos.wcet.bounds import BoundAnalysis
from kairos.wcet.cfg import NORETURN_NAMES, Context, Program, Term, build_program
from kairos.wcet.elfimage import ElfImage
from kairos.wcet.errors import WcetError
from kairos.wcet.loops import find_loops
from kairos.wcet.valueanalysis import ValueInfo

DEFAULT_CONTEXT_BUDGET = 4000
INTERRUPT_HANDLER = "handle_interrupt"


@dataclass(frozen=True)
class Start:
    """Where a region begins: the kernel entry restricted to one handler,
    or a (context, block) node."""
    kind: str                  # "entry", "poll" or "wfi"
    ctx: Context
    block: int                 # first block of the region
    site: int                  # entry: the handler; poll: the call; wfi: the wfi instruction
    function: str              # function holding ``site`` (entry: the handler)
    target: int = 0            # poll: the preemption-point function called


@dataclass
class Region:
    start: Start
    name: str
    chain: list[str]
    source: str
    length: int | None         # the region's own bound (cycles; computed for the top regions)
    response: int              # region + the handling path from its end
    end: str                   # how the worst response path ends
    handling: int              # the handling path charged at that end
    length_path: list[ipet.PathStep] = field(default_factory=list)
    response_path: list[ipet.PathStep] = field(default_factory=list)


@dataclass
class LatencyResult:
    elf: str
    model: str
    entry: str
    regions: list[Region]
    interrupt_entry: int       # trap vector to sret through the interrupt handler
    interrupt_entry_path: list[ipet.PathStep]
    handling: dict[str, int]   # worst handling path per kind of end
    parameters: dict[str, dict]
    polls: list[str]
    starts: int                # number of region starts (all regions)
    seconds: float
    warnings: list[str] = field(default_factory=list)
    #: per preemption-point call site: (function, source, worst handling path over its contexts, contexts)
    poll_handling: list[tuple[str, str, int, int]] = field(default_factory=list)
    #: ``census=True``: the miss census (``wcet.report.census_of``) of the
    #: worst region's own path ("region") and of the handling path charged
    #: at its end when that is the interrupt entry ("interrupt entry")
    misses: dict[str, dict] | None = None
    #: the infeasible-path refinement of each region it was run on (the
    #: worst ones, until the worst is refined): region name -> result
    refinements: dict[str, infeasible.Refinement] = field(default_factory=dict)
    #: functions excluded from every path (``analyse(avoid=...)``)
    avoided: list[str] = field(default_factory=list)

    @property
    def bound(self) -> int:
        return max(r.response for r in self.regions)

    @property
    def worst(self) -> Region:
        return max(self.regions, key=lambda r: r.response)


def _no_preemption_rule(ann: Annotations) -> Annotations:
    """The same facts without the preemption rule: loops that poll keep
    only their own bounds (for the value analysis, which must cover a
    region resumed in any iteration)."""
    out = Annotations(loops=ann.loops, noreturn=ann.noreturn, constants=ann.constants, paths=ann.paths,
                      parameters=ann.parameters)
    return out


def find_starts(program: Program, entry: str, polls: set[int]) -> tuple[list[Start], set[int], set[int]]:
    """Region starts below ``entry`` and the blocks ending in a ``wfi`` that
    end regions (all of them) and those in halt loops (which start none)."""
    image = program.image
    root = program.function(entry)
    starts: list[Start] = []
    for blk in root.blocks.values():
        if blk.kind in (Term.CALL, Term.TAILCALL) and blk.call_target is not None:
            starts.append(Start("entry", (), root.entry, blk.call_target, program.name_of(blk.call_target)))
    if not starts:
        starts.append(Start("entry", (), root.entry, root.entry, root.name))
    wfi_blocks: set[int] = set()
    halting: set[int] = set()
    forests: dict[int, object] = {}
    for ctx, f in program.contexts(entry):
        for bs, blk in f.blocks.items():
            if blk.kind is Term.TAILCALL and blk.call_target in polls:
                raise WcetError(f"{f.name} tail-calls the preemption point {program.name_of(blk.call_target)} "
                                f"at {blk.last.addr:#x} ({image.source_of(blk.last.addr)}): the region after "
                                f"it would start in the caller; call it and test the result instead")
            if blk.kind is Term.CALL and blk.call_target in polls and blk.succs:
                starts.append(Start("poll", ctx, blk.succs[0], blk.last.addr, f.name, blk.call_target))
            if blk.kind is Term.WFI:
                wfi_blocks.add(bs)
                fo = forests.get(f.entry)
                if fo is None:
                    fo = forests[f.entry] = find_loops(f)
                if any(lp.is_infinite and bs in lp.blocks for lp in fo.loops) or not blk.succs:
                    halting.add(bs)
                else:
                    starts.append(Start("wfi", ctx, blk.succs[0], blk.last.addr, f.name))
    return starts, wfi_blocks, halting


def reachable_contexts(program: Program, entry: str, avoid: set[int]) -> set[Context]:
    """The call contexts below ``entry`` that some call string reaches
    without entering a function of ``avoid`` (entry addresses).  A shared
    context is kept when any of its callers is: the analysis cannot tell
    which caller a region in it was entered from."""
    root = program.function(entry)
    seen: set[Context] = set()
    stack: list[tuple[Context, int]] = [((), root.entry)]
    while stack:
        ctx, fe = stack.pop()
        if ctx in seen:
            continue
        seen.add(ctx)
        f = program.functions[fe]
        for site_block, callee in f.calls:
            if callee not in avoid:
                stack.append((program.callee_context(ctx, f.blocks[site_block].last.addr, callee), callee))
    return seen


A0 = 10


def poll_branches(program: Program, polls: set[int]) -> dict[int, tuple[int, int]]:
    """For each block that a preemption-point call returns to and that ends
    by testing the returned value against zero (``beqz``/``bnez a0`` with
    nothing writing ``a0`` before it): block start -> (successor when an
    interrupt is pending, successor when none is).  A region starting there
    takes the second (the poll found nothing); a handling path the first."""
    out: dict[int, tuple[int, int]] = {}
    for f in program.functions.values():
        for blk in f.blocks.values():
            if blk.kind is not Term.CALL or blk.call_target not in polls or not blk.succs:
                continue
            ret = f.blocks[blk.succs[0]]
            br = ret.last
            if ret.kind is not Term.BRANCH or br.mnemonic not in ("beq", "bne") or len(ret.succs) != 2 \
                    or {br.rs1, br.rs2} != {A0, 0} or any(i.rd == A0 for i in ret.instrs[:-1]):
                continue
            target = (br.addr + br.imm) & ((1 << 64) - 1)
            other = next(s for s in ret.succs if s != target) if target in ret.succs else None
            if other is None:
                continue
            # beq a0, zero: the branch is taken when nothing is pending
            out[ret.start] = (other, target) if br.mnemonic == "beq" else (target, other)
    return out


def _forbid(branches: dict[int, tuple[int, int]], which: int) -> Callable:
    """ILP constraint: no flow along successor ``which`` (0: pending, 1: none)
    of the poll-return branches, in every context."""
    def fn(g: ipet.InlinedGraph) -> list[ipet.Constraint]:
        terms = []
        for e, (a, b) in enumerate(g.edges):
            if a < 0 or b < 0:
                continue
            na, nb = g.nodes[a], g.nodes[b]
            if na.block is not None and nb.block is not None and na.ctx == nb.ctx \
                    and na.block.start in branches and nb.block.start == branches[na.block.start][which]:
                terms.append((e, 1.0))
        return [ipet.Constraint(terms, 0.0, equal=True)] if terms else []
    return fn


def analyse(elf: str, annotations: Annotations, model_name: str = "u54", entry: str = "trap_entry",
            context_budget: int | None = DEFAULT_CONTEXT_BUDGET, table: bool = True, top_lengths: int = 10,
            all_lengths: bool = False, progress: Callable[[str, float], None] | None = None,
            unwind_facts: bool = True, per_poll_handling: bool = True, census: bool = False,
            return_facts: bool = True, infeasible_paths: bool = True,
            infeasible_budget: float | None = None, avoid: Sequence[str] = ()) -> LatencyResult:
    """Bound every region below ``entry`` (``table``: one ILP solve per
    region; otherwise one solve over all starts gives the bound and the
    worst region only), and the own length of the worst context of the
    ``top_lengths`` sites with the longest responses (``all_lengths``: of
    every region).  ``unwind_facts``: tie a taken poll's result to the
    callers' tests on the handling path (``unwind``).  ``per_poll_handling``:
    a region ending at a poll is charged the handling path from that poll
    (in that context), not the worst over every poll.  ``census``: also
    the data-cache misses of the worst region's path by reason
    (``LatencyResult.misses``; the bounds are the same).  ``return_facts``:
    tie each tested returned value to the returns that can give it
    (``wcet.returnfacts``), in the handling paths and the regions.
    ``infeasible_paths``: refine the worst region's solution as ``kairos
    wcet`` refines an entry's (``wcet.infeasible.refine``: path conflicts
    and flag facts found by SMT on its worst path), then the next worst
    while the refined one drops below it, so the bound is that of a refined
    region; ``infeasible_budget`` is the effort per region (nominal seconds,
    ``infeasible.DEFAULT_BUDGET`` if None).  ``avoid``: functions the
    analysed system never calls (its threads hold no capability that
    reaches them): no path calls them, and no region starts inside them
    (``reachable_contexts``)."""
    t0 = time.perf_counter()
    say = progress or (lambda msg, frac: None)
    say("loading ELF", 0.0)
    image = ElfImage(elf)
    program = build_program(image, [entry], noreturn=annotations.noreturn)
    warnings: list[str] = []
    polls = {image.symbol(n).addr for n in sorted(annotations.preemption) if image.has_symbol(n)}
    if context_budget:
        # a poll's call contexts are region starts: never shared
        shared = program.limit_contexts(entry, context_budget, keep=polls)
        if shared:
            warnings.append("shared call contexts (context-insensitive) for: " + ", ".join(shared))
    # a call of a function that never returns by name (kernel_panic) ends the system, not a response
    stops = {f.entry for f in program.functions.values()
             if f.name in NORETURN_NAMES | annotations.noreturn and f.entry != program.function(entry).entry}
    if not polls:
        warnings.append("no preemption-point function found (annotation key 'preemption'): the only "
                        "region starts are the kernel entry and wfi")
    starts, wfi_blocks, halting = find_starts(program, entry, polls)
    avoided = list(dict.fromkeys(avoid))
    for n in avoided:
        if not image.has_symbol(n) or image.symbol(n).addr not in program.functions:
            raise WcetError(f"{elf}: avoided function {n!r} is not a function of the kernel below {entry}")
    if avoided:
        live = reachable_contexts(program, entry, {image.symbol(n).addr for n in avoided})
        starts = [s for s in starts if s.kind == "entry" or s.ctx in live]
    avoid_facts = [driver.via_constraint(program, [], avoided)] if avoided else []
    branches = poll_branches(program, polls)
    say("value analysis", 0.05)
    values = ValueInfo(program, sp0=None, bounds=BoundAnalysis(program, _no_preemption_rule(annotations)))
    cost_fn, pen_fn = ipet.simple_cost, None
    if model_name != "simple":
        from kairos.wcet import microarch
        from kairos.wcet import model as modelmod
        say("cache and pipeline analysis", 0.1)
        objects, notes = microarch.object_facts(image, annotations)
        warnings.extend(notes)
        costs = microarch.analyse(program, entry, modelmod.preset_for(model_name, image), values, objects=objects,
                                  census=census)
        cost_fn = lambda ctx, blk, c=costs: c.cost(ctx, blk.start)  # noqa: E731
        pen_fn = lambda ctx, lp, c=costs: c.first_miss_penalty(ctx, lp.header)  # noqa: E731
    resumed = [s for s in starts if s.kind != "entry"]
    entries = [s for s in starts if s.kind == "entry"]
    forests = ipet.GraphCache()

    # -- handling paths: the interrupt entry, and from the resumed starts of
    # each kind together (the worst continuation of any poll, of any wfi)
    say("handling paths", 0.5)
    handling_bounds = BoundAnalysis(program, annotations, preemption_max=1)
    irq_handler = next((s for s in entries if s.function == INTERRUPT_HANDLER), None)
    if irq_handler is None:
        raise WcetError(f"{entry} does not jump to {INTERRUPT_HANDLER}: no interrupt entry to deliver through")
    kinds = [k for k in ("poll", "wfi") if any(s.kind == k for s in resumed)]
    per_poll = [i for i, s in enumerate(resumed) if s.kind == "poll"] if per_poll_handling else []

    def handling_variants(g: ipet.InlinedGraph) -> list[dict[int, float]]:
        out = [{**{e: 0.0 for e in g.start_edges},
                **{e: 0.0 for e in _handler_edges(g, program, entry, entries, keep=irq_handler.site)}}]
        for k in kinds:
            out.append({0: 0.0, **{e: 0.0 for s, e in zip(resumed, g.start_edges) if s.kind != k}})
        # and from each taken poll alone: the handling charged where a region ends at that poll
        for i in per_poll:
            out.append({0: 0.0, **{e: 0.0 for j, e in enumerate(g.start_edges) if j != i}})
        return out

    # a taken poll's continuation starts with the poll itself (the region ends at its call)
    hstarts = [(program.callee_context(s.ctx, s.site, s.target), s.target) if s.kind == "poll"
               else (s.ctx, s.block) for s in resumed]
    returned = [returnfacts.constraints(program, values), argfacts.constraints(program)] if return_facts else []
    handling_facts = [_forbid(branches, 1), *returned, *avoid_facts]
    if unwind_facts:
        say("unwinding facts", 0.45)
        unwinder = unwind.Unwinder(program, polls)
        poll_idx = [i for i, s in enumerate(resumed) if s.kind == "poll"]
        other_idx = [i for i, s in enumerate(resumed) if s.kind != "poll"]
        handling_facts.append(lambda g: unwind.constraints(g, unwinder, poll_idx, other_idx))
    hres = ipet.solve_variants(program, entry, handling_bounds, cost_fn, pen_fn, stops,
                               extra_constraints=handling_facts, forests=forests,
                               starts=hstarts, stop_blocks=wfi_blocks, graph_ready=handling_variants)
    irq_entry = hres[0]
    cont = {k: r.bound for k, r in zip(kinds, hres[1:])}
    poll_cont = {(resumed[i].ctx, resumed[i].site): r.bound for i, r in zip(per_poll, hres[1 + len(kinds):])}
    poll_names = {image.symbol_name_at(p) for p in polls}
    if "poll" in cont and sum(st.function in poll_names and st.block in polls
                              for st in hres[1 + kinds.index("poll")].path) > 1:
        warnings.append("the worst handling path after a taken preemption point passes another preemption "
                        "point; it is assumed taken (the interrupt is still pending; Blackham)")

    # -- regions: with the handling path of its end charged at the end
    say("regions", 0.7)
    region_bounds = BoundAnalysis(program, annotations, preemption_max=2)
    index = {}

    def end_cost(node: ipet.Node) -> int:
        blk = node.block
        if blk is None:
            return 0
        if blk.kind is Term.TRAP_RETURN:
            return irq_entry.bound
        if blk.kind is Term.CALL and blk.call_target in polls:
            # no "poll" entry: every poll lies in an avoided function, whose calls carry no flow
            return poll_cont.get((node.ctx, blk.last.addr), cont.get("poll", 0))
        if blk.start in wfi_blocks and blk.start not in halting:
            return cont["wfi"]
        return 0            # a call of a function that never returns: the system stops

    all_starts = entries + resumed

    def region_variants(g: ipet.InlinedGraph) -> list[dict[int, float]]:
        index["graph"] = g
        if not table:
            return [{}]
        out = []
        for h in entries:
            v = {e: 0.0 for e in g.start_edges}
            v.update({e: 0.0 for e in _handler_edges(g, program, entry, entries, keep=h.site)})
            out.append(v)
        for i in range(len(resumed)):
            out.append({0: 0.0, **{e: 0.0 for j, e in enumerate(g.start_edges) if j != i}})
        return out

    rstarts = [(s.ctx, s.block) for s in resumed]
    stop_calls = stops | polls
    region_facts = [_forbid(branches, 0), *returned, *avoid_facts]
    with_end = ipet.solve_variants(program, entry, region_bounds, cost_fn, pen_fn, stop_calls,
                                   extra_constraints=region_facts, forests=forests,
                                   starts=rstarts, stop_blocks=wfi_blocks, sink_cost=end_cost,
                                   graph_ready=region_variants)
    g = index["graph"]
    variants = region_variants(g)
    refinements: dict[str, infeasible.Refinement] = {}
    src = [e for e, (a, b) in enumerate(g.edges) if a == ipet.SOURCE]

    def start_of(res: ipet.IpetResult) -> Start:
        """The start a one-solve-over-every-start solution took."""
        picked = [s for s, e in zip([None] + resumed, src) if _flow_from(res, g, e)]
        return picked[0] if picked and picked[0] is not None else entries[0]

    if not table:
        pairs = [(start_of(with_end[0]), with_end[0])]
    else:
        pairs = list(zip(all_starts, with_end))
    pairs.sort(key=lambda p: -p[1].bound)
    if infeasible_paths and not program.recursive_scc:
        # Refine the worst region, and again the worst while a refined one
        # falls below an unrefined one: the bound is then that of a region
        # whose worst path the search saw (or gave up on). Each conflict is
        # a stretch of that region's path no execution runs (its literals
        # start from an unknown state at the region's start), so it holds
        # for every start; the flag facts hold per entry, so per region.
        say("infeasible paths", 0.8)
        facts = infeasible.ProgramFacts(program)
        budget = infeasible.DEFAULT_BUDGET if infeasible_budget is None else infeasible_budget
        variant_of = {id(s): v for s, v in zip(all_starts, variants)} if table else {}
        done: set[int] = set()
        while pairs and id(pairs[0][0]) not in done and len(done) < MAX_REFINED_REGIONS:
            s0, _r0 = pairs[0]
            v0 = variant_of.get(id(s0), {}) if table else {}

            def solve(more: list, v0: dict[int, float] = v0) -> ipet.IpetResult:
                return ipet.solve_variants(program, entry, region_bounds, cost_fn, pen_fn, stop_calls,
                                           extra_constraints=[*region_facts, *more], forests=forests,
                                           starts=rstarts, stop_blocks=wfi_blocks, sink_cost=end_cost,
                                           graph_ready=lambda _g: [v0])[0]
            res, ref = infeasible.refine(program, entry, solve, forests, budget=budget, facts=facts)
            s1 = s0 if table else start_of(res)
            done.add(id(s1))
            refinements[_start_name(s1, image, table)] = ref
            pairs[0] = (s1, res)
            pairs.sort(key=lambda p: -p[1].bound)
    # own lengths: of the worst context of each of the first top_lengths sites
    top, sites = [], set()
    for s, r in pairs:
        if all_lengths or (s.kind, s.site) not in sites and len(sites) < top_lengths:
            sites.add((s.kind, s.site))
            top.append((s, r))

    def length_variants(g: ipet.InlinedGraph) -> list[dict[int, float]]:
        out = []
        for s, _r in top:
            if s.kind == "entry":
                v = {e: 0.0 for e in g.start_edges}
                if table:
                    v.update({e: 0.0 for e in _handler_edges(g, program, entry, entries, keep=s.site)})
            else:
                i = resumed.index(s)
                v = {0: 0.0, **{e: 0.0 for j, e in enumerate(g.start_edges) if j != i}}
            out.append(v)
        return out

    say("region lengths", 0.85)
    alone = ipet.solve_variants(program, entry, region_bounds, cost_fn, pen_fn, stop_calls,
                                extra_constraints=region_facts, forests=forests,
                                starts=rstarts, stop_blocks=wfi_blocks, graph_ready=length_variants)
    lengths = {id(s): r for (s, _), r in zip(top, alone)}
    regions: list[Region] = []
    for s, rw in pairs:
        ra = lengths.get(id(s))
        chain = g.chains.get(s.ctx, [entry])
        src = image.source_of(s.site)
        name = _start_name(s, image, table)
        regions.append(Region(s, name, chain, src, ra.bound if ra else None, rw.bound,
                              _describe_end(rw, g, program, polls), rw.end_cycles,
                              ra.path if ra else [], rw.path))
    say("done", 1.0)
    params = {n: {"value": p.value, "default": p.default, "note": p.note}
              for n, p in sorted(annotations.parameters.items())}
    handling = {"interrupt entry (trap vector to sret)": irq_entry.bound}
    for k, v in cont.items():
        handling["after a taken preemption point" if k == "poll" else "after wfi"] = v
    warnings.extend(region_bounds.unused_annotations())
    by_site: dict[int, list[int]] = {}
    for (c, site), v in poll_cont.items():
        by_site.setdefault(site, []).append(v)
    per_site = sorted(((next(s.function for s in resumed if s.site == site), image.source_of(site), max(v), len(v))
                       for site, v in by_site.items()), key=lambda t: -t[2])
    misses = None
    if census and model_name != "simple":
        from kairos.wcet.report import census_of
        worst_res = pairs[0][1]
        misses = {"region": census_of(costs, worst_res, image)}
        if regions[0].end.startswith("sret"):
            misses["interrupt entry"] = census_of(costs, irq_entry, image)
    return LatencyResult(elf, model_name, entry, regions, irq_entry.bound, irq_entry.path, handling, params,
                         sorted(n for n in poll_names if n), len(all_starts), time.perf_counter() - t0, warnings,
                         per_site, misses, refinements, avoided)


#: at most this many regions are refined (each refinement costs up to its
#: effort budget; the worst region of the kernel needs one or two)
MAX_REFINED_REGIONS = 8


def _start_name(s: Start, image: ElfImage, table: bool) -> str:
    if s.kind == "entry":
        return f"kernel entry -> {s.function}" if table else "kernel entry"
    kind = "preemption point" if s.kind == "poll" else "wfi"
    return f"after {kind} in {s.function} ({image.source_of(s.site)})"


def _flow_from(res: ipet.IpetResult, g: ipet.InlinedGraph, edge: int) -> bool:
    """Does the solution's path start with this source edge?"""
    node = g.nodes[g.edges[edge][1]]
    return res.counts.get((node.ctx, node.block.start), 0) > 0 and \
        any(st.block == node.block.start and st.context == g.chains[node.ctx] for st in res.path[:1])


def _handler_edges(g: ipet.InlinedGraph, program: Program, entry: str, entries: list[Start],
                   keep: int) -> list[int]:
    """The edges from the entry function into every handler but ``keep``."""
    root = program.function(entry)
    others = {s.site for s in entries if s.site != keep}
    out = []
    for e, (a, b) in enumerate(g.edges):
        if a >= 0 and b >= 0 and g.nodes[a].ctx == () and g.nodes[a].func is root \
                and g.nodes[b].ctx != () and g.nodes[b].block is not None \
                and g.nodes[b].block.start in others and g.nodes[b].func.entry in others:
            out.append(e)
    return out


def _describe_end(res: ipet.IpetResult, g: ipet.InlinedGraph, program: Program, polls: set[int]) -> str:
    for ctx, bs, _n in res.ends:
        blk = program.block(bs)
        where = f"{g.chains.get(ctx, ['?'])[-1]} ({program.image.source_of(blk.last.addr)})"
        if blk.kind is Term.TRAP_RETURN:
            return f"sret in {where}"
        if blk.kind is Term.CALL and blk.call_target in polls:
            return f"preemption point in {where}"
        if blk.kind is Term.WFI:
            return f"wfi in {where}"
        return f"system stop in {where}"
    return "?"
