"""Frama-C/WP proofs of `kairos tatoc` output (`kairos tatoc MODEL -o DIR --prove`).

The generated code carries its ACSL contracts (the state invariant, assigns
clauses, loop invariants and variants); WP with the runtime-error guards
(-wp-rte) proves them. Fixed settings, so that a proof is a repeatable
result: CVC4 through Why3, a timeout per goal, Why3's configuration detected
into a private file (never the user's ~/.why3.conf). docs/timed-automata.md
"Proofs of the generated code".
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

PROVERS = "cvc4"
TIMEOUT_S = 10


class ProofSetupError(Exception):
    """Frama-C or Why3 is missing or failed to start."""


@dataclass
class ProofResult:
    proved: int
    total: int
    unproved: list[str] = field(default_factory=list)  # goal names with their status
    log: str = ""

    @property
    def complete(self) -> bool:
        return self.total > 0 and self.proved == self.total and not self.unproved


def wp_command(source: Path, timeout: int, jobs: int, functions: list[str] | None) -> list[str]:
    cmd = ["frama-c", "-pp-annot", f"-cpp-extra-args=-I{source.parent}", "-wp", "-wp-rte",
           "-wp-prover", PROVERS, "-wp-timeout", str(timeout), "-wp-par", str(jobs)]
    if functions:
        cmd += ["-wp-fct", ",".join(functions)]
    return cmd + [str(source)]


def prove(source: Path, timeout: int = TIMEOUT_S, jobs: int = 2, functions: list[str] | None = None) -> ProofResult:
    """Run WP on one generated source; every goal must be proved."""
    for tool in ("frama-c", "why3", "cvc4"):
        if shutil.which(tool) is None:
            raise ProofSetupError(f"{tool} is not installed (scripts/bootstrap.sh installs it)")
    with tempfile.TemporaryDirectory(prefix="kairos-wp-") as tmp:
        env = dict(os.environ, WHY3CONFIG=str(Path(tmp) / "why3.conf"))
        detect = subprocess.run(["why3", "config", "detect"], env=env, capture_output=True, text=True)
        if detect.returncode != 0:
            raise ProofSetupError(f"why3 config detect failed: {detect.stderr.strip()[-300:]}")
        run = subprocess.run(wp_command(source, timeout, jobs, functions), env=env, cwd=tmp,
                             capture_output=True, text=True)
    log = run.stdout + run.stderr
    m = re.search(r"Proved goals:\s+(\d+)\s*/\s*(\d+)", log)
    if run.returncode != 0 or m is None:
        raise ProofSetupError(f"frama-c failed on {source} (status {run.returncode}): {log.strip()[-500:]}")
    unproved = []
    for g in re.finditer(r"^\[wp\] \[(\w+[^\]]*)\] Goal (\S+) : (\w+)", log, re.M):
        if g.group(3) != "Valid":
            unproved.append(f"{g.group(2)}: {g.group(3)}")
    for g in re.finditer(r"^\[wp\] \[(Failed|Unknown|Timeout)\] Goal (\S+)", log, re.M):
        unproved.append(f"{g.group(2)}: {g.group(1)}")
    return ProofResult(int(m.group(1)), int(m.group(2)), unproved, log)
