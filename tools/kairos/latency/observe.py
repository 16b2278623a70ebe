"""Regions as the kernel really ran them: `kairos latency KERNEL --observe
ROOTTASK`.

The kernel runs of a root task are captured under QEMU by single-stepping
through its gdb stub (``gdbtrace.capture_kernel_runs``: every instruction
from the trap vector to ``sret``/``wfi``, with its data address), cut into
regions at the calls of preemption-point functions (a region ends at the
call; the next begins where the poll returns), and each piece is replayed
through the processor model from polluted caches (``sim.replay``: the same
ruler as the bounds, docs/wcet.md "Validation").  For a randomly replaced
cache each piece is replayed twice: with the model's LFSR seeds (the
maximum over them) and *adversarially*, with the L1s made direct-mapped of
the same sets: the run of the random cache whose victim is always the way
holding the piece's own last line of the set, which the bound's one-sure-way
view (docs/processor-model.md §3) must cover and which makes every conflict
happen.  An observation is the worse of the two.  Each observed region is
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
from kairos.wcet.model import ProcessorModel


@dataclass
class Observed:
    kind: str                  # "entry" or "poll"
    site: int                  # the handler's entry, or the poll call it resumed from
    name: str
    cycles: list[int] = field(default_factory=list)        # the worse of the two replays
    instructions: list[int] = field(default_factory=list)
    seeded: list[int] = field(default_factory=list)        # the LFSR-seeded replay alone


@dataclass
class Observation:
    roottask: str
    runs: int
    regions: dict[tuple[str, int], Observed]
    interrupt_entries: list[int]          # observed cycles of whole interrupt entries (no poll on them)
    serial: str
    taken: list[int] = field(default_factory=list)   # handling paths after a poll that found an interrupt
    skipped: int = 0                                  # runs too long to single-step
    interrupt_entries_seeded: list[int] = field(default_factory=list)
    adversarial: bool = False                         # the model replaces randomly: both replays ran


def adversarial_model(m: ProcessorModel) -> ProcessorModel | None:
    """``m`` with every randomly replaced cache made direct-mapped with the
    same sets and line (a 4 KiB way for the U54 L1s), or None when no cache
    of ``m`` replaces randomly.  A direct-mapped cache is the random cache
    whose victim is the way holding the last line used in that set, every
    other way keeping a polluting line: a legal run of the random policy,
    and the one that realises every conflict the analysis's one-way view
    allows."""
    from dataclasses import replace
    from kairos.wcet.model import CacheConfig
    if all(c.policy != "random" for c in (m.icache, m.dcache)):
        return None

    def one_way(c: CacheConfig) -> CacheConfig:
        return CacheConfig(c.size // c.ways, 1, c.line, "random") if c.policy == "random" else c
    return replace(m, icache=one_way(m.icache), dcache=one_way(m.dcache))


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
    image = ElfImage(kernel)
    m = modelmod.preset_for(result.model, image)
    adv = adversarial_model(m)
    calls, branches = _poll_calls(kernel, result.entry, result.polls)
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
    irq_seeded: list[int] = []
    taken: list[int] = []

    def cycles(piece: Trace) -> tuple[int, int]:
        """(the worse of the seeded and the adversarial replay, the seeded one)."""
        seeded = replay(piece, mem, m).cycles
        # one way: every seed picks the same victim, one replay is all of them
        return (max(seeded, replay(piece, mem, adv, seeds=1).cycles) if adv is not None else seeded), seeded

    def record(key: tuple[str, int], piece: Trace) -> tuple[int, int]:
        obs = regions.get(key)
        if obs is None:
            obs = regions[key] = Observed(key[0], key[1], names.get(key, f"{key[0]} {key[1]:#x}"))
        cyc, seeded = cycles(piece)
        obs.cycles.append(cyc)
        obs.seeded.append(seeded)
        obs.instructions.append(len(piece))
        return cyc, seeded

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
                        taken.append(cycles(_slice(run.trace, i, len(pcs)))[0])
                        handling = True
                continue
            if pc in calls:
                record(key, _slice(run.trace, start, i + 1))
                key, resume_call, resume_at, polled = None, pc, calls[pc], True
        if key is not None and not handling:
            cyc, seeded = record(key, _slice(run.trace, start, len(pcs)))
            if run.handlers[0] == "handle_interrupt" and not polled and run.trace.stop == "sret":
                irq.append(cyc)
                irq_seeded.append(seeded)
    return Observation(roottask, len(runs), regions, irq, serial, taken, skipped, irq_seeded, adv is not None)


def compare(result: LatencyResult, obs: Observation) -> tuple[list[dict], dict]:
    """Per observed region: the longest observation, the region's bound (the
    worst of its call contexts) and their ratio; and the response check.  The
    ``*_seeded`` fields give the same for the LFSR-seeded replay alone (the
    figures before the adversarial replay was added)."""
    bound_of: dict[tuple[str, int], int] = {}
    for r in result.regions:
        key = (r.start.kind, r.start.site)
        if r.length is None:
            raise WcetError("observed regions need every region's own bound (analyse with all_lengths)")
        bound_of[key] = max(bound_of.get(key, 0), r.length)

    def ratio(b: int | None, x: int) -> float | None:
        return round(b / x, 2) if b and x else None

    rows = []
    for key, o in sorted(obs.regions.items(), key=lambda kv: -max(kv[1].cycles)):
        b = bound_of.get(key)
        worst = max(o.cycles)
        seeded = max(o.seeded) if o.seeded else worst
        rows.append({"region": o.name, "kind": key[0], "site": f"{key[1]:#x}", "observations": len(o.cycles),
                     "observed_max_cycles": worst,
                     "observed_max_instructions": o.instructions[o.cycles.index(worst)],
                     "bound_cycles": b, "ratio": ratio(b, worst),
                     "observed_max_seeded_cycles": seeded, "ratio_seeded": ratio(b, seeded),
                     "within": b is not None and worst <= b})
    longest = max((max(o.cycles) for o in obs.regions.values()), default=0)
    irq = max(obs.interrupt_entries, default=0)
    longest_s = max((max(o.seeded) for o in obs.regions.values() if o.seeded), default=longest)
    irq_s = max(obs.interrupt_entries_seeded, default=irq)
    response = {"observed_longest_region_cycles": longest, "observed_interrupt_entry_cycles": irq,
                "observed_response_cycles": longest + irq, "bound_cycles": result.bound,
                "ratio": ratio(result.bound, longest + irq),
                "replays": "worse of LFSR-seeded and adversarial (direct-mapped)" if obs.adversarial
                else "as modelled",
                "observed_response_seeded_cycles": longest_s + irq_s,
                "ratio_seeded": ratio(result.bound, longest_s + irq_s),
                "within": longest + irq <= result.bound}
    return rows, response
