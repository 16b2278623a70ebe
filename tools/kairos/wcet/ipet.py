"""Path analysis by implicit path enumeration (IPET), solved with HiGHS.

The program below an entry is *virtually inlined*: one node per (context,
basic block), where the context is the call string (``cfg.Context``).  Edges:

* intra-procedural CFG edges within a context;
* a call block → the callee's entry in context ``ctx + (call site,)``;
* every return point of that callee → the call's return-site block;
* a tail call behaves as a call followed by a return of the caller (a
  zero-cost virtual node stands for "the callee returned here");
* a source edge into the entry block, and an edge to a virtual sink from
  every node without successors (returns of the entry, ``sret``/``mret``,
  ``ebreak``, calls of functions that never return, calls of *stop*
  functions such as a preemption point) and from the header of every loop
  without an exit (a halt loop: the path ends when it is reached).

ILP (all variables are integer edge counts):

* flow conservation: for each node, sum of in-edges = sum of out-edges;
* one execution: the source edge = 1;
* loop bounds, per context and loop, relative to the loop's entry edges:
  ``sum(back edges) <= (max - 1) * sum(entry edges)`` where ``max`` bounds the
  header executions per entry (``bounds.BoundAnalysis``); halt loops get
  ``max = 1``;
* recursion (``[[recursion]]``, ``Program.recursion``): the functions of a
  recursion share one context each, so the calls around the cycle are
  cycles of the graph; per bounded function ``f``, the call edges into
  ``f`` <= ``calls`` * the call edges into the recursion's functions from
  outside them (every cycle passes through a bounded function:
  ``cfg._recursion``);
* objective: maximise ``sum(cost(ctx, block) * count(ctx, block))`` plus, if a
  ``loop_penalty`` is given, ``penalty(ctx, loop) * sum(entry edges)``
  (persistence: cycles paid once per loop entry).

Several start nodes (``starts``, for per-region analysis, kairos.latency):
besides the entry, execution may begin at given (context, block) nodes, e.g.
the return site of a preemption point.  Exactly one source edge carries the
path.  A start inside a loop counts as one entry into it, with at most
``max - 1`` further header executions (the current iteration already ran
one); a start below a shared context may return once to any of its call
sites; first-miss penalties of the loops around a start are charged on its
source edge.  ``stop_blocks`` end the path after the given blocks (e.g. a
block ending in ``wfi``), ``sink_cost`` charges each path end by the node it
leaves from, and ``variants`` solves the same ILP several times with some
edges fixed (``solve_variants``).

Infeasible paths (``infeasible.py``): ``extra_constraints`` is a
list of callables ``f(graph: InlinedGraph) -> list[Constraint]`` whose linear
constraints over edge variables are added to the ILP; see ``Constraint``.
The result keeps the graph and the solution's edge counts for it.

The result (``IpetResult``) has the bound, the execution count of every
(context, block), per-function totals, the loop bounds used, and a readable
worst-case path: the blocks with non-zero count in depth-first order of the
flow, loops shown with their iteration counts.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np

from kairos.wcet.bounds import BoundAnalysis
from kairos.wcet.cfg import BasicBlock, Context, Function, Program, Term
from kairos.wcet.errors import InfeasiblePath, WcetError
from kairos.wcet.isa import InstrClass
from kairos.wcet.loops import Loop, LoopForest, find_loops

CostFn = Callable[[Context, BasicBlock], int]
LoopPenaltyFn = Callable[[Context, Loop], int]

SOURCE = -1
SINK = -2


@dataclass
class Node:
    ctx: Context
    func: Function
    block: BasicBlock | None        # None: virtual (tail-call return point)
    key: tuple

    @property
    def start(self) -> int:
        return self.block.start if self.block is not None else -1


@dataclass
class Constraint:
    """sum(coef * edge_var) <= rhs (or == rhs if ``equal``)."""
    terms: list[tuple[int, float]]
    rhs: float
    equal: bool = False


@dataclass
class LoopInstance:
    ctx: Context
    loop: Loop
    bound: int
    source: str
    entry_edges: list[int]
    back_edges: list[int]
    total: int | None = None     # header executions per entry of the enclosing loop


@dataclass
class InlinedGraph:
    nodes: list[Node] = field(default_factory=list)
    index: dict[tuple, int] = field(default_factory=dict)
    edges: list[tuple[int, int]] = field(default_factory=list)   # (src node, dst node); -1 source, -2 sink
    loops: list[LoopInstance] = field(default_factory=list)
    chains: dict[Context, list[str]] = field(default_factory=dict)
    #: shared callee contexts: (call edge, return edges to that call's site)
    balance: list[tuple[int, list[int]]] = field(default_factory=list)
    #: the callee context of each ``balance`` row
    balance_ctx: list[Context] = field(default_factory=list)
    #: (caller context, call block start) pairs entering each context
    callers: dict[Context, list[tuple[Context, int]]] = field(default_factory=dict)
    #: extra start nodes: their source edges, and per start the indices (into
    #: ``loops``) of the loop instances it lies in and the shared contexts it is below
    start_edges: list[int] = field(default_factory=list)
    start_loops: list[list[int]] = field(default_factory=list)
    start_shared: list[set[Context]] = field(default_factory=list)
    #: [[recursion]] bounds: (call edges into the function, call edges into
    #: its recursion from outside, most activations per such entry)
    recursion: list[tuple[list[int], list[int], int]] = field(default_factory=list)

    def add_node(self, ctx: Context, func: Function, block: BasicBlock | None, key: tuple) -> int:
        i = len(self.nodes)
        self.nodes.append(Node(ctx, func, block, key))
        self.index[key] = i
        return i

    def add_edge(self, a: int, b: int) -> int:
        self.edges.append((a, b))
        return len(self.edges) - 1


@dataclass
class PathStep:
    function: str
    context: list[str]
    block: int
    count: int
    cycles: int            # cost of one execution
    loop_iterations: int | None = None   # set on loop headers: header count per entry

    def as_dict(self) -> dict:
        d = {"function": self.function, "context": self.context, "block": f"{self.block:#x}",
             "count": self.count, "cycles_per_execution": self.cycles,
             "cycles_total": self.cycles * self.count}
        if self.loop_iterations is not None:
            d["loop_header_executions"] = self.loop_iterations
        return d


@dataclass
class IpetResult:
    entry: str
    bound: int
    counts: dict[tuple[Context, int], int]
    costs: dict[tuple[Context, int], int]
    functions: dict[tuple[Context, int], str]
    per_function: dict[str, int]
    path: list[PathStep]
    loops: list[LoopInstance]
    stats: dict[str, float]
    loop_penalties: int = 0
    #: the graph and the edge counts of the solution (for infeasible-path refinement)
    graph: "InlinedGraph | None" = None
    edge_counts: "np.ndarray | None" = None
    #: cycles charged by ``sink_cost`` at the path's end
    end_cycles: int = 0
    #: the nodes the path ends at: (context, block start, count)
    ends: list[tuple[Context, int, int]] = field(default_factory=list)


ExtraConstraintFn = Callable[[InlinedGraph], list[Constraint]]


class GraphCache:
    """What the solves of one analysis share: the loop forest of each
    function, the inlined graph of each (program view, entry, stops,
    starts), and per graph its objective (per cost functions) and its rows
    before the extra constraints: the infeasible-path refinement solves one
    graph again and again with more constraints.  Keys hold the objects
    themselves (identity-hashed, kept alive by the cache), so a key cannot
    come to name another object."""

    def __init__(self) -> None:
        self._forests: dict[Function, LoopForest] = {}
        self._graphs: dict[tuple, InlinedGraph] = {}
        self._objectives: dict[tuple, tuple[InlinedGraph, "_Objective"]] = {}
        self._rows: dict[int, tuple[InlinedGraph, "_Rows"]] = {}

    def objective(self, g: InlinedGraph, cost: CostFn, loop_penalty: LoopPenaltyFn | None,
                  sink_cost: Callable[[Node], int] | None) -> "_Objective":
        """``_objective``, computed once per graph and cost functions (the
        same function objects: their results must not change)."""
        # graphs compare by value (a dataclass): keyed by identity, the
        # graph kept in the entry so that its id cannot be reused
        key = (id(g), cost, loop_penalty, sink_cost)
        got = self._objectives.get(key)
        if got is None:
            got = self._objectives[key] = (g, _objective(g, cost, loop_penalty, sink_cost))
        return got[1]

    def rows(self, g: InlinedGraph, extra_constraints: Iterable[ExtraConstraintFn]) -> "_Rows":
        """``_rows``: the graph's own rows built once, copied, then the extras."""
        got = self._rows.get(id(g))
        if got is None:
            got = self._rows[id(g)] = (g, _rows(g, ()))
        rows = got[1].copy()
        _extra_rows(g, rows, extra_constraints)
        return rows

    def get(self, f: Function) -> LoopForest:
        """The loop forest of ``f``."""
        fo = self._forests.get(f)
        if fo is None:
            fo = self._forests[f] = find_loops(f)
        return fo

    def graph(self, program: Program, entry: str, bounds: BoundAnalysis, stop_at: Iterable[int],
              starts: list[tuple[Context, int]], stop_blocks: Iterable[int]) -> InlinedGraph:
        """The inlined graph (``build_graph``), built once per key."""
        key = (program, bounds, entry, tuple(sorted(set(stop_at))), tuple(starts),
               tuple(sorted(set(stop_blocks))))
        g = self._graphs.get(key)
        if g is None:
            g = self._graphs[key] = build_graph(program, entry, bounds, stop_at, self, starts, stop_blocks)
        return g


def build_graph(program: Program, entry: str, bounds: BoundAnalysis, stop_at: Iterable[int] = (),
                forests: GraphCache | None = None, starts: Iterable[tuple[Context, int]] = (),
                stop_blocks: Iterable[int] = ()) -> InlinedGraph:
    forests = forests or GraphCache()
    stop = set(stop_at)
    stop_blk = set(stop_blocks)
    g = InlinedGraph()
    root = program.function(entry)
    # contexts (explicit stack, so deep call chains do not hit Python's recursion limit)
    work: list[tuple[Context, Function, list[str]]] = [((), root, [root.name])]
    returners: dict[Context, list[int]] = {}
    # (callee ctx, return-target node, caller ctx, call block start)
    pending_returns: list[tuple[Context, int, Context, int]] = []
    order: list[tuple[Context, Function]] = []
    while work:
        ctx, f, chain = work.pop()
        if ctx in g.chains:
            continue
        g.chains[ctx] = chain
        order.append((ctx, f))
        for bs, blk in f.blocks.items():
            g.add_node(ctx, f, blk, (ctx, bs))
        rets: list[int] = []
        for bs, blk in f.blocks.items():
            if blk.kind is Term.RETURN:
                rets.append(g.index[(ctx, bs)])
            if blk.kind in (Term.CALL, Term.TAILCALL) and blk.call_target is not None:
                if blk.call_target in stop:
                    continue
                callee = program.function(blk.call_target)
                site = blk.last.addr
                cctx = program.callee_context(ctx, site, callee.entry)
                if len(cctx) > 64:
                    raise WcetError(f"call chain deeper than 64 at {site:#x}")
                cchain = chain + [callee.name] if not program.is_shared(cctx) or len(cctx) > 1 \
                    else ["...", callee.name]
                work.append((cctx, callee, cchain))
                if blk.kind is Term.TAILCALL:
                    v = g.add_node(ctx, f, None, (ctx, "tailret", bs))
                    rets.append(v)
                    pending_returns.append((cctx, v, ctx, bs))
                elif blk.succs:
                    pending_returns.append((cctx, g.index[(ctx, blk.succs[0])], ctx, bs))
        returners[ctx] = rets
    # edges; cfg_edges maps a CFG edge (ctx, a, b) to the graph edges realising it
    cfg_edges: dict[tuple[Context, int, int], list[int]] = {}
    src_entry = g.index[((), root.entry)]
    g.add_edge(SOURCE, src_entry)
    out_deg = [0] * len(g.nodes)
    call_edge: dict[tuple[Context, int], int] = {}
    for ctx, f in order:
        for bs, blk in f.blocks.items():
            a = g.index[(ctx, bs)]
            if blk.kind in (Term.CALL, Term.TAILCALL) and blk.call_target is not None \
                    and blk.call_target not in stop:
                cctx = program.callee_context(ctx, blk.last.addr, blk.call_target)
                call_edge[(ctx, bs)] = g.add_edge(a, g.index[(cctx, blk.call_target)])
                out_deg[a] += 1
                continue
            if blk.kind is Term.CALL and blk.call_target in stop:
                continue   # path ends at the stop function (edge to sink below)
            if bs in stop_blk:
                continue   # path ends after this block
            for s_ in blk.succs:
                cfg_edges.setdefault((ctx, bs, s_), []).append(g.add_edge(a, g.index[(ctx, s_)]))
                out_deg[a] += 1
    callers: dict[Context, int] = {}
    for cctx, _t, cc, cb in pending_returns:
        callers[cctx] = callers.get(cctx, 0) + 1
        g.callers.setdefault(cctx, []).append((cc, cb))
    for cctx, target, cctx_caller, bs in pending_returns:
        ret_edges = []
        for r in returners.get(cctx, []):
            ret_edges.append(g.add_edge(r, target))
            out_deg[r] += 1
        blk = g.nodes[g.index[(cctx_caller, bs)]].block
        if blk.kind is Term.CALL and blk.succs:
            cfg_edges.setdefault((cctx_caller, bs, blk.succs[0]), []).extend(ret_edges)
        if callers[cctx] > 1:
            # shared callee context: returns to this call site = calls made here
            g.balance.append((call_edge[(cctx_caller, bs)], ret_edges))
            g.balance_ctx.append(cctx)
    for ctx, f in order:
        fo = forests.get(f)
        for lp in fo.loops:
            h = g.index[(ctx, lp.header)]
            entries = [e for p, t in lp.entry_edges for e in cfg_edges.get((ctx, p, t), [])]
            backs = [e for u, t in lp.back_edges for e in cfg_edges.get((ctx, u, t), [])]
            if lp.is_infinite:
                g.add_edge(h, SINK)
                out_deg[h] += 1
                g.loops.append(LoopInstance(ctx, lp, 1, "halt loop (no exit): path ends here", entries, backs))
                continue
            b = bounds.bound(fo, lp, g.chains[ctx], ctx)
            g.loops.append(LoopInstance(ctx, lp, b.max, b.source, entries, backs, b.total))
    for fe, most in program.recursion.items():
        scc = program.recursive_scc[fe]
        into = [e for e in call_edge.values() if g.nodes[g.edges[e][1]].func.entry == fe]
        outer = [e for e in call_edge.values() if g.nodes[g.edges[e][1]].func.entry in scc
                 and g.nodes[g.edges[e][0]].func.entry not in scc]
        if root.entry in scc:
            outer.append(0)            # the source edge (the analysed entry is in the recursion)
        if into:
            g.recursion.append((into, outer, most))
    for i in range(len(g.nodes)):
        if out_deg[i] == 0:
            g.add_edge(i, SINK)
    for ctx, bs in starts:
        _add_start(g, forests, ctx, bs)
    return g


def _add_start(g: InlinedGraph, forests: GraphCache, ctx: Context, block: int) -> None:
    """A source edge into (ctx, block), with the loop instances around it and
    the shared contexts above it: the loops of its function that hold the
    block, then, caller by caller, those holding the call block (every
    caller of a shared context, since the path may return to any)."""
    node = g.index.get((ctx, block))
    if node is None:
        raise WcetError(f"start block {block:#x} is not in the analysed graph (context {ctx})")
    g.start_edges.append(g.add_edge(SOURCE, node))
    by_key = {(li.ctx, li.loop.header): i for i, li in enumerate(g.loops)}
    inside: set[int] = set()
    shared: set[Context] = set()
    seen: set[tuple[Context, int]] = set()
    work = [(ctx, block)]
    while work:
        c, b = work.pop()
        if (c, b) in seen:
            continue
        seen.add((c, b))
        f = g.nodes[g.index[(c, b)]].func
        for lp in forests.get(f).loops:
            if b in lp.blocks and (c, lp.header) in by_key:
                inside.add(by_key[(c, lp.header)])
        if Program.is_shared(c) and len(c) == 1:
            shared.add(c)
        work.extend(g.callers.get(c, []))
    g.start_loops.append(sorted(inside))
    g.start_shared.append(shared)


def solve(program: Program, entry: str, bounds: BoundAnalysis, cost: CostFn,
          loop_penalty: LoopPenaltyFn | None = None, stop_at: Iterable[int] = (),
          extra_constraints: Iterable[ExtraConstraintFn] = (), forests: GraphCache | None = None,
          time_limit: float = 300.0, starts: Iterable[tuple[Context, int]] = (),
          stop_blocks: Iterable[int] = (), sink_cost: Callable[[Node], int] | None = None) -> IpetResult:
    return solve_variants(program, entry, bounds, cost, loop_penalty, stop_at, extra_constraints, forests,
                          time_limit, starts, stop_blocks, sink_cost, [{}])[0]


def solve_variants(program: Program, entry: str, bounds: BoundAnalysis, cost: CostFn,
                   loop_penalty: LoopPenaltyFn | None = None, stop_at: Iterable[int] = (),
                   extra_constraints: Iterable[ExtraConstraintFn] = (), forests: GraphCache | None = None,
                   time_limit: float = 300.0, starts: Iterable[tuple[Context, int]] = (),
                   stop_blocks: Iterable[int] = (), sink_cost: Callable[[Node], int] | None = None,
                   variants: list[dict[int, float]] = ({},),
                   graph_ready: Callable[[InlinedGraph], list[dict[int, float]]] | None = None
                   ) -> list[IpetResult]:
    """``solve`` once per variant: a variant maps edge indices to an upper
    bound (0 removes the edge, e.g. every source edge but one), on one ILP
    built once.  ``graph_ready(graph)``, if given, returns the variants
    instead (edge indices are known only once the graph is built).

    Stages: graph (cached) -> objective -> rows -> HiGHS model -> per
    variant, solve and read the result (``_run_one``)."""
    t0 = time.perf_counter()
    forests = forests or GraphCache()
    g = forests.graph(program, entry, bounds, stop_at, list(starts), stop_blocks)
    if graph_ready is not None:
        variants = graph_ready(g)
    t_graph = time.perf_counter() - t0
    obj = forests.objective(g, cost, loop_penalty, sink_cost)
    rows = forests.rows(g, extra_constraints)
    h = _highs(obj.col_cost, rows, time_limit)
    results: list[IpetResult] = []
    fixed: dict[int, float] = {}
    for variant in variants:
        for e in fixed:
            if e not in variant:
                h.changeColBounds(e, 0.0, INF)
        for e, hi in variant.items():
            h.changeColBounds(e, 0.0, float(hi))
        fixed = dict(variant)
        results.append(_run_one(h, g, entry, obj, t_graph, len(rows.lo)))
    return results


INF = float("inf")      # the value of highspy.kHighsInf


@dataclass
class _Objective:
    """Cycles per unit of each edge variable, and their parts: the cost of
    each node (carried by its in-edges), the path-end costs on sink edges,
    the first-miss penalties on loop entry and start edges."""

    node_cost: np.ndarray
    col_cost: np.ndarray
    in_edges: list[list[int]]
    sink_edges: list[int]
    end_cost: np.ndarray
    penalties: list[tuple[LoopInstance, int]]
    start_pen: np.ndarray


def _incidence(g: InlinedGraph) -> tuple[list[int], list[int], list[list[int]], list[list[int]]]:
    """The source edges, the sink edges, and per node its in- and out-edges."""
    src_edges: list[int] = []
    sink_edges: list[int] = []
    in_edges: list[list[int]] = [[] for _ in g.nodes]
    out_edges: list[list[int]] = [[] for _ in g.nodes]
    for e, (a, b) in enumerate(g.edges):
        if a == SOURCE:
            src_edges.append(e)
        else:
            out_edges[a].append(e)
        if b == SINK:
            sink_edges.append(e)
        else:
            in_edges[b].append(e)
    return src_edges, sink_edges, in_edges, out_edges


def _objective(g: InlinedGraph, cost: CostFn, loop_penalty: LoopPenaltyFn | None,
               sink_cost: Callable[[Node], int] | None) -> _Objective:
    n_nodes, n_edges = len(g.nodes), len(g.edges)
    node_cost = np.zeros(n_nodes)
    for i, nd in enumerate(g.nodes):
        if nd.block is not None:
            c = int(cost(nd.ctx, nd.block))
            if c < 0:
                raise WcetError(f"negative cost for block {nd.block.start:#x}")
            node_cost[i] = c
    _, sink_edges, in_edges, _ = _incidence(g)
    # each edge carries the cost of its destination
    col_cost = np.zeros(n_edges)
    for e, (a, b) in enumerate(g.edges):
        if b >= 0:
            col_cost[e] = node_cost[b]
    end_cost = np.zeros(n_edges)
    if sink_cost is not None:
        for e in sink_edges:
            end_cost[e] = int(sink_cost(g.nodes[g.edges[e][0]]))
        col_cost += end_cost
    penalties: list[tuple[LoopInstance, int]] = []
    start_pen = np.zeros(n_edges)
    if loop_penalty is not None:
        pen_of: dict[int, int] = {}
        for i, li in enumerate(g.loops):
            p = int(loop_penalty(li.ctx, li.loop))
            pen_of[i] = p
            if p:
                penalties.append((li, p))
                for e in li.entry_edges:
                    col_cost[e] += p
        for se, inside in zip(g.start_edges, g.start_loops):
            start_pen[se] = sum(pen_of[i] for i in inside)
        col_cost += start_pen
    return _Objective(node_cost, col_cost, in_edges, sink_edges, end_cost, penalties, start_pen)


class _Rows:
    """The ILP's constraint rows, row-wise sparse: ``lo <= sum(value *
    edge) <= hi`` for the edges ``index[start[r]:start[r + 1]]``."""

    def __init__(self) -> None:
        self.start = [0]
        self.index: list[int] = []
        self.value: list[float] = []
        self.lo: list[float] = []
        self.hi: list[float] = []

    def add(self, terms: list[tuple[int, float]], lo: float, hi: float) -> None:
        merged: dict[int, float] = {}
        for e, c in terms:
            merged[e] = merged.get(e, 0.0) + c
        for e, c in merged.items():
            if c:
                self.index.append(e)
                self.value.append(c)
        self.start.append(len(self.index))
        self.lo.append(lo)
        self.hi.append(hi)

    def copy(self) -> "_Rows":
        out = _Rows()
        out.start, out.index, out.value = self.start[:], self.index[:], self.value[:]
        out.lo, out.hi = self.lo[:], self.hi[:]
        return out


def _rows(g: InlinedGraph, extra_constraints: Iterable[ExtraConstraintFn]) -> _Rows:
    """Flow conservation, one execution, loop bounds, call/return balance
    and the extra constraints (module docstring)."""
    rows = _Rows()
    src_edges, _, in_edges, out_edges = _incidence(g)
    for i in range(len(g.nodes)):
        rows.add([(e, 1.0) for e in in_edges[i]] + [(e, -1.0) for e in out_edges[i]], 0.0, 0.0)
    rows.add([(e, 1.0) for e in src_edges], 1.0, 1.0)
    _loop_rows(g, rows)
    _balance_rows(g, rows)
    for into, outer, most in g.recursion:
        # calls of the function <= most * entries into its recursion
        rows.add([(e, 1.0) for e in into] + [(e, -float(most)) for e in outer], -INF, 0.0)
    _extra_rows(g, rows, extra_constraints)
    return rows


def _extra_rows(g: InlinedGraph, rows: _Rows, extra_constraints: Iterable[ExtraConstraintFn]) -> None:
    for fn in extra_constraints:
        for c in fn(g):
            rows.add(c.terms, c.rhs if c.equal else -INF, c.rhs)


def _loop_rows(g: InlinedGraph, rows: _Rows) -> None:
    """Back edges <= (bound - 1) * entries, per loop instance; and the total
    of a triangular nest per entry of its enclosing loop."""
    by_loop = {(li.ctx, li.loop.header): i for i, li in enumerate(g.loops)}
    # a start inside a loop instance is one more entry into it (see _add_start)
    starts_in: dict[int, list[int]] = {}
    for se, inside in zip(g.start_edges, g.start_loops):
        for i in inside:
            starts_in.setdefault(i, []).append(se)
    for i, li in enumerate(g.loops):
        resumed = starts_in.get(i, [])
        terms = [(e, 1.0) for e in li.back_edges] + [(e, -(li.bound - 1.0)) for e in li.entry_edges + resumed]
        rows.add(terms, -INF, 0.0)
        parent = li.loop.parent
        if li.total is not None and parent is not None and (li.ctx, parent.header) in by_loop:
            # triangular nests: header executions per entry of the enclosing loop
            p = by_loop[(li.ctx, parent.header)]
            terms = [(e, 1.0) for e in li.back_edges + li.entry_edges] + \
                    [(e, -float(li.total)) for e in g.loops[p].entry_edges + starts_in.get(p, [])]
            rows.add(terms, -INF, 0.0)


def _balance_rows(g: InlinedGraph, rows: _Rows) -> None:
    """A shared callee context returns as often as it is called from each
    call site; a start below it may return once to any of its call sites."""
    below: dict[Context, list[int]] = {}
    for se, shared in zip(g.start_edges, g.start_shared):
        for c in shared:
            below.setdefault(c, []).append(se)
    unmatched: dict[Context, list[tuple[int, float]]] = {}
    for (ce, rets), cctx in zip(g.balance, g.balance_ctx):
        slack = below.get(cctx, [])
        terms = [(ce, 1.0)] + [(e, -1.0) for e in rets]
        if not slack:
            rows.add(terms, 0.0, 0.0)
            continue
        rows.add(terms + [(se, 1.0) for se in slack], 0.0, INF)   # returns - calls <= starts
        rows.add(terms, -INF, 0.0)                                  # returns - calls >= 0
        unmatched.setdefault(cctx, []).extend((e, -c) for e, c in terms)
    for cctx, terms in unmatched.items():
        rows.add(terms + [(se, -1.0) for se in below[cctx]], -INF, 0.0)


def _quiet_highs(highspy):
    """A new HiGHS instance. HiGHS 1.16 prints its banner on the standard
    output when the first instance is made, before any option can be set
    (`output_flag` silences only what comes later); that would end up in
    `-q` output and in a `--json -` document. So the process's file
    descriptor 1 points at /dev/null while the instance is made."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            try:
                return highspy.Highs()
            finally:
                os.dup2(saved, 1)
    finally:
        os.close(saved)


def _highs(col_cost: np.ndarray, rows: _Rows, time_limit: float):
    """The integer program (maximise ``col_cost``, non-negative integer
    edge counts) loaded into a HiGHS instance."""
    import highspy

    n_edges = len(col_cost)
    lp = highspy.HighsLp()
    lp.num_col_ = n_edges
    lp.num_row_ = len(rows.lo)
    lp.col_cost_ = col_cost
    lp.col_lower_ = np.zeros(n_edges)
    lp.col_upper_ = np.full(n_edges, highspy.kHighsInf)
    lp.row_lower_ = np.array(rows.lo, dtype=float)
    lp.row_upper_ = np.array(rows.hi, dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(rows.start, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(rows.index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(rows.value, dtype=float)
    lp.sense_ = highspy.ObjSense.kMaximize
    lp.integrality_ = [highspy.HighsVarType.kInteger] * n_edges
    h = _quiet_highs(highspy)
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", 0.0)
    h.passModel(lp)
    return h


def _run_one(h, g: InlinedGraph, entry: str, obj: _Objective, t_graph: float, n_rows: int) -> IpetResult:
    """Solve the loaded ILP and read the bound, counts and path from it."""
    import highspy

    in_edges, node_cost, penalties = obj.in_edges, obj.node_cost, obj.penalties
    end_cost, start_pen, sink_edges = obj.end_cost, obj.start_pen, obj.sink_edges
    n_nodes = len(g.nodes)
    n_edges = len(g.edges)
    t1 = time.perf_counter()
    h.run()
    t_solve = time.perf_counter() - t1
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kUnbounded or status == highspy.HighsModelStatus.kUnboundedOrInfeasible:
        raise WcetError(f"path analysis of {entry} is unbounded: a cycle without a loop bound")
    if status == highspy.HighsModelStatus.kInfeasible:
        raise InfeasiblePath(f"no feasible path from {entry}: the entry restrictions or constraints exclude every "
                             f"path")
    if status != highspy.HighsModelStatus.kOptimal:
        raise WcetError(f"path analysis of {entry} failed: HiGHS status {h.modelStatusToString(status)}")
    x = np.rint(np.array(h.getSolution().col_value)).astype(np.int64)
    counts_n = np.zeros(n_nodes, dtype=np.int64)
    for i in range(n_nodes):
        counts_n[i] = sum(int(x[e]) for e in in_edges[i])
    bound = int(sum(int(counts_n[i]) * int(node_cost[i]) for i in range(n_nodes)))
    pen_total = sum(p * sum(int(x[e]) for e in li.entry_edges) for li, p in penalties)
    pen_total += int(sum(int(x[e]) * int(start_pen[e]) for e in g.start_edges))
    bound += pen_total
    end_total = int(sum(int(x[e]) * int(end_cost[e]) for e in sink_edges))
    bound += end_total
    counts: dict[tuple[Context, int], int] = {}
    costs: dict[tuple[Context, int], int] = {}
    fnames: dict[tuple[Context, int], str] = {}
    per_function: dict[str, int] = {}
    for i, nd in enumerate(g.nodes):
        if nd.block is None:
            continue
        k = (nd.ctx, nd.block.start)
        counts[k] = int(counts_n[i])
        costs[k] = int(node_cost[i])
        fnames[k] = nd.func.name
        per_function[nd.func.name] = per_function.get(nd.func.name, 0) + int(counts_n[i]) * int(node_cost[i])
    path = _readable_path(g, x, counts_n, node_cost)
    ends = [(g.nodes[g.edges[e][0]].ctx, g.nodes[g.edges[e][0]].start, int(x[e])) for e in sink_edges if x[e] > 0]
    stats = {"contexts": float(len(g.chains)), "nodes": float(n_nodes), "variables": float(n_edges),
             "constraints": float(n_rows), "graph_seconds": t_graph, "solve_seconds": t_solve}
    return IpetResult(entry, bound, counts, costs, fnames, per_function, path, g.loops, stats, pen_total,
                      graph=g, edge_counts=x, end_cycles=end_total, ends=ends)


def _readable_path(g: InlinedGraph, x: np.ndarray, counts: np.ndarray, cost: np.ndarray) -> list[PathStep]:
    """Blocks with non-zero count, in depth-first order of the positive-flow
    edges from the source (a loop body follows its header)."""
    succ: dict[int, list[int]] = {}
    for e, (a, b) in enumerate(g.edges):
        if x[e] > 0 and b >= 0:
            succ.setdefault(a, []).append(b)
    headers: dict[int, LoopInstance] = {}
    for li in g.loops:
        headers[g.index[(li.ctx, li.loop.header)]] = li
    start = [b for (a, b), v in zip(g.edges, x) if a == SOURCE and v > 0]
    seen: set[int] = set()
    out: list[PathStep] = []
    stack = list(reversed(start))
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        nd = g.nodes[n]
        if nd.block is not None:
            li = headers.get(n)
            it = None
            if li is not None:
                ent = sum(int(x[e]) for e in li.entry_edges)
                it = int(counts[n]) // ent if ent else None
            out.append(PathStep(nd.func.name, g.chains[nd.ctx], nd.block.start, int(counts[n]), int(cost[n]), it))
        # explore fall-through/straight successors first (sorted by address descending on stack)
        nxt = sorted(set(succ.get(n, [])), key=lambda m: (g.nodes[m].ctx != nd.ctx, g.nodes[m].start), reverse=True)
        stack.extend(m for m in nxt if m not in seen)
    return out


# ---------------------------------------------------------------------------
# A simple cost model for tests and for running without the cache analysis
# ---------------------------------------------------------------------------

SIMPLE_LATENCY = {
    InstrClass.ALU: 1, InstrClass.MUL: 5, InstrClass.DIV: 65, InstrClass.LOAD: 3, InstrClass.STORE: 1,
    InstrClass.BRANCH: 4, InstrClass.JAL: 4, InstrClass.JALR: 4, InstrClass.CSR: 5, InstrClass.FENCE: 5,
    InstrClass.FENCE_I: 5, InstrClass.ECALL: 5, InstrClass.EBREAK: 5, InstrClass.SRET: 5,
    InstrClass.MRET: 5, InstrClass.WFI: 5, InstrClass.SFENCE_VMA: 5, InstrClass.AMO: 6, InstrClass.LR: 3,
    InstrClass.SC: 3, InstrClass.FPU: 25, InstrClass.FP_LOAD: 3, InstrClass.FP_STORE: 1,
    InstrClass.ILLEGAL: 0,
}


def simple_cost(ctx: Context, block: BasicBlock) -> int:
    """Context-free per-instruction latencies (no caches): a fallback model."""
    return sum(SIMPLE_LATENCY[i.cls] for i in block.instrs)
