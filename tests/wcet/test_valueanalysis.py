"""The value analysis must contain every data address of real (emulated) runs,
and be exact where it claims to be (stack and scalar globals)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kairos.wcet.cfg import build_program
from kairos.wcet.elfimage import ElfImage
from kairos.wcet.valueanalysis import ValueInfo

from wcet_helpers import build, needs_cc

pytestmark = needs_cc

SRC = r"""
volatile int sink;
int counter;
long table[32];
unsigned char bytes[256];
struct pair { int a, b; } pairs[10];

__attribute__((noinline)) long sum_table(void)
{
    long s = 0;
    for (int i = 0; i < 32; i++)
        s += table[i];
    return s;
}

__attribute__((noinline)) int locals(int x)
{
    volatile int buf[8];
    for (int i = 0; i < 8; i++)
        buf[i] = x + i;
    return buf[x & 7];
}

__attribute__((noinline)) int lookup(int i)            /* unknown index into an object */
{
    return bytes[(unsigned)(i * 37) & 255] + pairs[i % 10].b;
}

__attribute__((noinline)) void walk_down(int n)
{
    for (int i = n - 1; i >= 0; i--)
        pairs[i].a = i;
}

__attribute__((noinline)) int entry(void)
{
    counter++;
    walk_down(10);
    return (int)sum_table() + locals(sink) + lookup(sink + 3);
}

int main(void) { return entry(); }
"""


@pytest.fixture(scope="module")
def elf(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("va"), "va", SRC)


def test_ranges_contain_every_traced_access(elf: Path) -> None:
    from kairos.wcet import emulator
    prog = emulator.load_elf(elf)
    img = ElfImage(str(elf))
    p = build_program(img, ["entry"])
    vi = ValueInfo(p, sp0=prog.stack_top)
    # per instruction: all ranges over its contexts
    ranges: dict[int, list] = {}
    for ctx, f in p.contexts("entry"):
        for b in f.blocks.values():
            for ins in b.instrs:
                if ins.mem_width:
                    ranges.setdefault(ins.addr, []).append(vi.range(ctx, ins.addr, f.entry))
    trace = emulator.run_entry(prog, "entry")
    checked = exact = 0
    for pc, da, w in zip(trace.pcs, trace.daddrs, trace.widths):
        if w == 0:
            continue
        rs = ranges[pc]
        if any(r is None for r in rs):
            continue      # unknown: the cache analysis treats it as any address
        checked += 1
        assert any(lo <= da and da + w <= hi for lo, hi in rs), \
            f"access {da:#x}+{w} at {pc:#x} outside {[(hex(a), hex(b)) for a, b in rs]}"
        if all(hi - lo == w for lo, hi in rs):
            exact += 1
    assert checked > 40
    assert exact >= 6    # stack slots of entry(), counter, sink


def test_known_ranges(elf: Path) -> None:
    img = ElfImage(str(elf))
    p = build_program(img, ["entry"])
    vi = ValueInfo(p, sp0=0x80010000)
    table = img.symbol("table")
    f = p.function("sum_table")
    loads = [i for b in f.blocks.values() for i in b.instrs if i.mem_width]
    assert loads
    ctx = next(c for c, fn in p.contexts("entry") if fn is f)
    for ins in loads:
        lo, hi = vi.range(ctx, ins.addr, f.entry)
        assert table.addr <= lo and hi <= table.addr + table.size + 8
    # lookup: the byte index is masked (& 255), so that access is known and
    # inside `bytes`; the pair index comes from a remainder of an unknown
    # value: no guess (gcc folds constant offsets into the base, so "stays in
    # its object" reasoning is not sound on binaries)
    g = p.function("lookup")
    gctx = next(c for c, fn in p.contexts("entry") if fn is g)
    rs = {ins.mem_width: vi.range(gctx, ins.addr, g.entry)
          for b in g.blocks.values() for ins in b.instrs if ins.mem_width}
    by = img.symbol("bytes")
    assert rs[1] == (by.addr, by.addr + by.size)
    assert rs[4] is None
    # entry() saves ra and s0 in exact slots just below sp0
    e = p.function("entry")
    stack = sorted(vi.range((), i.addr, e.entry) for b in e.blocks.values() for i in b.instrs
                   if i.mem_width and i.rs1 == 2)
    assert stack == [(0x80010000 - 16, 0x80010000 - 8), (0x80010000 - 16, 0x80010000 - 8),
                     (0x80010000 - 8, 0x80010000), (0x80010000 - 8, 0x80010000)]
    # and the scalar global counter is exact
    cnt = img.symbol("counter").addr
    assert (cnt, cnt + 4) in [vi.range((), i.addr, e.entry) for b in e.blocks.values() for i in b.instrs
                              if i.mem_width]


def test_constant_stack_pointer_propagates_to_tail_callees(tmp_path: Path) -> None:
    asm = r"""
    .text
    .globl vector
vector:
    la   sp, stack_top
    j    handler
    .globl handler
handler:
    addi sp, sp, -32
    sd   ra, 24(sp)
    sd   s0, 16(sp)
    ld   ra, 24(sp)
    addi sp, sp, 32
    sret
    .globl main
main:
    ret
    .bss
    .align 6
stack: .space 256
stack_top:
"""
    elf = build(tmp_path, "vec", asm_src=asm)
    img = ElfImage(str(elf))
    p = build_program(img, ["vector"])
    vi = ValueInfo(p)          # no --sp: the vector sets sp itself
    top = img.symbol("stack_top").addr
    h = p.function("handler")
    (ctx,) = [c for c, fn in p.contexts("vector") if fn is h]
    got = sorted(vi.range(ctx, i.addr, h.entry) for b in h.blocks.values() for i in b.instrs if i.mem_width)
    assert got == [(top - 16, top - 8), (top - 8, top), (top - 8, top)]
