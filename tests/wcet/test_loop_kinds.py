"""Loop shapes the counted-loop methods cannot bound, bounded by the solver's
general mechanisms (tests/wcet/programs/loopkinds.c):

* a counter loaded from a structure field, bounded from a system parameter
  (`parameter` + `of`, symbolic + parameter);
* a list walk whose length is a system parameter (symbolic + parameter);
* a loop whose limit an earlier loop of the function leaves in a register
  (the earlier loop's proven bound lets the solver unroll it);
* a loop whose limit is a global that the whole program only stores small
  constants to (a value range of the global word).

Every bound is checked against the header executions per loop entry that
the emulator observes on a range of inputs.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import progbuild

HERE = Path(__file__).resolve().parent
ANN = HERE / "programs" / "loopkinds.toml"


pytestmark = pytest.mark.usefixtures("private_solver_cache")


@pytest.fixture(scope="module")
def elf(tmp_path_factory) -> Path:
    if not progbuild.have_compiler():
        pytest.skip(f"{progbuild.CC} not installed")
    return progbuild.build("loopkinds", tmp_path_factory.mktemp("loopkinds"))


def _rows(elf: Path, with_annotations: bool):
    from kairos.wcet import annotations as annmod
    from kairos.wcet import driver
    ann = annmod.load(str(ANN)) if with_annotations else annmod.Annotations()
    return {r.function: r for r in driver.list_loops(str(elf), ["loopkinds_main"], ann)}


def _inputs() -> list[dict[str, bytes]]:
    rng = random.Random(11)
    out = []
    for k in range(24):
        vals = {"input_count": k, "input_used": rng.choice([0, 1, 3, 10, 36, 1000]),
                "input_info": rng.randrange(1 << 14), "input_prio": rng.choice([0, 50, 90, 99, 200]),
                "input_bits": k % 10, "input_x": rng.choice([0, 7, 12345, (1 << 64) - 1, 10 ** 19])}
        out.append({s: v.to_bytes(8, "little") for s, v in vals.items()})
    return out


def _observed_max(elf: Path, rows) -> dict[str, int]:
    """Largest number of header executions per entry into each listed loop."""
    from kairos.wcet.cfg import build_program
    from kairos.wcet.elfimage import ElfImage
    from kairos.wcet.emulator import load_elf, run_entry
    from kairos.wcet.loops import find_loops
    prog = build_program(ElfImage(str(elf)), ["loopkinds_main"])
    loops = {}
    for name, row in rows.items():
        f = prog.function(name)
        lp = next(lp for lp in find_loops(f).loops if lp.header == row.header)
        addrs = {i.addr for b in lp.blocks for i in f.blocks[b].instrs}
        loops[name] = (row.header, addrs)
    seen = {name: 0 for name in loops}
    for inp in _inputs():
        trace = run_entry(load_elf(elf), "loopkinds_main", inp)
        assert trace.stop == "return", trace.stop
        count = {name: 0 for name in loops}
        prev = None
        for pc in trace.pcs:
            for name, (head, addrs) in loops.items():
                if pc == head:
                    count[name] = count[name] + 1 if prev in addrs else 1
                    seen[name] = max(seen[name], count[name])
            prev = pc
    return seen


def test_new_loop_kinds_are_bounded_and_sound(elf: Path) -> None:
    rows = _rows(elf, True)
    want = {"ring_drain": "symbolic + parameter", "queue_find": "symbolic + parameter",
            "print_digits": "automatic"}
    for name, kind in want.items():
        assert name in rows, f"{name}: loop not listed"
    # print_digits has two loops: the digit loop (counted) and the output loop
    from kairos.wcet import annotations as annmod
    from kairos.wcet import driver
    all_rows = driver.list_loops(str(elf), ["loopkinds_main"], annmod.load(str(ANN)))
    digits = [r for r in all_rows if r.function == "print_digits"]
    assert len(digits) == 2 and all(r.kind == "automatic" and r.bounds for r in digits), digits
    out_loop = max(digits, key=lambda r: r.header)
    assert "SMT" in out_loop.origin and out_loop.bounds == [24], out_loop
    for name in ("ring_drain", "queue_find"):
        assert rows[name].kind == want[name] and rows[name].bounds, rows[name]
    assert "list from queue_head" in rows["queue_find"].origin
    # emit_error's loop is bounded only by the global-range fact, which is off
    # (bounds.GLOBAL_RANGES: unsound when code outside the program writes the
    # global), so it must not be bounded from the global's initial value
    assert "emit_error" not in rows or rows["emit_error"].kind != "automatic", rows.get("emit_error")
    checked = {"ring_drain": rows["ring_drain"], "queue_find": rows["queue_find"], "print_digits": out_loop}
    seen = _observed_max(elf, checked)
    for name, row in checked.items():
        assert seen[name] >= 1, f"{name}: the inputs never ran its loop"
        assert seen[name] <= max(row.bounds), f"{name}: observed {seen[name]} > bound {row.bounds}"
    # nearly tight: a 16-node walk runs the rotated loop's header 15 times
    # after the first node was tested outside it
    assert max(rows["queue_find"].bounds) - seen["queue_find"] <= 1
    assert seen["print_digits"] == 20        # 2^64 - 1 has 20 digits; the bound 24 is the buffer


def test_parameter_loops_need_their_parameter(elf: Path) -> None:
    """Without the annotation file the structure-field counter and the list
    walk stay unbounded (the bound above is the parameter's, not a guess)."""
    rows = _rows(elf, False)
    assert rows["ring_drain"].kind == "unbounded"
    assert rows["queue_find"].kind == "unbounded"
