"""Build the WCET test programs (tests/wcet/programs/*.c) with the bare-metal
RISC-V cross compiler, and describe their entries and inputs.

Used by the soundness and trace tests; `python tests/wcet/progbuild.py OUTDIR`
builds them all by hand.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
CC = "riscv64-unknown-elf-gcc"
CFLAGS = ["-march=rv64imac_zicsr", "-mabi=lp64", "-O2", "-nostdlib", "-static",
          "-ffreestanding", "-fno-tree-loop-distribute-patterns", "-mcmodel=medany", "-g"]


def have_compiler() -> bool:
    return shutil.which(CC) is not None


def build(name: str, outdir: Path, source: Path | None = None) -> Path:
    """Compile programs/NAME.c (or ``source``) with crt0.S and link.ld into
    OUTDIR/NAME.elf."""
    out = outdir / f"{name}.elf"
    cmd = [CC, *CFLAGS, "-T", str(PROGRAMS / "link.ld"), str(PROGRAMS / "crt0.S"),
           str(source or PROGRAMS / f"{name}.c"), "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out


# --------------------------------------------------------------------------
# Inputs: each is a mapping symbol -> bytes patched into the image before a
# run (little-endian).


def _words(values: list[int], size: int = 4) -> bytes:
    return b"".join((v & ((1 << (8 * size)) - 1)).to_bytes(size, "little") for v in values)


def _sort_inputs() -> list[dict[str, bytes]]:
    rng = random.Random(7)
    base = list(range(16))
    cases = [base[:], base[::-1], [5] * 16]
    for _ in range(5):
        v = base[:]
        rng.shuffle(v)
        cases.append(v)
    return [{"data": _words(c)} for c in cases]


def _search_inputs() -> list[dict[str, bytes]]:
    targets = [1, 190, 77, 0, 1000, 94, 95, 3 * 31 + 1]
    return [{"target": _words([t])} for t in targets]


def _text_inputs() -> list[dict[str, bytes]]:
    texts = [b"ab 12, cd;e 345 fg. 6 hij 7,,8 k",
             b"a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6",
             b"................................",
             b"                                ",
             b"abcdefghijklmnopqrstuvwxyzABCDEF",
             b"1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 "]
    return [{"input": t} for t in texts]


def _bytecode_inputs() -> list[dict[str, bytes]]:
    rng = random.Random(3)
    cases = [bytes(range(10)) + bytes([1, 1, 3, 5, 7, 9, 0, 2, 4, 6, 8, 1, 2, 3]),
             bytes([4] * 24), bytes([9] * 24), bytes([12] * 24)]
    for _ in range(4):
        cases.append(bytes(rng.randrange(11) for _ in range(24)))
    return [{"program": c} for c in cases]


def _crc_inputs() -> list[dict[str, bytes]]:
    rng = random.Random(11)
    return [{}, {"msg": bytes(64)}, {"msg": bytes(rng.randrange(256) for _ in range(64))}]


def _matrix_inputs() -> list[dict[str, bytes]]:
    rng = random.Random(5)
    return [{"A": _words([rng.randrange(-50, 50) for _ in range(64)]),
             "B": _words([rng.randrange(-50, 50) for _ in range(64)])} for _ in range(2)]


@dataclass
class Entry:
    program: str
    symbol: str
    single_path: bool          # one feasible path whatever the input
    inputs: list[dict[str, bytes]] = field(default_factory=lambda: [{}])

    @property
    def id(self) -> str:
        return f"{self.program}:{self.symbol}"


ENTRIES: list[Entry] = [
    Entry("sort", "bubble_sort", False, _sort_inputs()),
    Entry("sort", "insertion_sort", False, _sort_inputs()),
    Entry("search", "search_main", False, _search_inputs()),
    Entry("crc", "crc_bitwise", True, _crc_inputs()),
    Entry("crc", "crc_table", False, _crc_inputs()),
    Entry("matmul", "matmul", True, _matrix_inputs()),
    Entry("statemachine", "tokenize", False, _text_inputs()),
    Entry("nested", "nested_sum", True),
    Entry("nested", "stencil", True),
    Entry("jumptable", "interpret", False, _bytecode_inputs()),
    Entry("calls", "chain_main", True),
]

PROGRAM_NAMES = sorted({e.program for e in ENTRIES})


if __name__ == "__main__":
    outdir = Path(sys.argv[1] if len(sys.argv) > 1 else "build-wcet")
    outdir.mkdir(parents=True, exist_ok=True)
    for n in PROGRAM_NAMES:
        print(build(n, outdir))
