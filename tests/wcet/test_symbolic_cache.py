"""The symbolic cache lines (accesses through pointers of unknown value,
cache.py "Symbolic lines", microarch._Runs): hand-computed cases of the
domain, the trap-entry pattern, device pointers, and random programs whose
concrete replay must never exceed the bound."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from kairos.wcet import cache
from wcet_helpers import build, needs_cc

LINE = 64


# -- the domain ---------------------------------------------------------------

def test_run_misses_counts_lines_for_the_worst_alignment() -> None:
    # 34 doubleword stores at offsets 8..272 (a trap frame): 6 lines when
    # the base sits 48 bytes into a line, never more.
    saves = [(o, 8) for o in range(8, 280, 8)]
    assert cache.run_misses((), saves, LINE) == 6
    # Two accesses 8 bytes apart may straddle a line boundary...
    assert cache.run_misses((), [(0, 8), (8, 8)], LINE) == 2
    # ...but not when both lie in a line-aligned 64-byte block of a
    # 64-byte-aligned base: offsets 0 and 56 of a base known to be
    # 64-aligned only through its accesses is not inferable, so 2 again.
    assert cache.run_misses((), [(0, 8), (56, 8)], LINE) == 2
    # Repeating an offset never misses twice.
    assert cache.run_misses((), [(16, 8), (16, 8), (16, 4)], LINE) == 1
    # Lines known cached at the start of the run cost nothing.
    assert cache.run_misses(((0, 64),), [(8, 8), (40, 8)], LINE) == 0
    # Misaligned accesses (no alignment fits): every access counts.
    assert cache.run_misses((), [(1, 8), (2, 8)], LINE) == 2


def test_intervals_merge_only_when_no_line_can_lie_between() -> None:
    iv = cache.add_interval((), 0, 8, LINE)
    iv = cache.add_interval(iv, 70, 78, LINE)        # gap of 62 bytes: one of the two lines
    assert iv == ((0, 78),)
    iv2 = cache.add_interval(((0, 8),), 72, 80, LINE)  # gap of 64 bytes: a line may lie between
    assert iv2 == ((0, 8), (72, 80))
    assert cache.covered(iv, 30, 38) and not cache.covered(iv2, 30, 38)


def test_same_base_lines_within_a_way_are_kept() -> None:
    iv = ((0, 64), (3000, 3008))
    assert cache.near(iv, 4100, 4108) == ((3000, 3008),)   # 0..4108 spans more than 63 lines
    assert cache.near(iv, 4000, 4008) == iv
    assert cache.near(iv, 4000, 4008, span=1024) == ((3000, 3008),)


def test_join_keeps_what_both_paths_guarantee() -> None:
    a = (("x", ((0, 64),)), ("y", ((0, 8),)))
    b = (("x", ((32, 128),)),)
    assert cache.sym_join(a, b) == (("x", ((32, 64),)),)


# -- whole analyses -----------------------------------------------------------

def _analyse(elf: Path, symbol: str, model: str = "u54", symbolic: bool = True):
    from kairos.wcet import driver
    an = driver.run(str(elf), [symbol], model_name=model, sp0="__stack_top", symbolic_cache=symbolic)
    return an, an.results[0]


def adversarial(model: str):
    """The u54 with its random L1s replaced by direct-mapped ones of the same
    sets: the behaviour of an LFSR that always evicts the way holding the
    program's last line of the set (the other ways keep the polluting
    lines).  It is one of the runs the u54 bound must cover, and the one
    that makes every possible conflict happen."""
    from dataclasses import replace
    from kairos.wcet.model import CacheConfig, get_preset
    m = get_preset(model)
    if m.dcache.policy != "random":
        return None
    one_way = lambda c: CacheConfig(c.sets * c.line, 1, c.line, "random")  # noqa: E731
    return replace(m, icache=one_way(m.icache), dcache=one_way(m.dcache))


def _observed(elf: Path, symbol: str, model: str, patches: dict[str, bytes] | None = None):
    """The trace and its replayed cycles: the maximum over the LFSR seeds
    and, for random replacement, the adversarial direct-mapped replay."""
    from kairos.wcet.emulator import load_elf, run_entry
    from kairos.wcet.model import get_preset
    from kairos.wcet.sim import replay
    prog = load_elf(elf)
    trace = run_entry(prog, symbol, patches or {})
    cycles = replay(trace, prog.memory, get_preset(model)).cycles
    adv = adversarial(model)
    if adv is not None:
        cycles = max(cycles, replay(trace, prog.memory, adv).cycles)
    return trace, cycles


TRAP_SAVE = """
    .data
    .balign 64
frame_ptr: .dword frame + 48
    .bss
    .balign 4096
frame: .space 512
    .text
    .globl main
main:
    ret
    .globl save
save:
    la   t0, frame_ptr
    ld   t6, 0(t0)
""" + "".join(f"    sd   x{r}, {8 * r}(t6)\n" for r in range(1, 31)) + """
    ld   a0, 8(t6)
    ld   a1, 240(t6)
    ret
"""


@needs_cc
def test_trap_frame_save_costs_its_lines_not_its_stores(tmp_path: Path) -> None:
    """30 stores and 2 loads through one pointer of unknown value: at most
    6 lines are new (the analysis does not know the pointer's alignment),
    instead of 32 misses; and the replay stays below the bound."""
    from kairos.wcet.microarch import SYM
    elf = build(tmp_path, "save", asm_src=TRAP_SAVE)
    an, res = _analyse(elf, "save")
    _an_off, res_off = _analyse(elf, "save", symbolic=False)
    _trace, obs = _observed(elf, "save", "u54")
    assert obs <= res.bound
    assert res.bound < res_off.bound - 20 * 300
    f = an.program.function("save")
    classes = [c.data for c in res.costs.classification((), f.entry) if c.data is not None]
    # Each store may be the first to touch its line (the alignment is
    # unknown); the loads are sure hits.  The block pays 6 misses for them,
    # one for the pointer's load and its I-cache misses (4 lines at most).
    assert classes.count(SYM) == 30 and classes[-2:] == ["always-hit", "always-hit"]
    assert res.costs.cost((), f.entry) <= 7 * 300 + 4 * 150 + 80
    assert res_off.costs.cost((), f.entry) >= 33 * 300


@needs_cc
def test_device_pointers_are_not_cached(tmp_path: Path) -> None:
    """A pointer loaded from a variable of type `volatile T *` may address a
    device: repeated accesses through it are not cache hits."""
    src = """
        static volatile unsigned *dev;
        static unsigned *mem;
        void set(volatile unsigned *d, unsigned *m) { dev = d; mem = m; }
        unsigned poll(void) { return dev[0] + dev[1] + dev[2] + mem[0] + mem[1] + mem[2]; }
        int main(void) { set(0, 0); return poll(); }
    """
    elf = build(tmp_path, "dev", c_src=src)
    from kairos.wcet import driver
    an = driver.run(str(elf), ["poll"], model_name="u54", sp0="__stack_top")
    res = an.results[0]
    cats = [c.data for b in an.program.function("poll").blocks
            for c in res.costs.classification((), b) if c.data is not None]
    assert cats.count("unknown-address") == 3          # dev[0..2]
    assert cats.count("symbolic-line") + cats.count("always-hit") == 3    # mem[0..2]


# -- random programs ----------------------------------------------------------

BASES = ["s1", "s2", "s3", "s4"]     # callee-saved: they survive calls of g


@st.composite
def random_program(draw):
    """A function that loads four pointers of unknown value from `ptrs`
    (patched per run to addresses in `arena`, chosen to collide in cache
    sets and to alias), then accesses through them, moves and reloads them,
    touches a global and its stack, branches on loaded data, selects one
    of two pointers by a branch, walks a pointer, and passes one to a
    function that accesses through it."""
    lines = ["    addi sp, sp, -48", "    sd ra, 0(sp)"] + [f"    sd {b}, {8 * i + 8}(sp)" for i, b in enumerate(BASES)]
    lines += ["    la t0, ptrs"] + [f"    ld {b}, {8 * i}(t0)" for i, b in enumerate(BASES)]
    n = draw(st.integers(5, 40))
    label = 0
    for _ in range(n):
        kind = draw(st.sampled_from(["ld", "sd", "lw", "sw", "lbu", "sb"] * 4 +
                                    ["reload", "addi", "mv", "global", "branch", "select", "walk", "call"]))
        b = draw(st.sampled_from(BASES))
        if kind in ("ld", "sd", "lw", "sw", "lbu", "sb"):
            w = {"ld": 8, "sd": 8, "lw": 4, "sw": 4, "lbu": 1, "sb": 1}[kind]
            # few lines, so that lines of different pointers meet in a set
            off = draw(st.sampled_from([0, 8, 16, 56, 64, 128, 200])) // w * w
            reg = "t1" if kind[0] == "l" else "t2"
            lines.append(f"    {kind} {reg}, {off}({b})")
        elif kind == "reload":
            lines.append(f"    la t0, ptrs\n    ld {b}, {8 * draw(st.integers(0, 7))}(t0)")
        elif kind == "addi":
            lines.append(f"    addi {b}, {b}, {8 * draw(st.integers(-8, 8))}")
        elif kind == "mv":
            lines.append(f"    mv {b}, {draw(st.sampled_from(BASES))}")
        elif kind == "global":
            lines.append(f"    la t3, glob\n    {draw(st.sampled_from(['ld', 'sd']))} t2, "
                         f"{8 * draw(st.integers(0, 40))}(t3)")
        elif kind == "branch":
            label += 1
            lines.append(f"    lbu t4, {draw(st.integers(0, 63))}({b})\n    beqz t4, 1{label}f")
            lines.append(f"    sd t2, {8 * draw(st.integers(0, 20))}({draw(st.sampled_from(BASES))})")
            lines.append(f"1{label}:")
        elif kind == "select":
            # b holds one of two pointers after the label (a merge block's
            # name: each way's lines carry over, microarch.through_merge)
            label += 1
            other = draw(st.sampled_from(BASES))
            lines.append(f"    lbu t4, {draw(st.integers(0, 63))}({other})\n    beqz t4, 1{label}f")
            lines.append(f"    addi {b}, {other}, {8 * draw(st.integers(-4, 4))}")
            lines.append(f"1{label}:")
        elif kind == "walk":
            label += 1
            lines.append(f"    mv t5, {b}\n    li t3, {draw(st.integers(1, 12))}")
            lines.append(f"2{label}: ld t1, 0(t5)\n    addi t5, t5, 8\n    addi t3, t3, -1\n"
                         f"    bnez t3, 2{label}b")
        else:
            lines.append(f"    mv a0, {b}\n    call g")
    lines += ["    ld ra, 0(sp)"] + [f"    ld {b}, {8 * i + 8}(sp)" for i, b in enumerate(BASES)]
    lines += ["    addi sp, sp, 48", "    ret"]
    callee = ["g:", "    ld t1, 8(a0)", "    sd t1, 16(a0)", "    la t3, glob", "    sd t1, 64(t3)",
              "    ld t1, 24(a0)", "    sw t1, 120(a0)", "    ret"]
    asm = ("    .data\n    .balign 64\nptrs: .dword 0, 0, 0, 0, 0, 0, 0, 0\n"
           "glob: .space 512\n    .bss\n    .balign 4096\narena: .space 65536\n"
           "    .text\n    .globl main\nmain:\n    ret\n" + "\n".join(callee) +
           "\n    .globl f\nf:\n" + "\n".join(lines) + "\n")
    # Pointers: 8-aligned, in the middle of the arena, mostly a multiple of
    # the 4 KiB way apart (same sets) or equal (aliases).
    # Half of the examples put all pointers exactly 4 KiB apart: then every
    # line of one meets the same line of the others in its set, and the
    # direct-mapped replay realises every conflict the analysis must allow.
    if draw(st.booleans()):
        ptrs = [0x6000 + 4096 * i for i in range(8)]
    else:
        ptrs = [0x6000 + draw(st.sampled_from([0, 4096, 8192, 0x3000])) + draw(st.sampled_from([0, 8, 64, 200]))
                for _ in range(8)]
    return asm, ptrs


@pytest.fixture
def flat_model(monkeypatch) -> str:
    """The u54 with every data miss costing the same (refill 300, no
    write-back), so that a replay cannot hide a miss the analysis forgot
    behind a write-back the analysis charged but the replay did not do."""
    from dataclasses import replace
    from kairos.wcet import model
    monkeypatch.setitem(model.PRESETS, "u54-flat",
                        replace(model.get_preset("u54"), name="u54-flat", memory_latency=300,
                                writeback_latency=0))
    return "u54-flat"


@needs_cc
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(random_program(), st.sampled_from(["flat", "u54", "u54-lru"]))
def test_random_programs_never_beat_the_bound(tmp_path: Path, flat_model, prog, model) -> None:
    from kairos.wcet.emulator import load_elf
    from kairos.wcet.trace import block_path, path_bound
    model = flat_model if model == "flat" else model
    asm, ptrs = prog
    elf = build(tmp_path, "rnd", asm_src=asm)
    arena = load_elf(elf).symbols["arena"][0]
    patch = {"ptrs": b"".join((arena + p).to_bytes(8, "little") for p in ptrs)}
    an, res = _analyse(elf, "f", model)
    trace, obs = _observed(elf, "f", model, patch)
    pb = path_bound(block_path(an.program, "f", trace), res.costs)
    assert obs <= pb <= res.bound, f"observed {obs}, path bound {pb}, bound {res.bound}\n{asm}"


def test_adversarial_replay_is_a_worse_run_of_the_same_model() -> None:
    """Direct-mapped replay = random replacement with the worst victims: on
    two lines of one set it misses where the 8-way cache may hit."""
    from kairos.wcet.cache import ConcreteCache
    from kairos.wcet.model import get_preset
    dm = adversarial("u54").dcache
    assert dm.sets == get_preset("u54").dcache.sets and dm.analysis_ways == 1
    c = ConcreteCache(dm, polluted=True)
    assert [c.access(l)[0] for l in (0, 64, 0, 64)] == [False, False, False, False]
    assert adversarial("u54-lru") is None


@needs_cc
def test_command_line_switch_turns_the_precision_off(tmp_path: Path) -> None:
    import json
    from kairos.cli import main
    elf = build(tmp_path, "save", asm_src=TRAP_SAVE)
    bounds = {}
    for name, extra in (("on", []), ("off", ["--no-symbolic-cache"])):
        out = tmp_path / f"{name}.json"
        assert main(["wcet", str(elf), "-e", "save", "--sp", "__stack_top", "-q", "--json", str(out),
                     *extra]) == 0
        bounds[name] = json.loads(out.read_text())["entries"][0]["bound_cycles"]
    assert bounds["on"] + 20 * 300 < bounds["off"]


REDEFINED = """
    .data
    .balign 64
ptrs: .dword 0, 0
    .bss
    .balign 4096
arena: .space 65536
    .text
    .globl main
main:
    ret
g:                          # a new pointer (a multiple of the argument) per call
    li   t3, 1
    mul  a1, a0, t3
    ld   t1, 0(a1)
    ld   t1, 8(a1)
    ret
    .globl f
f:
    addi sp, sp, -16
    sd   ra, 0(sp)
    la   t0, ptrs
    ld   s2, 0(t0)
    ld   s3, 8(t0)
    mv   a0, s2
    call g
    mv   a0, s3
    call g
    ld   ra, 0(sp)
    addi sp, sp, 16
    ret
"""


@needs_cc
def test_a_redefined_base_starts_again(tmp_path: Path) -> None:
    """g's mul defines a new pointer at every call; the lines of the first
    call's pointer are not the second's, although no other access comes
    between the calls (the pointers are 4 KiB apart: the same set)."""
    elf = build(tmp_path, "redef", asm_src=REDEFINED)
    from kairos.wcet.emulator import load_elf
    arena = load_elf(elf).symbols["arena"][0]
    ptrs = (arena + 0x2000).to_bytes(8, "little") + (arena + 0x3000).to_bytes(8, "little")
    an, res = _analyse(elf, "f")
    trace, obs = _observed(elf, "f", "u54", {"ptrs": ptrs})
    from kairos.wcet.trace import block_path, path_bound
    assert obs <= path_bound(block_path(an.program, "f", trace), res.costs) <= res.bound


@needs_cc
def test_without_dwarf_no_pointer_is_assumed_to_be_memory(tmp_path: Path) -> None:
    """Without DWARF the volatile-pointer variables are unknown, so any
    pointer may address a device: the analysis falls back to unknown
    addresses and says so."""
    import shutil
    import subprocess
    elf = build(tmp_path, "save", asm_src=TRAP_SAVE)
    strip = shutil.which("riscv64-unknown-elf-strip")
    if strip is None:
        pytest.skip("riscv64-unknown-elf-strip missing")
    subprocess.run([strip, "--strip-debug", str(elf)], check=True)
    an, res = _analyse(elf, "save")
    _an, res_off = _analyse(elf, "save", symbolic=False)
    assert res.bound == res_off.bound
    assert any("no DWARF" in w for w in an.warnings)


SHARED_STACK = r"""
volatile long sink;

/* a frame of spilled values: its stack accesses are sp-relative */
long helper(long a, long b, long c)
{
    volatile long t[12];
    for (int i = 0; i < 12; i++)
        t[i] = a * i + b;
    long s = 0;
    for (int i = 0; i < 12; i++)
        s += t[i] ^ c;
    return s;
}

long one(long x) { return helper(x, 1, 2) + helper(x, 3, 4); }
long two(long x) { return helper(x, 5, 6) + one(x + 1); }

long entry(void)
{
    long r = one(sink) + two(sink);
    sink = r;
    return r;
}

int main(void) { return (int)entry(); }
"""


@needs_cc
def test_stack_in_a_shared_context_is_relative_to_its_entry_sp(tmp_path: Path) -> None:
    """With a context budget of 1 every helper runs in a shared context, so
    sp at its entry is unknown: its frame's accesses are relative to that
    sp (one base per activation), and after the first touch of a line they
    hit.  Without sp0 the root's stack is relative too.  The bound stays
    above the replayed run and falls against the same analysis with that
    base switched off (each stack access an unknown-address miss)."""
    from kairos.wcet import driver, valueanalysis
    elf = build(tmp_path, "sharedstack", SHARED_STACK)
    on = driver.run(str(elf), ["entry"], model_name="u54", context_budget=1)
    assert any("shared call contexts" in w for w in on.warnings)
    orig = valueanalysis.ValueInfo.__init__

    def no_stack(self, *a, **k):
        orig(self, *a, **k)
        self.symbolic_stack = False
    valueanalysis.ValueInfo.__init__ = no_stack
    try:
        off = driver.run(str(elf), ["entry"], model_name="u54", context_budget=1)
    finally:
        valueanalysis.ValueInfo.__init__ = orig
    _trace, seen = _observed(elf, "entry", "u54")
    assert seen <= on.results[0].bound < off.results[0].bound


MERGED = """
    .data
    .balign 64
args: .dword 0, 0, 0, 0
    .bss
    .balign 4096
arena: .space 65536
    .text
    .globl main
main:
    ret
    .globl pick
pick:                       # a5 = cond ? a0 : a1, each read before the merge;
    beqz a2, 1f             # a4 = cond ? a0 : a pointer loaded (not read)
    ld   t0, 0(a0)
    mv   a5, a0
    mv   a4, a0
    j    2f
1:  la   t3, args           # (a known-address load first: it may evict any line)
    ld   a4, 24(t3)
    ld   t0, 0(a1)
    mv   a5, a1
2:  ld   t1, 0(a5)
    ld   t2, 0(a4)
    ret
    .globl run
run:
    addi sp, sp, -16
    sd   ra, 0(sp)
    la   t0, args
    ld   a0, 0(t0)
    ld   a1, 8(t0)
    ld   a2, 16(t0)
    call pick
    ld   ra, 0(sp)
    addi sp, sp, 16
    ret
"""


@needs_cc
def test_a_merged_pointer_keeps_the_lines_read_on_every_way_in(tmp_path: Path) -> None:
    """At a merge block the value analysis names a register that holds
    different pointers on the ways in (``("p", block, reg)``); the lines
    each way read through its pointer are the merged name's.  A pointer
    loaded on one way and not read before the merge gets nothing."""
    from kairos.wcet.microarch import SYM
    from kairos.wcet.emulator import load_elf
    from kairos.wcet.trace import block_path, path_bound
    elf = build(tmp_path, "merged", asm_src=MERGED)
    an, res = _analyse(elf, "run")
    f = an.program.function("pick")
    ctx = next(c for c, g in an.program.contexts("run") if g.entry == f.entry)
    merge = max(f.blocks)
    cats = [c.data for c in res.costs.classification(ctx, merge) if c.data is not None]
    assert cats == ["always-hit", SYM]
    arena = load_elf(elf).symbols["arena"][0]
    for cond in (0, 1):
        args = (arena + 0x2000).to_bytes(8, "little") + (arena + 0x3000).to_bytes(8, "little") + \
            cond.to_bytes(8, "little") + (arena + 0x4000).to_bytes(8, "little")
        trace, obs = _observed(elf, "run", "u54", {"args": args})
        assert obs <= path_bound(block_path(an.program, "run", trace), res.costs) <= res.bound
