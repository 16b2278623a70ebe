"""Loop bounds: automatic for simple counted loops, otherwise annotations.

Automatic bounds (``auto_bound``) work on one loop of one function:

1. *Exit tests*: blocks of the loop (not inside an inner loop) that end in a
   conditional branch with one successor outside the loop and that dominate
   every latch, so they run in every completed iteration.
2. *Register evolution*: a register with no definition in the loop is
   invariant; a register with exactly one definition, in a block that is not
   in an inner loop and dominates every latch, whose new value depends only
   on itself and invariants (``addi i, i, 4``, ``addiw``, ``srli`` …), is an
   induction variable.  Calls in the loop clobber caller-saved registers.
3. *Initial values*: constant propagation (``cfg.constant_registers``) at
   the end of every entry edge's source block; all entry edges must agree.
   Loads in the exit test are allowed from read-only data and from symbols
   listed in the annotation file's ``[constants]``.
4. The exit test is then evaluated concretely, iteration by iteration, with
   exact RV64 semantics (wrap-around, 32-bit ``w`` forms, signed/unsigned
   compares) until it leaves the loop; the header bound is that iteration
   number + 1.  The smallest bound over all exit tests is used.

5. *SMT*: bounded model checking of the loop on the binary
   (``smtloops``, z3), with the constants at loop entry and the guards of
   the function before the loop.

Annotations come next (see ``annotations``): a ``parameter`` annotation lets
the solver bound the loop from a fact about the value it starts from
("symbolic + parameter"); every ``max`` is checked by the solver: one it
refutes is an error, one it cannot decide is *trusted*.  A loop without any
bound raises a ``WcetError`` naming the function, loop address and source line.

``BOUND_PROVIDERS`` is a list of further callables
``provider(program, forest, loop) -> LoopBound | None`` tried after the
built-in methods and before giving up.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable

from kairos.wcet import cfg as cfgmod
from kairos.wcet import smtloops
from kairos.wcet.annotations import Annotations, context_matches
from kairos.wcet.cfg import CALLER_SAVED, MASK64, Program, Term, _apply, _c, _sx, sym_step
from kairos.wcet.errors import AnnotationError, WcetError
from kairos.wcet.isa import InstrClass
from kairos.wcet.loops import Loop, LoopForest

#: value ranges of globals from their initial value and the program's own
#: stores: off, unsound while boot code is outside the analysed program
GLOBAL_RANGES = False

MAX_SIMULATED_ITERATIONS = 1 << 20
#: Most call sites of one function ``call_site_bound`` analyses one by one.
MAX_CALL_SITES = 32


@dataclass(frozen=True)
class LoopBound:
    max: int          # header executions per loop entry
    source: str       # "auto: …" or the annotation's origin
    total: int | None = None   # header executions per entry of the *enclosing* loop (triangular nests)
    kind: str = "automatic"    # "automatic", "symbolic + parameter", "preemption" or "trusted"

#: Bound kinds that count as found by the analyser (coverage in ``--loops``).
PROVEN_KINDS = ("automatic", "symbolic + parameter", "preemption")


BoundProvider = Callable[[Program, LoopForest, Loop], "LoopBound | None"]
#: Extra automatic bound providers (e.g. z3-based); tried in order.
BOUND_PROVIDERS: list[BoundProvider] = []


class _Cannot(Exception):
    pass


class _NoProgress(_Cannot):
    """An interpreted loop whose state repeats: its exit depends on unknown values."""


def _eval(e: tuple, env: dict, load) -> int:
    k = e[0]
    if k == "c":
        return e[1]
    if k == "r":
        if e[1] not in env:
            raise _Cannot(f"register {e[1]} is neither constant nor an induction variable")
        return env[e[1]] & MASK64
    if k == "?":
        raise _Cannot("unknown value")
    if k == "ld":
        return load(_eval(e[3], env, load), e[1], e[2]) & MASK64
    if k == "sx32":
        return _sx(_eval(e[1], env, load), 32) & MASK64
    return _apply(k, _eval(e[1], env, load), _eval(e[2], env, load)) & MASK64


def _branch_taken(mn: str, a: int, b: int) -> bool:
    sa, sb = _sx(a, 64), _sx(b, 64)
    return {"beq": a == b, "bne": a != b, "blt": sa < sb, "bge": sa >= sb,
            "bltu": a < b, "bgeu": a >= b}[mn]


# Symbolic-base values for the counted-loop method: (base, offset), base None
# for a plain 64-bit constant, else the register whose value at *function
# entry* the value is relative to (unknown but fixed, e.g. a pointer
# argument or sp).  Comparisons of two values with the same base compare the
# offsets (no wrap-around across the address space); anything that would need
# the base's actual value is _Cannot.

SymVal = tuple


def _sv_eval(e: tuple, env: dict, load) -> SymVal:
    k = e[0]
    if k == "c":
        return (None, e[1])
    if k == "r":
        if e[1] not in env:
            raise _Cannot(f"register {e[1]} is neither known nor an induction variable")
        return env[e[1]]
    if k == "?":
        raise _Cannot("unknown value")
    if k == "ld":
        a = _sv_eval(e[3], env, load)
        if a[0] is not None:
            raise _Cannot("load from a symbolic address")
        return (None, load(a[1], e[1], e[2]) & MASK64)
    if k == "sx32":
        a = _sv_eval(e[1], env, load)
        if a[0] is not None:
            raise _Cannot("32-bit operation on a symbolic value")
        return (None, _sx(a[1], 32) & MASK64)
    a = _sv_eval(e[1], env, load)
    b = _sv_eval(e[2], env, load)
    if k == "add":
        if a[0] is not None and b[0] is not None:
            raise _Cannot("sum of two symbolic values")
        base = a[0] if a[0] is not None else b[0]
        off = a[1] + b[1]
        return (base, off & MASK64 if base is None else _sx(off, 64))
    if k == "sub":
        if b[0] is None:
            off = a[1] - b[1]
            return (a[0], off & MASK64 if a[0] is None else _sx(off, 64))
        if a[0] == b[0]:
            return (None, (a[1] - b[1]) & MASK64)
        raise _Cannot("difference of unrelated symbolic values")
    if a[0] is not None or b[0] is not None:
        raise _Cannot(f"{k} on a symbolic value")
    return (None, _apply(k, a[1], b[1]) & MASK64)


def _sv_taken(mn: str, a: SymVal, b: SymVal) -> bool:
    if a[0] is None and b[0] is None:
        return _branch_taken(mn, a[1], b[1])
    if a[0] != b[0]:
        raise _Cannot("comparison of a symbolic value with an unrelated one")
    x, y = _sx(a[1], 64), _sx(b[1], 64)
    return {"beq": x == y, "bne": x != y, "blt": x < y, "bge": x >= y, "bltu": x < y, "bgeu": x >= y}[mn]


def symbolic_registers(func, image, seed: dict[int, int] | None = None) -> dict[int, dict[int, SymVal]]:
    """Like ``cfg.constant_registers`` but every register unknown at function
    entry is its own symbolic base: values are (base, offset) pairs."""
    init: dict[int, SymVal] = {r: (r, 0) for r in range(1, 32)}
    for r, v in (seed or {}).items():
        init[r] = (None, v & MASK64)
    if image.gp is not None:
        init[3] = (None, image.gp & MASK64)
    state_in: dict[int, dict[int, SymVal]] = {func.entry: init}
    order = cfgmod._rpo(func.blocks, func.entry)
    changed, rounds = True, 0
    while changed and rounds < 50:
        changed = False
        rounds += 1
        for bs in order:
            if bs not in state_in:
                continue
            out = symbolic_out(func, bs, state_in[bs], image)
            for t in func.blocks[bs].succs:
                old = state_in.get(t)
                new = dict(out) if old is None else {r: v for r, v in old.items() if out.get(r) == v}
                if new != old:
                    state_in[t] = new
                    changed = True
    return state_in


def symbolic_out(func, bs: int, st: dict[int, SymVal], image, clobber: bool = True) -> dict[int, SymVal]:
    blk = func.blocks[bs]
    regs: dict[int, tuple] = {}
    for ins in blk.instrs:
        sym_step(regs, ins)

    def load(addr: int, width: int, signed: bool) -> int:
        if not image.is_readonly(addr):
            raise _Cannot("load from writable memory")
        return image.read_int(addr, width, signed)

    out = dict(st)
    for r, e in regs.items():
        if r >= 32 or r == 0:
            continue
        try:
            out[r] = _sv_eval(e, st, load)
        except (_Cannot, WcetError):
            out.pop(r, None)
    if blk.kind is Term.CALL and clobber:
        for r in CALLER_SAVED:
            out.pop(r, None)
    return out


#: Calls followed when summarising what a call may store (``store_ranges``).
STORE_SUMMARY_DEPTH = 6
#: Most separate byte ranges a summary keeps; more are merged into their hull.
STORE_SUMMARY_RANGES = 16
_STORE_CLASSES = (InstrClass.STORE, InstrClass.FP_STORE, InstrClass.AMO, InstrClass.SC)


def store_ranges(program, entry: int, args: dict[int, int], depth: int = 0,
                 memo: dict | None = None) -> tuple[tuple[int, int], ...] | None:
    """The byte ranges ``[lo, hi)`` that a call of the function at ``entry``,
    with the argument registers ``args`` (a0-a7 holding known constants),
    may store to, with everything it calls; its own stack (and its callees'),
    which lies below the caller's ``sp`` by the calling convention, is left
    out.  None when some store's address is not a known constant or a
    negative offset from the function's entry ``sp`` (a pointer of unknown
    value, a loaded address, an argument not known in this call), or the
    function makes a system call.  A loop query uses it to keep, across the
    call, the memory the callee cannot write (a loop counter in a global,
    the usual shape of the WCET benchmark suites' loops around calls)."""
    memo = {} if memo is None else memo
    key = (entry, tuple(sorted(args.items())))
    if key in memo:
        return memo[key]
    memo[key] = None                       # no recursion: a cycle gives None
    func = program.functions.get(entry)
    if func is None or depth > STORE_SUMMARY_DEPTH:
        return None
    image = program.image

    def load(addr: int, width: int, signed: bool) -> int:
        if not image.is_readonly(addr):
            raise _Cannot("load from writable memory")
        return image.read_int(addr, width, signed)

    state_in = symbolic_registers(func, image, {r: v for r, v in args.items() if 10 <= r <= 17})
    callees = dict(func.calls)
    ranges: list[tuple[int, int]] = []
    for bs, blk in func.blocks.items():
        st = state_in.get(bs)
        if st is None:
            continue                       # not reached from the entry
        if blk.kind in (Term.ECALL, Term.TAILCALL):
            return None
        regs: dict[int, tuple] = {}
        for ins in blk.instrs:
            if ins.cls in _STORE_CLASSES:
                base = regs.get(ins.rs1, ("r", ins.rs1)) if ins.rs1 else _c(0)
                width = ins.mem_width or 8
                try:
                    where = _sv_eval(cfgmod._binop("add", base, _c(ins.imm or 0)), st, load)
                except (_Cannot, WcetError):
                    return None
                if where[0] is None:
                    ranges.append((where[1], where[1] + width))
                elif where[0] == 2 and where[1] + width <= 0:
                    pass                   # the function's own frame, below the caller's sp
                else:
                    return None
            sym_step(regs, ins)
        if blk.kind is Term.CALL:
            callee = callees.get(bs)
            if callee is None:
                return None
            out = symbolic_out(func, bs, st, image, clobber=False)
            inner = {r: v[1] for r, v in out.items() if 10 <= r <= 17 and v[0] is None}
            sub = store_ranges(program, callee, inner, depth + 1, memo)
            if sub is None:
                return None
            ranges.extend(sub)
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    while len(merged) > STORE_SUMMARY_RANGES:
        # merge the two neighbours closest together (forgetting more is sound)
        i = min(range(len(merged) - 1), key=lambda k: merged[k + 1][0] - merged[k][1])
        merged[i:i + 2] = [(merged[i][0], merged[i + 1][1])]
    memo[key] = tuple(merged)
    return memo[key]


class BoundAnalysis:
    """Per-program cache of constant-propagation results and automatic bounds."""

    def __init__(self, program: Program, annotations: Annotations | None = None,
                 preemption_max: int = 1) -> None:
        #: header executions per entry of a loop that polls a preemption point
        #: in every iteration: 1 when the interrupt is pending from kernel entry
        #: (whole-entry analysis); 2 when polls end the path (per-region
        #: analysis: the rest of one iteration, then the next up to its poll)
        self.preemption_max = preemption_max
        self.program = program
        self.image = program.image
        self.ann = annotations or Annotations()
        self._consts: dict[int, dict[int, dict[int, int]]] = {}
        self._auto: dict[tuple[int, int], LoopBound | None] = {}
        self._cheap: dict[tuple[int, int], LoopBound | None] = {}
        self._ctx_consts: dict[tuple[int, tuple[int, ...]], dict[int, dict[int, int]]] = {}
        self._seed_consts: dict[tuple, dict[int, dict[int, int]]] = {}
        self._auto_ctx: dict[tuple[int, int, tuple[int, ...]], LoopBound | None] = {}
        self._absexec_cache: dict[tuple, dict[int, int]] = {}
        self._ann_match_cache: dict[tuple, bool] = {}
        self._sp_seed: int | None = None
        self._sym_cache: dict[tuple, tuple] = {}
        self._store_memo: dict = {}
        self._line_targets: dict[tuple, set[int]] = {}
        self._const_addrs: dict[int, int] = {}
        for name, val in self.ann.constants.items():
            self._const_addrs[self.image.symbol(name).addr] = val
        self._verdicts: dict[tuple, str] = {}
        #: the smallest bound a "proved" check found (<= the annotation's max)
        self._proved: dict[tuple, int] = {}
        self._param_bounds: dict[tuple, LoopBound | None] = {}
        self._site_bounds: dict[tuple, LoopBound | None] = {}
        self._site_consts: dict[tuple, dict] = {}
        self._source_text = None
        self._source_bounds = None
        self._pragma_anns: dict[tuple, object] = {}
        #: use the SMT method (``--no-smt`` switches it off for comparison)
        self.smt = True

    # -- memory for loads in exit tests ----------------------------------------
    def _load(self, addr: int, width: int, signed: bool) -> int:
        if addr in self._const_addrs:
            v = self._const_addrs[addr] & ((1 << (8 * width)) - 1)
            return _sx(v, 8 * width) if signed else v
        if not self.image.is_readonly(addr):
            raise _Cannot(f"exit test loads from writable memory at {addr:#x}")
        return self.image.read_int(addr, width, signed)

    def consts_in(self, func) -> dict[int, dict[int, int]]:
        c = self._consts.get((id(func), self._sp_seed))
        if c is None:
            seed = {2: self._sp_seed} if self._sp_seed is not None else None
            c = cfgmod.constant_registers(func.blocks, func.entry, self.image, seed)
            self._consts[(id(func), self._sp_seed)] = c
        return c

    def _sym_in(self, func, cin: dict | None) -> dict[int, dict[int, SymVal]]:
        """Symbolic-base register values per block; ``cin`` (constants per
        block from a calling context) seeds the entry."""
        key = (id(func), id(cin) if cin is not None else 0)
        c = self._sym_cache.get(key)
        if c is None:
            seed = (cin or {}).get(func.entry, {}) if cin is not None else {}
            seed = {r: v for r, v in seed.items() if r != 3}
            c = symbolic_registers(func, self.image, seed)
            self._sym_cache[key] = (c, cin)   # keep cin alive: its id is the key
            return c
        return c[0]

    def consts_in_context(self, func, ctx: tuple[int, ...]) -> dict[int, dict[int, int]]:
        """Constant propagation in ``func`` seeded with the constant argument
        registers at the call site ending ``ctx`` (recursively along ctx)."""
        if not ctx:
            return self.consts_in(func)
        key = (id(func), ctx, self._sp_seed)
        c = self._ctx_consts.get(key)
        if c is not None:
            return c
        site = ctx[-1]
        caller = None
        for f in self.program.functions.values():
            for bs, callee in f.calls:
                if callee == func.entry and f.blocks[bs].last.addr == site:
                    caller, cblock = f, bs
                    break
            if caller is not None:
                break
        seed: dict[int, int] = {2: self._sp_seed} if self._sp_seed is not None and ctx[0] < 0 \
            and len(ctx) == 1 else {}
        if caller is not None:
            cin = self.consts_in_context(caller, ctx[:-1])
            out = self._out_consts(caller, cblock, cin, clobber=False)
            seed = {r: v for r, v in out.items() if r in (2, 3, 4) or 10 <= r <= 17}
        # contexts that give the function the same constants share one
        # result object: the caches of the bound methods are keyed by its id
        skey = (id(func), tuple(sorted(seed.items())))
        c = self._seed_consts.get(skey)
        if c is None:
            c = self._seed_consts[skey] = cfgmod.constant_registers(func.blocks, func.entry, self.image, seed)
        self._ctx_consts[key] = c
        return c

    def _out_consts(self, func, block_start: int, cin: dict | None = None, clobber: bool = True) -> dict[int, int]:
        blk = func.blocks[block_start]
        cin = self.consts_in(func) if cin is None else cin
        regs = {r: _c(v) for r, v in cin.get(block_start, {}).items()}
        for ins in blk.instrs:
            sym_step(regs, ins)
        out = {r: e[1] for r, e in regs.items() if e[0] == "c"}
        if blk.kind is Term.CALL and clobber:
            for r in CALLER_SAVED:
                out.pop(r, None)
        return out

    # -- automatic bound ---------------------------------------------------------
    def auto_bound(self, forest: LoopForest, loop: Loop) -> LoopBound | None:
        """Context-free automatic bound: the methods without a solver, then
        the solver (``smtloops``), then ``BOUND_PROVIDERS``."""
        key = (id(loop.func), loop.header)
        if key not in self._auto:
            b = self.cheap_bound(forest, loop)
            if b is None and self.smt:
                b = self._smt_bound(forest, loop)
            if b is None:
                for prov in BOUND_PROVIDERS:
                    b = prov(self.program, forest, loop)
                    if b is not None:
                        break
            self._auto[key] = b
        return self._auto[key]

    def cheap_bound(self, forest: LoopForest, loop: Loop) -> LoopBound | None:
        """Context-free bound of the methods that need no solver (counted
        loops, nests, abstract execution)."""
        key = (id(loop.func), loop.header)
        if key in self._auto and self._auto[key] is not None:
            return self._auto[key]
        if key not in self._cheap:
            try:
                self._cheap[key] = self._auto_bound(forest, loop)
            except _Cannot:
                self._cheap[key] = None
        return self._cheap[key]

    def cheap_bound_in_context(self, forest: LoopForest, loop: Loop, ctx: tuple[int, ...]) -> LoopBound | None:
        """``cheap_bound``, else the same methods with the constant arguments
        along the call string (no solver)."""
        b = self.cheap_bound(forest, loop)
        if b is not None or not ctx:
            return b
        cin = self.consts_in_context(loop.func, ctx)
        # by the constants, not the call string: contexts with the same
        # constants share the answer (``consts_in_context`` shares the object)
        key = (id(loop.func), loop.header, id(cin))
        if key not in self._auto_ctx:
            try:
                r = self._auto_bound(forest, loop, cin)
                if r is not None:
                    r = LoopBound(r.max, r.source + " (constant arguments in this context)")
                self._auto_ctx[key] = r
            except _Cannot:
                self._auto_ctx[key] = None
        return self._auto_ctx[key]

    def call_site_bound(self, forest: LoopForest, loop: Loop) -> LoopBound | None:
        """Largest bound over the call sites of the loop's function, each
        with the constant arguments there (constant propagation in the
        caller, context-free): a fact of the call sites for a function whose
        callers share one context, such as ``kprintf`` walking a format
        string in read-only data.  None unless every site gives a bound.  An
        entry of the program has no call site for every way in; a function
        with more than ``MAX_CALL_SITES`` sites is not tried."""
        func = loop.func
        key = (id(func), loop.header)
        if key in self._site_bounds:
            return self._site_bounds[key]
        res = None
        sites = [(f, bs) for f in self.program.functions.values() for bs, callee in f.calls
                 if callee == func.entry]
        if sites and len(sites) <= MAX_CALL_SITES and func.entry not in self.program.entries.values() \
                and not loop.irreducible:
            best: LoopBound | None = None
            for f, bs in sites:
                cin = self._site_consts.get((f.entry, bs))
                if cin is None:
                    out = self._out_consts(f, bs, clobber=False)
                    seed = {r: v for r, v in out.items() if r in (2, 3, 4) or 10 <= r <= 17}
                    cin = cfgmod.constant_registers(func.blocks, func.entry, self.image, seed, fold_readonly=True)
                    self._site_consts[(f.entry, bs)] = cin     # alive: caches are keyed by its id
                try:
                    b = self._auto_bound(forest, loop, cin)
                except _Cannot:
                    b = None
                if b is None:
                    best = None
                    break
                if best is None or b.max > best.max:
                    best = b
            if best is not None:
                res = LoopBound(best.max, best.source + f" (constant arguments at each of {len(sites)} call "
                                                       f"site(s), the largest bound)")
        self._site_bounds[key] = res
        return res

    def auto_bound_in_context(self, forest: LoopForest, loop: Loop, ctx: tuple[int, ...]) -> LoopBound | None:
        """Automatic bound using constant arguments along the call string:
        the cheap methods (in this context) before the solver."""
        b = self.cheap_bound_in_context(forest, loop, ctx)
        return b if b is not None else self.auto_bound(forest, loop)

    def _auto_bound(self, forest: LoopForest, loop: Loop, cin: dict | None = None) -> LoopBound | None:
        """The methods without a solver, context-free or with the constants
        ``cin`` of a calling context."""
        if loop.irreducible:
            return None          # several entry blocks: annotate
        b = self._auto_bound_flat(forest, loop, cin)
        if b is None and loop.parent is not None:
            try:
                b = self._nested_bound(forest, loop, cin)
            except _Cannot:
                b = None
        if b is None:
            b = self._absexec_bound(forest, loop, cin)
        return b

    # -- SMT (smtloops) ------------------------------------------------------------
    def _smt_query(self, forest: LoopForest, loop: Loop) -> tuple[smtloops.LoopQuery, tuple]:
        entry: dict[int, int] | None = None
        for p, _h in loop.entry_edges:
            out = self._out_consts(loop.func, p)
            entry = out if entry is None else {r: v for r, v in entry.items() if out.get(r) == v}
        entry = {r: v for r, v in (entry or {}).items() if r != 0}
        known = self._other_loop_bounds(forest, loop)
        ranges = self._global_ranges(loop.func)
        writes = self._call_writes(loop.func)
        q = smtloops.LoopQuery(self.program, forest, loop, const_memory=self._const_addrs, entry_consts=entry,
                               known_bounds=known, global_ranges=ranges, call_writes=writes)
        key = (smtloops.code_key(self.program, loop), tuple(sorted(entry.items())),
               tuple(sorted(self._const_addrs.items())), tuple(sorted(known.items())),
               tuple(sorted(ranges.items())), tuple(sorted(writes.items())))
        return q, key

    def _call_writes(self, func) -> dict[int, tuple[tuple[int, int], ...] | None]:
        """For each call of ``func``: the byte ranges its callee may store to
        (``store_ranges``, with the argument registers known at the call in
        every context), or None."""
        key = ("writes", id(func))
        got = self._sym_cache.get(key)
        if got is None:
            writes: dict[int, tuple[tuple[int, int], ...] | None] = {}
            for bs, callee in func.calls:
                args = {r: v for r, v in self._out_consts(func, bs, clobber=False).items() if 10 <= r <= 17}
                writes[bs] = store_ranges(self.program, callee, args, memo=self._store_memo)
            got = (writes, func)
            self._sym_cache[key] = got
        return got[0]

    def _global_ranges(self, func) -> dict[tuple[int, int], tuple[int, int]]:
        """Value ranges of the global words ``func`` loads at constant
        addresses, where the whole program only stores constants to them
        (a whole-program fact, under the memory-model assumption of
        docs/wcet.md "Infeasible paths")."""
        # Off: a global's initial value is only what it holds if nothing
        # outside the analysed entries writes it (boot code, a loader, a
        # device), which the program's own stores cannot show: the latency
        # test's parameter global `sources` was taken to be 0.
        if not GLOBAL_RANGES:
            return {}
        facts = self.__dict__.get("_facts")
        if facts is None:
            from kairos.wcet.infeasible import ProgramFacts
            facts = self.__dict__["_facts"] = ProgramFacts(self.program)
        out = {}
        for a in sorted(facts.loads.get(func.entry, ())):
            for w in (1, 2, 4, 8):
                r = facts.value_range(a, w)
                if r is not None:
                    out[(a, w)] = r
        return out

    def _other_loop_bounds(self, forest: LoopForest, loop: Loop) -> dict[int, int]:
        """Proven (automatic) bounds of the function's other loops that do not
        contain ``loop``, for the solver to unroll them: what an earlier loop
        leaves in a register then reaches this one."""
        out: dict[int, int] = {}
        for lp in forest.loops:
            if lp is loop or loop.header in lp.blocks or lp.irreducible or lp.is_infinite:
                continue
            # a bound already found, else only the counted-loop method (no
            # solver: two loops' queries must not wait for each other)
            key = (id(lp.func), lp.header)
            b = self._auto.get(key)
            if b is None:
                try:
                    b = self._auto_bound_flat(forest, lp)
                except _Cannot:
                    b = None
            if b is not None:
                out[lp.header] = b.max
        return out

    def _smt_bound(self, forest: LoopForest, loop: Loop) -> LoopBound | None:
        if loop.irreducible or loop.is_infinite:
            return None
        q, key = self._smt_query(forest, loop)
        n = smtloops.cached(key + ("bound",), q.bound, q)
        return LoopBound(n, "auto: SMT (z3 bounded model checking of the binary)") if n else None

    def _source(self):
        if self._source_text is None:
            from kairos.wcet.anchors import SourceText
            dirs = [os.path.dirname(os.path.abspath(p)) for p in self.ann.paths]
            self._source_text = SourceText(self.image, dirs)
        return self._source_text

    # -- loopbound pragmas in the C sources (sourcebounds) -------------------------
    def _pragmas(self):
        if self._source_bounds is None:
            from kairos.wcet.anchors import SourceText
            from kairos.wcet.sourcebounds import SourceBounds
            dirs = [os.path.dirname(os.path.abspath(p)) for p in self.ann.paths]
            self._source_bounds = SourceBounds(self.image, SourceText(self.image, dirs, self.ann.source_dirs))
        return self._source_bounds

    def _pragma_annotation(self, forest: LoopForest, loop: Loop):
        """The loopbound pragma of the loop's source statement as an
        annotation (one object per pragma: the solver's verdicts are cached
        by it), or None."""
        if not self.ann.source_bounds:
            return None
        p = self._pragmas().match(forest, loop).pragma
        if p is None:
            return None
        la = self._pragma_anns.get((p.file, p.line))
        if la is None:
            from kairos.wcet.annotations import LoopAnnotation
            # max body iterations per entry: the header runs at most once more
            la = LoopAnnotation(max=p.max + 1, origin=f"pragma {p.place} (loopbound min {p.min} max {p.max})",
                                path=p.file, line=p.line, pragma=p.place, used=True)
            self._pragma_anns[(p.file, p.line)] = la
        return la

    def pragma_reason(self, forest: LoopForest, loop: Loop) -> str:
        """Why no loopbound pragma bounds the loop ('' when one does, or
        when pragmas are not read)."""
        if not self.ann.source_bounds:
            return ""
        m = self._pragmas().match(forest, loop)
        return "" if m.pragma is not None else m.why

    def _parameter_bound(self, forest: LoopForest, loop: Loop, la) -> LoopBound | None:
        """Bound from the fact "the value the loop starts from <= parameter"."""
        pkey = (id(la), id(loop.func), loop.header)
        if pkey in self._param_bounds:
            return self._param_bounds[pkey]
        res = None
        if self.smt and not loop.irreducible:
            q, key = self._smt_query(forest, loop)
            src = self._source()

            def accept(reg: int) -> bool:
                if la.of is None:
                    return True
                for a in q.defined_by(reg):
                    li = self.image.line_of(a)
                    t = src.line(*li) if li else None
                    if t is not None and re.search(r"\b" + re.escape(la.of) + r"\b", t):
                        return True
                return False

            # the registers `of` names come from DWARF and the source text,
            # which the code bytes do not cover: they are part of the key
            named = tuple(r for r in q.candidates() if accept(r))
            least = la.least
            ans = smtloops.cached(key + ("parameter", la.parameter_value, named) + ((least,) if least else ()),
                                  lambda: q.parameter_bound(la.parameter_value, lambda r: r in named, least), q)
            if ans:
                n, reg = ans
                what = la.of or f"{cfgmod.reg_name(reg)} at loop entry"
                c = n - la.parameter_value
                if q.walk_field(reg) is not None:
                    how = f"list from {what} of <= {la.parameter} nodes: {n}"
                else:
                    how = f"<= {what} {'+' if c >= 0 else '-'} {abs(c)}"
                given = f" and {what} >= {least}" if least else ""
                res = LoopBound(n, f"{la.origin}: {how} with {la.parameter} = {la.parameter_value}{given} (z3)",
                                kind="symbolic + parameter")
        self._param_bounds[pkey] = res
        return res

    def _verdict(self, forest: LoopForest, loop: Loop, la, auto: LoopBound | None) -> str:
        """Check an annotation's ``max`` with the solver: proved, refuted or
        unknown; a refuted one is an error naming the file and the loop."""
        vkey = (id(la), id(loop.func), loop.header)
        v = self._verdicts.get(vkey)
        if v is not None and v != "refuted":
            return v
        if v is not None:
            pass          # refuted: raise again (a caller may have swallowed the first error)
        elif auto is not None and auto.max <= la.max:
            v = "proved"
        elif not self.smt or loop.irreducible or loop.is_infinite:
            v = "unknown"
        else:
            q, key = self._smt_query(forest, loop)
            v, n = smtloops.cached(key + ("check", la.max), lambda: list(q.check_bound(la.max)), q)
            if v == "proved" and n is not None:
                self._proved[vkey] = n
        self._verdicts[vkey] = v
        if v == "refuted" and la.pragma is not None:
            src = self.image.source_of(loop.header)
            raise AnnotationError(f"{la.place()} max {la.max - 1} (at most {la.max} header executions per "
                                  f"entry) is refuted by the solver: every execution of the loop at "
                                  f"{loop.header:#x} in {loop.func.name} ({src}) runs its header more often")
        if v == "refuted":
            src = self.image.source_of(loop.header)
            raise AnnotationError(f"{la.place()}: "
                                  f"max = {la.max} is refuted by the solver: every execution of the loop at "
                                  f"{loop.header:#x} in {loop.func.name} ({src}) runs its header more often")
        return v

    def loop_accesses(self, forest: LoopForest, outer: Loop) -> dict[int, tuple[int, int] | None] | None:
        """Data address hull of every memory instruction of a loop nest, from a
        complete abstract execution of the nest (context-free); None if the
        nest could not be interpreted."""
        key = (id(outer.func), outer.header, 0, self._sp_seed)
        res = self._absexec_cache.get(key)
        if res is None:
            try:
                res = _absexec_bounds(self, forest, outer, None)
            except _Cannot:
                res = {}
            self._absexec_cache[key] = res
        return res.get(("mem",))

    def _absexec_bound(self, forest: LoopForest, loop: Loop, cin: dict | None) -> LoopBound | None:
        """Abstract execution of the loop nest, from the outermost enclosing
        loop that works (results cached per nest and constant context)."""
        lp: Loop | None = loop
        chain = []
        while lp is not None:
            chain.append(lp)
            lp = lp.parent
        for outer in reversed(chain):     # outermost first: inner loops then see exact outer values
            if outer.irreducible:
                continue
            key = (id(loop.func), outer.header, id(cin) if cin is not None else 0, self._sp_seed)
            res = self._absexec_cache.get(key)
            if res is None:
                try:
                    res = _absexec_bounds(self, forest, outer, cin)
                except _Cannot:
                    res = {}
                self._absexec_cache[key] = res
            if loop.header in res:
                how = "" if outer is loop else f" within the loop at {outer.header:#x}"
                tot = res.get(("total", loop.header))
                return LoopBound(res[loop.header], f"auto: abstract execution{how}", tot)
        return None

    def _nested_bound(self, forest: LoopForest, loop: Loop, cin: dict | None) -> LoopBound | None:
        """Inner loop whose start/limit depend on the enclosing loop's
        induction variables: enumerate every header-entry state of the parent
        loop and take the largest inner bound."""
        parent = loop.parent
        func = loop.func
        if len(loop.entry_edges) != 1:
            return None
        pst = self._loop_state(forest, parent, cin)
        if pst is None:
            return None
        pivs, pinv, pinit = pst
        pb = self._auto_bound(forest, parent, cin) if cin is not None else self.auto_bound(forest, parent)
        if pb is None or pb.max > 4096:
            return None
        # straight chain of blocks from the parent's header to the inner preheader
        chain = [loop.entry_edges[0][0]]
        while chain[0] != parent.header:
            preds = [q for q in func.blocks[chain[0]].preds if q in parent.blocks]
            if len(preds) != 1 or len(chain) > 8 or preds[0] in chain:
                return None
            chain.insert(0, preds[0])
        regs: dict[int, tuple] = {}
        for bs in chain:
            for ins in func.blocks[bs].instrs:
                sym_step(regs, ins)
            if func.blocks[bs].kind is Term.CALL:
                for r in CALLER_SAVED:
                    regs[r] = ("?",)
        vals = {r: pinit[r] for r in pivs}
        best = 0
        total = 0
        source = ""
        for _k in range(pb.max):
            env = {**pinv, **vals}
            init: dict[int, SymVal] = {}
            for r in range(1, 32):
                e = regs.get(r, ("r", r))
                try:
                    init[r] = _sv_eval(e, env, self._load)
                except _Cannot:
                    pass
            b = self._auto_bound_flat(forest, loop, cin, init_override=init)
            if b is None:
                return None
            total += b.max
            if b.max > best:
                best, source = b.max, b.source
            vals = {r: _sv_eval(pivs[r][2], {**env, r: vals[r]}, self._load) for r in pivs}
        return LoopBound(best, source + f" (max over {pb.max} iterations of the loop at {parent.header:#x})",
                         total)

    def _loop_state(self, forest: LoopForest, loop: Loop, cin: dict | None,
                    init_override: dict[int, int] | None = None):
        func = loop.func
        blocks = func.blocks
        if not loop.entry_edges or loop.is_infinite:
            return None
        latches = loop.latches

        def every_iteration(b: int) -> bool:
            return forest.innermost.get(b) is loop and all(forest.dominates(b, l) for l in latches)

        # definitions of registers inside the loop
        defs: dict[int, list[tuple[int, int]]] = {}
        has_call = False
        for bs in loop.blocks:
            blk = blocks[bs]
            for idx, ins in enumerate(blk.instrs):
                for w in ins.writes:
                    if w < 32:
                        defs.setdefault(w, []).append((bs, idx))
            if blk.kind in (Term.CALL, Term.TAILCALL):
                has_call = True
        # initial values at loop entry (symbolic-base values)
        init: dict[int, SymVal] | None = None
        sin = self._sym_in(func, cin)
        for p, _h in loop.entry_edges:
            out = symbolic_out(func, p, sin.get(p, {}), self.image)
            init = out if init is None else {r: v for r, v in init.items() if out.get(r) == v}
        init = init or {}
        if init_override is not None:
            init = init_override
        invariant = {r: v for r, v in init.items() if r not in defs and not (has_call and r in CALLER_SAVED)}
        ivs: dict[int, tuple[int, int, tuple]] = {}   # reg -> (def block, index, update expr)
        for r, dl in defs.items():
            if len(dl) != 1 or (has_call and r in CALLER_SAVED) or r not in init:
                continue
            bs, idx = dl[0]
            if not every_iteration(bs):
                continue
            regs: dict[int, tuple] = {}
            sym_step(regs, blocks[bs].instrs[idx])
            expr = regs.get(r, ("?",))
            used = cfgmod._uses(expr, set())
            if cfgmod._has_unknown(expr) or not used <= ({r} | set(invariant)):
                continue
            ivs[r] = (bs, idx, expr)
        return ivs, invariant, init

    def _auto_bound_flat(self, forest: LoopForest, loop: Loop, cin: dict | None = None,
                         init_override: dict[int, int] | None = None) -> LoopBound | None:
        st = self._loop_state(forest, loop, cin, init_override)
        if st is None:
            return None
        ivs, invariant, init = st
        blocks = loop.func.blocks
        latches = loop.latches

        def every_iteration(b: int) -> bool:
            return forest.innermost.get(b) is loop and all(forest.dominates(b, l) for l in latches)

        best: LoopBound | None = None
        for bs in sorted(loop.blocks):
            blk = blocks[bs]
            br = blk.last
            if br.cls is not InstrClass.BRANCH or not every_iteration(bs):
                continue
            outside = [s for s in blk.succs if s not in loop.blocks]
            if len(outside) != 1 or len(blk.succs) != 2:
                continue
            exit_taken = br.target == outside[0]
            # symbolic values of the branch operands over the block's entry regs
            regs = {}
            for ins in blk.instrs[:-1]:
                sym_step(regs, ins)
            ea = regs.get(br.rs1, ("r", br.rs1)) if br.rs1 else _c(0)
            eb = regs.get(br.rs2, ("r", br.rs2)) if br.rs2 else _c(0)
            used = cfgmod._uses(ea, set()) | cfgmod._uses(eb, set())
            if not used or not used <= (set(ivs) | set(invariant)) or not (used & set(ivs)):
                continue
            # IV values at this block's entry in iteration k: updates whose block
            # strictly dominates bs (executed earlier in the iteration) are applied
            try:
                n = self._simulate(forest, ivs, invariant, init, bs, br.mnemonic, ea, eb, exit_taken)
            except _Cannot:
                continue
            if n is not None and (best is None or n < best.max):
                names = ",".join(cfgmod.reg_name(r) for r in sorted(used & set(ivs)))
                best = LoopBound(n, f"auto: induction {names}, exit test at {br.addr:#x}")
        return best

    def _simulate(self, forest, ivs, invariant, init, bs, mn, ea, eb, exit_taken) -> int | None:
        env = dict(invariant)
        vals = {r: init[r] for r in ivs}
        before = {r for r, (dbs, _i, _e) in ivs.items() if dbs != bs and forest.dominates(dbs, bs)}

        def step(r: int) -> SymVal:
            e = ivs[r][2]
            return _sv_eval(e, {**env, r: vals[r]}, self._load)

        for k in range(MAX_SIMULATED_ITERATIONS):
            for r in before:
                vals[r] = step(r)
            a = _sv_eval(ea, {**env, **vals}, self._load)
            b = _sv_eval(eb, {**env, **vals}, self._load)
            if _sv_taken(mn, a, b) == exit_taken:
                return k + 1
            for r in ivs:
                if r not in before:
                    vals[r] = step(r)
        return None

    # -- the bound used by path analysis ---------------------------------------
    def bound(self, forest: LoopForest, loop: Loop, chain: list[str], ctx: tuple[int, ...] = ()) -> LoopBound:
        """Bound for ``loop`` reached through the call string ``ctx`` whose
        function names (from the entry down to the loop's function) are
        ``chain``."""
        pre = self._preemptible(loop)
        if pre is not None:
            return pre
        anns = self._annotations_for(loop, chain)
        if not anns:                          # an explicit annotation wins over a pragma
            pa = self._pragma_annotation(forest, loop)
            if pa is not None:
                anns = [pa]
        auto = self.cheap_bound_in_context(forest, loop, ctx)
        if auto is None:
            auto = self.call_site_bound(forest, loop)
        params: dict[int, LoopBound | None] = {}
        if auto is None:
            params = {id(la): self._parameter_bound(forest, loop, la) for la in anns if la.parameter is not None}
            # The solver's own search only where no annotation gives a bound
            # to try: a parameter's bound is never above it (the same model
            # with one more constraint), and checking a `max` searches up to
            # it, finding the smallest bound the proof allows (``_verdict``).
            if not any(params.values()) and not any(la.max is not None and not la.limit for la in anns):
                auto = self.auto_bound(forest, loop)
        for la in anns:
            if la.max is not None and not la.limit:
                # a `max` next to `parameter` is checked against the bound the
                # solver found from the parameter (no second solver run)
                self._verdict(forest, loop, la, auto or params.get(id(la)))
        if auto is not None:
            limits = [la for la in anns if la.limit and la.max is not None and la.max < auto.max]
            if limits:                        # a system limit below the code's own
                la = min(limits, key=lambda a: a.max)
                return LoopBound(la.max, self._label(la) + " (system limit)", kind="trusted")
            return auto
        best: LoopBound | None = None
        for la in anns:
            cands = []
            pb = params.get(id(la))
            if pb is not None:
                cands.append(pb)
            if la.max is not None and la.limit:
                cands.append(LoopBound(la.max, self._label(la) + " (system limit)", kind="trusted"))
            elif la.max is not None:
                proved = self._verdict(forest, loop, la, pb) == "proved"
                n = self._proved.get((id(la), id(loop.func), loop.header), la.max) if proved else la.max
                how = " (trusted)" if not proved else " (proved by z3)" if n == la.max else \
                    f" (proved by z3: at most {n})"
                unproved = "pragma" if la.pragma is not None else "trusted"
                cands.append(LoopBound(n, self._label(la) + how, kind="automatic" if proved else unproved))
            for b in cands:
                if best is None or b.max < best.max:
                    best = b
        if best is not None:
            return best
        func = loop.func
        src = self.image.source_of(loop.header)
        via = f" (reached via {' -> '.join(chain)})" if len(chain) > 1 else ""
        if loop.irreducible:
            ents = sorted({t for _, t in loop.entry_edges})
            raise WcetError(f"irreducible loop at {loop.header:#x} in {func.name} ({src}) has no bound{via}: "
                            f"it is entered at {len(ents)} blocks ({', '.join(hex(e) for e in ents)}), so "
                            f"no automatic bound; add a [[loop]] annotation with max = N header executions "
                            f"per entry into the region")
        why = "not a simple counted loop and the solver found no bound"
        if any(la.parameter for la in anns):
            why = "the solver could not bound it from the annotated parameter"
        nop = self.pragma_reason(forest, loop)
        if nop:
            why += f"; no loopbound pragma: {nop}"
        raise WcetError(f"loop at {loop.header:#x} in {func.name} ({src}) has no bound{via}: "
                        f"{why}; add a [[loop]] annotation with max = N")

    def _preemptible(self, loop: Loop) -> LoopBound | None:
        """A loop whose every iteration calls a preemption-point function runs
        once when an interrupt is pending (the analysis' assumption for
        preemptible kernel operations: the first poll ends the operation)."""
        if not self.ann.preemption or loop.irreducible:
            return None
        targets = {self.image.symbol(n).addr for n in self.ann.preemption if self.image.has_symbol(n)}
        func = loop.func
        polls = {b for b in loop.blocks
                 if func.blocks[b].kind is Term.CALL and func.blocks[b].call_target in targets}
        if not polls:
            return None
        # every header -> latch path must pass a polling block
        latches = set(loop.latches)
        seen, stack = set(), [loop.header]
        while stack:
            b = stack.pop()
            if b in seen or b in polls:
                continue
            if b in latches:
                return None
            seen.add(b)
            stack.extend(s for s in func.blocks[b].succs if s in loop.blocks and s != loop.header)
        names = ", ".join(sorted(self.ann.preemption))
        if self.preemption_max != 1:
            return LoopBound(self.preemption_max, f"preemption point ({names}) in every iteration: "
                                                  f"each poll ends the region",
                             kind="preemption")
        return LoopBound(1, f"preemption point ({names}) in every iteration: interrupt assumed pending",
                         kind="preemption")

    @staticmethod
    def _label(la) -> str:
        """The annotation's origin, with its expression and value if ``max``
        was written over [parameters]."""
        return la.origin if la.expression is None else f"{la.origin}: {la.expression} = {la.max}"

    def _annotations_for(self, loop: Loop, chain: list[str]) -> list:
        """The annotations that match ``loop`` reached through ``chain``
        (marked as used)."""
        out = []
        for la in self.ann.loops:
            if la.function is not None and la.function != loop.func.name:
                continue
            if la.context and not context_matches(la.context, chain):
                continue
            mkey = (id(la), id(loop.func), loop.header)
            m = self._ann_match_cache.get(mkey)
            if m is None:
                m = self._ann_matches(la, loop)
                self._ann_match_cache[mkey] = m
            if not m:
                continue
            la.used = True
            out.append(la)
        return out

    def _ann_matches(self, la, loop: Loop) -> bool:
        func = loop.func
        if la.index is not None or la.source is not None:
            return loop.header in self._anchor_targets(la, func)
        if la.address is None and la.line is None:
            # function alone: only valid for a function with exactly one loop
            from kairos.wcet.loops import find_loops
            n = len(find_loops(func).loops)
            if n != 1:
                raise WcetError(f"annotation {la.describe()}: {func.name} has {n} loops; "
                                f"give 'line' or 'address' to say which")
            return True
        if la.address is not None:
            blk = func.block_containing(la.address)
            if blk is None:
                return False
            return self._innermost_of(loop, blk.start)
        # the innermost loops holding code of that line: a loop whose inner
        # loop also holds some of it is not meant (e.g. the guard of a rotated
        # inner loop sits in the outer loop's body)
        key = (id(la), id(func))
        targets = self._line_targets.get(key)
        if targets is None:
            from kairos.wcet.loops import find_loops
            fo = find_loops(func)
            blocks = set()
            for a in self.image.addrs_of_line(la.file, la.line):
                blk = func.block_containing(a)
                if blk is not None:
                    blocks.add(blk.start)
            cands = [lp for lp in fo.loops if lp.blocks & blocks]

            def has_cand_descendant(lp) -> bool:
                return any(c in cands or has_cand_descendant(c) for c in lp.children)
            targets = {lp.header for lp in cands if not has_cand_descendant(lp)}
            self._line_targets[key] = targets
        return loop.header in targets

    def _anchor_targets(self, la, func) -> set[int]:
        """Headers named by ``loop = N`` / ``source = "..."``; a stale anchor
        (no such loop, or the two disagree) is an error naming the annotation."""
        key = ("anchor", id(la), id(func))
        t = self._line_targets.get(key)
        if t is not None:
            return t
        from kairos.wcet.anchors import loop_order, loops_with_text
        from kairos.wcet.loops import find_loops
        fo = find_loops(func)
        order = loop_order(self.image, fo)
        where = la.place()
        heads: set[int] | None = None
        if la.index is not None:
            if la.index > len(order):
                raise AnnotationError(f"{where}: stale anchor: {func.name} has {len(order)} loop(s), "
                                      f"not {la.index}")
            heads = {order[la.index - 1].header}
        if la.source is not None:
            hits = {lp.header for lp in loops_with_text(self.image, fo, la.source, self._source())}
            if not hits:
                raise AnnotationError(f"{where}: stale anchor: no loop of {func.name} has {la.source!r} on its "
                                      f"source lines (or the source files cannot be read)")
            if heads is not None and not heads <= hits:
                k = [i + 1 for i, lp in enumerate(order) if lp.header in hits]
                raise AnnotationError(f"{where}: stale anchor: the text is on loop {', '.join(map(str, k))} of "
                                      f"{func.name}, not loop {la.index}")
            heads = hits if heads is None else heads
        self._line_targets[key] = heads
        return heads

    def _innermost_of(self, loop: Loop, block_start: int) -> bool:
        if block_start not in loop.blocks:
            return False
        # innermost loop containing the block must be this loop
        return not any(block_start in c.blocks for c in loop.children)

    def unused_annotations(self) -> list[str]:
        """Annotations that matched no analysed loop (stale, or for code not
        reached from the analysed entries)."""
        return [f"annotation {la.describe()} matches no analysed loop" for la in self.ann.loops if not la.used]


# ---------------------------------------------------------------------------
# Abstract execution of a loop nest (fallback for non-simple loops)
# ---------------------------------------------------------------------------

MAX_ABSEXEC_STEPS = 60_000
_UNK = ("?",)


class _AbsExec:
    """Iteration-by-iteration interpretation of a loop nest over registers
    holding constants or *unknown*.  Within one iteration the body is
    processed in reverse post-order (inner loops are interpreted recursively
    from the state they are entered with); a branch with unknown operands
    follows both successors and states are joined where paths meet
    (constant if equal, else unknown).  The loop's header count is the number
    of iterations until no state flows back along a back edge.  Sound as long
    as every path the hardware can take is followed: registers written from
    unknown memory are unknown, calls clobber caller-saved registers."""

    def __init__(self, ba: "BoundAnalysis", forest: LoopForest) -> None:
        self.ba = ba
        self.forest = forest
        self.func = forest.func
        self.steps = 0
        self.result: dict = {}
        #: headers of loops summarised in some iteration: no count for them
        self.unknown: set[int] = set()
        #: data addresses seen per memory instruction: (lo, hi) hull or None (unknown)
        self.mem: dict[int, tuple[int, int] | None] = {}
        order = cfgmod._rpo(self.func.blocks, self.func.entry)
        self.rank = {b: i for i, b in enumerate(order)}

    def _norm(self, e: tuple) -> tuple:
        if e[0] == "c":
            return e
        if e[0] == "ld" and e[3][0] == "c":
            try:
                return _c(self.ba._load(e[3][1], e[1], e[2]))
            except (_Cannot, WcetError):
                return _UNK
        return _UNK

    def _run_block(self, bs: int, st: dict[int, tuple]) -> dict[int, tuple]:
        blk = self.func.blocks[bs]
        regs = dict(st)
        for ins in blk.instrs:
            self.steps += 1
            if ins.mem_width:
                base = regs.get(ins.rs1, _UNK) if ins.rs1 else _c(0)
                if base[0] == "c" and (ins.addr not in self.mem or self.mem[ins.addr] is not None):
                    a = (base[1] + ins.imm) & MASK64
                    old = self.mem.get(ins.addr)
                    self.mem[ins.addr] = (a, a + ins.mem_width) if old is None else \
                        (min(old[0], a), max(old[1], a + ins.mem_width))
                elif base[0] != "c":
                    self.mem[ins.addr] = None
            if not ins.writes:
                continue
            sym_step(regs, ins)
            for w in ins.writes:
                if w < 32:
                    regs[w] = self._norm(regs.get(w, _UNK))
        if blk.kind in (Term.CALL, Term.TAILCALL):
            for r in CALLER_SAVED:
                regs[r] = _UNK
        if self.steps > MAX_ABSEXEC_STEPS:
            raise _Cannot("abstract execution step limit")
        return regs

    def _succs(self, bs: int, st: dict[int, tuple]) -> list[int]:
        blk = self.func.blocks[bs]
        if blk.kind is Term.SWITCH:
            # a jump table indexed by a known value: its entry, read from
            # read-only data like every load at a known address, is the target
            t = st.get(blk.last.rs1, _UNK) if blk.last.rs1 else _UNK
            if t[0] == "c":
                tgt = (t[1] + blk.last.imm) & MASK64 & ~1
                if tgt in blk.succs:
                    return [tgt]
            return list(blk.succs)
        if blk.kind is not Term.BRANCH or len(blk.succs) < 2:
            return list(blk.succs)
        br = blk.last
        a = st.get(br.rs1, _UNK) if br.rs1 else _c(0)
        b = st.get(br.rs2, _UNK) if br.rs2 else _c(0)
        if a[0] != "c" or b[0] != "c":
            return list(blk.succs)
        taken = _branch_taken(br.mnemonic, a[1], b[1])
        return [br.target] if taken else [br.next_addr]

    @staticmethod
    def _join(a: dict | None, b: dict) -> dict:
        if a is None:
            return dict(b)
        return {r: (v if b.get(r, _UNK) == v else _UNK) for r, v in a.items()}

    def simulate(self, loop: Loop, entry: dict[int, tuple]) -> dict[tuple[int, int], dict]:
        exits, _count = self._simulate(loop, entry)
        return exits

    def _simulate(self, loop: Loop, entry: dict[int, tuple]) -> tuple[dict[tuple[int, int], dict], int]:
        fo = self.forest
        if fo.by_header(loop.header) is not loop:
            raise _Cannot("loop does not belong to this loop forest")
        if loop.irreducible or any(c.irreducible for c in loop.children):
            raise _Cannot("irreducible loop")
        body = sorted((b for b in loop.blocks
                       if fo.innermost.get(b) is loop or any(c.header == b for c in loop.children)),
                      key=lambda b: self.rank.get(b, 1 << 30))
        children = {c.header: c for c in loop.children}
        exits: dict[tuple[int, int], dict] = {}
        state: dict | None = entry
        count = 0
        child_totals: dict[int, int] = {}
        prev: dict | None = None
        while state is not None:
            count += 1
            if count > MAX_SIMULATED_ITERATIONS:
                raise _Cannot("too many iterations")
            ins: dict[int, dict] = {loop.header: state}
            back: dict | None = None
            for bs in body:
                st = ins.pop(bs, None)
                if st is None:
                    continue
                if bs in children and bs != loop.header:
                    try:
                        outs, ccount = self._simulate(children[bs], st)
                        child_totals[bs] = child_totals.get(bs, 0) + ccount
                    except _NoProgress:
                        # an inner loop whose exit depends on unknown values
                        # (kputs of a string argument): its count stays
                        # unknown here, the enclosing loop's does not depend
                        # on it; every exit is taken with what it writes forgotten
                        outs = self._summarise(children[bs], st)
                        child_totals[bs] = 0
                    flows = [(dst, s2, src) for (src, dst), s2 in outs.items()]
                else:
                    st2 = self._run_block(bs, st)
                    flows = [(s, st2, bs) for s in self._succs(bs, st2)]
                for dst, s2, src in flows:
                    if dst == loop.header:
                        back = self._join(back, s2)
                    elif dst not in loop.blocks:
                        exits[(src, dst)] = self._join(exits.get((src, dst)), s2)
                    else:
                        ins[dst] = self._join(ins.get(dst), s2)
            if back is not None and back == state and prev is not None and prev == state:
                raise _NoProgress("no progress")
            prev, state = state, back
        self.result[loop.header] = max(self.result.get(loop.header, 0), count)
        for h, t in child_totals.items():
            self.result[("total", h)] = max(self.result.get(("total", h), 0), t)
        return exits, count

    def _summarise(self, loop: Loop, st: dict[int, tuple]) -> dict[tuple[int, int], dict]:
        """Exit states of a loop that was not interpreted: every exit edge is
        possible, with the registers the loop (or a call in it) may write
        unknown.  The loop and its inner loops get no count from this
        interpretation, and their memory accesses no address hull."""
        blocks = self.func.blocks
        out = dict(st)
        for b in loop.blocks:
            blk = blocks[b]
            for ins in blk.instrs:
                for w in ins.writes:
                    if w < 32:
                        out[w] = _UNK
                if ins.mem_width:
                    self.mem[ins.addr] = None
            if blk.kind in (Term.CALL, Term.TAILCALL):
                for r in CALLER_SAVED:
                    out[r] = _UNK
        self.unknown.add(loop.header)
        for lp in self.forest.loops:
            if lp.header in loop.blocks:
                self.unknown.add(lp.header)
        return {e: dict(out) for e in loop.exit_edges}


def _absexec_bounds(ba: "BoundAnalysis", forest: LoopForest, outer: Loop, cin: dict | None) -> dict[int, int]:
    func = outer.func
    init: dict[int, tuple] | None = None
    for p, _h in outer.entry_edges:
        out = ba._out_consts(func, p, cin)
        st = {r: (_c(out[r]) if r in out else _UNK) for r in range(1, 32)}
        init = st if init is None else _AbsExec._join(init, st)
    if init is None:
        return {}
    ae = _AbsExec(ba, forest)
    ae.simulate(outer, init)
    # a loop of the nest that no followed path entered (the format has no
    # width digits) is not entered from this state: one header execution
    # bounds it (the interpretation follows both ways of every branch whose
    # operands it does not know)
    for lp in forest.loops:
        if lp is not outer and lp.header in outer.blocks and lp.header not in ae.result \
                and lp.header not in ae.unknown:
            ae.result[lp.header] = 1
    for h in ae.unknown:
        ae.result.pop(h, None)
        ae.result.pop(("total", h), None)
    ae.result[("mem",)] = ae.mem
    return ae.result
