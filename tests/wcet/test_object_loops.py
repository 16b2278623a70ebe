"""Object loops (processor-model.md "Object loops", ``microarch.object_loop``):
a loop whose every data access goes through one small object of an object
fact (a scheduling context and its refills) misses each of the object's
lines at most once per entry; a loop that also touches anything else (a
global) is not one, and the replay never exceeds the bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from kairos.wcet import annotations
from wcet_helpers import build, needs_cc

# walkobj(obj, n): reads and writes refill-like slots obj + 96 + 16 * i and a
# header field at 64, {extra} adds an access to something else.
PROGRAM = """
    .data
    .balign 128
    .type scp, @object
    .size scp, 8
scp: .dword obj
g:  .dword 0
    .bss
    .balign 128
obj: .space 256
    .text
    .globl main
main:
    addi sp, sp, -16
    sd   ra, 8(sp)
    la   t0, scp
    ld   a0, 0(t0)
    li   a1, 24
    call walkobj
    ld   ra, 8(sp)
    addi sp, sp, 16
    ret
    .globl walkobj
walkobj:
    li   t2, 0
1:  andi t0, t2, 7
    slli t0, t0, 4
    addi t0, t0, 96
    add  t1, a0, t0
    ld   t3, 0(t1)
    ld   t4, 8(t1)
    add  t3, t3, t4
    sd   t3, 0(t1)
    lw   t5, 64(a0)
{extra}
    addi t2, t2, 3
    blt  t2, a1, 1b
    ret
"""
OTHER = """    la   t6, g
    sd   t5, 0(t6)"""

FACTS = """
[[loop]]
function = "walkobj"
max = 8

[[object]]
functions = ["walkobj"]
argument = 1
size = "224"
align = 128
note = "test: obj is 128-byte aligned, slots within 224 bytes"
"""


def _bound(elf: Path, on: bool, entry: str = "walkobj"):
    from kairos.wcet import driver, microarch
    old = microarch.OBJECT_LOOPS
    microarch.OBJECT_LOOPS = on
    try:
        an = driver.run(str(elf), [entry], sp0="__stack_top", infeasible_paths=False,
                        annotations=annotations.parse(FACTS, "facts.toml"))
    finally:
        microarch.OBJECT_LOOPS = old
    return an, an.results[0]


@needs_cc
def test_an_object_loop_pays_the_objects_lines_per_entry(tmp_path: Path) -> None:
    from kairos.wcet import microarch as ma
    elf = build(tmp_path, "objloop", asm_src=PROGRAM.format(extra=""))
    an, on = _bound(elf, True)
    _an, off = _bound(elf, False)
    assert on.bound < off.bound
    f = an.program.function("walkobj")
    cats = {c.data for b in f.blocks for c in on.costs.classification((), b) if c.data is not None}
    assert ma.OBJ in cats
    # bytes 64..216 of a 128-aligned object: lines 1, 2 and 3, once per entry
    assert on.result.loop_penalties - off.result.loop_penalties == 3 * 300


@needs_cc
def test_a_loop_touching_something_else_is_not_an_object_loop(tmp_path: Path) -> None:
    from kairos.wcet import microarch as ma
    elf = build(tmp_path, "objloop", asm_src=PROGRAM.format(extra=OTHER))
    an, on = _bound(elf, True)
    _an, off = _bound(elf, False)
    assert on.bound == off.bound
    f = an.program.function("walkobj")
    assert ma.OBJ not in {c.data for b in f.blocks for c in on.costs.classification((), b)}


@needs_cc
@pytest.mark.parametrize("extra", ["", OTHER])
def test_replay_never_above_the_bound(tmp_path: Path, extra: str) -> None:
    from test_symbolic_cache import _observed
    from kairos.wcet.trace import block_path, path_bound
    elf = build(tmp_path, "objloop", asm_src=PROGRAM.format(extra=extra))
    an, res = _bound(elf, True, "main")
    trace, obs = _observed(elf, "main", "u54")
    assert obs <= path_bound(block_path(an.program, "main", trace), res.costs) <= res.bound
