"""Line walks (microarch._Analysis.walk, docs/processor-model.md "Line
walks"): a loop whose only data accesses go through one induction pointer
advanced by less than a line pays per line, not per access; and the cases
where that must not apply (a stride of a line or more, an unknown stride,
a store to another unknown address in the body, a copy between two
buffers).  Every bound is checked against the concrete replays, including
the adversarial one-way replay that realises every conflict the analysis
must allow."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_symbolic_cache import _analyse, _observed
from wcet_helpers import build, needs_cc

N = 120          # words walked (the kernel's message length)
MISS = 300       # u54 data miss with write-back

SRC = """
unsigned long arena[4096];
unsigned long *volatile ptr_a = arena;
unsigned long *volatile ptr_b = arena;
volatile long step = 1;

unsigned long walk(void) {             /* one stream, 8-byte stride */
    unsigned long *p = ptr_a, s = 0;
    for (unsigned i = 0; i < 120; i++) s += p[i];
    return s;
}

unsigned long wide(void) {             /* a stride of a whole line */
    unsigned long *p = ptr_a, s = 0;
    for (unsigned i = 0; i < 30; i++) s += p[8 * i];
    return s;
}

unsigned long unknown_step(void) {     /* the stride is data */
    unsigned long *p = ptr_a, s = 0;
    long k = step;
    for (unsigned i = 0; i < 120; i++, p += k) s += *p;
    return s;
}

unsigned long with_store(void) {       /* another unknown address in the body */
    unsigned long *p = ptr_a, *q = ptr_b, s = 0;
    for (unsigned i = 0; i < 120; i++) { s += p[i]; *q = s; }
    return s;
}

void copy(void) {                      /* two streams: the message copy */
    unsigned long *src = ptr_a, *dst = ptr_b;
    for (unsigned i = 0; i < 120; i++) dst[i] = src[i];
}

void short_copy(void) {                /* too short for the copy rule to gain */
    unsigned long *src = ptr_a, *dst = ptr_b;
    for (unsigned i = 0; i < 4; i++) dst[i] = src[i];
}

void copy_twice(void) {                /* a second store in the body */
    unsigned long *src = ptr_a, *dst = ptr_b;
    for (unsigned i = 0; i < 120; i++) { dst[i] = src[i]; dst[i + 200] = src[i]; }
}

int main(void) { copy(); short_copy(); copy_twice(); return (int)(walk() + wide() + unknown_step() + with_store()); }
"""


@pytest.fixture(scope="module")
def elf(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("walks"), "walks", c_src=SRC)


def _patch(elf: Path, a: int, b: int) -> dict[str, bytes]:
    from kairos.wcet.emulator import load_elf
    arena = load_elf(elf).symbols["arena"][0]
    return {"ptr_a": (arena + a).to_bytes(8, "little"), "ptr_b": (arena + b).to_bytes(8, "little")}


def _categories(an, res, symbol: str) -> list[str]:
    f = an.program.function(symbol)
    return [c.data for b in sorted(f.blocks) for c in res.costs.classification((), b) if c.data is not None]


def _check_sound(elf: Path, symbol: str, bound: int) -> int:
    """The largest replayed cost over pointer placements that share sets,
    straddle lines, or alias; each within the bound."""
    worst = 0
    for a, b in ((0, 4096), (8, 4104), (56, 8192 + 56), (0, 0), (24, 2048)):
        _trace, obs = _observed(elf, symbol, "u54", _patch(elf, a, b))
        assert obs <= bound, (symbol, a, b, obs, bound)
        worst = max(worst, obs)
    return worst


@needs_cc
def test_single_stream_walk_pays_per_line(elf) -> None:
    """120 words through one pointer of unknown alignment: at most 16 lines
    (15 full ones plus a straddle), charged as a share per iteration
    (ceil(300 * 8 / 64) = 38) and 3 misses per entry, instead of 120 misses;
    and every replay stays within the bound."""
    from kairos.wcet.microarch import WALK
    an, res = _analyse(elf, "walk")
    _an, off = _analyse(elf, "walk", symbolic=False)
    assert WALK in _categories(an, res, "walk")
    assert res.bound <= off.bound - 80 * MISS
    assert res.bound <= N * 38 + 3 * MISS + N * 20 + 2000       # share + entry misses + the loop's own cycles
    worst = _check_sound(elf, "walk", res.bound)
    assert worst >= 15 * MISS                                   # the lines are really fetched


@needs_cc
@pytest.mark.parametrize("symbol", ["wide", "unknown_step", "with_store", "copy", "short_copy", "copy_twice"])
def test_walk_rule_does_not_apply(elf, symbol) -> None:
    """A stride of a line (every iteration a new line anyway), a stride that
    is data, a store through a second pointer in the body (it may refill
    the walk's set), and copies between two buffers: no per-line charge;
    only the 120-word copy gets the copy rule; the replays stay within the
    bound."""
    from kairos.wcet.microarch import COPY, WALK
    an, res = _analyse(elf, symbol)
    cats = _categories(an, res, symbol)
    assert WALK not in cats
    assert (COPY in cats) == (symbol == "copy")
    _check_sound(elf, symbol, res.bound)


@needs_cc
def test_copy_between_buffers_in_the_same_sets_misses_at_every_access(elf) -> None:
    """Why the rule needs a single stream: with the source and destination
    a multiple of 4 KiB apart (two page-aligned IPC buffers at the same
    offset), every line of one shares its set with a line of the other.  In
    the one-way view (random replacement, docs/processor-model.md §3) each
    refill of one may evict the other, and the adversarial replay does so:
    the copy then costs about two misses per word, far more than a charge
    per line of each stream (2 x 16 lines) would allow."""
    an, res = _analyse(elf, "copy")
    _trace, obs = _observed(elf, "copy", "u54", _patch(elf, 0, 4096))
    assert obs <= res.bound
    assert obs > 2 * 16 * MISS + N * 38 * 2 + 6 * MISS + 2000
    assert obs >= 2 * N * MISS * 3 // 4


@needs_cc
def test_copy_pays_a_clean_victim_per_forced_miss(elf) -> None:
    """The copy rule (docs/processor-model.md "Copies"): a source line
    missed again was evicted by the store just before it, and was clean
    (refilled since it was last written, except once per line), so that
    store wrote nothing back: 2 x 150 + 150 per word plus a share per line,
    instead of 2 x 300.  Below the bound without the rule, above every
    replay, the adversarial one of buffers in the same sets included."""
    from kairos.wcet import microarch
    an, res = _analyse(elf, "copy")
    worst = _check_sound(elf, "copy", res.bound)
    assert worst >= 2 * N * MISS * 3 // 4                       # the ping-pong is replayed
    orig = microarch._Analysis.copy
    try:
        microarch._Analysis.copy = lambda self, ctx, header: None
        _an, without = _analyse(elf, "copy")
    finally:
        microarch._Analysis.copy = orig
    assert res.bound <= without.bound - (N * (600 - 507) - 1650)   # 93 a word, less the entry charge
    assert res.bound >= N * (2 * 150 + 150)


# Two pointers the test patches (ptr_a, ptr_b), an arena they point into,
# and f's first steps: t0 = &ptr_a, t5 = ptr_a.
_PREAMBLE = """
    .data
    .balign 64
ptr_a: .dword 0
ptr_b: .dword 0
    .bss
    .balign 4096
arena: .space 32768
    .text
    .globl main
main:
    ret
    .globl f
f:
    la   t0, ptr_a
    ld   t5, 0(t0)
"""


def _walk_asm(stride: int, offsets: list[int], n: int) -> str:
    body = "".join(f"    ld   t1, {o}(t5)\n    add  a0, a0, t1\n" for o in offsets)
    return _PREAMBLE + f"""    li   t3, {n}
    li   a0, 0
1:
{body}    addi t5, t5, {stride}
    addi t3, t3, -1
    bnez t3, 1b
    ret
"""


@needs_cc
@pytest.mark.parametrize("stride, offsets", [(8, [0]), (16, [0, 8]), (24, [0, 16]), (-8, [0]), (40, [0, 16]),
                                             (56, [0])])
def test_walk_strides_and_offsets_stay_sound(tmp_path: Path, stride: int, offsets: list[int]) -> None:
    """Strides below a line, forwards and backwards, with one or two
    accesses an iteration: the rule applies and every replay (seeded and
    adversarial, at aligned and misaligned starts) stays within the bound."""
    from kairos.wcet.microarch import WALK
    elf = build(tmp_path, "w", asm_src=_walk_asm(stride, offsets, 100))
    an, res = _analyse(elf, "f")
    assert WALK in _categories(an, res, "f")
    start = 16384 if stride > 0 else 16384 + 100 * 8 * 8
    for a in (0, 8, 24, 56):
        _trace, obs = _observed(elf, "f", "u54", _patch(elf, start + a, 0))
        assert obs <= res.bound, (stride, offsets, a, obs, res.bound)


def _copy_asm(stride: int, n: int) -> str:
    return _PREAMBLE + f"""    ld   t6, 8(t0)
    li   t3, {n}
1:
    ld   t1, 0(t5)
    sd   t1, 0(t6)
    addi t5, t5, {stride}
    addi t6, t6, {stride}
    addi t3, t3, -1
    bnez t3, 1b
    ret
"""


@needs_cc
@pytest.mark.parametrize("stride", [8, 16, -8])
def test_copy_rule_stays_sound(tmp_path: Path, stride: int) -> None:
    """Copies forwards and backwards, with the buffers in the same sets,
    overlapping by a word, a line apart or aliased: every replay (seeded and
    adversarial) stays within the bound the copy rule gives."""
    from kairos.wcet.microarch import COPY
    elf = build(tmp_path, "c", asm_src=_copy_asm(stride, 100))
    an, res = _analyse(elf, "f")
    assert COPY in _categories(an, res, "f")
    start = 8192 if stride > 0 else 8192 + 100 * abs(stride)
    for a, b in ((0, 4096), (8, 4096 + 8), (0, 8), (8, 0), (0, 64), (0, 0), (56, 4096 + 56)):
        _trace, obs = _observed(elf, "f", "u54", _patch(elf, start + a, start + b))
        assert obs <= res.bound, (stride, a, b, obs, res.bound)
