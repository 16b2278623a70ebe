"""Object loops (processor-model.md "Object loops", ``microarch.object_loop``):
a loop whose every data access goes through one small object of an object
fact (a scheduling context and its refills) misses each of the object's
lines at most once per entry; with ``OBJECT_LOOP_OTHERS`` an access of no
symbolic base (a global) in it pays its own miss and one more for the
object's line it may evict (without the switch such a loop is no object
loop); with ``OBJECT_LOOP_CALLS`` the loop may call functions whose accesses
are through the same object (without it, a call ends the rule); another
pointer in the callee ends it either way.  The replays, the adversarial
one-way replay with the global or the callee's object line in a set of the
object's lines included, never exceed the bound."""

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


def _bound(elf: Path, on: bool, entry: str = "walkobj", others: bool = True, calls: bool = True,
           facts: str = FACTS):
    from kairos.wcet import driver, microarch
    old = microarch.OBJECT_LOOPS, microarch.OBJECT_LOOP_OTHERS, microarch.OBJECT_LOOP_CALLS
    microarch.OBJECT_LOOPS, microarch.OBJECT_LOOP_OTHERS, microarch.OBJECT_LOOP_CALLS = on, others, calls
    try:
        an = driver.run(str(elf), [entry], sp0="__stack_top", infeasible_paths=False,
                        annotations=annotations.parse(facts, "facts.toml"))
    finally:
        microarch.OBJECT_LOOPS, microarch.OBJECT_LOOP_OTHERS, microarch.OBJECT_LOOP_CALLS = old
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
def test_a_loop_touching_something_else_is_not_an_object_loop_without_others(tmp_path: Path) -> None:
    from kairos.wcet import microarch as ma
    elf = build(tmp_path, "objloop", asm_src=PROGRAM.format(extra=OTHER))
    an, on = _bound(elf, True, others=False)
    _an, off = _bound(elf, False, others=False)
    assert on.bound == off.bound
    f = an.program.function("walkobj")
    assert ma.OBJ not in {c.data for b in f.blocks for c in on.costs.classification((), b)}


@needs_cc
def test_a_global_in_an_object_loop_pays_twice(tmp_path: Path) -> None:
    """With ``OBJECT_LOOP_OTHERS``: the object's lines once per entry, and
    the global's store, which may miss every iteration (the object's loads
    may evict it), two misses each time: its own and the object's line it
    may evict."""
    from kairos.wcet import microarch as ma
    elf = build(tmp_path, "objloop", asm_src=PROGRAM.format(extra=OTHER))
    an, on = _bound(elf, True)
    _an, without = _bound(elf, True, others=False)
    assert on.bound < without.bound
    f = an.program.function("walkobj")
    cats = [c.data for b in sorted(f.blocks) for c in on.costs.classification((), b) if c.data is not None]
    assert ma.OBJ in cats and cats.count(ma.OBJ) == 4          # the object's four accesses
    known = [c for b in sorted(f.blocks) for c in on.costs.classification((), b)
             if c.data is not None and c.data != ma.OBJ]
    assert [c.data for c in known] == [ma.NC] and known[0].penalty >= 2 * 300


# The global in the set of the object's line 1 (the header field at 64 and
# the first two slots): the adversarial replay ping-pongs them.
PLACED = PROGRAM.replace("""g:  .dword 0
    .bss
    .balign 128
obj: .space 256""", """    .bss
    .balign 4096
obj: .space 256
    .space 4096 - 256 + 64
g:  .space 8""")

# walkcall(obj, n): the loop calls touch(obj, i), which reads and writes the
# slot obj + 96 + 16 * (i & 7) and reads the field at 64; {extra} in touch.
CALLING = """
    .data
    .balign 128
    .type scp, @object
    .size scp, 8
scp: .dword obj
    .bss
    .balign 4096
obj: .space 256
    .space 4096 - 256 + 128
other: .space 64
    .text
    .globl main
main:
    addi sp, sp, -16
    sd   ra, 8(sp)
    la   t0, scp
    ld   a0, 0(t0)
    li   a1, 24
    call walkcall
    ld   ra, 8(sp)
    addi sp, sp, 16
    ret
    .globl walkcall
walkcall:
    addi sp, sp, -32
    sd   ra, 24(sp)
    sd   s0, 16(sp)
    sd   s1, 8(sp)
    sd   s2, 0(sp)
    mv   s0, a0
    mv   s1, a1
    li   s2, 0
1:  mv   a0, s0
    mv   a1, s2
    call touch
    addi s2, s2, 3
    blt  s2, s1, 1b
    ld   ra, 24(sp)
    ld   s0, 16(sp)
    ld   s1, 8(sp)
    ld   s2, 0(sp)
    addi sp, sp, 32
    ret
    .globl touch
touch:
    andi t0, a1, 7
    slli t0, t0, 4
    addi t0, t0, 96
    add  t1, a0, t0
    ld   t3, 0(t1)
    ld   t4, 8(t1)
    add  t3, t3, t4
    sd   t3, 0(t1)
    lw   t5, 64(a0)
{extra}
    ret
    .data
optr: .dword other
"""
# a second pointer (loaded from memory): not the object
SECOND = """    la   t6, optr
    ld   t6, 0(t6)
    sd   t5, 0(t6)"""

CALL_FACTS = """
[[loop]]
function = "walkcall"
max = 8

[[object]]
functions = ["walkcall", "touch"]
argument = 1
size = "224"
align = 128
note = "test: obj is 128-byte aligned, slots within 224 bytes"
"""


@needs_cc
def test_an_object_loop_may_call_a_function_of_the_same_object(tmp_path: Path) -> None:
    elf = build(tmp_path, "objcall", asm_src=CALLING.format(extra=""))
    _an, on = _bound(elf, True, "walkcall", facts=CALL_FACTS)
    _an, off = _bound(elf, True, "walkcall", calls=False, facts=CALL_FACTS)
    assert on.bound < off.bound
    # lines 1, 2 and 3 of the 128-aligned object, once per entry
    assert on.result.loop_penalties - off.result.loop_penalties == 3 * 300


@needs_cc
def test_a_callee_with_another_pointer_ends_the_rule(tmp_path: Path) -> None:
    elf = build(tmp_path, "objcall", asm_src=CALLING.format(extra=SECOND))
    _an, on = _bound(elf, True, "walkcall", facts=CALL_FACTS)
    _an, off = _bound(elf, True, "walkcall", calls=False, facts=CALL_FACTS)
    assert on.bound == off.bound


@needs_cc
@pytest.mark.parametrize("src,facts", [(PROGRAM.format(extra=""), FACTS), (PROGRAM.format(extra=OTHER), FACTS),
                                       (PLACED.format(extra=OTHER), FACTS),
                                       (CALLING.format(extra=""), CALL_FACTS),
                                       (CALLING.format(extra=SECOND), CALL_FACTS)],
                         ids=["object", "global", "global-same-set", "callee", "callee-second-pointer"])
def test_replay_never_above_the_bound(tmp_path: Path, src: str, facts: str) -> None:
    from test_symbolic_cache import _observed
    from kairos.wcet.trace import block_path, path_bound
    elf = build(tmp_path, "objloop", asm_src=src)
    an, res = _bound(elf, True, "main", facts=facts)
    trace, obs = _observed(elf, "main", "u54")
    assert obs <= path_bound(block_path(an.program, "main", trace), res.costs) <= res.bound
