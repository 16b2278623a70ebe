"""Loop counters in memory across calls (``bounds.store_ranges``,
``smtloops.LoopQuery._keep_unwritten``): a loop whose counter lives in a
global and whose body calls a function is bounded when the callee provably
stores only elsewhere; a callee that may write the counter (itself, or
through a pointer of unknown value) leaves the loop unbounded, and the
bound found is never below a replayed run."""

from __future__ import annotations

from pathlib import Path

import pytest

from wcet_helpers import build, needs_cc

pytestmark = pytest.mark.usefixtures("private_solver_cache")

# Three loops over the global `counter`, each around one call: `work`
# stores through its first argument (a known address at the call) and to
# the global `total`; `bump` writes `counter`; `anywhere` stores through a
# pointer loaded from memory.
PROGRAM = r"""
int counter;
int total;
int other[4];
int *volatile where = &other[1];

__attribute__((noinline)) void work(int *out, int v)
{
    out[0] = v * 3;
    total += v;
}

__attribute__((noinline)) void bump(int v)
{
    counter += v;
}

__attribute__((noinline)) void anywhere(int v)
{
    *where = v;
}

__attribute__((noinline)) int known(void)
{
    for (counter = 0; counter < 10; counter++)
        work(&other[0], counter);
    return total;
}

__attribute__((noinline)) int counter_written(void)
{
    for (counter = 0; counter < 10; counter++)
        bump(0);
    return total;
}

__attribute__((noinline)) int unknown_store(void)
{
    for (counter = 0; counter < 10; counter++)
        anywhere(counter);
    return total;
}

int main(void)
{
    return known() + counter_written() + unknown_store();
}
"""


def _loop_bound(elf: Path, func: str) -> int | None:
    from kairos.wcet import bounds, cfg, loops
    from kairos.wcet.elfimage import ElfImage
    image = ElfImage(str(elf))
    program = cfg.build_program(image, [func])
    f = program.functions[image.symbol(func).addr]
    forest = loops.find_loops(f)
    (loop,) = forest.loops
    b = bounds.BoundAnalysis(program).auto_bound(forest, loop)
    return None if b is None else b.max


@needs_cc
def test_summaries_name_what_each_callee_stores(tmp_path: Path) -> None:
    from kairos.wcet import bounds, cfg
    from kairos.wcet.elfimage import ElfImage
    elf = build(tmp_path, "cw", c_src=PROGRAM)
    image = ElfImage(str(elf))
    program = cfg.build_program(image, ["main"])
    other, total, counter = (image.symbol(n).addr for n in ("other", "total", "counter"))
    work, bump, anywhere = (image.symbol(n).addr for n in ("work", "bump", "anywhere"))
    assert bounds.store_ranges(program, work, {10: other}) == tuple(sorted(((other, other + 4), (total, total + 4))))
    assert bounds.store_ranges(program, work, {}) is None          # the argument unknown
    assert bounds.store_ranges(program, bump, {}) == ((counter, counter + 4),)
    assert bounds.store_ranges(program, anywhere, {}) is None      # a loaded pointer


@needs_cc
def test_a_callee_storing_elsewhere_keeps_the_counter(tmp_path: Path) -> None:
    elf = build(tmp_path, "cw", c_src=PROGRAM)
    assert _loop_bound(elf, "known") == 10


@needs_cc
@pytest.mark.parametrize("func", ["counter_written", "unknown_store"])
def test_a_callee_that_may_write_the_counter_leaves_it_unknown(tmp_path: Path, func: str) -> None:
    elf = build(tmp_path, "cw", c_src=PROGRAM)
    assert _loop_bound(elf, func) is None


@needs_cc
def test_replay_never_above_the_bound(tmp_path: Path) -> None:
    from test_symbolic_cache import _observed
    from kairos.wcet import driver
    from kairos.wcet.trace import block_path, path_bound
    elf = build(tmp_path, "cw", c_src=PROGRAM)
    an = driver.run(str(elf), ["known"], sp0="__stack_top")
    trace, obs = _observed(elf, "known", "u54")
    assert obs <= path_bound(block_path(an.program, "known", trace), an.results[0].costs) <= an.results[0].bound
