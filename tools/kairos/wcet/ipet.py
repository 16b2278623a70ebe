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
* objective: maximise ``sum(cost(ctx, block) * count(ctx, block))`` plus, if a
  ``loop_penalty`` is given, ``penalty(ctx, loop) * sum(entry edges)``
  (persistence: cycles paid once per loop entry).

Hook for infeasible paths (``infeasible.py``): ``extra_constraints`` is a
list of callables ``f(graph: InlinedGraph) -> list[Constraint]`` whose linear
constraints over edge variables are added to the ILP; see ``Constraint``.
The result keeps the graph and the solution's edge counts for it.

The result (``IpetResult``) has the bound, the execution count of every
(context, block), per-function totals, the loop bounds used, and a readable
worst-case path: the blocks with non-zero count in depth-first order of the
flow, loops shown with their iteration counts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np

from kairos.wcet.bounds import BoundAnalysis
from kairos.wcet.cfg import BasicBlock, Context, Function, Program, Term
from kairos.wcet.errors import WcetError
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


ExtraConstraintFn = Callable[[InlinedGraph], list[Constraint]]
#: Global hook list (e.g. SMT-derived infeasible-path constraints).
EXTRA_CONSTRAINTS: list[ExtraConstraintFn] = []


class _Forests:
    def __init__(self) -> None:
        self._f: dict[int, LoopForest] = {}
        self.graphs: dict[tuple, "InlinedGraph"] = {}

    def get(self, f: Function) -> LoopForest:
        fo = self._f.get(id(f))
        if fo is None or fo.func is not f:
            fo = find_loops(f)
            self._f[id(f)] = fo
        return fo


def build_graph(program: Program, entry: str, bounds: BoundAnalysis, stop_at: Iterable[int] = (),
                forests: _Forests | None = None) -> InlinedGraph:
    forests = forests or _Forests()
    stop = set(stop_at)
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
            for s_ in blk.succs:
                cfg_edges.setdefault((ctx, bs, s_), []).append(g.add_edge(a, g.index[(ctx, s_)]))
                out_deg[a] += 1
    callers: dict[Context, int] = {}
    for cctx, _t, _c, _b in pending_returns:
        callers[cctx] = callers.get(cctx, 0) + 1
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
    for i in range(len(g.nodes)):
        if out_deg[i] == 0:
            g.add_edge(i, SINK)
    return g


def solve(program: Program, entry: str, bounds: BoundAnalysis, cost: CostFn,
          loop_penalty: LoopPenaltyFn | None = None, stop_at: Iterable[int] = (),
          extra_constraints: Iterable[ExtraConstraintFn] = (), forests: _Forests | None = None,
          time_limit: float = 300.0) -> IpetResult:
    import highspy

    t0 = time.perf_counter()
    forests = forests or _Forests()
    gkey = (entry, tuple(sorted(set(stop_at))), id(bounds), id(program))
    g = forests.graphs.get(gkey)
    if g is None:
        g = build_graph(program, entry, bounds, stop_at, forests)
        forests.graphs[gkey] = g
    t_graph = time.perf_counter() - t0
    n_nodes = len(g.nodes)
    n_edges = len(g.edges)
    node_cost = np.zeros(n_nodes)
    for i, nd in enumerate(g.nodes):
        if nd.block is not None:
            c = int(cost(nd.ctx, nd.block))
            if c < 0:
                raise WcetError(f"negative cost for block {nd.block.start:#x}")
            node_cost[i] = c
    in_edges: list[list[int]] = [[] for _ in range(n_nodes)]
    out_edges: list[list[int]] = [[] for _ in range(n_nodes)]
    src_edges, sink_edges = [], []
    for e, (a, b) in enumerate(g.edges):
        if a == SOURCE:
            src_edges.append(e)
        else:
            out_edges[a].append(e)
        if b == SINK:
            sink_edges.append(e)
        else:
            in_edges[b].append(e)
    # objective on edges: each edge carries the cost of its destination
    col_cost = np.zeros(n_edges)
    for e, (a, b) in enumerate(g.edges):
        if b >= 0:
            col_cost[e] = node_cost[b]
    penalties: list[tuple[LoopInstance, int]] = []
    if loop_penalty is not None:
        for li in g.loops:
            p = int(loop_penalty(li.ctx, li.loop))
            if p:
                penalties.append((li, p))
                for e in li.entry_edges:
                    col_cost[e] += p
    rows_start = [0]
    rows_index: list[int] = []
    rows_value: list[float] = []
    row_lo: list[float] = []
    row_hi: list[float] = []

    def add_row(terms: list[tuple[int, float]], lo: float, hi: float) -> None:
        merged: dict[int, float] = {}
        for e, c in terms:
            merged[e] = merged.get(e, 0.0) + c
        for e, c in merged.items():
            if c:
                rows_index.append(e)
                rows_value.append(c)
        rows_start.append(len(rows_index))
        row_lo.append(lo)
        row_hi.append(hi)

    for i in range(n_nodes):
        add_row([(e, 1.0) for e in in_edges[i]] + [(e, -1.0) for e in out_edges[i]], 0.0, 0.0)
    add_row([(e, 1.0) for e in src_edges], 1.0, 1.0)
    by_loop = {(li.ctx, li.loop.header): li for li in g.loops}
    for li in g.loops:
        terms = [(e, 1.0) for e in li.back_edges] + [(e, -(li.bound - 1.0)) for e in li.entry_edges]
        add_row(terms, -highspy.kHighsInf, 0.0)
        parent = li.loop.parent
        if li.total is not None and parent is not None and (li.ctx, parent.header) in by_loop:
            # triangular nests: header executions per entry of the enclosing loop
            pli = by_loop[(li.ctx, parent.header)]
            terms = [(e, 1.0) for e in li.back_edges + li.entry_edges] + \
                    [(e, -float(li.total)) for e in pli.entry_edges]
            add_row(terms, -highspy.kHighsInf, 0.0)
    for ce, rets in g.balance:
        add_row([(ce, 1.0)] + [(e, -1.0) for e in rets], 0.0, 0.0)
    for fn in list(extra_constraints) + EXTRA_CONSTRAINTS:
        for c in fn(g):
            add_row(c.terms, c.rhs if c.equal else -highspy.kHighsInf, c.rhs)

    lp = highspy.HighsLp()
    lp.num_col_ = n_edges
    lp.num_row_ = len(row_lo)
    lp.col_cost_ = col_cost
    lp.col_lower_ = np.zeros(n_edges)
    lp.col_upper_ = np.full(n_edges, highspy.kHighsInf)
    lp.row_lower_ = np.array(row_lo, dtype=float)
    lp.row_upper_ = np.array(row_hi, dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(rows_start, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(rows_index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(rows_value, dtype=float)
    lp.sense_ = highspy.ObjSense.kMaximize
    lp.integrality_ = [highspy.HighsVarType.kInteger] * n_edges
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", 0.0)
    h.passModel(lp)
    t1 = time.perf_counter()
    h.run()
    t_solve = time.perf_counter() - t1
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kUnbounded or status == highspy.HighsModelStatus.kUnboundedOrInfeasible:
        raise WcetError(f"path analysis of {entry} is unbounded: a cycle without a loop bound")
    if status == highspy.HighsModelStatus.kInfeasible:
        raise WcetError(f"no feasible path from {entry}: the entry restrictions or constraints exclude every path")
    if status != highspy.HighsModelStatus.kOptimal:
        raise WcetError(f"path analysis of {entry} failed: HiGHS status {h.modelStatusToString(status)}")
    x = np.rint(np.array(h.getSolution().col_value)).astype(np.int64)
    counts_n = np.zeros(n_nodes, dtype=np.int64)
    for i in range(n_nodes):
        counts_n[i] = sum(int(x[e]) for e in in_edges[i])
    bound = int(sum(int(counts_n[i]) * int(node_cost[i]) for i in range(n_nodes)))
    pen_total = sum(p * sum(int(x[e]) for e in li.entry_edges) for li, p in penalties)
    bound += pen_total
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
    stats = {"contexts": float(len(g.chains)), "nodes": float(n_nodes), "variables": float(n_edges),
             "constraints": float(len(row_lo)), "graph_seconds": t_graph, "solve_seconds": t_solve}
    return IpetResult(entry, bound, counts, costs, fnames, per_function, path, g.loops, stats, pen_total, g, x)


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
