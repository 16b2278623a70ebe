"""Loop bounds stated in the C source: ``loopbound`` pragmas (TACLeBench's
and the WCC compiler's convention), read by ``kairos.wcet.sourcebounds``
for loops no annotation names (tests/wcet/programs/pragmas.c, no
annotation file).  Each test asserts the bound used and its ``--loops``
kind; the bounded entry's bound covers replayed runs; where a binary loop
cannot be mapped to one source loop, or the pragma is malformed, refuted
or its file missing, the analyser says so in one line."""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest

import progbuild
from kairos.cli import main

pytestmark = pytest.mark.usefixtures("private_solver_cache")

SOURCE = progbuild.PROGRAMS / "pragmas.c"


def _pragma(function: str, nth: int = 1) -> tuple[int, int]:
    """(line, max) of the nth loopbound pragma in ``function`` of pragmas.c
    (the figures the test states, read from the program's text)."""
    lines = SOURCE.read_text().splitlines()
    start = next(i for i, t in enumerate(lines) if re.match(rf"\w.*\b{function}\s*\(", t))
    seen = 0
    for i in range(start, len(lines)):
        for m in re.finditer(r'loopbound min \d+ max (\d+)', lines[i]):
            seen += 1
            if seen == nth:
                return i + 1, int(m.group(1))
    raise AssertionError(f"no pragma {nth} in {function}")


@pytest.fixture(scope="module")
def elf(tmp_path_factory) -> Path:
    if not progbuild.have_compiler():
        pytest.skip(f"{progbuild.CC} not installed")
    return progbuild.build("pragmas", tmp_path_factory.mktemp("pragmas"))


def _rows(elf: Path, entry: str, **ann_fields):
    from kairos.wcet import driver
    from kairos.wcet.annotations import Annotations
    ann = Annotations()
    for k, v in ann_fields.items():
        setattr(ann, k, v)
    rows = driver.list_loops(str(elf), [entry], ann)
    out: dict[str, list] = {}
    for r in rows:
        out.setdefault(r.function, []).append(r)
    return out


def test_data_dependent_search_bounded_by_its_pragma(elf: Path) -> None:
    rows = _rows(elf, "main")
    (search,) = rows["search"]
    _line, mx = _pragma("search")
    # max body iterations per entry: the header runs at most once more
    assert search.kind == "pragma" and search.bounds == [mx + 1], search
    assert "pragmas.c" in search.origin
    # without the pragmas nothing bounds it
    (off,) = _rows(elf, "main", source_bounds=False)["search"]
    assert off.kind == "unbounded" and not off.bounds


def test_rotated_loop_and_nested_pair(elf: Path) -> None:
    from kairos.wcet.cfg import Term, build_program
    from kairos.wcet.elfimage import ElfImage
    from kairos.wcet.loops import find_loops
    rows = _rows(elf, "main")
    (rot,) = rows["rotated"]
    assert rot.kind == "pragma" and rot.bounds == [_pragma("rotated")[1] + 1]
    # GCC rotated it: the loop's test is at the bottom, its guard outside
    image = ElfImage(str(elf))
    prog = build_program(image, ["main"])
    f = next(f for f in prog.functions.values() if f.name == "rotated")
    (lp,) = find_loops(f).loops
    for latch in lp.latches:
        assert f.blocks[latch].kind is Term.BRANCH and any(s not in lp.blocks for s in f.blocks[latch].succs), \
            "the test is not at the bottom"
    nested = sorted(rows["nested"], key=lambda r: r.anchor)
    assert [r.kind for r in nested] == ["pragma", "pragma"]
    assert [r.bounds for r in nested] == [[_pragma("nested", 1)[1] + 1], [_pragma("nested", 2)[1] + 1]]
    assert [r.origin.split()[1] for r in nested] == [f"pragmas.c:{_pragma('nested', k)[0]}" for k in (1, 2)]


def test_bound_covers_replayed_runs(elf: Path) -> None:
    from kairos.wcet import driver
    from kairos.wcet.emulator import load_elf, run_entry
    from kairos.wcet.model import get_preset
    from kairos.wcet.sim import replay
    an = driver.run(str(elf), ["main"], model_name="u54", sp0="__stack_top")
    bound = an.results[0].bound
    m = get_preset("u54")
    rng = random.Random(14)
    seen = 0
    for t, n, k in [(94, 20, 8), (1, 0, 0), (190, 100, 50), (5, 7, 3)] + \
            [(rng.randrange(200), rng.randrange(30), rng.randrange(12)) for _ in range(2)]:
        prog = load_elf(elf)
        inp = {"target": t.to_bytes(4, "little"), "n_in": n.to_bytes(4, "little"), "m_in": k.to_bytes(4, "little")}
        obs = replay(run_entry(prog, "main", inp), prog.memory, m, seeds=2).cycles
        assert 0 < obs <= bound, f"observed {obs} > bound {bound} for {inp}"
        seen = max(seen, obs)
    assert bound < 4 * seen, f"bound {bound} far above every run ({seen})"


def test_two_loops_on_one_line_get_no_pragma_bound(elf: Path, capsys) -> None:
    rows = _rows(elf, "one_line_main")["one_line"]
    assert len(rows) == 2
    for r in rows:
        assert r.kind == "unbounded" and r.origin.startswith("no loopbound pragma:"), r
    assert any("two or more source loops" in r.origin for r in rows)
    rc = main(["wcet", str(elf), "-e", "one_line_main", "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert "has no bound" in err[0] and "no loopbound pragma" in err[0] and "one_line (pragmas.c:" in err[0]


def test_refuted_pragma_is_an_error_naming_it(elf: Path, capsys) -> None:
    line, mx = _pragma("refuted")
    rc = main(["wcet", str(elf), "-e", "refuted_main", "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert err[0].startswith(f"kairos wcet: error: pragmas.c:{line}: loopbound pragma max {mx} ")
    assert "refuted by the solver" in err[0]


def test_annotation_wins_over_pragma(elf: Path, tmp_path: Path) -> None:
    from kairos.wcet import annotations as annmod
    from kairos.wcet import driver
    toml = tmp_path / "a.toml"
    toml.write_text('[[loop]]\nfunction = "search"\nmax = 70\n')
    (r,) = [r for r in driver.list_loops(str(elf), ["main"], annmod.load(str(toml))) if r.function == "search"]
    assert r.bounds == [70] and r.kind == "trusted" and r.origin.startswith("a.toml")


def test_no_source_bounds_switch(elf: Path, capsys) -> None:
    rc = main(["wcet", str(elf), "-e", "main", "-q", "--no-source-bounds"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "has no bound" in err[0], err
    assert "loopbound" not in err[0]


def test_malformed_pragma_is_one_line(tmp_path: Path, capsys) -> None:
    if not progbuild.have_compiler():
        pytest.skip(f"{progbuild.CC} not installed")
    line, _mx = _pragma("search")
    text = SOURCE.read_text().splitlines()
    text[line - 1] = text[line - 1].replace('"loopbound min 1 max 64"', '"loopbound max x"')
    src = tmp_path / "badpragma.c"
    src.write_text("\n".join(text) + "\n")
    elf = progbuild.build("badpragma", tmp_path, src)
    rc = main(["wcet", str(elf), "-e", "main", "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert err[0].startswith(f"kairos wcet: error: badpragma.c:{line}: malformed loopbound pragma")
    assert "Traceback" not in err[0]


def test_missing_source_file_and_source_dir(tmp_path: Path) -> None:
    if not progbuild.have_compiler():
        pytest.skip(f"{progbuild.CC} not installed")
    tree = tmp_path / "tree" / "src"
    tree.mkdir(parents=True)
    shutil.copy(SOURCE, tree / "pragmas.c")
    elf = progbuild.build("pragmas", tmp_path, tree / "pragmas.c")
    moved = tmp_path / "moved"
    shutil.move(str(tmp_path / "tree"), str(moved))
    (gone,) = _rows(elf, "main")["search"]
    assert gone.kind == "unbounded" and "source file pragmas.c not found" in gone.origin, gone
    (back,) = _rows(elf, "main", source_dirs=[str(moved)])["search"]
    assert back.kind == "pragma" and back.bounds == [_pragma("search")[1] + 1]


def test_parse_loop_statements() -> None:
    """The statement parse behind the mapping: extents, heads, pragmas,
    loops in macros, K&R function heads."""
    from kairos.wcet.errors import WcetError
    from kairos.wcet.sourcebounds import parse_source
    text = """#define CLEAR(a) for (int k = 0; k < 4; k++) a[k] = 0
int f(x)
int x;
{
  int s = 0;
  _Pragma( "loopbound min 0 max 3" )
  do {
    s++;
  } while ( s < x );
  #pragma loopbound min 1 max 9
  while ( 1 ) {
    if ( s > 9 ) break;
    _Pragma( "loopbound min 2 max 2" ) for ( ;; ) { s += 2; if (s & 1) break; }
  }
  for ( int i = 0; i < x; i++ ) CLEAR( g );
  return s;
}
"""
    m = parse_source(text, "k.c")
    assert [(lp.kind, lp.line) for lp in m.loops] == [("do", 7), ("while", 11), ("for", 13), ("for", 15)]
    do, wh, fo, plain = m.loops
    assert (do.pragma.max, do.head, do.constant) == (3, frozenset({9}), False)
    assert (wh.pragma.min, wh.pragma.max, wh.constant, wh.head) == (1, 9, True, frozenset({11}))
    assert fo.parent is wh and fo.constant and fo.pragma.max == 2
    assert plain.pragma is None and plain.parent is None
    assert m.owners[12] == {wh} and m.owners[13] == {fo} and m.owners[9] == {do}
    assert 15 in m.macro_lines and 1 not in m.owners            # the macro's own loop is not read
    for bad, why in [('"loopbound max x"', "expected"), ('"loopbound min 5 max 2"', "above max")]:
        with pytest.raises(WcetError, match=rf"^b\.c:2: malformed loopbound pragma .*{why}"):
            parse_source(f"void g(void) {{\n  _Pragma( {bad} )\n  for (;;) ;\n}}\n", "b.c")
