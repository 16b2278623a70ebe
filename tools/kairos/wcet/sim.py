"""Concrete replay of a trace through a ``ProcessorModel``.

Exact cache-set state (with dirty bits), exact store buffer, exact pipeline
timing (``pipeline.step``).  The caches start polluted with dirty lines of
no program address (the worst start state: every first touch misses and
writes back a victim).  For random replacement the trace is replayed with
``model.random_seeds`` LFSR seeds and the maximum is reported.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

from kairos.wcet.cache import ConcreteCache
from kairos.wcet.emulator import Memory, Trace
from kairos.wcet.errors import WcetError
from kairos.wcet.isa import Instr, InstrClass, decode_at
from kairos.wcet.model import ProcessorModel
from kairos.wcet.pipeline import MEM_CLASSES, PipeState, step

__all__ = ["ReplayResult", "replay", "replay_once", "Decoder"]


class Decoder:
    """Decodes (and caches) instructions of a memory image by address."""

    def __init__(self, memory: Memory) -> None:
        self.mem = memory
        self.cache: dict[int, Instr] = {}

    def __call__(self, pc: int) -> Instr:
        ins = self.cache.get(pc)
        if ins is None:
            try:
                lo = self.mem.read(pc, 2)
                raw = self.mem.read(pc, 4) if lo & 3 == 3 else lo
            except WcetError:
                raise WcetError(f"trace: instruction address {pc:#x} is not in the program") from None
            ins = decode_at(raw.to_bytes(4 if lo & 3 == 3 else 2, "little"), 0, pc)
            if ins.cls is InstrClass.ILLEGAL:
                raise WcetError(f"trace: illegal instruction at {pc:#x}")
            self.cache[pc] = ins
        return ins


@dataclass
class ReplayResult:
    cycles: int                     # maximum over the seeds
    instructions: int
    per_seed: list[int] = field(default_factory=list)
    misses: dict[str, int] = field(default_factory=dict)   # per cache level name, of the worst seed
    writebacks: int = 0
    device_accesses: int = 0
    timeline: array | None = None   # worst seed, with timeline=True: t_next after each instruction

    def as_dict(self) -> dict:
        return {"cycles": self.cycles, "instructions": self.instructions,
                "per_seed": self.per_seed, "misses": dict(self.misses),
                "writebacks": self.writebacks, "device_accesses": self.device_accesses}


def level_seed(seed: int, k: int) -> int:
    """LFSR seed of the ``k``-th cache level in a replay with ``seed``: each
    level's random replacement runs from its own LFSR (cache.py)."""
    return seed * 7919 ** k + k


_WRITES = (InstrClass.STORE, InstrClass.FP_STORE, InstrClass.AMO, InstrClass.SC)


def replay_once(trace: Trace, decode: Decoder, m: ProcessorModel, seed: int = 1,
                timeline: bool = False) -> ReplayResult:
    levels = m.caches
    caches = [ConcreteCache(lv.config, seed=level_seed(seed, k), polluted=True)
              for k, lv in enumerate(levels)]
    # I-lines are never dirty: the polluted start state's dirty victims only
    # cost a write-back in a level that serves data.
    fetch = [(caches[k], lv.config.line, lv.dirty) for k, lv in enumerate(levels) if lv.serves == "fetch"]
    data = [(caches[k], lv.config.line, lv.dirty) for k, lv in enumerate(levels) if lv.serves == "data"]
    # A fetch from the ITIM touches no I-cache line and never misses.
    itim = bool(m.itim_ranges)
    st = PipeState()
    devices = 0
    tl = array("q") if timeline else None
    pcs, daddrs, widths = trace.pcs, trace.daddrs, trace.widths
    for i in range(len(pcs)):
        pc = pcs[i]
        ins = decode(pc)
        ipen = 0
        for c, line, dirty in (() if itim and m.in_itim(pc) else fetch):
            for ln in range(pc // line, (pc + ins.size - 1) // line + 1):
                hit, wb = c.access(ln)
                if not hit:
                    ipen += m.refill_penalty(wb and dirty)
        dpen = 0
        drange = (0, 0)
        cls = ins.cls
        if cls in MEM_CLASSES:
            a = daddrs[i]
            w = widths[i]
            if w == 0:
                if trace.has_data:
                    raise WcetError(f"trace: memory instruction at {pc:#x} has no data address")
                # PC-only trace: charge the worst data access.
                dpen = max(m.dcache_miss_penalty, m.device_latency)
                drange = (0, 1 << 64)
            else:
                drange = (a, a + w)
                if m.is_device(a, a + w):
                    dpen = m.device_latency
                    devices += 1
                else:
                    write = cls in _WRITES
                    for c, line, dirty in data:
                        for ln in range(a // line, (a + w - 1) // line + 1):
                            hit, wb = c.access(ln, write)
                            if not hit:
                                dpen += m.refill_penalty(wb and dirty)
        step(st, ins, m, ipen, dpen, drange, exact=True)
        if tl is not None:
            tl.append(st.t_next)
        if cls is InstrClass.FENCE_I:
            for c, _, _ in fetch:
                c.invalidate()
    return ReplayResult(st.t_next, len(pcs), [st.t_next],
                        {lv.name: c.misses for lv, c in zip(levels, caches)},
                        sum(c.writebacks for lv, c in zip(levels, caches) if lv.dirty), devices, tl)


def replay(trace: Trace, memory: Memory, m: ProcessorModel, seeds: int | None = None,
           timeline: bool = False) -> ReplayResult:
    """Observed cycles of ``trace`` under model ``m`` (max over LFSR seeds
    when a cache replaces randomly)."""
    decode = Decoder(memory)
    randomised = any(lv.config.policy == "random" for lv in m.caches)
    n = (seeds or m.random_seeds) if randomised else 1
    best: ReplayResult | None = None
    per_seed = []
    for s in range(1, n + 1):
        r = replay_once(trace, decode, m, seed=s, timeline=timeline)
        per_seed.append(r.cycles)
        if best is None or r.cycles > best.cycles:
            best = r
    assert best is not None
    best.per_seed = per_seed
    return best
