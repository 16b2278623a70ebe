"""The miss census (``kairos wcet --misses``, ``microarch.MissRecord``):
on a small program whose misses are counted by hand, each charged miss is
found with its reason and the access that evicted its line, and recording
it changes no cost."""

from __future__ import annotations

import json
from pathlib import Path

from wcet_helpers import build, needs_cc

# ``ptrs`` and ``g`` are two known lines; the pointers loaded from ``ptrs``
# are of unknown value to the analysis (writable data), so accesses through
# them are symbolic lines whose sets are unknown.
CENSUS = """
    .data
    .balign 64
ptrs: .dword bufa, bufb
    .balign 64
g:  .dword 0
    .bss
    .balign 4096
bufa: .space 64
bufb: .space 64
    .text
    .globl main
main:
    ret
    .globl census
census:
    la   t0, ptrs
    ld   a1, 0(t0)          # known line, first touch
    ld   a2, 8(t0)          # the same line: a hit
    la   t1, g
    ld   a3, 0(t1)          # known line, first touch
wipe_known:
    sd   a3, 0(a1)          # symbolic, first line of a1; its set is unknown: ptrs and g may go
wipe_a1:
    ld   a4, 0(a2)          # symbolic, first line of a2; a1's line may go
again_g:
    ld   a5, 0(t1)          # known line g, evicted by wipe_known
again_a1:
    sd   a5, 0(a1)          # symbolic, a1's line evicted by wipe_a1
    ret
"""


def _run(elf: Path, census: bool):
    from kairos.wcet import driver
    return driver.run(str(elf), ["census"], sp0="__stack_top", census=census, infeasible_paths=False)


@needs_cc
def test_census_names_each_miss_and_its_evictor(tmp_path: Path) -> None:
    from kairos.wcet import microarch as ma
    from kairos.wcet import report
    elf = build(tmp_path, "census", asm_src=CENSUS)
    an = _run(elf, census=True)
    plain = _run(elf, census=False)
    assert an.results[0].bound == plain.results[0].bound      # the census changes no cost
    assert report.miss_census(plain.results[0], plain) is None
    c = report.miss_census(an.results[0], an)
    assert c is not None
    pen = c["miss_penalty"]
    assert pen == 300
    by = {k: v["misses"] for k, v in c["by_reason"].items()}
    assert by == {ma.FIRST_TOUCH: 2, ma.SYM_FIRST: 2, ma.EVICTED: 1, ma.SYM_LOST: 1}
    assert c["cycles"] == 6 * pen
    sym = an.image.symbol
    rows = {int(a["addr"], 16): a for a in c["accesses"]}
    again_g, again_a1 = sym("again_g").addr, sym("again_a1").addr
    assert list(rows[again_g]["reasons"]) == [ma.EVICTED]
    assert list(rows[again_a1]["reasons"]) == [ma.SYM_LOST]
    wipers = {int(w["addr"], 16): w for w in c["wipers"]}
    wk, wa = wipers[sym("wipe_known").addr], wipers[sym("wipe_a1").addr]
    assert (wk["kind"], wk["lines_wiped"], wk["misses_caused"]) == (ma.W_SYM, 2, 1)
    assert (wa["kind"], wa["lines_wiped"], wa["misses_caused"]) == (ma.W_SYM, 1, 1)
    # the hit on ptrs (ld a2) is charged nothing
    assert all(a["misses"] == 1 for a in c["accesses"])


@needs_cc
def test_misses_flag_prints_and_writes_the_census(tmp_path: Path, capsys) -> None:
    from kairos.cli import main
    elf = build(tmp_path, "census", asm_src=CENSUS)
    out = tmp_path / "r.json"
    rc = main(["wcet", str(elf), "-e", "census", "--sp", "__stack_top", "--no-infeasible-paths", "--misses",
               "--json", str(out)])
    assert rc == 0
    assert "misses on the worst path by reason" in capsys.readouterr().out
    e = json.loads(out.read_text())["entries"][0]
    assert e["misses"]["misses"] == 6
    assert e["misses"]["by_reason"]["known line, evicted"] == {"misses": 1, "cycles": 300}


# A run through one base (a1, of unknown value) that an exact access opens,
# then an access at an unknown offset of a few lines from it in the same
# run: that access is charged its own miss (nothing says which line it
# touches), and the census names its reason.
RANGED = """
    .data
    .balign 64
ptrs: .dword bufa, 40
    .bss
    .balign 4096
bufa: .space 512
    .text
    .globl main
main:
    ret
    .globl ranged
ranged:
    la   t0, ptrs
    ld   a1, 0(t0)          # known line, first touch
    ld   a3, 8(t0)          # the same line: a hit
opens:
    ld   a4, 0(a1)          # symbolic, first line of a1: opens the run
    andi a3, a3, 0xf8
    add  t1, a1, a3
at_index:
    ld   a5, 0(t1)          # a1 plus 0..248: one of several of its lines
    ret
"""


@needs_cc
def test_census_names_an_access_at_an_unknown_offset_in_an_open_run(tmp_path: Path) -> None:
    from kairos.wcet import driver
    from kairos.wcet import microarch as ma
    from kairos.wcet import report
    elf = build(tmp_path, "ranged", asm_src=RANGED)
    an = driver.run(str(elf), ["ranged"], sp0="__stack_top", census=True, infeasible_paths=False)
    c = report.miss_census(an.results[0], an)
    rows = {int(a["addr"], 16): a for a in c["accesses"]}
    sym = an.image.symbol
    assert list(rows[sym("opens").addr]["reasons"]) == [ma.SYM_FIRST]
    assert list(rows[sym("at_index").addr]["reasons"]) == [ma.SYM_RANGE]
    assert all(None not in a["reasons"] and "?" not in a["reasons"] for a in c["accesses"])
    assert c["by_reason"][ma.SYM_RANGE]["misses"] == 1
