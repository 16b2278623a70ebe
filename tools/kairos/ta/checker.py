"""Model checking with SPIN: one run per property, results and readable
counterexamples.

Each property becomes its own Promela model (promela.translate), compiled by
`spin -a` into a verifier and searched breadth-first (`-DBFS`, so a
counterexample is a shortest one). Assertion violations and invalid end
states (deadlocks, for the deadlock property) are errors; a run that hits
the depth or memory limit is reported as incomplete, never as a pass. The
error trail is replayed with `spin -t`, whose output is the "@E/@R/@T/@S"
lines the model prints, and rendered as steps with times and states.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from kairos.ta.model import FlatNetwork
from kairos.ta.promela import Property, translate


class CheckerError(Exception):
    """SPIN or the C compiler is missing or failed."""


@dataclass
class Result:
    prop: Property
    holds: bool              # the property is true of the model
    complete: bool           # the search covered the whole state space
    states: int
    seconds: float
    trace: list[str] = field(default_factory=list)  # counterexample or witness
    detail: str = ""


def properties(net: FlatNetwork) -> list[Property]:
    """The queries of the model, plus deadlock freedom if no query asks it.
    The integer ranges and array bounds are checked in every run."""
    props = []
    for q in net.queries:
        text = " ".join(q.text.split())
        name = text if len(text) <= 70 else text[:67] + "..."
        if q.comment:
            name = f"{q.comment} [{name}]"
        if q.expr is None:
            props.append(Property(name, "deadlock", None))
        elif q.kind == "A[]":
            props.append(Property(name, "invariant", q.expr))
        else:
            props.append(Property(name, "reachable", q.expr))
    if not any(p.kind == "deadlock" for p in props):
        props.insert(0, Property("no deadlock [A[] not deadlock]", "deadlock", None))
    return props


def _tools() -> tuple[str, str]:
    spin = shutil.which("spin")
    cc = shutil.which("gcc") or shutil.which("cc")
    if not spin:
        raise CheckerError("spin is not installed (Debian package 'spin'; scripts/bootstrap.sh installs it)")
    if not cc:
        raise CheckerError("no C compiler (gcc) for the SPIN verifier")
    return spin, cc


def check(net: FlatNetwork, prop: Property, max_depth: int = 2_000_000,
          memory_mb: int = 2048, workdir: Path | None = None) -> Result:
    spin, cc = _tools()
    with tempfile.TemporaryDirectory(prefix="kairos-ta-") as tmp:
        d = Path(workdir or tmp)
        d.mkdir(parents=True, exist_ok=True)
        pml = d / "model.pml"
        pml.write_text(translate(net, prop))
        _run([spin, "-a", "model.pml"], d, "spin -a")
        # -O0: for these state spaces compiling the verifier costs more than
        # searching (measured: 2 s against 14 s at -O2, same 1 s search).
        flags = ["-O0", "-w", "-DBFS", "-DSAFETY", f"-DMEMLIM={memory_mb}", "-DVECTORSZ=4096"]
        _run([cc, *flags, "-o", "pan", "pan.c"], d, "compiling the SPIN verifier")
        args = ["./pan", f"-m{max_depth}"]
        if prop.kind != "deadlock":
            args.append("-E")  # invalid end states are the deadlock property's business
        out = _run(args, d, "the SPIN verifier", ok_codes=(0, 1))
        errors = _int(r"errors:\s*(\d+)", out)
        states = _int(r"(\d+)\s+states, stored", out) or 0
        seconds = float(m.group(1)) if (m := re.search(r"pan: elapsed time ([\d.e+-]+)", out)) else 0.0
        incomplete = "max search depth too small" in out or "out of memory" in out.lower() \
            or "aborting" in out.lower()
        found = bool(errors)
        trace: list[str] = []
        if found:
            trail = _run([spin, "-t", "model.pml"], d, "replaying the SPIN trail", ok_codes=(0, 1))
            trace = render_trace(net, trail)
        detail = _violation(out) if found else ""
    holds = (not found) if prop.kind != "reachable" else found
    complete = not incomplete or found
    return Result(prop, holds and complete if prop.kind != "reachable" else holds, complete,
                  states, seconds, trace, detail)


def _run(cmd: list[str], cwd: Path, what: str, ok_codes: tuple[int, ...] = (0,)) -> str:
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise CheckerError(f"{what} took more than 600 s") from None
    if p.returncode not in ok_codes:
        raise CheckerError(f"{what} failed (exit {p.returncode}): {(p.stderr or p.stdout).strip()[:400]}")
    return p.stdout + p.stderr


def _int(pattern: str, text: str) -> int | None:
    m = re.search(pattern, text)
    return int(m.group(1)) if m else None


def _violation(out: str) -> str:
    for line in out.splitlines():
        if "assertion violated" in line and "assert(0)" in line.replace(" ", "") or \
                "assertion violated 0" in line:
            return "an integer left its declared range"
        if "assertion violated" in line:
            return line.split("pan:", 1)[-1].strip().lstrip("0123456789:").strip()
        if "invalid end state" in line:
            return "deadlock: no step is possible now or after any delay"
    return ""


def render_trace(net: FlatNetwork, replay: str) -> list[str]:
    """SPIN's replay output as numbered steps: time, what moved, the state."""
    columns = [f"{inst.name}" for inst in net.instances]
    var_cols: list[str | None] = []
    for v in net.vars.values():
        if v.kind.endswith("chan"):
            continue
        names = [f"{v.name}[{k}]" for k in range(v.size)] if v.size else [v.name]
        var_cols += [None] * len(names) if v.const else names
    edges = {e.ident: e for e in net.edges}
    out: list[str] = []
    time = 0
    pending: list[str] = []
    joined: list[str] = []
    before: list[int] | None = None
    for raw in replay.splitlines():
        line = raw.strip()
        if line.startswith("@T"):
            time += 1
            pending.append("time passes")
        elif line.startswith("@E"):
            ids = [int(x) for x in line.split()[1:]]
            text = " + ".join(edges[i].text for i in ids)
            if joined:
                text += " (with " + ", ".join(joined) + ")"
            pending.append(text)
            joined = []
        elif line.startswith("@X"):
            _, edge, var, value, lo, hi = line.split()
            out.append(f"t={time:<4} {edges[int(edge)].text}: {var} would become {value}, "
                       f"outside its range [{lo},{hi}] (an error in UPPAAL too)")
        elif line.startswith("@R"):
            joined.append(net.instances[edges[int(line.split()[1])].instance].name)
        elif line.startswith("@S"):
            vals = [int(x) for x in line.split()[1:]]
            # The first state in full, then only what changed.
            changed = [i for i in range(len(vals)) if before is None or vals[i] != before[i]]
            parts = []
            for i in changed:
                if i < len(columns):
                    parts.append(f"{columns[i]}.{net.instances[i].locations[vals[i]].name}")
                elif var_cols[i - len(columns)] is not None:
                    parts.append(f"{var_cols[i - len(columns)]}={vals[i]}")
            what = "; ".join(pending) if pending else "initial state"
            out.append(f"t={time:<4} {what}" + (f"\n           now: {', '.join(parts)}" if parts else ""))
            pending = []
            before = vals
    return out


def check_all(net: FlatNetwork, **kw) -> list[Result]:
    return [check(net, p, **kw) for p in properties(net)]
