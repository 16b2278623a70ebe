"""Loop bounds by bounded model checking of the binary (z3, RV64 bit vectors).

The method is Blackham's sequoll (PhD thesis, UNSW 2013, ch. 6) on
satisfiability modulo theories instead of a model checker:

1. *Slice.* Choose the loop's exit tests that must be modelled (first each
   one alone, then all of them); every other branch of the function becomes
   a free choice.  The registers those tests depend on are closed under data
   dependence over the function (flow-insensitively); loads pull in the
   memory and every store.  Nothing outside the slice is modelled.  Dropping
   a test only adds paths, so a bound of the sliced program bounds the real
   one.
2. *Entry context.* The function is encoded from its entry to the loop
   along the acyclic graph: registers start as the call string's constant
   arguments (``seed``) or as unknown values, other loops on the way are
   summarised by forgetting what they write, a call forgets the caller-saved
   registers and the memory.  Branches of that prefix whose operands are in
   the slice are kept: they are the guards that limit the values the loop
   starts from (``if (n > 32) return ...;``).
3. *Unrolling.* One iteration is the loop body from the header back to it
   (inner loops summarised as in 2).  ``Implies(a_i, continue_i)`` is added
   per iteration; the loop can take ``k`` back edges iff the literals
   ``a_0 .. a_{k-1}`` are satisfiable together.  ``k`` doubles until that
   is unsatisfiable, then a binary search finds the smallest such ``k``: the
   header runs at most ``k`` times per entry.  An expected bound (a fact's
   maximum + 1, a claimed ``max``) is tried first (``_search``).

Each public query builds its terms in its own z3 context (``own_context``):
z3's effort on a formula depends on what the context already holds.

Values are Python ints while they are known constants (so constant contexts
cost nothing) and 64-bit z3 terms otherwise; memory is an array from 64-bit
addresses to bytes, read-only data and ``[constants]`` symbols at known
addresses read from the image.

API (this module is the one home of the analyser's z3 semantics for loops):

* ``LoopQuery(program, forest, loop, seed=None, const_memory=None)``
* ``LoopQuery.bound(facts=()) -> int | None``: the smallest proven header
  bound; ``facts`` are ``(register, maximum)`` or ``(register, maximum,
  minimum)`` constraints on values at loop entry (unsigned), see
  ``parameter_bound``.
* ``LoopQuery.parameter_bound(maximum, name=None) -> (bound, register) | None``:
  a bound that holds when one value the loop starts from is at most
  ``maximum`` (the annotation's system parameter); ``name`` must then occur
  in the source line that computes that value.
* ``LoopQuery.check(claimed) -> "proved" | "refuted" | "unknown"``: is
  ``claimed`` header executions per entry a bound?  ``refuted`` only when
  every execution of the model (which contains every real one) runs longer.
* ``cached(key_parts, compute)``: on-disk memo of solver answers, keyed by
  the code's bytes (``$KAIROS_WCET_CACHE``, default ``~/.cache/kairos/wcet``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from typing import Callable, Iterable, Iterator

import z3

from kairos.wcet import emulator, rv64smt
from kairos.wcet.cfg import CALLER_SAVED, Program, Term
from kairos.wcet.isa import Instr, InstrClass
from kairos.wcet.loops import Loop, LoopForest

MASK64 = (1 << 64) - 1
#: Largest number of back edges the unrolling tries.
MAX_UNROLL = 1024
#: Largest number of (iteration x instruction) steps one query may encode.
MAX_STEPS = 40_000
#: Solver effort per check (z3's deterministic resource limit, about two
#: seconds of processor time), and a wall-clock safety limit in milliseconds.
CHECK_RLIMIT = 3_000_000
CHECK_TIMEOUT_MS = 60_000
#: z3 resource units per nominal second of a budget below (z3 4.x/5.x on
#: the 2-core machine: 2.4 to 3.1 million units per second of processor time).
RLIMIT_PER_S = 2_500_000
#: Budget of one loop's queries together, in nominal seconds (an answer that
#: needs more is "cannot decide": the loop needs an annotation).  It is
#: spent in z3 resource units (``RLIMIT_PER_S``) and encoding steps
#: (``STEP_EFFORT`` units each), which do not depend on the machine's load:
#: a failure is then the same on an idle and on a loaded machine, and is
#: cached on disk.
LOOP_BUDGET_S = 5.0
#: The same for a loop bounded from an annotated system parameter.
PARAMETER_BUDGET_S = 15.0
#: Effort units one encoded instruction costs (the encoding's own time, in
#: Python, counted in the solver's deterministic currency).
STEP_EFFORT = 1_000
#: Largest proven bound of another loop that is unrolled rather than
#: summarised (its exit values then reach the loop being bounded).
UNROLL_KNOWN = 32
#: Most calls per query after which the frame keeps its bytes
#: (``_keep_frame``); later calls forget all memory.  Each kept frame nests
#: one more lambda over the memory before it, and z3 beta-reduces the
#: nest when a formula is asserted: loops unrolled around calls (the
#: generated schedulers' engine, 14 processes) gave nests whose assertion
#: had not returned after minutes, outside any effort or time budget.
MAX_KEPT_FRAMES = 8
#: Most bytes a call may store to (``bounds.store_ranges``) for the memory
#: to keep the rest across it (each such byte is one store in the formula).
CALL_WRITES_BYTES = 256
#: Values tried one by one below a hint shown impossible (``_search``)
#: before bisecting: a parameter's bound is usually the hint or just below
#: it, and each step is one check that is cheaper than the hint's.
HINT_STEPS = 2
#: Bumped whenever the encoding changes (part of the on-disk cache key).
ENCODING_VERSION = "smtloops-11"

MEM = -1          # the memory, as a pseudo-register in slices

Val = "int | z3.BitVecRef"


class _Giveup(Exception):
    pass


@contextlib.contextmanager
def own_context() -> Iterator[None]:
    """Make a fresh z3 context the default one for the block.

    z3's effort (``rlimit``) for one and the same formula depends on what
    the context already holds: terms are hash-consed with ids in creation
    order, and the solver's variable order and case splits follow the ids.
    In the process that analysed the whole kernel the list walks'
    parameter bounds spent 4 to 5 times the effort they took in a process
    that analysed them alone, and ran out of budget.  A query built in its
    own context spends the same effort whatever the process did before, so
    its answer depends only on the query (and the context's memory is freed
    at once when the query ends).  z3py builds every term without an
    explicit context in ``main_ctx()``; swapping the module's default
    (``z3.z3._main_ctx``, z3py's one global) for the block does that without
    passing a context to each constructor.  Terms from outside must not
    enter the block, nor terms from inside leave it."""
    mod = z3.z3
    if not hasattr(mod, "_main_ctx"):        # another z3py: shared context
        yield
        return
    outer = mod._main_ctx
    mod._main_ctx = z3.Context()
    try:
        yield
    finally:
        mod._main_ctx = outer


def _in_own_context(method):
    """A query method run in its own z3 context (``own_context``)."""
    @functools.wraps(method)
    def run(*args, **kwargs):
        with own_context():
            return method(*args, **kwargs)
    return run


# ---------------------------------------------------------------------------
# values: Python ints (known) or 64-bit z3 terms
# ---------------------------------------------------------------------------

def _bv(v) -> z3.BitVecRef:
    return z3.BitVecVal(v, 64) if isinstance(v, int) else v


def _sx(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _alu(m: str, a, b, imm: int = 0):
    """RV64 semantics of the ALU/M instruction ``m``: the emulator's tables
    when every operand is known, else rv64smt's z3 tables (one definition of
    each, shared with the trace emulator and the infeasible-path search)."""
    if isinstance(a, int) and isinstance(b, int):
        if m in emulator.ALU:
            return emulator.ALU[m](a, b, imm, 0) & MASK64
        return emulator.MULDIV[m](a, b) & MASK64
    x, y = _bv(a), _bv(b)
    if m in rv64smt.ALU:
        return rv64smt.ALU[m](x, y, rv64smt.const(imm))
    if m in rv64smt.MULDIV:
        return rv64smt.MULDIV[m](x, y)
    raise _Giveup(m)


def _cond(mn: str, a, b):
    """Branch condition (Python bool when both operands are known)."""
    if isinstance(a, int) and isinstance(b, int):
        return emulator.BRANCH[mn](a, b)
    return rv64smt.BRANCH[mn](_bv(a), _bv(b))


def _and(a, b):
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    return z3.And(a, b)


def _or(items: list):
    items = [i for i in items if i is not False]
    if any(i is True for i in items):
        return True
    if not items:
        return False
    return items[0] if len(items) == 1 else z3.Or(items)


def _not(a):
    if isinstance(a, bool):
        return not a
    return z3.Not(a)


def _same(a, b) -> bool:
    if isinstance(a, int) or isinstance(b, int):
        return isinstance(a, int) and isinstance(b, int) and a == b
    return a.eq(b)


def _ite(c, a, b):
    if c is True:
        return a
    if c is False:
        return b
    if _same(a, b):
        return a
    if isinstance(a, (int, z3.BitVecRef)) and (isinstance(a, int) or a.sort() == z3.BitVecSort(64)):
        return z3.If(c, _bv(a), _bv(b))
    return z3.If(c, a, b)


# ---------------------------------------------------------------------------
# the encoder
# ---------------------------------------------------------------------------

class _State:
    __slots__ = ("regs", "mem")

    def __init__(self, regs: dict[int, object], mem) -> None:
        self.regs = regs
        self.mem = mem


class LoopQuery:
    """Bounded model checking of one loop of one function (see module doc)."""

    def __init__(self, program: Program, forest: LoopForest, loop: Loop, seed: dict[int, int] | None = None,
                 const_memory: dict[int, int] | None = None, entry_consts: dict[int, int] | None = None,
                 known_bounds: dict[int, int] | None = None,
                 global_ranges: dict[tuple[int, int], tuple[int, int]] | None = None,
                 call_writes: dict[int, tuple[tuple[int, int], ...] | None] | None = None) -> None:
        self.program = program
        self.image = program.image
        self.forest = forest
        self.loop = loop
        self.func = loop.func
        self.seed = dict(seed or {})
        self.const_memory = const_memory or {}
        self.entry_consts = dict(entry_consts or {})
        self.memory = True          # model memory (else every load is a fresh value)
        self.prefix = True          # encode the function from its entry (else from the loop entry)
        self._fresh = 0
        blocks = self.func.blocks
        # the acyclic view: every back edge (of every loop) removed
        self.back = {e for lp in forest.loops for e in lp.back_edges}
        self.loop_of_header = {lp.header: lp for lp in forest.loops}
        order = _rpo(blocks, self.func.entry, self.back)
        self.rank = {b: i for i, b in enumerate(order)}
        self.order = order
        self.exit_branches = sorted({a for a, _t in loop.exit_edges
                                     if blocks[a].kind is Term.BRANCH and len(blocks[a].succs) == 2})
        self.steps = 0
        self.kept_frames = 0
        #: an answer was cut short by the wall-clock guard of a check, not
        #: by the effort budget: it depends on the load, see ``cached``
        self.load_dependent = False
        self._budget(LOOP_BUDGET_S)
        #: proven header bounds of other loops of the function: those not
        #: around this loop are unrolled instead of summarised
        #: proven bounds of the other loops not around this one (an
        #: induction variable's exit value then lies in a known range)
        self.other_bounds = {h: n for h, n in (known_bounds or {}).items()
                             if h != loop.header and h in self.loop_of_header
                             and loop.header not in self.loop_of_header[h].blocks}
        self.known_bounds = {h: n for h, n in self.other_bounds.items() if n <= UNROLL_KNOWN}
        self.frame_size = _frame_size(self.func)
        #: (address, width) -> (lo, hi): globals only ever stored with
        #: constants in that range (``infeasible.ProgramFacts.value_range``)
        self.global_ranges = dict(global_ranges or {})
        self.private_calls = _private_frame_calls(self.func) if self.frame_size else frozenset()
        #: call block -> the byte ranges its callee may store to (besides its
        #: own stack below ``sp``), where known (``bounds.store_ranges``):
        #: the rest of memory keeps its bytes across the call
        self.call_writes = {b: w for b, w in (call_writes or {}).items()
                            if w is not None and sum(hi - lo for lo, hi in w) <= CALL_WRITES_BYTES}

    # -- slices ---------------------------------------------------------------
    def slice_for(self, branch_blocks: Iterable[int]) -> frozenset[int]:
        """Registers (and MEM) the conditions of ``branch_blocks`` depend on,
        closed under data dependence over the whole function."""
        blocks = self.func.blocks
        rel: set[int] = set()
        for b in branch_blocks:
            br = blocks[b].last
            rel |= {r for r in (br.rs1, br.rs2) if r}
        region = blocks if self.prefix else self.loop.blocks
        instrs = [i for b in region for i in blocks[b].instrs]
        changed = True
        while changed:
            changed = False
            for ins in instrs:
                if not ins.writes or not (set(ins.writes) & rel):
                    continue
                new = {r for r in ins.reads if r < 32}
                if self.memory and ins.cls in (InstrClass.LOAD, InstrClass.LR, InstrClass.AMO, InstrClass.SC):
                    new.add(MEM)
                if not new <= rel:
                    rel |= new
                    changed = True
            # a guard comparing a relevant value with another one: model both
            for b in region:
                br = blocks[b].last
                if br.cls is InstrClass.BRANCH:
                    ops = {r for r in (br.rs1, br.rs2) if r}
                    if ops & rel and not ops <= rel:
                        rel |= ops
                        changed = True
            if MEM in rel:
                for ins in instrs:
                    if ins.cls is InstrClass.STORE:
                        new = {r for r in ins.reads if r < 32}
                        if not new <= rel:
                            rel |= new
                            changed = True
        return frozenset(rel)

    # -- symbolic execution -----------------------------------------------------
    def _fresh_bv(self, tag: str):
        self._fresh += 1
        return z3.BitVec(f"{tag}!{self._fresh}", 64)

    def _fresh_bool(self, tag: str):
        self._fresh += 1
        return z3.Bool(f"{tag}!{self._fresh}")

    def _fresh_mem(self):
        self._fresh += 1
        return z3.Array(f"mem!{self._fresh}", z3.BitVecSort(64), z3.BitVecSort(8))

    def _load(self, st: _State, addr, width: int, signed: bool):
        if not self.memory and not isinstance(addr, int):
            raise _Giveup("no memory model")
        if isinstance(addr, int):
            if addr in self.const_memory:
                v = self.const_memory[addr] & ((1 << (8 * width)) - 1)
                return (_sx(v, 8 * width) if signed else v) & MASK64
            if self.image.is_readonly(addr) and self.image.section_at(addr + width - 1) is \
                    self.image.section_at(addr):
                return self.image.read_int(addr, width, signed) & MASK64
        if not self.memory:
            raise _Giveup("no memory model")
        if st.mem is None:
            st.mem = self._fresh_mem()
        a = _bv(addr)
        parts = [z3.Select(st.mem, a + i) for i in range(width)]
        v = parts[0] if width == 1 else z3.Concat(*reversed(parts))
        rng = self.global_ranges.get((addr, width)) if isinstance(addr, int) else None
        if rng is not None:
            # every value the word can hold lies in the range: clamp into it
            lo, hi = (z3.BitVecVal(x, 8 * width) for x in rng)
            v = z3.If(z3.ULE(v - lo, hi - lo), v, lo)
        ext = z3.SignExt if signed else z3.ZeroExt
        return v if width == 8 else ext(64 - 8 * width, v)

    def _store(self, st: _State, addr, val, width: int) -> None:
        if st.mem is None:
            st.mem = self._fresh_mem()
        a, v = _bv(addr), _bv(val)
        m = st.mem
        for i in range(width):
            m = z3.Store(m, a + i, z3.Extract(8 * i + 7, 8 * i, v))
        st.mem = m

    def _step(self, st: _State, ins: Instr, rel: frozenset[int]) -> None:
        self.steps += 1
        self.effort -= STEP_EFFORT
        regs = st.regs
        m = ins.mnemonic
        c = ins.cls

        def get(r):
            if not r:
                return 0
            v = regs.get(r)
            if v is None:
                v = regs[r] = self._fresh_bv(f"x{r}")
            return v

        if c in (InstrClass.STORE,):
            if MEM in rel:
                self._store(st, _alu("addi", get(ins.rs1), 0, ins.imm), get(ins.rs2), ins.mem_width)
            return
        if c in (InstrClass.AMO, InstrClass.SC, InstrClass.FP_STORE):
            if MEM in rel:
                st.mem = self._fresh_mem()       # what it writes is not modelled
            for w in ins.writes:
                if w in rel:
                    regs[w] = self._fresh_bv("amo")
            return
        rd = ins.rd
        if not ins.writes:
            return
        if not any(w in rel for w in ins.writes):
            return
        val = None
        if m == "lui":
            val = ins.imm & MASK64
        elif m == "auipc":
            val = (ins.addr + ins.imm) & MASK64
        elif m in emulator.ALU or m in emulator.MULDIV:
            val = _alu(m, get(ins.rs1), get(ins.rs2) if ins.rs2 is not None else 0, ins.imm)
        elif c is InstrClass.LOAD:
            addr = _alu("addi", get(ins.rs1), 0, ins.imm) if (not ins.rs1 or ins.rs1 in rel) else None
            if MEM in rel or isinstance(addr, int):
                try:
                    val = self._load(st, addr, ins.mem_width, ins.mem_signed) if addr is not None else None
                except _Giveup:
                    val = None
        elif c in (InstrClass.JAL, InstrClass.JALR):
            val = (ins.addr + ins.size) & MASK64
        for w in ins.writes:
            if w in rel:
                regs[w] = val if (w == rd and val is not None) else self._fresh_bv(m)

    def _run_block(self, bs: int, st: _State, rel: frozenset[int]) -> _State:
        blk = self.func.blocks[bs]
        out = _State(dict(st.regs), st.mem)
        for ins in blk.instrs:
            self._step(out, ins, rel)
        if blk.kind is Term.CALL:
            for r in CALLER_SAVED:
                if r in rel:
                    out.regs[r] = self._fresh_bv("call")
            if MEM in rel:
                sp = out.regs.get(2)
                writes = self.call_writes.get(bs)
                if writes is not None and out.mem is not None:
                    out.mem = self._keep_unwritten(out.mem, writes)
                elif bs in self.private_calls and sp is not None and out.mem is not None \
                        and self.kept_frames < MAX_KEPT_FRAMES:
                    self.kept_frames += 1
                    out.mem = self._keep_frame(out.mem, sp)
                else:
                    out.mem = self._fresh_mem()
        if self.steps > MAX_STEPS:
            raise _Giveup("formula too large")
        if self.effort <= 0:
            raise _Giveup("effort budget")
        return out

    def _budget(self, seconds: float) -> None:
        """Start a budget of ``seconds`` nominal seconds (see LOOP_BUDGET_S).
        No clock takes part: the encoding is capped by ``MAX_STEPS`` and
        charged ``STEP_EFFORT`` per instruction, each check by its rlimit
        grant, so the answer does not depend on the machine's load.  (A
        processor-time safety net at 3x the nominal seconds stopped queries
        until 2026-11-28; on the kernel's three entries it used at most 41 %
        of its time, ``sender_with_badge``'s parameter bound at load 6.5.)"""
        self.effort = int(seconds * RLIMIT_PER_S)

    def _limited_check(self, solver, *assumptions):
        """``solver.check`` within the effort left; the effort used is
        charged.  z3's ``rlimit`` applies to each check on its own (its
        statistic ``rlimit count`` accumulates).  An ``unknown`` before the
        check used its effort was stopped by the wall clock: load-dependent."""
        if self.effort <= 0:
            raise _Giveup("effort budget")
        used = rlimit_used(solver)
        grant = min(CHECK_RLIMIT, self.effort)
        solver.set("rlimit", grant)
        solver.set("timeout", CHECK_TIMEOUT_MS)        # wall clock: a safety net only
        r = solver.check(*assumptions)
        spent = rlimit_used(solver) - used
        self.effort -= spent
        if r == z3.unknown and spent < grant:
            self.load_dependent = True
        return r

    def _succ_conds(self, bs: int, st: _State, modelled: set[int], rel: frozenset[int]) -> dict[int, object]:
        """Condition of each successor edge of block ``bs`` (ending in state
        ``st``); a branch outside the slice is a fresh free choice."""
        blk = self.func.blocks[bs]
        if blk.kind is not Term.BRANCH or len(blk.succs) < 2:
            return {s: True for s in blk.succs}
        br = blk.last
        a = st.regs.get(br.rs1) if br.rs1 else 0
        b = st.regs.get(br.rs2) if br.rs2 else 0
        if a is None or b is None:
            taken = self._fresh_bool(f"b{bs:x}")
        else:
            taken = _cond(br.mnemonic, a, b)
        return {s: (taken if s == br.target else _not(taken)) for s in blk.succs}

    def _keep_frame(self, mem, sp):
        """Memory after a call that cannot reach this function's frame (no
        address in it has escaped, see ``_private_frame_calls``): the frame
        ``[sp, sp + frame_size)`` keeps its bytes, the rest is unknown.  The
        callee's own frame lies below ``sp`` (calling convention)."""
        other = self._fresh_mem()
        a = z3.BitVec(f"fa!{self._fresh}", 64)
        inside = z3.ULT(a - _bv(sp), z3.BitVecVal(self.frame_size, 64))
        return z3.Lambda([a], z3.If(inside, z3.Select(mem, a), z3.Select(other, a)))

    def _keep_unwritten(self, mem, writes: tuple[tuple[int, int], ...]):
        """Memory after a call whose callee stores only into ``writes`` (byte
        ranges of at most ``CALL_WRITES_BYTES`` in all) and its own stack:
        the bytes of those ranges are unknown, the rest keeps its bytes (a
        global loop counter survives a call that does not write it).  The
        callee's frames lie below the caller's ``sp``, which the caller's
        code never reads (calling convention, as everywhere in the
        analysis), so they need no forgetting.  Written as stores of fresh
        bytes, not as a lambda: no nesting per call (``_keep_frame``)."""
        other = self._fresh_mem()
        for lo, hi in writes:
            for a in range(lo, hi):
                av = z3.BitVecVal(a & MASK64, 64)
                mem = z3.Store(mem, av, z3.Select(other, av))
        return mem

    def _havoc_loop(self, st: _State, lp: Loop, rel: frozenset[int]) -> _State:
        """Any header state of ``lp``: what the loop writes is forgotten."""
        out = _State(dict(st.regs), st.mem)
        blocks = self.func.blocks
        for b in lp.blocks:
            blk = blocks[b]
            for ins in blk.instrs:
                for w in ins.writes:
                    if w in rel:
                        out.regs[w] = self._fresh_bv("loop")
                if MEM in rel and ins.cls in (InstrClass.STORE, InstrClass.AMO, InstrClass.SC):
                    out.mem = None
            if blk.kind is Term.CALL:
                for r in CALLER_SAVED:
                    if r in rel:
                        out.regs[r] = self._fresh_bv("call")
                if MEM in rel:
                    out.mem = None
        if MEM in rel and out.mem is None:
            out.mem = self._fresh_mem()
        return out

    def _iv_summary(self, st: _State, lp: Loop, rel: frozenset[int], exact: bool):
        """(condition, header state) of a loop with a proven bound ``B``: the
        state ``_havoc_loop`` gives, except that an induction variable
        ``r += c`` (one definition in the loop, outside its inner loops) has
        been stepped ``u`` times at any execution of the header, ``u <= B -
        1`` (at most once per completed iteration): ``r = r0 + c*u``, a fresh
        ``u`` per variable.  With ``exact`` (where the loop could be
        unrolled instead), None unless the induction variables are all the
        slice needs from the loop: only their ranges are then lost, not
        values that reach the loop being bounded through other registers or
        memory (``print_digits``)."""
        fb = self.func.blocks
        defs: dict[int, list] = {}
        for b in lp.blocks:
            blk = fb[b]
            for ins in blk.instrs:
                for w in ins.writes:
                    if w in rel:
                        defs.setdefault(w, []).append((b, ins))
                if exact and MEM in rel and ins.cls in (InstrClass.STORE, InstrClass.AMO, InstrClass.SC,
                                                        InstrClass.FP_STORE):
                    return None
            if blk.kind in (Term.CALL, Term.TAILCALL) and exact and (MEM in rel or rel & CALLER_SAVED):
                return None
        n = self.other_bounds[lp.header]
        cond = True
        out = self._havoc_loop(st, lp, rel)
        for r, dl in defs.items():
            b, ins = dl[0]
            if len(dl) != 1 or ins.mnemonic != "addi" or ins.rs1 != r or ins.rd != r \
                    or self.forest.innermost.get(b) is not lp \
                    or (r in CALLER_SAVED and any(fb[x].kind in (Term.CALL, Term.TAILCALL) for x in lp.blocks)):
                if exact:
                    return None
                continue        # forgotten by _havoc_loop
            u = self._fresh_bv("steps")
            cond = _and(cond, z3.ULE(u, z3.BitVecVal(n - 1, 64)))
            r0 = st.regs.get(r)
            if r0 is None:
                r0 = self._fresh_bv(f"x{r}")
            out.regs[r] = _bv(r0) + z3.BitVecVal(ins.imm & MASK64, 64) * u
        return cond, out

    def _merge(self, flows: list[tuple[object, _State]]) -> tuple[object, _State]:
        pcs = [c for c, _ in flows]
        pc = _or(pcs)
        base = flows[-1][1]
        regs = dict(base.regs)
        keys = set()
        for _c, s in flows:
            keys |= set(s.regs)
        for r in keys:
            v = base.regs.get(r)
            for c, s in reversed(flows[:-1]):
                w = s.regs.get(r)
                if v is None or w is None:
                    v = None
                    break
                v = _ite(c, w, v)
            if v is None:
                regs.pop(r, None)
            else:
                regs[r] = v
        mem = base.mem
        for c, s in reversed(flows[:-1]):
            if s.mem is None or mem is None:
                mem = s.mem if mem is None else mem
                continue
            if not s.mem.eq(mem):
                mem = z3.If(c, s.mem, mem)
        return pc, _State(regs, mem)

    def _region(self, start: int, start_state: _State, blocks_in: set[int], rel, modelled,
                stop_header: int | None, start_pc=True, exits: list | None = None
                ) -> tuple[dict[int, tuple[object, _State]], list]:
        """Symbolic execution over the acyclic view restricted to ``blocks_in``
        from ``start``.  Returns the (path condition, state) at the entry of each
        block, and the flows into ``stop_header`` (edges that reach it).  Flows
        along edges that leave ``blocks_in`` are appended to ``exits`` as
        (source, target, condition, state) when it is given."""
        incoming: dict[int, list[tuple[object, _State]]] = {start: [(start_pc, start_state)]}
        at: dict[int, tuple[object, _State]] = {}
        to_stop: list[tuple[object, _State, int]] = []

        def flow(src: int, dst: int, epc, out: _State) -> None:
            if dst == stop_header and (src, dst) in self.back:
                to_stop.append((epc, out, src))
            elif dst not in blocks_in:
                if exits is not None:
                    exits.append((src, dst, epc, out))
            elif (src, dst) not in self.back:
                incoming.setdefault(dst, []).append((epc, out))

        for bs in sorted(blocks_in, key=lambda b: self.rank.get(b, 1 << 30)):
            flows = incoming.pop(bs, None)
            if not flows:
                continue
            pc, st = self._merge(flows) if len(flows) > 1 else flows[0]
            if pc is False:
                continue
            if bs != start and bs in self.loop_of_header:
                lp = self.loop_of_header[bs]
                # unrolled in the memory model only (its values reach this
                # loop through memory too); else, and for longer loops, the
                # induction variables' ranges and the rest forgotten
                unroll = bs in self.known_bounds and self.memory
                summary = self._iv_summary(st, lp, rel, exact=unroll) if bs in self.other_bounds else None
                if summary is not None:
                    cond, st = summary
                    pc = _and(pc, cond)
                elif unroll:
                    at[bs] = (pc, st)
                    for src, dst, epc, out in self._unroll(lp, pc, st, rel, modelled):
                        flow(src, dst, epc, out)
                    continue
                else:
                    st = self._havoc_loop(st, lp, rel)
            at[bs] = (pc, st)
            out = self._run_block(bs, st, rel)
            for s, c in self._succ_conds(bs, out, modelled, rel).items():
                epc = _and(pc, c)
                if epc is not False:
                    flow(bs, s, epc, out)
        return at, to_stop

    def _unroll(self, lp: Loop, pc, st: _State, rel, modelled) -> list:
        """The flows out of loop ``lp`` entered in state ``st``, by running its
        iterations one after the other up to its proven bound (after which no
        back edge is taken)."""
        exits: list = []
        for _k in range(self.known_bounds[lp.header]):
            _at, to_stop = self._region(lp.header, st, set(lp.blocks), rel, modelled, lp.header,
                                        start_pc=pc, exits=exits)
            if not to_stop:
                break
            pc, st = self._merge([(c, s) for c, s, _b in to_stop])
            if pc is False:
                break
        return exits

    def _encode(self, modelled: set[int], rel: frozenset[int]):
        """Prefix: (entered condition, state at the loop header)."""
        fb = self.func.blocks
        if not self.prefix:
            regs = {r: (self.entry_consts[r] & MASK64 if r in self.entry_consts else self._fresh_bv(f"in{r}"))
                    for r in rel if 0 < r < 32}
            return True, _State(regs, self._fresh_mem() if MEM in rel else None)
        regs: dict[int, object] = {}
        for r in rel:
            if 0 < r < 32:
                if r in self.seed:
                    regs[r] = self.seed[r] & MASK64
                elif r == 3 and self.image.gp is not None:
                    regs[r] = self.image.gp & MASK64
        init = _State(regs, self._fresh_mem() if MEM in rel else None)
        for r in rel:
            if 0 < r < 32 and r not in regs:
                regs[r] = self._fresh_bv(f"arg{r}")
        # blocks that can reach the loop header in the acyclic view
        lp = self.loop
        preds_ok = set()
        stack = [p for p, _h in lp.entry_edges]
        while stack:
            b = stack.pop()
            if b in preds_ok:
                continue
            preds_ok.add(b)
            stack.extend(q for q in fb[b].preds if (q, b) not in self.back)
        if self.func.entry not in preds_ok:
            raise _Giveup("loop entry not reachable from the function entry in the acyclic view")
        at, _ = self._region(self.func.entry, init, preds_ok, rel, modelled, None)
        flows = []
        for p, h in lp.entry_edges:
            if p not in at:
                continue
            pc, st = at[p]
            out = self._run_block(p, st, rel)
            c = self._succ_conds(p, out, modelled, rel)[h]
            flows.append((_and(pc, c), out))
        if not flows:
            raise _Giveup("no entry edge")
        return self._merge(flows)

    def _iteration(self, st: _State, rel, modelled):
        """One iteration from header state ``st``: (continue condition, next state)."""
        lp = self.loop
        _at, to_stop = self._region(lp.header, st, set(lp.blocks), rel, modelled, lp.header)
        if not to_stop:
            return False, st
        pc, nxt = self._merge([(c, s) for c, s, _b in to_stop])
        return pc, nxt

    # -- queries ------------------------------------------------------------------
    def _unroller(self, modelled: set[int], facts: Iterable[tuple[int, int]] = ()):
        rel = self.slice_for(modelled)
        facts = [_fact(f) for f in facts]
        rel = rel | {r for r, _m, _l in facts}
        if any(self.walk_field(r) is not None for r, _m, _l in facts):
            rel = rel | {MEM}
        if MEM in rel and self.private_calls:
            rel = rel | {2}          # the frame a call keeps is found from sp
        self.steps = 0
        self.kept_frames = 0
        solver = z3.Solver()
        solver.set("timeout", CHECK_TIMEOUT_MS)
        solver.set("rlimit", CHECK_RLIMIT)
        entered, st0 = self._encode(modelled, rel)
        if entered is False:
            raise _Giveup("loop not entered")
        if entered is not True:
            solver.add(entered)
        for r, mx, least in facts:
            v = st0.regs.get(r)
            if v is None:
                raise _Giveup("fact on an unmodelled register")
            off = self.walk_field(r)
            if off is not None:
                solver.add(self._list_fact(st0, v, off, mx))
                continue
            if isinstance(v, int):
                solver.add(z3.BoolVal(least <= v <= mx))
                continue
            solver.add(z3.ULE(v, z3.BitVecVal(mx, 64)))
            if least:
                solver.add(z3.UGE(v, z3.BitVecVal(least, 64)))
        return solver, st0, rel

    def walk_field(self, reg: int) -> int | None:
        """Offset of the link field if ``reg`` walks a list in this loop: its
        only definition in the loop is ``ld reg, off(reg)`` and the loop
        stores nothing and calls nothing (so every iteration reads the list
        as it was at loop entry); else None."""
        fb = self.func.blocks
        defs = []
        for b in self.loop.blocks:
            blk = fb[b]
            if blk.kind in (Term.CALL, Term.TAILCALL):
                return None
            for ins in blk.instrs:
                if ins.cls in (InstrClass.STORE, InstrClass.AMO, InstrClass.SC, InstrClass.FP_STORE):
                    return None
                if reg in ins.writes:
                    defs.append(ins)
        if len(defs) != 1:
            return None
        d = defs[0]
        if d.cls is not InstrClass.LOAD or d.mem_width != 8 or d.rs1 != reg or d.rd != reg:
            return None
        return d.imm

    def _list_fact(self, st: _State, start, off: int, length: int):
        """The list from ``start`` along the link at ``off`` reaches NULL
        within ``length`` nodes (the parameter's statement about a list)."""
        if not self.memory:
            raise _Giveup("a list fact needs the memory model")
        cur = start
        ends = []
        for _ in range(length + 1):
            ends.append(z3.BoolVal(cur == 0) if isinstance(cur, int) else _bv(cur) == 0)
            if len(ends) > length:
                break
            cur = self._load(st, _alu("addi", cur, 0, off), 8, False)
        return z3.Or(ends)

    def _search(self, modelled: set[int], facts=(), limit: int = MAX_UNROLL, hint: int | None = None) -> int | None:
        """Smallest ``k`` <= ``limit`` shown impossible as a number of back
        edges, or None.  ``hint`` is where a bound is expected (a fact's
        maximum + 1, a claimed ``max``): it is tried first, then the values
        just below it (see ``HINT_STEPS``)."""
        solver, st, rel = self._unroller(modelled, facts)
        lits: list = []

        def extend(k: int) -> None:
            nonlocal st
            while len(lits) < k:
                cont, st = self._iteration(st, rel, modelled)
                a = z3.Bool(f"it{len(lits)}")
                if cont is False:
                    solver.add(z3.Not(a))
                elif cont is not True:
                    solver.add(z3.Implies(a, cont))
                lits.append(a)

        def possible(k: int) -> bool | None:
            extend(k)
            r = self._limited_check(solver, *lits[:k])
            # unknown (the solver's effort limit) counts as possible: only a
            # proof that k back edges cannot happen is used, and a satisfiable
            # query (a model to build) is often the harder one
            return r != z3.unsat

        k, lo = 1, 0            # lo: largest k not shown impossible
        if hint is not None and 1 <= hint <= limit:
            if possible(hint):
                if hint >= limit:
                    return None
                lo, k = hint, min(2 * hint, limit)
            else:
                hi = hint
                for _ in range(HINT_STEPS):
                    if hi - 1 <= lo:
                        break
                    if possible(hi - 1):
                        lo = hi - 1
                        break
                    hi -= 1
                return self._bisect(possible, lo, hi)
        while True:
            p = possible(k)
            if not p:
                break
            lo = k
            if k >= limit:
                return None
            k = min(2 * k, limit)
        return self._bisect(possible, lo, k)

    @staticmethod
    def _bisect(possible: Callable[[int], bool], lo: int, hi: int) -> int:
        """Smallest impossible ``k`` in ``(lo, hi]`` given ``lo`` possible
        (or 0) and ``hi`` impossible."""
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if possible(mid):
                lo = mid
            else:
                hi = mid
        return hi

    def _choices(self) -> list[set[int]]:
        """Exit-test sets to try: each exit test alone (cheapest slices),
        then all of them."""
        ex = self.exit_branches
        out = [{b} for b in ex]
        if len(ex) > 1:
            out.append(set(ex))
        return out

    #: Models tried in order, cheapest first: (encode the prefix, model
    #: memory, share of the time budget).
    TIERS = ((False, False, 0.1), (True, False, 0.4), (True, True, 0.5))

    def _tiers(self, budget: float = LOOP_BUDGET_S):
        for self.prefix, self.memory, share in self.TIERS:
            self._budget(share * budget)
            yield
        self.prefix, self.memory = True, True

    @_in_own_context
    def bound(self, facts: Iterable[tuple[int, int]] = (), budget: float = 0.0) -> int | None:
        """Smallest proven header bound of the first model and slice that
        gives one (cheapest first), or None."""
        if self.loop.irreducible or self.loop.is_infinite:
            return None
        facts = list(facts)
        for _ in self._tiers(budget or LOOP_BUDGET_S):
            if facts and not self.prefix:
                continue        # a fact is about the value the guards before the loop let in
            b = self._bound_here(facts)
            if b is not None:
                self.prefix, self.memory = True, True
                return b
        return None

    def _bound_here(self, facts) -> int | None:
        best: int | None = None
        fregs = {_fact(f)[0] for f in facts}
        fb = self.func.blocks
        # a fact's maximum bounds the value the loop counts from (or the
        # nodes of the list it walks): the bound is expected near it
        hint = max(_fact(f)[1] for f in facts) + 1 if facts else None
        choices = sorted(self._choices(), key=lambda m: not any(
            r in fregs for b in m for r in (fb[b].last.rs1, fb[b].last.rs2)))
        for mod in choices:
            try:
                limit = best - 1 if best else MAX_UNROLL
                b = self._search(mod, facts, limit=limit, hint=min(hint, limit) if hint else None)
            except (_Giveup, z3.Z3Exception):
                continue
            if b is not None and (best is None or b < best):
                best = b
                if best == 1:
                    break
        return best

    def candidates(self) -> list[int]:
        """Registers compared by the loop's exit tests, counters (written in
        the loop) first: the values a system parameter may bound.  At most
        three, each tried with its own slice."""
        fb = self.func.blocks
        written = {w for b in self.loop.blocks for i in fb[b].instrs for w in i.writes}
        score: dict[int, int] = {}
        for b in self.exit_branches:
            br = fb[b].last
            ops = [r for r in (br.rs1, br.rs2) if r]
            for r in ops:
                other_fixed = all(o not in written for o in ops if o != r)
                s = 0 if (r in written and other_fixed) else 1 if r in written else 2
                score[r] = min(score.get(r, 3), s)
        return sorted(score, key=lambda r: (score[r], r))[:3]

    def defined_by(self, reg: int) -> list[int]:
        """Addresses of the instructions outside the loop that write ``reg``."""
        out = []
        for b, blk in self.func.blocks.items():
            if b in self.loop.blocks:
                continue
            out += [i.addr for i in blk.instrs if reg in i.writes]
        return out

    @_in_own_context
    def parameter_bound(self, maximum: int, accept: Callable[[int], bool] | None = None,
                        least: int = 0) -> tuple[int, int] | None:
        """(bound, register) for the first candidate register that ``accept``s
        and gives a bound when its value at loop entry is at most ``maximum``
        (and at least ``least``).  Every candidate is tried in the cheaper
        model before any in the next: a candidate whose slice needs the
        memory model must not spend the budget a register-only slice of
        another would prove the bound with."""
        regs = [r for r in self.candidates() if accept is None or accept(r)]
        if not regs or self.loop.irreducible or self.loop.is_infinite:
            return None
        # a stated fact is worth more effort than a guess (few loops have
        # one); the candidates share the budget
        for _ in self._tiers(PARAMETER_BUDGET_S / len(regs)):
            if not self.prefix:
                continue        # a fact is about the value the guards before the loop let in
            tier_effort = self.effort
            for r in regs:
                self._budget(tier_effort / RLIMIT_PER_S)
                b = self._bound_here([(r, maximum, least)])
                if b is not None:
                    self.prefix, self.memory = True, True
                    return b, r
        return None

    def check(self, claimed: int) -> str:
        """"proved", "refuted" or "unknown" for ``claimed`` header executions."""
        return self.check_bound(claimed)[0]

    @_in_own_context
    def check_bound(self, claimed: int) -> tuple[str, int | None]:
        """``check`` and, when proved, the smallest bound (<= ``claimed``)
        the proof found: an annotated loop needs no separate ``bound``."""
        if self.loop.irreducible or self.loop.is_infinite:
            return "unknown", None
        for _ in self._tiers():
            best: int | None = None
            # as ``_bound_here``: the smallest bound over the exit-test sets
            for mod in self._choices():
                try:
                    limit = best - 1 if best else claimed
                    b = self._search(mod, (), limit=limit, hint=limit)
                except (_Giveup, z3.Z3Exception):
                    continue
                if b is not None and b <= (best - 1 if best else claimed):
                    best = b
                    if best == 1:
                        break
            if best is not None:
                self.prefix, self.memory = True, True
                return "proved", best
        return self._refute(claimed), None

    def _refute(self, claimed: int) -> str:
        # refuted: even the model (a superset of the real executions) always
        # takes `claimed` back edges
        self._budget(LOOP_BUDGET_S / 2)
        try:
            self.prefix, self.memory = True, False
            mod = set(self.exit_branches)
            solver, st, rel = self._unroller(mod)
            if self._limited_check(solver) != z3.sat:
                return "unknown"
            conts = []
            for _ in range(claimed):
                cont, st = self._iteration(st, rel, mod)
                conts.append(cont)
            solver.add(z3.Not(z3.And([z3.BoolVal(c) if isinstance(c, bool) else c for c in conts])))
            if self._limited_check(solver) == z3.unsat:
                return "refuted"
        except (_Giveup, z3.Z3Exception):
            pass
        finally:
            self.prefix, self.memory = True, True
        return "unknown"


def _fact(f: tuple) -> tuple[int, int, int]:
    """(register, maximum, minimum) of a fact given with or without its minimum."""
    return (f[0], f[1], f[2]) if len(f) > 2 else (f[0], f[1], 0)


def rlimit_used(solver) -> int:
    """z3 resource units ``solver`` has spent so far (its ``rlimit count``
    statistic, which accumulates over checks): the deterministic effort
    currency of the budgets here and in the infeasible-path search."""
    st = solver.statistics()
    return st.get_key_value("rlimit count") if "rlimit count" in st.keys() else 0


def _frame_size(func) -> int:
    """Bytes of the function's stack frame if ``sp`` is only moved by its
    prologue (``addi sp, sp, -F`` in the entry block) and epilogues (``addi
    sp, sp, F``); else 0 (no frame is assumed private)."""
    size = 0
    for bs, blk in func.blocks.items():
        for ins in blk.instrs:
            if 2 not in ins.writes:
                continue
            if ins.mnemonic != "addi" or ins.rs1 != 2:
                return 0
            if ins.imm < 0:
                if bs != func.entry or size:
                    return 0
                size = -ins.imm
            elif blk.kind not in (Term.RETURN, Term.TAILCALL):
                return 0
    return size


def _private_frame_calls(func) -> frozenset[int]:
    """Call blocks before which no address into the function's frame can
    have escaped: a forward analysis of the registers that may hold one
    (``sp`` and values computed from it).  An address escapes when it is
    stored to memory, written to a CSR, or in an argument register at a
    call; a loaded value never holds one unless an address escaped before."""
    blocks = func.blocks
    state_in: dict[int, tuple[frozenset, bool]] = {func.entry: (frozenset({2}), False)}
    private: set[int] = set()
    work = [func.entry]
    while work:
        bs = work.pop()
        tainted, escaped = state_in[bs]
        t = set(tainted)
        blk = blocks[bs]
        for ins in blk.instrs:
            c = ins.cls
            if c in (InstrClass.STORE, InstrClass.FP_STORE, InstrClass.AMO, InstrClass.SC) and ins.rs2 in t:
                escaped = True
            if c is InstrClass.CSR and ins.rs1 in t:
                escaped = True
            derived = c in (InstrClass.ALU, InstrClass.MUL, InstrClass.DIV) and any(
                r in t for r in ins.reads if r < 32)
            for w in ins.writes:
                if w < 32:
                    (t.add if derived or w == 2 else t.discard)(w)
        if blk.kind is Term.CALL:
            if any(r in t for r in range(10, 18)):
                escaped = True
            if not escaped:
                private.add(bs)
            t -= CALLER_SAVED
        out = (frozenset(t), escaped)
        for sc in blk.succs:
            if sc not in blocks:
                continue
            old = state_in.get(sc)
            new = out if old is None else (old[0] | out[0], old[1] or out[1])
            if new != old:
                state_in[sc] = new
                work.append(sc)
    # a call block is private only in its final state
    return frozenset(b for b in private if not state_in[b][1] and not _escapes_in_block(blocks[b], state_in[b][0]))


def _escapes_in_block(blk, tainted: frozenset) -> bool:
    t = set(tainted)
    for ins in blk.instrs:
        c = ins.cls
        if c in (InstrClass.STORE, InstrClass.FP_STORE, InstrClass.AMO, InstrClass.SC) and ins.rs2 in t:
            return True
        if c is InstrClass.CSR and ins.rs1 in t:
            return True
        derived = c in (InstrClass.ALU, InstrClass.MUL, InstrClass.DIV) and any(r in t for r in ins.reads if r < 32)
        for w in ins.writes:
            if w < 32:
                (t.add if derived or w == 2 else t.discard)(w)
    return any(r in t for r in range(10, 18))


def _rpo(blocks, entry: int, back: set[tuple[int, int]]) -> list[int]:
    seen = {entry}
    post: list[int] = []
    stack = [(entry, iter(blocks[entry].succs))] if entry in blocks else []
    while stack:
        n, it = stack[-1]
        for s in it:
            if s not in seen and s in blocks and (n, s) not in back:
                seen.add(s)
                stack.append((s, iter(blocks[s].succs)))
                break
        else:
            post.append(n)
            stack.pop()
    return post[::-1] + [b for b in blocks if b not in seen]


# ---------------------------------------------------------------------------
# on-disk cache of solver answers
# ---------------------------------------------------------------------------

_memo: dict[str, object] = {}


def cache_dir() -> str:
    d = os.environ.get("KAIROS_WCET_CACHE")
    if d:
        return d
    return os.path.join(os.path.expanduser("~"), ".cache", "kairos", "wcet")


def code_key(program: Program, loop: Loop) -> bytes:
    """The bytes the answer depends on: the function's code and addresses,
    and the image's read-only data (the loads the encoding may resolve)."""
    img = program.image
    h = hashlib.sha256()
    for bs in sorted(loop.func.blocks):
        b = loop.func.blocks[bs]
        h.update(bs.to_bytes(8, "little"))
        h.update(img.read(b.start, b.end - b.start))
        h.update(repr((b.kind.value, b.succs, b.call_target)).encode())
    h.update(loop.header.to_bytes(8, "little"))
    ro = img.__dict__.get("_smt_ro_hash")
    if ro is None:
        hr = hashlib.sha256()
        for s in img.sections:
            if not s.writable and not s.nobits and not s.executable:
                hr.update(s.addr.to_bytes(8, "little") + s.data)
        ro = img.__dict__["_smt_ro_hash"] = hr.digest()
    h.update(ro)
    return h.digest()


def _answer_version() -> tuple:
    """What an answer depends on besides the query: the encoding, the
    budgets a failure was obtained under and the solver (its effort units)."""
    return (ENCODING_VERSION, LOOP_BUDGET_S, PARAMETER_BUDGET_S, RLIMIT_PER_S, CHECK_RLIMIT, MAX_STEPS,
            STEP_EFFORT, MAX_UNROLL, UNROLL_KNOWN, z3.get_version_string())


def _failure(val: object) -> bool:
    """No bound, an undecided check, or (verdict, bound) with one."""
    if isinstance(val, list) and val:
        val = val[0]
    return val is None or val == "unknown"


def cached(parts: tuple, compute: Callable[[], object], query: "LoopQuery | None" = None) -> object:
    """Memo of a JSON-serialisable answer keyed by ``parts`` (include
    ``code_key``): in memory and on disk.  A missing or unwritable cache
    directory only costs time.  A failure (None or "unknown") that
    ``query`` got because a clock, not its effort budget, ran out is kept
    in memory only: on disk it would make later runs repeat what the load of
    this one decided."""
    h = hashlib.sha256(repr(_answer_version() + parts).encode()).hexdigest()
    if h in _memo:
        return _memo[h]
    path = os.path.join(cache_dir(), h[:2], h + ".json")
    try:
        with open(path, encoding="utf-8") as fh:
            val = json.load(fh)["answer"]
        _memo[h] = val
        return val
    except (OSError, ValueError, KeyError):
        pass
    val = compute()
    _memo[h] = val
    if query is not None and query.load_dependent and _failure(val):
        return val
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + f".{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"answer": val}, fh)
        os.replace(tmp, path)
    except OSError:
        pass
    return val
