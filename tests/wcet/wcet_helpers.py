"""Helpers for the static-analysis tests: compile small C/assembly snippets
into bare-metal riscv64 ELFs (own start-up code and linker script)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

CC = shutil.which("riscv64-unknown-elf-gcc")
needs_cc = pytest.mark.skipif(CC is None, reason="riscv64-unknown-elf-gcc missing")

CFLAGS = ["-march=rv64imac_zicsr_zifencei", "-mabi=lp64", "-O2", "-nostdlib", "-static", "-ffreestanding",
          "-fno-tree-loop-distribute-patterns", "-mcmodel=medany", "-g", "-fno-inline"]

CRT0 = """
    .section .text.start, "ax"
    .globl _start
_start:
    la   sp, __stack_top
    call main
    ebreak
"""

LINK = """
OUTPUT_ARCH(riscv)
ENTRY(_start)
SECTIONS
{
    . = 0x80000000;
    .text : { *(.text.start) *(.text .text.*) }
    .rodata : ALIGN(64) { *(.rodata .rodata.* .srodata .srodata.*) }
    .data : ALIGN(64) { *(.data .data.* .sdata .sdata.*) }
    .bss : ALIGN(64) { *(.bss .bss.* .sbss .sbss.* COMMON) }
    . = ALIGN(4096);
    . += 16384;
    __stack_top = .;
    /DISCARD/ : { *(.comment) *(.riscv.attributes) *(.note*) *(.eh_frame*) }
}
"""


def build(tmp: Path, name: str, c_src: str | None = None, asm_src: str | None = None,
          extra_flags: list[str] | None = None) -> Path:
    """Compile ``c_src`` (needs a main) and/or ``asm_src`` into tmp/name.elf."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "crt0.S").write_text(CRT0)
    (tmp / "link.ld").write_text(LINK)
    srcs = [str(tmp / "crt0.S")]
    if c_src is not None:
        (tmp / f"{name}.c").write_text(c_src)
        srcs.append(str(tmp / f"{name}.c"))
    if asm_src is not None:
        (tmp / f"{name}_s.S").write_text(asm_src)
        srcs.append(str(tmp / f"{name}_s.S"))
    out = tmp / f"{name}.elf"
    subprocess.run([CC, *CFLAGS, *(extra_flags or []), "-T", str(tmp / "link.ld"), *srcs, "-o", str(out)],
                   check=True, capture_output=True, text=True)
    return out


def function_cost(an, res, name: str, entry: str = "run") -> int:
    """Cycles a result charges to function ``name`` over every context of ``entry``."""
    f = an.program.function(name)
    return sum(res.costs.cost(ctx, b) for ctx, g in an.program.contexts(entry) if g.entry == f.entry
               for b in g.blocks)


# The kept release kernel of 4a409ff (tests/wcet/fixtures): the solver tests'
# binary, whose loops do not change when the kernel moves on.
FIXED_KERNEL = Path(__file__).resolve().parent / "fixtures" / "kernel-4a409ff-release.elf"


def fixed_kernel_program():
    """The fixed kernel's program from trap_entry, kernel_panic not returning."""
    from kairos.wcet.cfg import build_program
    from kairos.wcet.elfimage import ElfImage
    return build_program(ElfImage(str(FIXED_KERNEL)), ["trap_entry"], noreturn=["kernel_panic"])


def loop_of(program, func: str, index: int):
    """(function's loops, its index-th loop by header address)."""
    from kairos.wcet.loops import find_loops
    fo = find_loops(program.function(func))
    return fo, sorted(fo.loops, key=lambda lp: lp.header)[index]


def one_error_line(capsys, argv: list[str]) -> str:
    """Run `kairos ARGV`; it must exit 2 with exactly one error line and no
    traceback, which is returned."""
    from kairos.cli import main
    rc = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2, err
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def facts_bound(elf: Path, entry: str, facts: bool, model: str = "simple") -> int:
    """The bound of ``entry`` with the path facts (returned values tied to
    their returns, branches decided by constant arguments) on or off, and no
    infeasible-path search (its path conflicts would find some of the same)."""
    from kairos.wcet import driver
    an = driver.run(str(elf), [entry], model_name=model, sp0="__stack_top", infeasible_paths=False,
                    return_facts=facts)
    return an.results[0].bound


def assert_replay_within_bound(elf: Path, entry: str, model: str) -> None:
    """A traced run of ``entry`` replayed on ``model`` costs no more than its
    path's bound, which is no more than the entry's bound."""
    from test_symbolic_cache import _observed
    from kairos.wcet import driver
    from kairos.wcet.trace import block_path, path_bound
    an = driver.run(str(elf), [entry], model_name=model, sp0="__stack_top")
    res = an.results[0]
    trace, obs = _observed(elf, entry, model)
    assert obs <= path_bound(block_path(an.program, entry, trace), res.costs) <= res.bound
