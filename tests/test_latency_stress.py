"""The latency stress root task (user/latency, docs/wcet.md "Interrupt
latency") on the release kernel: every scenario runs to its end.  Its
kernel runs are replayed against the region bounds by `make latency-check`
(too long for the test suite: single-stepping under QEMU)."""

from __future__ import annotations


import subprocess

from conftest import REPO, build_flavour, kernel_max_refills
from kairos.runner import run

ELF = REPO / "build" / "release" / "user" / "latency" / "latency_stress.elf"
SCENARIOS = ["ep_queue_delete", "ntfn_queue_delete", "revoke", "release_queue", "refill_ring", "long_messages",
             "deep_cspace"]


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
