"""Traces: file format, capture helpers and mapping onto the analysed CFG.

Trace file format (text, one instruction per line, after a header line)::

    # kairos-trace v1 entry=<symbol> stop=<reason> data=<0|1>
    80000010
    80000032 80000100 1        <- pc, data address, width (memory instructions)

Addresses are hexadecimal without ``0x``.  ``data=0`` marks a PC-only trace
(e.g. converted from a QEMU ``-d exec,nochain`` log), whose data accesses the
replayer charges at their worst cost.

``block_path`` walks a trace through the CFG of ``cfg.Program`` with the
same call strings as the analysis, giving the sequence of ``(context,
block)`` executions and the number of entries of every loop: summing
``BlockCosts`` along that path (plus first-miss penalties per loop entry)
gives the bound *of that path*, which the tests compare with the replay.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kairos.wcet.cfg import Context, Function, Program, Term
from kairos.wcet.emulator import Trace
from kairos.wcet.errors import WcetError

__all__ = ["save_trace", "load_trace", "parse_qemu_exec_log", "block_path", "TracePath",
           "path_bound", "recursion_violations"]

_HEADER = "# kairos-trace v1"


def save_trace(trace: Trace, path: str | Path) -> None:
    with open(path, "w") as fh:
        fh.write(f"{_HEADER} entry={trace.entry or '-'} stop={trace.stop or '-'} "
                 f"data={int(trace.has_data)}\n")
        for pc, a, w in zip(trace.pcs, trace.daddrs, trace.widths):
            if w:
                fh.write(f"{pc:x} {a:x} {w}\n")
            else:
                fh.write(f"{pc:x}\n")


def load_trace(path: str | Path) -> Trace:
    try:
        fh = open(path)
    except OSError as e:
        raise WcetError(f"{path}: cannot read trace ({e.strerror})") from None
    with fh:
        header = fh.readline()
        if not header.startswith(_HEADER):
            # Maybe a QEMU log.
            fh.seek(0)
            text = fh.read()
            if "Trace " in text:
                return _parse_qemu_text(text, str(path))
            raise WcetError(f"{path}: not a kairos trace (missing '{_HEADER}' header)")
        fields = dict(kv.split("=", 1) for kv in header[len(_HEADER):].split() if "=" in kv)
        t = Trace(entry=fields.get("entry", ""), stop=fields.get("stop", ""),
                  has_data=fields.get("data", "1") == "1")
        for n, line in enumerate(fh, 2):
            parts = line.split()
            if not parts:
                continue
            try:
                if len(parts) == 1:
                    t.append(int(parts[0], 16))
                elif len(parts) == 3:
                    t.append(int(parts[0], 16), int(parts[1], 16), int(parts[2]))
                else:
                    raise ValueError
            except ValueError:
                raise WcetError(f"{path}:{n}: malformed trace line {line.strip()!r}") from None
    return t


_QEMU_RE = re.compile(r"Trace\s+\d+:\s+0x[0-9a-f]+\s+\[[0-9a-f]+/([0-9a-f]+)/")


def _parse_qemu_text(text: str, name: str) -> Trace:
    t = Trace(entry="", stop="qemu", has_data=False)
    for line in text.splitlines():
        mm = _QEMU_RE.search(line)
        if mm:
            t.append(int(mm.group(1), 16))
    if not len(t):
        raise WcetError(f"{name}: no 'Trace' lines found (QEMU -d exec,nochain log expected)")
    return t


def parse_qemu_exec_log(path: str | Path, start: int | None = None, stop: int | None = None) -> Trace:
    """PC-only trace from a QEMU ``-d exec,nochain`` log taken with one
    instruction per translation block (``-accel tcg,one-insn-per-tb=on``),
    optionally cut from the first ``start`` PC to the next ``stop`` PC
    (inclusive)."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as e:
        raise WcetError(f"{path}: cannot read QEMU log ({e.strerror})") from None
    t = _parse_qemu_text(text, str(path))
    if start is None and stop is None:
        return t
    out = Trace(entry="", stop="qemu", has_data=False)
    on = start is None
    for pc in t.pcs:
        if not on and pc == start:
            on = True
        if on:
            out.append(pc)
            if stop is not None and pc == stop:
                break
    if not len(out):
        raise WcetError(f"{path}: start address {start:#x} never executed")
    return out


@dataclass
class TracePath:
    blocks: list[tuple[Context, int]] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)             # (ctx, block) -> executions
    loop_entries: Counter = field(default_factory=Counter)       # (ctx, header) -> entries
    sizes: dict = field(default_factory=dict)                    # (ctx, block) -> instructions
    #: per function with a [[recursion]] bound: the most activations seen
    #: per entry into its recursion (compare: ``recursion_violations``)
    recursion: Counter = field(default_factory=Counter)


def block_path(program: Program, entry: str, trace: Trace) -> TracePath:
    """Map a trace of one run of ``entry`` onto (context, block) executions."""
    from kairos.wcet.loops import find_loops

    ctx_func: dict[Context, Function] = dict(program.contexts(entry))
    loops_cache: dict[int, object] = {}

    def loops(f: Function):
        lf = loops_cache.get(f.entry)
        if lf is None:
            lf = find_loops(f)
            loops_cache[f.entry] = lf
        return lf

    pcs = trace.pcs
    n = len(pcs)
    root = ctx_func[()]
    # frames: [ctx, function, is_tail, previous block in this frame]
    frames: list[list] = [[(), root, False, None]]
    out = TracePath()
    # activations of the bounded functions in the current entry into each recursion
    episode: dict[frozenset, Counter] = {}
    if root.entry in program.recursive_scc:
        episode[program.recursive_scc[root.entry]] = Counter({root.entry: 1})
        out.recursion[root.entry] = 1
    i = 0
    pc = pcs[0] if n else None
    if pc is not None and pc != root.entry:
        raise WcetError(f"trace starts at {pc:#x}, not at {entry} ({root.entry:#x})")
    while i < n:
        ctx, f, _tail, prev = frames[-1]
        pc = pcs[i]
        b = f.blocks.get(pc)
        if b is None:
            raise WcetError(f"trace: {pc:#x} is not a block start of {f.name} "
                            f"(context {'/'.join(hex(c) for c in ctx) or '()'})")
        k = len(b.instrs)
        for j, ins in enumerate(b.instrs):
            if i + j >= n or pcs[i + j] != ins.addr:
                if i + j >= n:
                    break
                raise WcetError(f"trace: expected {ins.addr:#x} in block {b.start:#x}, "
                                f"got {pcs[i + j]:#x}")
        key = (ctx, b.start)
        out.blocks.append(key)
        out.sizes[key] = k
        out.counts[key] += 1
        for lp in loops(f).loops:
            # entered from outside (irreducible regions: at any entry block)
            if b.start in lp.blocks and (prev is None or prev not in lp.blocks):
                out.loop_entries[(ctx, lp.header)] += 1
        frames[-1][3] = b.start
        i += k
        if i >= n:
            break
        if b.kind in (Term.CALL, Term.TAILCALL) and b.call_target is not None:
            sub = program.callee_context(ctx, b.last.addr, b.call_target)
            callee = ctx_func.get(sub)
            if callee is None:
                raise WcetError(f"trace: call at {b.last.addr:#x} has no context")
            frames.append([sub, callee, b.kind is Term.TAILCALL, None])
            scc = program.recursive_scc.get(callee.entry)
            if scc is not None:
                if f.entry not in scc:
                    episode[scc] = Counter()          # a new entry into the recursion
                c = episode.setdefault(scc, Counter())
                c[callee.entry] += 1
                out.recursion[callee.entry] = max(out.recursion[callee.entry], c[callee.entry])
        elif b.kind is Term.RETURN:
            while True:
                fr = frames.pop()
                if not fr[2]:
                    break
            if not frames:
                raise WcetError(f"trace continues after {entry} returned (at {pcs[i]:#x})")
    return out


def recursion_violations(program: Program, path: TracePath) -> list[str]:
    """The ``[[recursion]]`` bounds a traced run exceeds, one line each: the
    analysis trusts them, a run is how one is refuted."""
    return [f"{program.name_of(fe)}: {path.recursion[fe]} activations in one entry into its recursion, "
            f"annotation says at most {most}"
            for fe, most in sorted(program.recursion.items()) if path.recursion[fe] > most]


def block_comparison(path: TracePath, costs, timeline) -> list[dict]:
    """Per (context, block) of a traced path: executions, observed cycles
    (from the replay's per-instruction timeline) and the analysis' cost,
    sorted by over-estimate."""
    rows: dict[tuple, dict] = {}
    pos = 0
    prev_t = 0
    for key in path.blocks:
        n = path.sizes.get(key, 0)
        end = min(pos + n, len(timeline)) - 1
        t = timeline[end] if end >= 0 else prev_t
        r = rows.setdefault(key, {"context": key[0], "block": key[1], "count": 0, "observed": 0,
                                  "bound": 0})
        r["count"] += 1
        r["observed"] += t - prev_t
        prev_t = t
        pos += n
    for (ctx, b), r in rows.items():
        r["bound"] = costs.cost(ctx, b) * r["count"]
        r["excess"] = r["bound"] - r["observed"]
    return sorted(rows.values(), key=lambda r: -r["excess"])


def path_bound(path: TracePath, costs) -> int:
    """Sum of block costs along ``path`` plus first-miss penalties per loop
    entry: the analysis' bound for this particular path."""
    total = sum(costs.cost(ctx, b) * c for (ctx, b), c in path.counts.items())
    total += sum(costs.first_miss_penalty(ctx, h) * c for (ctx, h), c in path.loop_entries.items())
    return total
