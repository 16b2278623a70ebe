"""Pipeline timing of the processor model (pipeline.step) and of the concrete
replayer (sim) on small hand-computed instruction sequences."""

from __future__ import annotations


from kairos.wcet.emulator import Memory, Trace
from kairos.wcet.isa import decode
from kairos.wcet.model import get_preset
from kairos.wcet.pipeline import PipeState, join_residual, step
from kairos.wcet.sim import replay_once, Decoder

M = get_preset("u54")
A0, A1, A2, A3, A4 = 10, 11, 12, 13, 14


def r_type(f7: int, rs2: int, rs1: int, f3: int, rd: int, op: int = 0x33) -> int:
    return (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op


def i_type(imm: int, rs1: int, f3: int, rd: int, op: int) -> int:
    return ((imm & 0xFFF) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op


def s_type(imm: int, rs2: int, rs1: int, f3: int) -> int:
    imm &= 0xFFF
    return ((imm >> 5) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | ((imm & 31) << 7) | 0x23


def addi(rd, rs1, imm): return i_type(imm, rs1, 0, rd, 0x13)
def lw(rd, rs1, imm): return i_type(imm, rs1, 2, rd, 0x03)
def lb(rd, rs1, imm): return i_type(imm, rs1, 0, rd, 0x03)
def sw(rs2, rs1, imm): return s_type(imm, rs2, rs1, 2)
def mul(rd, a, b): return r_type(1, b, a, 0, rd)
def div(rd, a, b): return r_type(1, b, a, 4, rd)
def beq(a, b): return (b << 20) | (a << 15) | (0 << 12) | (8 << 7) | 0x63   # beq a, b, +8
def csrrw(rd, csr, rs1): return (csr << 20) | (rs1 << 15) | (1 << 12) | (rd << 7) | 0x73
def csrrs(rd, csr, rs1): return (csr << 20) | (rs1 << 15) | (2 << 12) | (rd << 7) | 0x73


def run(words: list[int], ipen: dict[int, int] | None = None, dmem: dict[int, tuple] | None = None) -> int:
    """Cycles of a straight sequence from a fresh pipeline."""
    st = PipeState()
    for k, w in enumerate(words):
        ins = decode(w, 0x1000 + 4 * k)
        dp, rng = (dmem or {}).get(k, (0, (0x2000, 0x2004)))
        step(st, ins, M, (ipen or {}).get(k, 0), dp, rng)
    return st.t_next


def test_alu_chain_one_per_cycle() -> None:
    assert run([addi(A0, A0, 1)] * 3) == 3


def test_load_use_stalls_by_width() -> None:
    assert run([lw(A1, A0, 0), addi(A2, A1, 1)]) == 3     # word load: 2-cycle latency, 1 stall
    assert run([lb(A1, A0, 0), addi(A2, A1, 1)]) == 4     # byte load: 3-cycle latency, 2 stalls
    assert run([lw(A1, A0, 0), addi(A2, A3, 1)]) == 2     # independent: no stall


def test_multiply_divide_latency_and_shared_unit() -> None:
    assert run([mul(A1, A2, A3), addi(A4, A1, 1)]) == M.mul_latency + 1
    assert run([mul(A1, A2, A3), mul(A4, A2, A3)]) == M.mul_latency + 1   # unit busy
    assert run([div(A1, A2, A3), addi(A4, A1, 1)]) == M.div_latency + 1
    assert run([div(A1, A2, A3), addi(A4, A2, 1)]) == 2                  # independent ALU op overlaps


def test_branch_and_csr_penalties() -> None:
    assert run([beq(A0, A1)]) == 1 + M.mispredict_penalty
    assert run([csrrw(0, 0x140, A0)]) == 1 + M.csr_write_flush
    assert run([csrrs(A1, 0x140, 0), addi(A2, A1, 1)]) == M.csr_read_latency + 1   # read only


def test_store_to_load_forwarding_penalty_and_drain() -> None:
    same = {0: (0, (0x2000, 0x2004)), 1: (0, (0x2000, 0x2004))}
    assert run([sw(A1, A0, 0), lw(A2, A0, 0)], dmem=same) == 2 + M.store_load_penalty
    other = {0: (0, (0x2000, 0x2004)), 1: (0, (0x2010, 0x2014))}
    assert run([sw(A1, A0, 0), lw(A2, A0, 16)], dmem=other) == 2
    drained = {0: (0, (0x2000, 0x2004)), 2: (0, (0x2000, 0x2004))}
    assert run([sw(A1, A0, 0), addi(A3, A3, 1), lw(A2, A0, 0)], dmem=drained) == 3


def test_cache_miss_penalties_add() -> None:
    assert run([addi(A0, A0, 1)], ipen={0: 150}) == 151
    assert run([lw(A1, A0, 0), addi(A2, A1, 1)], dmem={0: (300, (0x2000, 0x2004))}) == 303
    # an I-miss overlapping a stall is hidden by max(): fetch and operand wait overlap
    assert run([div(A1, A2, A3), addi(A4, A1, 1)], ipen={1: 40}) == M.div_latency + 1


def test_residual_summary_and_join_are_conservative() -> None:
    st = PipeState()
    step(st, decode(div(A1, A2, A3), 0x1000), M)
    res = st.residual()
    assert res[0][A1] == M.div_latency - 1 and res[1] == M.div_latency - 1
    other = PipeState().residual()
    j = join_residual(res, other)
    assert j[0][A1] == M.div_latency - 1
    a = ((0,) * 64, 0, ((0, 8),))
    b = ((0,) * 64, 0, ((16, 24), (32, 40)))
    assert join_residual(a, b)[2] == ((16, 24), (0, 40))   # aligned at the youngest entry


def test_concrete_replay_counts_cold_misses_once() -> None:
    mem = Memory()
    code = b"".join(w.to_bytes(4, "little") for w in
                    [addi(A0, 0, 0), lw(A1, A0, 0), addi(A2, A1, 1), lw(A3, A0, 4)])
    mem.add_region(0x8000_0000, 0x100, code)
    mem.add_region(0x8000_1000, 0x100)
    t = Trace()
    for k in range(4):
        pc = 0x8000_0000 + 4 * k
        if k in (1, 3):
            t.append(pc, 0x8000_1000 + 4 * (k == 3), 4)
        else:
            t.append(pc)
    r = replay_once(t, Decoder(mem), M)
    # one I-line miss (150), one D-line miss with dirty victim (150 + 150),
    # load-use stall of 1, second load hits the same line.
    assert (r.misses, r.writebacks) == ({"icache": 1, "dcache": 1}, 1)
    # addi@150, lw@151 (blocks 301), addi@453 (1 stall), lw@454 -> 455
    assert r.cycles == 150 + 1 + (1 + 300) + 1 + 1 + 1
