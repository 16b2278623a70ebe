"""The latency stress root task (user/latency, docs/wcet.md "Interrupt
latency") on the release kernel: every scenario runs to its end.  Its
kernel runs are replayed against the region bounds by `make latency-check`
(too long for the test suite: single-stepping under QEMU); the replays it
compares with (observe.py: LFSR-seeded and adversarial) are checked here on
hand-made traces."""

from __future__ import annotations


import subprocess

from conftest import REPO, build_flavour, kernel_max_refills
from kairos.runner import run

ELF = REPO / "build" / "release" / "user" / "latency" / "latency_stress.elf"
SCENARIOS = ["ep_queue_delete", "ntfn_queue_delete", "revoke", "release_queue", "refill_ring", "long_messages",
             "short_calls", "deep_cspace", "cap_transfer", "irq_wakeup", "tcb_configure", "sched_params",
             "long_queue", "sc_delete"]


def test_stress_task_runs_every_scenario() -> None:
    kernel = build_flavour("release")
    proc = subprocess.run(["make", "-s", "--no-print-directory", "FLAVOUR=release", str(ELF.relative_to(REPO))],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    r = run(ELF, kernel=kernel, timeout=120, expect="latency-stress: done", fail="latency-stress: FAIL")
    out = "\n".join(r.lines)
    assert r.passed, f"{r.reason}\n{out[-2000:]}"
    for name in SCENARIOS:
        assert f"latency-stress: {name} ok" in out, f"scenario {name} did not finish:\n{out[-2000:]}"
    # the refill ring was filled to the most the kernel allows: CONFIG_MAX_REFILLS
    # refills (kernel/include/config.h), two of them the minimum
    extra = int(out.split("refill_ring extra_refills ")[1].split()[0])
    cap = kernel_max_refills()
    assert extra == cap - 2


def test_adversarial_replay_makes_the_conflicts_the_bound_allows() -> None:
    """The replay `kairos latency --observe` adds for a randomly replaced L1
    (observe.adversarial_model): direct-mapped with the same sets and line.
    Two lines 4 KiB apart, read in turn: the 8-way LFSR replay keeps both
    (a miss each, then hits), the adversarial one misses on every read."""
    from kairos.latency.observe import adversarial_model
    from kairos.wcet.emulator import Memory, Trace
    from kairos.wcet.model import get_preset
    from kairos.wcet.sim import replay

    m = get_preset("u54")
    adv = adversarial_model(m)
    assert adv is not None and adversarial_model(get_preset("u54-lru")) is None
    for c, a in ((m.dcache, adv.dcache), (m.icache, adv.icache)):
        assert (a.ways, a.line, a.size) == (1, c.line, c.size // c.ways)
    code = 0x8000_0000
    mem = Memory()
    mem.add_region(code, 64, (0x0005B503).to_bytes(4, "little") * 16)  # ld a0, 0(a1)
    t = Trace()
    for k in range(16):
        t.append(code + 4 * k, 0x8010_0000 + (k % 2) * 4096, 8)
    seeded, worst = replay(t, mem, m), replay(t, mem, adv, seeds=1)
    assert worst.misses["dcache"] == 16
    assert seeded.misses["dcache"] < 16
    assert worst.cycles > seeded.cycles


def test_compare_reports_the_worse_replay_and_the_seeded_one() -> None:
    from types import SimpleNamespace

    from kairos.latency.observe import Observation, Observed, compare

    start = SimpleNamespace(kind="entry", site=0x100)
    result = SimpleNamespace(regions=[SimpleNamespace(start=start, length=1000)], bound=1500)
    o = Observed("entry", 0x100, "kernel entry", cycles=[400, 900], instructions=[10, 20], seeded=[400, 600])
    obs = Observation("rt.elf", 2, {("entry", 0x100): o}, [300], "", interrupt_entries_seeded=[200],
                      adversarial=True)
    rows, response = compare(result, obs)
    assert rows[0]["observed_max_cycles"] == 900 and rows[0]["observed_max_instructions"] == 20
    assert rows[0]["observed_max_seeded_cycles"] == 600 and rows[0]["ratio"] == round(1000 / 900, 2)
    assert rows[0]["within"]
    assert response["observed_response_cycles"] == 1200 and response["observed_response_seeded_cycles"] == 800
    assert response["within"]
    o.cycles.append(1300)
    o.instructions.append(30)
    o.seeded.append(1)
    rows, response = compare(result, obs)
    assert not rows[0]["within"] and not response["within"]
