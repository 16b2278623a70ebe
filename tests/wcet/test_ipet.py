"""IPET on small hand-built graphs, checked against brute-force answers."""

from __future__ import annotations

import random
from itertools import product

import pytest

from kairos.wcet import ipet
from kairos.wcet.bounds import BoundAnalysis, LoopBound
from kairos.wcet.cfg import BasicBlock, Function, Program, Term
from kairos.wcet.errors import WcetError
from kairos.wcet.isa import decode

NOP = 0x00000013


class FakeImage:
    gp = None
    symbols: list = []
    path = "<synthetic>"

    def source_of(self, addr: int) -> str:
        return "no line info"

    def symbol_name_at(self, addr: int):
        return None

    def is_readonly(self, addr: int) -> bool:
        return False

    def symbol(self, name: str):
        raise WcetError(f"symbol {name!r} not found")


class FixedBounds(BoundAnalysis):
    def __init__(self, program: Program, by_header: dict[int, int]) -> None:
        super().__init__(program)
        self.by_header = by_header

    def bound(self, forest, loop, chain, ctx=()):
        if loop.header not in self.by_header:
            raise WcetError(f"loop at {loop.header:#x} in {loop.func.name} has no bound")
        return LoopBound(self.by_header[loop.header], "test")


def addr(i: int, base: int = 0x1000) -> int:
    return base + 0x10 * i


def make_function(name: str, n: int, edges: dict[int, list[int]], base: int = 0x1000,
                  kinds: dict[int, Term] | None = None, calls: dict[int, int] | None = None) -> Function:
    f = Function(name, addr(0, base))
    kinds = kinds or {}
    calls = calls or {}
    for i in range(n):
        a = addr(i, base)
        ins = decode(NOP, a)
        succs = [addr(j, base) for j in edges.get(i, [])]
        kind = kinds.get(i, Term.BRANCH if len(succs) > 1 else (Term.RETURN if not succs else Term.JUMP))
        blk = BasicBlock(a, a + 4, [ins], f.entry, kind, succs, [])
        if i in calls:
            blk.kind = Term.CALL
            blk.call_target = calls[i]
            f.calls.append((a, calls[i]))
        f.blocks[a] = blk
    for b in f.blocks.values():
        for s in b.succs:
            f.blocks[s].preds.append(b.start)
    f.returns = any(b.kind is Term.RETURN for b in f.blocks.values())
    return f


def make_program(*funcs: Function) -> Program:
    p = Program(FakeImage())
    for f in funcs:
        p.functions[f.entry] = f
        p.entries[f.name] = f.entry
    for f in funcs:
        for bs, callee in f.calls:
            p.callgraph.add_edge(f.entry, callee, sites=[f.blocks[bs].last.addr])
    p.reindex()
    return p


def cost_of(table: dict[int, int]):
    return lambda ctx, blk: table[blk.start]


@pytest.mark.parametrize("seed", range(25))
def test_random_dags_match_longest_path(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(4, 14)
    edges: dict[int, list[int]] = {}
    for i in range(n - 1):
        outs = sorted({j for j in range(i + 1, n) if rng.random() < 0.3} | {rng.randint(i + 1, n - 1)})
        edges[i] = outs[:2]          # blocks have at most two successors
    f = make_function("dag", n, edges)
    p = make_program(f)
    costs = {addr(i): rng.randint(0, 50) for i in range(n)}
    # brute force: longest path from block 0 to any exit
    best: dict[int, int] = {}
    for i in reversed(range(n)):
        succ = edges.get(i, [])
        best[i] = costs[addr(i)] + (max(best[j] for j in succ) if succ else 0)
    r = ipet.solve(p, "dag", FixedBounds(p, {}), cost_of(costs))
    assert r.bound == best[0]
    # the counts describe one path from the entry whose cost is the bound
    on = [i for i in range(n) if r.counts[((), addr(i))]]
    assert all(r.counts[((), addr(i))] == 1 for i in on)
    assert on[0] == 0
    for a, b in zip(on, on[1:]):
        assert b in edges[a]
    assert sum(costs[addr(i)] for i in on) == r.bound
    assert [s.block for s in r.path] == [addr(i) for i in on]


@pytest.mark.parametrize("k", [1, 2, 5, 17])
def test_loop_bound_relative_to_entries(k: int) -> None:
    # 0 pre -> 1 header -> {2 body, 6 exit}; 2 -> {3, 4} -> 5 latch -> 1
    edges = {0: [1], 1: [2, 6], 2: [3, 4], 3: [5], 4: [5], 5: [1]}
    f = make_function("loop", 7, edges)
    p = make_program(f)
    c = {addr(0): 3, addr(1): 2, addr(2): 1, addr(3): 9, addr(4): 4, addr(5): 1, addr(6): 5}
    r = ipet.solve(p, "loop", FixedBounds(p, {addr(1): k}), cost_of(c))
    expected = 3 + k * 2 + (k - 1) * (1 + 9 + 1) + 5
    assert r.bound == expected
    assert r.counts[((), addr(1))] == k
    assert r.counts[((), addr(3))] == k - 1 and r.counts[((), addr(4))] == 0
    header_steps = [s for s in r.path if s.block == addr(1)]
    assert header_steps and header_steps[0].loop_iterations == k


def test_nested_loops_multiply() -> None:
    # 0 -> 1 outer header -> {2, 7}; 2 -> 3 inner header -> {4, 5}; 4 -> 3; 5 -> 6 -> 1
    edges = {0: [1], 1: [2, 7], 2: [3], 3: [4, 5], 4: [3], 5: [6], 6: [1]}
    f = make_function("nest", 8, edges)
    p = make_program(f)
    c = {addr(i): 1 for i in range(8)}
    c[addr(4)] = 10
    for ko, ki in product([1, 3, 4], [1, 2, 6]):
        r = ipet.solve(p, "nest", FixedBounds(p, {addr(1): ko, addr(3): ki}), cost_of(c))
        entries_inner = ko - 1
        assert r.counts[((), addr(3))] == ki * entries_inner
        assert r.counts[((), addr(4))] == (ki - 1) * entries_inner
        brute = 1 + ko + entries_inner * (1 + ki + (ki - 1) * 10 + 1 + 1) + 1
        assert r.bound == brute


def test_calls_are_virtually_inlined_per_context() -> None:
    g = make_function("g", 3, {0: [1, 2]}, base=0x2000)               # diamond-less: 0 -> {1, 2}
    f = make_function("f", 3, {0: [1], 1: [2]}, base=0x1000, calls={0: g.entry, 1: g.entry})
    p = make_program(f, g)
    site0, site1 = addr(0, 0x1000), addr(1, 0x1000)

    def cost(ctx, blk):
        if blk.start == addr(1, 0x2000):       # g's first arm is expensive only from the second call
            return 100 if ctx == (site1,) else 1
        if blk.start == addr(2, 0x2000):
            return 7
        return 2

    r = ipet.solve(p, "f", FixedBounds(p, {}), cost)
    # f: 3 blocks x 2; call 1: g0 + max(1, 7); call 2: g0 + max(100, 7)
    assert r.bound == 6 + (2 + 7) + (2 + 100)
    assert r.counts[((site0,), addr(2, 0x2000))] == 1
    assert r.counts[((site1,), addr(1, 0x2000))] == 1
    assert r.per_function == {"f": 6, "g": 9 + 102}
    assert r.stats["contexts"] == 3


def test_halt_loop_ends_the_path() -> None:
    # 0 -> {1, 3}; 1 -> 2 -> 1 (no exit: halt loop); 3 return
    edges = {0: [1, 3], 1: [2], 2: [1]}
    f = make_function("halt", 4, edges)
    p = make_program(f)
    c = {addr(0): 1, addr(1): 50, addr(2): 1000, addr(3): 5}
    r = ipet.solve(p, "halt", FixedBounds(p, {}), cost_of(c))
    assert r.bound == 51          # reaching the halt loop's header ends the path
    assert r.counts[((), addr(2))] == 0


def test_unbounded_loop_is_an_error() -> None:
    f = make_function("u", 3, {0: [1], 1: [1, 2]})
    p = make_program(f)
    with pytest.raises(WcetError, match="loop at 0x1010 in u has no bound"):
        ipet.solve(p, "u", FixedBounds(p, {}), cost_of({addr(i): 1 for i in range(3)}))


def test_extra_constraint_hook_excludes_paths() -> None:
    edges = {0: [1, 2], 1: [3], 2: [3]}
    f = make_function("x", 4, edges)
    p = make_program(f)
    c = {addr(0): 1, addr(1): 30, addr(2): 20, addr(3): 1}

    def forbid_block1(g: ipet.InlinedGraph) -> list[ipet.Constraint]:
        n1 = g.index[((), addr(1))]
        return [ipet.Constraint([(e, 1.0) for e, (a, b) in enumerate(g.edges) if b == n1], 0.0)]

    assert ipet.solve(p, "x", FixedBounds(p, {}), cost_of(c)).bound == 32
    assert ipet.solve(p, "x", FixedBounds(p, {}), cost_of(c), extra_constraints=[forbid_block1]).bound == 22


def test_loop_penalty_once_per_entry() -> None:
    edges = {0: [1], 1: [2, 3], 2: [1]}
    f = make_function("p", 4, edges)
    p = make_program(f)
    c = {addr(i): 1 for i in range(4)}
    r = ipet.solve(p, "p", FixedBounds(p, {addr(1): 10}), cost_of(c), loop_penalty=lambda ctx, lp: 40)
    assert r.loop_penalties == 40
    assert r.bound == 1 + 10 + 9 + 1 + 40
