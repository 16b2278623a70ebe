"""Dominators, natural loops and loop nesting for one function's CFG.

``find_loops(func, image=None) -> LoopForest``:

* dominators from networkx (``immediate_dominators``) on the function graph
  rooted at its entry;
* a back edge is ``u -> h`` with ``h`` dominating ``u``; the natural loop of
  header ``h`` is the union over its back edges of the nodes that reach ``u``
  without passing through ``h``;
* irreducible regions (cycles entered at several blocks) become loops with
  ``irreducible=True``: header = first entry block in reverse post-order,
  back edges = the region's edges into it, entry edges = all edges into the
  region; their bounds must be annotated (automatic bounds assume one
  entry);
* ``Loop``: ``header``, ``blocks`` (frozenset of block starts),
  ``back_edges``, ``entry_edges`` (from outside into the header),
  ``exit_edges``, ``parent``/``children``/``depth``, ``func``;
  ``is_infinite`` when no edge leaves the loop (a halt loop such as
  ``for (;;) wfi();``; path analysis ends the path on entry, see ipet).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from kairos.wcet.cfg import Function
from kairos.wcet.errors import WcetError


@dataclass(eq=False)
class Loop:
    func: Function
    header: int
    blocks: frozenset[int]
    back_edges: list[tuple[int, int]]
    entry_edges: list[tuple[int, int]]
    exit_edges: list[tuple[int, int]]
    parent: "Loop | None" = None
    children: list["Loop"] = field(default_factory=list)
    irreducible: bool = False       # a cycle with several entry blocks (see find_loops)

    @property
    def depth(self) -> int:
        d, p = 1, self.parent
        while p is not None:
            d, p = d + 1, p.parent
        return d

    @property
    def is_infinite(self) -> bool:
        return not self.exit_edges

    @property
    def latches(self) -> list[int]:
        return [u for u, _ in self.back_edges]

    def __repr__(self) -> str:
        return f"<Loop {self.func.name}@{self.header:#x} {len(self.blocks)} blocks depth {self.depth}>"


@dataclass
class LoopForest:
    func: Function
    loops: list[Loop]                       # outermost first (by depth), then by header
    idom: dict[int, int]
    innermost: dict[int, Loop]              # block -> innermost loop containing it

    def by_header(self, header: int) -> Loop | None:
        for lp in self.loops:
            if lp.header == header:
                return lp
        return None

    def dominates(self, a: int, b: int) -> bool:
        """Does block ``a`` dominate block ``b``?"""
        while True:
            if a == b:
                return True
            nb = self.idom.get(b)
            if nb is None or nb == b:
                return False
            b = nb


def find_loops(func: Function) -> LoopForest:
    g = func.graph()
    if func.entry not in g:
        return LoopForest(func, [], {}, {})
    idom = dict(nx.immediate_dominators(g, func.entry))
    idom.setdefault(func.entry, func.entry)     # some networkx versions leave the root out
    forest = LoopForest(func, [], idom, {})
    back: dict[int, list[tuple[int, int]]] = {}
    for u, v in g.edges():
        if u in idom and forest.dominates(v, u):
            back.setdefault(v, []).append((u, v))
    # without the back edges the (reachable) graph is acyclic iff it is reducible
    fwd = nx.DiGraph()
    fwd.add_nodes_from(n for n in g.nodes if n in idom)
    backset = {e for es in back.values() for e in es}
    fwd.add_edges_from(e for e in g.edges() if e not in backset and e[0] in idom)
    loops: list[Loop] = []
    # Irreducible regions (cycles with several entry blocks, e.g. from gcc's
    # jump threading): each strongly connected component of the forward graph
    # becomes a loop whose header is its first entry in reverse post-order and
    # whose back edges are the component's edges into that header; removing
    # them, any remaining cycles are found the same way (nested).  Bounds for
    # such loops count header executions per entry into the region (entry
    # edges may reach any of its entry blocks) and must be annotated.
    rpo = {n: i for i, n in enumerate(_rpo(g, func.entry))}
    for _round in range(64):
        if nx.is_directed_acyclic_graph(fwd):
            break
        for scc in nx.strongly_connected_components(fwd):
            if len(scc) == 1:
                n = next(iter(scc))
                if not fwd.has_edge(n, n):
                    continue
            entries = sorted((n for n in scc if any(p not in scc for p in g.predecessors(n) if p in idom)),
                             key=lambda n: rpo.get(n, 1 << 30))
            if not entries:
                continue
            h = entries[0]
            backs = sorted((u, h) for u in fwd.predecessors(h) if u in scc)
            fwd.remove_edges_from(backs)
            body = frozenset(scc)
            entry_edges = sorted((p, n) for n in scc for p in g.predecessors(n) if p in idom and p not in scc)
            exits = sorted((a, t) for a in scc for t in g.successors(a) if t not in scc)
            loops.append(Loop(func, h, body, backs, entry_edges, exits, irreducible=True))
    else:
        raise WcetError(f"irreducible control flow in {func.name} is too tangled to analyse")
    for h, edges in back.items():
        body = {h}
        stack = [u for u, _ in edges]
        while stack:
            n = stack.pop()
            if n in body:
                continue
            body.add(n)
            stack.extend(p for p in g.predecessors(n) if p in idom)
        entry = [(p, h) for p in g.predecessors(h) if p not in body]
        exits = [(a, s) for a in body for s in g.successors(a) if s not in body]
        loops.append(Loop(func, h, frozenset(body), sorted(edges), sorted(entry), sorted(exits)))
    # nesting: parent is the smallest strictly larger loop containing the header
    for lp in loops:
        cands = [o for o in loops if o is not lp and lp.header in o.blocks and lp.blocks <= o.blocks
                 and (len(o.blocks) > len(lp.blocks) or (o.irreducible and not lp.irreducible))]
        if cands:
            lp.parent = min(cands, key=lambda o: len(o.blocks))
            lp.parent.children.append(lp)
    loops.sort(key=lambda lp: (lp.depth, lp.header))
    forest.loops = loops
    for lp in sorted(loops, key=lambda lp: len(lp.blocks), reverse=True):
        for b in lp.blocks:
            forest.innermost[b] = lp
    return forest


def _rpo(g: nx.DiGraph, entry: int) -> list[int]:
    seen = {entry}
    post: list[int] = []
    stack = [(entry, iter(g.successors(entry)))]
    while stack:
        n, it = stack[-1]
        for m in it:
            if m not in seen:
                seen.add(m)
                stack.append((m, iter(g.successors(m))))
                break
        else:
            post.append(n)
            stack.pop()
    return post[::-1]
