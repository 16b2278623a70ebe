"""`kairos latency` on a kernel in miniature (tests/wcet/programs/minikernel.c):
the regions it finds in the binary, how each is bounded and composed with the
handling path of its end, and the command's output and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kairos.cli import main
from kairos.latency import regions, report
from kairos.wcet import annotations, driver

import progbuild

ANN = '''
preemption = ["preemption_point"]

[parameters]
idle_rounds = { default = 2, note = "rounds of the idle loop" }
sources = { default = 4, note = "interrupt sources" }

[[loop]]
function = "kernel_exit"
max = "idle_rounds"

[[loop]]
function = "handle_pending_interrupts"
max = "sources + 1"
'''

pytestmark = pytest.mark.skipif(not progbuild.have_compiler(), reason="no RISC-V cross compiler")


@pytest.fixture(scope="module")
def minikernel(tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("minikernel")
    elf = progbuild.build("minikernel", out)
    ann = out / "minikernel.toml"
    ann.write_text(ANN)
    return elf, ann


@pytest.fixture(scope="module", params=["simple", "u54"])
def result(request, minikernel) -> regions.LatencyResult:
    elf, ann = minikernel
    return regions.analyse(str(elf), annotations.load(str(ann)), model_name=request.param, all_lengths=True)


def test_regions_are_found_by_symbol_and_instruction(result: regions.LatencyResult) -> None:
    sites = {(r.start.kind, r.start.function) for r in result.regions}
    assert sites == {("entry", "handle_syscall"), ("entry", "handle_interrupt"),
                     ("poll", "long_operation"), ("poll", "flush_operation"), ("wfi", "kernel_exit")}
    # the idle wait is reached from both handlers: one region start per call context
    assert sum(r.start.kind == "wfi" for r in result.regions) == 2
    assert result.polls == ["preemption_point"]
    assert result.starts == len(result.regions) == 6


def test_response_is_region_plus_handling_of_its_end(result: regions.LatencyResult) -> None:
    worst_handling = max(result.handling.values())
    for r in result.regions:
        assert r.length is not None and r.length > 0
        assert r.length < r.response <= r.length + worst_handling
        # the handling path of a kind of end, or of the very poll (in its context) the region ends at
        assert 0 < r.handling <= max(result.handling.values())
        assert r.handling in set(result.handling.values()) or "preemption point" in r.end
    assert result.bound == max(r.response for r in result.regions) == result.worst.response


def test_interrupt_entry_region_equals_the_delivery_path(result: regions.LatencyResult) -> None:
    # two graphs (polls as stops / as calls), the same paths when no poll is on them
    entry = next(r for r in result.regions if r.name == "kernel entry -> handle_interrupt")
    assert entry.length == result.interrupt_entry
    assert {"handle_interrupt", "kernel_exit"} <= {s.function for s in entry.length_path}


def test_region_after_a_poll_ends_at_the_next_poll_or_exit(result: regions.LatencyResult) -> None:
    poll = next(r for r in result.regions if r.start.kind == "poll" and r.start.function == "long_operation")
    fns = {s.function for s in poll.length_path}
    assert "long_operation" in fns and "trap_entry" not in fns
    # the region entering the operation ends at its first poll, without the exit path
    entry = next(r for r in result.regions if r.name == "kernel entry -> handle_syscall")
    assert "preemption point" in entry.end
    assert "exit_to_user" not in {s.function for s in entry.length_path}


def test_idle_wait_ends_regions_where_the_whole_entry_analysis_goes_on(minikernel) -> None:
    # simple model: the same block costs in both analyses (the u54 analysis of kairos wcet runs on the
    # program restricted to the handler, with other cache states)
    elf, ann = minikernel
    res = regions.analyse(str(elf), annotations.load(str(ann)), model_name="simple")
    whole = driver.run(str(elf), ["trap_entry@handle_interrupt"], "simple", annotations.load(str(ann)))
    # kairos wcet counts a second idle round after the wfi; the region ends at it
    assert whole.results[0].bound > res.interrupt_entry


def test_parameters_feed_the_loop_bounds(minikernel) -> None:
    elf, ann = minikernel
    one = regions.analyse(str(elf), annotations.load(str(ann), {"sources": 1}), model_name="simple")
    nine = regions.analyse(str(elf), annotations.load(str(ann), {"sources": 9}), model_name="simple")
    assert one.parameters["sources"]["value"] == 1 and nine.parameters["sources"]["default"] == 4
    assert one.interrupt_entry < nine.interrupt_entry and one.bound < nine.bound


def test_cli_table_json_and_html(minikernel, tmp_path: Path, capsys) -> None:
    elf, ann = minikernel
    js, page = tmp_path / "lat.json", tmp_path / "lat.html"
    rc = main(["latency", str(elf), "-a", str(ann), "--model", "simple", "--json", str(js), "--html", str(page),
               "--param", "idle_rounds=2"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "worst-case interrupt response" in out and "kernel entry -> handle_syscall" in out
    data = json.loads(js.read_text())
    assert data["bound_cycles"] == max(r["response_cycles"] for r in data["regions"])
    assert data["parameters"]["idle_rounds"] == {"value": 2, "default": 2, "note": "rounds of the idle loop"}
    assert {r["kind"] for r in data["regions"]} == {"entry", "poll", "wfi"}
    assert all(r["worst_path"] and r["worst_path"][0]["source"].startswith("minikernel.c") or
               r["kind"] != "poll" for r in data["regions"])
    assert "Interrupt latency of" in page.read_text()


@pytest.mark.parametrize("args, message", [
    (["--param", "nope=3"], "unknown parameter(s) nope (declared in the annotation files: idle_rounds, sources)"),
    (["--param", "idle_rounds"], "expected NAME=VALUE"),
    (["--param", "idle_rounds=x"], "must be an integer"),
    (["--param", "idle_rounds=-1"], "must be >= 0"),
    (["--entry", "no_such_symbol"], "no_such_symbol"),
    (["--top", "0"], "--top must be at least 1"),
    (["--avoid", "no_such_function"], "avoided function 'no_such_function' is not a function of the kernel"),
    (["--system", "no-such-system.xml"], "no-such-system.xml"),
])
def test_cli_errors_are_one_line(minikernel, tmp_path: Path, capsys, args: list[str], message: str) -> None:
    elf, ann = minikernel
    js = tmp_path / "out.json"
    rc = main(["latency", str(elf), "-a", str(ann), "--model", "simple", "--json", str(js), "-q", *args])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("kairos latency: error: ") and message in err and err.count("\n") == 1
    assert not js.exists()


def test_malformed_elf_is_one_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.elf"
    bad.write_bytes(b"\x7fELF not really")
    assert main(["latency", str(bad), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kairos latency: error: ") and err.count("\n") == 1


def test_own_lengths_of_the_top_sites_only(minikernel) -> None:
    elf, ann = minikernel
    res = regions.analyse(str(elf), annotations.load(str(ann)), model_name="simple", top_lengths=2)
    with_length = [r for r in res.regions if r.length is not None]
    assert len(with_length) == 2 and len({(r.start.kind, r.start.site) for r in with_length}) == 2
    assert {id(r) for r in with_length} == {id(r) for r, _n in report.by_site(res)[:2]}


def test_by_site_keeps_the_worst_context(result: regions.LatencyResult) -> None:
    rows = report.by_site(result)
    assert len(rows) == 5
    wfi_row, n = next((r, n) for r, n in rows if r.start.kind == "wfi")
    assert n == 2 and wfi_row.response == max(r.response for r in result.regions if r.start.kind == "wfi")


def test_miss_census_of_the_worst_region(minikernel, tmp_path: Path, capsys) -> None:
    """``--misses``: the worst region's data-cache misses by reason (and the
    interrupt entry's when the region ends at sret), with the same bound;
    the misses charged are part of the region's cycles."""
    elf, ann = minikernel
    plain = regions.analyse(str(elf), annotations.load(str(ann)), model_name="u54", table=False)
    res = regions.analyse(str(elf), annotations.load(str(ann)), model_name="u54", table=False, census=True)
    assert plain.misses is None
    assert res.bound == plain.bound
    worst = res.worst
    c = res.misses["region"]
    assert c is not None and c["cycles"] > 0
    assert c["cycles"] <= worst.response - worst.handling
    assert sum(v["cycles"] for v in c["by_reason"].values()) == c["cycles"]
    assert c["accesses"] and all(a["function"] != "?" for a in c["accesses"])
    assert ("interrupt entry" in res.misses) == worst.end.startswith("sret")
    js = tmp_path / "lat.json"
    rc = main(["latency", str(elf), "-a", str(ann), "--bound-only", "--misses", "--json", str(js)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "(region): data-cache misses on the worst path" in " ".join(out.split())
    assert json.loads(js.read_text())["misses"]["region"]["cycles"] == c["cycles"]


@pytest.fixture(scope="module")
def exclusive(tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("exclusive")
    elf = progbuild.build("minikernel_exclusive", out)
    ann = out / "exclusive.toml"
    ann.write_text('preemption = ["preemption_point"]\n')
    return elf, ann


@pytest.mark.parametrize("table", [True, False])
def test_infeasible_paths_are_cut_from_the_worst_region(exclusive, table: bool) -> None:
    # handle_syscall runs clear_a or clear_b, never both: the ILP alone takes
    # both; the refinement finds the conflict on the region's worst path
    elf, ann = exclusive
    ann_ = annotations.load(str(ann))
    off = regions.analyse(str(elf), ann_, model_name="simple", table=table, infeasible_paths=False)
    on = regions.analyse(str(elf), ann_, model_name="simple", table=table)
    assert off.refinements == {}
    assert on.bound < off.bound
    name = "kernel entry -> handle_syscall" if table else "kernel entry"
    ref = on.refinements[name]
    assert ref.bound_before == off.bound and ref.bound_after == on.bound
    assert any(c.kind == "conflict" and any("minikernel_exclusive.c" in s for s in c.sources)
               for c in ref.conflicts), ref.conflicts
    # the refined worst path still runs one of the two operations: the cut is
    # of the combination, not of either branch
    funcs = {s.function for s in on.worst.response_path}
    assert len(funcs & {"clear_a", "clear_b"}) == 1, funcs
    # sound: no feasible path is cut. Each operation alone (the whole-entry
    # analysis of the paths that call one and not the other) still fits, with
    # the interrupt entry charged at the sret that ends the region
    each = [driver.run(str(elf), [f"trap_entry@handle_syscall,{a},!{b}"], "simple", ann_,
                       infeasible_paths=False).results[0].bound
            for a, b in (("clear_a", "clear_b"), ("clear_b", "clear_a"))]
    assert on.bound >= max(each) + on.interrupt_entry


def test_avoided_functions_leave_every_path_and_start_no_region(minikernel, tmp_path: Path, capsys) -> None:
    # a system that never asks for the flush: its poll starts no region, and no path runs it
    elf, ann = minikernel
    full = regions.analyse(str(elf), annotations.load(str(ann)), model_name="simple", all_lengths=True)
    res = regions.analyse(str(elf), annotations.load(str(ann)), model_name="simple", all_lengths=True,
                          avoid=["flush_operation"])
    assert res.avoided == ["flush_operation"]
    assert ("poll", "flush_operation") in {(r.start.kind, r.start.function) for r in full.regions}
    assert {(r.start.kind, r.start.function) for r in res.regions} == {
        ("entry", "handle_syscall"), ("entry", "handle_interrupt"), ("poll", "long_operation"),
        ("wfi", "kernel_exit")}
    sys_full = next(r for r in full.regions if r.name == "kernel entry -> handle_syscall")
    sys_res = next(r for r in res.regions if r.name == "kernel entry -> handle_syscall")
    assert "flush_operation" in {s.function for s in sys_full.length_path}
    assert "flush_operation" not in {s.function for s in sys_res.length_path}
    assert sys_res.length <= sys_full.length and res.bound <= full.bound
    js = tmp_path / "avoid.json"
    assert main(["latency", str(elf), "-a", str(ann), "--model", "simple", "--avoid", "flush_operation",
                 "--json", str(js), "-q"]) == 0
    assert json.loads(js.read_text())["avoided"] == ["flush_operation"]
