"""Kernel runs captured under QEMU (single-stepping its gdb stub) replay
through the processor model and stay within the kernel's WCET bounds."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "build" / "debug" / "kernel.elf"
ROOTTASK = ROOT / "build" / "debug" / "user" / "rootinfo" / "rootinfo.elf"

pytestmark = pytest.mark.skipif(shutil.which("qemu-system-riscv64") is None,
                                reason="qemu-system-riscv64 not installed")


@pytest.fixture(scope="module")
def runs():
    r = subprocess.run(["make", "-s", "FLAVOUR=debug", str(KERNEL.relative_to(ROOT)),
                        str(ROOTTASK.relative_to(ROOT))], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0 or not KERNEL.exists() or not ROOTTASK.exists():
        pytest.skip(f"kernel/root task build unavailable: {r.stderr.strip()[-200:]}")
    from kairos.wcet.gdbtrace import capture_kernel_runs
    got = capture_kernel_runs(KERNEL, ROOTTASK, count=6, timeout=90, idle_timeout=5)
    if not got:
        pytest.skip("the system made no kernel entry under QEMU")
    return got


def test_captured_runs_are_kernel_paths_with_data_addresses(runs) -> None:
    from kairos.wcet.emulator import load_elf
    from kairos.wcet.sim import Decoder, replay
    from kairos.wcet.model import get_preset
    prog = load_elf(KERNEL)
    dec = Decoder(prog.memory)
    entry = prog.symbols["trap_entry"][0]
    for run in runs:
        t = run.trace
        assert t.pcs[0] == entry
        assert t.stop in ("sret", "wfi")
        assert run.handlers, "the run went through no C handler"
        for pc, w in zip(t.pcs, t.widths):
            assert (w > 0) == dec(pc).is_mem
        res = replay(t, prog.memory, get_preset("u54"))
        assert res.cycles > res.instructions
        # The kernel's stack and data lie in its window, not in device space.
        assert any(w and a >= 0xFFFF_FFC0_8000_0000 for a, w in zip(t.daddrs, t.widths))


def test_kernel_bounds_cover_the_captured_runs(runs) -> None:
    from kairos.wcet import annotations as annmod
    from kairos.wcet import driver
    from kairos.wcet.emulator import load_elf
    from kairos.wcet.errors import WcetError
    from kairos.wcet.model import get_preset
    from kairos.wcet.sim import replay
    prog = load_elf(KERNEL)
    m = get_preset("u54")
    worst: dict[str, int] = {}
    for run in runs:
        h = run.handlers[0]
        worst[h] = max(worst.get(h, 0), replay(run.trace, prog.memory, m).cycles)
    try:
        an = driver.run(str(KERNEL), [f"trap_entry@{h}" for h in worst], model_name="u54",
                        annotations=annmod.load(str(ROOT / "kernel" / "wcet-annotations.toml")))
    except WcetError as e:
        pytest.skip(f"the current kernel cannot be analysed: {e}")
    for res in an.results:
        h = res.spec.via[0]
        assert res.bound >= worst[h], f"{res.name}: bound {res.bound} < observed {worst[h]}"


def test_path_bounds_cover_the_captured_runs(runs) -> None:
    """Independent of loop annotations: the analysis' block costs summed
    along each captured kernel path bound that run's replay."""
    from kairos.wcet.emulator import load_elf
    from kairos.wcet.gdbtrace import path_bounds
    from kairos.wcet.model import get_preset
    from kairos.wcet.sim import replay
    m = get_preset("u54")
    prog = load_elf(KERNEL)
    for run, pb in zip(runs, path_bounds(KERNEL, runs, m)):
        obs = replay(run.trace, prog.memory, m).cycles
        assert obs <= pb, f"{run.handlers}: path bound {pb} < observed {obs}"
