"""A simple value analysis giving the data address range of every memory access.

Abstract value of a register: ``None`` (unknown) or ``(base, lo, hi)`` — an
inclusive interval, ``base`` being ``"abs"`` (an absolute value) or ``"sp"``
(relative to the stack pointer at the *function's* entry).  Transfer
functions cover ``lui``/``auipc``/``addi``/``add``/``sub``/shifts/``andi``
and zero-extending byte/half loads; everything else is unknown.  Calls
clobber the caller-saved registers; ``sp``, ``gp`` (``__global_pointer$``),
``tp`` and callee-saved registers survive (standard ABI).

Loops: after ``WIDEN_AFTER`` growing rounds an absolute interval that lies
inside one data object (an ELF ``STT_OBJECT`` symbol with a size) is widened
to the whole object — the C rule that pointer arithmetic stays within its
object — otherwise to unknown.

Results (``ValueInfo``):

* ``access(func_entry, instr_addr) -> MemRange | None`` — half-open byte range
  ``[lo, hi)`` touched by that load/store in that function, ``base`` being
  ``"abs"`` or ``"sp"`` (relative to the function's entry ``sp``); ``None`` if
  unknown (any address);
* ``sp_delta(call_site) -> int | None`` — ``sp`` at a call instruction
  relative to the caller's entry ``sp``;
* ``range(ctx, instr_addr, func_entry=None) -> tuple[int, int] | None`` — the
  absolute half-open range in call context ``ctx``: stack ranges are made
  absolute with ``sp0`` (the ``sp`` at the analysed entry, if known) plus the
  call-site deltas along ``ctx``; ``None`` means unknown (pessimistic).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from kairos.wcet.cfg import CALLER_SAVED, MASK64, Context, Function, Program, Term, _rpo
from kairos.wcet.isa import Instr, InstrClass

WIDEN_AFTER = 3
MAX_ROUNDS = 60

Val = tuple[str, int, int] | None


@dataclass(frozen=True)
class MemRange:
    base: str     # "abs" or "sp"
    lo: int       # inclusive
    hi: int       # exclusive


def _const(v: int) -> Val:
    v &= MASK64
    if v >> 63:
        v -= 1 << 64
    return ("abs", v, v)


def _signed(v: int) -> int:
    v &= MASK64
    return v - (1 << 64) if v >> 63 else v


def _join(a: Val, b: Val) -> Val:
    if a is None or b is None or a[0] != b[0]:
        return None
    return (a[0], min(a[1], b[1]), max(a[2], b[2]))


class ValueInfo:
    def __init__(self, program: Program, sp0: int | None = None) -> None:
        self.program = program
        self.image = program.image
        self.sp0 = sp0
        self._access: dict[tuple[int, int], MemRange | None] = {}
        self._sp_at_call: dict[int, int | None] = {}
        self._done: set[int] = set()
        self._objects = sorted((_signed(s.addr), _signed(s.addr) + s.size) for s in self.image.symbols
                               if s.kind == "object" and s.size > 0)
        for f in program.functions.values():
            self._analyse(f)

    # -- public -------------------------------------------------------------
    def access(self, func_entry: int, instr_addr: int) -> MemRange | None:
        return self._access.get((func_entry, instr_addr))

    def sp_delta(self, call_site: int) -> int | None:
        return self._sp_at_call.get(call_site)

    def stack_offset(self, ctx: Context) -> int | None:
        """sp at the entry of the function reached by ``ctx`` relative to sp0."""
        off = 0
        for site in ctx:
            d = self._sp_at_call.get(site)
            if d is None:
                return None
            off += d
        return off

    def range(self, ctx: Context, instr_addr: int, func_entry: int | None = None) -> tuple[int, int] | None:
        if func_entry is None:
            func_entry = self._owner(ctx)
        r = self._access.get((func_entry, instr_addr))
        if r is None:
            return None
        if r.base == "abs":
            return (r.lo & MASK64, ((r.lo & MASK64) + (r.hi - r.lo)))
        if self.sp0 is None:
            return None
        off = self.stack_offset(ctx)
        if off is None:
            return None
        return ((self.sp0 + off + r.lo) & MASK64, (self.sp0 + off + r.hi) & MASK64)

    def _owner(self, ctx: Context) -> int:
        if not ctx:
            raise ValueError("func_entry is required for the root context")
        site = ctx[-1]
        # the callee of the last call site
        for f in self.program.functions.values():
            for bs, callee in f.calls:
                if f.blocks[bs].last.addr == site:
                    return callee
        raise KeyError(site)

    # -- analysis -------------------------------------------------------------
    def _widen(self, old: Val, new: Val) -> Val:
        if new is None or old is None or old[0] != new[0]:
            return None
        if new[1] >= old[1] and new[2] <= old[2]:
            return old
        if new[0] == "abs":
            obj = (self._object_of(old) or self._object_of(("abs", old[2], old[2]))
                   or self._object_of(("abs", old[1], old[1])))
            if obj is not None:
                return ("abs", obj[0], obj[1])   # pointer stays within [start, one past the end]
            return None
        return None

    def _object_of(self, v: Val) -> tuple[int, int] | None:
        """The data object whose [start, end] contains the interval ``v``."""
        if v is None or v[0] != "abs":
            return None
        i = bisect.bisect_right(self._objects, (v[1], 1 << 70)) - 1
        while i >= 0:
            a, b = self._objects[i]
            if a <= v[1] and v[2] <= b:
                return a, b
            if b < v[1] - (1 << 24):
                break
            i -= 1
        return None

    def _analyse(self, f: Function) -> None:
        init: dict[int, Val] = {2: ("sp", 0, 0)}
        if self.image.gp is not None:
            init[3] = _const(self.image.gp)
        state_in: dict[int, dict[int, Val]] = {f.entry: init}
        counts: dict[int, int] = {}
        order = _rpo(f.blocks, f.entry)
        changed = True
        rounds = 0
        while changed and rounds < MAX_ROUNDS:
            changed = False
            rounds += 1
            for s in order:
                if s not in state_in:
                    continue
                blk = f.blocks[s]
                regs = dict(state_in[s])
                for ins in blk.instrs:
                    if ins.is_call or blk.kind is Term.TAILCALL and ins is blk.last:
                        sp = regs.get(2)
                        self._sp_at_call[ins.addr] = sp[1] if sp and sp[0] == "sp" and sp[1] == sp[2] else None
                    self._step(regs, ins, f)
                if blk.kind is Term.CALL:
                    for r in CALLER_SAVED:
                        regs.pop(r, None)
                for t in blk.succs:
                    old = state_in.get(t)
                    if old is None:
                        state_in[t] = dict(regs)
                        changed = True
                        continue
                    n = counts.get(t, 0)
                    new: dict[int, Val] = {}
                    for r in set(old) & set(regs):
                        j = _join(old[r], regs[r])
                        if j is not None and j != old[r] and n >= WIDEN_AFTER:
                            j = self._widen(old[r], j)
                        if j is not None:
                            new[r] = j
                    if new != old:
                        state_in[t] = new
                        counts[t] = n + 1
                        changed = True
        if changed:  # did not stabilise: forget everything but constants of the entry
            for blk in f.blocks.values():
                for ins in blk.instrs:
                    if ins.mem_width:
                        self._access[(f.entry, ins.addr)] = None

    def _step(self, regs: dict[int, Val], ins: Instr, f: Function) -> None:
        if ins.mem_width:
            base = regs.get(ins.rs1) if ins.rs1 else ("abs", 0, 0)
            if base is None:
                rng = None
            else:
                rng = MemRange(base[0], base[1] + ins.imm, base[2] + ins.imm + ins.mem_width)
            key = (f.entry, ins.addr)
            if key in self._access and self._access[key] is not None and rng is not None:
                old = self._access[key]
                rng = MemRange(old.base, min(old.lo, rng.lo), max(old.hi, rng.hi)) if old.base == rng.base else None
            elif key in self._access and self._access[key] is None:
                rng = None
            self._access[key] = rng
        if not ins.writes:
            return

        def get(r: int | None) -> Val:
            if r is None or r == 0:
                return ("abs", 0, 0)
            return regs.get(r)

        m = ins.mnemonic
        v: Val = None
        a = get(ins.rs1)
        if m == "lui":
            v = _const(ins.imm)
        elif m == "auipc":
            v = _const(ins.addr + ins.imm)
        elif m in ("addi", "addiw"):
            if a is not None:
                v = (a[0], a[1] + ins.imm, a[2] + ins.imm)
                if m == "addiw" and not (a[0] == "abs" and -(1 << 31) <= v[1] and v[2] < (1 << 31)):
                    v = None
        elif m in ("add", "addw"):
            b = get(ins.rs2)
            if a is not None and b is not None:
                if a[0] == "abs" and b[0] == "abs":
                    v = ("abs", a[1] + b[1], a[2] + b[2])
                    for x in (a, b):   # indexing an object: stays within it (C rule)
                        obj = self._object_of(x)
                        if obj is not None and x[1] == x[2] and not (obj[0] <= v[1] and v[2] <= obj[1]):
                            v = ("abs", obj[0], obj[1])
                elif a[0] == "sp" and b[0] == "abs":
                    v = ("sp", a[1] + b[1], a[2] + b[2])
                elif b[0] == "sp" and a[0] == "abs":
                    v = ("sp", a[1] + b[1], a[2] + b[2])
                if m == "addw" and v is not None and not (v[0] == "abs" and -(1 << 31) <= v[1] and v[2] < (1 << 31)):
                    v = None
            elif m == "add" and (a is None) != (b is None):
                obj = self._object_of(a if a is not None else b)
                if obj is not None:   # object base + unknown index: stays within the object (C rule)
                    v = ("abs", obj[0], obj[1])
        elif m == "sub":
            b = get(ins.rs2)
            if a is not None and b is not None and b[0] == "abs":
                v = (a[0], a[1] - b[2], a[2] - b[1])
        elif m in ("slli", "slliw"):
            if a is not None and a[0] == "abs" and a[1] >= 0 and a[2] < (1 << (62 - ins.imm)):
                v = ("abs", a[1] << ins.imm, a[2] << ins.imm)
        elif m in ("srli", "srai"):
            if a is not None and a[0] == "abs" and a[1] >= 0:
                v = ("abs", a[1] >> ins.imm, a[2] >> ins.imm)
            elif m == "srli" and ins.imm > 0:
                v = ("abs", 0, (1 << (64 - ins.imm)) - 1)
        elif m == "andi":
            if ins.imm >= 0:
                v = ("abs", 0, ins.imm)
        elif m == "and":
            b = get(ins.rs2)
            for x in (a, b):
                if x is not None and x[0] == "abs" and x[1] == x[2] and x[1] >= 0:
                    v = ("abs", 0, x[1])
        elif ins.cls is InstrClass.LOAD and not ins.mem_signed:
            v = ("abs", 0, (1 << (8 * ins.mem_width)) - 1) if ins.mem_width < 8 else None
        elif ins.cls is InstrClass.LOAD and ins.mem_width < 8:
            half = 1 << (8 * ins.mem_width - 1)
            v = ("abs", -half, half - 1)
        elif m in ("sltiu", "sltu", "slti", "slt"):
            v = ("abs", 0, 1)
        for w in ins.writes:
            if w >= 32:
                continue
            if w == ins.rd and v is not None:
                regs[w] = v
            else:
                regs.pop(w, None)
