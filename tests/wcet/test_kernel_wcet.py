"""`kairos wcet` on the current kernel build (skipped when it is not built):
every kernel entry gets a bound, with the annotations in the kernel tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import kernel_max_refills
from kairos.cli import main

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "build" / "debug" / "kernel.elf"
ANNOTATIONS = ROOT / "kernel" / "wcet-annotations.toml"

pytestmark = pytest.mark.skipif(not KERNEL.exists(), reason="kernel not built (make)")


@pytest.mark.parametrize("model", ["simple", "u54"])
def test_kernel_entries_have_bounds(tmp_path: Path, model: str) -> None:
    out = tmp_path / "kernel.json"
    rc = main(["wcet", str(KERNEL), "-a", str(ANNOTATIONS), "-e", "trap_entry@handle_syscall",
               "-e", "trap_entry@handle_exception", "--irq-entry", "trap_entry@handle_interrupt",
               "--model", model, "--json", str(out), "-q"])
    assert rc == 0, "kernel analysis failed (see stderr); kernel/wcet-annotations.toml may need updating"
    data = json.loads(out.read_text())
    bounds = {e["name"]: e["bound_cycles"] for e in data["entries"]}
    assert set(bounds) == {"trap_entry@handle_syscall", "trap_entry@handle_exception",
                           "trap_entry@handle_interrupt"}
    assert all(b > 0 for b in bounds.values())
    # every unit starts in the trap vector and reaches its handler
    for e in data["entries"]:
        fns = {s["function"] for s in e["worst_path"]}
        assert "trap_entry" in fns and e["via"][0] in fns
    ir = data["interrupt_response"]
    assert ir["bound_cycles"] == ir["longest_masked_cycles"] + ir["interrupt_entry_cycles"]
    assert ir["longest_masked_cycles"] == max(bounds["trap_entry@handle_syscall"],
                                              bounds["trap_entry@handle_exception"])


def test_refill_loop_bounds_follow_the_enforced_cap() -> None:
    """The refill loops' annotations are derived from CONFIG_MAX_REFILLS
    (kernel/include/config.h), the cap ConfigureFlags enforces: a loop that
    may visit every refill runs its header at most CONFIG_MAX_REFILLS + 1
    times, one that pops all but one at most CONFIG_MAX_REFILLS. A changed
    cap without changed annotations fails here."""
    import tomllib
    cap = kernel_max_refills()
    doc = tomllib.loads(ANNOTATIONS.read_text())
    assert doc["parameters"]["refills_per_sc"]["default"] == cap
    loops = doc["loop"]
    # loops anchored by their source text (docs/wcet.md "anchors")
    refill = {(l["function"], l.get("source")): l["max"] for l in loops
              if l.get("function") in ("merge_overlapping", "sporadic_charge")}
    assert refill == {
        ("merge_overlapping", "refill_at(sc, i)->release_time = t;"): "refills_per_sc",
        ("sporadic_charge", "for (u32 n = sc->refill_count; n > 0 && usage >= refill_head(sc)->amount; n--)"):
            "refills_per_sc + 1",
        ("sporadic_charge", "while (!single(sc) && refill_head(sc)->amount < min_budget)"):
            "refills_per_sc"}
    assert all("ASSUMPTION" not in l.get("note", "") for l in loops
               if l.get("function") in ("merge_overlapping", "sporadic_charge"))


def test_refill_pop_loops_are_bounded_from_the_refill_invariant() -> None:
    """merge_overlapping and sporadic_charge's small-head loop pop refills
    while the count is above 1: the fact refill_count <= refills_per_sc
    alone allows a count of 0, which the model would decrement past 1 for
    2^32 steps; with `least = 1` (the proved invariant's lower half) the
    solver bounds both from the parameter, one pop fewer than the ring's
    size."""
    from kairos.wcet import annotations as annmod
    from kairos.wcet.bounds import BoundAnalysis
    from kairos.wcet.cfg import build_program
    from kairos.wcet.elfimage import ElfImage
    from kairos.wcet.loops import find_loops
    from kairos.wcet.anchors import loop_order
    ann = annmod.load(str(ANNOTATIONS))
    cap = kernel_max_refills()
    program = build_program(ElfImage(str(KERNEL)), ["trap_entry"], noreturn=ann.noreturn)
    ba = BoundAnalysis(program, ann)
    for func, index in (("merge_overlapping", 0), ("sporadic_charge", 1)):
        fo = find_loops(program.function(func))
        lp = loop_order(program.image, fo)[index]
        b = ba.bound(fo, lp, [func])
        assert b.kind == "symbolic + parameter" and b.max == cap - 1, (func, b)
        assert "refill_count >= 1" in b.source
