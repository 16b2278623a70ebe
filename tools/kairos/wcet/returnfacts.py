"""Returned values tied to the paths that return them.

The IPET graph inlines each call: the callee's return blocks have edges to
the call's return site.  Without more, a path may go through a return that
leaves ``a0`` zero (a lookup that found nothing, a send that blocked) and
then take the caller's branch for a non-zero ``a0`` (the found object used,
the message written): two halves of different executions.  That is how
``if (!dest) return;`` after ``dest = fault_receiver(...)`` used to let a
path both block the sender and transfer its message (docs/wcet.md
"Returned values").

Facts: for a return-site block that runs at most once per entry
(``infeasible.once_nodes``) and ends by testing the returned value
against zero (``beqz``/``bnez`` on ``a0`` or a copy of it made in that
block by ``mv``, nothing writing it in between), and for each callee return
block, whether ``a0`` there may be zero and whether it may be non-zero
(``ValueInfo.return_value``: the interval of the value analysis, sound over
every context).  Then, per return-site node of the inlined graph,

    flow(zero side)     <= sum(return edges into it that may give zero) + other in-edges
    flow(non-zero side) <= sum(return edges that may give non-zero)     + other in-edges

The "other in-edges" (a region start at the return site, a branch from
elsewhere in the caller to that address, a return from a virtual tail-call
node whose value is not classified) keep every real execution: the flow
that reaches the test through a classified return carries that return's
value, whatever the context sharing (a return edge's count is the number of
returns through it to this site).
"""

from __future__ import annotations

from typing import Any, Callable

from kairos.wcet import ipet
from kairos.wcet.cfg import BasicBlock, Program, Term
from kairos.wcet.infeasible import once_nodes

A0 = 10

#: value classes: (may be zero, may be non-zero)
Class = tuple[bool, bool]
BOTH: Class = (True, True)


def value_class(val: Any) -> Class:
    """Whether a value of the value analysis may be zero / non-zero."""
    if val is None or val[0] != "abs":
        return BOTH
    lo, hi = val[1], val[2]
    return (lo <= 0 <= hi, not (lo == 0 and hi == 0))


def zero_test(ret: BasicBlock) -> tuple[int, int] | None:
    """For a return-site block ending in ``beq``/``bne`` of the returned
    value (``a0``, or a register it was copied to in this block) against
    zero: (successor when it is zero, successor when it is not)."""
    if ret.kind is not Term.BRANCH or len(ret.succs) != 2:
        return None
    held = {A0}
    for ins in ret.instrs[:-1]:
        if ins.mnemonic == "addi" and ins.imm == 0 and ins.rs1 in held and ins.rd:
            held.add(ins.rd)
            continue
        held -= set(ins.writes)
        if not held:
            return None
    br = ret.last
    if br.mnemonic not in ("beq", "bne"):
        return None
    regs = {br.rs1 or 0, br.rs2 or 0}
    if 0 not in regs or len(regs) != 2 or not (regs - {0}) <= held:
        return None
    target = br.target
    if target not in ret.succs or ret.succs[0] == ret.succs[1]:
        return None
    other = next(s for s in ret.succs if s != target)
    return (target, other) if br.mnemonic == "beq" else (other, target)


def return_sites(program: Program) -> dict[tuple[int, int], tuple[int, int]]:
    """(caller entry, return-site block start) -> (zero successor,
    non-zero successor) for every call whose return site tests ``a0``."""
    out: dict[tuple[int, int], tuple[int, int]] = {}
    for f in program.functions.values():
        for blk in f.blocks.values():
            if blk.kind is not Term.CALL or not blk.succs:
                continue
            ret = f.blocks.get(blk.succs[0])
            if ret is None:
                continue
            t = zero_test(ret)
            if t is not None:
                out[(f.entry, ret.start)] = t
    return out


def constraints(program: Program, values: Any) -> Callable[[ipet.InlinedGraph], list[ipet.Constraint]]:
    """The ILP rows above for every return site of ``program`` that tests
    its call's value, as an ``ipet`` extra-constraint function."""
    sites = return_sites(program)
    value_at = getattr(values, "return_value", None)

    def ret_class(node: ipet.Node) -> Class | None:
        """The class of a callee return node, None if it is not one."""
        b = node.block
        if b is None or b.kind is not Term.RETURN or value_at is None:
            return None
        return value_class(value_at(node.func.entry, b.start))

    forests = ipet.GraphCache()

    def fn(g: ipet.InlinedGraph) -> list[ipet.Constraint]:
        # only return sites that run at most once per entry: inside loops the
        # rows are sound too, but they make the ILP's relaxation fractional
        # (on the 4a409ff kernel, with its 64-fold refill loops, HiGHS then
        # branched for more than 20 minutes), and a returned value tested
        # once per iteration is the infeasible-path search's to find
        once = once_nodes(g, program, forests)
        ins: dict[int, list[int]] = {}
        outs: dict[int, dict[int, list[int]]] = {}
        for e, (a, b) in enumerate(g.edges):
            if b >= 0:
                ins.setdefault(b, []).append(e)
            if a >= 0 and b >= 0 and g.nodes[a].block is not None and g.nodes[b].block is not None \
                    and g.nodes[a].ctx == g.nodes[b].ctx:
                outs.setdefault(a, {}).setdefault(g.nodes[b].block.start, []).append(e)
        rows: list[ipet.Constraint] = []
        for i, nd in enumerate(g.nodes):
            if nd.block is None or not once[i]:
                continue
            t = sites.get((nd.func.entry, nd.block.start))
            if t is None or i not in outs:
                continue
            zero_edges, nonzero_edges = outs[i].get(t[0], []), outs[i].get(t[1], [])
            if not zero_edges or not nonzero_edges:
                continue
            may_zero: list[int] = []
            may_nonzero: list[int] = []
            other: list[int] = []
            cut = False
            for e in ins.get(i, []):
                a = g.edges[e][0]
                c = ret_class(g.nodes[a]) if a >= 0 and g.nodes[a].ctx != nd.ctx else None
                if c is None:
                    other.append(e)
                    continue
                if c[0]:
                    may_zero.append(e)
                if c[1]:
                    may_nonzero.append(e)
                cut = cut or c != BOTH
            if not cut:
                continue
            for side, allowed in ((zero_edges, may_zero), (nonzero_edges, may_nonzero)):
                coef: dict[int, float] = {}
                for e in side:
                    coef[e] = coef.get(e, 0.0) + 1.0
                for e in allowed + other:
                    coef[e] = coef.get(e, 0.0) - 1.0
                rows.append(ipet.Constraint([(e, c) for e, c in coef.items() if c], 0.0))
        return rows
    return fn
