"""Argument names (processor-model.md §3 "Argument names",
``microarch._Analysis.canonical``): an argument register of a context
entered from one call site is the caller's value, so the lines the caller
touched through it hit in the callee.  Where the callee gets another value
(a second pointer, an unknown index added) its accesses are a new base
again, and the replay never exceeds the bound."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wcet_helpers import build, needs_cc

# ``ptr`` and ``ptr2`` hold pointers of unknown value to the analysis.
# main reads word 0 of *ptr, then calls ``use`` with a0 = ptr + {add};
# ``use`` reads {uoff}(a0), i.e. byte {add} + {uoff} of the object.  The
# second call passes *ptr2 (another value: its lines are not main's) or,
# with {second} = 1, ptr + an index of unknown value.
PROGRAM = """
    .data
    .balign 64
    .type ptr, @object
    .size ptr, 8
ptr:  .dword obj
    .type ptr2, @object
    .size ptr2, 8
ptr2: .dword obj2
    .type idx, @object
    .size idx, 8
idx:  .dword 0
    .bss
    .balign 4096
obj:  .space 2048
obj2: .space 2048
    .text
    .globl main
main:
    addi sp, sp, -16
    sd   ra, 8(sp)
    sd   s0, 0(sp)
    la   t0, ptr
    ld   s0, 0(t0)
    ld   t1, 0(s0)          # first line of *ptr
    addi a0, s0, {add}
    call use                # the same value: its line hits in use
    .if {second}
    la   t0, idx
    ld   t2, 0(t0)
    add  a0, s0, t2         # ptr + an unknown index: a new value
    .else
    la   t0, ptr2
    ld   a0, 0(t0)          # another pointer
    .endif
    call use
    ld   s0, 0(sp)
    ld   ra, 8(sp)
    addi sp, sp, 16
    ret
    .globl use
use:
    ld   a1, {uoff}(a0)
    mv   a0, a1
    ret
"""


def _analyse(elf: Path, names: bool) -> tuple[Any, dict[str, Any]]:
    """main's analysis with argument names on or off, and its miss census."""
    from kairos.wcet import driver, microarch, report
    old = microarch.ARG_NAMES
    microarch.ARG_NAMES = names
    try:
        an = driver.run(str(elf), ["main"], sp0="__stack_top", infeasible_paths=False, census=True)
    finally:
        microarch.ARG_NAMES = old
    return an, report.miss_census(an.results[0], an)


def _census(elf: Path, names: bool):
    an, c = _analyse(elf, names)
    use = an.image.symbol("use").addr
    in_use = [a for a in c["accesses"] if use <= int(a["addr"], 16) < use + 16]
    return an.results[0].bound, c, in_use


@needs_cc
@pytest.mark.parametrize("add, uoff", [(0, 0), (8, -8), (16, -16)])
def test_the_callee_hits_the_callers_line(tmp_path: Path, add: int, uoff: int) -> None:
    """Byte 0 of *ptr, read by main, read again by use through a0 = ptr +
    add at offset -add: the first call's read hits; the second call (another
    pointer) still misses once.  Without the rule both calls miss."""
    elf = build(tmp_path, "args", asm_src=PROGRAM.format(add=add, uoff=uoff, second=0))
    on, c_on, use_on = _census(elf, True)
    off, c_off, use_off = _census(elf, False)
    # use's load, over its two contexts: one miss (the second pointer) with
    # the rule, two without
    assert sum(a["misses"] for a in use_on) == 1
    assert sum(a["misses"] for a in use_off) == 2
    assert off - on == c_on["miss_penalty"]


@needs_cc
def test_another_byte_of_the_object_is_not_a_hit(tmp_path: Path) -> None:
    """use reads byte 64 of the object (a0 = ptr + 8, offset 56): another
    line than main's byte 0, so it misses in both calls."""
    elf = build(tmp_path, "args", asm_src=PROGRAM.format(add=8, uoff=56, second=0))
    _b, _c, use = _census(elf, True)
    assert sum(a["misses"] for a in use) == 2


@needs_cc
def test_an_unknown_index_makes_a_new_value(tmp_path: Path) -> None:
    """The second call passes ptr + an index of unknown value: not main's
    name, so that call's read misses (the first still hits)."""
    elf = build(tmp_path, "args", asm_src=PROGRAM.format(add=0, uoff=0, second=1))
    _b, _c, use = _census(elf, True)
    assert sum(a["misses"] for a in use) == 1
    _b, _c, use_off = _census(elf, False)
    assert sum(a["misses"] for a in use_off) == 2


@needs_cc
@pytest.mark.parametrize("add, uoff, second", [(0, 0, 0), (8, -8, 1), (8, 56, 0)])
def test_replay_never_above_the_bound(tmp_path: Path, add: int, uoff: int, second: int) -> None:
    from test_symbolic_cache import _observed
    from kairos.wcet import driver
    from kairos.wcet.trace import block_path, path_bound
    elf = build(tmp_path, "args", asm_src=PROGRAM.format(add=add, uoff=uoff, second=second))
    an = driver.run(str(elf), ["main"], sp0="__stack_top")
    trace, obs = _observed(elf, "main", "u54")
    assert obs <= path_bound(block_path(an.program, "main", trace), an.results[0].costs) <= an.results[0].bound


# Return names: ``get`` loads *ptr, reads word 0 through it and returns it;
# main reads word 0 of what it got.  With {two} = 1 ``get`` returns one of
# two pointers (its returns differ): no name, main's read misses again.
RETURNED = """
    .data
    .balign 64
    .type ptr, @object
    .size ptr, 8
ptr:  .dword obj
    .type ptr2, @object
    .size ptr2, 8
ptr2: .dword obj2
    .type sel, @object
    .size sel, 8
sel:  .dword 0
    .bss
    .balign 4096
obj:  .space 2048
obj2: .space 2048
    .text
    .globl main
main:
    addi sp, sp, -16
    sd   ra, 8(sp)
    call get
    ld   a1, 0(a0)          # the callee's line, through the returned value
    ld   ra, 8(sp)
    addi sp, sp, 16
    ret
    .globl get
get:
    la   t0, ptr
    ld   a0, 0(t0)
    ld   t1, 0(a0)          # first line of *ptr
    .if {two}
    la   t2, sel
    ld   t2, 0(t2)
    beqz t2, 1f
    la   t0, ptr2
    ld   a0, 0(t0)
1:
    .endif
    ret
"""


def _main_read(elf: Path, names: bool) -> float:
    an, c = _analyse(elf, names)
    main_ = an.image.symbol("main").addr
    get = an.image.symbol("get").addr
    return sum(a["misses"] for a in c["accesses"] if main_ <= int(a["addr"], 16) < get
               and any(r.startswith("symbolic") for r in a["reasons"]))


@needs_cc
def test_the_caller_hits_the_line_the_callee_read_through_what_it_returns(tmp_path: Path) -> None:
    elf = build(tmp_path, "ret", asm_src=RETURNED.format(two=0))
    assert _main_read(elf, True) == 0
    assert _main_read(elf, False) == 1


@needs_cc
def test_a_callee_returning_one_of_two_values_gives_no_name(tmp_path: Path) -> None:
    elf = build(tmp_path, "ret", asm_src=RETURNED.format(two=1))
    assert _main_read(elf, True) == 1


@needs_cc
@pytest.mark.parametrize("two", [0, 1])
def test_returned_replay_never_above_the_bound(tmp_path: Path, two: int) -> None:
    from test_symbolic_cache import _observed
    from kairos.wcet import driver
    from kairos.wcet.trace import block_path, path_bound
    elf = build(tmp_path, "ret", asm_src=RETURNED.format(two=two))
    an = driver.run(str(elf), ["main"], sp0="__stack_top")
    trace, obs = _observed(elf, "main", "u54")
    assert obs <= path_bound(block_path(an.program, "main", trace), an.results[0].costs) <= an.results[0].bound
