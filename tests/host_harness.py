"""Kernel code compiled for the host with a command-driven harness
(tests/host/*_harness.c), under AddressSanitizer and UBSan: building it and
feeding it one command per line, one output line per command."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def cflags(flavour: str) -> list[str]:
    return ["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-O1",
            "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer", f"-DKAIROS_FLAVOUR_{flavour.upper()}",
            "-I", str(ROOT / "kernel/include"), "-I", str(ROOT / "kernel/arch/riscv/include")]


def build(out: Path, sources: list[str], flavour: str) -> Path:
    """Compile the repository files ``sources`` into ``out``."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.fail("gcc not found: install the Debian package gcc", pytrace=False)
    p = subprocess.run([gcc, *cflags(flavour), *(str(ROOT / s) for s in sources), "-o", str(out)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return out


def run(harness: Path, commands: list[str], timeout: float) -> list[str]:
    """The harness's output lines for ``commands``, one each."""
    p = subprocess.run([str(harness)], input="".join(c + "\n" for c in commands),
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    out = p.stdout.splitlines()
    assert len(out) == len(commands), p.stdout[-2000:] + p.stderr
    return out
