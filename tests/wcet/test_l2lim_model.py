"""The ``u54-l2lim`` preset: the U54 with the system's memory served by the
L2 without misses (L2-LIM or locked L2 ways).  It keeps the u54's cache
analysis (the same misses are charged, for the same reasons) and changes only
what a miss costs and which addresses are devices."""

from __future__ import annotations

from pathlib import Path

from test_miss_census import CENSUS
from wcet_helpers import build, needs_cc

from kairos.wcet.model import get_preset


def test_only_the_memory_side_differs_from_u54() -> None:
    u, lim = get_preset("u54"), get_preset("u54-l2lim")
    assert lim.sound and lim.dcache == u.dcache and lim.icache == u.icache
    assert lim.mispredict_penalty == u.mispredict_penalty and lim.div_latency == u.div_latency
    assert (lim.memory_latency, lim.writeback_latency) == (30, 30)
    assert lim.dcache_miss_penalty == 60 and lim.icache_miss_penalty == 30


def test_the_lim_window_is_memory_and_the_rest_stays_devices() -> None:
    u, lim = get_preset("u54"), get_preset("u54-l2lim")
    window = 0xFFFF_FFC0_0000_0000
    for base in (0, window):
        lo, hi = base + 0x0800_0000, base + 0x0820_0000
        assert u.is_device(lo, lo + 8) and not lim.is_device(lo, lo + 8)
        assert not lim.is_device(hi - 8, hi)
        assert lim.is_device(lo - 8, lo) and lim.is_device(hi, hi + 8)      # just outside
        assert lim.is_device(lo - 8, lo + 8) and not lim.is_all_device(lo - 8, lo + 8)
        assert lim.is_all_device(base + 0x1000_0000, base + 0x1000_0008)    # the UART stays a device
        assert not lim.is_device(base + 0x8000_0000, base + 0x8000_0008)    # DRAM


def _census(elf: Path, model: str):
    from kairos.wcet import driver, report
    an = driver.run(str(elf), ["census"], model_name=model, sp0="__stack_top", census=True,
                    infeasible_paths=False)
    return an.results[0].bound, report.miss_census(an.results[0], an)


@needs_cc
def test_same_misses_charged_at_the_l2_price(tmp_path: Path) -> None:
    elf = build(tmp_path, "census", asm_src=CENSUS)
    b_u54, c_u54 = _census(elf, "u54")
    b_lim, c_lim = _census(elf, "u54-l2lim")
    assert c_u54 is not None and c_lim is not None
    assert c_u54["by_reason"].keys() == c_lim["by_reason"].keys()
    assert {k: v["misses"] for k, v in c_u54["by_reason"].items()} == \
        {k: v["misses"] for k, v in c_lim["by_reason"].items()}
    assert (c_u54["miss_penalty"], c_lim["miss_penalty"]) == (300, 60)
    # Six data misses 240 cycles cheaper each, and the I-lines 120 cheaper:
    # the bound falls by at least the data part and stays above the cache-free time.
    assert b_u54 - b_lim >= 6 * 240
    assert b_lim > 6 * 60
