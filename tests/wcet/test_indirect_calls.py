"""Calls through function pointers (docs/wcet.md "Control flow",
"Annotation format"): without a ``[[call]]`` annotation, one error line
naming the call and the annotation to write, exit status 2; with one, the
site is a call of the named function, analysed as such, and the bound covers
replayed runs (tests/wcet/programs/indirect.c).  Bad annotations (a target
that is not a function, several targets) are one error line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

import progbuild
from wcet_helpers import one_error_line

pytestmark = pytest.mark.usefixtures("private_solver_cache")

ANN = """
[[call]]
function = "apply_hook"
targets = ["{hook}"]
note = "hook is set once, to twice"

[[call]]
function = "square_main"
source = "out = f(x_in);"
targets = ["square"]
"""


@pytest.fixture(scope="module")
def elf(tmp_path_factory) -> Path:
    if not progbuild.have_compiler():
        pytest.skip(f"{progbuild.CC} not installed")
    return progbuild.build("indirect", tmp_path_factory.mktemp("indirect"))


def _run(elf: Path, text: str, entries: list[str]):
    from kairos.wcet import annotations, driver
    return driver.run(str(elf), entries, model_name="u54", sp0="__stack_top",
                      annotations=annotations.parse(text, "calls.toml"))


def test_unannotated_indirect_call_isone_error_line(elf: Path, capsys) -> None:
    line = one_error_line(capsys, ["wcet", str(elf), "-e", "hook_main", "-q"])
    assert "indirect call through a5 at 0x" in line and "<apply_hook+0x" in line, line
    assert "add a [[call]] annotation (address = 0x" in line, line


def test_annotation_elsewhere_leaves_the_error(elf: Path, capsys, tmp_path: Path) -> None:
    ann = tmp_path / "a.toml"
    ann.write_text('[[call]]\nfunction = "hook_main"\ntargets = ["twice"]\n')
    line = one_error_line(capsys, ["wcet", str(elf), "-e", "hook_main", "-a", str(ann), "-q"])
    assert "indirect call through a5" in line and "apply_hook" in line, line


def test_annotated_calls_cover_replayed_runs(elf: Path) -> None:
    from kairos.wcet.emulator import load_elf, run_entry
    from kairos.wcet.model import get_preset
    from kairos.wcet.sim import replay
    from kairos.wcet.trace import block_path, path_bound
    an = _run(elf, ANN.format(hook="twice"), ["hook_main", "square_main"])
    m = get_preset("u54")
    for res in an.results:
        entry = res.spec.symbol
        for x in (0, 3, -7, 1 << 40):
            prog = load_elf(elf)
            tr = run_entry(prog, entry, {"x_in": x.to_bytes(8, "little", signed=True)})
            obs = replay(tr, prog.memory, m, seeds=2).cycles
            pb = path_bound(block_path(an.program, entry, tr), res.costs)
            assert obs <= pb <= res.bound, f"{entry}: observed {obs}, path bound {pb}, bound {res.bound}"
    callees = {an.program.functions[c].name for _bs, c in an.program.function("apply_hook").calls}
    assert callees == {"twice"}


def test_the_named_target_is_the_one_analysed(elf: Path) -> None:
    """twice (a loop of 8 and a division) costs more than square: the
    bound of the same call site follows the annotation."""
    slow = _run(elf, ANN.format(hook="twice"), ["hook_main"]).results[0].bound
    fast = _run(elf, ANN.format(hook="square"), ["hook_main"]).results[0].bound
    assert slow > fast


@pytest.mark.parametrize("targets, message", [
    ('["not_code"]', "target not_code is not a function"),
    ('["no_such_function"]', "target no_such_function is not a symbol"),
    ('["twice", "square"]', "with 2 targets: only one target per call site is supported"),
    ('[]', "targets must be a non-empty list"),
])
def test_bad_call_annotation_isone_error_line(elf: Path, capsys, tmp_path: Path, targets: str,
                                               message: str) -> None:
    ann = tmp_path / "bad.toml"
    ann.write_text(f'[[call]]\nfunction = "apply_hook"\ntargets = {targets}\n')
    line = one_error_line(capsys, ["wcet", str(elf), "-e", "hook_main", "-a", str(ann), "-q"])
    assert "bad.toml call #1" in line and message in line, line


def test_call_annotation_needs_a_place(elf: Path, capsys, tmp_path: Path) -> None:
    ann = tmp_path / "bad.toml"
    ann.write_text('[[call]]\ntargets = ["twice"]\n')
    line = one_error_line(capsys, ["wcet", str(elf), "-e", "hook_main", "-a", str(ann), "-q"])
    assert "give 'address' or 'function'" in line, line


def test_switch_scaled_before_its_bounds_check(elf: Path) -> None:
    """A jump table whose address gcc computes from the outer loop's counter
    before the inner loop checks the counter's range (TACLeBench's
    bitcount): resolved from that earlier definition; every case's call is
    in the CFG and the bound covers replayed runs."""
    from kairos.wcet.emulator import load_elf, run_entry
    from kairos.wcet.model import get_preset
    from kairos.wcet.sim import replay
    an = _run(elf, "", ["switch_main"])
    f = an.program.function("switch_main")
    switches = [b for b in f.blocks.values() if b.table]
    assert len(switches) == 1 and len(switches[0].table) == 6
    callees = {an.program.functions[c].name for _bs, c in f.calls}
    assert {f"op{k}" for k in range(6)} <= callees
    for n in (0, 2, 4, 9):
        prog = load_elf(elf)
        obs = replay(run_entry(prog, "switch_main", {"inner_n": n.to_bytes(4, "little")}), prog.memory,
                     get_preset("u54"), seeds=2).cycles
        assert obs <= an.results[0].bound
