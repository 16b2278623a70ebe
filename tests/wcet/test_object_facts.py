"""Object facts (``[[object]]``, docs/wcet.md "Data addresses"): an address
computed as an argument plus an index stays within the argument's object,
so a miss through it cannot evict the lines of that object's header (one
4 KiB way holds both in different sets).  Checked: the hits it gives, the
cases where it must not apply, the replay never above the bound, and the
annotation's errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from kairos.wcet import annotations, cache, microarch
from kairos.wcet.errors import WcetError
from wcet_helpers import build, needs_cc

LINE = 64

# touch(obj, i): the header words at 64/68, a ring slot obj + 96 + 16 * i,
# the header again, the slot again.  chase(obj): the same through a pointer
# loaded from memory (not an index: the fact says nothing about it).
# spread(obj, i): the slot at obj + 96 + 4096 * i (annotated size too large
# for one way).  zext(obj, i): a slot at obj + 96 + 8 * i, only 8-aligned (as its accesses).
PROGRAM = """
    .data
    .balign 64
args: .dword 0, 0, 0
    .bss
    .balign 4096
arena: .space 65536
    .text
    .globl main
main:
    ret
    .globl touch
touch:
    lw   t0, 64(a0)
    lw   t1, 68(a0)
    slli a5, a1, 32
    srli a5, a5, 28
    addi a5, a5, 96
    add  a5, a5, a0
    ld   t2, 0(a5)
    sw   t1, 64(a0)
    sw   t0, 68(a0)
    sd   t2, 8(a5)
    ret
    .globl chase
chase:
    lw   t0, 64(a0)
    lw   t1, 68(a0)
    la   t3, args
    ld   a5, 16(t3)
    ld   t2, 0(a5)
    sw   t1, 64(a0)
    sw   t0, 68(a0)
    ret
    .globl spread
spread:
    lw   t0, 64(a0)
    lw   t1, 68(a0)
    slli a5, a1, 12
    add  a5, a5, a0
    ld   t2, 0(a5)
    sw   t1, 64(a0)
    sw   t0, 68(a0)
    ret
    .globl zext
zext:
    lw   t0, 64(a0)
    lw   t1, 68(a0)
    slli a5, a1, 32
    srli a5, a5, 29
    add  a5, a5, a0
    ld   t2, 96(a5)
    ld   t3, 104(a5)
    ret
    .globl run
run:
    addi sp, sp, -16
    sd   ra, 0(sp)
    la   t0, args
    ld   a0, 0(t0)
    ld   a1, 8(t0)
    call touch
    la   t0, args
    ld   a0, 0(t0)
    call chase
    la   t0, args
    ld   a0, 0(t0)
    ld   a1, 8(t0)
    call spread
    la   t0, args
    ld   a0, 0(t0)
    ld   a1, 8(t0)
    call zext
    ld   ra, 0(sp)
    addi sp, sp, 16
    ret
"""


def _facts(text: str) -> annotations.Annotations:
    return annotations.parse(text, "facts.toml")


FACT = """
[[object]]
functions = ["touch", "chase", "spread", "zext"]
argument = 1
size = "96 + 16 * 8"
note = "test"
"""


def _run(elf: Path, ann: annotations.Annotations | None):
    from kairos.wcet import driver
    an = driver.run(str(elf), ["run"], sp0="__stack_top", annotations=ann)
    return an, an.results[0]


def _header_rewrites(an, res, name: str) -> list[str]:
    """Categories of the two header stores after the indexed access."""
    f = an.program.function(name)
    out = []
    for ctx, g in an.program.contexts("run"):
        if g.entry != f.entry:
            continue
        for b in sorted(g.blocks):
            for c in res.costs.classification(ctx, b):
                ins = next(i for i in g.blocks[b].instrs if i.addr == c.addr)
                if ins.mnemonic == "sw":
                    out.append(c.data)
    return out


@needs_cc
def test_header_lines_survive_an_indexed_access_of_the_same_object(tmp_path: Path) -> None:
    elf = build(tmp_path, "objfact", asm_src=PROGRAM)
    an0, res0 = _run(elf, None)
    an1, res1 = _run(elf, _facts(FACT))
    assert _header_rewrites(an0, res0, "touch") == [microarch.SYM, microarch.SYM]
    assert _header_rewrites(an1, res1, "touch") == ["always-hit", "always-hit"]
    # The fact is reported as trusted.
    assert any(w.startswith("trusted: facts.toml object #1") for w in an1.warnings)
    # At least the header line(s) again and the slot's store are saved.
    assert res1.bound <= res0.bound - 2 * 300


@needs_cc
def test_the_fact_does_not_apply_where_it_must_not(tmp_path: Path) -> None:
    """A pointer loaded from the object (chase) is not an index; a slot
    reached by an index of 4 KiB steps (spread) is annotated with a size
    beyond one way; another argument or another function is not covered."""
    elf = build(tmp_path, "objfact", asm_src=PROGRAM)
    big = FACT.replace('size = "96 + 16 * 8"', "size = 65536")
    for text in (FACT, big):
        an, res = _run(elf, _facts(text))
        assert _header_rewrites(an, res, "chase") == [microarch.SYM, microarch.SYM]
    an, res = _run(elf, _facts(big))
    assert _header_rewrites(an, res, "spread") == [microarch.SYM, microarch.SYM]
    assert _header_rewrites(an, res, "touch") == [microarch.SYM, microarch.SYM]
    for text in (FACT.replace("argument = 1", "argument = 2"),
                 FACT.replace('functions = ["touch", "chase", "spread", "zext"]', 'functions = ["chase"]')):
        an, res = _run(elf, _facts(text))
        assert _header_rewrites(an, res, "touch") == [microarch.SYM, microarch.SYM]


@needs_cc
@pytest.mark.parametrize("model", ["u54", "u54-lru"])
@pytest.mark.parametrize("index", [0, 7])
def test_replay_never_above_the_bound(tmp_path: Path, model: str, index: int) -> None:
    """The object 64-byte aligned as the fact says, its slot at each end of
    the ring, another pointer in the same sets; the adversarial
    direct-mapped replay included (test_symbolic_cache.adversarial)."""
    from test_symbolic_cache import _observed
    from kairos.wcet import driver
    from kairos.wcet.emulator import load_elf
    from kairos.wcet.trace import block_path, path_bound
    elf = build(tmp_path, "objfact", asm_src=PROGRAM)
    arena = load_elf(elf).symbols["arena"][0]
    obj = arena + 0x2000
    other = arena + 0x3000                      # the same sets as the object
    args = obj.to_bytes(8, "little") + index.to_bytes(8, "little") + other.to_bytes(8, "little")
    an = driver.run(str(elf), ["run"], model_name=model, sp0="__stack_top", annotations=_facts(ALIGNED))
    res = an.results[0]
    trace, obs = _observed(elf, "run", model, {"args": args})
    assert obs <= path_bound(block_path(an.program, "run", trace), res.costs) <= res.bound


ALIGNED = FACT.replace("argument = 1", "argument = 1\nalign = 64")


def _block_costs(an, res, name: str) -> list[int]:
    f = an.program.function(name)
    return [res.costs.cost(ctx, b) for ctx, g in an.program.contexts("run") if g.entry == f.entry
            for b in sorted(g.blocks)]


@needs_cc
def test_a_known_alignment_counts_the_lines_a_run_really_touches(tmp_path: Path) -> None:
    """With the object 64-byte aligned, the header words 64/68 are one line
    and the slot obj + 96 + 16 * i (16-aligned: the index is shifted by 4)
    is one line; without it each pair may straddle a line boundary.  A
    slot only as aligned as its accesses (zext: 8 * i) gains nothing."""
    elf = build(tmp_path, "objfact", asm_src=PROGRAM)
    an0, res0 = _run(elf, _facts(FACT))
    an1, res1 = _run(elf, _facts(ALIGNED))
    assert sum(_block_costs(an1, res1, "touch")) <= sum(_block_costs(an0, res0, "touch")) - 2 * 300
    assert res1.bound <= res0.bound - 2 * 300
    z0, z1 = _block_costs(an0, res0, "zext"), _block_costs(an1, res1, "zext")
    # the header pair gains a line; the slot pair (8-aligned only) does not
    assert sum(z1) == sum(z0) - 300


def test_alignment_limits_the_positions_of_a_run() -> None:
    assert cache.run_misses((), [(0, 8), (8, 8)], LINE) == 2
    assert cache.run_misses((), [(0, 8), (8, 8)], LINE, (64, 0)) == 1
    assert cache.run_misses((), [(0, 8), (8, 8)], LINE, (16, 0)) == 1
    assert cache.run_misses((), [(0, 8), (8, 8)], LINE, (16, 8)) == 2
    # an alignment no position of the accesses fits: every access counts
    assert cache.run_misses((), [(4, 8)], LINE, (64, 0)) == 1
    assert cache.run_misses((), [(4, 8), (12, 8)], LINE, (64, 0)) == 2


def test_runs_keep_lines_of_one_object_only_within_a_way() -> None:
    """The domain: a miss through a base derived from the argument keeps
    the argument's lines within one way's span of the object, and nothing
    of another object."""
    root = ("c", ("a", 10))
    fam = {root: (root, None), "slot": (root, (0, 224)), "far": (root, (0, 8192)),
           "other": (("c", ("a", 11)), None)}
    runs = microarch._Runs((), LINE, cache.SAME_OBJECT_SPAN, fam.get)
    runs.access(root, 64, 72, 8)
    runs.access("other", 0, 8, 8)                 # another object: evicts the root's lines
    assert root not in runs.state
    runs.access(root, 64, 72, 8)
    runs.access("slot", 0, 8, 8)                  # same object, within a way: kept
    assert runs.access(root, 64, 72, 8) is True
    runs.access("far", 0, 8, 8)                   # same object, beyond a way: evicted
    assert root not in runs.state and "slot" not in runs.state


@pytest.mark.parametrize("text, msg", [
    ('[[object]]\nfunctions = []\nargument = 1\nsize = 8\n', "non-empty list"),
    ('[[object]]\nfunctions = ["f"]\nargument = 9\nsize = 8\n', "argument must be 1..8"),
    ('[[object]]\nfunctions = ["f"]\nargument = 1\nsize = 0\n', "size must be >= 1"),
    ('[[object]]\nfunctions = ["f"]\nargument = 1\n', "missing size"),
    ('[[object]]\nfunctions = ["f"]\nargument = 1\nsize = "n + 1"\n', "unknown parameter 'n'"),
    ('[[object]]\nfunctions = ["f"]\nargument = 1\nsize = 8\nbytes = 3\n', "unknown field(s) bytes"),
    ('[[object]]\nfunctions = ["f"]\nargument = 1\nsize = 8\nalign = 48\n', "align must be a power of two"),
])
def test_bad_object_facts_are_one_line_errors(text: str, msg: str) -> None:
    with pytest.raises(WcetError) as exc:
        annotations.parse(text, "facts.toml")
    assert msg in str(exc.value) and "\n" not in str(exc.value) and "facts.toml object #1" in str(exc.value)


@needs_cc
def test_a_fact_for_a_function_the_elf_lacks_is_reported(tmp_path: Path) -> None:
    elf = build(tmp_path, "objfact", asm_src=PROGRAM)
    an, _res = _run(elf, _facts(FACT.replace('"zext"]', '"zext", "gone"]')))
    assert "facts.toml object #1: no function gone in the ELF (fact unused there)" in an.warnings
    # switched off with the symbolic cache analysis: no fact is used or reported
    from kairos.wcet import driver
    off = driver.run(str(elf), ["run"], sp0="__stack_top", annotations=_facts(FACT), symbolic_cache=False)
    assert not any(w.startswith("trusted:") for w in off.warnings)
