"""Infeasible paths and flow facts, found automatically (Blackham's thesis,
ch. 6-7: conflicts found by SMT along the worst path, added to the IPET
problem, repeated until the worst path is feasible).

Two kinds of fact become ILP constraints (``ipet.Constraint``):

* **Path conflicts** (Blackham's first form, ``sum(edges) <= n - 1``).  The
  worst path of the current ILP solution is followed from the entry through
  the *once scope*: the (context, block) nodes that run at most once per
  entry (not in a loop, context not shared, no call site on the call string
  in a loop).  A loop or a shared-context call on the way is a *region*,
  summarised by forgetting what it may change.  The path is translated into
  SSA over registers, stack slots and tracked global words
  (``rv64smt``); every path item (a block with its outgoing edge's branch
  condition, or a region) is guarded by its own literal, and a minimal
  unsatisfiable subset of those literals is a conflict.  The constraint
  names every edge of the path from the first to the last item of the
  conflict: in the once scope, taking all of them means running exactly
  that stretch of path, so no feasible execution is cut.
* **Flag facts** (Blackham's third form, counts relative to counts): a
  block B of function F runs only while a global word L is non-zero, and F
  stores zero to L after B on every way out (``charge_current``: the SC is
  charged only if ``cur_sc`` is set, and ``cur_sc`` is cleared after the
  charge).  Then, per entry, ``count(B) <= 1 + count(stores of other values
  to L)``, summed over all contexts (shared ones included).

Interprocedural constant returns (a function whose every return leaves the
same constant in ``a0``) are used where a call is summarised.

**Memory-model assumption** (checked, see ``escaping_globals``): an access
whose address is neither a constant, nor stack-relative, nor a global's
address plus an index does not touch a tracked global word or a stack slot.
A global whose address is stored to memory, passed to a call, returned, or
found in initialised data is never tracked.  What is not checked: code that
the analysed entries do not reach (e.g. a kernel's boot code) storing a
global's address, and stack addresses stored to memory.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field
from typing import Callable

import networkx as nx
import z3

from kairos.wcet import ipet, rv64smt, smtloops
from kairos.wcet.cfg import CALLER_SAVED, BasicBlock, Function, Program, Term, constant_registers, sym_step
from kairos.wcet.errors import WcetError
from kairos.wcet.isa import InstrClass

#: default budget of the refinement of one entry, in nominal seconds: spent
#: in z3 resource units (``smtloops.RLIMIT_PER_S`` per second) and in effort
#: units for the Python work (``Effort``), which do not depend on the load,
#: so the same binary and annotations give the same bound on any machine.
#: 4 nominal seconds (10 M units) take about the processor time the former
#: 6-second time budget took on the kernel's entries (docs/wcet.md)
DEFAULT_BUDGET = 4.0
#: solver effort one check may take (z3 resource units, about two seconds)
CHECK_RLIMIT = 5_000_000
#: effort units of one instruction executed symbolically (the encoding's own
#: time, in the solver's currency: ``smtloops.STEP_EFFORT``)
STEP_EFFORT = smtloops.STEP_EFFORT
#: effort units of one ILP re-solve, per edge of the inlined graph (HiGHS
#: takes about 20 us of processor time per edge on the kernel's graphs)
SOLVE_EFFORT_PER_EDGE = 50
#: at most this many ILP re-solves per entry
MAX_ITERATIONS = 20
#: conflicts looked for in one path before re-solving
CONFLICTS_PER_PATH = 6
#: acyclic paths examined per function for a flag fact
MAX_FLAG_PATHS = 64


class Effort:
    """A deterministic work budget: z3 resource units spent by the checks
    (``rlimit``, the solver's deterministic counter) plus units charged for
    the Python work (``charge``).  ``seconds`` is nominal, converted at the
    loop-bound stage's calibration (``smtloops.RLIMIT_PER_S``).

    Nothing here reads a clock: every loop that spends effort is also
    capped by a count (``MAX_ITERATIONS``, ``CONFLICTS_PER_PATH``,
    ``MAX_FLAG_PATHS``, the path's length), so the work ends without one,
    and the same binary gives the same facts and bound on any load.  The
    solvers' wall-clock timeout (``smtloops.CHECK_TIMEOUT_MS``) only guards
    against a check that never returns: when it fires, ``check`` raises
    instead of letting the load decide the answer."""

    def __init__(self, seconds: float) -> None:
        self.total = int(seconds * smtloops.RLIMIT_PER_S)
        self.left = self.total

    @property
    def used(self) -> int:
        return self.total - self.left

    def spent(self) -> bool:
        """Is the budget used up?"""
        return self.left <= 0

    def charge(self, units: int) -> None:
        self.left -= units

    def check(self, solver: z3.Solver, *assumptions, cap: int = CHECK_RLIMIT) -> z3.CheckSatResult:
        """``solver.check`` within ``cap`` and the effort left, charged with
        what it used; ``unknown`` when the grant runs out.  A check stopped
        by anything but its grant (the wall-clock guard) is an error: its
        answer would depend on the machine's load."""
        grant = max(1, min(cap, self.left))
        before = smtloops.rlimit_used(solver)
        solver.set("rlimit", grant)
        r = solver.check(*assumptions)
        used = smtloops.rlimit_used(solver) - before
        self.left -= max(1, used)
        # z3 says "canceled" both for a spent grant and for the timeout: the
        # units used tell them apart
        if r == z3.unknown and (solver.reason_unknown() == "timeout"
                                or (solver.reason_unknown() == "canceled" and used < grant)):
            raise WcetError(f"a solver check of the infeasible-path search stopped without an answer "
                            f"({solver.reason_unknown()}) before using its effort grant of {grant} units")
        return r


@dataclass
class Conflict:
    """One fact added to the ILP, with where it comes from."""
    kind: str                      # "conflict" or "flag"
    text: str                      # what it says
    sources: list[str]             # source lines (file:line) involved
    edges: int = 0                 # ILP terms

    def as_dict(self) -> dict:
        return {"kind": self.kind, "text": self.text, "sources": self.sources, "terms": self.edges}


@dataclass
class Refinement:
    conflicts: list[Conflict] = field(default_factory=list)
    iterations: int = 0
    bound_before: int = 0
    bound_after: int = 0
    seconds: float = 0.0
    stopped: str = ""              # why the refinement ended
    effort: int = 0                # effort units used (``Effort``)

    def as_dict(self) -> dict:
        return {"bound_before": self.bound_before, "bound_after": self.bound_after,
                "iterations": self.iterations, "seconds": round(self.seconds, 3), "stopped": self.stopped,
                "effort": self.effort,
                "facts": [c.as_dict() for c in self.conflicts]}


# ---------------------------------------------------------------------------
# Whole-program facts: constant-address stores, mod sets, constant returns,
# escaping globals
# ---------------------------------------------------------------------------

@dataclass
class StoreSite:
    block: int
    addr: int | None       # constant address, or None for "somewhere in [lo, hi)"
    width: int
    zero: bool             # stores x0
    lo: int = 0
    hi: int = 0
    value: int | None = None   # the stored value when it is a constant


class ProgramFacts:
    def __init__(self, program: Program, arrays_in_bounds: bool = False) -> None:
        self.program = program
        #: assumption (option): a store at a global's address plus an index
        #: never writes a word that the program accesses at a constant address
        self.arrays_in_bounds = arrays_in_bounds
        self.image = program.image
        objs = sorted((s.addr, s.addr + max(s.size, 1)) for s in self.image.symbols
                      if s.kind == "object" and self._writable(s.addr))
        self._obj_lo = [a for a, _ in objs]
        self._obj = objs
        self.stores: dict[int, list[StoreSite]] = {}
        #: blocks of each function with a store that may reach object
        #: memory (an address neither constant, in a global, nor on the stack)
        self.object_stores: dict[int, set[int]] = {}
        self._writes_objects: dict[int, bool] = {}
        self.loads: dict[int, set[int]] = {}
        self.const_ret: dict[int, int] = {}
        self.escaping: set[tuple[int, int]] = set()
        self._consts: dict[int, dict[int, dict[int, int]]] = {}
        self.inputs: dict[int, set[int]] = {}
        self.ret_used: dict[int, set[int]] = {}
        for fe in reversed(self._topo()):
            self._liveness(program.functions[fe])
        for f in program.functions.values():
            self._scan(f)
        self._scan_data()
        self.scalars = set().union(*self.loads.values(), *({s.addr for s in v if s.addr is not None}
                                                          for v in self.stores.values()))
        self.mod: dict[int, set[int]] = {}
        self.calls: dict[int, set[int]] = {}
        for fe in program.functions:
            self._closure(fe)
        for fe in reversed(self._topo()):
            self._const_return(program.functions[fe])

    def _writable(self, a: int) -> bool:
        sec = self.image.section_at(a)
        return sec is not None and sec.writable and not self.image.is_code(a)

    def extent(self, a: int) -> tuple[int, int] | None:
        i = bisect.bisect_right(self._obj_lo, a) - 1
        if i >= 0 and a < self._obj[i][1]:
            return self._obj[i]
        return None

    def data_name(self, a: int) -> str:
        """``symbol+offset`` of a data address."""
        ext = self.extent(a)
        for s in self.image.symbols:
            if ext is not None and s.addr == ext[0] and s.kind == "object":
                return s.name + (f"+{a - s.addr:#x}" if a != s.addr else "")
        return f"{a:#x}"

    def untracked(self, a: int) -> bool:
        ext = self.extent(a)
        return ext is None or ext in self.escaping

    def consts(self, f: Function) -> dict[int, dict[int, int]]:
        c = self._consts.get(id(f))
        if c is None:
            c = self._consts[id(f)] = constant_registers(f.blocks, f.entry, self.image)
        return c

    def _liveness(self, f: Function) -> None:
        """Argument registers a function reads before writing them (its
        inputs), and which results its callers use after a call."""
        args = set(range(10, 18))
        live_in: dict[int, set[int]] = {bs: set() for bs in f.blocks}
        changed = True
        while changed:
            changed = False
            for bs, b in f.blocks.items():
                live = set()
                for t in b.succs:
                    if b.kind is not Term.CALL:
                        live |= live_in.get(t, set())
                if b.kind is Term.CALL and b.succs:
                    live |= live_in.get(b.succs[0], set())
                    live -= set(CALLER_SAVED)
                    live |= self.inputs.get(b.call_target, args)
                elif b.kind is Term.CALL:
                    live |= self.inputs.get(b.call_target, args)
                elif b.kind is Term.TAILCALL:
                    live |= self.inputs.get(b.call_target, args)
                elif b.kind is Term.RETURN:
                    live |= {10, 11}
                for ins in reversed(b.instrs[:-1] if b.kind in (Term.CALL, Term.TAILCALL) else b.instrs):
                    live = (live - set(ins.writes)) | (set(ins.reads) & args)
                if live != live_in[bs]:
                    live_in[bs] = live
                    changed = True
        self.inputs[f.entry] = live_in.get(f.entry, set()) & args
        for bs, b in f.blocks.items():
            if b.kind is Term.CALL and b.call_target is not None:
                used = live_in.get(b.succs[0], set()) & {10, 11} if b.succs else set()
                self.ret_used.setdefault(b.call_target, set()).update(used)

    def _global_in(self, e: tuple) -> tuple[int, int] | None:
        """The data object whose address a symbolic expression is based on."""
        if e[0] == "c":
            return self.extent(e[1])
        if e[0] in ("add", "sub"):
            return self._global_in(e[1]) or (self._global_in(e[2]) if e[0] == "add" else None)
        return None

    def _scan(self, f: Function) -> None:
        st_in = self.consts(f)
        stores: list[StoreSite] = []
        obj_blocks: set[int] = set()
        loads: set[int] = set()
        for bs, b in f.blocks.items():
            regs = {r: ("c", v) for r, v in st_in.get(bs, {}).items()}
            for ins in b.instrs:
                get = (lambda r: ("c", 0) if not r else regs.get(r, ("r", r)))
                if ins.cls in (InstrClass.STORE, InstrClass.FP_STORE, InstrClass.AMO, InstrClass.SC):
                    base = get(ins.rs1)
                    if ins.cls is InstrClass.STORE or ins.cls is InstrClass.FP_STORE:
                        imm = ins.imm
                    else:
                        imm = 0
                    zero = ins.cls is InstrClass.STORE and not ins.rs2
                    if base[0] == "c":
                        data = get(ins.rs2) if ins.cls is InstrClass.STORE else ("?",)
                        stores.append(StoreSite(bs, (base[1] + imm) & rv64smt.MASK64, ins.mem_width, zero,
                                                value=data[1] if data[0] == "c" else None))
                    else:
                        ext = self._global_in(base)
                        if ext is not None:
                            stores.append(StoreSite(bs, None, ins.mem_width, zero, *ext))
                        elif not _stack_based(base):
                            obj_blocks.add(bs)
                    if ins.cls is InstrClass.STORE or ins.cls is InstrClass.AMO:
                        val = get(ins.rs2)
                        ext = self._global_in(val)
                        if ext is not None:
                            self.escaping.add(ext)
                if ins.cls is InstrClass.LOAD and get(ins.rs1)[0] == "c":
                    loads.add((get(ins.rs1)[1] + ins.imm) & rv64smt.MASK64)
                if ins.cls is InstrClass.CSR and ins.rs1:
                    ext = self._global_in(get(ins.rs1))
                    if ext is not None:
                        self.escaping.add(ext)
                sym_step(regs, ins)
            if b.kind in (Term.CALL, Term.TAILCALL, Term.RETURN):
                if b.kind is Term.RETURN:
                    passed = self.ret_used.get(f.entry, {10, 11}) if f.entry not in self.program.entries.values() \
                        else {10, 11}
                else:
                    passed = self.inputs.get(b.call_target, set(range(10, 18)))
                for r in passed:
                    ext = self._global_in(regs.get(r, ("r", r)))
                    if ext is not None:
                        self.escaping.add(ext)
        self.stores[f.entry] = stores
        self.object_stores[f.entry] = obj_blocks
        self.loads[f.entry] = loads

    def _scan_data(self) -> None:
        for sec in self.image.sections:
            if sec.nobits or self.image.is_code(sec.addr) or sec.size < 8:
                continue
            data = self.image.read(sec.addr, sec.size)
            for off in range(0, len(data) - 7, 8):
                v = int.from_bytes(data[off:off + 8], "little")
                ext = self.extent(v)
                if ext is not None:
                    self.escaping.add(ext)

    def _topo(self) -> list[int]:
        import networkx as nx
        g = self.program.callgraph.subgraph(self.program.functions.keys())
        return list(nx.topological_sort(g))

    def _closure(self, fe: int) -> None:
        if fe in self.mod:
            return
        self.mod[fe] = set()
        self.calls[fe] = set()
        mod = {s.addr for s in self.stores[fe] if s.addr is not None}
        calls: set[int] = set()
        for _bs, callee in self.program.functions[fe].calls:
            self._closure(callee)
            mod |= self.mod[callee]
            calls |= {callee} | self.calls[callee]
        self.mod[fe] = mod
        self.calls[fe] = calls

    def writes_objects(self, fe: int) -> bool:
        """May a call of ``fe`` store to object memory (or call code the
        analysis does not know)?"""
        w = self._writes_objects.get(fe)
        if w is None:
            w = self._writes_objects[fe] = any(
                self.object_stores[g] or any(b.kind in (Term.CALL, Term.TAILCALL) and b.call_target is None
                                             for b in self.program.functions[g].blocks.values())
                for g in {fe} | self.calls[fe])
        return w

    def may_write(self, fe: int, a: int) -> bool:
        """Can a call of ``fe`` store to the word at ``a`` (constant or indexed)?"""
        for g in {fe} | self.calls[fe]:
            for s in self.stores[g]:
                if (s.addr is not None and s.addr <= a < s.addr + s.width) or \
                        (s.addr is None and s.lo <= a < s.hi and not self.indexed_misses(a)):
                    return True
        return False

    def value_range(self, a: int, width: int) -> tuple[int, int] | None:
        """(lo, hi) of the unsigned values the ``width``-byte global word at
        ``a`` can hold, when every store that may write it stores a constant
        of that width at exactly ``a`` (and its address never escapes): its
        initial value and those constants.  None otherwise."""
        if self.untracked(a) or not self._writable(a):
            return None
        vals = {self.image.read_int(a, width, False) if not self._nobits(a) else 0}
        for sites in self.stores.values():
            for st in sites:
                if st.addr is None:
                    if st.lo < a + width and a < st.hi:
                        return None
                    continue
                if st.addr < a + width and a < st.addr + st.width:
                    if st.addr != a or st.width != width or st.value is None:
                        return None
                    vals.add(st.value & ((1 << (8 * width)) - 1))
        return min(vals), max(vals)

    def _nobits(self, a: int) -> bool:
        sec = self.image.section_at(a)
        return sec is not None and sec.nobits

    def indexed_misses(self, a: int) -> bool:
        """Under ``arrays_in_bounds``: an indexed store cannot hit word ``a``."""
        return self.arrays_in_bounds and a in self.scalars

    def _const_return(self, f: Function) -> None:
        if not f.returns:
            return
        st_in = self.consts(f)
        vals = set()
        for bs, b in f.blocks.items():
            if b.kind is Term.TAILCALL:
                c = self.const_ret.get(b.call_target or -1)
                if c is None:
                    return
                vals.add(c)
            if b.kind is not Term.RETURN:
                continue
            regs = {r: ("c", v) for r, v in st_in.get(bs, {}).items()}
            for ins in b.instrs:
                sym_step(regs, ins)
            a0 = regs.get(10, ("r", 10))
            if a0[0] != "c":
                # a0 unchanged in this block and set by a constant-returning call before it
                return
            vals.add(a0[1])
        if len(vals) == 1:
            self.const_ret[f.entry] = vals.pop()


# ---------------------------------------------------------------------------
# The once scope and the worst path
# ---------------------------------------------------------------------------

def _stack_based(e: tuple) -> bool:
    """Is a symbolic address (``cfg.sym_step``) the stack pointer plus
    constants?"""
    if e == ("r", 2):
        return True
    if e[0] == "add":
        return (_stack_based(e[1]) and e[2][0] == "c") or (_stack_based(e[2]) and e[1][0] == "c")
    return False


def _loop_blocks(forests: ipet.GraphCache, f: Function) -> set[int]:
    out: set[int] = set()
    for lp in forests.get(f).loops:
        out |= set(lp.blocks)
    return out


def once_nodes(g: ipet.InlinedGraph, program: Program, forests: ipet.GraphCache) -> list[bool]:
    """Per graph node: does it run at most once per entry by structure?"""
    in_loop: dict[tuple, set[int]] = {}
    ctx_once: dict[tuple, bool] = {(): True}
    out = [False] * len(g.nodes)
    # a context is once if its call block is once; contexts appear after their caller's call edge
    # call edges into each context (a shared context may have many)
    callers: dict[tuple, list[int]] = {}
    for a, b in g.edges:
        if a >= 0 and b >= 0 and g.nodes[a].ctx != g.nodes[b].ctx and g.nodes[b].block is not None \
                and g.nodes[b].block.start == g.nodes[b].func.entry and g.nodes[a].block is not None \
                and g.nodes[a].block.kind in (Term.CALL, Term.TAILCALL):
            callers.setdefault(g.nodes[b].ctx, []).append(a)

    # a loop whose header runs at most once per entry (bound 1: a preemption
    # point polled in it) runs its blocks at most once, unless it is irreducible
    bound_of = {(li.ctx, li.loop.header): li.bound for li in g.loops}

    def loops_of(f: Function, ctx: tuple) -> set[int]:
        key = (id(f), ctx)
        s = in_loop.get(key)
        if s is None:
            s = set()
            for lp in forests.get(f).loops:
                if lp.irreducible or bound_of.get((ctx, lp.header), 2) != 1:
                    s |= set(lp.blocks)
            in_loop[key] = s
        return s

    def ctx_is_once(ctx: tuple) -> bool:
        if ctx in ctx_once:
            return ctx_once[ctx]
        ctx_once[ctx] = False
        cs = callers.get(ctx, [])
        ok = bool(cs)
        for c in cs:
            nd = g.nodes[c]
            ok = ok and nd.block is not None and nd.block.start not in loops_of(nd.func, nd.ctx) \
                and ctx_is_once(nd.ctx)
        # several call sites (a shared context): at most one of them runs if
        # they lie on different branches of a function that runs once
        ok = ok and all(exclusive(a, b) for i, a in enumerate(cs) for b in cs[i + 1:])
        ctx_once[ctx] = ok
        return ok

    func_of: dict[tuple, Function] = {}
    for nd in g.nodes:
        func_of.setdefault(nd.ctx, nd.func)

    def exclusive(u: int, v: int) -> bool:
        cu, cv = g.nodes[u].ctx, g.nodes[v].ctx
        if program.is_shared(cu) != program.is_shared(cv) or (program.is_shared(cu) and cu[0] != cv[0]):
            return False
        k = 0
        while k < min(len(cu), len(cv)) and cu[k] == cv[k]:
            k += 1
        c = cu[:k]
        f = func_of.get(c)
        if f is None or not ctx_is_once(c):
            return False

        def block_in_c(n: int, cn: tuple) -> int | None:
            if len(cn) == k:
                return g.nodes[n].block.start
            for bs, b in f.blocks.items():
                if b.kind in (Term.CALL, Term.TAILCALL) and b.last.addr == cn[k]:
                    return bs
            return None
        bu, bv = block_in_c(u, cu), block_in_c(v, cv)
        if bu is None or bv is None or bu == bv:
            return False
        fg = f.graph()
        return not (nx.has_path(fg, bu, bv) or nx.has_path(fg, bv, bu))

    for i, nd in enumerate(g.nodes):
        if nd.block is None:
            out[i] = ctx_is_once(nd.ctx)
        else:
            out[i] = nd.block.start not in loops_of(nd.func, nd.ctx) and ctx_is_once(nd.ctx)
    return out


@dataclass
class Item:
    """One step of the worst path: a once node and the edge it leaves by, or
    a region (its nodes) with its entry and exit edges."""
    node: int | None
    edges: list[int]
    region: list[int] | None = None


def worst_path(g: ipet.InlinedGraph, x, once: list[bool]) -> list[Item]:
    out_e: dict[int, list[int]] = {}
    for e, (a, b) in enumerate(g.edges):
        if x[e] > 0:
            out_e.setdefault(a, []).append(e)
    items: list[Item] = []
    cur = [e for e in out_e.get(ipet.SOURCE, [])]
    if len(cur) != 1:
        return items
    e = cur[0]
    n = g.edges[e][1]
    seen: set[int] = set()
    while n >= 0 and n not in seen:
        seen.add(n)
        if once[n]:
            outs = out_e.get(n, [])
            if len(outs) != 1 or x[outs[0]] != 1:
                items.append(Item(n, []))
                break
            items.append(Item(n, [outs[0]]))
            n = g.edges[outs[0]][1]
            continue
        # a region: everything reachable over positive edges until once nodes
        entry_edge = items[-1].edges[0] if items else None
        region: list[int] = []
        stack = [n]
        rseen = {n}
        exits: list[int] = []
        while stack:
            m = stack.pop()
            region.append(m)
            for e2 in out_e.get(m, []):
                b = g.edges[e2][1]
                if b < 0:
                    exits.append(e2)
                elif once[b]:
                    exits.append(e2)
                elif b not in rseen:
                    rseen.add(b)
                    stack.append(b)
        if entry_edge is not None:
            src = g.edges[entry_edge][0]
            snd = g.nodes[src] if src >= 0 else None
            if snd is not None and snd.ctx != g.nodes[n].ctx and snd.block is not None \
                    and snd.block.kind is Term.CALL and snd.block.succs:
                # a call: it comes back at its own return site (a shared
                # callee's returns to other sites are other calls)
                site = g.index.get((snd.ctx, snd.block.succs[0]))
                exits = [e2 for e2 in exits if g.edges[e2][1] == site]
        if len(exits) != 1 or x[exits[0]] != 1 or entry_edge is None:
            items.append(Item(None, [], region))
            break
        items.append(Item(None, [exits[0]], region))
        n = g.edges[exits[0]][1]
    return items


# ---------------------------------------------------------------------------
# SMT over the path
# ---------------------------------------------------------------------------

class PathChecker:
    def __init__(self, program: Program, facts: ProgramFacts, g: ipet.InlinedGraph) -> None:
        self.program = program
        self.facts = facts
        self.g = g

    def _branch_cond(self, nd: ipet.Node, cond, e: int):
        """Condition for leaving ``nd`` by graph edge ``e`` (None: none)."""
        blk = nd.block
        if cond is None or blk is None or blk.kind is not Term.BRANCH or len(blk.succs) != 2:
            return None
        dst = self.g.edges[e][1]
        if dst < 0 or self.g.nodes[dst].ctx != nd.ctx or self.g.nodes[dst].block is None:
            return None
        t = self.g.nodes[dst].block.start
        if t == blk.succs[0]:
            return cond
        if t == blk.succs[1]:
            return z3.Not(cond)
        return None

    def _summarise(self, st: rv64smt.SymState, region: list[int], exit_edge: int | None,
                   stack_top: int | None) -> None:
        g = self.g
        first = g.nodes[region[0]]
        base_ctx = first.ctx
        dst = g.edges[exit_edge][1] if exit_edge is not None else -1
        # a call region returns to another context; a loop region stays in its own
        is_call = dst >= 0 and g.nodes[dst].ctx != base_ctx and first.block is not None \
            and first.block.start == first.func.entry
        writes: set[int] = set()
        callees: set[int] = set()
        mod: set[int] = set()
        indexed: list[tuple[int, int]] = []
        sp_stores: list[int] = []
        sp_used = False
        obj_writes = False
        sp = st.get(2)
        sp_val = rv64smt.as_int(sp)
        for m in region:
            nd = g.nodes[m]
            if nd.block is None:
                continue
            if nd.ctx == base_ctx and not is_call:
                for ins in nd.block.instrs:
                    writes |= ins.writes
                    if ins.cls in (InstrClass.STORE, InstrClass.FP_STORE) and ins.rs1 == 2:
                        sp_stores.append(ins.imm)
                        if ins.rs2 == 2:
                            sp_used = True
                    elif 2 in ins.reads and not (ins.is_mem and ins.rs1 == 2 and ins.rs2 != 2):
                        sp_used = True     # a stack address computed in the loop
                if nd.block.start in self.facts.object_stores[nd.func.entry] or (
                        nd.block.kind in (Term.CALL, Term.TAILCALL) and nd.block.call_target is None):
                    obj_writes = True
                for s in self.facts.stores[nd.func.entry]:
                    if s.block == nd.block.start:
                        if s.addr is not None:
                            mod.add(s.addr)
                        else:
                            indexed.append((s.lo, s.hi))
                if nd.block.kind in (Term.CALL, Term.TAILCALL) and nd.block.call_target is not None:
                    callees.add(nd.block.call_target)
        if is_call:
            callees.add(first.func.entry)
        for c in callees:
            mod |= self.facts.mod.get(c, set())
            for f2 in {c} | self.facts.calls.get(c, set()):
                indexed += [(s.lo, s.hi) for s in self.facts.stores[f2] if s.addr is None]
        # stack addresses passed into the region: it may write any stack slot
        leak = sp_used
        stack_lo = 0
        if stack_top is not None:
            ext = self.facts.extent(stack_top - 1)
            stack_lo = ext[0] if ext is not None else stack_top - (1 << 16)
        for r, v in st.regs.items():
            if r == 2 or r >= 32:
                continue
            c = st.classify(v)
            if c[0] == "stack" or (c[0] == "abs" and sp_val is not None and stack_top is not None
                                   and stack_lo <= c[1] <= stack_top):
                leak = True
                break
        # a global's address (plus an index) handed to the region in a register:
        # it may store through it anywhere in that global
        handed = (self.facts.inputs.get(first.func.entry, set(range(10, 18))) if is_call
                  else set(st.regs) - {2})
        pointed: list[tuple[int, int]] = []
        for r in handed:
            if r in st.regs and r < 32:
                for c in rv64smt.addends(z3.simplify(st.regs[r])):
                    ext = self.facts.extent(c)
                    if ext is not None:
                        pointed.append(ext)
        for r in writes | (set(CALLER_SAVED) if callees else set()):
            if r != 2:
                st.regs[r] = rv64smt.fresh("hv", f"x{r}")
        if is_call:
            for r in CALLER_SAVED:
                st.regs[r] = rv64smt.fresh("hv", f"x{r}")
            c = self.facts.const_ret.get(first.func.entry)
            if c is not None:
                st.regs[10] = rv64smt.const(c)

        def gone(kind: str, a: int, w: int) -> bool:
            if kind == "stack":
                spk = st.classify(sp)
                below = spk[0] == "stack" and a < spk[1]
                return leak or below or (spk[0] == "stack" and any(abs(a - spk[1] - o) < 8 for o in sp_stores))
            if any(m_ < a + w and a < m_ + 8 for m_ in mod) or any(lo <= a < hi for lo, hi in pointed):
                return True
            if any(lo < a + w and a < hi for lo, hi in indexed) and not self.facts.indexed_misses(a):
                return True
            if sp_val is not None and stack_top is not None and stack_lo <= a <= stack_top:
                return leak or a < sp_val or any(abs(a - sp_val - o) < 8 for o in sp_stores)
            return False
        st.havoc_named(gone)
        # object memory is forgotten only if the region may store to it:
        # object pointers never reach the stack or a global (the memory
        # model), so the region's other stores leave it as it was
        if obj_writes or any(self.facts.writes_objects(c) for c in callees):
            st.forget_objects()

    def conflicts(self, items: list[Item], effort: Effort) -> list[list[int]]:
        """Minimal conflicts on the path, as lists of item indices."""
        g = self.g
        facts = self.facts
        st = rv64smt.SymState.initial(self.program.image, _gp(self.program), untracked=facts.untracked, extent=facts.extent,
                                      keep_scalar=facts.indexed_misses)
        solver = z3.Solver()
        solver.set("timeout", smtloops.CHECK_TIMEOUT_MS)       # a hang guard: Effort.check raises
        solver.set("core.minimize", True)
        lits: list[z3.BoolRef] = []
        has_cond: list[bool] = []
        # fresh name -> (step, the fresh value, what it equals, the other
        # steps that equality relies on)
        defs: dict[str, tuple[int, z3.BitVecRef, z3.BitVecRef, frozenset]] = {}
        conds: list[tuple[int, z3.BoolRef, frozenset]] = []
        stack_top: int | None = None
        # fresh name -> (fresh value, its origin, steps): values that copy
        # another (a move, a pointer plus a constant), so that two accesses
        # through copies of one pointer meet (SymState.canon)
        copies: dict[str, tuple[z3.BitVecRef, z3.BitVecRef, frozenset]] = {}

        def canon(e: z3.BitVecRef) -> tuple[z3.BitVecRef, frozenset]:
            subs = [(copies[n][0], copies[n][1]) for n in sorted(rv64smt.leaves(e)) if n in copies]
            if not subs:
                return e, frozenset()
            steps = frozenset().union(*(copies[n][2] for n in rv64smt.leaves(e) if n in copies))
            return z3.simplify(z3.substitute(e, *subs)), steps

        def copy_like(v: z3.BitVecRef) -> bool:
            if z3.is_const(v):
                return not z3.is_bv_value(v)
            return (z3.is_app_of(v, z3.Z3_OP_BADD) and v.num_args() == 2
                    and sum(z3.is_bv_value(c) for c in v.children()) == 1
                    and all(z3.is_const(c) for c in v.children()))
        st.canon = canon
        for i, it in enumerate(items):
            p = z3.Bool(f"p{i}")
            lits.append(p)
            st.step = i
            st.deps = set()
            before_regs = dict(st.regs)
            before_named = dict(st.named)
            cond_here = None
            if it.node is not None:
                nd = g.nodes[it.node]
                if nd.block is not None:
                    cond = None
                    effort.charge(STEP_EFFORT * len(nd.block.instrs))
                    for ins in nd.block.instrs:
                        c = rv64smt.execute(st, ins)
                        if c is not None:
                            cond = c
                    spv = rv64smt.as_int(st.get(2))
                    if spv is not None and (stack_top is None or spv > stack_top):
                        stack_top = spv
                    if it.edges:
                        cond_here = self._branch_cond(nd, cond, it.edges[0])
                    if nd.block.kind is Term.CALL and nd.block.call_target is not None and it.edges:
                        dst = g.edges[it.edges[0]][1]
                        if dst < 0 or g.nodes[dst].ctx == nd.ctx:
                            # call not followed (stop function): clobber as a call
                            for r in CALLER_SAVED:
                                st.regs[r] = rv64smt.fresh("hv", f"x{r}")
                            if facts.writes_objects(nd.block.call_target):
                                st.forget_objects()
            else:
                effort.charge(STEP_EFFORT * len(it.region))
                self._summarise(st, it.region, it.edges[0] if it.edges else None, stack_top)
            # cut the dependence on the item: its outputs become fresh values
            # equal to what it computed, under its literal (and those of the
            # steps a forwarded load relied on)
            deps = frozenset(d for d in st.deps if d != i)

            def cut(v: z3.BitVecRef, hint: str) -> z3.BitVecRef:
                nv = rv64smt.fresh("v", hint)
                defs[nv.decl().name()] = (i, nv, v, deps)
                if copy_like(v):
                    root, steps = canon(v)
                    copies[nv.decl().name()] = (nv, root, steps | {i} | deps)
                return nv
            for r, v in list(st.regs.items()):
                if before_regs.get(r) is not v:
                    st.regs[r] = cut(v, f"x{r}")
            for k, v in list(st.named.items()):
                if before_named.get(k) is not v:
                    st.named[k] = cut(v, "m")
            if cond_here is not None and not z3.is_true(z3.simplify(cond_here)):
                conds.append((i, cond_here, deps))
            has_cond.append(cond_here is not None)
        # only the definitions the branch conditions depend on (cone of influence)
        need: list[str] = [n for _i, c, _d in conds for n in rv64smt.leaves(c)]
        cone: set[str] = set()
        while need:
            n = need.pop()
            if n in cone or n not in defs:
                continue
            cone.add(n)
            need.extend(rv64smt.leaves(defs[n][2]))

        def guard(i: int, deps: frozenset) -> z3.BoolRef:
            return z3.And(lits[i], *[lits[d] for d in sorted(deps)]) if deps else lits[i]
        for n in sorted(cone):          # a fixed order: z3's effort depends on it
            i, nv, v, deps = defs[n]
            solver.add(z3.Implies(guard(i, deps), nv == v))
        for i, c, deps in conds:
            solver.add(z3.Implies(guard(i, deps), c))
        found: list[list[int]] = []
        active = list(range(len(items)))
        for _ in range(CONFLICTS_PER_PATH):
            if effort.spent():
                break
            r = effort.check(solver, [lits[i] for i in active])
            if r != z3.unsat:
                break
            core = {int(str(c)[1:]) for c in solver.unsat_core()}
            core = self._minimise(solver, lits, sorted(core), effort)
            if core is None:
                break
            found.append(core)
            # look for another conflict without the last element of this one
            last = max(i for i in core if has_cond[i]) if any(has_cond[i] for i in core) else max(core)
            active = [i for i in active if i != last]
        return found

    @staticmethod
    def _minimise(solver: z3.Solver, lits, core: list[int], effort: Effort) -> list[int] | None:
        keep = list(core)
        i = 0
        while i < len(keep):
            if effort.spent():
                return None
            trial = keep[:i] + keep[i + 1:]
            r = effort.check(solver, [lits[j] for j in trial])
            if r == z3.unsat:
                keep = trial
            else:
                i += 1
        return keep


# ---------------------------------------------------------------------------
# Flag facts (counts relative to counts)
# ---------------------------------------------------------------------------

def _gp(program: Program) -> dict[int, int]:
    """``gp`` holds ``__global_pointer$`` (as the CFG builder assumes), so
    gp-relative accesses to globals are constant-address accesses."""
    return {3: program.image.gp} if program.image.gp is not None else {}


def _acyclic_paths(f: Function, src: int, dst: Callable[[int], bool], back: set[tuple[int, int]],
                   limit: int) -> list[list[int]] | None:
    """Block paths from ``src`` to a block satisfying ``dst`` without back
    edges; None when there are more than ``limit``."""
    out: list[list[int]] = []
    stack: list[list[int]] = [[src]]
    while stack:
        p = stack.pop()
        b = p[-1]
        if dst(b) and (len(p) > 1 or not f.blocks[b].succs):
            out.append(p)
            if len(out) > limit:
                return None
            continue
        for s in f.blocks[b].succs:
            if (b, s) in back or s in p:
                continue
            stack.append(p + [s])
    return out


@dataclass
class FlagFact:
    func: Function
    block: int
    loc: int
    setters: list[tuple[int, int, int]]   # (function entry, block start, number of stores)


def find_flag_facts(program: Program, facts: ProgramFacts, forests: ipet.GraphCache,
                    effort: Effort) -> list[FlagFact]:
    out: list[FlagFact] = []
    for f in program.functions.values():
        locs = sorted({(s.addr, s.width) for s in facts.stores[f.entry] if s.zero and s.addr is not None
                       and s.addr in facts.loads[f.entry] and not facts.untracked(s.addr)})
        if not locs:
            continue
        fo = forests.get(f)
        looped = _loop_blocks(forests, f)
        back = {(u, t) for lp in fo.loops for u, t in lp.back_edges}
        for L, w in locs:
            for bs, b in f.blocks.items():
                if effort.spent():
                    return out
                if b.kind is not Term.CALL or bs in looped or b.call_target is None:
                    continue
                if _clears_after(program, facts, f, b, L, w, back) and \
                        _needs_flag(program, facts, f, b, L, w, back, effort):
                    out.append(FlagFact(f, bs, L, _setters(program, facts, L, w)))
    return out


def _clears_after(program, facts, f: Function, b: BasicBlock, L: int, w: int, back) -> bool:
    """On every way from after ``b``'s call to a return of ``f``, the last
    write to L is a store of zero, and nothing between calls ``f`` again."""
    if b.call_target is not None and (b.call_target == f.entry or f.entry in facts.calls.get(b.call_target, ())
                                      or facts.may_write(b.call_target, L)):
        return False
    if not b.succs:
        return False
    paths = _acyclic_paths(f, b.succs[0], lambda s: f.blocks[s].kind in (Term.RETURN, Term.TAILCALL, Term.HALT,
                                                                         Term.TRAP_RETURN)
                           or not f.blocks[s].succs, back, MAX_FLAG_PATHS)
    if paths is None or not paths:
        return False
    consts = facts.consts(f)
    for p in paths:
        cleared = False
        for s in p:
            blk = f.blocks[s]
            if blk.kind is Term.HALT or blk.kind is Term.TRAP_RETURN:
                cleared = True          # the path never returns: no later B on it
                break
            regs = {r: ("c", v) for r, v in consts.get(s, {}).items()}
            for ins in blk.instrs:
                if ins.cls in (InstrClass.STORE, InstrClass.FP_STORE, InstrClass.AMO, InstrClass.SC):
                    base = regs.get(ins.rs1, ("r", ins.rs1)) if ins.rs1 else ("c", 0)
                    imm = ins.imm if ins.cls in (InstrClass.STORE, InstrClass.FP_STORE) else 0
                    if base[0] == "c":
                        a = (base[1] + imm) & rv64smt.MASK64
                        if a <= L < a + ins.mem_width:
                            cleared = ins.cls is InstrClass.STORE and not ins.rs2 and a == L and ins.mem_width == w
                    elif facts._global_in(base) == facts.extent(L) and not facts.indexed_misses(L):
                        cleared = False
                sym_step(regs, ins)
            if blk.kind in (Term.CALL, Term.TAILCALL) and blk.call_target is not None:
                c = blk.call_target
                if c == f.entry or f.entry in facts.calls.get(c, ()):
                    return False
                if facts.may_write(c, L) or _hands_pointer(facts, c, regs, L):
                    cleared = False
                if blk.kind is Term.CALL and not blk.succs:
                    cleared = True      # never returns, and cannot run F again
                    break
            elif not blk.succs and blk.kind is not Term.RETURN:
                cleared = False         # a dead end of another kind: be careful
        if not cleared:
            return False
    return True


def _hands_pointer(facts: ProgramFacts, callee: int, regs: dict, L: int) -> bool:
    """Does a call pass, in an argument register the callee reads, an
    address based on the global that holds L?"""
    ext = facts.extent(L)
    return any(facts._global_in(regs.get(r, ("r", r))) == ext
               for r in facts.inputs.get(callee, set(range(10, 18))))


def _needs_flag(program, facts: ProgramFacts, f: Function, b: BasicBlock, L: int, w: int, back,
                effort: Effort) -> bool:
    """Is ``b`` reached only while L != 0 (on every acyclic path from the entry)?"""
    paths = _acyclic_paths(f, f.entry, lambda s: s == b.start, back, MAX_FLAG_PATHS)
    if not paths:
        return False
    for p in paths:
        st = rv64smt.SymState.initial(program.image, _gp(program), untracked=facts.untracked, extent=facts.extent,
                                      keep_scalar=facts.indexed_misses)
        s = z3.Solver()
        s.set("timeout", smtloops.CHECK_TIMEOUT_MS)            # a hang guard: Effort.check raises
        for i, bs in enumerate(p):
            blk = f.blocks[bs]
            cond = None
            instrs = blk.instrs if bs != b.start else blk.instrs[:-1]
            effort.charge(STEP_EFFORT * len(instrs))
            for ins in instrs:
                c = rv64smt.execute(st, ins)
                if c is not None:
                    cond = c
            if bs == b.start:
                break
            nxt = p[i + 1]
            if blk.kind is Term.BRANCH and cond is not None and len(blk.succs) == 2:
                s.add(cond if nxt == blk.succs[0] else z3.Not(cond))
            if blk.kind in (Term.CALL, Term.TAILCALL) and blk.call_target is not None:
                c = blk.call_target
                ext = facts.extent(L)
                for r in facts.inputs.get(c, set(range(10, 18))):
                    if any(facts.extent(k) == ext for k in rv64smt.addends(z3.simplify(st.get(r)))):
                        return False    # the callee gets a pointer into L's global
                for r in CALLER_SAVED:
                    st.regs[r] = rv64smt.fresh("hv", f"x{r}")
                if c in facts.const_ret:
                    st.regs[10] = rv64smt.const(facts.const_ret[c])
                if c == f.entry or f.entry in facts.calls.get(c, ()) or facts.may_write(c, L):
                    return False
                st.forget_objects()
        val = st.load(rv64smt.const(L), w, False)
        s.add(val == 0)
        if effort.check(s) != z3.unsat:
            return False
    return True


def _setters(program: Program, facts: ProgramFacts, L: int, w: int) -> list[tuple[int, int, int]]:
    out: dict[tuple[int, int], int] = {}
    for fe, sites in facts.stores.items():
        for s in sites:
            hit = (s.addr is not None and s.addr < L + w and L < s.addr + s.width
                   and not (s.zero and s.addr <= L and L + w <= s.addr + s.width)) or \
                  (s.addr is None and s.lo < L + w and L < s.hi and not facts.indexed_misses(L))
            if hit:
                out[(fe, s.block)] = out.get((fe, s.block), 0) + 1
    return [(fe, bs, n) for (fe, bs), n in out.items()]


def flag_constraint(g: ipet.InlinedGraph, fact: FlagFact) -> ipet.Constraint:
    """count(B) - sum(k * count(setter)) <= 1 over every context."""
    terms: list[tuple[int, float]] = []
    setters = {(fe, bs): n for fe, bs, n in fact.setters}
    want = fact.block
    for e, (a, b) in enumerate(g.edges):
        if b < 0:
            continue
        nd = g.nodes[b]
        if nd.block is None:
            continue
        if nd.block.start == want and nd.func.entry == fact.func.entry:
            terms.append((e, 1.0))
        k = setters.get((nd.func.entry, nd.block.start))
        if k:
            terms.append((e, -float(k)))
    return ipet.Constraint(terms, 1.0)


# ---------------------------------------------------------------------------
# The refinement loop
# ---------------------------------------------------------------------------

def _source(program: Program, addr: int) -> str:
    lf = program.image.line_of(addr)
    return f"{lf[0].split('/')[-1]}:{lf[1]}" if lf else program.image.describe(addr)


def _item_sources(program: Program, g: ipet.InlinedGraph, items: list[Item], idx: list[int]) -> list[str]:
    out: list[str] = []
    for i in idx:
        it = items[i]
        if it.node is None or g.nodes[it.node].block is None:
            continue
        blk = g.nodes[it.node].block
        s = f"{g.nodes[it.node].func.name} {_source(program, blk.last.addr)}"
        if s not in out:
            out.append(s)
    return out


def refine(view: Program, entry: str, solve: Callable[[list], ipet.IpetResult],
           forests: ipet.GraphCache, budget: float = DEFAULT_BUDGET,
           facts: ProgramFacts | None = None) -> tuple[ipet.IpetResult, Refinement]:
    """Solve, find conflicts on the worst path, add them, solve again.
    ``solve(extra)`` runs the ILP with the extra constraint functions."""
    ref = Refinement()
    facts = facts or ProgramFacts(view)
    constraints: list[Callable] = []
    res = solve([])
    t0 = time.process_time()
    effort = Effort(budget)         # after the first solve, which is not refinement
    ref.bound_before = res.bound
    g = res.graph

    def resolve() -> ipet.IpetResult:
        effort.charge(SOLVE_EFFORT_PER_EDGE * len(g.edges))
        return solve(constraints)
    # flag facts first: they hold in every context
    for ff in find_flag_facts(view, facts, forests, effort):
        c = flag_constraint(g, ff)
        if not any(t > 0 for _e, t in c.terms):
            continue
        setter_names = sorted({view.functions[fe].name for fe, _bs, _n in ff.setters}) or ["nothing"]
        lname = facts.data_name(ff.loc)
        callee = view.name_of(ff.func.blocks[ff.block].call_target)
        ref.conflicts.append(Conflict(
            "flag", f"{ff.func.name} calls {callee} only while {lname} != 0 and clears it after: "
                    f"at most 1 + (stores by {', '.join(setter_names)}) calls per entry",
            [_source(view, ff.func.blocks[ff.block].last.addr)], len(c.terms)))
        constraints.append(lambda g_, c=c: [c])
    if constraints:
        res = resolve()
        g = res.graph
    once = once_nodes(g, view, forests)
    checker = PathChecker(view, facts, g)
    seen: set[tuple] = set()
    ref.stopped = "worst path feasible"
    while True:
        if effort.spent():
            ref.stopped = "effort budget"
            break
        if ref.iterations >= MAX_ITERATIONS:
            ref.stopped = "iteration limit"
            break
        items = worst_path(g, res.edge_counts, once)
        found = checker.conflicts(items, effort)
        new = 0
        for core in found:
            lo, hi = min(core), max(core)
            edges = sorted({e for it in items[lo:hi + 1] for e in it.edges})
            if lo == hi and items[lo].node is not None:
                edges = list(items[lo].edges)
            key = tuple(edges)
            if not edges or key in seen:
                continue
            seen.add(key)
            new += 1
            c = ipet.Constraint([(e, 1.0) for e in edges], float(len(edges) - 1))
            ref.conflicts.append(Conflict(
                "conflict", f"{len(core)} conditions on a stretch of {hi - lo + 1} path steps cannot hold "
                            f"together", _item_sources(view, g, items, core), len(edges)))
            constraints.append(lambda g_, c=c: [c])
        if not new:
            if effort.spent():          # the search was cut, not finished
                ref.stopped = "effort budget"
            elif found:
                ref.stopped = "no new conflict"
            break
        ref.iterations += 1
        res = resolve()
        g = res.graph
    ref.bound_after = res.bound
    ref.seconds = time.process_time() - t0
    ref.effort = effort.used
    return res, ref
