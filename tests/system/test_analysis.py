"""`kairos analyze` (docs/analysis.md): the response-time equations on small
systems with known kernel costs and declared WCETs (figures worked out by
hand below), and the command on the examples with the kernel's own WCET
bounds: schedulable for demo, passive_server and device; not schedulable
for infeasible, naming the victim.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import REPO
from kairos.cli import main
from kairos.system.analysis import Analyser, KernelCosts, system_annotations
from kairos.system.parse import parse_system

EXAMPLES = REPO / "examples"
PD_BUILD = REPO / "build" / "debug" / "examples"
IMAGE = PD_BUILD / "demo" / "greedy.elf"

# Kernel costs in cycles; at 1000 cycles per µs: syscall 10 µs, exception
# 5 µs, interrupt 4 µs, interrupt response 30 µs.
KERNEL = KernelCosts(syscall=10_000, exception=5_000, interrupt=4_000, interrupt_response=30_000, source="test")


@pytest.fixture(scope="module")
def built() -> None:
    proc = subprocess.run(["make", "-s", "--no-print-directory", "FLAVOUR=debug", "user"], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def system(tmp: Path, body: str):
    xml = tmp / "s.xml"
    xml.write_text(f"<system>{body}</system>")
    return parse_system(xml)


def pd(name, prio, budget, period, wcet=None, extra="", inner=""):
    w = f'<wcet entry="init" time="{wcet}"/>' if wcet is not None else ""
    return (f'<protection_domain name="{name}" priority="{prio}" budget="{budget}" period="{period}" {extra}>'
            f'<program_image path="{IMAGE}"/>{w}{inner}</protection_domain>')


def analyse(s, mhz=1000.0):
    return {r.name: r for r in Analyser(s, KERNEL, mhz, use_wcet_tool=False).run().pds}, \
        Analyser(s, KERNEL, mhz, use_wcet_tool=False).run()


def test_two_pds_by_hand(built, tmp_path):
    s = system(tmp_path, pd("hi", 200, 1000, 5000, wcet=500) + pd("lo", 100, 3000, 20000, wcet=2000))
    r, a = analyse(s)
    # Per job: 2 interrupts (release, exhaustion) + 1 system call (the end) = 18 µs.
    assert r["hi"].demand_us == pytest.approx(518.0)
    assert r["lo"].demand_us == pytest.approx(2018.0)
    # hi: B = 30 (kernel) + C 518 + lo's release interrupt (4 per 20 ms) = 552.
    assert r["hi"].blocking_us == pytest.approx(30.0)
    assert r["hi"].response_us == pytest.approx(552.0)
    # lo: 30 + 2018 + ceil(R/5000) * (1000 + 10): R = 3058 (one hi window).
    assert r["lo"].response_us == pytest.approx(3058.0)
    assert r["lo"].slack_us == pytest.approx(20000 - 3058.0)
    assert a.schedulable and a.total_utilisation == pytest.approx(0.2 + 0.15)
    assert r["hi"].verdict == r["lo"].verdict == "ok"


def test_budget_interference_not_wcet(built, tmp_path):
    """A higher-priority PD interferes by its budget (what the kernel
    enforces), whatever its WCET: a low-criticality PD may overrun its
    estimate without hurting lower PDs beyond that."""
    s = system(tmp_path, pd("hi", 200, 4000, 10000, wcet=100) + pd("lo", 100, 3000, 10000, wcet=2000))
    r, _ = analyse(s)
    assert r["lo"].response_us == pytest.approx(30 + 2018 + 4000 + 10)


def test_miss_is_named_and_sensitivity_is_exact(built, tmp_path):
    s = system(tmp_path, pd("hog", 200, 6000, 10000) + pd("victim", 100, 6000, 10000, wcet=5000))
    r, a = analyse(s)
    assert not a.schedulable
    assert r["victim"].verdict.startswith("MISS") and r["victim"].response_us is None
    assert r["hog"].verdict == "ok" and r["hog"].demand_us == 6000   # no WCET: its budget
    # A feasible pair: the largest budget growth keeps it schedulable, one
    # more µs does not.
    s = system(tmp_path, pd("a", 200, 2000, 10000, wcet=1000) + pd("b", 100, 3000, 10000, wcet=2500))
    r, a = analyse(s)
    assert a.schedulable
    grow = r["a"].sensitivity_us
    assert 0 < grow < 8000
    for extra, ok in ((grow, True), (grow + 1, False)):
        s2 = system(tmp_path, pd("a", 200, 2000 + extra, 10000, wcet=1000) + pd("b", 100, 3000, 10000, wcet=2500))
        assert analyse(s2)[1].schedulable is ok


def test_demand_over_budget_is_a_miss(built, tmp_path):
    s = system(tmp_path, pd("a", 100, 1000, 10000, wcet=990))
    r, a = analyse(s)
    assert r["a"].demand_us == pytest.approx(1008.0) and r["a"].verdict == "MISS: demand exceeds budget"
    assert not a.schedulable


def test_passive_server_blocking_and_charging(built, tmp_path):
    """A ppcall's server time is charged to the caller; a caller below a PD
    blocks it for one server call when the server's priority (ceiling) is
    at or above it (immediate priority ceiling protocol)."""
    body = (pd("srv", 250, 1000, 10000, extra='passive="true"', inner='<wcet entry="protected" time="300"/>')
            + pd("mid", 150, 1000, 10000, wcet=100)
            + pd("low", 100, 2000, 10000, wcet=200)
            + '<channel><end pd="low" id="0" pp="true"/><end pd="srv" id="1"/></channel>')
    r, a = analyse(system(tmp_path, body))
    assert r["srv"].kind == "passive" and r["srv"].verdict == "passive"
    # low: 200 + 300 (server) + 2 interrupts + (end + signal end + Call/ReplyRecv) 4 syscalls = 548.
    assert r["low"].server_us == 300 and r["low"].demand_us == pytest.approx(200 + 300 + 8 + 40)
    # mid is not a caller but sits below the ceiling: blocked once by low's call.
    assert r["mid"].blocking_us == pytest.approx(30 + 300 + 20)
    assert r["low"].blocking_us == pytest.approx(30)


def test_system_annotations_set_the_thread_and_refill_parameters():
    import tomllib
    base = (REPO / "kernel" / "wcet-annotations.toml").read_text()
    before = tomllib.loads(base)["parameters"]
    after = tomllib.loads(system_annotations(base, threads=5, refills=6))["parameters"]
    assert after["queue_length"]["default"] == 5 and after["refills_per_sc"]["default"] == 6
    assert after["decode_depth"]["default"] == 1 < before["decode_depth"]["default"]
    assert before["queue_length"]["default"] > 5
    # Never above what the kernel enforces.
    capped = tomllib.loads(system_annotations(base, threads=5, refills=99))["parameters"]
    assert capped["refills_per_sc"]["default"] == before["refills_per_sc"]["default"]


def test_latency_inputs_of_a_described_system(built):
    # kairos latency --system: the demo's 4 PDs + the loader on one queue at most, its largest
    # refill count, one CNode level per lookup, a release heap of at most one thread per SC,
    # and the decoders no PD reaches (those in the kernel)
    from kairos.runner import build_kernel
    from kairos.system.analysis import PD_UNREACHABLE, latency_inputs, system_parameters
    from kairos.wcet.elfimage import ElfImage
    elf = build_kernel("debug")
    sysxml = EXAMPLES / "demo" / "system.xml"
    params, avoid, notes = latency_inputs(str(sysxml), [str(PD_BUILD / "demo")], str(elf))
    threads, refills = system_parameters(parse_system(sysxml, [PD_BUILD / "demo"]))
    assert params == {"queue_length": threads, "refills_per_sc": refills, "decode_depth": 1,
                      "release_queue_length": threads}     # one SC per PD and the loader's
    assert threads == 5
    image = ElfImage(str(elf))
    assert avoid == [n for n in PD_UNREACHABLE if image.has_symbol(n)]
    assert {"invoke_untyped", "invoke_cnode", "invoke_tcb"} <= set(avoid)
    assert "invoke_sched_context" not in avoid      # PDs hold other PDs' SC caps
    assert len(notes) == 1 and "4 PDs" in notes[0]


@pytest.mark.parametrize("name", ["demo", "passive_server", "device", "infeasible"])
def test_a_described_system_has_one_scheduling_context_per_pd(name, built):
    # release_queue_length = the PDs + the loader rests on this: the loader
    # makes one SC per PD (its own is the root thread's), and gives no PD a
    # capability that makes or configures one
    from kairos.system.analysis import PD_UNREACHABLE
    from kairos.system.pack import SCHEDCONTEXT, build_spec
    system = parse_system(EXAMPLES / name / "system.xml", [PD_BUILD / name])
    made = [c for c in build_spec(system).creates if c[1] == SCHEDCONTEXT]
    assert len(made) == len(system.pds)
    assert {"invoke_untyped", "invoke_sched_control"} <= set(PD_UNREACHABLE)


@pytest.mark.parametrize("name, status", [("demo", 0), ("passive_server", 0), ("device", 0), ("infeasible", 1)])
def test_analyze_examples_with_the_kernels_wcet(name, status, built, tmp_path, capsys):
    out = tmp_path / "a.json"
    rc = main(["analyze", str(EXAMPLES / name / "system.xml"), "--search-path", str(PD_BUILD / name),
               "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == status, text
    a = json.loads(out.read_text())
    assert a["schedulable"] is (status == 0)
    k = a["kernel"]
    assert 0 < k["interrupt_us"] <= k["interrupt_response_us"] and k["syscall_us"] > 0
    assert "kernel-wcet-" in k["source"]
    verdicts = {p["name"]: p["verdict"] for p in a["pds"]}
    if name == "infeasible":
        assert verdicts["victim"].startswith("MISS") and verdicts["hog"] == "ok"
        assert re.search(r"NOT schedulable \(victim may miss its deadline\)", text), text
    else:
        assert all(v in ("ok", "passive") for v in verdicts.values()), verdicts
        assert "verdict: schedulable" in text
        for p in a["pds"]:
            if p["kind"] == "active":
                assert p["response_us"] <= p["deadline"] and p["slack_us"] >= 0
    if name == "demo":
        critical = next(p for p in a["pds"] if p["name"] == "critical")
        assert critical["wcet_source"] == "kairos wcet" and critical["wcet_us"] > 0


def test_analyze_bad_input(built, tmp_path, capsys):
    xml = tmp_path / "bad.xml"
    xml.write_text("<system><protection_domain name='a' priority='999'/></system>")
    assert main(["analyze", str(xml)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"kairos analyze: error: {xml}:1: priority=999")
    junk = tmp_path / "k.json"
    junk.write_text("{}")
    assert main(["analyze", str(EXAMPLES / "device" / "system.xml"), "--search-path", str(PD_BUILD / "device"),
                 "--kernel-wcet", str(junk)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a kairos wcet JSON report" in err[0]


def test_cached_kernel_figures_are_keyed_by_the_analyser(tmp_path):
    """The kernel figures `kairos analyze` caches are named by everything
    they depend on, the analyser's own code included: after a change to the
    analysis the same kernel is analysed again, not read from the cache."""
    import kairos.wcet.version as version
    from kairos.system.analysis import kernel_costs_key
    from kairos.wcet.version import analyser_fingerprint, modules_digest

    base = kernel_costs_key(b"kernel", "ann", "simple", "a1")
    assert base == kernel_costs_key(b"kernel", "ann", "simple", "a1")
    others = {kernel_costs_key(b"kernel2", "ann", "simple", "a1"), kernel_costs_key(b"kernel", "ann2", "simple", "a1"),
              kernel_costs_key(b"kernel", "ann", "u54", "a1"), kernel_costs_key(b"kernel", "ann", "simple", "a2")}
    assert base not in others and len(others) == 4

    # The fingerprint is a digest of the analyser's modules: any byte of any
    # module, or a module added, changes it.
    src = Path(version.__file__).parent
    pkg = tmp_path / "wcet"
    pkg.mkdir()
    for f in src.glob("*.py"):
        (pkg / f.name).write_bytes(f.read_bytes())
    assert modules_digest(pkg) == modules_digest(src) == analyser_fingerprint()
    ipet = pkg / "ipet.py"
    ipet.write_bytes(ipet.read_bytes() + b"\n# changed\n")
    changed = modules_digest(pkg)
    assert changed != analyser_fingerprint()
    (pkg / "new_stage.py").write_text("")
    assert modules_digest(pkg) not in (changed, analyser_fingerprint())


def test_pd_code_under_an_itim_model_runs_from_the_icache_it_leaves(built, capsys):
    """Under the -itim presets the ITIM holds the kernel's code: a PD's
    program has no range in it and runs from the one I-cache way left,
    whose sets are the ones u54's one-way view already uses. So a PD
    entry's bound under u54-itim is its bound under u54, and under
    u54-l2lim-itim its bound under u54-l2lim; before, a PD program (it has
    no __itim_start) could not be analysed under those presets at all. The
    command takes every preset."""
    from kairos.system.analysis import pd_entry_wcet
    s = parse_system(EXAMPLES / "demo" / "system.xml", [PD_BUILD / "demo"])
    critical = next(p for p in s.pds if p.name == "critical")
    bounds = {m: pd_entry_wcet(critical, "notified", m) for m in ("u54", "u54-itim", "u54-l2lim", "u54-l2lim-itim")}
    assert bounds["u54"] is not None and bounds["u54-l2lim"] is not None, bounds
    assert bounds["u54-itim"] == bounds["u54"] and bounds["u54-l2lim-itim"] == bounds["u54-l2lim"], bounds
    assert bounds["u54-l2lim"] < bounds["u54"], bounds
    with pytest.raises(SystemExit):
        main(["analyze", str(EXAMPLES / "demo" / "system.xml"), "--model", "u54-nonesuch"])
    assert "u54-l2lim-itim" in capsys.readouterr().err


def test_kernel_entries_exclude_only_functions_the_kernel_has():
    """The release kernel has no trace_dump: `kairos analyze --flavour
    release` stopped at "symbol 'trace_dump' not found" before the entries
    named only the excluded functions the kernel has."""
    from kairos.system.analysis import EXCEPTION_ENTRY, IRQ_ENTRY, SYSCALL_ENTRY, kernel_entries
    assert kernel_entries(lambda name: True) == (SYSCALL_ENTRY, EXCEPTION_ENTRY, IRQ_ENTRY)
    syscall, exception, irq = kernel_entries(lambda name: name not in ("trace_dump", "kprintf"))
    assert syscall.startswith("trap_entry@handle_syscall,!machine_putc,!invoke_untyped")
    assert "trace_dump" not in syscall and "kprintf" not in syscall
    assert exception == "trap_entry@handle_exception,!machine_putc" and irq == "trap_entry@handle_interrupt"
