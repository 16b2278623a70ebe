"""Branches decided by constant arguments, per call context (``argfacts``,
docs/wcet.md "Constant arguments"): a dispatcher whose heavy case only
one caller asks for. A caller that always passes the light case's number,
directly (in a tail call or a call that returns) or through a function
that passes it on, gets the light case alone; a caller whose number is
unknown keeps every case. The replay of each way stays within the
bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from wcet_helpers import CC, assert_replay_within_bound, build, facts_bound, needs_cc

PROGRAM = r"""
volatile unsigned long sink_;
volatile unsigned long input_;

#define HEAVY(n) for (int i_ = 0; i_ < (n); i_++) sink_ = sink_ + (unsigned long)i_

/* noipa: no clone specialised for a constant (dispatch.constprop), which
 * would decide the branch in the binary itself */
__attribute__((noinline, noipa)) void dispatch(unsigned long op, unsigned long k)
{
    if (op == 1) {
        HEAVY(40);
    } else if (op == 2) {
        HEAVY(10);
    } else {
        HEAVY(5);
    }
    sink_ = sink_ + k;
}

/* always the light case */
__attribute__((noinline, noipa)) void light(unsigned long k) { dispatch(2, k); }

/* the same through a call that returns (not a tail call) */
__attribute__((noinline, noipa)) void light_call(unsigned long k)
{
    dispatch(2, k);
    sink_ = sink_ + 1;
}

/* passes its own first argument on: constant only where its caller's is */
__attribute__((noinline, noipa)) void relay(unsigned long op, unsigned long k) { dispatch(op, k + 1); }
__attribute__((noinline, noipa)) void light_via_relay(unsigned long k) { relay(2, k); }

/* a number the analysis cannot know */
__attribute__((noinline, noipa)) void any(unsigned long k) { dispatch(input_, k); }

int main(void)
{
    input_ = 1;
    light(3);
    light_call(6);
    light_via_relay(4);
    any(5);
    return 0;
}
"""


@pytest.fixture(scope="module")
def elf(tmp_path_factory) -> Path:
    if CC is None:
        pytest.skip("riscv64-unknown-elf-gcc missing")
    return build(tmp_path_factory.mktemp("argfacts"), "argfacts", c_src=PROGRAM)


@needs_cc
@pytest.mark.parametrize("entry", ["light", "light_call", "light_via_relay"])
def test_a_constant_argument_decides_the_callee_branch(elf: Path, entry: str) -> None:
    """Without the facts the heavy case (40 steps) is on the worst path;
    with them only the light one (10): 30 steps' worth of cycles less."""
    without, with_ = facts_bound(elf, entry, False), facts_bound(elf, entry, True)
    # each HEAVY step is a few instructions: 30 of them are at least 90
    assert without - with_ >= 90, (entry, without, with_)


@needs_cc
def test_an_unknown_argument_keeps_every_case(elf: Path) -> None:
    assert facts_bound(elf, "any", True) == facts_bound(elf, "any", False)


@needs_cc
def test_decided_branches_are_read_from_the_binary(elf: Path) -> None:
    """The fact names the branch that `light`'s constant decides, and no
    branch of `any`'s context."""
    from kairos.wcet import argfacts, driver
    program = driver.run(str(elf), ["main"], model_name="simple", sp0="__stack_top",
                         infeasible_paths=False).program
    consts = argfacts.ContextConstants(program)
    f = program.function("dispatch")
    light_site = next(bs for bs, c in program.function("light").calls if c == f.entry)
    light_ctx = program.callee_context((), program.function("light").blocks[light_site].last.addr, f.entry)
    callers = {light_ctx: [((), light_site)]}
    funcs = {(): program.function("light"), light_ctx: f}
    state = consts.at(light_ctx, f, callers, funcs)
    decided = [bs for bs, blk in f.blocks.items()
               if state.get(bs) is not None and argfacts.decided_successor(blk, state[bs]) is not None]
    assert decided, "no branch of dispatch decided by op == 2"
    plain = consts.at((), f, {}, {(): f})
    assert not [bs for bs, blk in f.blocks.items()
                if plain.get(bs) and argfacts.decided_successor(blk, plain[bs]) is not None]


@needs_cc
@pytest.mark.parametrize("model", ["u54", "u54-lru"])
def test_replay_never_above_the_bound(elf: Path, model: str) -> None:
    assert_replay_within_bound(elf, "main", model)
