"""CFG, call graph, loop reconstruction and automatic loop bounds on small
programs compiled at -O2, and the errors for what cannot be analysed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kairos.wcet.bounds import BoundAnalysis
from kairos.wcet.cfg import Term, build_program
from kairos.wcet.elfimage import ElfImage
from kairos.wcet.errors import WcetError
from kairos.wcet.loops import find_loops

from wcet_helpers import build, needs_cc

pytestmark = needs_cc

C_PROGRAM = r"""
volatile int sink;
int data[40];
const int table_len = 23;

__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }

__attribute__((noinline)) void counted(void)          /* one loop, 37 iterations */
{
    for (int i = 0; i < 37; i++)
        sink = i;
}

__attribute__((noinline)) void nested(void)           /* 5 x 7 nest */
{
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 7; j++)
            sink = i + j;
}

__attribute__((noinline)) void by_pointer(void)       /* pointer induction over an array */
{
    for (int *p = data; p != data + 40; p++)
        *p = sink;
}

__attribute__((noinline)) void down(void)             /* decrementing, step -3 */
{
    for (int i = 100; i > 0; i -= 3)
        sink = i;
}

__attribute__((noinline)) void from_const(void)       /* limit loaded from a const symbol */
{
    for (int i = 0; i < table_len; i++)
        sink = i;
}

__attribute__((noinline)) void with_args(int n)       /* bounded only per call site */
{
    for (int i = 0; i < n; i++)
        sink = i;
}

__attribute__((noinline)) int calls(void)
{
    int s = 0;
    for (int i = 0; i < 4; i++)
        s += leaf(i);
    with_args(9);
    with_args(13);
    return s;
}

__attribute__((noinline)) int sw(int op, int v)
{
    switch (op) {
    case 0: return v + 1;
    case 1: return v * 7;
    case 2: return v - 9;
    case 3: return v ^ 0x55;
    case 4: return v << 2;
    case 5: return v >> 1;
    case 6: return v | 3;
    case 7: return v & 12;
    default: return 0;
    }
}

__attribute__((noinline)) void triangle(void)        /* inner trip count grows with i */
{
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < i; j++)
            sink = j;
}

__attribute__((noinline)) int digits(const char *p)   /* rotated inner loop inside a scan */
{
    int w = 0;
    for (; *p; p++) {
        while (*p >= '0' && *p <= '9')
            w = w * 10 + (*p++ - '0');
        if (!*p)
            break;
    }
    return w;
}

__attribute__((noinline)) int be_switch(const unsigned char *p)  /* guard on sext.w, index zero-extended */
{
    unsigned v = ((unsigned)p[0] << 24) | ((unsigned)p[1] << 16) | ((unsigned)p[2] << 8) | p[3];
    switch (v) {
    case 1: return sink + 1;
    case 2: return sink * 3;
    case 3: return sink - 7;
    case 4: return sink ^ 9;
    case 5: return sink << 2;
    case 9: return sink >> 1;
    default: return 0;
    }
}

__attribute__((noinline)) int unbounded(const char *s)
{
    int n = 0;
    while (*s++)
        n++;
    return n;
}

int main(void)
{
    counted(); nested(); by_pointer(); down(); from_const(); triangle();
    return calls() + sw(sink, 3) + unbounded("abc") + digits("a12b3") + be_switch((const unsigned char *)"abcd");
}
"""


@pytest.fixture(scope="module")
def prog_elf(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("cfg"), "prog", C_PROGRAM)


def _header_counts(elf: Path, entry: str, header: int) -> int:
    """Executions of ``header`` in a real (emulated) run of ``entry``."""
    from kairos.wcet import emulator
    prog = emulator.load_elf(elf)
    trace = emulator.run_entry(prog, entry)
    return sum(1 for pc in trace.pcs if pc == header)


def test_cfg_structure_and_call_graph(prog_elf: Path) -> None:
    img = ElfImage(str(prog_elf))
    p = build_program(img, ["main"])
    names = {f.name for f in p.functions.values()}
    assert {"main", "counted", "nested", "calls", "leaf", "with_args", "sw", "unbounded"} <= names
    main = p.function("main")
    # blocks partition the function's instructions: no overlap, succs/preds consistent
    for f in p.functions.values():
        spans = sorted((b.start, b.end) for b in f.blocks.values())
        for (a0, a1), (b0, _b1) in zip(spans, spans[1:]):
            assert a1 <= b0, f"overlapping blocks in {f.name}"
        for b in f.blocks.values():
            for s in b.succs:
                assert b.start in f.blocks[s].preds
            assert b.end == b.last.addr + b.last.size
    calls = p.function("calls")
    callees = {p.functions[c].name for _, c in calls.calls}
    assert {"leaf", "with_args"} <= callees
    assert p.callgraph.has_edge(calls.entry, p.function("leaf").entry)
    assert len(p.callgraph[calls.entry][p.function("with_args").entry]["sites"]) == 2
    assert main.entry in p.callgraph
    # every leaf function returns
    assert p.function("leaf").returns
    assert any(b.kind is Term.RETURN for b in p.function("leaf").blocks.values())
    # contexts: with_args appears once per call site
    ctxs = [ctx for ctx, f in p.contexts("main") if f.name == "with_args"]
    assert len(ctxs) == 2 and len({c[-1] for c in ctxs}) == 2


def test_switch_jump_table_resolved(prog_elf: Path) -> None:
    img = ElfImage(str(prog_elf))
    p = build_program(img, ["sw"])
    f = p.function("sw")
    switches = [b for b in f.blocks.values() if b.kind is Term.SWITCH]
    assert len(switches) == 1, "gcc -O2 compiles an 8-case dense switch to a jump table"
    tb = switches[0].table
    assert len(tb) == 8
    assert len(set(tb)) == 8   # every case has its own code
    for t in tb:
        assert t in f.blocks and f.blocks[t].func == f.entry
    # each case block ends up returning
    assert all(any(b.kind is Term.RETURN for b in f.blocks.values()) for _ in tb)


def test_switch_indexed_by_zero_extended_value(prog_elf: Path) -> None:
    """gcc guards with bltu on sext.w(v) but indexes the table with v's low 32
    bits zero-extended; the resolver must see through that."""
    img = ElfImage(str(prog_elf))
    p = build_program(img, ["be_switch"])
    f = p.function("be_switch")
    (sw_block,) = [b for b in f.blocks.values() if b.kind is Term.SWITCH]
    assert len(sw_block.table) == 10                      # cases 0..9
    targets = set(sw_block.table)
    assert len(targets) == 7                              # six cases + default
    default = max(targets, key=sw_block.table.count)     # 0, 6, 7, 8 go to default
    assert [i for i, t in enumerate(sw_block.table) if t == default] == [0, 6, 7, 8]


MASKED_SWITCH = r"""
volatile unsigned n_in = 13;
int out;
__attribute__((noinline)) int pick(unsigned n, int a, int b)
{
    switch (n & 7) {             /* every index has a case: no bounds check */
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a ^ b;
    case 4: return a | b;
    case 5: return a & b;
    case 6: return a << (b & 7);
    case 7: return a >> (b & 7);
    default: __builtin_unreachable();
    }
}
int main(void) { out = pick(n_in, 5, 3); return out; }
"""


@needs_cc
def test_switch_bounded_by_a_mask(tmp_path: Path) -> None:
    """``switch (n & 7)`` with all eight cases compiles to a table indexed by
    the masked value and no guarding compare (the shape of glibc-style word
    copies in the WCET benchmark suites): the mask bounds the index."""
    img = ElfImage(str(build(tmp_path, "masked", c_src=MASKED_SWITCH)))
    f = build_program(img, ["main"]).function("pick")
    (sw_block,) = [b for b in f.blocks.values() if b.kind is Term.SWITCH]
    assert len(sw_block.table) == 8
    assert len(set(sw_block.table)) == 8
    assert all(t in f.blocks for t in sw_block.table)


@pytest.mark.parametrize("func,expected", [("counted", 37), ("by_pointer", 40), ("down", 34),
                                           ("from_const", 23)])
def test_automatic_bounds_match_real_runs(prog_elf: Path, func: str, expected: int) -> None:
    img = ElfImage(str(prog_elf))
    p = build_program(img, [func])
    f = p.function(func)
    fo = find_loops(f)
    assert len(fo.loops) == 1
    lp = fo.loops[0]
    b = BoundAnalysis(p).auto_bound(fo, lp)
    assert b is not None, f"{func}: no automatic bound"
    observed = _header_counts(prog_elf, func, lp.header)
    assert observed >= expected - 1     # sanity of the emulated run
    assert b.max >= observed            # sound
    assert b.max == observed            # and exact for counted loops


def test_nested_loops_and_bounds(prog_elf: Path) -> None:
    img = ElfImage(str(prog_elf))
    p = build_program(img, ["nested"])
    f = p.function("nested")
    fo = find_loops(f)
    assert len(fo.loops) == 2
    outer, inner = sorted(fo.loops, key=lambda lp: lp.depth)
    assert outer.depth == 1 and inner.depth == 2
    assert inner.parent is outer and inner in outer.children
    assert inner.blocks < outer.blocks
    assert fo.innermost[inner.header] is inner
    ba = BoundAnalysis(p)
    bo, bi = ba.auto_bound(fo, outer), ba.auto_bound(fo, inner)
    assert bo is not None and bi is not None
    assert bo.max == _header_counts(prog_elf, "nested", outer.header)
    # inner header runs bi.max times per entry; entered once per outer iteration
    assert bi.max * bo.max == _header_counts(prog_elf, "nested", inner.header)


def test_triangular_nest_total_matches_real_run(prog_elf: Path) -> None:
    from kairos.wcet import ipet
    img = ElfImage(str(prog_elf))
    p = build_program(img, ["triangle"])
    f = p.function("triangle")
    fo = find_loops(f)
    assert len(fo.loops) == 2
    inner = max(fo.loops, key=lambda lp: lp.depth)
    r = ipet.solve(p, "triangle", BoundAnalysis(p), ipet.simple_cost)
    observed = _header_counts(prog_elf, "triangle", inner.header)
    got = r.counts[((), inner.header)]
    assert got >= observed          # sound
    assert got == observed          # the per-outer-entry total makes it exact (not 11 * 11)


def test_context_sensitive_argument_bounds(prog_elf: Path) -> None:
    img = ElfImage(str(prog_elf))
    p = build_program(img, ["calls"])
    f = p.function("with_args")
    fo = find_loops(f)
    assert len(fo.loops) == 1
    lp = fo.loops[0]
    ba = BoundAnalysis(p)
    assert ba.auto_bound(fo, lp) is None          # n is unknown without a context
    got = sorted(ba.bound(fo, lp, ["calls", "with_args"], ctx).max
                 for ctx, fn in p.contexts("calls") if fn is f)
    assert got == [9, 13]


def test_unbounded_loop_error_names_loop(prog_elf: Path) -> None:
    from kairos.wcet import ipet
    img = ElfImage(str(prog_elf))
    p = build_program(img, ["unbounded"])
    f = p.function("unbounded")
    header = find_loops(f).loops[0].header
    with pytest.raises(WcetError) as ei:
        ipet.solve(p, "unbounded", BoundAnalysis(p), ipet.simple_cost)
    msg = str(ei.value)
    assert "unbounded" in msg and f"{header:#x}" in msg
    assert re.search(r"prog\.c:\d+", msg), msg     # source line from DWARF
    assert "\n" not in msg


def test_annotation_bounds_loop_by_line_and_address(prog_elf: Path, tmp_path: Path) -> None:
    from kairos.wcet import annotations, ipet
    img = ElfImage(str(prog_elf))
    p = build_program(img, ["unbounded"])
    f = p.function("unbounded")
    lp = find_loops(f).loops[0]
    line = img.line_of(lp.header)
    assert line is not None
    base = Path(line[0]).name
    for text in (f'[[loop]]\nfunction = "unbounded"\nline = "{base}:{line[1]}"\nmax = 11\n',
                 f'[[loop]]\naddress = {lp.header:#x}\nmax = 11\n'):
        ann = annotations.parse(text, "t.toml")
        r = ipet.solve(p, "unbounded", BoundAnalysis(p, ann), ipet.simple_cost)
        assert [li.bound for li in r.loops] == [11]
        assert r.counts[((), lp.header)] == 11
    # context that does not match: the loop stays unbounded
    ann = annotations.parse(f'[[loop]]\naddress = {lp.header:#x}\nmax = 11\ncontext = ["main"]\n', "t.toml")
    with pytest.raises(WcetError):
        ipet.solve(p, "unbounded", BoundAnalysis(p, ann), ipet.simple_cost)


def test_line_annotation_matches_the_innermost_loop_of_that_line(prog_elf: Path) -> None:
    """The guard of a rotated inner loop is code of the inner loop's line in
    the *outer* loop's body: the annotation must not bound the outer loop."""
    from kairos.wcet import annotations
    img = ElfImage(str(prog_elf))
    p = build_program(img, ["digits"])
    f = p.function("digits")
    fo = find_loops(f)
    assert len(fo.loops) == 2
    outer, inner = sorted(fo.loops, key=lambda lp: lp.depth)
    src = Path(img.line_of(inner.header)[0]).name
    while_line = next(i + 1 for i, ln in enumerate(C_PROGRAM.splitlines()) if "while (*p >= '0'" in ln)
    # the line has code in the outer loop's body too (the rotated guard)
    line_blocks = {f.block_containing(a).start for a in img.addrs_of_line(src, while_line)}
    assert line_blocks & (outer.blocks - inner.blocks)
    ann = annotations.parse(f'[[loop]]\nfunction = "digits"\nline = "{src}:{while_line}"\nmax = 7\n', "t.toml")
    ba = BoundAnalysis(p, ann)
    assert ba.bound(fo, inner, ["digits"]).max == 7
    with pytest.raises(WcetError, match="has no bound"):
        ba.bound(fo, outer, ["digits"])


ASM_INDIRECT = r"""
    .text
    .globl main
main:
    la   t0, somewhere
    ld   a0, 0(t0)
    jr   a0
    .globl fptr
fptr:
    la   t0, somewhere
    ld   a5, 0(t0)
    jalr a5
    ret
    .globl irreducible
irreducible:
    beqz a0, 2f
1:  addi a1, a1, 1
2:  addi a1, a1, 2
    bnez a1, 1b
    ret
    .globl illegal
illegal:
    beqz a0, 1f
    ret
1:  .word 0
    .globl rec_a
rec_a:
    addi sp, sp, -16
    sd   ra, 8(sp)
    call rec_b
    ld   ra, 8(sp)
    addi sp, sp, 16
    ret
    .globl rec_b
rec_b:
    addi sp, sp, -16
    sd   ra, 8(sp)
    call rec_a
    ld   ra, 8(sp)
    addi sp, sp, 16
    ret
    .data
somewhere: .dword 0
"""


@pytest.fixture(scope="module")
def asm_elf(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("asm"), "bad", asm_src=ASM_INDIRECT)


def _addr_of(img: ElfImage, sym: str, mnemonic_pred) -> int:
    a = img.symbol(sym).addr
    for _ in range(40):
        ins = img.instr(a)
        if mnemonic_pred(ins):
            return a
        a += ins.size
    raise AssertionError("not found")


def test_unresolved_indirect_jump_error(asm_elf: Path) -> None:
    img = ElfImage(str(asm_elf))
    jr = _addr_of(img, "main", lambda i: i.mnemonic == "jalr")
    with pytest.raises(WcetError, match=rf"unresolved indirect jump through a0 at {jr:#x}"):
        build_program(img, ["main"])


def test_function_pointer_call_error(asm_elf: Path) -> None:
    img = ElfImage(str(asm_elf))
    jalr = _addr_of(img, "fptr", lambda i: i.mnemonic == "jalr" and i.rd == 1)
    with pytest.raises(WcetError, match=rf"indirect call through a5 at {jalr:#x}.*function pointer"):
        build_program(img, ["fptr"])


def test_irreducible_loop_needs_an_annotation_and_is_bounded_per_entry(asm_elf: Path) -> None:
    """A cycle entered at two blocks: one loop (header = first entry in
    reverse post-order), entered by both edges; no automatic bound; with an
    annotation the ILP counts header executions per entry of the region."""
    from kairos.wcet import annotations, ipet
    img = ElfImage(str(asm_elf))
    p = build_program(img, ["irreducible"])
    f = p.function("irreducible")
    fo = find_loops(f)
    (lp,) = fo.loops
    assert lp.irreducible
    assert len({t for _, t in lp.entry_edges}) == 2          # two entry blocks
    assert lp.header in {t for _, t in lp.entry_edges}
    with pytest.raises(WcetError, match=rf"irreducible loop at {lp.header:#x} in irreducible .*has no bound.*"
                                        r"entered at 2 blocks"):
        ipet.solve(p, "irreducible", BoundAnalysis(p), ipet.simple_cost)
    ann = annotations.parse(f'[[loop]]\naddress = {lp.header:#x}\nmax = 5\n', "t.toml")
    r = ipet.solve(p, "irreducible", BoundAnalysis(p, ann), ipet.simple_cost)
    assert r.counts[((), lp.header)] == 5
    assert all(c <= 6 for (ctx, b), c in r.counts.items())


def test_illegal_instruction_error(asm_elf: Path) -> None:
    img = ElfImage(str(asm_elf))
    with pytest.raises(WcetError, match=r"illegal instruction at 0x[0-9a-f]+ <illegal\+0x[0-9a-f]+>"):
        build_program(img, ["illegal"])


def test_recursion_error(asm_elf: Path) -> None:
    img = ElfImage(str(asm_elf))
    with pytest.raises(WcetError, match="recursion without a bound: rec_a -> rec_b -> rec_a: add a \\[\\[recursion\\]\\]"):
        build_program(img, ["rec_a"])


def test_malformed_elf_errors(tmp_path: Path, prog_elf: Path) -> None:
    bad = tmp_path / "x.elf"
    bad.write_bytes(b"not an elf at all")
    with pytest.raises(WcetError, match="not an ELF"):
        ElfImage(str(bad))
    data = prog_elf.read_bytes()
    trunc = tmp_path / "trunc.elf"
    trunc.write_bytes(data[:200])
    with pytest.raises(WcetError) as ei:
        ElfImage(str(trunc))
    assert "\n" not in str(ei.value)
    with pytest.raises(WcetError, match="cannot read"):
        ElfImage(str(tmp_path / "missing.elf"))
    img = ElfImage(str(prog_elf))
    with pytest.raises(WcetError, match="symbol 'nope' not found"):
        build_program(img, ["nope"])
