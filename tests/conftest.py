"""Shared fixtures for the host-side tests: built kernels and a cross compiler."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CROSS_GCC = "riscv64-unknown-elf-gcc"


def pytest_configure(config: pytest.Config) -> None:
    # `make test` deselects these (-m "not campaign"); `make campaign` runs them.
    config.addinivalue_line("markers", "campaign: a long run outside CI's budget (make campaign)")


def build_flavour(flavour: str) -> Path:
    proc = subprocess.run(["make", "-s", "--no-print-directory", f"FLAVOUR={flavour}", "kernel"],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, f"kernel build ({flavour}) failed:\n{proc.stdout}{proc.stderr}"
    return REPO / "build" / flavour / "kernel.elf"


def kernel_max_refills() -> int:
    """CONFIG_MAX_REFILLS: config.h defines it as KAIROS_MAX_REFILLS, whose
    one home (shared with the user library) is kernel/include/uapi/kairos/limits.h."""
    import re
    config = (REPO / "kernel" / "include" / "config.h").read_text()
    assert re.search(r"^#define CONFIG_MAX_REFILLS KAIROS_MAX_REFILLS$", config, re.M), \
        "kernel/include/config.h does not define CONFIG_MAX_REFILLS as KAIROS_MAX_REFILLS"
    limits = (REPO / "kernel" / "include" / "uapi" / "kairos" / "limits.h").read_text()
    m = re.search(r"^#define KAIROS_MAX_REFILLS (\d+)$", limits, re.M)
    assert m, "kernel/include/uapi/kairos/limits.h defines no KAIROS_MAX_REFILLS"
    return int(m.group(1))


def build_debug_user() -> None:
    """The debug flavour's user programs (root tasks, PD images, examples)."""
    proc = subprocess.run(["make", "-s", "--no-print-directory", "FLAVOUR=debug", "user"], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def run_debug_root_task(elf: Path, kernel: Path) -> str:
    """Build the debug user programs, run the root task `elf` under QEMU
    with `-icount shift=0,sleep=off` (idle time skipped exactly, so host load
    cannot shift the guest's clock) and return its output; fails unless the
    run passed."""
    from kairos.runner import run
    build_debug_user()
    result = run(elf, kernel, timeout=300, extra_qemu=["-icount", "shift=0,sleep=off"])
    assert result.passed, result.reason + result.output[-3000:]
    return result.output


@pytest.fixture(scope="session")
def debug_kernel() -> Path:
    return build_flavour("debug")


@pytest.fixture(scope="session")
def debug_user(debug_kernel) -> Path:
    """The debug kernel, with the debug user programs built."""
    build_debug_user()
    return debug_kernel


@pytest.fixture(scope="session")
def check_kernel() -> Path:
    return build_flavour("check")


@pytest.fixture(scope="session")
def cross_gcc() -> str:
    path = shutil.which(CROSS_GCC)
    assert path, f"{CROSS_GCC} is missing: run scripts/bootstrap.sh"
    return path


def compile_plain(tmp: Path, name: str, source: str, *flags: str) -> Path:
    """Build a root task with a plain `gcc -nostdlib -static` (no Kairos runtime)."""
    src = tmp / f"{name}.c"
    src.write_text(source)
    out = tmp / f"{name}.elf"
    cmd = [CROSS_GCC, "-O2", "-nostdlib", "-static", "-march=rv64imac", "-mabi=lp64", "-mcmodel=medany", "-o", str(out), str(src), *flags]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"
    return out


@pytest.fixture
def private_solver_cache(tmp_path, monkeypatch):
    """An empty on-disk SMT answer cache and an empty in-process memo, so a
    test sees the solver's own answers, not ones an earlier run stored."""
    monkeypatch.setenv("KAIROS_WCET_CACHE", str(tmp_path / "smt-cache"))
    from kairos.wcet import smtloops
    smtloops._memo.clear()
