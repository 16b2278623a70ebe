"""Regions as the kernel really ran them: `kairos latency KERNEL --observe
ROOTTASK`.

The kernel runs of a root task are captured under QEMU by single-stepping
through its gdb stub (``gdbtrace.capture_kernel_runs``: every instruction
from the trap vector to ``sret``/``wfi``, with its data address), cut into
regions at the calls of preemption-point functions (a region ends at the
call; the next begins where the poll returns), and each piece is replayed
through the processor model from polluted caches (``sim.replay``: the same
ruler as the bounds, docs/wcet.md "Validation").  Each observed region is
compared with the static bound of the region that starts at the same site
(the kernel entry's handler, or the preemption-point call it resumed from),
and the longest observed region plus the longest observed interrupt entry is
compared with the response bound.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kairos.latency.regions import LatencyResult, poll_branches
from kairos.wcet.cfg import Term, build_program
from kairos.wcet.elfimage import ElfImage
from kairos.wcet.emulator import Trace, load_elf
from kairos.wcet.errors import WcetError


@dataclass
class Observed:
    kind: str                  # "entry" or "poll"
    site: int                  # the handler's entry, or the poll call it resumed from
    name: str
    cycles: list[int] = field(default_factory=list)
    instructions: list[int] = field(default_factory=list)


@dataclass
class Observation:
    roottask: str
    runs: int
    regions: dict[tuple[str, int], Observed]
    interrupt_entries: list[int]          # observed cycles of whole interrupt entries (no poll on them)
    serial: str
    taken: list[int] = field(default_factory=list)   # handling paths after a poll that found an interrupt
    skipped: int = 0                                  # runs too long to single-step


def _poll_calls(kernel: str, entry: str, polls: list[str]) -> tuple[dict[int, int], dict[int, tuple[int, int]]]:
    """Call instruction address -> return address, for every call of a
    preemption-point function below ``entry``; and the return sites'
    branches on the result (``regions.poll_branches``)."""
    image = ElfImage(kernel)
    program = build_program(image, [entry])
    targets = {image.symbol(n).addr for n in polls if image.has_symbol(n)}
    out = {}
    for f in program.functions.values():
        for blk in f.blocks.values():
            if blk.kind is Term.CALL and blk.call_target in targets:
                out[blk.last.addr] = blk.last.addr + blk.last.size
    return out, poll_branches(program, targets)


def _slice(trace: Trace, lo: int, hi: int) -> Trace:
    t = Trace(entry=trace.entry)
    t.pcs = trace.pcs[lo:hi]
    t.daddrs = trace.daddrs[lo:hi]
    t.widths = trace.widths[lo:hi]
    return t


def observe(kernel: str, roottask: str, result: LatencyResult, count: int = 5000, timeout: float = 1800.0,
            memory: str = "512M", max_steps: int = 60_000) -> Observation:
    """Kernel runs longer than ``max_steps`` instructions (the untyped resets
    of the root task's first retypes: millions of instructions, too slow to
    single-step) are not captured; ``Observation.skipped`` counts them."""
    from kairos.wcet import model as modelmod
    from kairos.wcet.gdbtrace import capture_kernel_runs
    from kairos.wcet.sim import replay

    if result.model == "simple":
        raise WcetError("--observe replays through a processor model: use --model u54 (or u54-lru, u54-l2lim)")
    m = modelmod.get_preset(result.model)
    calls, branches = _poll_calls(kernel, result.entry, result.polls)
    image = ElfImage(kernel)
    handlers = {image.symbol(r.start.function).addr: r.start.function
                for r in result.regions if r.start.kind == "entry" and image.has_symbol(r.start.function)}
    names = {(r.start.kind, r.start.site): r.name for r in result.regions}
    import tempfile
    with tempfile.NamedTemporaryFile(prefix="kairos-latency-serial-", suffix=".log", delete=False) as fh:
        serial_path = Path(fh.name)
    try:
        runs = capture_kernel_runs(kernel, roottask, entry=result.entry, count=count, timeout=timeout,
                                   memory=memory, handlers=tuple(sorted(set(handlers.values()))),
                                   serial_log=serial_path, max_steps=max_steps, icount=True, skip_long=True)
        skipped = getattr(capture_kernel_runs, "skipped", 0)
        serial = serial_path.read_text(errors="replace")
    finally:
        serial_path.unlink(missing_ok=True)
    mem = load_elf(kernel).memory
    regions: dict[tuple[str, int], Observed] = {}
    irq: list[int] = []
    taken: list[int] = []

    def record(key: tuple[str, int], piece: Trace) -> int:
        obs = regions.get(key)
        if obs is None:
            obs = regions[key] = Observed(key[0], key[1], names.get(key, f"{key[0]} {key[1]:#x}"))
        cyc = replay(piece, mem, m).cycles
        obs.cycles.append(cyc)
        obs.instructions.append(len(piece))
        return cyc

    for run in runs:
        if not run.handlers:
            continue
        handler = image.symbol(run.handlers[0]).addr
        key: tuple[str, int] | None = ("entry", handler)
        pcs = run.trace.pcs
        start = 0
        resume_at = None
        polled = False
        handling = False
        for i, pc in enumerate(pcs):
            if handling:
                break
            if key is None:
                if pc == resume_at:
                    start, key = i, ("poll", resume_call)
                    sides = branches.get(pc)
                    # the poll found an interrupt: from here on it is handled, not a region
                    nxt = next((q for q in pcs[i + 1:] if sides and q in sides), None)
                    if sides and nxt == sides[0]:
                        taken.append(replay(_slice(run.trace, i, len(pcs)), mem, m).cycles)
                        handling = True
                continue
            if pc in calls:
                record(key, _slice(run.trace, start, i + 1))
                key, resume_call, resume_at, polled = None, pc, calls[pc], True
        if key is not None and not handling:
            cyc = record(key, _slice(run.trace, start, len(pcs)))
            if run.handlers[0] == "handle_interrupt" and not polled and run.trace.stop == "sret":
                irq.append(cyc)
    return Observation(roottask, len(runs), regions, irq, serial, taken, skipped)


def compare(result: LatencyResult, obs: Observation) -> tuple[list[dict], dict]:
    """Per observed region: the longest observation, the region's bound (the
    worst of its call contexts) and their ratio; and the response check."""
    bound_of: dict[tuple[str, int], int] = {}
    for r in result.regions:
        key = (r.start.kind, r.start.site)
        if r.length is None:
            raise WcetError("observed regions need every region's own bound (analyse with all_lengths)")
        bound_of[key] = max(bound_of.get(key, 0), r.length)
    rows = []
    for key, o in sorted(obs.regions.items(), key=lambda kv: -max(kv[1].cycles)):
        b = bound_of.get(key)
        worst = max(o.cycles)
        rows.append({"region": o.name, "kind": key[0], "site": f"{key[1]:#x}", "observations": len(o.cycles),
                     "observed_max_cycles": worst,
                     "observed_max_instructions": o.instructions[o.cycles.index(worst)],
                     "bound_cycles": b, "ratio": round(b / worst, 2) if b and worst else None,
                     "within": b is not None and worst <= b})
    longest = max((max(o.cycles) for o in obs.regions.values()), default=0)
    irq = max(obs.interrupt_entries, default=0)
    response = {"observed_longest_region_cycles": longest, "observed_interrupt_entry_cycles": irq,
                "observed_response_cycles": longest + irq, "bound_cycles": result.bound,
                "ratio": round(result.bound / (longest + irq), 2) if longest + irq else None,
                "within": longest + irq <= result.bound}
    return rows, response
