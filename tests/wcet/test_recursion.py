"""Recursion (docs/wcet.md "Control flow", "Annotation format"): without a
``[[recursion]]`` bound, one error line naming the cycle and the annotation
to write, exit status 2; with one, a bound that covers replayed runs
(tests/wcet/programs/recursion.c: a doubly recursive Fibonacci, a mutual
recursion, a recursive quicksort).  The analysis trusts the bound; a traced
run refutes one that is too small (``trace.recursion_violations``)."""

from __future__ import annotations

import functools
import random
from pathlib import Path

import pytest

import progbuild
from wcet_helpers import one_error_line

pytestmark = pytest.mark.usefixtures("private_solver_cache")

ENTRIES = ["sort_main", "fib_main", "ping_main"]

# Bounds read from the program: 12 elements, every activation that
# partitions fixes one pivot (at most 12 of them, 2 calls each: 1 + 2 * 12);
# fib(10) makes 177 calls; ping(10) <-> pong: ping entered 6 times.
SUFFICIENT = """
[[recursion]]
function = "qsort_range"
calls = 25
[[recursion]]
function = "fib"
calls = 177
[[recursion]]
function = "ping"
calls = 6

[[loop]]
function = "fib"
max = 6
note = "gcc makes the second call a loop: n <= 10, two less per iteration"
[[loop]]
function = "qsort_range"
loop = 1
max = 13
note = "gcc makes the second call a loop: at most one pivot per element"
[[loop]]
function = "qsort_range"
loop = 2
max = 12
"""


@pytest.fixture(scope="module")
def elf(tmp_path_factory) -> Path:
    if not progbuild.have_compiler():
        pytest.skip(f"{progbuild.CC} not installed")
    return progbuild.build("recursion", tmp_path_factory.mktemp("recursion"))


@functools.lru_cache(maxsize=None)
def _analysis(elf: Path, text: str):
    from kairos.wcet import annotations, driver
    return driver.run(str(elf), ENTRIES, model_name="u54", sp0="__stack_top",
                      annotations=annotations.parse(text, "rec.toml"))


def _inputs(entry: str) -> list[dict[str, bytes]]:
    if entry != "sort_main":
        return [{"n_in": n.to_bytes(8, "little", signed=True)} for n in (-3, 0, 1, 2, 7, 10, 11)]
    rng = random.Random(3)
    cases = [list(range(12)), list(range(12))[::-1], [4] * 12]
    for _ in range(4):
        v = list(range(12))
        rng.shuffle(v)
        cases.append(v)
    return [{"data": b"".join(x.to_bytes(4, "little") for x in c)} for c in cases]


def _runs(elf: Path, an, entry: str):
    """(observed cycles, trace path) per input of ``entry``."""
    from kairos.wcet.emulator import load_elf, run_entry
    from kairos.wcet.model import get_preset
    from kairos.wcet.sim import replay
    from kairos.wcet.trace import block_path
    m = get_preset("u54")
    out = []
    for inp in _inputs(entry):
        prog = load_elf(elf)
        tr = run_entry(prog, entry, inp)
        out.append((replay(tr, prog.memory, m, seeds=2).cycles, block_path(an.program, entry, tr)))
    return out


def test_unbounded_recursion_isone_error_line(elf: Path, capsys) -> None:
    line = one_error_line(capsys, ["wcet", str(elf), "-e", "sort_main", "-q"])
    assert "recursion without a bound: qsort_range -> qsort_range" in line, line
    assert '[[recursion]] annotation (function = "qsort_range", calls = N' in line, line


def test_unbounded_mutual_recursion_names_the_cycle(elf: Path, capsys, tmp_path: Path) -> None:
    line = one_error_line(capsys, ["wcet", str(elf), "-e", "ping_main", "-q"])
    assert "ping -> pong -> ping" in line, line
    # a bound on another function's recursion does not cover this cycle
    ann = tmp_path / "a.toml"
    ann.write_text('[[recursion]]\nfunction = "fib"\ncalls = 177\n')
    line = one_error_line(capsys, ["wcet", str(elf), "-e", "ping_main", "-a", str(ann), "-q"])
    assert "recursion without a bound: ping -> pong -> ping" in line, line


@pytest.mark.parametrize("entry", ENTRIES)
def test_bound_covers_replayed_runs(elf: Path, entry: str) -> None:
    from kairos.wcet.trace import path_bound, recursion_violations
    an = _analysis(elf, SUFFICIENT)
    res = next(r for r in an.results if r.spec.symbol == entry)
    deepest = 0
    for obs, path in _runs(elf, an, entry):
        assert recursion_violations(an.program, path) == []
        pb = path_bound(path, res.costs)
        assert obs <= pb <= res.bound, f"{entry}: observed {obs}, path bound {pb}, bound {res.bound}"
        deepest = max(deepest, max(path.recursion.values(), default=0))
    assert deepest > 1, f"{entry}: no input recursed"     # the runs exercise the recursion


def test_mutual_recursion_bounded_at_either_function(elf: Path) -> None:
    """Every cycle passes through ``pong`` as well: a bound on it serves
    (pong is entered at most 5 times for n <= 10)."""
    an = _analysis(elf, SUFFICIENT.replace('function = "ping"\ncalls = 6', 'function = "pong"\ncalls = 5'))
    res = next(r for r in an.results if r.spec.symbol == "ping_main")
    for obs, _path in _runs(elf, an, "ping_main"):
        assert obs <= res.bound


def test_more_calls_give_a_higher_bound(elf: Path) -> None:
    lo = next(r for r in _analysis(elf, SUFFICIENT).results if r.spec.symbol == "sort_main").bound
    hi = next(r for r in _analysis(elf, SUFFICIENT.replace("calls = 25", "calls = 50")).results
              if r.spec.symbol == "sort_main").bound
    assert hi > lo


def test_too_small_bound_is_refuted_by_a_run(elf: Path) -> None:
    """calls = 3 for a 12-element quicksort: runs on most inputs activate
    qsort_range more often, and their traces show the annotation wrong.
    (Their cycles may still lie below the bound, which the shared contexts'
    joined cache states make loose: the count is the check that holds.)"""
    from kairos.wcet.trace import recursion_violations
    an = _analysis(elf, SUFFICIENT.replace("calls = 25", "calls = 3"))
    res = next(r for r in an.results if r.spec.symbol == "sort_main")
    runs = _runs(elf, an, "sort_main")
    refuted = [recursion_violations(an.program, path) for _obs, path in runs]
    assert any(refuted), "no run exceeded calls = 3"
    assert all("qsort_range:" in v and "at most 3" in v for vs in refuted for v in vs), refuted
    assert res.bound < next(r for r in _analysis(elf, SUFFICIENT).results
                            if r.spec.symbol == "sort_main").bound      # the ILP used it


@pytest.mark.parametrize("text, message", [
    ('[[recursion]]\nfunction = "fib"\ncalls = 0\n', "calls must be >= 1"),
    ('[[recursion]]\nfunction = "fib"\n', "needs calls = N"),
    ('[[recursion]]\ncalls = 3\n', "needs function"),
    ('[[recursion]]\nfunction = "fib"\ncalls = 3\ndepth = 2\n', "unknown field(s) depth"),
])
def test_bad_recursion_annotation_isone_error_line(elf: Path, capsys, tmp_path: Path, text: str,
                                                    message: str) -> None:
    ann = tmp_path / "bad.toml"
    ann.write_text(text)
    line = one_error_line(capsys, ["wcet", str(elf), "-e", "fib_main", "-a", str(ann), "-q"])
    assert "bad.toml recursion #1" in line and message in line, line


def test_unused_recursion_annotation_is_a_warning(elf: Path) -> None:
    from kairos.wcet import annotations, driver
    an = driver.run(str(elf), ["fib_main"], model_name="u54", annotations=annotations.parse(
        '[[recursion]]\nfunction = "fib"\ncalls = 177\n[[recursion]]\nfunction = "clamp"\ncalls = 2\n'
        '[[loop]]\nfunction = "fib"\nmax = 6\n', "w.toml"))
    assert any("w.toml recursion #2" in w and "matches no analysed recursion" in w for w in an.warnings), \
        an.warnings
