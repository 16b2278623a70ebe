"""Alignment of computed addresses (docs/wcet.md "Computed alignment"): a
value an instruction computes has the low bits the instruction and its
operands (in its block) give it, whatever the rest: ``x & ~31`` and
``i << 5`` are multiples of 32, a sum keeps the smaller alignment of its
operands.  Two fields of a 32-byte slot read through such a pointer are
then one line, not two.  Checked against twins that differ only where the
rule must not apply (a mask clearing three bits, an add of an index that
is only a multiple of 8), and the replay never above the bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from wcet_helpers import CC, build, needs_cc

# A slot's first and last words (offsets 0 and 24) are in one line when the
# slot is 32-byte aligned; 8-byte aligned, they may straddle two lines.
PROGRAM = r"""
struct slot { unsigned long a, b, c, d; };

struct slot slots[8] __attribute__((aligned(64)));
volatile unsigned long sink_;

__attribute__((noinline)) unsigned long unmasked(unsigned long w)
{
    struct slot *s = (struct slot *)w;
    return s->a + s->d;
}

__attribute__((noinline)) unsigned long masked32(unsigned long w)
{
    struct slot *s = (struct slot *)(w & ~31ul);
    return s->a + s->d;
}

__attribute__((noinline)) unsigned long masked8(unsigned long w)
{
    struct slot *s = (struct slot *)(w & ~7ul);
    return s->a + s->d;
}

__attribute__((noinline)) unsigned long maskvar(unsigned long w)
{
    /* a mask too wide for andi: lui/addi make it in a register */
    struct slot *s = (struct slot *)(w & ~0x1001ful);
    return s->a + s->d;
}

__attribute__((noinline)) unsigned long indexed32(unsigned long w, unsigned long i)
{
    struct slot *s = (struct slot *)((w & ~31ul) + (i << 5));
    return s->a + s->d;
}

__attribute__((noinline)) unsigned long indexed8(unsigned long w, unsigned long i)
{
    struct slot *s = (struct slot *)((w & ~31ul) + (i << 3));
    return s->a + s->d;
}

unsigned long run(unsigned long w, unsigned long i)
{
    return unmasked(w) + masked32(w) + masked8(w) + maskvar(w) + indexed32(w, i) + indexed8(w, i);
}

int main(void)
{
    for (int k = 0; k < 8; k++)
        slots[k].a = slots[k].d = (unsigned long)k;
    sink_ = run((unsigned long)&slots[1] + 5, 2) + unmasked((unsigned long)&slots[3]);
    return 0;
}
"""


def _run(elf: Path, model: str = "u54", entry: str = "run"):
    from kairos.wcet import driver
    an = driver.run(str(elf), [entry], model_name=model, sp0="__stack_top")
    return an, an.results[0]


def _cost(an, res, name: str) -> int:
    f = an.program.function(name)
    return sum(res.costs.cost(ctx, b) for ctx, g in an.program.contexts("run") if g.entry == f.entry
               for b in g.blocks)


@pytest.fixture(scope="module")
def elf(tmp_path_factory) -> Path:
    if CC is None:
        pytest.skip("riscv64-unknown-elf-gcc missing")
    return build(tmp_path_factory.mktemp("calign"), "calign", c_src=PROGRAM)


@pytest.fixture(scope="module")
def analysed(elf: Path):
    return _run(elf)


@needs_cc
def test_a_mask_or_shift_aligns_the_slot(analysed) -> None:
    an, res = analysed
    # same instructions but the mask: & ~31 saves a line over & ~7
    assert _cost(an, res, "masked32") <= _cost(an, res, "masked8") - 150
    # a mask in a register, computed in the block
    assert _cost(an, res, "maskvar") <= _cost(an, res, "masked8") - 150
    # base + i * 32 keeps the base's 32; base + i * 8 has only 8
    assert _cost(an, res, "indexed32") <= _cost(an, res, "indexed8") - 150


@needs_cc
def test_the_rule_does_not_apply_where_it_must_not(analysed) -> None:
    """A mask clearing three bits and an index of stride 8 leave the slot's
    place in its line open: no line saved over the unmasked pointer (an
    argument no caller aligns)."""
    an, res = analysed
    assert _cost(an, res, "masked32") < _cost(an, res, "unmasked")
    assert _cost(an, res, "masked8") > _cost(an, res, "unmasked") - 150
    assert _cost(an, res, "indexed8") > _cost(an, res, "unmasked") - 150


@needs_cc
@pytest.mark.parametrize("model", ["u54", "u54-lru"])
def test_replay_never_above_the_bound(elf: Path, model: str) -> None:
    from test_symbolic_cache import _observed
    from kairos.wcet.trace import block_path, path_bound
    anm, resm = _run(elf, model, "main")
    trace, obs = _observed(elf, "main", model)
    assert obs <= path_bound(block_path(anm.program, "main", trace), resm.costs) <= resm.bound
