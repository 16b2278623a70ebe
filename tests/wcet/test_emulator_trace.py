"""The trace-capture emulator (results of the test programs against Python
references), the trace file format, trace-to-CFG mapping and `kairos trace`."""

from __future__ import annotations

import random
import subprocess
import sys
import zlib

import pytest

import progbuild
from wcetprogs import make_built


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return make_built(tmp_path_factory)


def _s32(v: int) -> int:
    return v - (1 << 32) if v >> 31 else v


def test_crc_matches_zlib(built) -> None:
    from kairos.wcet.emulator import load_elf, run_entry
    msg = bytes(random.Random(1).randrange(256) for _ in range(64))
    for entry in ("crc_bitwise", "crc_table"):
        p = load_elf(built.elf("crc"))
        t = run_entry(p, entry, {"msg": msg})
        assert t.stop == "return"
        assert p.memory.read(p.symbols["crc_out"][0], 4) == zlib.crc32(msg)


def test_sorts_and_matmul_compute_correct_results(built) -> None:
    from kairos.wcet.emulator import load_elf, run_entry
    vals = [random.Random(4).randrange(-1000, 1000) for _ in range(16)]
    for entry in ("bubble_sort", "insertion_sort"):
        p = load_elf(built.elf("sort"))
        run_entry(p, entry, {"data": progbuild._words(vals)})
        base = p.symbols["data"][0]
        assert [_s32(p.memory.read(base + 4 * i, 4)) for i in range(16)] == sorted(vals)
    rng = random.Random(9)
    a = [rng.randrange(-99, 99) for _ in range(64)]
    b = [rng.randrange(-99, 99) for _ in range(64)]
    p = load_elf(built.elf("matmul"))
    t = run_entry(p, "matmul", {"A": progbuild._words(a), "B": progbuild._words(b)})
    c = p.symbols["C"][0]
    got = [_s32(p.memory.read(c + 4 * i, 4)) for i in range(64)]
    assert got == [sum(a[i * 8 + k] * b[k * 8 + j] for k in range(8)) for i in range(8) for j in range(8)]
    # every load/store of the trace has a data address, others none
    from kairos.wcet.sim import Decoder
    dec = Decoder(p.memory)
    for pc, da, w in zip(t.pcs, t.daddrs, t.widths):
        assert (w > 0) == dec(pc).is_mem


def test_interpreter_and_search_results(built) -> None:
    from kairos.wcet.emulator import load_elf, run_entry

    def interp(prog: bytes) -> int:
        acc, reg = 1, 3
        for op in prog:
            if op == 0: acc += 7
            elif op == 1: acc ^= reg
            elif op == 2: acc <<= 1
            elif op == 3: reg = acc - reg
            elif op == 4: acc *= 3
            elif op == 5: acc -= 11
            elif op == 6: reg += acc >> 2
            elif op == 7: acc |= 0x40
            elif op == 8: acc &= 0xFFFF
            elif op == 9: reg ^= 0x55; acc += reg
            else: acc = 0
            acc = (acc + (1 << 63)) % (1 << 64) - (1 << 63)
            reg = (reg + (1 << 63)) % (1 << 64) - (1 << 63)
        return acc % (1 << 64)

    for inp in progbuild._bytecode_inputs():
        p = load_elf(built.elf("jumptable"))
        run_entry(p, "interpret", inp)
        assert p.memory.read(p.symbols["acc_out"][0], 8) == interp(inp["program"])
    for target in (1, 94, 95, 190, 1000):
        p = load_elf(built.elf("search"))
        run_entry(p, "search_main", {"target": target.to_bytes(4, "little")})
        idx = _s32(p.memory.read(p.symbols["found_index"][0], 4))
        assert idx == ((target - 1) // 3 if (target - 1) % 3 == 0 and target <= 190 else -1)


def test_emulator_errors_are_one_line(built) -> None:
    from kairos.wcet.emulator import load_elf, run_entry
    from kairos.wcet.errors import WcetError
    p = load_elf(built.elf("sort"))
    with pytest.raises(WcetError, match="no symbol"):
        run_entry(p, "no_such_function")
    with pytest.raises(WcetError, match="unknown symbol"):
        run_entry(p, "bubble_sort", {"nope": b"\0"})
    with pytest.raises(WcetError, match="no return after"):
        run_entry(p, "bubble_sort", max_steps=50)
    with pytest.raises(WcetError):
        load_elf(built.outdir / "missing.elf")


def test_trace_file_round_trip_and_qemu_log(built, tmp_path) -> None:
    from kairos.wcet.emulator import load_elf, run_entry
    from kairos.wcet.errors import WcetError
    from kairos.wcet.model import get_preset
    from kairos.wcet.sim import replay
    from kairos.wcet.trace import load_trace, parse_qemu_exec_log, save_trace
    p = load_elf(built.elf("calls"))
    t = run_entry(p, "chain_main")
    path = tmp_path / "t.trace"
    save_trace(t, path)
    t2 = load_trace(path)
    assert list(t2.pcs) == list(t.pcs) and list(t2.daddrs) == list(t.daddrs)
    m = get_preset("u54")
    full = replay(t, p.memory, m).cycles
    assert replay(t2, p.memory, m).cycles == full
    # A QEMU exec log of the same run (PCs only): data accesses at worst cost.
    log = tmp_path / "qemu.log"
    log.write_text("".join(f"Trace 0: 0x7f0000{i:06x} [00000000/{pc:016x}/00000000/00000000] \n"
                           for i, pc in enumerate(t.pcs)))
    q = parse_qemu_exec_log(log)
    assert list(q.pcs) == list(t.pcs) and not q.has_data
    assert replay(q, p.memory, m).cycles > full
    bad = tmp_path / "bad.trace"
    bad.write_text("# kairos-trace v1 entry=x\nzz top\n")
    with pytest.raises(WcetError, match="malformed trace line"):
        load_trace(bad)


def test_block_path_follows_calls_and_counts_loop_entries(built) -> None:
    from kairos.wcet.cfg import build_program
    from kairos.wcet.elfimage import ElfImage
    from kairos.wcet.emulator import load_elf, run_entry
    from kairos.wcet.trace import block_path
    prog = build_program(ElfImage(str(built.elf("calls"))), ["chain_main"])
    p = load_elf(built.elf("calls"))
    tp = block_path(prog, "chain_main", run_entry(p, "chain_main"))
    ctxs = {ctx for ctx, _ in tp.blocks}
    assert () in ctxs and max(len(c) for c in ctxs) == 4       # chain_main > stage1 > stage2 > stage3 > leaf
    # each stage2/stage3 loop is entered exactly once per context
    assert tp.loop_entries and set(tp.loop_entries.values()) == {1}
    assert sum(tp.counts.values()) == len(tp.blocks)


def _kairos(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kairos.cli", *args], capture_output=True, text=True)


def test_kairos_trace_cli(built, tmp_path) -> None:
    elf = str(built.elf("matmul"))
    out = tmp_path / "o.json"
    r = _kairos("trace", elf, "-e", "matmul", "--wcet", "-a", str(progbuild.PROGRAMS / "matmul.toml"),
                "--json", str(out), "--save", str(tmp_path / "m.trace"))
    assert r.returncode == 0, r.stderr
    import json
    o = json.loads(out.read_text())
    assert o["sound"] and o["bound"] >= o["cycles"] and o["path_bound"] <= o["bound"]
    r4 = _kairos("trace", elf, "-e", "matmul", "--wcet", "-a", str(progbuild.PROGRAMS / "matmul.toml"),
                 "--blocks", "3", "--json", str(tmp_path / "b.json"))
    assert r4.returncode == 0 and "most over-estimated" in r4.stdout
    blocks = json.loads((tmp_path / "b.json").read_text())["blocks"]
    assert len(blocks) == 3 and all(b["bound"] >= 0 and b["count"] >= 1 for b in blocks)
    r2 = _kairos("trace", elf, "--replay", str(tmp_path / "m.trace"))
    assert r2.returncode == 0 and f"observed      {o['cycles']} cycles" in r2.stdout
    for args, msg in [(("-e", "nosuch"), "no symbol"), (("-e", "matmul", "-i", "A=xyz"), "not hexadecimal"),
                      (("--replay", str(tmp_path / "none")), "cannot read trace"), ((), "no --entry")]:
        r3 = _kairos("trace", elf, *args)
        assert r3.returncode == 2 and msg in r3.stderr
        assert r3.stderr.count("\n") == 1 and "Traceback" not in r3.stderr


def test_block_comparison_adds_up_to_the_run(built) -> None:
    from kairos.wcet.emulator import load_elf, run_entry
    from kairos.wcet.model import get_preset
    from kairos.wcet.sim import replay
    from kairos.wcet.trace import block_comparison, block_path, path_bound
    an = built.analysis("calls", "u54")
    res = next(r for r in an.results if r.spec.symbol == "chain_main")
    p = load_elf(built.elf("calls"))
    t = run_entry(p, "chain_main")
    rep = replay(t, p.memory, get_preset("u54"), timeline=True)
    tp = block_path(an.program, "chain_main", t)
    rows = block_comparison(tp, res.costs, rep.timeline)
    assert sum(r["observed"] for r in rows) == rep.cycles
    assert sum(r["bound"] for r in rows) <= path_bound(tp, res.costs)
