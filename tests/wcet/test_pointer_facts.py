"""Pointer facts (``[[pointer]]``, docs/wcet.md "Data addresses"): a
pointer loaded from an annotated member (or pointer variable) is NULL or a
multiple of the fact's alignment, so the fields read through it lie at
known places in their lines; an argument takes the alignment of the value
every caller passes.  Checked: the lines it saves, the cases where it must
not apply (an unannotated member, a pointer computed by arithmetic, a
function the fact does not name), the replay never above the bound, and
the annotation's errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from kairos.wcet import annotations
from kairos.wcet.errors import WcetError
from wcet_helpers import CC, build, function_cost as _cost, needs_cc

# A node's priority and links share its line 11 (bytes 704..767) when the
# node is 64-byte aligned; at an unknown place in its line they may
# straddle two lines.  nodes[] is aligned as the fact states.
PROGRAM = r"""
struct node { char pad[704]; unsigned prio; unsigned spare; struct node *next; struct node *prev; };
struct list { struct node *head; struct node *tail; };
struct holder { struct node *any; };

struct node nodes[4] __attribute__((aligned(2048)));
struct list lst;
struct holder hold;
struct node *cur;
volatile unsigned long sink_;

__attribute__((noinline)) unsigned walk(struct list *l, unsigned p)
{
    struct node *n = l->head;
    unsigned k = 0;
    while (n && n->prio < p) {
        n = n->next;
        k++;
    }
    return k;
}

__attribute__((noinline)) unsigned long two(struct list *l)
{
    struct node *n = l->head;
    return n->prio + (unsigned long)n->next;
}

__attribute__((noinline)) unsigned long unannotated(struct holder *h)
{
    struct node *n = h->any;
    return n->prio + (unsigned long)n->next;
}

__attribute__((noinline)) unsigned long arith(struct list *l, unsigned long i)
{
    struct node *n = (struct node *)((char *)l->head + 8 * i);
    return n->prio + (unsigned long)n->next;
}

__attribute__((noinline)) unsigned long callee(struct node *n)
{
    return n->prio + (unsigned long)n->prev;
}

__attribute__((noinline)) unsigned long current(void)
{
    return cur->prio + (unsigned long)cur->next;
}

unsigned long run(void)
{
    unsigned long s = walk(&lst, 3) + two(&lst) + unannotated(&hold) + arith(&lst, 0);
    s += callee(lst.head) + current();
    return s;
}

int main(void)
{
    for (int i = 0; i < 3; i++) {
        nodes[i].prio = (unsigned)i;
        nodes[i].next = &nodes[i + 1];
        nodes[i + 1].prev = &nodes[i];
    }
    nodes[3].prio = 3;
    lst.head = &nodes[0];
    lst.tail = &nodes[3];
    hold.any = &nodes[1];
    cur = &nodes[2];
    sink_ = run();
    return 0;
}
"""

LOOP = """
[[loop]]
function = "walk"
max = 5
"""

FACT = LOOP + """
[[pointer]]
fields = ["node.next", "node.prev", "list.head", "list.tail"]
variables = ["cur"]
align = 2048
note = "test: nodes[] is 2048-byte aligned"
"""


def _facts(text: str) -> annotations.Annotations:
    return annotations.parse(text, "facts.toml")


def _run(elf: Path, text: str, model: str = "u54"):
    from kairos.wcet import driver
    an = driver.run(str(elf), ["run"], model_name=model, sp0="__stack_top", annotations=_facts(text))
    return an, an.results[0]


@pytest.fixture(scope="module")
def elf(tmp_path_factory) -> Path:
    if CC is None:
        pytest.skip("riscv64-unknown-elf-gcc missing")
    return build(tmp_path_factory.mktemp("ptrfact"), "ptrfact", c_src=PROGRAM)


@needs_cc
def test_fields_through_a_loaded_pointer_share_their_line(elf: Path) -> None:
    an0, res0 = _run(elf, LOOP)
    an1, res1 = _run(elf, FACT)
    assert any(w.startswith("trusted: facts.toml pointer #1") for w in an1.warnings)
    # two(): prio and next of one node are one line, not two
    assert _cost(an1, res1, "two") <= _cost(an0, res0, "two") - 150
    # walk(): the same per iteration of the list walk (a merge of two
    # annotated loads)
    assert _cost(an1, res1, "walk") <= _cost(an0, res0, "walk") - 150
    # an argument every caller passes from an annotated load; a variable
    assert _cost(an1, res1, "callee") <= _cost(an0, res0, "callee") - 150
    assert _cost(an1, res1, "current") <= _cost(an0, res0, "current") - 150
    # the walk's line at least once per iteration of its bound (5), and
    # the three single reads
    assert res1.bound <= res0.bound - (5 + 3) * 150


@needs_cc
def test_the_fact_does_not_apply_where_it_must_not(elf: Path) -> None:
    """An unannotated member (holder.any), a pointer computed from an
    annotated one by arithmetic, a fact naming other functions only."""
    an0, res0 = _run(elf, LOOP)
    an1, res1 = _run(elf, FACT)
    assert _cost(an1, res1, "unannotated") == _cost(an0, res0, "unannotated")
    assert _cost(an1, res1, "arith") == _cost(an0, res0, "arith")
    an2, res2 = _run(elf, FACT.replace('align = 2048', 'align = 2048\nfunctions = ["walk"]')
                     .replace('variables = ["cur"]\n', ''))
    assert _cost(an2, res2, "two") == _cost(an0, res0, "two")
    assert _cost(an2, res2, "walk") == _cost(an1, res1, "walk")
    # only where the symbolic cache analysis runs
    from kairos.wcet import driver
    off = driver.run(str(elf), ["run"], sp0="__stack_top", annotations=_facts(FACT), symbolic_cache=False)
    assert not any(w.startswith("trusted:") for w in off.warnings)


@needs_cc
@pytest.mark.parametrize("model", ["u54", "u54-lru"])
def test_replay_never_above_the_bound(elf: Path, model: str) -> None:
    """The nodes aligned as the fact says, the walk to its end; the
    adversarial direct-mapped replay included."""
    from test_symbolic_cache import _observed
    from kairos.wcet.trace import block_path, path_bound
    # run() needs main's list: emulate main (which builds it and calls
    # run) and compare with main's own bound.
    from kairos.wcet import driver
    anm = driver.run(str(elf), ["main"], model_name=model, sp0="__stack_top", annotations=_facts(FACT))
    assert any(w.startswith("trusted: facts.toml pointer #1") for w in anm.warnings)
    trace, obs = _observed(elf, "main", model)
    assert obs <= path_bound(block_path(anm.program, "main", trace), anm.results[0].costs) \
        <= anm.results[0].bound


@pytest.mark.parametrize("text, msg", [
    ('[[pointer]]\nfields = ["a.b"]\n', "needs align and fields or variables"),
    ('[[pointer]]\nalign = 64\n', "needs align and fields or variables"),
    ('[[pointer]]\nfields = ["next"]\nalign = 64\n', '"struct.member" names'),
    ('[[pointer]]\nfields = ["a.b"]\nalign = 48\n', "align must be a power of two"),
    ('[[pointer]]\nfields = ["a.b"]\nalign = 64\nsize = 3\n', "unknown field(s) size"),
    ('[[pointer]]\nfields = []\nvariables = []\nalign = 64\n', "names no field and no variable"),
])
def test_bad_pointer_facts_are_one_line_errors(text: str, msg: str) -> None:
    with pytest.raises(WcetError) as exc:
        annotations.parse(text, "facts.toml")
    assert msg in str(exc.value) and "\n" not in str(exc.value) and "facts.toml pointer #1" in str(exc.value)


@needs_cc
@pytest.mark.parametrize("text, msg", [
    (FACT.replace('"node.next"', '"node.nxt"'), "no member 'node.nxt' in the ELF's DWARF types"),
    (FACT.replace('"node.next"', '"node.prio"'), "member 'node.prio' is not a pointer"),
    (FACT.replace('["cur"]', '["nowhere"]'), "no 8-byte variable 'nowhere' in the ELF"),
])
def test_facts_the_elf_contradicts_are_errors(elf: Path, text: str, msg: str) -> None:
    with pytest.raises(WcetError) as exc:
        _run(elf, text)
    assert msg in str(exc.value) and "\n" not in str(exc.value)


# An array of structures read at a constant index: the member's load has
# the element's offset folded into its displacement (``slots[2].obj`` at
# 2 * 16 + 8).  It is a load site where the source line names the member
# after a subscript; the same displacement on a line that does not (a
# plain word of another array) is not.
ELEMENTS = r"""
struct obj { unsigned long a, b; };
struct slot { unsigned long key; struct obj *obj; };
struct slot slots[4];
unsigned long words[8];

__attribute__((noinline)) unsigned long third(struct slot *s)
{
    return s[2].obj->a;
}

__attribute__((noinline)) unsigned long plain(unsigned long *w)
{
    return w[5];
}

int main(void)
{
    return (int)(third(slots) + plain(words));
}
"""


@needs_cc
def test_an_array_elements_member_is_a_load_site(tmp_path: Path) -> None:
    from kairos.wcet import microarch
    from kairos.wcet.elfimage import ElfImage
    elf = build(tmp_path, "elements", c_src=ELEMENTS)
    image = ElfImage(str(elf))
    fact = annotations.parse('[[pointer]]\nfields = ["slot.obj"]\nalign = 16\nnote = "test"\n',
                             "facts.toml").pointers[0]
    sites, _notes = microarch.pointer_loads(image, fact, [str(tmp_path)])
    third, plain = image.symbol("third"), image.symbol("plain")
    loads = {a: image.instr(a) for a in range(third.addr, third.addr + third.size, 2)}
    want = [a for a, i in loads.items() if i.mnemonic == "ld" and i.imm == 40]
    assert want and [a for a in sites if third.addr <= a < third.addr + third.size] == want
    # the same displacement reading a plain word: not a site
    assert image.instr(plain.addr).imm == 40
    assert not [a for a in sites if plain.addr <= a < plain.addr + plain.size]
