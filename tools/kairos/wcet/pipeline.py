"""The pipeline timing rules of ``ProcessorModel`` as one step function.

``step`` advances a ``PipeState`` by one instruction.  The concrete replayer
(``sim``) calls it with the exact cache penalties and the exact data address
of every executed instruction; the static analysis (``microarch``) calls it
with worst-case penalties and address *ranges*, starting each basic block
from a state whose times are relative to the block start.  Both therefore
apply literally the same rules.

Times: ``t_next`` is the earliest cycle at which the next instruction can
issue; ``ready[r]`` the cycle at which register ``r``'s value is available;
``unit_free`` when the iterative multiply/divide unit is free.

Store buffer: a tuple of pending stores, oldest first, each the half-open
byte range ``(lo, hi)`` it may write (exact in a concrete run).  Rules:

* A store pushes its range; if the buffer already holds
  ``model.store_buffer_entries`` entries, the store stalls one cycle while the
  oldest entry is written.
* Every instruction that does not access the D-cache drains (writes) the
  oldest entry.
* A load/AMO whose doubleword may overlap a pending store pays
  ``store_load_penalty``.  In a concrete run the buffer is then written up
  to and including the youngest overlapping store; the abstract analysis
  (``exact=False``) keeps all entries, which over-approximates the pending
  set (the concrete buffer is always a suffix of the abstract one, entry-wise
  contained, so joins align buffers at their youngest end).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from kairos.wcet.errors import WcetError
from kairos.wcet.isa import Instr, InstrClass as C
from kairos.wcet.model import ProcessorModel

__all__ = ["PipeState", "Residual", "step", "NREGS", "STORE_BUFFER_ENTRIES", "ANY_RANGE", "csr_writes"]

NREGS = 64  # x0..x31, f0..f31 (32+n)
STORE_BUFFER_ENTRIES = 8  # default of ProcessorModel.store_buffer_entries
ANY_RANGE = (0, 1 << 64)

_READS_MEM = (C.LOAD, C.FP_LOAD, C.LR, C.AMO, C.SC)
_STORES = (C.STORE, C.FP_STORE)
MEM_CLASSES = frozenset((C.LOAD, C.FP_LOAD, C.LR, C.AMO, C.SC, C.STORE, C.FP_STORE))


class Residual(NamedTuple):
    """What of a pipeline state can still delay the code after a block, in
    cycles relative to its next issue slot: the static analysis' lattice
    value for the pipeline (joined by ``join_residual``)."""

    ready: tuple[int, ...]                    # per register: cycles until its result is ready
    unit_busy: int                            # cycles until the multiply/divide unit is free
    store_buffer: tuple[tuple[int, int], ...]  # byte ranges of the pending stores, oldest first


@dataclass
class PipeState:
    t_next: int = 0
    ready: list[int] = field(default_factory=lambda: [0] * NREGS)
    unit_free: int = 0
    sbuf: tuple[tuple[int, int], ...] = ()

    def copy(self) -> "PipeState":
        return PipeState(self.t_next, self.ready[:], self.unit_free, self.sbuf)

    # --- block-relative summaries (for the static analysis) ----------------
    def residual(self) -> Residual:
        """Times relative to ``t_next`` (clipped at 0): the part of this state
        that can still delay the following code."""
        t = self.t_next
        return Residual(tuple([r - t if r > t else 0 for r in self.ready]), max(0, self.unit_free - t),
                        self.sbuf)

    @staticmethod
    def from_residual(res: Residual) -> "PipeState":
        return PipeState(0, list(res.ready), res.unit_busy, res.store_buffer)


def join_residual(a: Residual | None, b: Residual | None) -> Residual | None:
    """Least upper bound of two residual summaries (``None`` = bottom)."""
    if a is None:
        return b
    if b is None:
        return a
    ra, ua, sa = a
    rb, ub, sb = b
    ready = ra if ra == rb else tuple(map(max, ra, rb))
    # Align store buffers at their youngest end.
    n = max(len(sa), len(sb))
    pa = ((None,) * (n - len(sa))) + sa
    pb = ((None,) * (n - len(sb))) + sb
    sbuf = []
    for x, y in zip(pa, pb):
        if x is None:
            sbuf.append(y)
        elif y is None:
            sbuf.append(x)
        else:
            sbuf.append((min(x[0], y[0]), max(x[1], y[1])))
    return Residual(ready, max(ua, ub), tuple(sbuf))


def csr_writes(ins: Instr) -> bool:
    """Whether a csrr* instruction writes its CSR (csrrs/csrrc with x0 or a
    zero immediate only read)."""
    m = ins.mnemonic
    if m in ("csrrw", "csrrwi"):
        return True
    if ins.rs1 is None:
        return ins.imm != 0
    return ins.rs1 != 0


def _dw(lo: int, hi: int) -> tuple[int, int]:
    return lo >> 3, (hi + 7) >> 3


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    a0, a1 = _dw(*a)
    b0, b1 = _dw(*b)
    return a0 < b1 and b0 < a1


def step(st: PipeState, ins: Instr, m: ProcessorModel, ipen: int = 0, dpen: int = 0,
         drange: tuple[int, int] = ANY_RANGE, exact: bool = True) -> int:
    """Advance ``st`` over ``ins``; returns the issue cycle.

    ``ipen``: I-cache miss penalty of this fetch; ``dpen``: extra cycles of
    its data access (cache miss/write-back or device access); ``drange``:
    byte range the data access may touch; ``exact``: concrete replay (pop
    the store buffer through a store-to-load hit) or abstract analysis.
    """
    cls = ins.cls
    ready = st.ready
    issue = st.t_next + ipen
    for r in ins.reads:
        t = ready[r]
        if t > issue:
            issue = t
    if (cls is C.MUL or cls is C.DIV) and not m.muldiv_pipelined and st.unit_free > issue:
        issue = st.unit_free
    nxt = issue + 1
    rd = ins.rd if ins.rd else None
    if cls is C.ALU:
        if rd is not None:
            ready[rd] = issue + m.alu_latency
        if st.sbuf:
            st.sbuf = st.sbuf[1:]
    elif cls in _READS_MEM or cls in _STORES:
        slp = 0
        if cls in _READS_MEM and st.sbuf:
            sb = st.sbuf
            for idx in range(len(sb) - 1, -1, -1):
                if _overlap(sb[idx], drange):
                    slp = m.store_load_penalty
                    if exact:
                        st.sbuf = sb[idx + 1:]
                    break
        if cls is C.LOAD:
            lat = m.load_latency_word if ins.mem_width >= 4 else m.load_latency_subword
        elif cls is C.FP_LOAD:
            lat = m.fp_load_latency
        else:
            lat = m.load_latency_word + m.amo_extra_latency
        if cls in _STORES:
            if len(st.sbuf) >= m.store_buffer_entries:
                issue += 1
                st.sbuf = st.sbuf[1:]
            st.sbuf = st.sbuf + (drange,)
            nxt = issue + 1 + dpen
        else:
            if rd is not None:
                ready[rd] = issue + slp + dpen + lat
            nxt = issue + 1 + slp + dpen
    else:
        if st.sbuf:
            st.sbuf = st.sbuf[1:]
        if cls is C.BRANCH:
            nxt += m.mispredict_penalty
        elif cls is C.JAL or cls is C.JALR:
            if rd is not None:
                ready[rd] = issue + m.alu_latency
            nxt += m.mispredict_penalty
        elif cls is C.MUL:
            done = issue + m.mul_latency
            if rd is not None:
                ready[rd] = done
            st.unit_free = done
        elif cls is C.DIV:
            done = issue + m.div_latency
            if rd is not None:
                ready[rd] = done
            st.unit_free = done
        elif cls is C.CSR:
            if rd is not None:
                ready[rd] = issue + m.csr_read_latency
            if csr_writes(ins):
                nxt += m.csr_write_flush
        elif cls is C.FENCE:
            nxt += m.fence_penalty
            st.sbuf = ()
        elif cls is C.FENCE_I:
            nxt += m.fence_i_penalty
            st.sbuf = ()
        elif cls is C.SFENCE_VMA:
            nxt += m.sfence_vma_penalty
        elif cls is C.ECALL or cls is C.EBREAK:
            nxt += m.trap_entry_penalty
        elif cls is C.SRET or cls is C.MRET:
            nxt += m.xret_penalty
        elif cls is C.WFI:
            nxt += m.wfi_penalty
        elif cls is C.FPU:
            if rd is not None:
                ready[rd] = issue + m.fpu_latency
        else:
            raise WcetError(f"no timing for instruction {ins.text()} at {ins.addr:#x}")
    st.t_next = nxt
    return issue
