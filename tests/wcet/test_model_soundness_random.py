"""Randomised soundness of the abstraction against the concrete model:
for random straight-line code over a few registers and a few memory lines,
cut into random blocks, the sum of abstract block costs (must caches,
block-relative pipeline summaries carried across block boundaries, store
buffer without pop-through) is never below the concrete replay."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from kairos.wcet.cache import ConcreteCache, MustCache
from kairos.wcet.isa import decode
from kairos.wcet.model import get_preset
from kairos.wcet.pipeline import PipeState, join_residual, step

from test_pipeline_timing import addi, beq, div, lb, lw, mul, sw

REGS = [10, 11, 12, 13]
# Lines chosen to collide in the direct-mapped view (set 0 and 1 of 64).
ADDRS = [0x8000_0000, 0x8000_1000, 0x8000_2000, 0x8000_0040, 0x8000_0048, 0x8000_1040]


@st.composite
def programs(draw):
    n = draw(st.integers(1, 40))
    out = []
    for _ in range(n):
        kind = draw(st.sampled_from(["alu", "lw", "lb", "sw", "mul", "div", "br"]))
        a, b, c = (draw(st.sampled_from(REGS)) for _ in range(3))
        addr = draw(st.sampled_from(ADDRS))
        word = {"alu": addi(a, b, 1), "lw": lw(a, b, 0), "lb": lb(a, b, 0), "sw": sw(a, b, 0),
                "mul": mul(a, b, c), "div": div(a, b, c), "br": beq(a, b)}[kind]
        out.append((word, addr))
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, n - 1)), max_size=6))))
    return out, cuts


@settings(max_examples=300, deadline=None)
@given(programs(), st.sampled_from(["u54", "u54-lru"]), st.integers(1, 50))
def test_abstract_block_costs_bound_the_concrete_run(prog, model, seed) -> None:
    code, cuts = prog
    m = get_preset(model)
    instrs = [(decode(w, 0x9000_0000 + 4 * k), addr) for k, (w, addr) in enumerate(code)]
    # concrete
    dc = ConcreteCache(m.dcache, seed=seed, polluted=True)
    cst = PipeState()
    for ins, addr in instrs:
        dpen = 0
        if ins.is_mem:
            hit, wb = dc.access(addr // m.dcache.line, ins.cls.name == "STORE")
            dpen = 0 if hit else m.memory_latency + (m.writeback_latency if wb else 0)
        step(cst, ins, m, 0, dpen, (addr, addr + ins.mem_width), exact=True)
    # abstract, block by block
    must = MustCache.empty(m.dcache)
    res = PipeState().residual()
    total = 0
    bounds = [0, *cuts, len(instrs)]
    for lo, hi in zip(bounds, bounds[1:]):
        ast = PipeState.from_residual(join_residual(res, PipeState().residual()))
        for ins, addr in instrs[lo:hi]:
            dpen = 0
            if ins.is_mem:
                line = addr // m.dcache.line
                dpen = 0 if must.hit(line) else m.dcache_miss_penalty
                must = must.access(line)
            step(ast, ins, m, 0, dpen, (addr, addr + ins.mem_width), exact=False)
        total += ast.t_next
        res = ast.residual()
    assert total >= cst.t_next
