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
           "-wp-prover", PROVERS, "-wp-timeout", str(timeout), "-wp-par", str(jobs),
           "-wp-status-all"]  # every goal's result in the log, to follow a long run
    if functions:
        cmd += ["-wp-fct", ",".join(functions)]
    return cmd + [str(source)]


DEFINITION = re.compile(r"^(?:static )?(?:inline )?(?:const )?[\w]+(?: \*)? ?(\w+)\([^;{]*\)\s*$", re.M)


def functions_of(source: Path) -> list[tuple[str, int]]:
    """The functions defined in a generated source, with a rough measure of
    their proof's size: their lines, and 40 for each call of the fold lemma
    (one goal per conjunct of the invariant)."""
    text = source.read_text()
    found = []
    for m in DEFINITION.finditer(text):
        end = text.find("\n}\n", m.end())
        body = text[m.end():end if end >= 0 else len(text)]
        found.append((m.group(1), body.count("\n") + 40 * len(re.findall(r"\w+_fold\(s\)", body))))
    return found


def partition(functions: list[tuple[str, int]], n: int) -> list[list[str]]:
    """Split the functions into n groups of about equal size (largest first,
    each to the smallest group)."""
    groups: list[tuple[int, list[str]]] = [(0, []) for _ in range(max(1, n))]
    for name, size in sorted(functions, key=lambda f: -f[1]):
        i = min(range(len(groups)), key=lambda k: groups[k][0])
        groups[i] = (groups[i][0] + size + 1, groups[i][1] + [name])
    return [g for _, g in groups if g]


def prove(source: Path, timeout: int = TIMEOUT_S, jobs: int = 2, functions: list[str] | None = None) -> ProofResult:
    """Run WP on one generated source; every goal must be proved.

    With jobs > 1 and no function list, the file's functions are split into
    `jobs` groups proved by as many Frama-C processes side by side, each with
    one prover process: WP's own simplifier (Qed), which settles most goals
    of the generated code, runs in Frama-C's single thread, so one process
    with `-wp-par 2` leaves the second core idle while it simplifies."""
    for tool in ("frama-c", "why3", "cvc4"):
        if shutil.which(tool) is None:
            raise ProofSetupError(f"{tool} is not installed (scripts/bootstrap.sh installs it)")
    if functions is None and jobs > 1:
        groups: list[list[str] | None] = list(partition(functions_of(source), jobs))
        par = 1
    else:
        groups, par = [functions], jobs
    # Each Frama-C process logs to a file in the work directory (KAIROS_WP_DIR
    # keeps it, to follow a long run: tail -f DIR/run0/wp.log).
    keep = os.environ.get("KAIROS_WP_DIR")
    with tempfile.TemporaryDirectory(prefix="kairos-wp-", dir=keep) as tmp:
        env = dict(os.environ, WHY3CONFIG=str(Path(tmp) / "why3.conf"))
        detect = subprocess.run(["why3", "config", "detect"], env=env, capture_output=True, text=True)
        if detect.returncode != 0:
            raise ProofSetupError(f"why3 config detect failed: {detect.stderr.strip()[-300:]}")
        procs = []
        for i, group in enumerate(groups):
            work = Path(tmp) / f"run{i}"
            work.mkdir()
            with open(work / "wp.log", "w") as log:
                procs.append((work / "wp.log", subprocess.Popen(
                    wp_command(source, timeout, par, group), env=env, cwd=work,
                    stdout=log, stderr=subprocess.STDOUT, text=True)))
        runs = [(p.wait(), path.read_text())[::-1] for path, p in procs]
    result = ProofResult(0, 0)
    for log, rc in runs:
        part = _result(source, log, rc)
        result.proved += part.proved
        result.total += part.total
        result.unproved += part.unproved
        result.log += log
    return result


def _result(source: Path, log: str, returncode: int) -> ProofResult:
    m = re.search(r"Proved goals:\s+(\d+)\s*/\s*(\d+)", log)
    if returncode != 0 or m is None:
        raise ProofSetupError(f"frama-c failed on {source} (status {returncode}): {log.strip()[-500:]}")
    unproved = []
    for g in re.finditer(r"^\[wp\] \[(\w+[^\]]*)\] Goal (\S+) : (\w+)", log, re.M):
        if g.group(3) != "Valid":
            unproved.append(f"{g.group(2)}: {g.group(3)}")
    for g in re.finditer(r"^\[wp\] \[(Failed|Unknown|Timeout)\] Goal (\S+)", log, re.M):
        unproved.append(f"{g.group(2)}: {g.group(1)}")
    return ProofResult(int(m.group(1)), int(m.group(2)), unproved, log)
