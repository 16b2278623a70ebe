"""The kernel's loop annotations that are not anchored by `loop`/`source`
(those are checked in test_smt_loops.py) still name loops of the current
kernel: a `line = "file.c:N"` anchor has code inside a loop there, and a
`function` alone names a function with exactly one loop.  Either goes
stale when code moves; then this test fails and names the annotation.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kairos.wcet import annotations as annmod
from kairos.wcet.cfg import Function, Program, build_program
from kairos.wcet.elfimage import ElfImage
from kairos.wcet.loops import find_loops

ROOT = Path(__file__).resolve().parents[2]
KERNEL_ANN = ROOT / "kernel" / "wcet-annotations.toml"
BUILDS = [ROOT / "build" / "release" / "kernel.elf", ROOT / "build" / "debug" / "kernel.elf"]


def _line_in_loop(image: ElfImage, func: Function, file: str, line: int) -> bool:
    blocks = {b.start for a in image.addrs_of_line(file, line) if (b := func.block_containing(a)) is not None}
    return any(lp.blocks & blocks for lp in find_loops(func).loops)


def _problems(la: annmod.LoopAnnotation, builds: list[tuple[ElfImage, Program]]) -> list[str]:
    """Why ``la`` names no loop in any build (empty: it names one)."""
    found = False
    for image, prog in builds:
        by_name = {f.name: f for f in prog.functions.values()}
        if la.function is not None and la.function not in by_name:
            continue
        funcs = [by_name[la.function]] if la.function is not None else list(prog.functions.values())
        if la.line is not None:
            found |= any(_line_in_loop(image, f, la.file, la.line) for f in funcs)
        else:
            n = len(find_loops(funcs[0]).loops)
            if n != 1:
                return [f"{la.place()}: {la.function} has {n} loops in {image.path}, so `function` alone "
                        f"is ambiguous"]
            found = True
    return [] if found else [f"{la.place()}: names no loop of the kernel (stale?)"]


@pytest.mark.skipif(not any(p.exists() for p in BUILDS), reason="kernel not built (make)")
def test_line_and_function_anchors_name_current_loops() -> None:
    ann = annmod.load(str(KERNEL_ANN))
    builds = []
    for elf in BUILDS:
        if elf.exists():
            image = ElfImage(str(elf))
            builds.append((image, build_program(image, ["trap_entry"], noreturn=ann.noreturn | {"kernel_panic"})))
    checked = [la for la in ann.loops if la.index is None and la.source is None and la.address is None]
    assert checked, "no line/function-alone annotation left to check"
    problems = [p for la in checked for p in _problems(la, builds)]
    assert not problems, "\n".join(problems)


def test_a_moved_line_is_reported() -> None:
    """The check fails on an anchor whose line holds no loop."""
    release = next((p for p in BUILDS if p.exists()), None)
    if release is None:
        pytest.skip("kernel not built (make)")
    image = ElfImage(str(release))
    prog = build_program(image, ["trap_entry"], noreturn={"kernel_panic"})
    ann = annmod.parse('[[loop]]\nfunction = "handle_syscall"\nline = "console.c:1"\nmax = 2\n', "moved.toml")
    assert _problems(ann.loops[0], [(image, prog)]) == ["moved.toml: loop #1 (handle_syscall console.c:1): "
                                                        "names no loop of the kernel (stale?)"]
