"""Each solver query of the loop bounds runs in its own z3 context
(``smtloops.own_context``): the effort it spends, and so whether it ends
within its budget, depends only on the query, not on what the process asked
z3 before.  In one shared context the list walks' parameter bounds
(``sender_with_badge``, ``tqueue_insert``) ran out of budget in the
whole-kernel analysis and were bounded when analysed alone.
"""

from __future__ import annotations

import pytest
import z3

from wcet_helpers import fixed_kernel_program, loop_of


pytestmark = pytest.mark.usefixtures("private_solver_cache")


@pytest.fixture(scope="module")
def fixed_program():
    return fixed_kernel_program()


def _query(program, func: str, index: int):
    from kairos.wcet.bounds import BoundAnalysis
    fo, lp = loop_of(program, func, index)
    q, _key = BoundAnalysis(program)._smt_query(fo, lp)
    return q


def _run(program, func: str, index: int) -> tuple[int | None, int]:
    """(bound, effort units left in the last model tried) of a fresh query."""
    q = _query(program, func, index)
    return q.bound(), q.effort


def test_query_effort_does_not_depend_on_earlier_queries(fixed_program) -> None:
    """The same query, first in the process, after other loops' queries and
    after terms built in z3's default context, spends the same effort to the
    unit.  In a shared context it differed from run to run (4,567,281,
    4,567,207, 4,567,293 units left for this loop)."""
    first = _run(fixed_program, "fault_handle_reply", 1)
    assert first[0] == 32
    _run(fixed_program, "fault_handle_reply", 0)
    _run(fixed_program, "vspace_copy_kernel_mappings", 0)
    after_others = _run(fixed_program, "fault_handle_reply", 1)
    x = z3.BitVec("x!1", 64)
    noise = z3.Solver()
    noise.add(z3.ULT(x * 3 + 7, 100), x != 5)
    assert noise.check() == z3.sat
    after_noise = _run(fixed_program, "fault_handle_reply", 1)
    assert first == after_others == after_noise


def test_callers_context_is_kept(fixed_program) -> None:
    """Must not apply outside a query: the caller's default context (the
    infeasible-path search builds its terms there) is the same before and
    after a query, also when the query fails, and its terms still combine."""
    from kairos.wcet import smtloops
    before = z3.main_ctx()
    y = z3.BitVec("y", 64)
    assert _run(fixed_program, "fault_handle_reply", 0)[0] == 10
    assert z3.main_ctx() is before
    s = z3.Solver()
    s.add(y + z3.BitVecVal(1, 64) == 3)           # a term from before and one from after: same context
    assert s.check() == z3.sat and s.model()[y].as_long() == 2
    q = _query(fixed_program, "fault_handle_reply", 1)

    def fail(*_a, **_k):
        assert z3.main_ctx() is not before        # inside: the query's own context
        raise RuntimeError("query failed")
    q._bound_here = fail
    with pytest.raises(RuntimeError):
        q.bound()
    assert z3.main_ctx() is before
    with smtloops.own_context():
        inner = z3.main_ctx()
        assert inner is not before
        with smtloops.own_context():
            assert z3.main_ctx() is not inner
        assert z3.main_ctx() is inner
    assert z3.main_ctx() is before
