"""Schedule traces (docs/schedule-traces.md): the kernel's trace buffer
(debug kernel booted with trace=on), `kairos trace schedule`'s table and
Gantt chart, and for every example the worst response observed in the
trace against the bound `kairos analyze` gives.

Time base: both are microseconds of QEMU virtual time under
`-icount shift=0`, where one instruction takes 1 ns. The trace's stamps
are timer ticks (10 per µs on QEMU virt); the analysis's bounds are
cycles of the `simple` processor model (at least one per instruction)
at 1000 cycles per µs, so they bound time on that machine from above.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO
from kairos.cli import main
from kairos.system.schedtrace import TraceError, parse_trace, thread_stats

EXAMPLES = REPO / "examples"
PD_BUILD = REPO / "build" / "debug" / "examples"
# The PDs whose jobs each example's trace must show.
OBSERVED = {
    "demo": {"monitor", "greedy", "critical"},
    "passive_server": {"client_hi", "client_lo"},
    "device": {"rtc", "app"},
    "infeasible": {"hog", "victim"},
}


@pytest.fixture(scope="module")
def built(debug_user) -> Path:
    return debug_user


def trace_and_analyse(name: str, kernel: Path, tmp: Path, *extra: str) -> tuple[dict, dict]:
    xml, search = str(EXAMPLES / name / "system.xml"), str(PD_BUILD / name)
    image = tmp / f"{name}.elf"
    assert main(["build", xml, "--search-path", search, "-o", str(image), "-q"]) == 0
    tj, aj = tmp / "trace.json", tmp / "analysis.json"
    assert main(["trace", "schedule", str(image), "--kernel", str(kernel), "--system", xml, "--search-path", search,
                 "--json", str(tj), *extra]) == 0
    main(["analyze", xml, "--search-path", search, "--json", str(aj), "-q"])
    return json.loads(tj.read_text()), json.loads(aj.read_text())


@pytest.mark.parametrize("name", ["demo", "passive_server", "device"])
def test_observed_worst_response_is_within_the_analysed_bound(name, built, tmp_path):
    trace, analysis = trace_and_analyse(name, built, tmp_path)
    assert trace["dropped"] == 0 and trace["ticks_per_us"] == 10
    bounds = {p["name"]: p for p in analysis["pds"] if p["kind"] == "active"}
    compared = set()
    for pd, row in trace["threads"].items():
        if pd not in bounds or row["jobs"] == 0:
            continue
        bound = bounds[pd]["response_us"]
        assert bound is not None
        assert row["worst_response_us"] <= bound, f"{pd}: observed {row['worst_response_us']} > bound {bound}"
        assert row["misses"] == 0
        compared.add(pd)
    assert OBSERVED[name] <= compared, (compared, trace["threads"])


def test_the_infeasible_example_misses_in_its_trace(built, tmp_path):
    png, svg = tmp_path / "gantt.png", tmp_path / "gantt.svg"
    trace, analysis = trace_and_analyse("infeasible", built, tmp_path, "--png", str(png), "--svg", str(svg))
    victim = trace["threads"]["victim"]
    assert victim["jobs"] >= 4 and victim["misses"] == victim["jobs"]
    assert victim["worst_response_us"] > 10000
    assert next(p for p in analysis["pds"] if p["name"] == "victim")["verdict"].startswith("MISS")
    hog = trace["threads"]["hog"]
    # The hog is held to its budget: 6 ms per job (plus one kernel entry).
    assert 5990 <= hog["max_used_per_job_us"] <= 6010 and hog["budget_exhausted"] >= 10
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10000
    assert "<svg" in svg.read_text()[:500]


def test_trace_parsing_and_jobs():
    lines = ["noise", "ktrace-begin: 6 events, 0 dropped, 10000 ticks per ms",
             "kt 1000 1 a0 ff",      # a runs (from idle)
             "kt 1064 7 b0 0",       # b woken at +10 µs
             "kt 1064 1 b0 1",       # b preempts a
             "kt 10c8 1 a0 6",       # b blocks on its notification at +20 µs: b's job took 10 µs
             "kt 1190 2 a0 0",       # a exhausts its budget at +40 µs
             "kt 1190 1 0 1",        # idle
             "ktrace-thread: a0 alpha", "ktrace-thread: b0 beta", "ktrace-end"]
    t = parse_trace(lines)
    assert [e.thread for e in t.events] == ["alpha", "beta", "beta", "alpha", "alpha", "idle"]
    s = thread_stats(t, deadlines={"beta": 5.0})
    assert s["beta"].job_kind == "notified" and [j.response_us for j in s["beta"].jobs] == [10.0]
    assert s["beta"].misses() and s["beta"].worst_response_us() == 10.0
    assert s["alpha"].intervals == [(0.0, 10.0), (20.0, 40.0)] and s["alpha"].throttles == [40.0]
    with pytest.raises(TraceError, match="cut short"):
        parse_trace(lines[:5])
    with pytest.raises(TraceError, match="no schedule trace"):
        parse_trace(["kairos-result: PASS"])
