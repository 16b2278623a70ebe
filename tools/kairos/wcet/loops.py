"""Dominators, natural loops and loop nesting for one function's CFG.

``find_loops(func, image=None) -> LoopForest``:

* dominators from networkx (``immediate_dominators``) on the function graph
  rooted at its entry;
* a back edge is ``u -> h`` with ``h`` dominating ``u``; the natural loop of
  header ``h`` is the union over its back edges of the nodes that reach ``u``
  without passing through ``h``;
* the CFG is reducible iff removing the back edges leaves it acyclic;
  otherwise ``WcetError`` names the function and a block of the offending
  cycle (irreducible loops are not supported);
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
    idom = nx.immediate_dominators(g, func.entry)
    forest = LoopForest(func, [], idom, {})
    back: dict[int, list[tuple[int, int]]] = {}
    for u, v in g.edges():
        if u in idom and forest.dominates(v, u):
            back.setdefault(v, []).append((u, v))
    # reducibility: without back edges the (reachable) graph must be acyclic
    fwd = nx.DiGraph()
    fwd.add_nodes_from(n for n in g.nodes if n in idom)
    backset = {e for es in back.values() for e in es}
    fwd.add_edges_from(e for e in g.edges() if e not in backset and e[0] in idom)
    if not nx.is_directed_acyclic_graph(fwd):
        cyc = nx.find_cycle(fwd)
        where = min(a for a, _ in cyc)
        raise WcetError(f"irreducible loop in {func.name} around block {where:#x}: "
                        f"a cycle with more than one entry is not supported")
    loops: list[Loop] = []
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
        cands = [o for o in loops if o is not lp and lp.header in o.blocks and lp.blocks <= o.blocks]
        if cands:
            lp.parent = min(cands, key=lambda o: len(o.blocks))
            lp.parent.children.append(lp)
    loops.sort(key=lambda lp: (lp.depth, lp.header))
    forest.loops = loops
    for lp in sorted(loops, key=lambda lp: len(lp.blocks), reverse=True):
        for b in lp.blocks:
            forest.innermost[b] = lp
    return forest
