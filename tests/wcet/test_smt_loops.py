"""SMT loop bounds (smtloops.py), checked annotations, parameters and the
anchors that survive edits.

The fixed release kernel (tests/wcet/fixtures) is the binary for the solver
tests: its loops do not change when the kernel moves on.  Its source lines
are not needed: those tests anchor by address.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from kairos.cli import main
from kairos.wcet import annotations as annmod
from kairos.wcet.errors import WcetError
from wcet_helpers import FIXED_KERNEL, fixed_kernel_program, loop_of as _loop

ROOT = Path(__file__).resolve().parents[2]
FIXED = FIXED_KERNEL
KERNEL_ANN = ROOT / "kernel" / "wcet-annotations.toml"


pytestmark = pytest.mark.usefixtures("private_solver_cache")


@pytest.fixture(scope="module")
def fixed_program():
    return fixed_kernel_program()


def test_solver_bounds_the_clamped_copy_loops_exactly(fixed_program) -> None:
    """fault_handle_reply copies min(len, 10) and min(len, 32) reply words
    (fault.c): the counted-loop methods cannot see the clamp before the loop,
    the solver's prefix encoding can.  Bounds are exact."""
    from kairos.wcet.bounds import BoundAnalysis
    ba = BoundAnalysis(fixed_program)
    got = []
    for i in (0, 1):
        fo, lp = _loop(fixed_program, "fault_handle_reply", i)
        assert ba._auto_bound_flat(fo, lp) is None and ba._absexec_bound(fo, lp, None) is None
        b = ba.auto_bound(fo, lp)
        assert b is not None and "SMT" in b.source and b.kind == "automatic"
        got.append(b.max)
    assert got == [10, 32]


def test_solver_answers_are_cached_on_disk(fixed_program, tmp_path) -> None:
    from kairos.wcet import smtloops
    from kairos.wcet.bounds import BoundAnalysis
    fo, lp = _loop(fixed_program, "fault_handle_reply", 0)
    assert BoundAnalysis(fixed_program).auto_bound(fo, lp).max == 10
    files = list((tmp_path / "smt-cache").rglob("*.json"))
    assert files, "no answer written to the cache"
    smtloops._memo.clear()
    calls = []
    orig = smtloops.LoopQuery.bound
    smtloops.LoopQuery.bound = lambda self, *a, **k: calls.append(1) or orig(self, *a, **k)
    try:
        assert BoundAnalysis(fixed_program).auto_bound(fo, lp).max == 10
    finally:
        smtloops.LoopQuery.bound = orig
    assert calls == [], "the cached answer was not used"


def test_refuted_annotation_is_a_one_line_error(tmp_path, capsys) -> None:
    """vspace_copy_kernel_mappings always runs 256 iterations: an annotation
    claiming 100 is refuted (every execution runs longer).  The function is
    the entry: from trap_entry, without the kernel's annotations, the
    solver first searched every other loop of the kernel for a bound
    (130 s of the CI's processor time) before it reached this one."""
    from kairos.wcet.elfimage import ElfImage
    img = ElfImage(str(FIXED))
    addr = None
    from kairos.wcet.cfg import build_program
    prog = build_program(img, ["trap_entry"], noreturn=["kernel_panic"])
    _fo, lp = _loop(prog, "vspace_copy_kernel_mappings", 0)
    addr = lp.header
    ann = tmp_path / "bad.toml"
    ann.write_text(f'[[loop]]\nfunction = "vspace_copy_kernel_mappings"\naddress = {addr:#x}\nmax = 100\n')
    rc = main(["wcet", str(FIXED), "-a", str(ann), "-e", "vspace_copy_kernel_mappings", "--loops", "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and "bad.toml" in err[0] and "loop #1" in err[0] and "refuted" in err[0], err


def test_undecidable_annotation_is_trusted(fixed_program) -> None:
    """A list walk (tqueue_insert) depends on memory the solver knows nothing
    about: its annotation is used, marked trusted."""
    from kairos.wcet.bounds import BoundAnalysis
    from kairos.wcet.loops import find_loops
    ann = annmod.parse('[[loop]]\nfunction = "tqueue_insert"\nmax = 65\n', "q.toml")
    ba = BoundAnalysis(fixed_program, ann)
    f = fixed_program.function("tqueue_insert")
    fo = find_loops(f)
    b = ba.bound(fo, fo.loops[0], ["tqueue_insert"])
    assert b.max == 65 and b.kind == "trusted"


def test_annotation_parameters_and_expressions() -> None:
    a = annmod.parse('[parameters]\nmsg = { default = 120 }\nrefills = { default = 8, define = "X" }\n'
                     '[[loop]]\nfunction = "f"\nloop = 2\nsource = "i < n"\nmax = "msg + 1"\n'
                     '[[loop]]\nfunction = "g"\nparameter = "refills"\nof = "count"\n'
                     '[[loop]]\nfunction = "h"\nparameter = "refills"\nleast = 1\n', "t.toml")
    assert a.loops[0].max == 121 and a.loops[0].index == 2 and a.loops[0].source == "i < n"
    assert a.loops[1].max is None and a.loops[1].parameter_value == 8 and a.parameters["refills"].define == "X"
    assert a.loops[1].least == 0 and a.loops[2].least == 1
    bad = [('[[loop]]\nfunction = "f"\nmax = "nope + 1"\n', "unknown parameter 'nope'"),
           ('[[loop]]\nfunction = "f"\nmax = "__import__(1)"\n', "is not an expression over parameters"),
           ('[[loop]]\nfunction = "f"\nparameter = "p"\n', "not in [parameters]"),
           ('[[loop]]\nloop = 1\nmax = 3\n', "also need 'function'"),
           ('[[loop]]\nfunction = "f"\nloop = 0\nmax = 3\n', "loop must be >= 1"),
           ('[parameters]\np = { default = 1, bogus = 2 }\n', "parameter p"),
           ('[[loop]]\nfunction = "f"\nmax = 3\nleast = 1\n', "'least' needs 'parameter'"),
           ('[parameters]\np = { default = 4 }\n[[loop]]\nfunction = "f"\nparameter = "p"\nleast = 5\n',
            "least = 5 must lie between 0 and p = 4")]
    for text, msg in bad:
        with pytest.raises(WcetError, match=re.escape(msg)):
            annmod.parse(text, "t.toml")


def _c_define(name: str) -> int:
    """Value of a kernel macro, evaluated by the C preprocessor and Python."""
    src = f"#include \"config.h\"\n#include \"abi.h\"\n#include \"invocation.h\"\n#include \"release.h\"\n" \
          f"KAIROS_VALUE = ({name})\n"
    out = subprocess.run(["cpp", "-P", "-DKAIROS_FLAVOUR_RELEASE", "-Ikernel/include", "-Ikernel/arch/riscv/include", "-"],
                         input=src, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        pytest.fail(f"cpp failed on the kernel headers: {out.stderr.strip()[:300]}")
    expr = out.stdout.split("KAIROS_VALUE =", 1)[1].strip()
    expr = re.sub(r"(\d+)[uUlL]+\b", r"\1", expr)
    return int(eval(expr, {"__builtins__": {}}))   # noqa: S307 - integer expression from our headers


def test_kernel_parameters_match_the_headers() -> None:
    """Every [parameters] entry of the kernel annotations that names a C
    macro has the macro's value: one home for each number."""
    ann = annmod.load(str(KERNEL_ANN))
    checked = 0
    for p in ann.parameters.values():
        if p.define:
            assert _c_define(p.define) == p.default, f"{KERNEL_ANN.name}: parameter {p.name} = {p.default}, " \
                                                  f"but {p.define} = {_c_define(p.define)}"
            checked += 1
    assert checked >= 5, "the kernel's refill cap, message length, decode depth, extra caps and error words " \
                         "name their macros"


def test_fixed_parameter_is_not_a_system_parameter() -> None:
    """A kernel constant (fixed = true) keeps its value: --param may not
    change it, so no analysis runs with a bound the kernel does not have."""
    text = '[parameters]\ncaps = { default = 3, fixed = true }\n[[loop]]\nfunction = "f"\nmax = "caps + 1"\n'
    assert annmod.parse(text, "t.toml").loops[0].max == 4
    assert annmod.parse(text, "t.toml", {"caps": 3}).loops[0].max == 4
    with pytest.raises(WcetError, match="fixed = true"):
        annmod.parse(text, "t.toml", {"caps": 2})
    with pytest.raises(WcetError, match="fixed must be true or false"):
        annmod.parse('[parameters]\ncaps = { default = 3, fixed = 1 }\n', "t.toml")


RELEASE = ROOT / "build" / "release" / "kernel.elf"


@pytest.mark.skipif(not RELEASE.exists(), reason="release kernel not built (make kernel FLAVOUR=release)")
def test_kernel_annotation_anchors_are_current() -> None:
    """Every anchored annotation of the kernel names an existing loop of the
    current kernel (release, or the debug build for debug-only functions such
    as trace_dump); a stale one fails naming the annotation."""
    from kairos.wcet.bounds import BoundAnalysis
    from kairos.wcet.cfg import build_program
    from kairos.wcet.elfimage import ElfImage
    ann = annmod.load(str(KERNEL_ANN))
    builds = []
    for elf in (RELEASE, ROOT / "build" / "debug" / "kernel.elf"):
        if elf.exists():
            prog = build_program(ElfImage(str(elf)), ["trap_entry"], noreturn=ann.noreturn | {"kernel_panic"})
            builds.append((BoundAnalysis(prog, ann), {f.name: f for f in prog.functions.values()}))
    problems = []
    for la in ann.loops:
        if la.index is None and la.source is None:
            continue
        found = [(ba, names[la.function]) for ba, names in builds if la.function in names]
        if not found:
            problems.append(f"{la.place()}: function {la.function} not in the kernel")
        for ba, func in found:
            try:
                if not ba._anchor_targets(la, func):
                    problems.append(f"{la.place()}: matches no loop")
            except WcetError as exc:
                problems.append(str(exc))
    assert not problems, "\n".join(problems)


def test_stale_anchor_is_reported_naming_the_annotation(fixed_program, tmp_path) -> None:
    from kairos.wcet.bounds import BoundAnalysis
    ann = annmod.parse('[[loop]]\nfunction = "fault_handle_reply"\nloop = 7\nmax = 3\n',
                       str(tmp_path / "stale.toml"))
    ba = BoundAnalysis(fixed_program, ann)
    with pytest.raises(WcetError, match=r"stale\.toml: loop #1 .*stale anchor: fault_handle_reply has 2 loop"):
        ba._anchor_targets(ann.loops[0], fixed_program.function("fault_handle_reply"))


def _hard_solver():
    import z3
    x, y, z = z3.BitVecs("x y z", 64)
    s = z3.Solver()
    s.add(x * y * z == 0x123456789ABCDEF1, x > 1, y > 1, z > 1, x * x + y == z * 3 + 7)
    return s


def test_clock_cut_failure_is_not_cached_on_disk(fixed_program, tmp_path, monkeypatch) -> None:
    """A check the wall clock stops (a loaded machine) is load-dependent:
    its failure stays in memory only; a failure of the effort budget (z3's
    rlimit, the same on any load) is written to the disk cache."""
    import z3
    from kairos.wcet import smtloops
    fo, lp = _loop(fixed_program, "fault_handle_reply", 0)
    q = smtloops.LoopQuery(fixed_program, fo, lp)
    monkeypatch.setattr(smtloops, "CHECK_TIMEOUT_MS", 1)
    assert q._limited_check(_hard_solver()) == z3.unknown
    assert q.load_dependent, "a wall-clock stop was not noticed"
    assert smtloops.cached(("clock-cut",), lambda: None, q) is None
    cache = tmp_path / "smt-cache"
    assert not list(cache.rglob("*.json")), "a clock-cut failure was cached on disk"

    monkeypatch.setattr(smtloops, "CHECK_TIMEOUT_MS", 600_000)
    monkeypatch.setattr(smtloops, "CHECK_RLIMIT", 200_000)
    q2 = smtloops.LoopQuery(fixed_program, fo, lp)
    before = q2.effort
    assert q2._limited_check(_hard_solver()) == z3.unknown
    assert not q2.load_dependent, "an effort-limit stop was taken for a clock stop"
    # z3's rlimit applies per check: one check spends at most its grant
    assert 0 < before - q2.effort <= 200_000 + 1000
    assert smtloops.cached(("effort-cut",), lambda: None, q2) is None
    assert len(list(cache.rglob("*.json"))) == 1, "an effort-budget failure was not cached"


def test_annotated_loop_is_checked_not_searched_twice(fixed_program) -> None:
    """A loop with a `max` gets no solver search of its own: the check
    searches up to the annotation and its proof gives the smaller bound
    (fault_handle_reply copies at most 10 words; the annotation says 11)."""
    from kairos.wcet import smtloops
    from kairos.wcet.bounds import BoundAnalysis
    ann = annmod.parse('[[loop]]\nfunction = "fault_handle_reply"\nloop = 1\nmax = 11\n', "f.toml")
    ba = BoundAnalysis(fixed_program, ann)
    fo, lp = _loop(fixed_program, "fault_handle_reply", 0)
    calls = []
    orig = smtloops.LoopQuery.bound
    smtloops.LoopQuery.bound = lambda self, *a, **k: calls.append(1) or orig(self, *a, **k)
    try:
        b = ba.bound(fo, lp, ["fault_handle_reply"])
    finally:
        smtloops.LoopQuery.bound = orig
    assert b.max == 10 and b.kind == "automatic" and "proved by z3: at most 10" in b.source, b
    assert calls == [], "the solver searched the annotated loop besides checking it"


def test_format_walk_is_bounded_from_its_call_sites(fixed_program) -> None:
    """kprintf's loops depend on its format string, unknown inside kprintf:
    with the constant argument at each call site (the panic format in
    .rodata) the abstract execution walks the string, summarising the
    inner kputs loop of a %s argument (unknown), and bounds the walk by the
    format's length; the width and length-modifier loops are never entered.
    The kputs loop itself stays without a bound (its string is unknown)."""
    from kairos.wcet.bounds import BoundAnalysis
    from kairos.wcet.loops import find_loops
    ba = BoundAnalysis(fixed_program)
    ba.smt = False
    fo = find_loops(fixed_program.function("kprintf"))
    loops = sorted(fo.loops, key=lambda lp: lp.header)
    fmt = "\nKAIROS PANIC at %s:%d: %s\n"
    assert fmt.encode() + b"\0" in b"".join(s.data for s in fixed_program.image.sections if not s.nobits)
    got = []
    for lp in loops:
        assert ba.cheap_bound(fo, lp) is None or lp.parent is not None
        b = ba.call_site_bound(fo, lp)
        got.append(None if b is None else b.max)
    # one header execution per character, a conversion taking two
    assert got[0] == len(fmt) - fmt.count("%") and "1 call site" in ba.call_site_bound(fo, loops[0]).source
    assert got[1:4] == [1, 1, None]
    # an entry of the program is reached without a call site: no such fact
    from kairos.wcet.cfg import build_program
    alone = build_program(fixed_program.image, ["trap_entry", "kprintf"], noreturn=["kernel_panic"])
    efo = find_loops(alone.function("kprintf"))
    assert BoundAnalysis(alone).call_site_bound(efo, min(efo.loops, key=lambda lp: lp.header)) is None
