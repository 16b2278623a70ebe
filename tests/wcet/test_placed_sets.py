"""Placed sets (processor-model.md §3 "Placed sets", ``microarch.sets_of``):
a symbolic access whose base's alignment is known to a way's worth of bits
(a [[pointer]] fact of 4096 or 2048) refills only the sets it may fall
into, so known lines in other sets stay guaranteed; an access that may
fall into a known line's set still removes it (the case where the rule
must not apply), and the replay never exceeds the bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from kairos.wcet import annotations
from wcet_helpers import build, needs_cc

# ``ptr`` (set 0 of a 4 KiB way) holds a pointer of unknown value to the
# analysis; ``g`` is a known line in set 5.  ``{off}`` is the offset of
# the store through the pointer: at 128 (set 2, or sets 2 and 34 with a
# 2048 alignment) it cannot evict g or ptr; at 320 (set 5) it may evict g.
PROGRAM = """
    .data
    .balign 4096
    .type ptr, @object
    .size ptr, 8
ptr: .dword obj
    .balign 64
    .space 256
g:  .dword 7
    .bss
    .balign 4096
obj: .space 4096
    .text
    .globl main
main:
    addi sp, sp, -16
    sd   ra, 8(sp)
    call placed
    ld   ra, 8(sp)
    addi sp, sp, 16
    ret
    .globl placed
placed:
    la   t0, ptr
    ld   a1, 0(t0)          # known line, set 0
    la   t1, g
    ld   a2, 0(t1)          # known line, set 5
    sd   a2, {off}(a1)      # symbolic: one line, in the sets its alignment allows
    ld   a3, 0(t1)          # g again
    ld   a4, 0(t0)          # ptr again
    add  a0, a3, a4
    ret
"""

FACT = """
[[pointer]]
variables = ["ptr"]
align = {align}
note = "test: obj is 4096-byte aligned"
"""


def _run(elf: Path, align: int | None, placed: bool = True):
    from kairos.wcet import driver, microarch
    ann = annotations.parse(FACT.format(align=align), "facts.toml") if align else None
    old = microarch.PLACED_SETS
    microarch.PLACED_SETS = placed
    try:
        an = driver.run(str(elf), ["placed"], sp0="__stack_top", annotations=ann, infeasible_paths=False,
                        census=True)
    finally:
        microarch.PLACED_SETS = old
    from kairos.wcet import report
    return an.results[0].bound, report.miss_census(an.results[0], an)


@needs_cc
@pytest.mark.parametrize("align", [4096, 2048])
def test_a_placed_store_keeps_known_lines_of_other_sets(tmp_path: Path, align: int) -> None:
    from kairos.wcet import microarch as ma
    elf = build(tmp_path, "placed", asm_src=PROGRAM.format(off=128))
    on, c_on = _run(elf, align)
    off, c_off = _run(elf, align, placed=False)
    # without the rule the store may evict g and ptr: two more misses
    assert {k: v["misses"] for k, v in c_off["by_reason"].items()} == \
        {ma.FIRST_TOUCH: 2, ma.SYM_FIRST: 1, ma.EVICTED: 2}
    assert {k: v["misses"] for k, v in c_on["by_reason"].items()} == {ma.FIRST_TOUCH: 2, ma.SYM_FIRST: 1}
    assert off - on == 2 * c_on["miss_penalty"]


@needs_cc
def test_the_rule_does_not_apply_where_it_must_not(tmp_path: Path) -> None:
    """The store may fall into g's set (offset 320, set 5): g misses again;
    ptr (set 0) stays.  Without a fact, the alignment is unknown: both go."""
    from kairos.wcet import microarch as ma
    elf = build(tmp_path, "placed", asm_src=PROGRAM.format(off=320))
    _b, c = _run(elf, 4096)
    assert {k: v["misses"] for k, v in c["by_reason"].items()} == \
        {ma.FIRST_TOUCH: 2, ma.SYM_FIRST: 1, ma.EVICTED: 1}
    g = next(a for a in c["accesses"] if a["reasons"].get(ma.EVICTED))
    assert g["source"] is not None
    elf2 = build(tmp_path / "nofact", "placed", asm_src=PROGRAM.format(off=128))
    _b, c2 = _run(elf2, None)
    assert c2["by_reason"][ma.EVICTED]["misses"] == 2


@needs_cc
@pytest.mark.parametrize("off", [128, 320])
def test_replay_never_above_the_bound(tmp_path: Path, off: int) -> None:
    from test_symbolic_cache import _observed
    from kairos.wcet import driver
    from kairos.wcet.trace import block_path, path_bound
    elf = build(tmp_path, "placed", asm_src=PROGRAM.format(off=off))
    an = driver.run(str(elf), ["main"], sp0="__stack_top",
                    annotations=annotations.parse(FACT.format(align=4096), "facts.toml"))
    trace, obs = _observed(elf, "main", "u54")
    assert obs <= path_bound(block_path(an.program, "main", trace), an.results[0].costs) <= an.results[0].bound


# An argument plus an index (``ValueInfo.derived_from``) with no object
# fact: the argument's alignment in its context (here the exact address of
# ``table``, 0 or 16 modulo 64) and the index's residue (a multiple of 32)
# place the 32-byte entry: one line at 0 modulo 32, two at 16.
INDEXED = """
    .data
    .balign 64
    .space {pad}
table: .space 1024
    .balign 8
    .type idx, @object
    .size idx, 8
idx: .dword 3
    .text
    .globl main
main:
    addi sp, sp, -16
    sd   ra, 8(sp)
    la   a0, table
    la   t0, idx
    ld   a1, 0(t0)
    call put
    ld   ra, 8(sp)
    addi sp, sp, 16
    ret
    .globl put
put:
    andi a1, a1, 255        # an index of known but wide range
    slli t0, a1, 5
    add  t1, a0, t0
    sd   zero, 0(t1)
    sd   zero, 8(t1)
    sd   zero, 16(t1)
    sd   zero, 24(t1)
    ret
"""


@needs_cc
@pytest.mark.parametrize("pad, lines", [(0, 1), (16, 2)])
def test_an_indexed_argument_keeps_the_arguments_alignment(tmp_path: Path, pad: int, lines: int) -> None:
    from test_symbolic_cache import _observed
    from kairos.wcet import driver, microarch as ma, report
    from kairos.wcet.trace import block_path, path_bound
    elf = build(tmp_path, "indexed", asm_src=INDEXED.format(pad=pad))
    an = driver.run(str(elf), ["main"], sp0="__stack_top", infeasible_paths=False, census=True)
    c = report.miss_census(an.results[0], an)
    put = an.image.symbol("put").addr
    sym = [a for a in c["accesses"] if put <= int(a["addr"], 16) < put + 32]
    assert [list(a["reasons"]) for a in sym] == [[ma.SYM_FIRST]]
    assert sym[0]["misses"] == lines
    trace, obs = _observed(elf, "main", "u54")
    assert obs <= path_bound(block_path(an.program, "main", trace), an.results[0].costs) <= an.results[0].bound
