"""`kairos wcet` on the generated schedulers (docs/timed-automata.md
"Overhead"): the engine's loops of the 6-server scheduler are bounded from
their generated annotations within a small processor-time budget.

Before the cap on kept stack frames (smtloops.MAX_KEPT_FRAMES), checking
the annotation of `ta6_step`'s edge loop asserted a formula whose nested
memory lambdas z3 had not reduced after minutes, outside every effort
budget, and the 6- and 7-server analyses never finished."""

from __future__ import annotations

import subprocess
import time

import pytest

from conftest import REPO

ELF = REPO / "build" / "debug" / "user" / "tasched" / "tabench.elf"
GEN = REPO / "build" / "debug" / "user" / "tasched" / "tabench-gen"

pytestmark = pytest.mark.usefixtures("private_solver_cache")


def test_six_server_engine_loops_are_bounded_within_budget(debug_kernel) -> None:
    b = subprocess.run(["make", "-s", "--no-print-directory", "FLAVOUR=debug", str(ELF.relative_to(REPO))],
                       cwd=REPO, capture_output=True, text=True, timeout=900)
    assert b.returncode == 0, b.stdout + b.stderr
    from kairos.wcet import annotations as annmod
    from kairos.wcet import smtloops
    from kairos.wcet.bounds import BoundAnalysis
    from kairos.wcet.cfg import build_program
    from kairos.wcet.elfimage import ElfImage
    from kairos.wcet.loops import find_loops

    ann = annmod.load(str(GEN / "ta6_sched.wcet.toml"))
    prog = build_program(ElfImage(str(ELF)), ["ta6_tick"])
    ba = BoundAnalysis(prog, ann)
    fo = find_loops(prog.function("ta6_step"))
    kept: list[int] = []
    summarised: list[int] = []
    orig = smtloops.LoopQuery._keep_frame
    orig_unwritten = smtloops.LoopQuery._keep_unwritten

    def counting(self, mem, sp):
        kept.append(self.kept_frames)
        return orig(self, mem, sp)

    def counting_unwritten(self, mem, writes):
        summarised.append(self.kept_frames)
        return orig_unwritten(self, mem, writes)
    smtloops.LoopQuery._keep_frame = counting
    smtloops.LoopQuery._keep_unwritten = counting_unwritten
    t0 = time.process_time()
    try:
        got = sorted((lp.header, ba.bound(fo, lp, ["ta6_step"])) for lp in fo.loops)
    finally:
        smtloops.LoopQuery._keep_frame = orig
        smtloops.LoopQuery._keep_unwritten = orig_unwritten
    spent = time.process_time() - t0
    # seven loops; each bound is the generated annotation's (14 processes,
    # at most 4 edges per location) or a proved smaller one
    assert len(got) == 7
    assert all(1 <= b.max <= 15 for _h, b in got), got
    assert sum(b.kind == "automatic" for _h, b in got) >= 5, got
    # memory was kept across the engine's calls: by the callees' store
    # summaries (bounds.store_ranges: stores, no nested lambda, no cap
    # needed) or, where a callee's stores are not known, by keeping the
    # frame, whose nested lambdas stay within the cap
    assert kept or summarised
    assert all(k < smtloops.MAX_KEPT_FRAMES for k in kept)
    # about 15 s on the 2-core machine; without the cap it did not return
    assert spent < 90, f"{spent:.0f} s of processor time"
