"""Micro-architectural analysis: abstract caches + pipeline → block costs.

``analyse(program, entry, model, value_info) -> BlockCosts``

* **Contexts.** Fully context-sensitive by virtual inlining, with the call
  strings of ``cfg.Program.contexts(entry)``.  The analysis runs on the
  *supergraph*: nodes are ``(context, block start)``; a ``CALL`` block flows
  into the callee's entry block in ``context + (call site,)`` and the
  callee's returning blocks flow back to the return site; ``TAILCALL``
  callees return to the tail-caller's caller.
* **Caches.** Must analysis (Ferdinand-style LRU ages, associativity
  ``CacheConfig.analysis_ways``: 1 = "only the MRU line of a set" for the
  random-replacement ``u54``) for the I-cache (every fetched line) and the
  D-cache (lines from the value analysis' address ranges; an unknown address
  ages every set).  May analysis classifies sure misses (reporting only: a
  possible miss already costs a miss).
* **Symbolic lines.** An access through a pointer of unknown value that the
  value analysis names (``ValueInfo.symbolic``) is tracked relative to that
  pointer (``cache.py`` "Symbolic lines", ``_Runs``): repeated lines of one
  object hit, and the misses of a run through one pointer are counted for
  the pointer's worst alignment and added to the block's cost.
  ``symbolic=False`` (``--no-symbolic-cache``) treats them as unknown
  addresses.
* **Line walks.** A loop whose only data accesses go through its induction
  pointer (a merge name of the header advanced by a constant stride of less
  than a line on every back edge), at offsets within one line, and that
  calls nothing, touches each line of its walk in a window of consecutive
  iterations where nothing else refills: it pays ``ceil(penalty * stride /
  line)`` per iteration and ``WALK_ENTRY_MISSES`` misses per entry instead of
  a miss per access (``_Analysis.walk``, docs/processor-model.md).
* **Copies.** A loop that loads a word and then stores it, both pointers
  walking by the same stride: a source line missed again was evicted by
  the store just before, and was clean (except once per line), so that
  store wrote nothing back: ``2m + w`` per word plus a share per line
  (``_Analysis.copy``), where the loop's bound makes it gain.
* **Persistence.** For every loop (in every context) the lines it may touch,
  callees included, are counted per cache set; if a set receives at most
  ``analysis_ways`` distinct lines and no unknown access, those lines can
  miss at most once per entry of the loop.  An access that is not a must-hit
  but is persistent in an enclosing loop costs a hit inside the block, and
  the miss is charged once per entry of the *outermost* such loop:
  ``BlockCosts.first_miss_penalty(context, header)``.
* **Pipeline.** Each block is timed with ``pipeline.step`` from an entry
  state that summarises all predecessors (register result latencies still
  outstanding, multiply/divide unit busy time, pending stores; joined by
  max/union), computed by the same fixpoint as the caches.  A block's cost is
  the cycles from its first issue slot to the first issue slot of its
  successor, so costs along any path add up to an upper bound of the
  concrete replay (``sim``) of that path.

Soundness relies on the model being monotone in every penalty (see
``model``): possible misses are charged as misses.

Value information protocol (``valueanalysis.ValueInfo``): an object with
``range(context, addr, func_entry) -> (lo, hi) | None`` giving the half-open byte
range a memory instruction at ``addr`` may touch in ``context`` (``None``:
unknown).  ``value_info=None`` treats every data address as unknown.
"""

from __future__ import annotations

import gc
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from enum import Enum
from heapq import heappop, heappush
from typing import Any, Callable, NamedTuple, Protocol

from kairos.wcet import cache as symlines
from kairos.wcet.cache import MayCache, MustCache
from kairos.wcet.cfg import BasicBlock, Context, Function, Program, Term
from kairos.wcet.errors import WcetError
from kairos.wcet.isa import Instr, InstrClass
from kairos.wcet.model import CacheLevel, ProcessorModel
from kairos.wcet.pipeline import (ANY_RANGE, MEM_CLASSES, NREGS, PipeState, Residual,
                                  join_residual, step)

__all__ = ["analyse", "AnalysisState", "BlockCosts", "AccessInfo", "Classification", "MissRecord"]

#: A loop instance: (context, header block).
LoopKey = tuple[Context, int]
#: Persistence scope of the whole run (see compute_persistence).
GLOBAL: LoopKey = ((), -1)

# Categories reported per access.
AH, AM, PS, NC, DEV = "always-hit", "always-miss", "first-miss", "not-classified", "device"
UNK = "unknown-address"
SYM = "symbolic-line"      # through a pointer of unknown value; its misses are charged per run
WALK = "line-walk"         # through the induction pointer of a line walk; charged per line (``walk``)
COPY = "copy-walk"         # the load or store of a copy loop; charged per word and line (``copy``)
OBJ = "object-loop"        # in a loop that touches one small object only; charged per entry (``object_loop``)
#: misses of a line walk charged per entry of its loop, on top of the
#: per-iteration share (the first line, the alignment, the last one)
WALK_ENTRY_MISSES = 3
#: Loops that touch one small object only are charged its lines per entry
#: (``object_loop``; False: as any symbolic access, for comparison).
OBJECT_LOOPS = True
#: An object loop may call functions whose data accesses are all through the
#: same object (``object_loop``'s callees; False: a loop with a call is no
#: object loop, as before).
OBJECT_LOOP_CALLS = True
#: An object loop may also make data accesses of no symbolic base (known
#: lines, known ranges, unknown addresses): each such access that may miss
#: is charged one more miss, for the object's line its refill may evict
#: (``object_loop``; False: such a loop is no object loop, as before).
OBJECT_LOOP_OTHERS = True
#: Symbolic accesses whose base's alignment (a way's worth: ``sets_of``)
#: leaves a few sets refill only those (False: any set, as before).
PLACED_SETS = True
#: An argument register whose value every call into its context passes from
#: one caller is named by the caller's name for that value (``canonical``),
#: so the lines the caller touched through it are the callee's too (False:
#: each function's arguments are new values, as before).
ARG_NAMES = True


class AnalysisState(NamedTuple):
    """The abstract state at a block boundary, a lattice value (immutable,
    compared by value).  ``must`` and ``may`` hold one cache state per level
    of ``ProcessorModel.caches``, in that order."""

    must: tuple[MustCache, ...]
    may: tuple[MayCache, ...]
    pipeline: Residual
    symbolic: symlines.SymState      # symbolic lines of the first data level
    # Only with the miss census (``analyse(census=True)``): what some path
    # into here guaranteed and then lost, with the access that removed it:
    # ``(("k", line) | ("s", base), (wiper address, wiper kind))``.
    # It changes no cost.
    lost: frozenset = frozenset()

    def join(self, other: "AnalysisState") -> "AnalysisState":
        return AnalysisState(tuple(map(MustCache.join, self.must, other.must)),
                             tuple(map(MayCache.join, self.may, other.may)),
                             join_residual(self.pipeline, other.pipeline),
                             symlines.sym_join(self.symbolic, other.symbolic),
                             self.lost | other.lost if self.lost is not other.lost else self.lost)

    def meet_must(self, guaranteed: tuple[MustCache, ...]) -> "AnalysisState":
        """Add what a loop guarantees on its back and exit edges (``aged``)."""
        return AnalysisState(tuple(map(MustCache.meet, self.must, guaranteed)), self.may, self.pipeline,
                             self.symbolic, self.lost)


class LoopEdge(Enum):
    """What a supergraph edge does to a loop it touches."""

    ENTRY = "entry"     # from outside into the loop (irreducible loops: at any entry block)
    BACK = "back"       # from inside to the header
    EXIT = "exit"       # from inside to outside


class FirstMiss(NamedTuple):
    """A line whose miss is charged once per entry of ``loop``."""

    loop: LoopKey
    level: int          # index into ProcessorModel.caches
    line: int


class BlockResult(NamedTuple):
    out: AnalysisState
    cycles: int
    classes: list["Classification"] | None
    first_misses: list[FirstMiss]
    census: list["MissRecord"] | None = None


# Reasons of the miss census (``MissRecord.reason``).
FIRST_TOUCH = "known line, first touch"
EVICTED = "known line, evicted"              # guaranteed on some way in, then removed by ``wiper``
KNOWN_RANGE = "one of several known lines"
UNKNOWN = "unknown address"
SYM_FIRST = "symbolic, first lines of its base"
SYM_LOST = "symbolic, base's lines evicted"  # the base had lines that ``wiper`` removed
SYM_RANGE = "symbolic, unknown offset"
WALK_SHARE = "line walk or copy, per iteration"
# Kinds of wipers: what the removing access was.
W_KNOWN = "known line"
W_RANGE = "one of several known lines"
W_UNKNOWN = "unknown address"
W_SYM = "symbolic line"
W_WALK = "line walk or copy"
W_FAR = "same base, offset too far"


@dataclass
class MissRecord:
    """One data access of a block in a context, for the miss census: the
    cycles of data-cache misses charged for it (for a symbolic run: the
    run's misses, at the access that opened it), why, the access that
    removed the line it misses on (when one did), and how many cached lines
    (known or symbolic) this access itself removed."""

    addr: int
    reason: str | None
    cycles: int
    wiper: tuple[int, str] | None = None
    wiped: int = 0
    kind: str = ""          # what this access is, as a wiper (``W_*``)


class AccessInfo(Protocol):
    def access_range(self, context: Context, addr: int) -> tuple[int, int] | None: ...


@dataclass
class Classification:
    """Per instruction of a block in a context: the I-fetch and data-access
    categories, and the penalty charged inside the block."""

    addr: int
    ifetch: str
    data: str | None
    penalty: int


@dataclass
class BlockCosts:
    model: ProcessorModel
    entry: str
    costs: dict[tuple[Context, int], int] = field(default_factory=dict)
    first_miss: dict[tuple[Context, int], int] = field(default_factory=dict)
    classes: dict[tuple[Context, int], list[Classification]] = field(default_factory=dict)
    persistent_lines: dict[tuple[Context, int], tuple[int, ...]] = field(default_factory=dict)  # per cache level
    global_first_miss: int = 0   # included in the cost of the root's entry block
    census: dict[tuple[Context, int], list[MissRecord]] = field(default_factory=dict)  # analyse(census=True)
    census_on: bool = False

    def cost(self, context: Context, block_start: int) -> int:
        """Cycles of one execution of the block in ``context``."""
        try:
            return self.costs[(tuple(context), block_start)]
        except KeyError:
            raise WcetError(f"no cost for block {block_start:#x} in context "
                            f"{'/'.join(hex(c) for c in context) or '()'}") from None

    def first_miss_penalty(self, context: Context, loop_header: int) -> int:
        """Extra cycles once per entry of the loop with this header in
        ``context`` (misses of lines that are persistent in the loop)."""
        return self.first_miss.get((tuple(context), loop_header), 0)

    def classification(self, context: Context, block_start: int) -> list[Classification]:
        return self.classes.get((tuple(context), block_start), [])


# ---------------------------------------------------------------------------


def _range_fn(value_info: Any) -> Callable[[Context, int, int], tuple[int, int] | None]:
    """Adapter: (context, instruction address, function entry) -> byte range."""
    if value_info is None:
        return lambda ctx, addr, fentry: None
    fn = getattr(value_info, "range", None)
    if callable(fn):
        return lambda ctx, addr, fentry: fn(ctx, addr, fentry)
    for name in ("access_range", "data_range", "address_range"):
        fn2 = getattr(value_info, name, None)
        if callable(fn2):
            return lambda ctx, addr, fentry, f=fn2: f(ctx, addr)
    if callable(value_info):
        return lambda ctx, addr, fentry: value_info(ctx, addr)
    raise WcetError("value information object has no range(context, addr) method")


@dataclass
class _Access:
    """A data access as seen by the caches: per cache level the lines it may
    touch (None = anything; only data levels are filled), whether it
    may/must touch a device range, the byte range."""

    lines: tuple[tuple[int, ...] | None, ...]
    device: str  # "no", "may", "all"
    brange: tuple[int, int]
    # (base, lo, hi): offsets from a symbolic base, ``base`` being its
    # canonical key (context, kind) (``_Analysis.canonical``)
    sym: tuple[Any, int, int] | None = None


class _Analysis:
    def __init__(self, program: Program, entry: str, m: ProcessorModel, value_info: Any,
                 entry_state: str = "auto", symbolic: bool = True,
                 objects: dict[int, dict[int, tuple[int, int]]] | None = None, census: bool = False) -> None:
        self.p = program
        self.census = census
        self.entry = entry
        self.m = m
        self.rng = _range_fn(value_info)
        self.value_info = value_info
        self.symbolic = getattr(value_info, "symbolic", None) if symbolic else None
        self.symbolic_defs = getattr(value_info, "symbolic_definitions", None) if symbolic else None
        # Object facts (``[[object]]``): function entry -> argument register
        # -> (bytes of its object that indexed accesses stay within, the
        # argument's alignment).
        self.objects = objects or {}
        # [[pointer]] facts: load address -> the alignment of what it loads.
        self.pointer_loads: dict[int, int] = dict(getattr(objects, "loads", {})) if symbolic else {}
        self.pointer_variables: dict[int, int] = dict(getattr(objects, "variables", {})) if symbolic else {}
        self.masked_loads: dict[int, tuple[int, int]] = dict(getattr(objects, "masked", {})) if symbolic else {}
        # Argument registers take the alignment of the caller's value
        # (``_argument_alignment``).
        self.args_at_call = getattr(value_info, "args_at_call", None) if symbolic else None
        self._callers: dict[Context, list[tuple[Context, int]]] | None = None
        # ``canonical``: (context, kind) -> (the caller's key, offset); the
        # object facts of arguments so renamed (key -> (size, align)); the
        # definitions per context whose names stand for a callee's argument.
        self.arg_names = ARG_NAMES and self.args_at_call is not None
        self._canon: dict[tuple[Context, Any], tuple[tuple[Context, Any], int]] = {}
        self._canon_facts: dict[tuple[Context, Any], tuple[int, int]] = {}
        self._canon_defs: dict[Context, set[int]] = defaultdict(set)
        # return values named by the callee (``_returned_name``)
        self.returned = getattr(value_info, "returned", None) if symbolic else None
        self._call_sites: dict[int, dict[int, int]] = {}
        self.derived_from = getattr(value_info, "derived_from", None) if symbolic else None
        self.derived_operands = getattr(value_info, "derived_operands", None) if symbolic else None
        self.sum_terms = getattr(value_info, "sum_terms", None) if symbolic else None
        self._aligns: dict[tuple[Context, Any], tuple[int, int] | None] = {}
        self._way_aligns: dict[tuple[Context, Any], tuple[int, int] | None] = {}
        self._sets: dict[tuple, frozenset[int] | None] = {}
        # ``sets_of`` off: every access of unknown set may touch any set (for comparison).
        self.placed = symbolic and PLACED_SETS
        self._def_blocks: dict[int, dict[int, BasicBlock]] = {}
        self._families: dict[tuple[Context, Any], tuple | None] = {}
        # Registers named at merge blocks, with their value on each way in
        # (``ValueInfo.merged``): their symbolic lines are carried over the
        # edge (``through_merge``).
        self.merged = getattr(value_info, "merged", None) if symbolic else None
        self.levels: tuple[CacheLevel, ...] = m.caches
        # Instructions in the model's ITIM are fetched without the I-cache:
        # no line, no miss (model.ProcessorModel.itim_ranges).
        self.itim = bool(m.itim_ranges)
        self.fetch_levels = [k for k, lv in enumerate(self.levels) if lv.serves == "fetch"]
        self._fetch_plan = [(k, self.levels[k].config.line, self.levels[k].miss_penalty) for k in self.fetch_levels]
        self.data_levels = [k for k, lv in enumerate(self.levels) if lv.serves == "data"]
        if not self.data_levels:
            raise WcetError(f"processor model {m.name} has no data cache level")
        # Symbolic lines are tracked in the first data level.
        self.sym_level = self.data_levels[0]
        sym_cfg = self.levels[self.sym_level].config
        # Bytes of one base whose lines are all in different sets.
        self.sym_span = (sym_cfg.sets - 1) * sym_cfg.line
        self.ctx_func: dict[Context, Function] = {}
        for ctx, f in program.contexts(entry):
            self.ctx_func[ctx] = f
        self._access_cache: dict[tuple[Context, int], _Access] = {}
        self._loops: dict[int, Any] = {}
        self._walks: dict[tuple[Context, int], tuple[Any, int] | None] = {}
        self._objloops: dict[tuple[Context, int], int | None] = {}
        # object loops with calls: the callee contexts entered from the loop
        self._objloop_callees: dict[tuple[Context, int], frozenset[Context]] = {}
        # object loops with accesses of no symbolic base (``OBJECT_LOOP_OTHERS``)
        self._objloop_others: set[tuple[Context, int]] = set()
        self.table_ranges = _switch_table_ranges(program, self.rng)
        if entry_state not in ("auto", "idle", "trap"):
            raise WcetError(f"bad entry state {entry_state!r} (auto, idle or trap)")
        if entry_state == "auto":
            traps = any(b.kind is Term.TRAP_RETURN for f in self.ctx_func.values() for b in f.blocks.values())
            entry_state = "trap" if traps else "idle"
        self.entry_state = entry_state

    # -- helpers ---------------------------------------------------------
    def ilines(self, ins: Instr, level: int) -> tuple[int, ...]:
        """The lines of ``level`` that fetching ``ins`` touches."""
        size = self.levels[level].config.line
        a = ins.addr // size
        b = (ins.addr + ins.size - 1) // size
        return (a,) if a == b else (a, b)

    def _too_wide(self, lo: int, hi: int, level: int) -> bool:
        """Whether ``[lo, hi)`` covers so many lines of ``level`` that
        naming them gains nothing over an unknown access."""
        cfg = self.levels[level].config
        return (hi - lo) // cfg.line + 1 >= cfg.sets * max(1, cfg.analysis_ways) * 4

    def daccess(self, ctx: Context, ins: Instr) -> _Access:
        key = (ctx, ins.addr)
        acc = self._access_cache.get(key)
        if acc is not None:
            return acc
        r = self.rng(ctx, ins.addr, self.ctx_func[ctx].entry)
        tr = self.table_ranges.get(ins.addr)
        if tr is not None:
            r = tr if r is None else (max(r[0], tr[0]), min(r[1], tr[1]))
            if r[1] <= r[0]:
                r = tr
        wide = r is None or self._too_wide(int(r[0]), int(r[1]), self.sym_level)
        if wide and self.symbolic is not None and tr is None and (r is None or not self.m.is_device(*r)):
            # An unknown address, or one of too many lines: through a
            # symbolic base (assumed not to be a device unless the value
            # analysis says it may be one).
            sym = self.symbolic(self.ctx_func[ctx].entry, ins.addr)
            if sym is not None:
                skey, off = self.canonical(ctx, sym[0])
                sym = (skey, sym[1] + off, sym[2] + off)
                acc = _Access((None,) * len(self.levels), "no",
                              ANY_RANGE if r is None else (int(r[0]), int(r[1])), sym)
                self._access_cache[key] = acc
                return acc
        if r is None:
            lo, hi = ANY_RANGE
        else:
            lo, hi = int(r[0]), int(r[1])
            if hi <= lo:
                hi = lo + max(1, ins.mem_width)
        m = self.m
        if m.is_all_device(lo, hi):
            acc = _Access(((),) * len(self.levels), "all", (lo, hi))
        else:
            dev = "may" if m.is_device(lo, hi) else "no"
            lines: list[tuple[int, ...] | None] = [None] * len(self.levels)
            for k in self.data_levels:
                size = self.levels[k].config.line
                first, last = lo // size, (hi - 1) // size
                if r is not None and not self._too_wide(first * size, last * size, k):
                    lines[k] = tuple(range(first, last + 1))
            acc = _Access(tuple(lines), dev, (lo, hi))
        self._access_cache[key] = acc
        return acc

    def loops_of(self, f: Function):
        lf = self._loops.get(f.entry)
        if lf is None:
            from kairos.wcet.loops import find_loops
            lf = find_loops(f)
            self._loops[f.entry] = lf
        return lf

    def walk(self, ctx: Context, header: int) -> tuple[int, int] | None:
        """``(register, stride)`` when the loop with this header in ``ctx``
        is a *line walk*: the loop calls nothing; every data access in it is
        through ``register``, a pointer of unknown value into cacheable
        memory (known lines are left to persistence), at immediates that lie within one line
        together with the stride; and the register's only write in the loop
        is ``addi register, register, stride``, ``0 < |stride| < line``, in a
        block on every way round the loop.  Then the accesses of one
        iteration touch at most two adjacent lines, a line is touched in
        consecutive iterations only (the walk never comes back to it), and
        the only refills in the loop are the walk's own new lines, in other
        sets than the lines in use (consecutive lines are in consecutive
        sets): a line, once loaded, stays until the walk has left it,
        whatever the replacement.  None otherwise (a second pointer, an
        unknown address, a stack access that may refill, an unknown or too
        large stride, a register written elsewhere)."""
        got = self._walks.get((ctx, header), False)
        if got is not False:
            return got
        got = None
        f = self.ctx_func.get(ctx)
        if f is not None:
            loop = self._reducible_loop(f, header)
            if loop is not None:
                got = self._walk_in(ctx, f, loop)
        self._walks[(ctx, header)] = got
        return got

    def _reducible_loop(self, f: Function, header: int):
        """The reducible loop of f with this header, or None."""
        return next((lp for lp in self.loops_of(f).loops if lp.header == header and not lp.irreducible), None)

    @staticmethod
    def _calls_in(f: Function, loop) -> bool:
        """Whether a block of the loop ends in a call (walk and copy rules
        only hold for loops whose every access is in sight)."""
        return any(f.blocks[bs].kind in (Term.CALL, Term.TAILCALL) for bs in loop.blocks)

    def _walk_in(self, ctx: Context, f: Function, loop) -> tuple[int, int] | None:
        if self._calls_in(f, loop):
            return None
        line = self.levels[self.sym_level].config.line
        reg, lo, hi = None, None, None
        steps: list[tuple[int, Instr]] = []
        for bs in loop.blocks:
            blk = f.blocks[bs]
            for ins in blk.instrs:
                if ins.cls in MEM_CLASSES:
                    if not ins.rs1 or ins.rs1 == 2 or reg is not None and ins.rs1 != reg:
                        return None
                    acc = self.daccess(ctx, ins)
                    if acc.device != "no" or acc.sym is None:
                        return None
                    reg = ins.rs1
                    imm = ins.imm if ins.cls in (InstrClass.LOAD, InstrClass.FP_LOAD, InstrClass.STORE,
                                                 InstrClass.FP_STORE) else 0
                    lo = imm if lo is None else min(lo, imm)
                    hi = imm + ins.mem_width if hi is None else max(hi, imm + ins.mem_width)
        if reg is None:
            return None
        for bs in loop.blocks:
            for ins in f.blocks[bs].instrs:
                if reg in ins.writes:
                    steps.append((bs, ins))
        if len(steps) != 1:
            return None
        bs, ins = steps[0]
        stride = ins.imm
        if ins.mnemonic != "addi" or ins.rs1 != reg or ins.rd != reg or not 0 < abs(stride) < line \
                or hi - lo + abs(stride) > line:
            return None
        # the step's block is on every way round: without it, no back edge is reached from the header
        seen, todo = {bs}, [loop.header] if loop.header != bs else []
        latches = {u for u, _t in loop.back_edges}
        while todo:
            b = todo.pop()
            if b in latches:
                return None
            if b in seen:
                continue
            seen.add(b)
            todo.extend(t for t in f.blocks[b].succs if t in loop.blocks and t not in seen)
        return reg, stride

    def object_loop(self, ctx: Context, header: int) -> int | None:
        """The lines the loop with this header in ``ctx`` may touch when it
        is an *object loop* (docs/processor-model.md "Object loops"): every
        data access in it, and in the functions it calls (``_loop_callees``,
        with ``OBJECT_LOOP_CALLS``), goes through one object of an object
        fact (the argument, and bases derived from it by an index), whose
        byte ranges (the argument's offsets, ``[0, size)`` for a derived
        base) span at most ``sym_span`` bytes together.  Those lines lie in
        different sets and nothing else in the loop refills, so each misses
        at most once per entry of the loop.  None otherwise."""
        got = self._objloops.get((ctx, header), False)
        if got is not False:
            return got
        got = None
        f = self.ctx_func.get(ctx)
        loop = self._reducible_loop(f, header) if f is not None else None
        callees: frozenset[Context] | None = frozenset()
        if loop is not None and self._calls_in(f, loop):
            callees = self._loop_callees(ctx, f, loop) if OBJECT_LOOP_CALLS else None
        if loop is not None and callees is not None:
            root, lo, hi = None, None, None
            others = False
            where = [(ctx, f, loop.blocks)] + [(c, self.ctx_func[c], list(self.ctx_func[c].blocks))
                                               for c in sorted(callees, key=repr)]
            for cx, fx, blocks in where:
                for bs in blocks:
                    for ins in fx.blocks[bs].instrs:
                        if ins.cls not in MEM_CLASSES:
                            continue
                        acc = self.daccess(cx, ins)
                        if acc.sym is None and OBJECT_LOOP_OTHERS:
                            others = True          # charged as usual, plus the line it may evict
                            continue
                        fam = self.family(acc.sym[0]) if acc.sym is not None and acc.device == "no" else None
                        if fam is None or root is not None and fam[0] != root:
                            self._objloops[(ctx, header)] = None
                            return None
                        root = fam[0]
                        a, b = (acc.sym[1], acc.sym[2]) if fam[1] is None else fam[1]
                        lo, hi = (a, b) if lo is None else (min(lo, a), max(hi, b))
            if root is not None and hi - lo <= self.sym_span:
                line = self.levels[self.sym_level].config.line
                al = self.alignment(root) or (1, 0)
                got = max((p + hi - 1) // line - (p + lo) // line + 1 for p in range(al[1] % al[0], line, al[0]))
                if callees:
                    self._objloop_callees[(ctx, header)] = callees
                if others:
                    self._objloop_others.add((ctx, header))
        self._objloops[(ctx, header)] = got
        return got

    def _loop_callees(self, ctx: Context, f: Function, loop) -> frozenset[Context] | None:
        """The contexts of the functions a loop calls, and of theirs, when
        each is entered only from there (a full call string below the loop's
        call sites), has no loop, and ends only in returns, calls of known
        targets and halts: their every execution is then inside an
        iteration of the loop, and their accesses are all in sight.  None
        otherwise (an indirect call, a shared context, an ``ecall``, a
        ``wfi``, a trap return, a loop)."""
        out: set[Context] = set()
        todo = [(ctx, f.blocks[bs]) for bs in loop.blocks]
        while todo:
            cx, b = todo.pop()
            if b.kind in (Term.ECALL, Term.WFI, Term.TRAP_RETURN):
                return None
            if b.kind not in (Term.CALL, Term.TAILCALL):
                continue
            if b.call_target is None:
                return None
            sub = self.p.callee_context(cx, b.last.addr, b.call_target)
            fs = self.ctx_func.get(sub)
            if fs is None or sub in out or sub == ctx:
                return None
            if self.loops_of(fs).loops:
                return None
            if self._callers is None:
                self._callers = self.p.context_callers(self.entry)
            if len(self._callers.get(sub, ())) != 1:
                return None
            out.add(sub)
            todo.extend((sub, blk) for blk in fs.blocks.values())
        return frozenset(out)

    def walk_share(self, ctx: Context, header: int) -> int:
        """Cycles per iteration of a line walk's or a copy's loop (charged on its header)."""
        got = self.walk_charges.get((ctx, header))
        return got[0] if got else 0

    def copy(self, ctx: Context, header: int) -> int | None:
        """The stride of a *copy walk* (docs/processor-model.md "Copies"):
        the loop calls nothing; its only data accesses are one load and,
        after it, one store, both in the header block, through pointers of
        unknown value into cacheable memory; the load's register is
        advanced by ``addi r, r, s`` (``0 < |s| < line``) in the header and
        written nowhere else in the loop; the store's register likewise, or
        computed in the header as the load's register plus a register the
        loop does not write (the same stride).  None otherwise."""
        f = self.ctx_func.get(ctx)
        if f is None or self.symbolic is None:
            return None
        loop = self._reducible_loop(f, header)
        if loop is None or self._calls_in(f, loop):
            return None
        line = self.levels[self.sym_level].config.line
        head = f.blocks[header]
        mems: list[Instr] = []
        written: dict[int, list[Instr]] = defaultdict(list)
        for bs in loop.blocks:
            blk = f.blocks[bs]
            for ins in blk.instrs:
                if ins.cls in MEM_CLASSES:
                    if bs != header:
                        return None
                    mems.append(ins)
                for r in ins.writes:
                    written[r].append(ins)
        if len(mems) != 2 or mems[0].cls is not InstrClass.LOAD or mems[1].cls is not InstrClass.STORE:
            return None
        for ins in mems:
            acc = self.daccess(ctx, ins)
            if acc.sym is None or acc.device != "no" or not ins.rs1 or ins.rs1 == 2:
                return None
        r1, r2 = mems[0].rs1, mems[1].rs1
        step = written.get(r1, [])
        if r1 == r2 or len(step) != 1 or step[0] not in head.instrs or step[0].mnemonic != "addi" \
                or step[0].rs1 != r1:
            return None
        stride = step[0].imm
        if not 0 < abs(stride) < line:
            return None
        d = written.get(r2, [])
        if len(d) != 1 or d[0] not in head.instrs:
            return None
        d = d[0]
        same = d.mnemonic == "addi" and d.rs1 == r2 and d.imm == stride
        derived = d.mnemonic == "add" and r1 in (d.rs1, d.rs2) and \
            not written.get(d.rs2 if d.rs1 == r1 else d.rs1) and d.rs1 != d.rs2
        if not (same or derived):
            return None
        for ins in mems:
            if ins.mem_width + abs(stride) > line:
                return None
        return stride

    def _charges(self) -> None:
        """``walk_charges``: per line walk or copy loop, the cycles charged per
        execution of its header and per entry (docs/processor-model.md)."""
        self.walk_charges: dict[LoopKey, tuple[int, int]] = {}
        lv = self.levels[self.sym_level]
        line, pen = lv.config.line, lv.miss_penalty
        m, w = self.m.memory_latency, self.m.writeback_latency
        for lk in set(self.block_walk.values()):
            wk = self.walk(*lk)
            if wk is not None:
                self.walk_charges[lk] = (-(-pen * abs(wk[1]) // line), WALK_ENTRY_MISSES * pen)
                continue
            n = self.object_loop(*lk) if OBJECT_LOOPS else None
            if n is not None:
                self.walk_charges[lk] = (0, n * pen)
                continue
            s = self.copy(*lk)
            self.walk_charges[lk] = (2 * m + w + -(-(m + 2 * w) * abs(s) // line),
                                     WALK_ENTRY_MISSES * (m + 2 * w) + (m + w))

    def exits(self, ctx: Context, memo: dict) -> list[tuple[Context, int]]:
        """Blocks (in contexts) whose end returns from the function of ctx."""
        got = memo.get(ctx)
        if got is not None:
            return got
        f = self.ctx_func[ctx]
        out: list[tuple[Context, int]] = []
        memo[ctx] = out
        for b in f.blocks.values():
            if b.kind is Term.RETURN:
                out.append((ctx, b.start))
            elif b.kind is Term.TAILCALL and b.call_target is not None:
                sub = self.p.callee_context(ctx, b.last.addr, b.call_target)
                if sub in self.ctx_func:
                    out.extend(self.exits(sub, memo))
        return out

    # -- supergraph ----------------------------------------------------
    def build_graph(self) -> None:
        nodes: list[tuple[Context, int]] = []
        index: dict[tuple[Context, int], int] = {}
        for ctx, f in self.ctx_func.items():
            for s in f.blocks:
                index[(ctx, s)] = len(nodes)
                nodes.append((ctx, s))
        succ: list[list[int]] = [[] for _ in nodes]
        # For every edge: the block of the *target's* function the edge comes
        # from (the call block for return edges; None for call edges).
        self.edge_src: dict[tuple[int, int], int | None] = {}
        memo: dict = {}
        for i, (ctx, s) in enumerate(nodes):
            f = self.ctx_func[ctx]
            b = f.blocks[s]
            if b.kind in (Term.CALL, Term.TAILCALL) and b.call_target is not None:
                sub = self.p.callee_context(ctx, b.last.addr, b.call_target)
                callee = self.ctx_func.get(sub)
                if callee is None:
                    raise WcetError(f"internal: no context for call at {b.last.addr:#x}")
                succ[i].append(index[(sub, callee.entry)])
                self.edge_src[(i, index[(sub, callee.entry)])] = None
                if b.kind is Term.CALL:
                    for rs in b.succs:
                        ret = index[(ctx, rs)]
                        for e in self.exits(sub, memo):
                            succ[index[e]].append(ret)
                            self.edge_src[(index[e], ret)] = s
            else:
                for t in b.succs:
                    succ[i].append(index[(ctx, t)])
                    self.edge_src[(i, index[(ctx, t)])] = s
        self.nodes, self.index, self.succ = nodes, index, succ
        root = self.ctx_func[()]
        self.root = index[((), root.entry)]
        # reverse post-order priorities
        order: list[int] = []
        seen = [False] * len(nodes)
        stack = [(self.root, 0)]
        seen[self.root] = True
        while stack:
            n, k = stack.pop()
            if k < len(succ[n]):
                stack.append((n, k + 1))
                t = succ[n][k]
                if not seen[t]:
                    seen[t] = True
                    stack.append((t, 0))
            else:
                order.append(n)
        order.reverse()
        self.prio = [len(nodes)] * len(nodes)
        for k, n in enumerate(order):
            self.prio[n] = k
        self.reachable = seen

    # -- loops and persistence ------------------------------------------
    def compute_persistence(self) -> None:
        """For each block in context: the enclosing loops, outermost first,
        as (context, header) keys; and, per loop, the persistent lines."""
        # Loops around each context's execution, including those around its
        # call sites.  A shared context (Program.flatten) has several callers:
        # ``around_all`` holds the loops around *every* call of it (where a
        # first miss may be charged), ``around_any`` those around *some* call
        # (whose touched lines include the context's).
        callers = self.p.context_callers(self.entry)
        loops_by_ctx: dict[Context, Any] = {ctx: self.loops_of(f) for ctx, f in self.ctx_func.items()}
        self.loops_by_ctx = loops_by_ctx
        around_all: dict[Context, list[tuple[Context, int]]] = {(): []}
        around_any: dict[Context, list[tuple[Context, int]]] = {(): []}

        # The shared contexts of one recursion (cfg._recursion) call each
        # other: resolved together from the callers outside the group, with
        # no loop around every call (first misses charged inside) and every
        # loop around any call of any member (their touched lines).
        groups = {(-fe,): frozenset((-g_,) for g_ in scc) for fe, scc in self.p.recursive_scc.items()}

        def resolve_group(grp: frozenset) -> None:
            anys: list[tuple[Context, int]] = []
            for c in sorted(grp):
                for pc, site_block in callers.get(c, []):
                    for k in ([] if pc in grp else around_any[pc]) + \
                            self._block_loops(pc, loops_by_ctx[pc], site_block):
                        if k not in anys:
                            anys.append(k)
            for c in grp:
                around_all[c], around_any[c] = [], anys

        def resolve(ctx: Context) -> None:
            stack = [ctx]
            while stack:
                c = stack[-1]
                if c in around_all:
                    stack.pop()
                    continue
                grp = groups.get(c)
                if grp is not None:
                    pend = [pc for g_ in grp for pc, _ in callers.get(g_, [])
                            if pc not in grp and pc not in around_all]
                    if pend:
                        stack.extend(pend)
                        continue
                    stack.pop()
                    resolve_group(grp)
                    continue
                pend = [pc for pc, _ in callers.get(c, []) if pc not in around_all]
                if pend:
                    stack.extend(pend)
                    continue
                stack.pop()
                alls: list[list[tuple[Context, int]]] = []
                anys: list[tuple[Context, int]] = []
                for pc, site_block in callers.get(c, []):
                    here = self._block_loops(pc, loops_by_ctx[pc], site_block)
                    alls.append(around_all[pc] + here)
                    for k in around_any[pc] + here:
                        if k not in anys:
                            anys.append(k)
                if alls:
                    common = set(alls[0]).intersection(*alls[1:])
                    around_all[c] = [k for k in alls[0] if k in common]
                else:
                    around_all[c] = []
                around_any[c] = anys

        for ctx in self.ctx_func:
            resolve(ctx)
        self.around_all, self.around_any = around_all, around_any
        # Lines touched per loop key, per cache level.
        nlev = len(self.levels)
        touch: list[dict[LoopKey, set[int]]] = [defaultdict(set) for _ in range(nlev)]
        unknown: list[set[LoopKey]] = [set() for _ in range(nlev)]
        uses: list[dict[int, int]] = [defaultdict(int) for _ in range(nlev)]
        self.block_loops: dict[tuple[Context, int], list[LoopKey]] = {}
        # The whole run is the outermost persistence scope when the root's
        # entry block runs exactly once (it is not a loop header): its
        # first misses are charged to that block.
        root = self.ctx_func[()]
        top = [GLOBAL] if loops_by_ctx[()].by_header(root.entry) is None else []
        for ctx, f in self.ctx_func.items():
            lf = loops_by_ctx[ctx]
            for b in f.blocks.values():
                own = self._block_loops(ctx, lf, b.start)
                self.block_loops[(ctx, b.start)] = top + around_all[ctx] + own
                keys = top + around_any[ctx] + own
                if not keys:
                    continue
                lines, unk = self._block_lines(ctx, b)
                # uses of each line outside loops (for the whole-run scope)
                weight = 2 if len(keys) > len(top) else 1
                for k in range(nlev):
                    for lk in keys:
                        touch[k][lk] |= lines[k]
                        if unk[k]:
                            unknown[k].add(lk)
                    for ln in lines[k]:
                        uses[k][ln] += weight
        self.touch, self.unknown = touch, unknown
        self.persist: list[dict[LoopKey, set[int]]] = [{} for _ in range(nlev)]
        scopes = set().union(*touch)
        for k, lv in enumerate(self.levels):
            for lk in scopes:
                self.persist[k][lk] = set() if lk in unknown[k] else \
                    _persistent(touch[k].get(lk, set()), lv.config.sets, lv.config.analysis_ways)
            # The whole-run scope charges its lines once per run whether or
            # not the worst path uses them.  A line used by a single block
            # outside any loop gains nothing from it (that block runs at most
            # once per run) and may be off the worst path: it is charged
            # where it is used.
            if GLOBAL in self.persist[k]:
                self.persist[k][GLOBAL] = {ln for ln in self.persist[k][GLOBAL] if uses[k][ln] >= 2}

    def _block_lines(self, ctx: Context, b: BasicBlock) -> tuple[list[set[int]], list[bool]]:
        """Per cache level: the lines block ``b`` may touch in ``ctx``, and
        whether it may touch any line (an unknown address, ``fence.i``)."""
        lines: list[set[int]] = [set() for _ in self.levels]
        unk = [False] * len(self.levels)
        for ins in b.instrs:
            for k in (() if self.itim and self.m.in_itim(ins.addr) else self.fetch_levels):
                lines[k].update(self.ilines(ins, k))
                if ins.cls is InstrClass.FENCE_I:
                    unk[k] = True
            if ins.cls in MEM_CLASSES:
                acc = self.daccess(ctx, ins)
                if acc.device == "all":
                    continue
                for k in self.data_levels:
                    if acc.lines[k] is None:
                        unk[k] = True
                    else:
                        lines[k].update(acc.lines[k])
        return lines, unk

    @staticmethod
    def _block_loops(ctx: Context, lf, start: int | None) -> list[tuple[Context, int]]:
        if start is None:
            return []
        lp = lf.innermost.get(start)
        chain = []
        while lp is not None:
            chain.append((ctx, lp.header))
            lp = lp.parent
        chain.reverse()
        return chain

    def persistent_loop(self, key: tuple[Context, int], lines: tuple[int, ...], level: int) -> LoopKey | None:
        """Outermost enclosing loop in which all ``lines`` of ``level`` are
        persistent."""
        table = self.persist[level]
        for lk in self.block_loops.get(key, []):
            pl = table.get(lk)
            if pl is not None and all(ln in pl for ln in lines):
                return lk
        return None

    def through_merge(self, i: int, t: int, st: AnalysisState) -> AnalysisState:
        """The state on the edge from node ``i`` into a merge block ``t``:
        each register the merge names, ``("p", t, r)``, holds on this edge
        the value it had at the end of the predecessor block; when that is
        a symbolic base plus a constant, the base's cached lines are the new
        name's (the same bytes).  Otherwise the name starts with no lines
        (it is a new value)."""
        tctx, tb = self.nodes[t]
        phis = self.merged(self.ctx_func[tctx].entry, tb)
        if not phis:
            return st
        src = self.edge_src.get((i, t))
        orig = dict(st.symbolic)
        sym = dict(orig)
        for r, incoming in phis.items():
            key = (tctx, ("p", tb, r))
            val = incoming.get(src) if src is not None else None
            iv: tuple = ()
            if val is not None and isinstance(val[0], tuple) and val[1] == val[2]:
                ckey, coff = self.canonical(tctx, val[0])
                have = orig.get(ckey)
                if have:
                    iv = tuple((a - val[1] - coff, b - val[1] - coff) for a, b in have)
            if iv:
                sym[key] = iv
            else:
                sym.pop(key, None)
        if sym == orig:
            return st
        return st._replace(symbolic=tuple(sorted(sym.items(), key=lambda kv: repr(kv[0]))))

    def family(self, key: tuple[Context, Any]):
        """For a symbolic base ``(context, kind)`` covered by an object fact:
        ``(root, extent)``, ``root`` being the argument's base and
        ``extent`` None for the argument itself (its lines are at their
        offsets) or the byte range ``(0, size)`` of the argument's object
        where every line of a base derived from it by an index lies.  None
        for other bases."""
        if not self.objects:
            return None
        got = self._families.get(key, False)
        if got is not False:
            return got
        ctx, kind = key
        fe = self.ctx_func[ctx].entry
        facts = self.objects.get(fe)
        got = None
        if key in self._canon_facts:
            got = (key, None)                 # the caller's name of an argument an object fact covers
        elif facts and isinstance(kind, tuple):
            if kind[0] == "a" and kind[1] in facts:
                got = (self.canonical(ctx, kind)[0], None)
            elif kind[0] in ("d", "p") and self.derived_from is not None:
                r = self.derived_from(fe, kind)
                if r is not None and r in facts:
                    got = (self.canonical(ctx, ("a", r))[0], (0, facts[r][0]))
        self._families[key] = got
        return got

    def alignment(self, key: tuple[Context, Any], cap: int | None = None) -> tuple[int, int] | None:
        """``(m, r)``: the base ``(context, kind)`` is ``r`` modulo ``m`` (a
        power of two, at most a line, or at most ``cap``), for an argument
        an object fact gives an alignment, and for a base derived from it by
        an ``add`` whose index operand's residue the instructions before it
        in its block show (``_congruence``); None where nothing is known.
        With ``cap`` a way (``sets * line``) it places the base's lines in
        sets (``sets_of``)."""
        if cap == self.levels[self.sym_level].config.line:
            cap = None
        aligns = self._aligns if cap is None else self._way_aligns
        got = aligns.get(key, False)
        if got is not False:
            return got
        got = None
        ctx, kind = key
        line = cap or self.levels[self.sym_level].config.line
        fam = self.family(key)
        if fam is not None and not (fam[1] is None and key in self._canon_facts):
            fe = self.ctx_func[ctx].entry
            size_align = self.objects[fe][kind[1] if fam[1] is None else self.derived_from(fe, kind)]
            root = min(size_align[1], line)
            if fam[1] is None:
                got = (root, 0) if root > 1 else None
            elif kind[0] == "d" and self.derived_operands is not None:
                ops = self.derived_operands(fe, kind)
                if ops is not None:
                    m, r = self._congruence(fe, kind[1], ops[1], line)
                    m = min(m, root)
                    if m > 1:
                        got = (m, (ops[0] + r) % m)
            elif kind[0] == "p" and self.merged is not None:
                aligns[key] = None              # a loop through this merge: nothing
                got = self._merged_alignment(ctx, fe, kind, line)
        elif isinstance(kind, tuple) and kind[0] == "d" and len(kind) == 2 and self._loads_pointer(ctx, kind[1]):
            # The value a [[pointer]] load site loads: NULL or a multiple
            # of the fact's alignment, so 0 modulo it either way.
            m = min(self._loads_pointer(ctx, kind[1]), line)
            got = (m, 0) if m > 1 else None
        elif isinstance(kind, tuple) and kind[0] == "d" and len(kind) == 2 and self.value_info is not None:
            # A value computed by an instruction (a mask, a shift, a sum):
            # its low bits follow from the instruction and the operands'
            # known low bits in its block (``& ~31`` clears five bits
            # whatever the operand; ``x << 5`` too; a sum keeps the
            # smaller alignment of its two operands).
            fe = self.ctx_func[ctx].entry
            m, r = self._congruence(fe, kind[1], None, line)
            # An argument plus an index (``derived_from``) where no object
            # fact covers the argument: the argument's own alignment in this
            # context (a queue passed as &global) with the index's residue.
            arg = self.derived_from(fe, kind) if self.derived_from is not None else None
            ops = self.derived_operands(fe, kind) if arg is not None and self.derived_operands is not None \
                else None
            if ops is not None:
                aligns[key] = None              # a recursive way round: nothing
                a = self.alignment((ctx, ("a", arg)), cap)
                if a is not None:
                    mi, ri = self._congruence(fe, kind[1], ops[1], line)
                    m2 = min(a[0], mi)
                    if m2 > m:
                        m, r = m2, (a[1] + ops[0] + ri) % m2
            # A sum of two named values or constants (``x + (i << 6)``,
            # ``x`` defined in another block): the operands' alignments add.
            terms = self.sum_terms(fe, kind) if self.sum_terms is not None else None
            if terms is not None:
                aligns[key] = None              # a recursive way round: nothing
                parts = [self._term_alignment(ctx, t, cap, line) for t in terms]
                if parts[0] is not None and parts[1] is not None:
                    m2 = min(parts[0][0], parts[1][0])
                    if m2 > m:
                        m, r = m2, (parts[0][1] + parts[1][1]) % m2
            got = (m, r) if m > 1 else None
        elif isinstance(kind, tuple) and kind[0] == "p" and self.merged is not None:
            # A merge of values of known alignment (a list walk's cursor).
            aligns[key] = None                  # a loop through this merge: nothing
            got = self._merged_alignment(ctx, self.ctx_func[ctx].entry, kind, line)
        elif isinstance(kind, tuple) and kind[0] == "a" and 10 <= kind[1] <= 17 and self.args_at_call is not None:
            aligns[key] = None                  # a recursive way round: nothing
            got = self._argument_alignment(ctx, kind[1], line)
        fact = self._canon_facts.get(key)
        if fact is not None and min(fact[1], line) > 1 and (got is None or got[0] < min(fact[1], line)):
            got = (min(fact[1], line), 0)       # a callee's object fact on this very value
        aligns[key] = got
        return got

    def canonical(self, ctx: Context, kind: Any) -> tuple[tuple[Context, Any], int]:
        """The key under which the symbolic lines of base ``kind`` in
        ``ctx`` are tracked, and the offset of ``kind`` from it: for an
        argument register a0..a7 of a context entered from one call site
        (a full call string), the caller's name for the value it passes
        there plus its constant offset, followed up the call string; the
        base itself otherwise.  The register holds exactly that value at
        the call, and the caller's name cannot be redefined while the
        callee runs (no recursion), so both names mean one value
        (processor-model.md §3 "Argument names")."""
        key = (ctx, kind)
        got = self._canon.get(key)
        if got is not None:
            return got
        got = (key, 0)
        self._canon[key] = got              # a way round (none without recursion): itself
        if self.arg_names and isinstance(kind, tuple) and kind[0] == "d" and len(kind) == 2 \
                and self.returned is not None:
            got = self._returned_name(ctx, kind[1]) or got
        elif self.arg_names and isinstance(kind, tuple) and kind[0] == "a" and 10 <= kind[1] <= 17 \
                and ctx and ctx[0] >= 0:
            if self._callers is None:
                self._callers = self.p.context_callers(self.entry)
            callers = self._callers.get(ctx, ())
            cctx, site_block = callers[0] if len(callers) == 1 else (None, None)
            cf = self.ctx_func.get(cctx) if cctx is not None else None
            vals = self.args_at_call(cf.blocks[site_block].last.addr) if cf is not None else None
            val = vals[kind[1] - 10] if vals is not None else None
            if val is not None and isinstance(val[0], tuple) and val[1] == val[2] \
                    and not getattr(self.value_info, "may_be_device", lambda *_: True)(cf.entry, val[0]):
                top, off = self.canonical(cctx, val[0])
                off += val[1]
                fact = self.objects.get(self.ctx_func[ctx].entry, {}).get(kind[1])
                if fact is None:
                    got = (top, off)
                elif off == 0 and self._own_family(top) in (None, (top, None)):
                    # an object fact's argument: its family is rooted at the
                    # caller's name (``family``), with the fact's alignment
                    old = self._canon_facts.get(top)
                    self._canon_facts[top] = fact if old is None or old[1] < fact[1] else old
                    self._families.pop(top, None)
                    self._aligns.pop(top, None)
                    self._way_aligns.pop(top, None)
                    got = (top, 0)
                if got[0] != key and got[0][1][0] == "d":
                    self._canon_defs[got[0][0]].add(got[0][1][1])
        self._canon[key] = got
        return got

    def _returned_name(self, ctx: Context, addr: int) -> tuple[tuple[Context, Any], int] | None:
        """For the value a call instruction at ``addr`` names (a0 after the
        call): the callee's name for what it returns, in the callee's
        context, when every return of the callee gives it (plus one
        constant) and that context is entered from this call alone (not
        shared): it is entered again only when this call runs again,
        which also redefines the caller's name.  None otherwise."""
        f = self.ctx_func.get(ctx)
        if f is None:
            return None
        calls = self._call_sites.get(f.entry)
        if calls is None:
            calls = self._call_sites[f.entry] = {f.blocks[bs].last.addr: callee for bs, callee in f.calls
                                                 if f.blocks[bs].kind is Term.CALL}
        callee = calls.get(addr)
        if callee is None:
            return None
        cctx = self.p.callee_context(ctx, addr, callee)
        cf = self.ctx_func.get(cctx)
        if cf is None or not cctx or cctx[0] < 0:
            return None
        val = self.returned(cf.entry)
        if val is None or getattr(self.value_info, "may_be_device", lambda *_: True)(cf.entry, val[0]):
            return None
        if isinstance(val[0], tuple) and val[0][0] == "a" and val[0][1] == 2:
            return None                 # the callee's stack: gone once it returns
        top, off = self.canonical(cctx, val[0])
        if top[1][0] == "d":
            self._canon_defs[top[0]].add(top[1][1])
        return (top, off + val[1])

    def _own_family(self, key: tuple[Context, Any]):
        """``family`` by the base's own function's object facts only."""
        ctx, kind = key
        facts = self.objects.get(self.ctx_func[ctx].entry) if self.objects else None
        if not facts or not isinstance(kind, tuple):
            return None
        if kind[0] == "a":
            return (key, None) if kind[1] in facts else None
        r = self.derived_from(self.ctx_func[ctx].entry, kind) if kind[0] in ("d", "p") and self.derived_from else None
        return (key, (0, 0)) if r is not None and r in facts else None

    def sets_of(self, key: tuple[Context, Any], lo: int, hi: int) -> frozenset[int] | None:
        """The sets of the first data level that bytes ``[lo, hi)`` from the
        base ``key`` may fall into, when the base's alignment places them
        (``alignment`` with a way as the cap: ``r`` modulo ``m``, ``m`` at
        least a line, so the base is one of ``way / m`` positions in a way);
        None when that could be any set.  A refill by such an access is in
        one of these sets, and a line there is in one of them: nothing else
        can be evicted by it, or evict it (processor-model.md §3)."""
        ck = (key, lo, hi)
        got = self._sets.get(ck, False)
        if got is not False:
            return got
        cfg = self.levels[self.sym_level].config
        way = cfg.sets * cfg.line
        got = None
        a = self.alignment(key, way) if hi > lo else None
        if a is not None and a[0] >= cfg.line:
            m, r = a
            out: set[int] = set()
            for k in range(way // m):
                first, last = (r + k * m + lo) // cfg.line, (r + k * m + hi - 1) // cfg.line
                if last - first + 1 >= cfg.sets:
                    out = set(range(cfg.sets))
                    break
                out.update(ln % cfg.sets for ln in range(first, last + 1))
            got = frozenset(out) if len(out) < cfg.sets else None
        self._sets[ck] = got
        return got

    def _loads_pointer(self, ctx: Context, addr: int) -> int:
        """The alignment a [[pointer]] fact gives the value the instruction
        at ``addr`` defines: a load site of a field, or a load of exactly
        a pointer variable's 8 bytes; 0 if none."""
        got = self.pointer_loads.get(addr, 0)
        if not got and self.pointer_variables and self.value_info is not None:
            r = self.value_info.access(self.ctx_func[ctx].entry, addr)
            if r is not None and r.base == "abs" and r.hi - r.lo == 8:
                got = self.pointer_variables.get(r.lo & ((1 << 64) - 1), 0)
        return got

    def _term_alignment(self, ctx: Context, val: Any, cap: int | None, line: int) -> tuple[int, int] | None:
        """``(m, r)`` for a value of the value analysis in ``ctx``: an exact
        constant, or a named base plus a constant; None otherwise."""
        if val is None or val[1] != val[2]:
            return None
        if val[0] == "abs":
            return (line, val[1] % line)
        if not isinstance(val[0], tuple):
            return None
        a = self.alignment((ctx, val[0]), cap)
        return None if a is None else (a[0], (a[1] + val[1]) % a[0])

    def _argument_alignment(self, ctx: Context, reg: int, line: int) -> tuple[int, int] | None:
        """An argument register at a function's entry in ``ctx``: the
        alignment its value has at every call that enters ``ctx`` (the
        caller's value, in the caller's context), or None."""
        if self._callers is None:
            self._callers = self.p.context_callers(self.entry)
        res: tuple[int, int] | None = None
        for cctx, site_block in self._callers.get(ctx, ()):
            cf = self.ctx_func.get(cctx)
            vals = self.args_at_call(cf.blocks[site_block].last.addr) if cf is not None else None
            val = vals[reg - 10] if vals is not None else None
            if val is None or val[1] != val[2]:
                return None
            if val[0] == "abs":                 # an exact address: its place in the line is known
                a: tuple[int, int] | None = (line, 0)
            elif isinstance(val[0], tuple):
                a = self.alignment((cctx, val[0]), line)
            else:
                return None
            if a is None:
                return None
            a = (a[0], (a[1] + val[1]) % a[0])
            if res is not None:
                m = min(res[0], a[0])
                if (res[1] - a[1]) % m:
                    return None
                a = (m, a[1] % m)
            res = a
        return res if res is not None and res[0] > 1 else None

    def _merged_alignment(self, ctx: Context, fe: int, kind, line: int) -> tuple[int, int] | None:
        """A merge block's name: the alignment every way in agrees on (its
        own earlier instance, round a loop, adds only its offset; an exact
        constant, such as the NULL of a pointer that may be absent, has a
        known residue modulo any alignment)."""
        incoming = self.merged(fe, kind[1]).get(kind[2])
        if not incoming:
            return None
        parts = []
        for val in incoming.values():
            if val is None or val[1] != val[2] or not (isinstance(val[0], tuple) or val[0] == "abs"):
                return None
            parts.append(val)
        m = line
        for val in parts:
            if val[0] != kind and val[0] != "abs":
                a = self.alignment((ctx, val[0]), line)
                if a is None:
                    return None
                m = min(m, a[0])
        res = None
        for val in parts:
            if val[0] == kind:
                if val[1] % m:
                    return None
                continue
            if val[0] == "abs":
                r = val[1] % m
            else:
                a = self.alignment((ctx, val[0]), line)
                r = (a[1] + val[1]) % m
            if res is not None and r != res:
                return None
            res = r
        return (m, res) if res is not None and m > 1 else None

    def _congruence(self, fe: int, addr: int, reg: int | None, line: int) -> tuple[int, int]:
        """``(m, r)``: register ``reg`` just before the instruction at
        ``addr`` is ``r`` modulo ``m`` (a power of two at most ``line``),
        from the instructions before it in its basic block; ``(1, 0)`` for
        a value not computed there.  ``reg=None``: the value the
        instruction at ``addr`` itself defines (its ``rd`` just after it)."""
        blocks = self._def_blocks.get(fe)
        if blocks is None:
            blocks = self._def_blocks[fe] = {ins.addr: b for b in self.p.functions[fe].blocks.values()
                                             for ins in b.instrs}
        b = blocks.get(addr)
        if b is None:
            return (1, 0)
        top = 1 << 64                       # moduli up to the register width
        # The blocks run before: up a chain of single predecessors (whose
        # end is this block's start on every way in), a few blocks deep.
        chain = [b]
        f = self.p.functions[fe]
        while len(chain) < 6 and len(chain[-1].preds) == 1 and chain[-1].start != f.entry:
            pred = f.blocks.get(next(iter(chain[-1].preds)))
            if pred is None or pred in chain or pred.kind is not Term.FALLTHROUGH and pred.kind is not Term.BRANCH \
                    and pred.kind is not Term.JUMP:
                break
            chain.append(pred)
        cong: dict[int, tuple[int, int]] = {0: (top, 0)}
        # Registers holding a word of a [[pointer]] fact with flag bits:
        # (flag bits, alignment of the word with them cleared).
        flagged: dict[int, tuple[int, int]] = {}
        for ins in [i for blk in reversed(chain) for i in blk.instrs]:
            if ins.addr == addr:
                if reg is not None:
                    break
                reg = ins.rd
                if not reg or reg >= 32:
                    return (1, 0)
            for w in ins.writes:
                if w != ins.rd:
                    cong.pop(w, None)
                    flagged.pop(w, None)
            rd = ins.rd
            if not rd or rd >= 32:
                continue
            mn = ins.mnemonic
            src_flags = flagged.get(ins.rs1) if ins.rs1 is not None else None
            other_flags = flagged.get(ins.rs2) if ins.rs2 is not None else None
            flagged.pop(rd, None)
            if ins.cls is InstrClass.LOAD and ins.addr in self.masked_loads:
                flagged[rd] = self.masked_loads[ins.addr]
            elif mn == "addi" and ins.imm == 0 and src_flags is not None:
                flagged[rd] = src_flags             # a copy (mv)
            src = cong.get(ins.rs1, (1, 0)) if ins.rs1 is not None else (top, 0)
            if mn.endswith("w"):               # 32-bit results (sign-extended)
                src = (min(src[0], 1 << 32), src[1] % min(src[0], 1 << 32))
            val: tuple[int, int] = (1, 0)
            if ins.cls is InstrClass.LOAD:
                if ins.mem_width == 8 and self.pointer_loads.get(ins.addr, 0) > 1:
                    # a [[pointer]] load site: NULL or a multiple of the fact's alignment
                    val = (self.pointer_loads[ins.addr], 0)
            elif mn in ("addi", "addiw"):
                val = (src[0], (src[1] + ins.imm) % src[0])
            elif mn == "lui":
                val = (top, ins.imm % top)
            elif mn in ("add", "addw"):
                o = cong.get(ins.rs2, (1, 0))
                mm = min(src[0], o[0], (1 << 32) if mn == "addw" else top)
                val = (mm, (src[1] + o[1]) % mm)
            elif mn in ("slli", "slliw"):
                mm = min((1 << 32) if mn == "slliw" else top, src[0] << ins.imm)
                val = (mm, (src[1] << ins.imm) % mm)
            elif mn in ("srli", "srliw", "srai", "sraiw"):
                # The low bits of the result are bits imm.. of the source.
                mm = max(1, src[0] >> ins.imm)
                val = (mm, (src[1] >> ins.imm) % mm)
            elif mn == "andi" and ins.imm:
                # Bits below the mask's lowest set bit are cleared whatever
                # the source (a negative mask too: ``& ~31``).
                t = ins.imm & -ins.imm
                val = (t, 0) if t >= src[0] else (src[0], (src[1] & ins.imm) % src[0])
                if src_flags is not None and not ins.imm & src_flags[0] and src_flags[1] > val[0]:
                    val = (src_flags[1], 0)     # the flags cleared: the aligned pointer part
            elif mn in ("xor", "or", "sub", "xori", "ori"):
                # The low bits of the result are those of the operands'
                # low bits combined (carries and borrows only go upwards).
                o = (top, ins.imm % top) if mn in ("xori", "ori") else cong.get(ins.rs2, (1, 0))
                mm = min(src[0], o[0])
                r = src[1] ^ o[1] if mn.startswith("xor") else src[1] | o[1] if mn.startswith("or") \
                    else src[1] - o[1]
                val = (mm, r % mm)
            elif mn == "and" and (cong.get(ins.rs2, (1, 0))[0] != top or not cong.get(ins.rs2, (1, 0))[1]) \
                    and (src[0] != top or not src[1]):
                # ``x & y``, neither a known constant: the low bits are the
                # operands' low bits and-ed, and bits an operand has clear
                # stay clear (a pointer masked by an all-ones-or-zero mask).
                o = cong.get(ins.rs2, (1, 0))
                mm = min(src[0], o[0])
                val = (mm, (src[1] & o[1]) % mm)
                for x in (src, o):
                    if x[1] == 0 and x[0] > val[0]:
                        val = (x[0], 0)
            elif mn == "and":
                # ``x & c`` for a constant ``c`` computed in the chain.
                for c, o, fl in ((cong.get(ins.rs2, (1, 0)), src, src_flags),
                                 (src, cong.get(ins.rs2, (1, 0)), other_flags)):
                    if c[0] == top and c[1]:
                        t = c[1] & -c[1]
                        val = (t, 0) if t >= o[0] else (o[0], (o[1] & c[1]) % o[0])
                        if fl is not None and not c[1] & fl[0] and fl[1] > val[0]:
                            val = (fl[1], 0)
                        break
            cong[rd] = val
            if ins.addr == addr:
                break
        m, r = cong.get(reg, (1, 0))
        m = min(m, line)
        return (m, r % m)

    # -- transfer ------------------------------------------------------------
    def transfer(self, key: tuple[Context, int], state: AnalysisState, record: bool = False) -> BlockResult:
        """The state after block ``key`` and its cost in cycles; with
        ``record``, the classification of each instruction."""
        ctx, start = key
        b: BasicBlock = self.ctx_func[ctx].blocks[start]
        must, may = list(state.must), list(state.may)
        m = self.m
        pipe = PipeState.from_residual(state.pipeline)
        classes: list[Classification] | None = [] if record else None
        first_misses: list[FirstMiss] = []
        runs = _Runs(state.symbolic, self.levels[self.sym_level].config.line, self.sym_span, self.family,
                     self.alignment, self.sets_of if self.placed else None)
        defs: frozenset[int] = frozenset()
        lost: dict | None = None
        recs: dict[int, MissRecord] | None = None
        if self.census:
            lost = {}
            for lk_, w_ in state.lost:
                if lk_ not in lost or w_ < lost[lk_]:
                    lost[lk_] = w_
            recs = {} if record else None
            runs.charged = defaultdict(int)
        if self.symbolic_defs is not None:
            fentry = self.ctx_func[ctx].entry
            defs = self.symbolic_defs(fentry)
            if ctx in self._canon_defs:
                defs = defs | self._canon_defs[ctx]
            if state.symbolic:
                # On entry to the function its arguments are new values, and
                # an address derived from one in an earlier call is no longer
                # related to the new one.  A merge block's names are new
                # values too (renamed on the edges when ``merged`` is known).
                runs.kill(lambda k: k[0] == ctx and (k[1][0] == "p" and k[1][1] == start and self.merged is None
                                                     or start == fentry and (k[1][0] == "a"
                                                                             or self.family(k) is not None)),
                          lost)
        last_line: list[int | None] = [None] * len(self.levels)     # per fetch level, in this block
        for ins in b.instrs:
            ipen, icat = 0, AH
            for k, size, penalty in (() if self.itim and self.m.in_itim(ins.addr) else self._fetch_plan):
                lo, hi = ins.addr // size, (ins.addr + ins.size - 1) // size
                if lo == hi == last_line[k]:
                    continue        # the line fetched last: a must hit, and fetching it again changes nothing
                last_line[k] = hi
                pen, cat = self._fetch(key, k, penalty, (lo,) if lo == hi else (lo, hi), must, may, first_misses)
                ipen += pen
                icat = cat if icat == AH else icat
            dpen, dcat, drange = 0, None, ANY_RANGE
            if ins.cls in MEM_CLASSES:
                if lost is None:
                    dpen, dcat, drange = self._data(key, ins, must, may, runs, first_misses)
                else:
                    dpen, dcat, drange = self._census_data(key, ins, must, may, runs, first_misses, lost, recs)
            if ins.addr in defs and (runs.state or runs.open):
                runs.kill(lambda k, a=ins.addr: k[0] == ctx and k[1][0] == "d" and k[1][1] == a, lost)
            step(pipe, ins, m, ipen, dpen, drange, exact=False)
            if ins.cls is InstrClass.FENCE_I:
                for k in self.fetch_levels:
                    last_line[k] = None
                    must[k] = must[k].flush()
                    may[k] = MayCache.initial(self.levels[k].config)
            if classes is not None:
                classes.append(Classification(ins.addr, icat, dcat, ipen + dpen))
        sym_penalty = self.levels[self.sym_level].miss_penalty
        extra = runs.finish() * sym_penalty
        share = 0
        if self.block_walk.get(key) == key:      # a line walk's header: its share per iteration
            share = self.walk_share(ctx, start)
            extra += share
        out = AnalysisState(tuple(must), tuple(may), pipe.residual(), runs.result(),
                            frozenset(lost.items()) if lost else frozenset())
        census = None
        if recs is not None:
            for a, n in runs.charged.items():
                if n:
                    recs.setdefault(a, MissRecord(a, SYM_FIRST, 0)).cycles += n * sym_penalty
            if share:
                recs.setdefault(start, MissRecord(start, None, 0)).cycles += share
                recs[start].reason = recs[start].reason or WALK_SHARE
            census = [r for r in recs.values() if r.cycles or r.wiped]
        return BlockResult(out, pipe.t_next + extra, classes, first_misses, census)

    def _census_data(self, key: tuple[Context, int], ins: Instr, must: list[MustCache], may: list[MayCache],
                     runs: "_Runs", first_misses: list[FirstMiss], lost: dict,
                     recs: dict[int, MissRecord] | None) -> tuple[int, str, tuple[int, int]]:
        """``_data`` for the miss census: the same access, and on the side
        what it removed from the data cache's guarantees (``lost``) and, with
        ``recs``, why it misses."""
        sl = self.sym_level
        acc = self.daccess(key[0], ins)
        lines = acc.lines[sl]
        before_k = must[sl].lines()
        before_s = dict(runs.state)
        open_before = dict(runs.open)
        prior = lost.get(("k", lines[0])) if lines is not None and len(lines) == 1 else None
        runs.cur = ins.addr
        dpen, dcat, drange = self._data(key, ins, must, may, runs, first_misses)
        if key in self.block_walk:
            kind = W_WALK
        elif acc.sym is not None:
            kind = W_SYM
        elif lines is None:
            kind = W_UNKNOWN
        else:
            kind = W_KNOWN if len(lines) == 1 else W_RANGE
        after_k = must[sl].lines()
        wiped = 0
        for ln in before_k - after_k:
            lost[("k", ln)] = (ins.addr, kind)
            wiped += 1
        for ln in after_k - before_k:
            lost.pop(("k", ln), None)
        line = self.levels[sl].config.line
        own = acc.sym[0] if acc.sym is not None else None
        for b, iv in before_s.items():
            gone = _iv_lines(iv, line) - _iv_lines(runs.state.get(b, ()), line)
            if gone > 0:
                wiped += gone
                lost[("s", b)] = (ins.addr, W_FAR if b == own else kind)
        if recs is None:
            return dpen, dcat, drange
        rec = recs.get(ins.addr)
        if rec is None:
            rec = recs[ins.addr] = MissRecord(ins.addr, None, 0)
        rec.wiped += wiped
        rec.kind = kind
        if dcat in (NC, AM) and acc.sym is None:
            rec.cycles += self.levels[sl].miss_penalty
            if lines is not None and len(lines) > 1:
                rec.reason = KNOWN_RANGE
            elif prior is not None:
                rec.reason, rec.wiper = EVICTED, prior
            else:
                rec.reason = FIRST_TOUCH
        elif dcat == UNK:
            rec.cycles += self.levels[sl].miss_penalty
            rec.reason = UNKNOWN
        elif own is not None and own in runs.open and runs.open[own] is not open_before.get(own):
            # this access opened a run: the run's misses are charged here
            w = lost.get(("s", own))
            rec.reason, rec.wiper = (SYM_LOST, w) if w is not None else (SYM_FIRST, None)
            if runs.ranged and ins.addr in runs.ranged:
                rec.reason = SYM_RANGE
        elif runs.ranged and ins.addr in runs.ranged:
            # an access at an unknown offset in a run that an earlier
            # access opened: its miss is its own (``_Runs.access``)
            rec.reason = SYM_RANGE
        return dpen, dcat, drange

    def _fetch(self, key: tuple[Context, int], k: int, penalty: int, lines: tuple[int, ...],
               must: list[MustCache], may: list[MayCache], first_misses: list[FirstMiss]) -> tuple[int, str]:
        """Fetch ``lines`` (all of them: an instruction may span two) through
        level ``k``, updating ``must``/``may``: the penalty and category."""
        pen = 0
        cat = AH
        mk, yk = must[k], may[k]
        for ln in lines:
            if not mk.hit(ln):
                lk = self.persistent_loop(key, (ln,), k)
                if lk is not None:
                    cat = PS if cat == AH else cat
                    first_misses.append(FirstMiss(lk, k, ln))
                else:
                    pen += penalty
                    cat = AM if yk.sure_miss(ln) else NC
            mk = mk.access(ln)
            yk = yk.access(ln)
        must[k], may[k] = mk, yk
        return pen, cat

    def _data(self, key: tuple[Context, int], ins: Instr, must: list[MustCache], may: list[MayCache],
              runs: "_Runs", first_misses: list[FirstMiss]) -> tuple[int, str, tuple[int, int]]:
        """The data access of ``ins`` through the data levels (updating
        ``must``/``may`` and the symbolic ``runs``): its penalty, category
        (of the first data level) and byte range.  The access touches *one*
        of the lines it may touch."""
        acc = self.daccess(key[0], ins)
        if acc.device == "all":
            return self.m.device_latency, DEV, acc.brange
        miss = 0
        dcat = AH
        for k in self.data_levels:
            lv = self.levels[k]
            if k == self.sym_level and key in self.block_walk and \
                    not (acc.sym is None and self.block_walk[key] in self._objloop_others):
                # a line walk (``walk``) or a copy (``copy``): its misses are
                # charged per iteration and per entry of its loop; as a
                # possible refill in a set not known here, it removes every
                # other guarantee
                lk = self.block_walk[key]
                dcat = WALK if self.walk(*lk) is not None else OBJ if OBJECT_LOOPS and self._objloops.get(lk) else COPY
                runs.refill_elsewhere()
                must[k] = must[k].access_unknown(None)
                may[k] = may[k].access_unknown(None)
                continue
            if acc.sym is not None and k == self.sym_level:
                # No penalty in the pipeline: the misses of the run are
                # added to the block's cost at its end (monotonicity).
                base, lo, hi = acc.sym
                if runs.access(base, lo, hi, ins.mem_width):
                    dcat = AH
                    if lv.config.analysis_ways > 1:      # an LRU hit reorders its (unknown) set
                        must[k] = must[k].access_unknown(None)
                else:
                    dcat = SYM
                    must[k] = must[k].access_unknown(self.sets_of(base, lo, hi) if self.placed else None)
                    may[k] = may[k].access_unknown(None)
                continue
            lines = acc.lines[k]
            if lines is None:
                miss += lv.miss_penalty
                cat = UNK
                must[k] = must[k].access_unknown(None)
                may[k] = may[k].access_unknown(None)
            else:
                if len(lines) == 1 and must[k].hit(lines[0]):
                    cat = AH
                else:
                    lk = self.persistent_loop(key, lines, k)
                    if lk is not None:
                        cat = PS
                        first_misses.extend(FirstMiss(lk, k, ln) for ln in lines)
                    else:
                        miss += lv.miss_penalty
                        cat = AM if all(may[k].sure_miss(ln) for ln in lines) else NC
                must[k] = must[k].access_range(lines)
                may[k] = may[k].access_range(lines)
            if k == self.sym_level:
                dcat = cat
                if cat != AH and self.block_walk.get(key) in self._objloop_others:
                    # in an object loop: this refill may evict the one line
                    # of the object in its set, loaded again later in the
                    # loop (the loop's charge covers each line once)
                    miss += lv.miss_penalty
                if cat != AH:              # a refill in a set symbolic lines may share
                    runs.refill_elsewhere(None if lines is None or not self.placed
                                          else frozenset(ln % lv.config.sets for ln in lines))
        if acc.sym is not None:
            return miss, dcat, acc.brange
        if acc.device == "may":
            return max(miss, self.m.device_latency), (dcat if dcat == UNK else DEV), acc.brange
        return miss, dcat, acc.brange

    # -- fixpoint ----------------------------------------------------------------
    def entry_residual(self) -> Residual:
        """Pipeline state at the entry.  A unit that ends in ``sret``/``mret``
        is a trap handler: it interrupts arbitrary code, whose divide may
        still be running (the U54 does not abandon it; any register may be
        its destination) and whose stores may still be buffered (unknown
        addresses).  Other entries start from an idle pipeline, like the
        replay of a called function."""
        if self.entry_state == "idle":
            return Residual((0,) * NREGS, 0, ())
        m = self.m
        ready = (0,) + (m.div_latency - 1,) * 31 + (0,) * (NREGS - 32)
        return Residual(ready, m.div_latency - 1, (ANY_RANGE,) * m.store_buffer_entries)

    def initial_state(self) -> AnalysisState:
        """At the entry: caches that guarantee nothing (polluted, may hold
        anything), the entry pipeline, no symbolic lines."""
        return AnalysisState(tuple(MustCache.empty(lv.config) for lv in self.levels),
                             tuple(MayCache.initial(lv.config) for lv in self.levels),
                             self.entry_residual(), ())

    def edge_actions(self) -> dict[tuple[int, int], list[tuple[LoopEdge, LoopKey]]]:
        """Per supergraph edge: the loops it enters, iterates (back edge) or
        leaves."""
        acts: dict[tuple[int, int], list[tuple[LoopEdge, LoopKey]]] = defaultdict(list)
        # loops by (context, block): every loop containing the block
        containing: dict[tuple[Context, int], list] = defaultdict(list)
        for ctx, lf in self.loops_by_ctx.items():
            for lp in lf.loops:
                for b in lp.blocks:
                    containing[(ctx, b)].append(lp)
        for (i, t), src in self.edge_src.items():
            tctx, tb = self.nodes[t]
            for lp in containing.get((tctx, tb), ()):
                key = (tctx, lp.header)
                inside = src is not None and src in lp.blocks
                if not inside:
                    # from outside into the loop: an entry (irreducible
                    # regions may be entered at blocks other than the header)
                    acts[(i, t)].append((LoopEdge.ENTRY, key))
                elif tb == lp.header:
                    acts[(i, t)].append((LoopEdge.BACK, key))
            if src is None:
                continue
            for lp in containing.get((tctx, src), ()):
                if tb not in lp.blocks:
                    acts[(i, t)].append((LoopEdge.EXIT, (tctx, lp.header)))
        return acts

    def aged(self, state: AnalysisState, key: LoopKey) -> tuple[MustCache, ...]:
        """What is still guaranteed anywhere inside/after loop ``key`` of
        what was guaranteed on entering it: a line of age a survives with age
        a + (distinct other lines of its set the loop may touch)."""
        return tuple(_age_by(c, self.touch[k].get(key, set()), key in self.unknown[k])
                     for k, c in enumerate(state.must))

    def fixpoint(self) -> list[AnalysisState | None]:
        """The state on entry to every supergraph node (None: unreachable).
        A loop's entry state, aged by what the loop touches, is met into the
        states on its back and exit edges (what survives the whole loop)."""
        acts = self.edge_actions()
        n = len(self.nodes)
        instate: list[AnalysisState | None] = [None] * n
        instate[self.root] = self.initial_state()
        loop_in: dict[LoopKey, AnalysisState] = {}
        loop_aged: dict[LoopKey, tuple[MustCache, ...]] = {}
        exit_sources: dict[LoopKey, set[int]] = defaultdict(set)
        for (i, t), al in acts.items():
            for kind, key in al:
                if kind is not LoopEdge.ENTRY:
                    exit_sources[key].add(i)
        heap = [(self.prio[self.root], self.root)]
        queued = {self.root}
        visits = 0
        limit = 200 * n + 1000

        def push(j: int) -> None:
            if j not in queued:
                queued.add(j)
                heappush(heap, (self.prio[j], j))

        while heap:
            _, i = heappop(heap)
            queued.discard(i)
            visits += 1
            if visits > limit:
                raise WcetError("micro-architectural analysis did not converge")
            state = instate[i]
            if state is None:
                # A loop's exit source pushed again when the loop's entry
                # state changed, but not reached yet on any path (or never:
                # a `--stop-at` call may cut every way into it). It is
                # transferred once a way into it is found.
                continue
            out = self.transfer(self.nodes[i], state).out
            for t in self.succ[i]:
                st = out
                al = acts.get((i, t))
                if al:
                    for kind, key in al:
                        if kind is LoopEdge.ENTRY:
                            old_in = loop_in.get(key)
                            new_in = st if old_in is None else old_in.join(st)
                            if old_in is None or new_in != old_in:
                                loop_in[key] = new_in
                                loop_aged[key] = self.aged(new_in, key)
                                for j in exit_sources[key]:
                                    push(j)
                    for kind, key in al:
                        if kind is not LoopEdge.ENTRY and key in loop_aged:
                            st = st.meet_must(loop_aged[key])
                if self.merged is not None and st.symbolic:
                    st = self.through_merge(i, t, st)
                old = instate[t]
                new = st if old is None else old.join(st)
                if old is None or new != old:
                    instate[t] = new
                    push(t)
        return instate

    def find_walks(self) -> None:
        """``block_walk``: each block of a line walk's loop (``walk``), in
        its context, to the loop's key."""
        self.block_walk: dict[tuple[Context, int], LoopKey] = {}
        self.walk_charges = {}
        if self.symbolic is None:             # off with the symbolic lines (for comparison)
            return
        lv = self.levels[self.sym_level]
        m, w = self.m.memory_latency, self.m.writeback_latency
        bound = getattr(self.value_info, "loop_bound", None)
        for ctx, f in self.ctx_func.items():
            for lp in self.loops_of(f).loops:
                ok = self.walk(ctx, lp.header) is not None or OBJECT_LOOPS and self.object_loop(ctx, lp.header) is not None
                if not ok and lv.miss_penalty == m + w and bound is not None:
                    s = self.copy(ctx, lp.header)
                    if s is not None:
                        # only where it gains: a short copy pays less per access
                        per = 2 * m + w + -(-(m + 2 * w) * abs(s) // lv.config.line)
                        n = bound(self.loops_of(f), lp)
                        ok = n is not None and n * (2 * (m + w) - per) > WALK_ENTRY_MISSES * (m + 2 * w) + m + w
                if ok:
                    for bs in lp.blocks:
                        self.block_walk[(ctx, bs)] = (ctx, lp.header)
                    for c in self._objloop_callees.get((ctx, lp.header), ()):
                        for bs in self.ctx_func[c].blocks:
                            self.block_walk[(c, bs)] = (ctx, lp.header)
        self._charges()

    def run(self) -> BlockCosts:
        if self.arg_names and self.symbolic is not None:
            # every renaming before the fixpoint: a definition that names a
            # callee's argument must end that name's lines in its caller
            # (``_canon_defs``) from the first pass on
            for ctx, f in self.ctx_func.items():
                for r in range(10, 18):
                    self.canonical(ctx, ("a", r))
                for bs, _callee in f.calls:
                    if f.blocks[bs].kind is Term.CALL:
                        self.canonical(ctx, ("d", f.blocks[bs].last.addr))
        self.build_graph()
        self.find_walks()
        self.compute_persistence()
        instate = self.fixpoint()
        init = self.initial_state()
        bc = BlockCosts(self.m, self.entry, census_on=self.census)
        first: dict[LoopKey, set[tuple[int, int]]] = defaultdict(set)
        for i, key in enumerate(self.nodes):
            # unreachable in the supergraph (e.g. after a noreturn call): costed from the entry state
            res = self.transfer(key, instate[i] or init, record=True)
            bc.costs[key] = res.cycles
            bc.classes[key] = res.classes
            if res.census:
                bc.census[key] = res.census
            for fm in res.first_misses:
                first[fm.loop].add((fm.level, fm.line))
        for lk, lines in first.items():
            counts = [0] * len(self.levels)
            for k, _ in lines:
                counts[k] += 1
            pen = sum(c * lv.miss_penalty for c, lv in zip(counts, self.levels))
            bc.persistent_lines[lk] = tuple(counts)
            if lk == GLOBAL:
                # once per run: charged to the root's entry block
                rkey = ((), self.ctx_func[()].entry)
                bc.costs[rkey] += pen
                bc.global_first_miss = pen
            else:
                bc.first_miss[lk] = pen
        for lk, (_per, entry) in self.walk_charges.items():
            bc.first_miss[lk] = bc.first_miss.get(lk, 0) + entry
        return bc


def _switch_table_ranges(program: Program, rng) -> dict[int, tuple[int, int]]:
    """Byte ranges of the jump-table loads of resolved switches.

    The CFG resolved each ``SWITCH`` block to the table's targets in index
    order, having established that the index is in ``[0, N)``.  The load
    feeding the ``jalr`` therefore reads one of N consecutive table words;
    the table is located by matching the targets against the read-only
    image (entries absolute, or relative to the table base as gcc emits
    them).  Only an unambiguous match refines the value analysis' range.
    """
    out: dict[int, tuple[int, int]] = {}
    img = program.image
    for f in program.functions.values():
        for b in f.blocks.values():
            if b.kind is not Term.SWITCH or not b.table:
                continue
            jr = b.last
            feeders = {jr.rs1}
            load = None
            for ins in reversed(b.instrs[:-1]):
                if ins.cls is InstrClass.LOAD and ins.rd in feeders and ins.mem_width >= 4:
                    load = ins
                    break
                if ins.rd in feeders:
                    feeders |= set(ins.reads)
            if load is None:
                continue
            w = load.mem_width
            n = len(b.table)
            cand: list[int] = []
            for sec in img.sections:
                if sec.nobits or sec.writable or sec.size < w * n:
                    continue
                data = sec.data
                for off in range(0, sec.size - w * n + 1, w):
                    base = sec.addr + off
                    ok = True
                    for i, tgt in enumerate(b.table):
                        e = int.from_bytes(data[off + w * i: off + w * i + w], "little",
                                           signed=True)
                        if (base + e) & ((1 << 64) - 1) != tgt and e & ((1 << 64) - 1) != tgt:
                            ok = False
                            break
                    if ok:
                        cand.append(base)
                if len(cand) > 1:
                    break
            if len(cand) == 1:
                out[load.addr] = (cand[0], cand[0] + w * n)
    return out


def _persistent(lines: set[int], sets: int, ways: int) -> set[int]:
    per_set: dict[int, list[int]] = defaultdict(list)
    for l in lines:
        per_set[l % sets].append(l)
    out: set[int] = set()
    for ls in per_set.values():
        if len(ls) <= ways:
            out.update(ls)
    return out


def _iv_lines(iv, line: int) -> int:
    """Lines that symbolic intervals guarantee, at least (for the census)."""
    return sum(max(1, (b - a) // line) for a, b in iv)


def _age_by(c: MustCache, touched: set[int], unknown: bool) -> MustCache:
    """Age every line by the number of distinct other lines of its set in
    ``touched`` (the lines a loop may access); ``unknown``: anything."""
    if unknown:
        return c.flush()
    per_set: dict[int, set[int]] = defaultdict(set)
    for l in touched:
        per_set[l % c.sets].add(l)
    out = []
    for s_, items in enumerate(c.content):
        if not items:
            out.append(items)
            continue
        t = per_set.get(s_)
        if not t:
            out.append(items)
            continue
        out.append(tuple((l, a + len(t - {l})) for l, a in items if a + len(t - {l}) < c.ways))
    return MustCache(c.ways, c.sets, tuple(out))


class _Runs:
    """The symbolic lines (``cache.SymState``) through one block, and the
    misses of its runs: a run is the accesses through one base between two
    events that may evict its lines; its misses are counted at its end by
    ``cache.run_misses`` over every alignment of the base."""

    def __init__(self, state, line: int, span: int, family=None, alignment=None, sets_of=None) -> None:
        self.state: dict[Any, tuple] = dict(state)
        # base, lo, hi -> the sets those bytes may lie in (None: any)
        self.sets_of = sets_of
        self.line = line
        self.span = span
        self.family = family or (lambda base: None)
        self.alignment = alignment or (lambda base: None)
        self.open: dict[Any, tuple[tuple, list[tuple[int, int]]]] = {}   # base -> (intervals at start, accesses)
        self.misses = 0
        # The miss census (``analyse(census=True)``): the access being
        # analysed, the access that opened each run, misses per opener.
        self.cur = 0
        self.owner: dict[Any, int] = {}
        self.charged: dict[int, int] | None = None
        self.ranged: set[int] | None = None

    def _close(self, base) -> None:
        run = self.open.pop(base, None)
        if run is not None:
            n = symlines.run_misses(run[0], run[1], self.line, self.alignment(base))
            self.misses += n
            if self.charged is not None:
                self.charged[self.owner.get(base, 0)] += n

    def kill(self, pred, lost: dict | None = None) -> None:
        """Forget the bases ``pred`` selects (their value was redefined);
        the census forgets what they lost, too (a new value)."""
        for base in [k for k in set(self.state) | set(self.open) if pred(k)]:
            self._close(base)
            self.state.pop(base, None)
            if lost:
                lost.pop(("s", base), None)

    def _same_object(self, fx, lo: int, hi: int, other, oiv: tuple) -> tuple:
        """The intervals of ``other`` that a refill by an access ``[lo, hi)``
        through a base of family ``fx`` cannot evict: both are lines of one
        object whose byte ranges span at most ``span`` together."""
        fy = self.family(other)
        if fy is None or fy[0] != fx[0]:
            return ()
        xlo, xhi = (lo, hi) if fx[1] is None else fx[1]
        if fy[1] is None:                 # the argument itself: its intervals are its offsets
            return symlines.near(oiv, xlo, xhi, self.span) if xhi - xlo <= self.span else ()
        ylo, yhi = fy[1]
        return oiv if max(xhi, yhi) - min(xlo, ylo) <= self.span else ()

    def _outside(self, base, iv: tuple, sets: frozenset[int] | None) -> tuple:
        """The intervals of ``base`` whose lines lie in none of ``sets``
        (a refill there cannot evict them)."""
        if sets is None or self.sets_of is None or not iv:
            return ()
        out = []
        for a, b in iv:
            mine = self.sets_of(base, a, b)
            if mine is not None and not (mine & sets):
                out.append((a, b))
        return tuple(out)

    def refill_elsewhere(self, sets: frozenset[int] | None = None) -> None:
        """A refill that may fall into any of ``sets`` (None: any set):
        every symbolic line that may lie there may go."""
        if sets is None or self.sets_of is None:
            for base in list(self.open):
                self._close(base)
            self.state.clear()
            return
        for base in set(self.open) | set(self.state):
            iv = self.state.get(base, ())
            keep = self._outside(base, iv, sets)
            if keep != iv or not iv:
                self._close(base)
            if keep:
                self.state[base] = keep
            else:
                self.state.pop(base, None)

    def access(self, base, lo: int, hi: int, width: int) -> bool:
        """An access to ``[lo, hi)`` from ``base``; True if it surely hits."""
        iv = self.state.get(base, ())
        exact = hi - lo == width
        if exact and symlines.covered(iv, lo, hi):
            return True
        # A possible refill: lines of other bases, and of this base too far
        # away to be provably in other sets, may be evicted.  Lines of
        # another base of the same object (an object fact) stay where both
        # lie within a way's span of that object.
        fx = self.family(base)
        kept: dict[Any, tuple] = {}
        mine = self.sets_of(base, lo, hi) if self.sets_of is not None else None
        for other in set(self.open) | set(self.state):
            if other == base:
                continue
            oiv = self.state.get(other, ())
            okeep = self._same_object(fx, lo, hi, other, oiv) if fx is not None and oiv else ()
            if mine is not None and oiv and okeep != oiv:
                # lines of another base placed in other sets than this access's
                also = self._outside(other, oiv, mine)
                if also:
                    okeep = tuple(x for x in oiv if x in okeep or x in also)
            if okeep != oiv or not oiv:
                self._close(other)
            if okeep:
                kept[other] = okeep
        keep = symlines.near(iv, lo, hi, self.span) if hi - lo <= self.span else ()
        if keep != iv:
            self._close(base)
        if keep:
            kept[base] = keep
        self.state = kept
        run = self.open.get(base)
        if run is None:
            run = self.open[base] = (keep, [])
            self.owner[base] = self.cur
        if exact:
            run[1].append((lo, width))
            al = self.alignment(base)
            if al is not None and al[0] >= self.line and (al[1] + lo) // self.line == (al[1] + hi - 1) // self.line:
                # The base's position in its line is known: the whole line
                # of the access is cached now, the other fields in it too.
                lo = lo - (al[1] + lo) % self.line
                hi = lo + self.line
            self.state[base] = symlines.add_interval(keep, lo, hi, self.line)
        else:
            self.misses += 1           # some line of a range: one miss, nothing guaranteed
            if self.charged is not None:
                self.charged[self.cur] += 1
                if self.ranged is None:
                    self.ranged = set()
                self.ranged.add(self.cur)
        return False

    def finish(self) -> int:
        for base in list(self.open):
            self._close(base)
        return self.misses

    def result(self):
        return tuple(sorted(self.state.items(), key=lambda kv: repr(kv[0])))


class ObjectFacts(dict):
    """The trusted object facts for ``analyse``: function entry -> argument
    register -> (object size, alignment) (``[[object]]``), and in ``loads``
    the address of every load whose loaded value is NULL or a multiple of
    the given alignment, in ``variables`` the address of every pointer
    variable whose value is (``[[pointer]]``)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.loads: dict[int, int] = {}
        self.variables: dict[int, int] = {}     # address of a pointer variable -> alignment
        # load address -> (flag bits, alignment): a word whose value with
        # the flag bits cleared is NULL or a multiple of the alignment.
        self.masked: dict[int, tuple[int, int]] = {}


def object_facts(image: Any, annotations: Any) -> tuple[ObjectFacts, list[str]]:
    """The ``[[object]]`` and ``[[pointer]]`` facts of ``annotations`` for
    ``analyse`` (``ObjectFacts``), and the notes to report.
    Every fact is trusted (the binary cannot show it), so each is reported;
    a function not in the ELF is reported too (the fact is stale there)."""
    out = ObjectFacts()
    notes: list[str] = []
    for fact in getattr(annotations, "objects", ()):
        missing = [n for n in fact.functions if not image.has_symbol(n)]
        for n in fact.functions:
            if n in missing:
                continue
            regs = out.setdefault(image.symbol(n).addr, {})
            size, align = regs.get(fact.register, (fact.size, fact.align))
            regs[fact.register] = (min(size, fact.size), max(align, fact.align))
        notes.append("trusted: " + fact.describe())
        if missing:
            notes.append(f"{fact.origin}: no function {', '.join(missing)} in the ELF (fact unused there)")
    pointers = list(getattr(annotations, "pointers", ()))
    if pointers:
        dirs = [os.path.dirname(os.path.abspath(p)) for p in getattr(annotations, "paths", ())]
        for fact in pointers:
            loads, fact_notes = pointer_loads(image, fact, dirs) if fact.fields else ([], [])
            for a in loads:
                if getattr(fact, "flags", None):
                    out.masked[a] = (fact.flags, fact.align)
                else:
                    out.loads[a] = max(out.loads.get(a, 1), fact.align)
            notes.extend(fact_notes)
            for name in fact.variables:
                if not image.has_symbol(name) or image.symbol(name).size != 8:
                    raise WcetError(f"{fact.origin}: no 8-byte variable {name!r} in the ELF")
                a = image.symbol(name).addr
                out.variables[a] = max(out.variables.get(a, 1), fact.align)
            if not fact.fields:
                notes.append("trusted: " + fact.describe())
    return out, notes


def pointer_loads(image: Any, fact: Any, source_dirs: list[str] = ()) -> tuple[list[int], list[str]]:
    """The load sites a ``[[pointer]]`` fact applies to, and its notes.

    Each ``struct.member`` of the fact must be a pointer member in the ELF's
    DWARF (else the annotation is wrong: an error).  A site is an 8-byte
    load (``ld``) with the member's offset as its displacement, in the
    fact's functions (every function when it names none), whose source
    line names the member (``->member`` or ``.member``): the displacement
    alone could be another structure's field at the same offset.  The
    member's value at a site is then NULL or a multiple of ``align``;
    NULL is a multiple of every alignment, so the fact needs no NULL test
    before it, and an access through NULL would fault, which ends the
    kernel's path (kernel_panic) rather than reach a cache line."""
    from kairos.wcet.anchors import SourceText

    members = _dwarf_members(image)
    if members is None:
        return [], [f"{fact.origin}: no DWARF type information in the ELF (fact unused)"]
    offsets: dict[int, list[str]] = {}
    # (offset, structure size, member): the member of an array element at
    # a constant index folded into the displacement (``c[2].sc``)
    elements: list[tuple[int, int, str]] = []
    flags = getattr(fact, "flags", None)
    for name in fact.fields:
        got = _member_path(members, name)
        if got is None:
            raise WcetError(f"{fact.origin}: no member {name!r} in the ELF's DWARF types")
        if flags is not None and got[1] not in ("pointer", "word"):
            raise WcetError(f"{fact.origin}: member {name!r} is not an 8-byte word or pointer")
        if flags is None and got[1] != "pointer":
            raise WcetError(f"{fact.origin}: member {name!r} is not a pointer")
        offsets.setdefault(got[0], []).append(name.rsplit(".", 1)[1])
        size = image.__dict__.get("_wcet_sizes", {}).get(name.split(".", 1)[0], 0)
        if size > 0:
            elements.append((got[0], size, name.rsplit(".", 1)[1]))
    if fact.functions:
        missing = [n for n in fact.functions if not image.has_symbol(n)]
        if missing:
            raise WcetError(f"{fact.origin}: no function {', '.join(missing)} in the ELF")
        syms = [image.symbol(n) for n in fact.functions]
    else:
        syms = [s for s in image.symbols if s.kind == "func" and s.size > 0]
    src = SourceText(image, source_dirs)
    sites: list[int] = []
    seen: set[int] = set()
    for sym in syms:
        a = sym.addr
        while a < sym.addr + sym.size:
            try:
                ins = image.instr(a)
            except WcetError:
                break
            a += ins.size
            if ins.addr in seen or ins.cls is not InstrClass.LOAD or ins.mem_width != 8:
                continue
            names = offsets.get(ins.imm)
            elems = [n for off, size, n in elements
                     if ins.imm > off and (ins.imm - off) % size == 0 and (ins.imm - off) // size < 64]
            if not names and not elems:
                continue
            li = image.line_of(ins.addr)
            text = src.line(*li) if li is not None else None
            if text is not None and (any(re.search(r"(->|\.)\s*" + re.escape(n) + r"\b", text) for n in names or ())
                                     or any(re.search(r"\]\s*\.\s*" + re.escape(n) + r"\b", text)
                                            for n in elems)):
                seen.add(ins.addr)
                sites.append(ins.addr)
    notes = ["trusted: " + fact.describe() + f": {len(sites)} load site(s)"]
    if not sites:
        notes.append(f"{fact.origin}: no load of {', '.join(fact.fields)} found (fact unused)")
    return sites, notes


def _member_path(members: dict[str, tuple[int, str]], name: str) -> tuple[int, str] | None:
    """``(byte offset, kind)`` of ``"struct.member"`` or of a member of a
    nested structure, ``"struct.member.member"`` (offsets summed); None if
    the DWARF has no such member."""
    parts = name.split(".")
    got = members.get(f"{parts[0]}.{parts[1]}")
    off = got[0] if got is not None else 0
    for part in parts[2:]:
        if got is None or not got[1].startswith("struct "):
            return None
        got = members.get(f"{got[1][7:]}.{part}")
        off += got[0] if got is not None else 0
    return (off, got[1]) if got is not None else None


def _dwarf_members(image: Any) -> dict[str, tuple[int, str]] | None:
    """``"struct.member" -> (byte offset, kind)`` for the named structures
    of the ELF's DWARF, kind ``"pointer"``, ``"word"`` (an 8-byte integer),
    ``"struct NAME"`` or ``"other"``; None without DWARF."""
    cached = image.__dict__.get("_wcet_members", False)
    if cached is not False:
        return cached
    out: dict[str, tuple[int, bool]] | None = None
    elf = getattr(image, "_elf", None)
    try:
        if elf is not None and elf.has_dwarf_info():
            out = {}
            sizes: dict[str, int] = {}
            image.__dict__["_wcet_sizes"] = sizes
            for cu in elf.get_dwarf_info().iter_CUs():
                for die in cu.iter_DIEs():
                    if die.tag != "DW_TAG_structure_type" or "DW_AT_name" not in die.attributes:
                        continue
                    sname = die.attributes["DW_AT_name"].value.decode(errors="replace")
                    if "DW_AT_byte_size" in die.attributes:
                        sizes[sname] = die.attributes["DW_AT_byte_size"].value
                    for m in die.iter_children():
                        if m.tag != "DW_TAG_member" or "DW_AT_name" not in m.attributes:
                            continue
                        loc = m.attributes.get("DW_AT_data_member_location")
                        if loc is None or not isinstance(loc.value, int):
                            continue
                        t = m.get_DIE_from_attribute("DW_AT_type") if "DW_AT_type" in m.attributes else None
                        for _ in range(8):     # through typedefs and qualifiers
                            if t is None or t.tag not in ("DW_TAG_typedef", "DW_TAG_const_type",
                                                          "DW_TAG_volatile_type"):
                                break
                            t = t.get_DIE_from_attribute("DW_AT_type") if "DW_AT_type" in t.attributes else None
                        key = f"{sname}.{m.attributes['DW_AT_name'].value.decode(errors='replace')}"
                        kind = "other"
                        if t is not None and t.tag == "DW_TAG_pointer_type":
                            kind = "pointer"
                        elif t is not None and t.tag == "DW_TAG_base_type" and \
                                getattr(t.attributes.get("DW_AT_byte_size"), "value", 0) == 8:
                            kind = "word"
                        elif t is not None and t.tag == "DW_TAG_structure_type" and "DW_AT_name" in t.attributes:
                            kind = "struct " + t.attributes["DW_AT_name"].value.decode(errors="replace")
                        out[key] = (loc.value, kind)
    except Exception as exc:  # corrupt DWARF must not crash the analysis
        raise WcetError(f"malformed DWARF type information in {image.path}: {exc}") from None
    image.__dict__["_wcet_members"] = out
    return out


def analyse(program: Program, entry: str, model: ProcessorModel, value_info: Any = None,
            entry_state: str = "auto", symbolic: bool = True,
            objects: ObjectFacts | dict[int, dict[int, tuple[int, int]]] | None = None,
            census: bool = False) -> BlockCosts:
    """Block costs (cycles per execution of each block in each context) and
    first-miss penalties per loop entry, for the analysis of ``entry``.

    ``entry_state``: ``"idle"`` (empty pipeline, as a called function in the
    replay), ``"trap"`` (a trap handler: a divide of the interrupted code may
    still be running, its stores may still be buffered) or ``"auto"``
    (``trap`` when the unit ends in ``sret``/``mret``).

    ``census``: also record, per data access, the misses charged for it and
    why (``BlockCosts.census``, ``MissRecord``); the costs are the same."""
    # The fixpoint allocates millions of short-lived states while holding a
    # large graph of long-lived ones: with
    # the default thresholds the collector rescans the survivors every few
    # thousand allocations, about a tenth of the run (measured on the kernel).
    thresholds = gc.get_threshold()
    gc.set_threshold(100_000, *thresholds[1:])
    try:
        return _Analysis(program, entry, model, value_info, entry_state, symbolic, objects, census).run()
    finally:
        gc.set_threshold(*thresholds)
