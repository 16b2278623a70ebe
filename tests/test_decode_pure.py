"""Decode purity: no decode step of an invocation writes kernel state
(kernel/include/invocation.h, docs/kernel.md "Invocations").

tests/host/decode builds the kernel's object files for the host (ASan,
UBSan) with a harness that draws random kernel states and random
invocations, runs the decoder the kernel's invoke_X runs for the cap and
label, and compares kernel memory and irq.c's tables with a snapshot taken
before. A changed byte, a sanitizer report or a call into a function only a
perform step may call (left undefined: a crash) fails the test.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / "tests" / "host" / "decode"
ROUNDS = 20000


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    if shutil.which("clang") is None:
        pytest.fail("clang not found: install the Debian package clang (scripts/bootstrap.sh does)", pytrace=False)
    out = tmp_path_factory.mktemp("decode") / "decode_pure"
    p = subprocess.run([str(HARNESS / "build.sh"), str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"build.sh failed:\n{p.stdout}{p.stderr}"
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_decoders_change_no_kernel_state(harness, seed):
    p = subprocess.run([str(harness), str(seed), str(ROUNDS)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, (p.stdout + p.stderr)[-4000:]
    m = re.search(r"decoded (\d+): ok (\d+), error (\d+)", p.stdout)
    assert m, p.stdout
    assert int(m.group(1)) == ROUNDS
    # Both outcomes are exercised: accepted invocations (whose perform step
    # would change state) and rejected ones.
    assert int(m.group(2)) >= ROUNDS // 100, p.stdout
    assert int(m.group(3)) >= ROUNDS // 2, p.stdout
