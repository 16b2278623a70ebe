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
    icache_misses: int = 0          # of the worst seed
    dcache_misses: int = 0
    writebacks: int = 0
    device_accesses: int = 0
    timeline: array | None = None   # worst seed, with timeline=True: t_next after each instruction

    def as_dict(self) -> dict:
        return {"cycles": self.cycles, "instructions": self.instructions,
                "per_seed": self.per_seed, "icache_misses": self.icache_misses,
                "dcache_misses": self.dcache_misses, "writebacks": self.writebacks,
                "device_accesses": self.device_accesses}


def replay_once(trace: Trace, decode: Decoder, m: ProcessorModel, seed: int = 1,
                timeline: bool = False) -> ReplayResult:
    ic = ConcreteCache(m.icache, seed=seed, polluted=True)
    dc = ConcreteCache(m.dcache, seed=seed * 7919 + 1, polluted=True)
    st = PipeState()
    iline = m.icache.line
    dline = m.dcache.line
    imiss = m.icache_miss_penalty
    devices = 0
    tl = array("q") if timeline else None
    pcs, daddrs, widths = trace.pcs, trace.daddrs, trace.widths
    for i in range(len(pcs)):
        pc = pcs[i]
        ins = decode(pc)
        first = pc // iline
        last = (pc + ins.size - 1) // iline
        ipen = 0 if ic.access(first)[0] else imiss
        if last != first and not ic.access(last)[0]:
            ipen += imiss
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
                    write = cls in (InstrClass.STORE, InstrClass.FP_STORE, InstrClass.AMO,
                                    InstrClass.SC)
                    for ln in range(a // dline, (a + w - 1) // dline + 1):
                        hit, wb = dc.access(ln, write)
                        if not hit:
                            dpen += m.memory_latency + (m.writeback_latency if wb else 0)
        step(st, ins, m, ipen, dpen, drange, exact=True)
        if tl is not None:
            tl.append(st.t_next)
        if cls is InstrClass.FENCE_I:
            ic.invalidate()
    return ReplayResult(st.t_next, len(pcs), [st.t_next], ic.misses, dc.misses, dc.writebacks,
                        devices, tl)


def replay(trace: Trace, memory: Memory, m: ProcessorModel, seeds: int | None = None,
           timeline: bool = False) -> ReplayResult:
    """Observed cycles of ``trace`` under model ``m`` (max over LFSR seeds
    when a cache replaces randomly)."""
    decode = Decoder(memory)
    randomised = "random" in (m.icache.policy, m.dcache.policy)
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
