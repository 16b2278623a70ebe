"""The ``u54-itim`` and ``u54-l2lim-itim`` presets: 28 KiB of the U54's
I-cache used as ITIM, holding the program's ``[__itim_start, __itim_end)``.
A fetch from there never misses and touches no I-cache line; the rest of
the code goes through the one 4 KiB way left (docs/processor-model.md
"ITIM")."""

from __future__ import annotations

from pathlib import Path

import pytest
from wcet_helpers import build, needs_cc

from kairos.wcet.errors import WcetError
from kairos.wcet.model import ITIM_END, ITIM_START, get_preset

PROGRAM = r"""
volatile int sink;
static int table[64];

__attribute__((noinline)) static int mix(int x)
{
    for (int i = 0; i < 8; i++)
        x = x * 31 + (x >> 3) + i;
    return x;
}

__attribute__((noinline)) int run(void)
{
    int acc = 0;
    for (int i = 0; i < 64; i++) {
        table[i] = mix(i);
        acc += table[i] ^ mix(acc);
    }
    return acc;
}

int main(void)
{
    sink = run();
    return 0;
}
"""

# The whole test program's code lies in its first 16 KiB (checked below).
WHOLE = ["-Wl,--defsym=__itim_start=0x80000000", "-Wl,--defsym=__itim_end=0x80004000"]


def test_presets_keep_u54_but_the_icache() -> None:
    u, it = get_preset("u54"), get_preset("u54-itim")
    lim, limit = get_preset("u54-l2lim"), get_preset("u54-l2lim-itim")
    assert it.sound and limit.sound and u.itim_bytes == 0 and lim.itim_bytes == 0
    assert it.itim_bytes == limit.itim_bytes == 28 * 1024
    # One way of the 8 stays a cache: 64 sets of 64 B, the sets the one-way
    # analysis of u54 already assumed.
    assert (it.icache.size, it.icache.ways, it.icache.sets) == (4096, 1, 64)
    assert it.icache.sets == u.icache.sets and limit.icache == it.icache
    assert (it.dcache, it.memory_latency, it.device_ranges) == (u.dcache, u.memory_latency, u.device_ranges)
    assert (limit.memory_latency, limit.device_ranges) == (lim.memory_latency, lim.device_ranges)
    assert it.itim_ranges == () and not it.in_itim(0x8000_0000)


def test_the_range_comes_from_the_programs_symbols() -> None:
    it = get_preset("u54-itim")
    assert get_preset("u54").with_itim({}, "p.elf") is get_preset("u54")
    placed = it.with_itim({ITIM_START: 0x1000, ITIM_END: 0x1000 + 28 * 1024}, "p.elf")
    assert placed.itim_ranges == ((0x1000, 0x8000),)
    assert placed.in_itim(0x1000) and placed.in_itim(0x7FFE) and not placed.in_itim(0x8000)
    with pytest.raises(WcetError, match=r"p\.elf: model u54-itim needs the symbols __itim_start and __itim_end"):
        it.with_itim({ITIM_START: 0x1000}, "p.elf")
    with pytest.raises(WcetError, match=r"p\.elf: the ITIM range \[0x1000, 0x8001\) is 28673 bytes, over the "
                                        r"28672 bytes"):
        it.with_itim({ITIM_START: 0x1000, ITIM_END: 0x8001}, "p.elf")
    with pytest.raises(WcetError, match="is below"):
        it.with_itim({ITIM_START: 0x2000, ITIM_END: 0x1000}, "p.elf")


def _bound(elf: Path, model: str) -> int:
    from kairos.wcet import driver
    an = driver.run(str(elf), ["main"], model_name=model, sp0="__stack_top", infeasible_paths=False)
    return int(an.results[0].bound)


def _replay(elf: Path, model: str):
    from kairos.wcet.elfimage import ElfImage
    from kairos.wcet.emulator import load_elf, run_entry
    from kairos.wcet.model import preset_for
    from kairos.wcet.sim import replay
    prog = load_elf(elf)
    return replay(run_entry(prog, "main"), prog.memory, preset_for(model, ElfImage(str(elf))), seeds=2)


@needs_cc
def test_code_in_the_itim_never_misses_and_the_bound_still_covers_the_run(tmp_path: Path) -> None:
    from kairos.wcet.elfimage import ElfImage
    elf = build(tmp_path, "itim", c_src=PROGRAM, extra_flags=WHOLE)
    image = ElfImage(str(elf))
    code = [s for s in image.sections if s.executable]
    assert code and all(0x8000_0000 <= s.addr and s.addr + s.size <= 0x8000_4000 for s in code)

    # The marker shares its address with _start and does not take its name.
    assert image.symbol("__itim_start").addr == image.symbol("_start").addr
    assert image.symbol_at(image.symbol("_start").addr) == ("_start", 0)
    assert image.symbol_name_at(image.symbol("_start").addr) == "_start"

    b_u54, b_itim = _bound(elf, "u54"), _bound(elf, "u54-itim")
    r_u54, r_itim = _replay(elf, "u54"), _replay(elf, "u54-itim")
    assert r_u54.misses["icache"] > 0 and r_itim.misses["icache"] == 0
    assert r_itim.cycles <= b_itim < b_u54
    assert r_u54.cycles <= b_u54
    # Every I-line of u54's bound is gone: at least one refill per line of code.
    lines = sum((s.size + 63) // 64 for s in code)
    assert b_u54 - b_itim >= lines * get_preset("u54").icache_miss_penalty // 2

    # Only the range's code is spared: with none of it there, u54-itim's one
    # way of I-cache charges what u54's one-way view charged.
    none = build(tmp_path / "none", "itim", c_src=PROGRAM,
                 extra_flags=["-Wl,--defsym=__itim_start=0x80000000", "-Wl,--defsym=__itim_end=0x80000000"])
    assert _bound(none, "u54-itim") == b_u54


@needs_cc
def test_a_program_without_the_symbols_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    from kairos.cli import main
    elf = build(tmp_path, "plain", c_src=PROGRAM)
    assert main(["wcet", str(elf), "-e", "main", "--model", "u54-itim", "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs the symbols __itim_start and __itim_end" in err[0] and "plain.elf" in err[0]


def test_the_kernels_itim_range_holds_every_function_it_names() -> None:
    """kernel/arch/riscv/itim.ld names the functions a U54 board runs from
    the ITIM; a wildcard that matches nothing (a function renamed or
    inlined away) would drop one silently, so each must be a function of
    the release kernel inside [__itim_start, __itim_end), and the range must
    fit the ITIM (u54-itim accepts it)."""
    import re

    from conftest import REPO, build_flavour
    from kairos.wcet.elfimage import ElfImage
    from kairos.wcet.model import preset_for

    kernel = build_flavour("release")
    image = ElfImage(str(kernel))
    lo, hi = image.symbol(ITIM_START).addr, image.symbol(ITIM_END).addr
    names = re.findall(r"^\*\(\.text\.([A-Za-z_][\w.]*) ", (REPO / "kernel/arch/riscv/itim.ld").read_text(), re.M)
    assert len(names) > 50
    outside = [n for n in names if not (image.has_symbol(n) and lo <= image.symbol(n).addr < hi)]
    assert not outside, f"itim.ld names functions the kernel does not have in its ITIM range: {outside}"
    for n in ("trap_entry", "restore_user_context"):        # trap.S, by its object file
        assert lo <= image.symbol(n).addr < hi
    assert preset_for("u54-itim", image).itim_ranges == ((lo, hi),)
    assert hi - lo <= 28 * 1024
