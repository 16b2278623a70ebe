"""Shared fixtures for the WCET validation tests: build the test programs
once per session and memoise their analyses and traced runs."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

import progbuild

PROGRAM_DIR = progbuild.PROGRAMS


def annotations_for(program: str):
    from kairos.wcet import annotations as annmod
    path = PROGRAM_DIR / f"{program}.toml"
    return annmod.load(str(path)) if path.exists() else annmod.Annotations()


class Built:
    def __init__(self, outdir: Path) -> None:
        self.outdir = outdir
        self.elves: dict[str, Path] = {}

    def elf(self, program: str) -> Path:
        if program not in self.elves:
            self.elves[program] = progbuild.build(program, self.outdir)
        return self.elves[program]

    @functools.lru_cache(maxsize=None)
    def analysis(self, program: str, model: str):
        from kairos.wcet import driver
        entries = [e.symbol for e in progbuild.ENTRIES if e.program == program]
        return driver.run(str(self.elf(program)), entries, model_name=model, sp0="__stack_top",
                          annotations=annotations_for(program))

    @functools.lru_cache(maxsize=None)
    def traces(self, program: str, symbol: str):
        from kairos.wcet.emulator import load_elf, run_entry
        entry = next(e for e in progbuild.ENTRIES if e.program == program and e.symbol == symbol)
        out = []
        for inp in entry.inputs:
            prog = load_elf(self.elf(program))
            out.append((run_entry(prog, symbol, inp), prog.memory))
        return out


def make_built(tmp_path_factory) -> Built:
    if not progbuild.have_compiler():
        pytest.skip(f"{progbuild.CC} not installed")
    return Built(tmp_path_factory.mktemp("wcet-programs"))
