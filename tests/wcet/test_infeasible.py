"""Infeasible paths and flow facts (tools/kairos/wcet/infeasible.py).

On tests/wcet/programs/infeasible.c: the paths the C code makes infeasible
are cut (the bound falls below the bound without refinement), the
look-alikes whose paths are feasible are not (every traced run, replayed
through the processor model, stays within the bound), and every fact names
its source lines.  The z3 semantics (rv64smt.py) are checked against the
emulator on random straight-line code.
"""

from __future__ import annotations

import random

import pytest

import progbuild
from wcetprogs import make_built

#: entry -> inputs that drive its longest feasible path (and some others)
ENTRIES = {
    "correlated": [{"input": 20}, {"input": 3}],
    "correlated_lookalike": [{"input": 20, "input2": 3}, {"input": 3, "input2": 30}],
    "flag_entry": [{"input": 1}, {"input": 0}],
    "flag_lookalike": [{"input": 1, "input2": 0}, {"input": 1, "input2": 1}],
    "const_return": [{"input": 5}],
    "alias_lookalike": [{"input": 1}, {"input": 0}],
    "pointer_lookalike": [{"input": 3, "input2": 1}, {"input": 2, "input2": 0}],
    "store_lookalike": [{"input": 0}, {"input": 1}],
}
#: entries whose bound must fall with the refinement
CUT = {"correlated", "flag_entry", "const_return"}


def _patch(inp: dict[str, int]) -> dict[str, bytes]:
    return {k: (v & 0xFFFFFFFF).to_bytes(4, "little") for k, v in inp.items()}


@pytest.fixture(scope="module")
def elf(tmp_path_factory):
    built = make_built(tmp_path_factory)
    return built.elf("infeasible")


@pytest.fixture(scope="module")
def analyses(elf):
    from kairos.wcet import driver
    # the returned-value facts off in both: const_return's conflict is
    # theirs to find first (test_return_facts.py), these tests are the search's
    on = driver.run(str(elf), list(ENTRIES), model_name="u54", sp0="__stack_top", return_facts=False)
    off = driver.run(str(elf), list(ENTRIES), model_name="u54", sp0="__stack_top", infeasible_paths=False,
                     return_facts=False)
    return {r.spec.symbol: r for r in on.results}, {r.spec.symbol: r for r in off.results}


def _observed(elf, symbol: str, inp: dict[str, int]) -> int:
    from kairos.wcet.emulator import load_elf, run_entry
    from kairos.wcet.model import get_preset
    from kairos.wcet.sim import replay
    prog = load_elf(elf)
    trace = run_entry(prog, symbol, _patch(inp))
    return replay(trace, prog.memory, get_preset("u54")).cycles


@pytest.mark.parametrize("symbol", list(ENTRIES))
def test_bound_covers_every_traced_run(elf, analyses, symbol) -> None:
    on, off = analyses
    for inp in ENTRIES[symbol]:
        obs = _observed(elf, symbol, inp)
        assert obs <= on[symbol].bound, f"{symbol} {inp}: observed {obs} > bound {on[symbol].bound}"
    assert on[symbol].bound <= off[symbol].bound


@pytest.mark.parametrize("symbol", sorted(CUT))
def test_infeasible_paths_are_cut(elf, analyses, symbol) -> None:
    on, off = analyses
    ref = on[symbol].refinement
    assert ref is not None and ref.conflicts, f"{symbol}: no fact found"
    assert on[symbol].bound < off[symbol].bound
    # the heavy loop runs at most once on the worst feasible path (twice or thrice without)
    assert _heavy_calls(on[symbol]) <= 1 < _heavy_calls(off[symbol]) or symbol == "const_return"
    assert _heavy_calls(on[symbol]) < _heavy_calls(off[symbol])
    for c in ref.conflicts:
        assert c.sources and all("infeasible.c:" in s for s in c.sources), c


def _heavy_calls(res) -> int:
    return sum(s.count // s.loop_iterations for s in res.result.path if s.function == "heavy" and s.loop_iterations)


@pytest.mark.parametrize("symbol,calls", [("correlated_lookalike", 2), ("flag_lookalike", 3),
                                          ("alias_lookalike", 1), ("pointer_lookalike", 1),
                                          ("store_lookalike", 1)])
def test_lookalikes_keep_their_worst_path(elf, analyses, symbol, calls) -> None:
    """Feasible look-alikes keep every heavy call their worst run makes."""
    on, off = analyses
    worst = max(_observed(elf, symbol, inp) for inp in ENTRIES[symbol])
    assert on[symbol].bound >= worst
    assert _heavy_calls(on[symbol]) == _heavy_calls(off[symbol]) == calls


def test_escaping_global_is_not_tracked(elf) -> None:
    from kairos.wcet.cfg import build_program_from_file
    from kairos.wcet.infeasible import ProgramFacts
    prog = build_program_from_file(str(elf), ["alias_lookalike", "flag_entry"])
    facts = ProgramFacts(prog)
    img = prog.image
    assert facts.untracked(img.symbol("g").addr)          # address in .data
    assert not facts.untracked(img.symbol("flag").addr)


def test_constant_return_found(elf) -> None:
    from kairos.wcet.cfg import build_program_from_file
    from kairos.wcet.infeasible import ProgramFacts
    prog = build_program_from_file(str(elf), ["const_return"])
    facts = ProgramFacts(prog)
    assert facts.const_ret.get(prog.image.symbol("never").addr) == 0
    assert prog.image.symbol("heavy").addr not in facts.const_ret


def _random_program(rng: random.Random) -> list[str]:
    ops = ["add", "sub", "sll", "srl", "sra", "slt", "sltu", "xor", "or", "and", "addw", "subw", "sllw",
           "srlw", "sraw", "mul", "mulh", "mulhu", "mulhsu", "div", "divu", "rem", "remu", "mulw", "divw",
           "divuw", "remw", "remuw"]
    immops = ["addi", "slti", "sltiu", "xori", "ori", "andi", "addiw"]
    shops = ["slli", "srli", "srai"]
    regs = ["a0", "a1", "a2", "a3", "a4", "a5"]
    out = []
    for _ in range(12):
        k = rng.random()
        rd, r1, r2 = rng.choice(regs), rng.choice(regs), rng.choice(regs)
        if k < 0.6:
            out.append(f"{rng.choice(ops)} {rd}, {r1}, {r2}")
        elif k < 0.85:
            out.append(f"{rng.choice(immops)} {rd}, {r1}, {rng.randint(-2048, 2047)}")
        else:
            out.append(f"{rng.choice(shops)} {rd}, {r1}, {rng.randint(0, 63)}")
    return out


def test_z3_semantics_match_the_emulator(tmp_path) -> None:
    """Random straight-line ALU/M code: z3 and the emulator agree on every register."""
    import subprocess

    import z3

    from kairos.wcet import rv64smt
    from kairos.wcet.emulator import Emulator, Memory
    from kairos.wcet.isa import decode_at
    if not progbuild.have_compiler():
        pytest.skip("no cross compiler")
    rng = random.Random(1)
    for case in range(8):
        src = tmp_path / f"r{case}.S"
        src.write_text(".text\n.globl f\nf:\n" + "\n".join(_random_program(rng)) + "\n")
        obj = tmp_path / f"r{case}.o"
        subprocess.run([progbuild.CC, "-march=rv64imac", "-mabi=lp64", "-c", str(src), "-o", str(obj)], check=True)
        code = subprocess.run(["riscv64-unknown-elf-objcopy", "-O", "binary", "-j", ".text", str(obj), "/dev/stdout"],
                              check=True, capture_output=True).stdout
        instrs, off = [], 0
        while off < len(code):
            ins = decode_at(code, off, 0x1000 + off)
            instrs.append(ins)
            off += ins.size
        for _ in range(4):
            init = {r: rng.choice([0, 1, -1, 1 << 63, rng.getrandbits(64), rng.getrandbits(32),
                                   -(rng.getrandbits(31))]) & rv64smt.MASK64 for r in range(10, 16)}
            emu = Emulator(Memory(), 0x1000, dict(init))
            st = rv64smt.SymState.initial(None, dict(init))
            for ins in instrs:
                emu.execute(ins)
                rv64smt.execute(st, ins)
            for r in range(10, 16):
                got = z3.simplify(st.get(r))
                assert z3.is_bv_value(got) and got.as_long() == emu.x[r], (case, r, [i.text() for i in instrs])


def test_cli_reports_facts_and_switch_off(elf, tmp_path, capsys) -> None:
    import json

    from kairos.cli import main
    out_on, out_off = tmp_path / "on.json", tmp_path / "off.json"
    base = ["wcet", str(elf), "-e", "correlated", "--sp", "__stack_top", "-q"]
    assert main(base + ["--json", str(out_on)]) == 0
    assert main(base + ["--json", str(out_off), "--no-infeasible-paths"]) == 0
    on = json.loads(out_on.read_text())["entries"][0]
    off = json.loads(out_off.read_text())["entries"][0]
    assert off["infeasible_paths"] is None
    ref = on["infeasible_paths"]
    assert ref["bound_before"] == off["bound_cycles"] > ref["bound_after"] == on["bound_cycles"]
    assert ref["facts"] and all(f["sources"] and f["terms"] > 0 for f in ref["facts"])
    capsys.readouterr()
    assert main(base + ["--infeasible-budget", "-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kairos wcet: error:") and len(err.splitlines()) == 1


_SLOW_CLOCK_RUN = """
import sys, time
from kairos.wcet import infeasible
if sys.argv[1] == "slow":
    # a machine a thousand times slower: every processor-time reading in the
    # process grows 1000x as fast, so any budget kept in processor time (a
    # safety net included) would run out at once
    real = time.process_time
    t0 = real()
    time.process_time = lambda: t0 + 1000.0 * (real() - t0)
from kairos.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("budget", ["0.03", "6"])
def test_refinement_is_deterministic_under_load(elf, tmp_path, budget) -> None:
    """The refinement's budget is effort (z3 resource units and counted
    steps), not time: with a clock running a thousand times as fast (a
    loaded or slower machine) the facts, the bound and the effort used are the same,
    both where the budget cuts the refinement short and where it does not.
    Each run is a fresh process (z3's term ids, and so its effort, depend on
    what the process built before)."""
    import json
    import subprocess
    import sys
    got = {}
    for clock in ("real", "slow"):
        out = tmp_path / f"{clock}.json"
        cmd = [sys.executable, "-c", _SLOW_CLOCK_RUN, clock, "wcet", str(elf), "-e", "flag_entry",
               "-e", "flag_lookalike", "--sp", "__stack_top", "-q", "--infeasible-budget", budget,
               "--json", str(out)]
        subprocess.run(cmd, check=True, timeout=300)
        got[clock] = [(e["bound_cycles"], e["infeasible_paths"]) for e in json.loads(out.read_text())["entries"]]
    for e in (g for run in got.values() for g in run):
        e[1].pop("seconds")
    assert got["real"] == got["slow"]
    stopped = {ref["stopped"] for _b, ref in got["real"]}
    # the short budget does cut the refinement (else the test shows nothing)
    assert ("effort budget" in stopped) == (budget == "0.03"), stopped


def test_shared_contexts_stay_sound(elf) -> None:
    """With a tiny context budget every helper gets one shared context (the
    once scope then rests on exclusive call sites); the bounds still cover
    every run and never exceed the unrefined ones."""
    from kairos.wcet import driver
    on = driver.run(str(elf), list(ENTRIES), model_name="u54", sp0="__stack_top", context_budget=2)
    off = driver.run(str(elf), list(ENTRIES), model_name="u54", sp0="__stack_top", context_budget=2,
                     infeasible_paths=False)
    assert any("shared call contexts" in w for w in on.warnings)
    offb = {r.spec.symbol: r.bound for r in off.results}
    for r in on.results:
        worst = max(_observed(elf, r.spec.symbol, inp) for inp in ENTRIES[r.spec.symbol])
        assert worst <= r.bound <= offb[r.spec.symbol], r.spec.symbol


def test_kernel_fixture_charge_once_fact() -> None:
    """On the kept 4a409ff release kernel: charge_current calls
    refill_budget_check only while sched_nodes.cur_sc is set and clears it;
    with --assume-arrays-in-bounds the only other store to cur_sc is the SC
    switch in kernel_exit, without it the ready-queue stores count too."""
    from pathlib import Path

    from kairos.wcet import ipet
    from kairos.wcet.cfg import build_program
    from kairos.wcet.elfimage import ElfImage
    from kairos.wcet.infeasible import Effort, ProgramFacts, find_flag_facts
    elf = Path(__file__).parent / "fixtures" / "kernel-4a409ff-release.elf"
    img = ElfImage(str(elf))
    prog = build_program(img, ["trap_entry"], noreturn=["kernel_panic"])
    cur_sc = img.symbol("sched_nodes").addr + 0x1038
    charge = prog.function("charge_current")
    for assume, setters in ((True, {"kernel_exit"}), (False, {"kernel_exit", "ready_insert", "ready_remove"})):
        facts = ProgramFacts(prog, arrays_in_bounds=assume)
        assert not facts.untracked(cur_sc)
        found = [f for f in find_flag_facts(prog, facts, ipet.GraphCache(), Effort(60.0))
                 if f.func is charge and f.loc == cur_sc]
        assert len(found) == 1
        call = charge.blocks[found[0].block]
        assert prog.name_of(call.call_target) == "refill_budget_check"
        assert {prog.functions[fe].name for fe, _b, _n in found[0].setters} == setters


def test_effort_check_answers_by_effort_or_fails_loudly() -> None:
    """A check cut by its effort grant is ``unknown`` (the same on any
    load); one the wall-clock hang guard stops raises instead of letting the
    load decide the answer."""
    import z3
    from kairos.wcet.errors import WcetError
    from kairos.wcet.infeasible import Effort

    def hard(timeout_ms: int) -> z3.Solver:
        x, y, z = z3.BitVecs("x y z", 64)
        s = z3.Solver()
        s.set("timeout", timeout_ms)
        s.add(x * y * z == 0x123456789ABCDEF1, x > 1, y > 1, z > 1, x * x + y == z * 3 + 7)
        return s
    e = Effort(1.0)
    assert e.check(hard(600_000), cap=20_000) == z3.unknown
    assert 0 < e.used <= 20_000 + 1000
    with pytest.raises(WcetError, match="stopped without an answer"):
        Effort(1.0).check(hard(1))
