"""Returned values tied to the returns that give them (``returnfacts``,
docs/wcet.md "Returned values"): a lookup that does heavy work and returns
NULL on one way, a caller that does heavy work only on a non-NULL result.
Without the facts the worst path adds both heavy parts; with them it takes
one. Twins where the rule must not cut: a callee whose heavy way returns a
word that may be zero or not, and a caller that tests something else.
The replay of each way stays within the bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from wcet_helpers import CC, assert_replay_within_bound, build, facts_bound, needs_cc

PROGRAM = r"""
volatile unsigned long sink_;
unsigned long table[64];

#define HEAVY(n) for (int i_ = 0; i_ < (n); i_++) sink_ = sink_ + (unsigned long)i_

/* NULL after 40 steps of work, else a slot's address (never NULL) */
__attribute__((noinline)) unsigned long *find(unsigned long k)
{
    if (k & 1) {
        HEAVY(40);
        return 0;
    }
    return &table[k & 63];
}

/* the heavy way returns a loaded word, which may be 0 or not */
__attribute__((noinline)) unsigned long find_word(unsigned long k)
{
    if (k & 1) {
        HEAVY(40);
        return table[k & 63];
    }
    return 0;
}

__attribute__((noinline)) unsigned long use(unsigned long k)
{
    unsigned long *p = find(k);
    if (!p)
        return 1;
    HEAVY(30);
    return *p;
}

__attribute__((noinline)) unsigned long use_word(unsigned long k)
{
    unsigned long w = find_word(k);
    if (!w)
        return 1;
    HEAVY(30);
    return w;
}

/* tests k, not the returned value */
__attribute__((noinline)) unsigned long use_other(unsigned long k)
{
    unsigned long *p = find(k);
    sink_ = (unsigned long)p;
    if (k & 2)
        return 1;
    HEAVY(30);
    return sink_;
}

int main(void)
{
    table[2] = 5;
    sink_ = use(3) + use(2) + use_word(3) + use_word(2) + use_word(4) + use_other(1) + use_other(4);
    return 0;
}
"""


@pytest.fixture(scope="module")
def elf(tmp_path_factory) -> Path:
    if CC is None:
        pytest.skip("riscv64-unknown-elf-gcc missing")
    return build(tmp_path_factory.mktemp("retfacts"), "retfacts", c_src=PROGRAM)


@needs_cc
def test_a_null_return_does_not_reach_the_non_null_side(elf: Path) -> None:
    """use: without the facts both heavy parts (40 + 30 steps); with them
    the longer alone: the 30 steps' worth of cycles less."""
    without, with_ = facts_bound(elf, "use", False), facts_bound(elf, "use", True)
    assert with_ < without
    # each HEAVY step is a few instructions: 30 of them are at least 90
    assert without - with_ >= 90, (without, with_)


@needs_cc
def test_nothing_is_cut_where_the_value_may_be_either(elf: Path) -> None:
    """find_word's heavy way returns a word that may be 0 or not, and
    use_other tests k: the facts change nothing there."""
    for entry in ("use_word", "use_other"):
        assert facts_bound(elf, entry, True) == facts_bound(elf, entry, False), entry


@needs_cc
@pytest.mark.parametrize("model", ["u54", "u54-lru"])
def test_replay_never_above_the_bound(elf: Path, model: str) -> None:
    assert_replay_within_bound(elf, "main", model)
