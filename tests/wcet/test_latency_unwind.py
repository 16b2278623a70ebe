"""The unwinding facts of `kairos latency` (tools/kairos/latency/unwind.py)
on tests/wcet/programs/unwind.c: after a taken preemption point, a caller
that tests the returned status unwinds, and the handling path's bound falls;
a caller that ignores it keeps its whole continuation.  Either way the bound
covers the emulated run from the taken poll to `sret`, replayed through the
same processor model."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kairos.latency import regions, unwind
from kairos.latency.observe import _slice
from kairos.wcet import annotations
from kairos.wcet.cfg import build_program
from kairos.wcet.elfimage import ElfImage

import progbuild

pytestmark = pytest.mark.skipif(not progbuild.have_compiler(), reason="no RISC-V cross compiler")

ANN = 'preemption = ["preemption_point"]\n'
HANDLING = "after a taken preemption point"


def _build(out: Path, name: str, flags: list[str]) -> Path:
    elf = out / f"{name}.elf"
    subprocess.run([progbuild.CC, *progbuild.CFLAGS, *flags, "-T", str(progbuild.PROGRAMS / "link.ld"),
                    str(progbuild.PROGRAMS / "crt0.S"), str(progbuild.PROGRAMS / "unwind.c"), "-o", str(elf)],
                   check=True, capture_output=True, text=True)
    return elf


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("unwind")
    (out / "unwind.toml").write_text(ANN)
    return {"tested": _build(out, "unwind", []), "careless": _build(out, "careless", ["-DCARELESS"]),
            "ann": out / "unwind.toml"}


def _handling(elf: Path, ann: Path, model: str, facts: bool) -> int:
    res = regions.analyse(str(elf), annotations.load(str(ann)), model_name=model, unwind_facts=facts)
    return res.handling[HANDLING]


def _observed_handling(elf: Path, model: str, pending_from: int) -> int:
    """Cycles from the entry of the poll that finds the interrupt to sret,
    in an emulated run of trap_entry (the system-call side), replayed."""
    from kairos.wcet.emulator import load_elf, run_entry
    from kairos.wcet.model import get_preset
    from kairos.wcet.sim import replay
    prog = load_elf(elf)
    poll = prog.symbols["preemption_point"][0]
    trace = run_entry(prog, "trap_entry", {"pending": (1).to_bytes(8, "little"), "cause": bytes(8)})
    assert trace.stop == "sret"
    polls = [i for i, pc in enumerate(trace.pcs) if pc == poll]
    assert len(polls) > pending_from
    return replay(_slice(trace, polls[pending_from], len(trace.pcs)), prog.memory, get_preset(model)).cycles


@pytest.mark.parametrize("model", ["simple", "u54"])
def test_tested_status_unwinds(built, model: str) -> None:
    on = _handling(built["tested"], built["ann"], model, True)
    off = _handling(built["tested"], built["ann"], model, False)
    # without the facts the ILP may go on into further units and the heavy completion
    assert on < off
    assert off - on > 48 // 2 * (20 if model == "u54" else 5)     # at least half of heavy()'s iterations
    if model == "u54":
        assert _observed_handling(built["tested"], model, 0) <= on


@pytest.mark.parametrize("model", ["simple", "u54"])
def test_ignored_status_keeps_the_continuation(built, model: str) -> None:
    on = _handling(built["careless"], built["ann"], model, True)
    off = _handling(built["careless"], built["ann"], model, False)
    assert on == off
    if model == "u54":
        # the careless operation goes on after the taken poll: every unit, and the heavy work twice
        for k in (0, 3):
            assert _observed_handling(built["careless"], model, k) <= on


def test_exploration_returns_the_status(built) -> None:
    """The frames above the poll: `step` returns ERR_PREEMPTED, `operation`
    returns it, handle_syscall does not go on to heavy()."""
    image = ElfImage(str(built["tested"]))
    program = build_program(image, ["trap_entry"])
    poll = image.symbol("preemption_point").addr
    uw = unwind.Unwinder(program, {poll})
    step = program.function("step")
    site = next(blk.succs[0] for blk in step.blocks.values() if blk.call_target == poll)
    ex = uw.explore(step, site, unwind.NONZERO)
    assert ex.returns == ("const", frozenset({100})) and not ex.gave_up
    op = program.function("operation")
    call = next(bs for bs, blk in op.blocks.items() if blk.call_target == program.function("step").entry)
    ex = uw.explore(op, op.blocks[call].succs[0], ex.returns)
    assert ex.returns == ("const", frozenset({100})) and not ex.gave_up
    heavy = program.function("heavy").entry
    assert not any(op.blocks[a].call_target == heavy for a, _b in ex.allowed)
    # with an unknown status both ways stay open
    ex_any = uw.explore(op, op.blocks[call].succs[0], unwind.ANY)
    assert ex_any.returns is not None and len(ex_any.allowed) > len(ex.allowed)


def test_cli_switches_and_per_poll_handling(built, tmp_path: Path) -> None:
    import json

    from kairos.cli import main
    out = {}
    # "off" without the returned-value facts too: on this program they tie
    # the poll's result to step's test as well (the "returns" row)
    for name, extra in (("on", []), ("off", ["--no-unwind-facts", "--no-return-facts"]),
                        ("returns", ["--no-unwind-facts"]), ("worst", ["--worst-handling"])):
        js = tmp_path / f"{name}.json"
        assert main(["latency", str(built["tested"]), "-a", str(built["ann"]), "--model", "simple", "--quiet",
                     "--json", str(js), *extra]) == 0
        out[name] = json.loads(js.read_text())
    rows = out["on"]["poll_handling"]
    assert [r["function"] for r in rows] == ["step"] and rows[0]["contexts"] == 1
    assert rows[0]["cycles"] == out["on"]["handling_cycles"][HANDLING]
    assert out["off"]["handling_cycles"][HANDLING] > out["on"]["handling_cycles"][HANDLING]
    assert out["off"]["bound_cycles"] > out["on"]["bound_cycles"]
    assert out["on"]["bound_cycles"] <= out["returns"]["bound_cycles"] <= out["off"]["bound_cycles"]
    # one poll site: its own handling path is the worst one
    assert out["worst"]["bound_cycles"] == out["on"]["bound_cycles"]


def test_exploration_budget_is_effort_not_time(built, monkeypatch) -> None:
    """The unwinder's budget is counted in effort units (infeasible.Effort),
    not processor time: a clock running three times as fast (a loaded
    machine) explores the same edges with the same result; an empty budget
    gives up on the first frame, saying so."""
    import time

    from kairos.wcet import infeasible
    image = ElfImage(str(built["tested"]))
    program = build_program(image, ["trap_entry"])
    poll = image.symbol("preemption_point").addr
    step = program.function("step")
    site = next(blk.succs[0] for blk in step.blocks.values() if blk.call_target == poll)

    def explore():
        uw = unwind.Unwinder(program, {poll})
        ex = uw.explore(step, site, unwind.NONZERO)
        return ex.allowed, ex.returns, ex.gave_up, uw.effort.used

    real = explore()
    t0, clock = time.process_time(), time.process_time

    class _Slow:
        @staticmethod
        def process_time():
            return t0 + 1000.0 * (clock() - t0)
    monkeypatch.setattr(infeasible, "time", _Slow)
    # (the effort itself is compared across fresh processes in test_infeasible:
    # within one process z3's term ids, and so its effort, depend on its history)
    assert explore()[:3] == real[:3] and real[3] > 0 and not real[2]
    empty = unwind.Unwinder(program, {poll}, budget=0.0).explore(step, site, unwind.NONZERO)
    assert empty.gave_up == "effort budget" and empty.returns == unwind.ANY
