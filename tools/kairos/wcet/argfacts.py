"""Branches decided by constant arguments, per call context.

The IPET graph inlines each call, so a function has a node per block and
call context.  The path search treats every branch as free in every
context, also where the caller passed a constant that decides it: a
fallback such as ``handle_syscall(seL4_SysCall)`` after a fastpath's checks
then runs the slow path of any system call, not only of the one the
fastpath had (docs/wcet.md "Constant arguments").

Facts: for each context, the argument registers (``a0``-``a7``) that hold
the same constant at every call into it (forward constant propagation in
the caller, ``cfg.constant_registers``, itself seeded by the caller's
context, so constants flow down call chains); then constant propagation
in the function from that seed; a conditional branch whose two operands
are constants there goes one way only, and the ILP row

    flow(edge to the other successor, in that context) == 0

is added.  Sound: constant propagation holds at a block for every path
from the function's entry, and every execution in the context entered it
through one of those calls; a region or a handling path that starts
inside the function is the rest of such an execution.  Contexts entered
from nowhere the graph knows (the root) get no seed.
"""

from __future__ import annotations

from typing import Callable

from kairos.wcet import ipet
from kairos.wcet.cfg import BasicBlock, Context, Function, Program, Term, _c, constant_registers, sym_step

ARG_REGS = tuple(range(10, 18))       # a0-a7
_BRANCHES = {"beq", "bne", "blt", "bge", "bltu", "bgeu"}
_MASK = (1 << 64) - 1


def _signed(v: int) -> int:
    return v - (1 << 64) if v >> 63 else v


def _after(blk: BasicBlock, state: dict[int, int], upto: int) -> dict[int, tuple]:
    """The symbolic registers after the first ``upto`` instructions of
    ``blk`` entered with the constants ``state``."""
    regs = {r: _c(v) for r, v in state.items()}
    for ins in blk.instrs[:upto]:
        sym_step(regs, ins)
    return regs


def _const(regs: dict[int, tuple], r: int | None) -> int | None:
    if r is None or r == 0:
        return 0
    e = regs.get(r)
    return e[1] if e is not None and e[0] == "c" else None


def decided_successor(blk: BasicBlock, state: dict[int, int]) -> int | None:
    """The successor a conditional branch block never goes to, given the
    constants ``state`` at its start; None if the branch is not decided."""
    if blk.kind is not Term.BRANCH or len(blk.succs) != 2 or blk.succs[0] == blk.succs[1]:
        return None
    br = blk.last
    if br.mnemonic not in _BRANCHES or br.target not in blk.succs:
        return None
    regs = _after(blk, state, len(blk.instrs) - 1)
    a, b = _const(regs, br.rs1), _const(regs, br.rs2)
    if a is None or b is None:
        return None
    a, b = a & _MASK, b & _MASK
    taken = {"beq": a == b, "bne": a != b, "blt": _signed(a) < _signed(b), "bge": _signed(a) >= _signed(b),
             "bltu": a < b, "bgeu": a >= b}[br.mnemonic]
    fall = next(s for s in blk.succs if s != br.target)
    return fall if taken else br.target


class ContextConstants:
    """Constants per (context, block start), seeded by the callers'
    constant arguments; memoised over one program."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.image = program.image
        self._plain: dict[int, dict[int, dict[int, int]]] = {}
        self._seeded: dict[tuple[int, frozenset], dict[int, dict[int, int]]] = {}
        self._ctx: dict[Context, dict[int, dict[int, int]]] = {}

    def _propagate(self, f: Function, seed: dict[int, int]) -> dict[int, dict[int, int]]:
        if not seed:
            got = self._plain.get(f.entry)
            if got is None:
                got = self._plain[f.entry] = constant_registers(f.blocks, f.entry, self.image)
            return got
        key = (f.entry, frozenset(seed.items()))
        got = self._seeded.get(key)
        if got is None:
            got = self._seeded[key] = constant_registers(f.blocks, f.entry, self.image, dict(seed))
        return got

    @staticmethod
    def _caller_of(ctx: Context, funcs: dict[Context, Function]) -> list[tuple[Context, int]]:
        """A call string's one caller: (its context, the block that makes
        the call at the string's last site); none for the root and for a
        shared context itself (``(-callee,)``: ``ipet.InlinedGraph.callers``
        has its callers)."""
        if not ctx or ctx[-1] < 0:
            return []
        cf = funcs.get(ctx[:-1])
        blk = cf.block_containing(ctx[-1]) if cf is not None else None
        return [(ctx[:-1], blk.start)] if blk is not None and blk.last.addr == ctx[-1] else []

    def at(self, ctx: Context, f: Function, callers: dict[Context, list[tuple[Context, int]]],
           funcs: dict[Context, Function], active: frozenset = frozenset()) -> dict[int, dict[int, int]]:
        """Block start -> constants at its start, in context ``ctx``."""
        got = self._ctx.get(ctx)
        if got is not None:
            return got
        seed: dict[int, int] | None = None
        entering = callers.get(ctx) or self._caller_of(ctx, funcs)
        if not entering or ctx in active:
            seed = {}
        for cctx, site in entering:
            cf = funcs.get(cctx)
            blk = cf.blocks.get(site) if cf is not None else None
            if blk is None or blk.kind not in (Term.CALL, Term.TAILCALL):
                seed = {}
                break
            cstate = self.at(cctx, cf, callers, funcs, active | {ctx}).get(site)
            if cstate is None:
                seed = {}
                break
            regs = _after(blk, cstate, len(blk.instrs) - 1)
            args = {r: v for r in ARG_REGS if (v := _const(regs, r)) is not None}
            seed = args if seed is None else {r: v for r, v in seed.items() if args.get(r) == v}
            if not seed:
                break
        got = self._propagate(f, seed or {})
        if not active:
            self._ctx[ctx] = got
        return got


def constraints(program: Program) -> Callable[[ipet.InlinedGraph], list[ipet.Constraint]]:
    """The rows above for every decided branch of an ``ipet`` graph of
    ``program``, as an extra-constraint function."""
    consts = ContextConstants(program)

    def fn(g: ipet.InlinedGraph) -> list[ipet.Constraint]:
        funcs: dict[Context, Function] = {}
        for nd in g.nodes:
            funcs.setdefault(nd.ctx, nd.func)
        out_edges: dict[int, dict[int, list[int]]] = {}
        for e, (a, b) in enumerate(g.edges):
            if a >= 0 and b >= 0 and g.nodes[a].block is not None and g.nodes[b].block is not None \
                    and g.nodes[a].ctx == g.nodes[b].ctx:
                out_edges.setdefault(a, {}).setdefault(g.nodes[b].block.start, []).append(e)
        rows: list[ipet.Constraint] = []
        for i, nd in enumerate(g.nodes):
            blk = nd.block
            if blk is None or blk.kind is not Term.BRANCH or i not in out_edges:
                continue
            state = consts.at(nd.ctx, nd.func, g.callers, funcs).get(blk.start)
            if not state:
                continue
            never = decided_successor(blk, state)
            edges = out_edges[i].get(never, []) if never is not None else []
            if edges:
                rows.append(ipet.Constraint([(e, 1.0) for e in edges], 0.0, equal=True))
        return rows
    return fn
