"""A simple value analysis giving the data address range of every memory access.

Abstract value of a register: ``None`` (unknown) or ``(base, lo, hi)`` — an
inclusive interval, ``base`` being ``"abs"`` (an absolute value) or ``"sp"``
(relative to the stack pointer at the *function's* entry).  Transfer
functions cover ``lui``/``auipc``/``addi``/``add``/``sub``/shifts/``andi``
and zero-extending byte/half loads; everything else is unknown.  Calls
clobber the caller-saved registers; ``sp``, ``gp`` (``__global_pointer$``),
``tp`` and callee-saved registers survive (standard ABI).

Symbolic bases: a value the intervals cannot express is named by what
defined it (``Kind``), so accesses through one pointer of unknown value are
known relative to each other; a register that still holds an older value of
a redefined name becomes unknown.  ``symbolic()`` gives such an access's
base and offsets (docs/wcet.md "Data addresses").

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
from kairos.wcet.errors import WcetError
from kairos.wcet.isa import Instr, InstrClass

WIDEN_AFTER = 3
MAX_ROUNDS = 60
#: Offsets of one symbolic base are kept as a range only while the range is
#: at most this wide (64 lines of 64 bytes less one: lines that far apart
#: fall into different sets of a 4 KiB cache way).
SYMBOLIC_WINDOW = 4032

#: A value kind is "abs", "sp", "obj" or a symbolic base: ("d", addr) the
#: value defined by the instruction at addr (("d", addr, reg) for the a0/a1
#: results of an ecall), ("p", block, reg) the value of reg on entry to a
#: merge block, ("a", reg) reg at the function's entry.
Kind = str | tuple
Val = tuple[Kind, int, int] | None


def is_symbolic(kind: Kind) -> bool:
    return isinstance(kind, tuple)


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
    def __init__(self, program: Program, sp0: int | None = None, bounds=None) -> None:
        """``bounds``: a ``bounds.BoundAnalysis`` (loop bounds keep induction
        pointers in exact intervals); one without annotations is made if None."""
        if bounds is None:
            from kairos.wcet.bounds import BoundAnalysis
            bounds = BoundAnalysis(program)
        self.bounds = bounds
        self.program = program
        self.image = program.image
        self.sp0 = sp0
        self._access: dict[tuple[int, int], MemRange | None] = {}
        self._sp_at_call: dict[int, int | None] = {}
        self._sp_val_at_call: dict[int, Val] = {}
        self._done: set[int] = set()
        self._objects = sorted((_signed(s.addr), _signed(s.addr) + s.size) for s in self.image.symbols
                               if s.kind == "object" and s.size > 0)
        self._device_kinds: set[tuple[int, Kind]] = set()
        # Symbolic bases that are an absolute address plus a wide index:
        # their absolute range, for ``range``.
        self._hull: dict[tuple[int, Kind], tuple[int, int]] = {}
        # Values named by an ``add`` of a function argument (at its entry
        # value, plus a constant) and an index the intervals cannot bound:
        # the argument register, for ``derived_from``.
        self._derived: dict[tuple[int, Kind], int] = {}
        # For those defined by an ``add``: (offset of the argument operand,
        # the index operand's register), for ``derived_operands``.
        self._operands: dict[tuple[int, Kind], tuple[int, int]] = {}
        # (function entry, kind) -> the values of the two operands of the
        # ``add`` that defines a base the intervals cannot express, for
        # ``sum_terms``.
        self._sums: dict[tuple[int, Kind], tuple[Val, Val]] = {}
        # (function entry, return block start) -> a0 at its ret
        self._return_vals: dict[tuple[int, int], Val] = {}
        self._phis: dict[tuple[int, int], dict[int, dict[int, Val]]] = {}
        self._defs: dict[int, frozenset[int]] = {}
        # a0..a7 at each call (and tail call) instruction, for ``args_at_call``.
        self._args_at_call: dict[int, tuple[Val, ...]] = {}
        # a0 at each way out of a function (None: a tail call's), for ``returned``.
        self._returns: dict[int, list[Val]] = {}
        slots = device_pointer_variables(self.image)
        #: Whether pointers of unknown value may be assumed to address
        #: memory (those of volatile-pointer variables excepted): only with
        #: the DWARF that names those variables.
        self.symbolic_bases = slots is not None
        #: stack accesses at an unknown sp are relative to sp at the function's entry (``symbolic``)
        self.symbolic_stack = True
        self._device_slots = slots or []
        for f in program.functions.values():
            self._analyse(f)
            self._refine_loops(f)

    # -- public -------------------------------------------------------------
    def access(self, func_entry: int, instr_addr: int) -> MemRange | None:
        return self._access.get((func_entry, instr_addr))

    def sp_delta(self, call_site: int) -> int | None:
        return self._sp_at_call.get(call_site)

    def stack_offset(self, ctx: Context) -> int | None:
        """sp at the entry of the function reached by ``ctx`` relative to sp0."""
        if ctx and ctx[0] < 0:
            return None
        off = 0
        for site in ctx:
            d = self._sp_at_call.get(site)
            if d is None:
                return None
            off += d
        return off

    def entry_sp(self, ctx: Context) -> tuple[str, int] | None:
        """``sp`` at the entry of the function reached by ``ctx``: ``("abs", v)``
        when some caller set it to a constant (a trap vector loading the kernel
        stack), ``("sp", off)`` relative to ``sp0``, or None if unknown."""
        cur: tuple[str, int] = ("sp", 0)
        sites = ctx
        if ctx and ctx[0] < 0:          # shared context: the caller's sp is unknown
            cur, sites = ("unknown", 0), ctx[1:]
        for site in sites:
            v = self._sp_val_at_call.get(site)
            if v is None or v[1] != v[2]:
                return None
            if v[0] == "abs":
                cur = ("abs", v[1])
            else:
                cur = (cur[0], cur[1] + v[1])
        return None if cur[0] == "unknown" else cur

    def symbolic(self, func_entry: int, instr_addr: int) -> tuple[Kind, int, int] | None:
        """``(base, lo, hi)``: the access touches bytes ``[lo, hi)`` relative
        to a symbolic base (a value of unknown address named by its
        definition, see ``Kind``); None if it has no such base or the base
        may point to a device (``device_pointer_variables``).

        A stack access whose address is unknown (``range`` gives None: the
        function runs in a shared context, so ``sp`` at its entry depends on
        the caller) is relative to ``sp`` at the function's entry, the base
        ``("a", 2)``: that value does not change while the function runs
        (callees restore ``sp``), and the stack is memory, not a device."""
        r = self._access.get((func_entry, instr_addr))
        if r is None or not self.symbolic_bases:
            return None
        if r.base == "sp" and self.symbolic_stack and r.hi - r.lo <= SYMBOLIC_WINDOW:
            return (("a", 2), r.lo, r.hi)
        if not is_symbolic(r.base) or (func_entry, r.base) in self._device_kinds:
            return None
        return (r.base, r.lo, r.hi)

    def symbolic_definitions(self, func_entry: int) -> frozenset[int]:
        """Addresses of the instructions of a function that define a
        symbolic base some access of it uses (see ``symbolic``)."""
        got = self._defs.get(func_entry)
        if got is None:
            got = frozenset(r.base[1] for (fe, _), r in self._access.items()
                            if fe == func_entry and r is not None and is_symbolic(r.base) and r.base[0] == "d")
            self._defs[func_entry] = got
        return got

    def derived_from(self, func_entry: int, kind: Kind) -> int | None:
        """The argument register ``r`` if the symbolic base ``kind`` was
        computed in that function as ``r`` (its value at the entry, plus a
        constant) plus an index of unknown range; else None.  The cache
        analysis relates such an address to the argument only where an
        annotation states how far indexed accesses from it reach
        (``[[object]]``, docs/wcet.md "Data addresses")."""
        return self._derived.get((func_entry, kind))

    def derived_operands(self, func_entry: int, kind: Kind) -> tuple[int, int] | None:
        """For a base ``derived_from`` an argument by the ``add`` that
        defines it: the constant added to the argument in the argument's
        operand, and the register of the index operand."""
        return self._operands.get((func_entry, kind))

    def sum_terms(self, func_entry: int, kind: Kind) -> tuple[Val, Val] | None:
        """For a base defined by an ``add`` of two known values (named
        bases, constants; neither None): those two values, in the
        function's terms at the ``add``.  The cache analysis adds their
        alignments (``x + (i << 6)`` is line-aligned where ``x`` is)."""
        return self._sums.get((func_entry, kind))

    def may_be_device(self, func_entry: int, kind: Kind) -> bool:
        """Whether the symbolic base ``kind`` of that function may address
        a device (``device_pointer_variables``)."""
        return (func_entry, kind) in self._device_kinds

    def returned(self, func_entry: int) -> Val:
        """The value the function returns in a0, in its own terms, when
        every return gives the same one (a symbolic base plus one
        constant); None otherwise (a tail call, an unknown value, values
        that differ)."""
        vals = self._returns.get(func_entry)
        if not vals or any(v is None or v != vals[0] for v in vals) or not is_symbolic(vals[0][0]) \
                or vals[0][1] != vals[0][2]:
            return None
        return vals[0]

    def return_value(self, func_entry: int, block: int) -> Val:
        """``a0`` at the ``ret`` of the function's return block ``block``,
        over every context (None: unknown or not analysed)."""
        return self._return_vals.get((func_entry, block))

    def args_at_call(self, call_addr: int) -> tuple[Val, ...] | None:
        """The values of a0..a7 just before the call (or tail call)
        instruction at ``call_addr``, in its caller's terms (None per
        register: unknown); None if the call was not analysed."""
        return self._args_at_call.get(call_addr)

    def merged(self, func_entry: int, block: int) -> dict[int, dict[int, Val]]:
        """The registers named ``("p", block, r)`` at a merge block, each
        with its value at the end of every predecessor block (None:
        unknown).  Values named by this block are the previous instance,
        i.e. the same value when the register was not redefined on the way
        round a loop."""
        return self._phis.get((func_entry, block), {})

    def range(self, ctx: Context, instr_addr: int, func_entry: int | None = None) -> tuple[int, int] | None:
        if func_entry is None:
            func_entry = self._owner(ctx)
        r = self._access.get((func_entry, instr_addr))
        if r is None:
            return None
        if is_symbolic(r.base):
            h = self._hull.get((func_entry, r.base))
            if h is None:
                return None
            lo = (h[0] + r.lo) & MASK64
            return (lo, lo + (h[1] + r.hi) - (h[0] + r.lo))
        if r.base == "abs":
            return (r.lo & MASK64, ((r.lo & MASK64) + (r.hi - r.lo)))
        esp = self.entry_sp(ctx)
        if esp is None:
            return None
        if esp[0] == "abs":
            base = esp[1]
        elif self.sp0 is None:
            return None
        else:
            base = self.sp0 + esp[1]
        return ((base + r.lo) & MASK64, ((base + r.lo) & MASK64) + (r.hi - r.lo))

    def _owner(self, ctx: Context) -> int:
        if not ctx:
            raise ValueError("func_entry is required for the root context")
        if len(ctx) == 1 and ctx[0] < 0:
            return -ctx[0]
        site = ctx[-1]
        # the callee of the last call site
        for f in self.program.functions.values():
            for bs, callee in f.calls:
                if f.blocks[bs].last.addr == site:
                    return callee
        raise KeyError(site)

    # -- analysis -------------------------------------------------------------
    def _widen(self, old: Val, new: Val) -> Val:
        if new is not None and new[0] == "obj":
            return new          # already "anywhere in its object"
        if new is None or old is None or old[0] != new[0]:
            return None
        if new[1] >= old[1] and new[2] <= old[2]:
            return old
        return None

    def _object_access(self, anchor: int) -> MemRange | None:
        """Range of an access at ``anchor`` + an unknown offset: by the C rule
        the access stays within the object containing ``anchor`` (or, for a
        one-past-the-end anchor, the object just before it)."""
        obj = self._object_strictly_containing(anchor) or self._object_of(("abs", anchor - 1, anchor - 1))
        if obj is None:
            return None
        return MemRange("abs", obj[0], obj[1])

    def _object_strictly_containing(self, addr: int) -> tuple[int, int] | None:
        i = bisect.bisect_right(self._objects, (addr, 1 << 70)) - 1
        while i >= 0:
            a, b = self._objects[i]
            if a <= addr < b:
                return a, b
            if b < addr - (1 << 24):
                break
            i -= 1
        return None

    def _joinv(self, a: Val, b: Val) -> Val:
        if a is None or b is None:
            return None
        if a[0] == b[0] and a[0] != "obj":
            return (a[0], min(a[1], b[1]), max(a[2], b[2]))
        if "obj" not in (a[0], b[0]):
            return None
        o, other = (a, b) if a[0] == "obj" else (b, a)
        obj = self._object_of(("abs", o[1], o[1]))
        if obj is None:
            return None
        if other[0] == "obj":
            if self._object_of(("abs", other[1], other[1])) == obj:
                return a          # keep the first anchor: stable, and in the same object
            return None
        if other[0] == "abs" and obj[0] <= other[1] and other[2] <= obj[1]:
            return o
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

    def _loop_ivs(self, f: Function) -> dict[int, tuple[set, dict[int, tuple[int, int, bool]]]]:
        """Per loop header: (entry-edge sources, {reg: (step, N)}) for registers
        whose only definition in the loop is ``addi r, r, step`` outside inner
        loops (so it runs at most once per iteration), N = header bound."""
        from kairos.wcet.loops import find_loops
        out: dict[int, tuple[set, dict[int, tuple[int, int, bool]]]] = {}
        try:
            forest = find_loops(f)
        except WcetError:
            return out
        for lp in forest.loops:
            if lp.irreducible:
                continue
            defs: dict[int, list] = {}
            has_call = False
            for bs in lp.blocks:
                blk = f.blocks[bs]
                for ins in blk.instrs:
                    for w in ins.writes:
                        defs.setdefault(w, []).append((bs, ins))
                if blk.kind in (Term.CALL, Term.TAILCALL):
                    has_call = True
            steps: dict[int, tuple[int, bool]] = {}
            for r, dl in defs.items():
                if len(dl) != 1 or r >= 32 or (has_call and r in CALLER_SAVED):
                    continue
                bs, ins = dl[0]
                if forest.innermost.get(bs) is not lp:
                    continue
                if ins.mnemonic in ("addi", "addiw") and ins.rd == r and ins.rs1 == r and ins.imm != 0:
                    steps[r] = (ins.imm, ins.mnemonic == "addiw")
            # the bound is only used to limit such a register's range: a loop
            # without one costs no bound (for many, the solver's work)
            bound = self.loop_bound(forest, lp) if steps else None
            ivs: dict[int, tuple[int, int, bool]] = {}
            if bound is not None:
                ivs = {r: (imm, bound, w) for r, (imm, w) in steps.items()}
            out[lp.header] = ({p for p, _ in lp.entry_edges}, ivs)
        return out

    def _refine_loops(self, f: Function) -> None:
        """Intersect with the exact address hulls from abstract execution of
        each outermost loop nest (both are sound over-approximations)."""
        from kairos.wcet.loops import find_loops
        if self.bounds is None:
            return
        try:
            forest = find_loops(f)
        except WcetError:
            return
        for lp in forest.loops:
            if lp.parent is not None or lp.irreducible:
                continue
            mem = self.bounds.loop_accesses(forest, lp)
            if not mem:
                continue
            for iaddr, hull in mem.items():
                if hull is None:
                    continue
                key = (f.entry, iaddr)
                lo, hi = _signed(hull[0]), _signed(hull[0]) + (hull[1] - hull[0])
                cur = self._access.get(key)
                if cur is None or cur.base != "abs":
                    self._access[key] = MemRange("abs", lo, hi)
                else:
                    nlo, nhi = max(cur.lo, lo), min(cur.hi, hi)
                    if nlo < nhi:
                        self._access[key] = MemRange("abs", nlo, nhi)

    def loop_bound(self, forest, lp) -> int | None:
        """Header executions per entry of ``lp`` (context-free), None when
        it has no bound; shared with the cache analysis' copy rule."""
        if self.bounds is None:
            return None
        try:
            b = self.bounds.bound(forest, lp, [lp.func.name], ())
        except WcetError:
            return None
        return b.max

    def _analyse(self, f: Function) -> None:
        init: dict[int, Val] = {r: (("a", r), 0, 0) for r in range(1, 32)}
        init[2] = ("sp", 0, 0)
        if self.image.gp is not None:
            init[3] = _const(self.image.gp)
        headers = self._loop_ivs(f)
        edge_out: dict[tuple[int, int], dict[int, Val]] = {}
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
                        old_v = self._sp_val_at_call.get(ins.addr, sp)
                        self._sp_val_at_call[ins.addr] = sp if old_v == sp else None
                    self._step(regs, ins, f)
                if blk.kind is Term.CALL:
                    self._after_call(regs, blk)
                for t in blk.succs:
                    if edge_out.get((s, t)) == regs:
                        continue
                    edge_out[(s, t)] = dict(regs)
                    new = self._merge(f, t, edge_out, headers.get(t), state_in.get(t), counts.get(t, 0))
                    if new != state_in.get(t):
                        state_in[t] = new
                        counts[t] = counts.get(t, 0) + 1
                        changed = True
        if changed:  # did not stabilise: give up on this function's addresses
            for blk in f.blocks.values():
                for ins in blk.instrs:
                    if ins.mem_width:
                        self._access[(f.entry, ins.addr)] = None
            return
        # The access ranges, from the stable states.
        for s in order:
            if s not in state_in:
                continue
            regs = dict(state_in[s])
            blk = f.blocks[s]
            for ins in blk.instrs:
                if ins is blk.last and blk.kind in (Term.CALL, Term.TAILCALL):
                    self._args_at_call[ins.addr] = tuple(regs.get(r) for r in range(10, 18))
                if ins is blk.last and blk.kind is Term.RETURN:
                    self._return_vals[(f.entry, s)] = regs.get(10)
                if ins is blk.last and blk.kind in (Term.RETURN, Term.TAILCALL):
                    self._returns.setdefault(f.entry, []).append(regs.get(10) if blk.kind is Term.RETURN
                                                                 else None)
                self._step(regs, ins, f, record=True)

    @staticmethod
    def _after_call(regs: dict[int, Val], blk) -> None:
        """A call clobbers the caller-saved registers; its result in a0 is a
        new value named by the call instruction."""
        for r in CALLER_SAVED:
            regs.pop(r, None)
        # a callee-saved register may still hold what this call returned
        # the last time round a loop: an older value of the same name
        kind = ("d", blk.last.addr)
        for r in [r for r, x in regs.items() if x is not None and x[0] == kind]:
            del regs[r]
        regs[10] = (kind, 0, 0)

    def _merge(self, f: Function, t: int, edge_out, header, old, n: int) -> dict[int, Val]:
        def current(st: dict[int, Val]) -> dict[int, Val]:
            # A value named after this block's entry is an older instance.
            return {r: v for r, v in st.items()
                    if not (v is not None and is_symbolic(v[0]) and v[0][0] == "p" and v[0][1] == t)}

        ins = [current(edge_out[(p, t)]) for p in f.blocks[t].preds if (p, t) in edge_out]
        new: dict[int, Val] = dict(ins[0])
        for st in ins[1:]:
            new = {r: j for r in set(new) & set(st) if (j := self._joinv(new[r], st[r])) is not None}
        if old is not None and n >= WIDEN_AFTER:
            widened: dict[int, Val] = {}
            for r, v in new.items():
                if old.get(r) is None:
                    continue
                w = v if v == old[r] else self._widen(old[r], v)
                if w is not None:
                    widened[r] = w
            new = widened
        if header is not None:
            entries, ivs = header
            ent = [edge_out[(p, t)] for p in entries if (p, t) in edge_out]
            for r, (step, bound, w32) in ivs.items():
                vals = [current(e).get(r) for e in ent]
                if not ent or any(v is None or v[0] == "obj" for v in vals):
                    new.pop(r, None)
                    continue
                lo = min(v[1] for v in vals)
                hi = max(v[2] for v in vals)
                kind = vals[0][0]
                if any(v[0] != kind for v in vals):
                    new.pop(r, None)
                    continue
                span = step * bound
                lo, hi = lo + min(0, span), hi + max(0, span)
                if w32 and not (kind == "abs" and -(1 << 31) <= lo and hi < (1 << 31)):
                    new.pop(r, None)       # a 32-bit counter that may wrap
                    continue
                new[r] = (kind, lo, hi)
        phis: dict[int, dict[int, Val]] = {}
        self._phis[(f.entry, t)] = phis
        if len(ins) > 1:
            # A register the join lost holds one value per entry into the
            # block: name it by the block.
            for r in set().union(*ins) - set(new):
                if 0 < r < 32:
                    kind = ("p", t, r)
                    new[r] = (kind, 0, 0)
                    # What it is on each way in (``phis``), before older
                    # instances of this block's names are dropped.
                    phis[r] = {p: edge_out[(p, t)].get(r) for p in f.blocks[t].preds if (p, t) in edge_out}
                    # Every incoming value an argument or derived from it:
                    # so is the merged one.
                    roots = {None if (v := st.get(r)) is None or not is_symbolic(v[0]) else
                             v[0][1] if v[0][0] == "a" else self._derived.get((f.entry, v[0])) for st in ins}
                    if len(roots) == 1 and None not in roots:
                        self._derived[(f.entry, kind)] = roots.pop()
                    else:
                        self._derived.pop((f.entry, kind), None)
                    if any(st.get(r) is not None and (f.entry, st[r][0]) in self._device_kinds for st in ins):
                        self._device_kinds.add((f.entry, kind))
        return new

    def _step(self, regs: dict[int, Val], ins: Instr, f: Function, record: bool = False) -> None:
        if ins.mem_width and record:
            base = regs.get(ins.rs1) if ins.rs1 else ("abs", 0, 0)
            if base is None:
                rng = None
            elif base[0] == "obj":
                rng = self._object_access(base[1] + ins.imm)
            else:
                rng = MemRange(base[0], base[1] + ins.imm, base[2] + ins.imm + ins.mem_width)
            key = (f.entry, ins.addr)
            if key in self._access and self._access[key] is not None and rng is not None:
                old = self._access[key]
                rng = MemRange(old.base, min(old.lo, rng.lo), max(old.hi, rng.hi)) if old.base == rng.base else None
            elif key in self._access and self._access[key] is None:
                rng = None
            self._access[key] = rng
        if ins.cls is InstrClass.ECALL:
            # The environment (SBI, a kernel) returns its results in a0/a1.
            for r in (10, 11):
                kind = ("d", ins.addr, r)
                for q in [q for q, x in regs.items() if x is not None and x[0] == kind]:
                    del regs[q]
                regs[r] = (kind, 0, 0)
            return
        if not ins.writes:
            return

        def get(r: int | None) -> Val:
            if r is None or r == 0:
                return ("abs", 0, 0)
            return regs.get(r)

        m = ins.mnemonic
        v: Val = None
        hull: tuple[int, int] | None = None
        root: int | None = None
        operands: tuple[int, int] | None = None
        a = get(ins.rs1)
        b = get(ins.rs2) if ins.rs2 is not None else None
        if m == "lui":
            v = _const(ins.imm)
        elif m == "auipc":
            v = _const(ins.addr + ins.imm)
        elif m == "addi" and a is not None and a[0] == "obj":
            v = ("obj", a[1] + ins.imm, a[1] + ins.imm)
        elif m in ("addi", "addiw"):
            if a is not None and a[0] != "obj":
                v = (a[0], a[1] + ins.imm, a[2] + ins.imm)
                if m == "addiw" and not (a[0] == "abs" and -(1 << 31) <= v[1] and v[2] < (1 << 31)):
                    v = None
        elif m in ("add", "addw"):
            if m == "add" and ((a is not None and a[0] == "obj") or (b is not None and b[0] == "obj")):
                o, other = (a, b) if a is not None and a[0] == "obj" else (b, a)
                if other is None:
                    v = o
                elif other[0] == "abs":
                    v = ("obj", o[1] + other[1], o[1] + other[1])
            elif m == "add" and (a is None) != (b is None) and ins.rs2 is not None:
                s_ = a if b is None else b
                if is_symbolic(s_[0]) and s_[0][0] == "a" and s_[1] == s_[2]:
                    root = s_[0][1]         # an argument plus an index of no known value
                    operands = (s_[1], ins.rs2 if b is None else ins.rs1)
            elif a is not None and b is not None:
                if a[0] == "abs" and b[0] == "abs":
                    v = ("abs", a[1] + b[1], a[2] + b[2])
                    if m == "add" and v[2] - v[1] > SYMBOLIC_WINDOW and min(a[2] - a[1], b[2] - b[1]) <= SYMBOLIC_WINDOW:
                        # An address plus a wide index (an array element):
                        # named by this instruction, so that accesses
                        # through it are related; ``range`` still gives
                        # the whole interval.
                        hull = (v[1], v[2])
                        v = None
                elif a[0] == "sp" and b[0] == "abs":
                    v = ("sp", a[1] + b[1], a[2] + b[2])
                elif b[0] == "sp" and a[0] == "abs":
                    v = ("sp", a[1] + b[1], a[2] + b[2])
                elif m == "add" and (is_symbolic(a[0]) or is_symbolic(b[0])):
                    # base + an index of small range stays relative to the
                    # base; a wide index makes a new unknown value instead
                    # (named by this instruction below), which keeps
                    # accesses through it at fixed offsets of each other.
                    s_, o_ = (a, b) if is_symbolic(a[0]) else (b, a)
                    if o_[0] == "abs" and o_[2] - o_[1] <= SYMBOLIC_WINDOW:
                        v = (s_[0], s_[1] + o_[1], s_[2] + o_[2])
                    elif o_[0] == "abs" and s_[0][0] == "a" and s_[1] == s_[2]:
                        root = s_[0][1]     # an argument plus a wide index
                        operands = (s_[1], ins.rs2 if s_ is a else ins.rs1)
                if m == "addw" and v is not None and not (v[0] == "abs" and -(1 << 31) <= v[1] and v[2] < (1 << 31)):
                    v = None
        elif m == "sub":
            if a is not None and a[0] == "obj":
                v = ("obj", a[1] - b[1], a[1] - b[1]) if b is not None and b[0] == "abs" and b[1] == b[2] else a
            elif a is not None and b is not None and b[0] == "abs" and a[0] != "obj":
                v = (a[0], a[1] - b[2], a[2] - b[1])
            elif a is not None and b is not None and a[0] == b[0] and is_symbolic(a[0]):
                v = ("abs", a[1] - b[2], a[2] - b[1])     # two offsets from one base
        elif m in ("slli", "slliw"):
            lim = 1 << max(0, (62 if m == "slli" else 31) - ins.imm)
            if a is not None and a[0] == "abs" and -lim <= a[1] and a[2] < lim:
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
        if v is None and ins.rd and ins.rd < 32:
            # A value the intervals cannot express is named by the
            # instruction that defines it.  A register still holding an
            # older value of the same definition no longer equals it.
            kind = ("d", ins.addr)
            for r in [r for r, x in regs.items() if x is not None and x[0] == kind]:
                del regs[r]
            v = (kind, 0, 0)
            if self._defines_device_pointer(ins, a, b, f):
                self._device_kinds.add((f.entry, kind))
            if hull is not None:
                self._hull[(f.entry, kind)] = hull
            if root is not None:
                self._derived[(f.entry, kind)] = root
                self._operands[(f.entry, kind)] = operands
            else:
                self._derived.pop((f.entry, kind), None)
                self._operands.pop((f.entry, kind), None)
            if m == "add" and a is not None and b is not None:
                self._sums[(f.entry, kind)] = (a, b)
            else:
                self._sums.pop((f.entry, kind), None)
        for w in ins.writes:
            if w >= 32:
                continue
            if w == ins.rd and v is not None:
                regs[w] = v
            else:
                regs.pop(w, None)

    def _defines_device_pointer(self, ins: Instr, a: Val, b: Val, f: Function) -> bool:
        """Whether the new unknown value ``ins`` defines may be the address
        of a device register: it is loaded from a pointer variable whose
        DWARF type points to ``volatile`` data, or computed from such a
        value."""
        if ins.cls is InstrClass.LOAD:
            if a is None or a[0] != "abs" or not self._device_slots:
                return False
            lo, hi = (a[1] + ins.imm) & MASK64, (a[2] + ins.imm + ins.mem_width) & MASK64
            return any(s < hi and lo < e for s, e in self._device_slots)
        return any(x is not None and (f.entry, x[0]) in self._device_kinds for x in (a, b))


def device_pointer_variables(image) -> list[tuple[int, int]] | None:
    """Address ranges of the file-scope pointer variables whose DWARF type
    points to ``volatile`` data: the C idiom for device registers (Kairos'
    ``uart`` and ``plic``).  A value loaded from one of them may address a
    device, which is never cached; the symbolic cache analysis leaves such
    values alone.  None without (readable) DWARF: then no pointer is known
    not to address a device."""
    elf = getattr(image, "_elf", None)
    if elf is None or not elf.has_dwarf_info():
        return None
    out: list[tuple[int, int]] = []
    try:
        dwarf = elf.get_dwarf_info()
        for cu in dwarf.iter_CUs():
            for die in cu.get_top_DIE().iter_children():
                if die.tag != "DW_TAG_variable" or "DW_AT_location" not in die.attributes:
                    continue
                loc = die.attributes["DW_AT_location"]
                if loc.form != "DW_FORM_exprloc" or not loc.value or loc.value[0] != 0x03:  # DW_OP_addr
                    continue
                addr = int.from_bytes(bytes(loc.value[1:9]), "little")
                if _points_to_volatile(die):
                    out.append((addr, addr + 8))
    except Exception:  # unreadable DWARF: no pointer is known to be memory
        return None
    return out


def _points_to_volatile(die) -> bool:
    """Whether the type of ``die`` is (an array of, a typedef of) a pointer
    whose target type is volatile-qualified somewhere along its chain."""
    t = die.get_DIE_from_attribute("DW_AT_type") if "DW_AT_type" in die.attributes else None
    seen_pointer = False
    for _ in range(16):
        if t is None:
            return False
        if seen_pointer and t.tag == "DW_TAG_volatile_type":
            return True
        if t.tag == "DW_TAG_pointer_type":
            if seen_pointer:
                return False
            seen_pointer = True
        elif t.tag not in ("DW_TAG_typedef", "DW_TAG_const_type", "DW_TAG_volatile_type",
                           "DW_TAG_array_type", "DW_TAG_restrict_type"):
            return False
        t = t.get_DIE_from_attribute("DW_AT_type") if "DW_AT_type" in t.attributes else None
    return False
