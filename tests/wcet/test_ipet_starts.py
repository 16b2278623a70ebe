"""IPET with several start nodes, stop blocks, end costs and variants (the
per-region analysis of `kairos latency`), on small hand-built graphs whose
answers are worked out by hand."""

from __future__ import annotations

import pytest

from kairos.wcet import ipet
from kairos.wcet.cfg import Term
from kairos.wcet.errors import InfeasiblePath

from test_ipet import FixedBounds, addr, cost_of, make_function, make_program

# 0 pre -> 1 header -> {2 body, 5 exit}; 2 -> 3 (the "poll" block) -> 4 latch -> 1
LOOP = {0: [1], 1: [2, 5], 2: [3], 3: [4], 4: [1]}
LOOP_COST = {addr(0): 3, addr(1): 2, addr(2): 10, addr(3): 1, addr(4): 5, addr(5): 7}


@pytest.mark.parametrize("k", [2, 4, 9])
def test_start_inside_a_loop_resumes_at_most_max_minus_one_iterations(k: int) -> None:
    f = make_function("loop", 6, LOOP)
    p = make_program(f)
    rs = ipet.solve_variants(p, "loop", FixedBounds(p, {addr(1): k}), cost_of(LOOP_COST),
                             starts=[((), addr(4))], variants=[{}], graph_ready=lambda g: [{0: 0.0}])
    r = rs[0]
    # the start's iteration is one of the k: latch, k-1 more header executions, k-2 more bodies, exit
    expected = 5 + (k - 1) * 2 + (k - 2) * (10 + 1 + 5) + 7
    assert r.bound == expected
    assert r.counts[((), addr(0))] == 0
    assert [s.block for s in r.path][:1] == [addr(4)]


def test_entry_and_start_together_take_the_longer() -> None:
    f = make_function("loop", 6, LOOP)
    p = make_program(f)
    r = ipet.solve(p, "loop", FixedBounds(p, {addr(1): 3}), cost_of(LOOP_COST), starts=[((), addr(4))])
    from_entry = 3 + 3 * 2 + 2 * (10 + 1 + 5) + 7
    from_start = 5 + 2 * 2 + 1 * (10 + 1 + 5) + 7
    assert r.bound == max(from_entry, from_start) == from_entry


def test_stop_block_ends_the_path_and_end_cost_is_charged_there() -> None:
    # 0 -> {1, 2}; 1 "wfi" -> 3; 2 -> 3; 3 return (a trap return in a kernel)
    f = make_function("w", 4, {0: [1, 2], 1: [3], 2: [3]}, kinds={1: Term.WFI})
    p = make_program(f)
    c = {addr(0): 1, addr(1): 4, addr(2): 2, addr(3): 50}
    assert ipet.solve(p, "w", FixedBounds(p, {}), cost_of(c)).bound == 1 + 4 + 50
    r = ipet.solve(p, "w", FixedBounds(p, {}), cost_of(c), stop_blocks=[addr(1)])
    assert r.bound == 1 + 2 + 50
    ends = {addr(1): 1000, addr(3): 7}
    r = ipet.solve(p, "w", FixedBounds(p, {}), cost_of(c), stop_blocks=[addr(1)],
                   sink_cost=lambda node: ends.get(node.start, 0))
    assert r.bound == 1 + 4 + 1000 and r.end_cycles == 1000
    assert [(ctx, b) for ctx, b, _n in r.ends] == [((), addr(1))]


def test_variants_fix_edges_on_one_ilp() -> None:
    f = make_function("loop", 6, LOOP)
    p = make_program(f)

    def each_start(g: ipet.InlinedGraph) -> list[dict[int, float]]:
        return [{e: 0.0 for e in g.start_edges}, {0: 0.0, g.start_edges[1]: 0.0},
                {0: 0.0, g.start_edges[0]: 0.0}]

    rs = ipet.solve_variants(p, "loop", FixedBounds(p, {addr(1): 2}), cost_of(LOOP_COST),
                             starts=[((), addr(4)), ((), addr(5))], graph_ready=each_start)
    assert [r.bound for r in rs] == [3 + 2 * 2 + (10 + 1 + 5) + 7, 5 + 2 + 7, 7]


def test_start_in_a_callee_returns_into_the_caller_loop() -> None:
    # g: 0 -> 1 -> return.  f: 0 -> 1 header -> {2 call g, 4 exit}; 2 -> 3 latch -> 1
    g = make_function("g", 2, {0: [1]}, base=0x2000)
    f = make_function("f", 5, {0: [1], 1: [2, 4], 2: [3], 3: [1]}, base=0x1000, calls={2: g.entry})
    p = make_program(f, g)
    site = addr(2, 0x1000)
    c = {addr(i, 0x1000): 1 for i in range(5)} | {addr(0, 0x2000): 20, addr(1, 0x2000): 3}
    c[addr(4, 0x1000)] = 100
    rs = ipet.solve_variants(p, "f", FixedBounds(p, {addr(1, 0x1000): 4}), cost_of(c),
                             starts=[((site,), addr(1, 0x2000))], graph_ready=lambda gr: [{0: 0.0}])
    # rest of g (3), latch (1), then 3 more header executions of which 2 run the body with g, exit
    assert rs[0].bound == 3 + 1 + 3 * 1 + 2 * (1 + 20 + 3 + 1) + 100


def test_start_below_a_shared_context_returns_once_to_one_call_site() -> None:
    # g is shared (one context for both call sites).  f: 0 call g -> 1 call g -> 2 return (cost 40)
    # A start in g's second block: return to the first site (then f1 calls g again, f2)
    # or to the second (then f2); never both.
    g = make_function("g", 2, {0: [1]}, base=0x2000)
    f = make_function("f", 3, {0: [1], 1: [2]}, base=0x1000, calls={0: g.entry, 1: g.entry})
    p = make_program(f, g)
    p.flatten.add(g.entry)
    c = {addr(0, 0x1000): 1, addr(1, 0x1000): 1, addr(2, 0x1000): 40, addr(0, 0x2000): 20, addr(1, 0x2000): 3}
    shared = (-g.entry,)
    rs = ipet.solve_variants(p, "f", FixedBounds(p, {}), cost_of(c), starts=[(shared, addr(1, 0x2000))],
                             graph_ready=lambda gr: [{0: 0.0}, {}])
    assert rs[0].bound == 3 + 1 + 20 + 3 + 40
    # from the entry, the shared context still balances calls and returns
    assert rs[1].bound == 1 + 23 + 1 + 23 + 40


def test_start_loop_penalty_is_charged_on_the_start() -> None:
    f = make_function("loop", 6, LOOP)
    p = make_program(f)
    rs = ipet.solve_variants(p, "loop", FixedBounds(p, {addr(1): 2}), cost_of(LOOP_COST),
                             loop_penalty=lambda ctx, lp: 500, starts=[((), addr(4))],
                             graph_ready=lambda g: [{0: 0.0}])
    assert rs[0].bound == 5 + 2 + 7 + 500
    assert rs[0].loop_penalties == 500


def test_start_at_the_latch_of_a_single_iteration_loop_is_infeasible() -> None:
    # max = 1: the header ran once, so the back edge cannot be taken
    f = make_function("loop", 6, LOOP)
    p = make_program(f)
    with pytest.raises(InfeasiblePath, match="no feasible path"):
        ipet.solve_variants(p, "loop", FixedBounds(p, {addr(1): 1}), cost_of(LOOP_COST),
                            starts=[((), addr(4))], graph_ready=lambda g: [{0: 0.0}])


def test_unknown_start_is_an_error() -> None:
    f = make_function("loop", 6, LOOP)
    p = make_program(f)
    with pytest.raises(Exception, match="start block 0x9999"):
        ipet.solve(p, "loop", FixedBounds(p, {addr(1): 2}), cost_of(LOOP_COST), starts=[((), 0x9999)])
