"""Unwinding after a taken preemption point (the review's P10).

The handling path of a taken poll starts in the preemption-point function:
it returns non-zero (an interrupt is pending, the definition of "taken").
Each function on the call string above it (a *spine frame*) then resumes at
the return site of the call it was making, with the value that call
returned in ``a0``, and runs one path to its own return (or to ``sret``).
Without more, the ILP lets a spine frame go on from there into any of its
blocks: ``perform_tcb_caps`` into its next ``install_tcb_cap`` step, a delete
loop into its next finalisation.  The code does not: it tests the returned
status and returns it (``if (!delete_unexposed(end)) return false;``).

This module derives that from the binary, for every spine frame of every
poll start of the handling ILP:

1. **Explore** the frame's function from the return site, on the acyclic
   paths to its returns, in z3 over RV64 bit-vector semantics
   (``rv64smt``).  At the return site ``a0`` lies in the set the callee can
   return on its own explored paths (the poll: non-zero); the callee-saved
   registers hold what the function's own data flow leaves in them at the
   call (``_block_states``: a symbolic forward analysis whose joins keep
   only terms that agree, refined on ``r == constant`` edges); the rest is
   unknown.  A branch direction the solver shows impossible is not
   followed.  Calls on the way are summarised (caller-saved registers,
   memory and objects forgotten; a constant return kept, as in
   ``infeasible``); a later poll returns non-zero (the interrupt is still
   pending: the assumption the handling ILP makes at every poll's test).
   Once no constrained value is left in the state, the rest depends only on
   its constants and is explored once per (block, constants).  A path that
   comes back to a block already on it while a constrained value is live (a
   loop iteration), or a budget that runs out, gives up: everything
   reachable from there is allowed and the returned value is unknown; an
   undecided check keeps the direction.  The edges of the explored paths are the frame's *allowed*
   edges; the ``a0`` at each reached return makes the caller's set
   (constants, "non-zero", or unknown).
2. **Constrain** the ILP, per context ``c`` of a spine frame and per group
   of edges with the same set of starts allowing them::

       sum(edges) <= M * (entries of c + sum(source edges of the starts allowing them))

   ``M`` is what one activation of the function can execute of those edges
   (the product of the bounds of the loops around each edge's block, the
   ILP's own loop bounds).  Within one handling path, a context runs either
   as a spine frame of the start taken (one resumption, on its allowed
   edges) or as a new activation, entered through its entry block: then the
   constraint is relaxed.  So no real execution is cut; shared contexts
   included (their entries are all their call edges).

Soundness rests on the exploration being an over-approximation of every
real execution from the return site: the solver only removes a direction
when it proves it unsatisfiable, and everything else is followed.  The
memory model is ``rv64smt``'s (object accesses do not touch tracked globals;
``infeasible.ProgramFacts`` checks which globals may be tracked).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import z3

from kairos.wcet import ipet, rv64smt
from kairos.wcet.cfg import CALLER_SAVED, BasicBlock, Context, Function, Program, Term
from kairos.wcet import smtloops
from kairos.wcet.infeasible import STEP_EFFORT, Effort, ProgramFacts

A0 = 10
#: path extensions explored per (function, return site, value set) before giving up
MAX_STEPS = 4000
#: solver effort per check (z3 resource units, about one second); an
#: undecided check keeps the direction
CHECK_RLIMIT = 2_500_000
#: effort of one exploration, and of all of them, in nominal seconds
#: (``infeasible.Effort``: deterministic units, so the allowed edges and the
#: bound do not depend on the machine's load)
FRAME_SECONDS = 5.0
TOTAL_SECONDS = 90.0
#: constants enumerated for a returned value before it counts as unknown
MAX_VALUES = 4

#: a set of possible values of a0: ("const", frozenset), ("nonzero",) or ("any",)
Values = tuple
ANY: Values = ("any",)
NONZERO: Values = ("nonzero",)


def _execute_block(st: rv64smt.SymState, blk: BasicBlock) -> z3.BoolRef | None:
    """Run a block's instructions on ``st``; the condition of its ending
    branch (taken), or None when it ends otherwise."""
    cond = None
    for ins in blk.instrs:
        c = rv64smt.execute(st, ins)
        if c is not None:
            cond = c
    return cond


def _join(a: Values, b: Values) -> Values:
    if a == ANY or b == ANY:
        return ANY
    if a[0] == "const" and b[0] == "const":
        return ("const", a[1] | b[1])
    consts = (a[1] if a[0] == "const" else frozenset()) | (b[1] if b[0] == "const" else frozenset())
    return NONZERO if 0 not in consts else ANY


@dataclass
class Exploration:
    allowed: set[tuple[int, int]] = field(default_factory=set)   # CFG edges (from block, to block)
    returns: Values | None = None      # a0 at the reached returns; None: no path returns
    gave_up: str = ""                  # why the exploration allowed everything reachable


class Unwinder:
    """Per (function, return site, a0 values): the allowed edges and the
    values returned (memoised over contexts)."""

    def __init__(self, program: Program, polls: set[int], facts: ProgramFacts | None = None,
                 budget: float = TOTAL_SECONDS) -> None:
        self.program = program
        self.polls = set(polls)
        self.facts = facts or ProgramFacts(program)
        self.effort = Effort(budget)
        self.memo: dict[tuple[int, int, Values], Exploration] = {}
        self._states: dict[int, dict[int, rv64smt.SymState]] = {}
        self.gp = {3: program.image.gp} if program.image.gp is not None else {}

    # -- one frame -------------------------------------------------------------
    def explore(self, f: Function, site: int, values: Values) -> Exploration:
        key = (f.entry, site, values)
        got = self.memo.get(key)
        if got is None:
            got = self.memo[key] = self._explore(f, site, values)
        return got

    def _closure(self, f: Function, blocks: list[int], out: Exploration, why: str) -> None:
        """Allow everything reachable from ``blocks``; the return value is unknown."""
        todo = list(blocks)
        seen: set[int] = set()
        while todo:
            b = todo.pop()
            if b in seen:
                continue
            seen.add(b)
            blk = f.blocks[b]
            for s in blk.succs:
                out.allowed.add((b, s))
                todo.append(s)
            if blk.kind in (Term.RETURN, Term.TAILCALL):
                out.returns = ANY
        if not out.gave_up:
            out.gave_up = why

    def _explore(self, f: Function, site: int, values: Values) -> Exploration:
        out = Exploration()
        if self.effort.spent():
            self._closure(f, [site], out, "effort budget")
            return out
        frame = Effort(min(FRAME_SECONDS, self.effort.left / smtloops.RLIMIT_PER_S))
        try:
            return self._explore_in(f, site, values, out, frame)
        finally:
            self.effort.charge(frame.used)

    def _explore_in(self, f: Function, site: int, values: Values, out: Exploration,
                    frame: Effort) -> Exploration:
        facts = self.facts
        st0 = self._resume_state(f, site)
        x = st0.regs[A0]
        first = z3.BoolVal(True) if values == ANY else x != 0 if values == NONZERO else \
            z3.Or([x == rv64smt.const(c) for c in sorted(values[1])])
        names0 = frozenset({x.decl().name()})
        solver = z3.Solver()
        solver.set("timeout", smtloops.CHECK_TIMEOUT_MS)       # a hang guard: Effort.check raises
        steps = 0
        # Depth-first over (block, state at its start, blocks so far, path condition).  While the
        # returned value (x) is held somewhere in the state, branches on it are checked with the
        # solver; once it is gone, the rest depends only on the constants in the state (every
        # other branch is followed both ways), so (block, constants) is explored once.
        done: set[tuple] = set()
        stack: list[tuple[int, rv64smt.SymState, tuple[int, ...], tuple, frozenset[str]]] = \
            [(site, st0, (), (first,), names0)]
        while stack:
            b, st, path, conds, names = stack.pop()
            steps += 1
            if steps > MAX_STEPS or frame.spent():
                out.allowed.clear()
                self._closure(f, [site], out, "exploration budget")
                return out
            live = self._holds(st, names)
            if not live:
                key = (b, self._constants(st))
                if key in done:
                    continue
                done.add(key)
            blk = f.blocks[b]
            path = path + (b,)
            frame.charge(STEP_EFFORT * len(blk.instrs))
            cond = _execute_block(st, blk)
            if blk.kind is Term.RETURN:
                v = self._value(solver, conds, st.get(A0), frame) if live else self._const_value(st.get(A0))
                out.returns = self._join_value(out.returns, v)
                continue
            if blk.kind is Term.TAILCALL:
                c = facts.const_ret.get(blk.call_target) if blk.call_target is not None else None
                out.returns = self._join_value(out.returns, ("const", frozenset({c})) if c is not None else ANY)
                continue
            if blk.kind is Term.CALL:
                self._summarise_call(st, blk.call_target)
                if blk.call_target in self.polls:
                    # the interrupt is still pending: a later poll is taken too (Blackham's
                    # assumption, the one the handling ILP makes at every poll's test)
                    conds = conds + (st.regs[A0] != 0,)
                    names = names | {st.regs[A0].decl().name()}
                    live = True
            for s in blk.succs:
                if live and s in path:
                    # a further iteration of a loop while the value is still held: no precision from there
                    out.allowed.add((b, s))
                    self._closure(f, [s], out, "loop iteration after the return site")
                    continue
                lit = None
                if blk.kind is Term.BRANCH and cond is not None and len(blk.succs) == 2:
                    lit = cond if s == blk.succs[0] else z3.Not(cond)
                    lit = z3.simplify(lit)
                    if z3.is_false(lit):
                        continue
                    if z3.is_true(lit) or not (names & rv64smt.leaves(lit)):
                        lit = None      # decided, or free: nothing to check
                    else:
                        solver.push()
                        solver.add(*conds, lit)
                        r = frame.check(solver, cap=CHECK_RLIMIT)
                        solver.pop()
                        if r == z3.unsat:
                            continue
                out.allowed.add((b, s))
                stack.append((s, st.copy(), path if live else (), conds + ((lit,) if lit is not None else ()),
                              names))
        return out

    # -- what is known at the return site ---------------------------------------
    def _initial(self) -> rv64smt.SymState:
        facts = self.facts
        return rv64smt.SymState.initial(self.program.image, self.gp, untracked=facts.untracked,
                                        extent=facts.extent, keep_scalar=facts.indexed_misses)

    def _resume_state(self, f: Function, site: int) -> rv64smt.SymState:
        """The state after the call that returns to ``site``: the callee-saved
        registers (and ``sp``, ``gp``) as the function's own data flow leaves
        them at the call (``_block_states``), everything else unknown, ``a0`` a
        fresh value (the callee's result)."""
        call = next((bs for bs, blk in f.blocks.items() if blk.kind is Term.CALL and blk.succs
                     and blk.succs[0] == site), None)
        st = self._initial()
        pre = self._block_states(f).get(call) if call is not None else None
        if pre is not None:
            at = pre.copy()
            for ins in f.blocks[call].instrs:
                rv64smt.execute(at, ins)
            for r in range(1, 32):
                if r not in CALLER_SAVED and r in at.regs:
                    st.regs[r] = at.regs[r]
        st.regs[A0] = rv64smt.fresh("ret", "a0")
        return st

    def _block_states(self, f: Function) -> dict[int, rv64smt.SymState]:
        """Per block, a symbolic state at its start that holds on every way
        into it from the function's entry: registers and named memory whose
        terms agree on every incoming edge, after the edge's branch condition
        (``r == constant`` replaces ``r`` by the constant).  Where they
        disagree, or where a term comes around a loop (it names an earlier
        pass of the block), the value is a fresh unknown of the block.
        Calls are summarised as in the exploration."""
        got = self._states.get(f.entry)
        if got is not None:
            return got
        states: dict[int, rv64smt.SymState] = {}
        joins: dict[tuple[int, object], rv64smt.BV] = {}
        work = [(f.entry, self._initial())]
        rounds = 0
        while work and rounds < 40 * max(len(f.blocks), 1):
            rounds += 1
            b, incoming = work.pop()
            old = states.get(b)
            if old is None:
                cur = incoming
            else:
                cur = self._join(b, old, incoming, joins)
                if cur is None:
                    continue            # nothing changed
            states[b] = cur
            st = cur.copy()
            blk = f.blocks[b]
            cond = _execute_block(st, blk)
            if blk.kind is Term.CALL:
                self._summarise_call(st, blk.call_target)
            if blk.kind in (Term.RETURN, Term.TAILCALL):
                continue
            for s_ in blk.succs:
                nxt = st.copy()
                nxt.forget_objects()
                if blk.kind is Term.BRANCH and cond is not None and len(blk.succs) == 2:
                    self._refine(nxt, z3.simplify(cond if s_ == blk.succs[0] else z3.Not(cond)))
                work.append((s_, nxt))
        if work:
            states = {}                 # no fixpoint in the budget: know nothing
        self._states[f.entry] = states
        return states

    @staticmethod
    def _refine(st: rv64smt.SymState, lit: z3.BoolRef) -> None:
        """On an edge whose condition is ``t == c``: registers holding ``t`` hold ``c``."""
        if not z3.is_eq(lit):
            return
        a, b = lit.children()
        if z3.is_bv_value(a):
            a, b = b, a
        if not z3.is_bv_value(b) or z3.is_bv_value(a):
            return
        for r, v in list(st.regs.items()):
            if z3.eq(v, a):
                st.regs[r] = b

    @staticmethod
    def _join(b: int, old: rv64smt.SymState, new: rv64smt.SymState,
              joins: dict[tuple[int, object], rv64smt.BV]) -> rv64smt.SymState | None:
        """``old`` joined with ``new`` at block ``b``; None if ``old`` already covers it."""
        prefix = f"j{b:x}_"

        def stale(v: rv64smt.BV) -> bool:
            return any(n.startswith(prefix) for n in rv64smt.leaves(v))

        changed = False
        out = old.copy()
        for r in set(old.regs) | set(new.regs):
            ov, nv = old.regs.get(r), new.regs.get(r)
            if ov is not None and nv is not None and z3.eq(ov, nv) and not stale(nv):
                continue
            j = joins.get((b, r))
            if j is None:
                j = joins[(b, r)] = z3.BitVec(f"{prefix}x{r}", 64)
            if ov is None or not z3.eq(ov, j):
                out.regs[r] = j
                changed = True
        for k in list(old.named):
            nv = new.named.get(k)
            if nv is None or not z3.eq(old.named[k], nv) or stale(nv):
                del out.named[k]
                changed = True
        return out if changed else None

    @staticmethod
    def _holds(st: rv64smt.SymState, names: frozenset[str]) -> bool:
        """Is a constrained value (the returned one, a later poll's) still somewhere in the state?"""
        vals = list(st.regs.values()) + list(st.named.values()) + [o[2] for o in st.objects] \
            + [o[0] for o in st.objects]
        return any(names & rv64smt.leaves(v) for v in vals)

    @staticmethod
    def _constants(st: rv64smt.SymState) -> tuple:
        regs = tuple(sorted((r, v.as_long()) for r, v in st.regs.items() if z3.is_bv_value(v)))
        named = tuple(sorted((k, v.as_long()) for k, v in st.named.items() if z3.is_bv_value(v)))
        return regs, named

    @staticmethod
    def _const_value(a0: rv64smt.BV) -> Values:
        c = rv64smt.as_int(a0)
        return ("const", frozenset({c})) if c is not None else ANY

    @staticmethod
    def _join_value(acc: Values | None, v: Values) -> Values:
        return v if acc is None else _join(acc, v)

    @staticmethod
    def _value(solver: z3.Solver, conds: tuple, a0: rv64smt.BV, frame: Effort) -> Values:
        """a0 at a return on this path: one of a few constants, provably
        non-zero, or unknown."""
        c = rv64smt.as_int(a0)
        if c is not None:
            return ("const", frozenset({c}))
        found: set[int] = set()
        solver.push()
        solver.add(*conds)
        try:
            for _ in range(MAX_VALUES + 1):
                r = frame.check(solver, cap=CHECK_RLIMIT)
                if r == z3.unsat:
                    return ("const", frozenset(found)) if found else ANY
                if r != z3.sat:
                    break
                v = solver.model().eval(a0, model_completion=True).as_long()
                found.add(v)
                solver.add(a0 != rv64smt.const(v))
        finally:
            solver.pop()
        solver.push()
        solver.add(*conds, a0 == 0)
        r = frame.check(solver, cap=CHECK_RLIMIT)
        solver.pop()
        return NONZERO if r == z3.unsat else ANY

    def _summarise_call(self, st: rv64smt.SymState, callee: int | None) -> None:
        """A call on the way: caller-saved registers, memory and objects are
        forgotten (callee-saved registers and ``sp`` survive: the calling
        convention); a constant return is kept."""
        for r in CALLER_SAVED:
            st.regs[r] = rv64smt.fresh("hv", f"x{r}")
        st.named.clear()
        st.forget_objects()
        if callee is not None and callee in self.facts.const_ret:
            st.regs[A0] = rv64smt.const(self.facts.const_ret[callee])

    # -- the spines ------------------------------------------------------------
    def spine(self, g: ipet.InlinedGraph, ctx: Context, values: Values
              ) -> dict[tuple[Context, int], set[tuple[int, int]]]:
        """For a start in context ``ctx`` whose function returns ``values``:
        per (context, function entry) of every frame it may unwind through,
        the allowed CFG edges (a call block to its return site stands for
        the return edges into that site)."""
        out: dict[tuple[Context, int], set[tuple[int, int]]] = {}
        seen: set[tuple[Context, int, Values]] = set()
        work: list[tuple[Context, Values]] = [(ctx, values)]
        while work:
            c, v = work.pop()
            for cc, cb in g.callers.get(c, []):
                if (cc, cb, v) in seen:
                    continue
                seen.add((cc, cb, v))
                node = g.nodes[g.index[(cc, cb)]]
                f, blk = node.func, node.block
                key = (cc, f.entry)
                allowed = out.setdefault(key, set())
                if blk.kind is Term.TAILCALL or not blk.succs:
                    # nothing of the caller runs again; a tail call returns for it
                    if blk.kind is Term.TAILCALL:
                        work.append((cc, v))
                    continue
                ex = self.explore(f, blk.succs[0], v)
                allowed.add((cb, blk.succs[0]))
                allowed |= ex.allowed
                if ex.returns is not None:
                    work.append((cc, ex.returns))
        return out


def constraints(g: ipet.InlinedGraph, unwinder: Unwinder, poll_starts: list[int],
                other_starts: list[int]) -> list[ipet.Constraint]:
    """The ILP rows of the module docstring.  ``poll_starts``: indices into
    ``g.start_edges`` of the handling starts at a taken poll (the start node
    is the poll function's entry); ``other_starts``: the other start indices
    (they resume frames of their own and relax every row)."""
    per_frame: dict[tuple[Context, int], dict[int, set[tuple[int, int]]]] = {}
    for i in poll_starts:
        e = g.start_edges[i]
        node = g.nodes[g.edges[e][1]]
        for key, allowed in unwinder.spine(g, node.ctx, NONZERO).items():
            per_frame.setdefault(key, {})[i] = allowed
    if not per_frame:
        return []
    # graph edges per (context, function): CFG edges, and return edges into a return site
    frame_edges: dict[tuple[Context, int], list[tuple[int, tuple[int, int]]]] = {}
    entries: dict[tuple[Context, int], list[int]] = {}
    call_of: dict[int, dict[int, int]] = {}
    for e, (a, b) in enumerate(g.edges):
        if b < 0:
            continue
        nb = g.nodes[b]
        if nb.block is None:
            continue
        key = (nb.ctx, nb.func.entry)
        if key not in per_frame:
            continue
        if a == ipet.SOURCE:
            if nb.block.start == nb.func.entry:
                entries.setdefault(key, []).append(e)
            continue
        na = g.nodes[a]
        if na.ctx == nb.ctx and na.func is nb.func and na.block is not None:
            frame_edges.setdefault(key, []).append((e, (na.block.start, nb.block.start)))
        elif nb.block.start == nb.func.entry:
            entries.setdefault(key, []).append(e)           # a call edge: a new activation
        else:
            calls = call_of.get(id(nb.func))
            if calls is None:
                calls = call_of[id(nb.func)] = {blk.succs[0]: bs for bs, blk in nb.func.blocks.items()
                                                if blk.kind is Term.CALL and blk.succs}
            cb = calls.get(nb.block.start)
            if cb is not None:
                frame_edges.setdefault(key, []).append((e, (cb, nb.block.start)))
    mult = _multiplicities(g)
    out: list[ipet.Constraint] = []
    for key, by_start in per_frame.items():
        groups: dict[frozenset[int], list[tuple[int, int]]] = {}
        for e, cfg_edge in frame_edges.get(key, []):
            ok = frozenset(i for i in poll_starts if i in by_start and cfg_edge in by_start[i]) \
                | frozenset(i for i in poll_starts if i not in by_start)
            if len(ok) == len(poll_starts):
                continue
            groups.setdefault(ok, []).append((e, mult.get((key[0], cfg_edge[0]), 1)))
        for ok, edges in groups.items():
            m = float(sum(k for _e, k in edges))
            terms = [(e, 1.0) for e, _k in edges]
            terms += [(x, -m) for x in entries.get(key, [])]
            terms += [(g.start_edges[i], -m) for i in sorted(ok) + sorted(other_starts)]
            out.append(ipet.Constraint(terms, 0.0))
    return out


def _multiplicities(g: ipet.InlinedGraph) -> dict[tuple[Context, int], int]:
    """(context, block) -> executions per activation of its function: the
    product of the bounds of the loop instances holding the block."""
    out: dict[tuple[Context, int], int] = {}
    for li in g.loops:
        for b in li.loop.blocks:
            out[(li.ctx, b)] = out.get((li.ctx, b), 1) * max(li.bound, 1)
    return out
