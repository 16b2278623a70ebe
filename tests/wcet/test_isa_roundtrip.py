"""Decoder round-trip against the GNU assembler.

Every instruction form (RV64IMAC + Zicsr + Zifencei + privileged + the F/D
subset) is generated with several register/immediate choices, assembled with
riscv64-unknown-elf-as, and decoded again by ``kairos.wcet.isa``.  The decoded
fields must equal what was asked for, and the mnemonic must match objdump's
(no-aliases) spelling.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kairos.wcet.isa import InstrClass as C
from kairos.wcet.isa import decode, decode_at

AS = shutil.which("riscv64-unknown-elf-as")
OBJDUMP = shutil.which("riscv64-unknown-elf-objdump")
pytestmark = pytest.mark.skipif(AS is None or OBJDUMP is None, reason="riscv64 binutils missing")

F = 32  # FP register offset

CSRS = {"sstatus": 0x100, "sepc": 0x141, "satp": 0x180, "mstatus": 0x300, "cycle": 0xC00, "0x7c0": 0x7C0}

TRIPLES = [(1, 2, 3), (31, 0, 17), (10, 11, 12), (5, 30, 28)]
IMM12 = [0, 1, -1, 2047, -2048, 100]


def _forms() -> list[tuple[str, dict]]:  # noqa: C901 - a table
    out: list[tuple[str, dict]] = []

    def add(asm: str, **exp):
        out.append((asm, exp))

    for rd, rs1, rs2 in TRIPLES:
        for mn, cls in [("add", C.ALU), ("sub", C.ALU), ("sll", C.ALU), ("slt", C.ALU), ("sltu", C.ALU),
                        ("xor", C.ALU), ("srl", C.ALU), ("sra", C.ALU), ("or", C.ALU), ("and", C.ALU),
                        ("addw", C.ALU), ("subw", C.ALU), ("sllw", C.ALU), ("srlw", C.ALU), ("sraw", C.ALU),
                        ("mul", C.MUL), ("mulh", C.MUL), ("mulhsu", C.MUL), ("mulhu", C.MUL), ("mulw", C.MUL),
                        ("div", C.DIV), ("divu", C.DIV), ("rem", C.DIV), ("remu", C.DIV),
                        ("divw", C.DIV), ("divuw", C.DIV), ("remw", C.DIV), ("remuw", C.DIV)]:
            add(f"{mn} x{rd}, x{rs1}, x{rs2}", mnemonic=mn, cls=cls, rd=rd, rs1=rs1, rs2=rs2,
                writes={rd} - {0}, reads={rs1, rs2} - {0})
        for imm in IMM12:
            for mn in ["addi", "slti", "sltiu", "xori", "ori", "andi", "addiw"]:
                add(f"{mn} x{rd}, x{rs1}, {imm}", mnemonic=mn, cls=C.ALU, rd=rd, rs1=rs1, imm=imm)
            for mn, w, s in [("lb", 1, True), ("lh", 2, True), ("lw", 4, True), ("ld", 8, True),
                             ("lbu", 1, False), ("lhu", 2, False), ("lwu", 4, False)]:
                add(f"{mn} x{rd}, {imm}(x{rs1})", mnemonic=mn, cls=C.LOAD, rd=rd, rs1=rs1, imm=imm,
                    mem_width=w, mem_signed=s)
            for mn, w in [("sb", 1), ("sh", 2), ("sw", 4), ("sd", 8)]:
                add(f"{mn} x{rs2}, {imm}(x{rs1})", mnemonic=mn, cls=C.STORE, rs1=rs1, rs2=rs2, imm=imm,
                    mem_width=w, reads={rs1, rs2} - {0})
            add(f"jalr x{rd}, {imm}(x{rs1})", mnemonic="jalr", cls=C.JALR, rd=rd, rs1=rs1, imm=imm)
        for sh in [0, 1, 31, 32, 63]:
            for mn in ["slli", "srli", "srai"]:
                add(f"{mn} x{rd}, x{rs1}, {sh}", mnemonic=mn, cls=C.ALU, rd=rd, rs1=rs1, imm=sh)
            if sh < 32:
                for mn in ["slliw", "srliw", "sraiw"]:
                    add(f"{mn} x{rd}, x{rs1}, {sh}", mnemonic=mn, cls=C.ALU, rd=rd, rs1=rs1, imm=sh)
        for u in [0, 1, 0x7FFFF, 0x80000, 0xFFFFF, 0x12345]:
            val = u << 12
            if val & (1 << 31):
                val -= 1 << 32
            add(f"lui x{rd}, {u:#x}", mnemonic="lui", cls=C.ALU, rd=rd, imm=val)
            add(f"auipc x{rd}, {u:#x}", mnemonic="auipc", cls=C.ALU, rd=rd, imm=val)
        for off in [-4096, -8, 0, 8, 4094, 2050]:
            for mn in ["beq", "bne", "blt", "bge", "bltu", "bgeu"]:
                add(f"{mn} x{rs1}, x{rs2}, .{off:+d}", mnemonic=mn, cls=C.BRANCH, rs1=rs1, rs2=rs2, imm=off,
                    rel_target=off)
        for off in [-(1 << 20), -2, 0, 2, (1 << 20) - 2, 0x12344]:
            add(f"jal x{rd}, .{off:+d}", mnemonic="jal", cls=C.JAL, rd=rd, imm=off, rel_target=off)
        for csrname, csr in CSRS.items():
            for mn in ["csrrw", "csrrs", "csrrc"]:
                add(f"{mn} x{rd}, {csrname}, x{rs1}", mnemonic=mn, cls=C.CSR, rd=rd, rs1=rs1, csr=csr)
            for mn in ["csrrwi", "csrrsi", "csrrci"]:
                add(f"{mn} x{rd}, {csrname}, {rs2 % 32}", mnemonic=mn, cls=C.CSR, rd=rd, rs1=None,
                    imm=rs2 % 32, csr=csr)
        for w in ["w", "d"]:
            width = 4 if w == "w" else 8
            for mn in ["amoswap", "amoadd", "amoxor", "amoand", "amoor", "amomin", "amomax", "amominu", "amomaxu"]:
                for sfx, aq, rl in [("", False, False), (".aq", True, False), (".rl", False, True),
                                    (".aqrl", True, True)]:
                    add(f"{mn}.{w}{sfx} x{rd}, x{rs2}, (x{rs1})", mnemonic=f"{mn}.{w}", cls=C.AMO, rd=rd,
                        rs1=rs1, rs2=rs2, mem_width=width, aq=aq, rl=rl, objdump=f"{mn}.{w}{sfx}")
            add(f"lr.{w} x{rd}, (x{rs1})", mnemonic=f"lr.{w}", cls=C.LR, rd=rd, rs1=rs1, mem_width=width)
            add(f"sc.{w}.rl x{rd}, x{rs2}, (x{rs1})", mnemonic=f"sc.{w}", cls=C.SC, rd=rd, rs1=rs1, rs2=rs2,
                mem_width=width, rl=True, objdump=f"sc.{w}.rl")
        # F/D
        for imm in [0, -8, 2040]:
            add(f"fld f{rd}, {imm}(x{rs1})", mnemonic="fld", cls=C.FP_LOAD, rd=F + rd, rs1=rs1, imm=imm,
                mem_width=8)
            add(f"flw f{rd}, {imm}(x{rs1})", mnemonic="flw", cls=C.FP_LOAD, rd=F + rd, rs1=rs1, imm=imm,
                mem_width=4)
            add(f"fsd f{rs2}, {imm}(x{rs1})", mnemonic="fsd", cls=C.FP_STORE, rs1=rs1, rs2=F + rs2, imm=imm,
                mem_width=8)
            add(f"fsw f{rs2}, {imm}(x{rs1})", mnemonic="fsw", cls=C.FP_STORE, rs1=rs1, rs2=F + rs2, imm=imm,
                mem_width=4)
        for s in ["s", "d"]:
            for mn in ["fadd", "fsub", "fmul", "fdiv"]:
                add(f"{mn}.{s} f{rd}, f{rs1}, f{rs2}", mnemonic=f"{mn}.{s}", cls=C.FPU, rd=F + rd, rs1=F + rs1,
                    rs2=F + rs2, objdump_prefix=True)
            for mn in ["fsgnj", "fsgnjn", "fsgnjx", "fmin", "fmax"]:
                add(f"{mn}.{s} f{rd}, f{rs1}, f{rs2}", mnemonic=f"{mn}.{s}", cls=C.FPU, rd=F + rd, rs1=F + rs1,
                    rs2=F + rs2)
            for mn in ["feq", "flt", "fle"]:
                add(f"{mn}.{s} x{rd}, f{rs1}, f{rs2}", mnemonic=f"{mn}.{s}", cls=C.FPU, rd=rd, rs1=F + rs1,
                    rs2=F + rs2)
            for mn in ["fmadd", "fmsub", "fnmsub", "fnmadd"]:
                add(f"{mn}.{s} f{rd}, f{rs1}, f{rs2}, f{(rd + 7) % 32}", mnemonic=f"{mn}.{s}", cls=C.FPU,
                    rd=F + rd, rs1=F + rs1, rs2=F + rs2, rs3=F + (rd + 7) % 32, objdump_prefix=True)
            add(f"fsqrt.{s} f{rd}, f{rs1}", mnemonic=f"fsqrt.{s}", cls=C.FPU, rd=F + rd, rs1=F + rs1,
                objdump_prefix=True)
            add(f"fclass.{s} x{rd}, f{rs1}", mnemonic=f"fclass.{s}", cls=C.FPU, rd=rd, rs1=F + rs1)
            for it in ["w", "wu", "l", "lu"]:
                add(f"fcvt.{it}.{s} x{rd}, f{rs1}", mnemonic=f"fcvt.{it}.{s}", cls=C.FPU, rd=rd, rs1=F + rs1,
                    objdump_prefix=True)
                add(f"fcvt.{s}.{it} f{rd}, x{rs1}", mnemonic=f"fcvt.{s}.{it}", cls=C.FPU, rd=F + rd, rs1=rs1,
                    objdump_prefix=True)
        add(f"fcvt.s.d f{rd}, f{rs1}", mnemonic="fcvt.s.d", cls=C.FPU, rd=F + rd, rs1=F + rs1,
            objdump_prefix=True)
        add(f"fcvt.d.s f{rd}, f{rs1}", mnemonic="fcvt.d.s", cls=C.FPU, rd=F + rd, rs1=F + rs1,
            objdump_prefix=True)
        add(f"fmv.x.d x{rd}, f{rs1}", mnemonic="fmv.x.d", cls=C.FPU, rd=rd, rs1=F + rs1)
        add(f"fmv.d.x f{rd}, x{rs1}", mnemonic="fmv.d.x", cls=C.FPU, rd=F + rd, rs1=rs1)
        add(f"fmv.x.w x{rd}, f{rs1}", mnemonic="fmv.x.w", cls=C.FPU, rd=rd, rs1=F + rs1)
        add(f"fmv.w.x f{rd}, x{rs1}", mnemonic="fmv.w.x", cls=C.FPU, rd=F + rd, rs1=rs1)
        add(f"sfence.vma x{rs1}, x{rs2}", mnemonic="sfence.vma", cls=C.SFENCE_VMA, rs1=rs1, rs2=rs2)

    for mn, cls in [("ecall", C.ECALL), ("ebreak", C.EBREAK), ("sret", C.SRET), ("mret", C.MRET),
                    ("wfi", C.WFI), ("fence.i", C.FENCE_I)]:
        add(mn, mnemonic=mn, cls=cls, reads=set(), writes=set())
    add("fence rw, w", mnemonic="fence", cls=C.FENCE, imm=0x031)
    add("fence iorw, iorw", mnemonic="fence", cls=C.FENCE, imm=0x0FF)
    return out


def _cforms() -> list[tuple[str, dict]]:  # noqa: C901 - a table
    out: list[tuple[str, dict]] = []

    def add(asm: str, **exp):
        exp.setdefault("compressed", True)
        out.append((asm, exp))

    P = [8, 9, 12, 15]  # registers reachable by 3-bit fields
    full = [1, 5, 10, 31]
    for r in full:
        for imm in [-32, -1, 1, 31]:
            add(f"c.addi x{r}, {imm}", cname="c.addi", mnemonic="addi", cls=C.ALU, rd=r, rs1=r, imm=imm)
            add(f"c.addiw x{r}, {imm}", cname="c.addiw", mnemonic="addiw", cls=C.ALU, rd=r, rs1=r, imm=imm)
            add(f"c.li x{r}, {imm}", cname="c.li", mnemonic="addi", cls=C.ALU, rd=r, rs1=0, imm=imm)
        for u in [1, 0x1F, 0xFFFE0, 0xFFFFF]:
            val = u << 12
            if val & (1 << 31):
                val -= 1 << 32
            if r != 2:
                add(f"c.lui x{r}, {u:#x}", cname="c.lui", mnemonic="lui", cls=C.ALU, rd=r, imm=val)
        for sh in [1, 31, 32, 63]:
            add(f"c.slli x{r}, {sh}", cname="c.slli", mnemonic="slli", cls=C.ALU, rd=r, rs1=r, imm=sh)
        for off in [0, 8, 504, 256]:
            add(f"c.ldsp x{r}, {off}(sp)", cname="c.ldsp", mnemonic="ld", cls=C.LOAD, rd=r, rs1=2, imm=off,
                mem_width=8)
            add(f"c.sdsp x{r}, {off}(sp)", cname="c.sdsp", mnemonic="sd", cls=C.STORE, rs1=2, rs2=r, imm=off,
                mem_width=8)
            add(f"c.fldsp f{r}, {off}(sp)", cname="c.fldsp", mnemonic="fld", cls=C.FP_LOAD, rd=F + r, rs1=2,
                imm=off, mem_width=8)
            add(f"c.fsdsp f{r}, {off}(sp)", cname="c.fsdsp", mnemonic="fsd", cls=C.FP_STORE, rs1=2,
                rs2=F + r, imm=off, mem_width=8)
        for off in [0, 4, 252, 128]:
            add(f"c.lwsp x{r}, {off}(sp)", cname="c.lwsp", mnemonic="lw", cls=C.LOAD, rd=r, rs1=2, imm=off,
                mem_width=4)
            add(f"c.swsp x{r}, {off}(sp)", cname="c.swsp", mnemonic="sw", cls=C.STORE, rs1=2, rs2=r, imm=off,
                mem_width=4)
        add(f"c.jr x{r}", cname="c.jr", mnemonic="jalr", cls=C.JALR, rd=0, rs1=r, imm=0)
        add(f"c.jalr x{r}", cname="c.jalr", mnemonic="jalr", cls=C.JALR, rd=1, rs1=r, imm=0, writes={1})
        for r2 in [1, 7, 31]:
            add(f"c.mv x{r}, x{r2}", cname="c.mv", mnemonic="add", cls=C.ALU, rd=r, rs1=0, rs2=r2,
                reads={r2})
            add(f"c.add x{r}, x{r2}", cname="c.add", mnemonic="add", cls=C.ALU, rd=r, rs1=r, rs2=r2)
    for rd in P:
        for rs in P:
            for off in [0, 8, 248, 128]:
                add(f"c.ld x{rd}, {off}(x{rs})", cname="c.ld", mnemonic="ld", cls=C.LOAD, rd=rd, rs1=rs,
                    imm=off, mem_width=8, mem_signed=True)
                add(f"c.sd x{rd}, {off}(x{rs})", cname="c.sd", mnemonic="sd", cls=C.STORE, rs1=rs, rs2=rd,
                    imm=off, mem_width=8)
                add(f"c.fld f{rd}, {off}(x{rs})", cname="c.fld", mnemonic="fld", cls=C.FP_LOAD, rd=F + rd,
                    rs1=rs, imm=off, mem_width=8)
                add(f"c.fsd f{rd}, {off}(x{rs})", cname="c.fsd", mnemonic="fsd", cls=C.FP_STORE, rs1=rs,
                    rs2=F + rd, imm=off, mem_width=8)
            for off in [0, 4, 124, 64]:
                add(f"c.lw x{rd}, {off}(x{rs})", cname="c.lw", mnemonic="lw", cls=C.LOAD, rd=rd, rs1=rs,
                    imm=off, mem_width=4, mem_signed=True)
                add(f"c.sw x{rd}, {off}(x{rs})", cname="c.sw", mnemonic="sw", cls=C.STORE, rs1=rs, rs2=rd,
                    imm=off, mem_width=4)
            for mn in ["sub", "xor", "or", "and", "subw", "addw"]:
                add(f"c.{mn} x{rd}, x{rs}", cname=f"c.{mn}", mnemonic=mn, cls=C.ALU, rd=rd, rs1=rd, rs2=rs)
        for sh in [1, 31, 32, 63]:
            add(f"c.srli x{rd}, {sh}", cname="c.srli", mnemonic="srli", cls=C.ALU, rd=rd, rs1=rd, imm=sh)
            add(f"c.srai x{rd}, {sh}", cname="c.srai", mnemonic="srai", cls=C.ALU, rd=rd, rs1=rd, imm=sh)
        for imm in [-32, -1, 0, 31]:
            add(f"c.andi x{rd}, {imm}", cname="c.andi", mnemonic="andi", cls=C.ALU, rd=rd, rs1=rd, imm=imm)
        for imm in [4, 8, 1020, 512]:
            add(f"c.addi4spn x{rd}, sp, {imm}", cname="c.addi4spn", mnemonic="addi", cls=C.ALU, rd=rd,
                rs1=2, imm=imm)
        for off in [-256, -2, 2, 254, 100]:
            add(f"c.beqz x{rd}, .{off:+d}", cname="c.beqz", mnemonic="beq", cls=C.BRANCH, rs1=rd, rs2=0,
                imm=off, rel_target=off)
            add(f"c.bnez x{rd}, .{off:+d}", cname="c.bnez", mnemonic="bne", cls=C.BRANCH, rs1=rd, rs2=0,
                imm=off, rel_target=off)
    for imm in [-512, -16, 16, 496]:
        add(f"c.addi16sp sp, {imm}", cname="c.addi16sp", mnemonic="addi", cls=C.ALU, rd=2, rs1=2, imm=imm)
    for off in [-2048, -2, 2, 2046, 0x2A4]:
        add(f"c.j .{off:+d}", cname="c.j", mnemonic="jal", cls=C.JAL, rd=0, imm=off, rel_target=off)
    add("c.nop", cname="c.nop", mnemonic="addi", cls=C.ALU, rd=0, rs1=0, imm=0, objdump="c.addi")
    add("c.ebreak", cname="c.ebreak", mnemonic="ebreak", cls=C.EBREAK)
    return out


def _assemble(tmp: Path, lines: list[str], rvc: bool) -> tuple[bytes, list[str]]:
    src = tmp / "forms.s"
    head = [".option norelax", ".option rvc" if rvc else ".option norvc", ".text"]
    src.write_text("\n".join(head + lines) + "\n")
    obj = tmp / "forms.o"
    subprocess.run([AS, "-march=rv64imafdc_zicsr_zifencei", "-o", str(obj), str(src)], check=True,
                   capture_output=True)
    binf = tmp / "forms.bin"
    subprocess.run([shutil.which("riscv64-unknown-elf-objcopy"), "-O", "binary", "-j", ".text", str(obj),
                    str(binf)], check=True)
    dump = subprocess.run([OBJDUMP, "-d", "-M", "no-aliases", str(obj)], check=True, capture_output=True,
                          text=True).stdout
    mnems = []
    for line in dump.splitlines():
        m = re.match(r"\s*[0-9a-f]+:\s+[0-9a-f]+\s+(\S+)", line)
        if m:
            mnems.append(m.group(1))
    return binf.read_bytes(), mnems


def _check(forms: list[tuple[str, dict]], code: bytes, mnems: list[str]) -> list[str]:
    errors = []
    off = 0
    for idx, (asm, exp) in enumerate(forms):
        ins = decode_at(code, off, off)
        exp = dict(exp)
        size = 2 if exp.get("compressed") else 4
        if ins.size != size:
            errors.append(f"{asm}: size {ins.size} != {size}")
            break
        rel = exp.pop("rel_target", None)
        if rel is not None and ins.target != (off + rel) % (1 << 64):
            errors.append(f"{asm}: target {ins.target} != {off + rel}")
        od = exp.pop("objdump", None)
        prefix = exp.pop("objdump_prefix", False)
        want_od = od or exp.get("cname") or exp["mnemonic"]
        got_od = mnems[idx] if idx < len(mnems) else None
        if not (got_od == want_od or (prefix and got_od and got_od.startswith(exp["mnemonic"]))):
            errors.append(f"{asm}: objdump says {got_od}, expected {want_od}")
        reads = exp.pop("reads", None)
        writes = exp.pop("writes", None)
        for k, v in exp.items():
            got = getattr(ins, k)
            if got != v:
                errors.append(f"{asm}: {k} = {got!r}, expected {v!r}")
        # default register-effect expectations from operands
        if writes is None and ins.cls not in (C.STORE, C.FP_STORE, C.BRANCH) and "rd" in exp:
            writes = {exp["rd"]} - {0}
        if reads is None:
            reads = {exp.get(k) for k in ("rs1", "rs2", "rs3")} - {0, None}
        if writes is not None and set(ins.writes) != set(writes):
            errors.append(f"{asm}: writes {sorted(ins.writes)} != {sorted(writes)}")
        if set(ins.reads) != set(reads):
            errors.append(f"{asm}: reads {sorted(ins.reads)} != {sorted(reads)}")
        assert ins.text()  # renders
        # decode() of the raw word agrees with decode_at()
        assert decode(ins.raw, off) == ins
        off += ins.size
    if off != len(code) and not errors:
        errors.append(f"decoded {off} bytes of {len(code)}")
    return errors


def test_uncompressed_forms_round_trip(tmp_path: Path) -> None:
    forms = _forms()
    assert len(forms) > 800
    code, mnems = _assemble(tmp_path, [a for a, _ in forms], rvc=False)
    errors = _check(forms, code, mnems)
    assert not errors, "\n".join(errors[:30])


def test_compressed_forms_round_trip(tmp_path: Path) -> None:
    forms = _cforms()
    assert len(forms) > 300
    code, mnems = _assemble(tmp_path, [a for a, _ in forms], rvc=True)
    errors = _check(forms, code, mnems)
    assert not errors, "\n".join(errors[:30])


@pytest.mark.parametrize("raw", [0x0000, 0x00000000 | 0x7F, 0xFFFFFFFF, 0x0000707F, 0x8000, 0x6002,
                                 0x4002, 0x9002 & 0xEFFF, 0x0000100F | (7 << 12)])
def test_illegal_encodings_never_raise(raw: int) -> None:
    ins = decode(raw, 0x1000)
    assert ins.cls is C.ILLEGAL or ins.size in (2, 4)


def test_specific_illegals() -> None:
    assert decode(0x0000, 0).cls is C.ILLEGAL            # all-zero halfword
    assert decode(0xFFFFFFFF, 0).cls is C.ILLEGAL        # long-encoding prefix
    assert decode(0x6001 | (2 << 7), 0).cls is C.ILLEGAL  # c.addi16sp 0 (reserved)
    assert decode(0x8002, 0).cls is C.ILLEGAL             # c.jr x0 (reserved)
    assert decode(0x4002, 0).cls is C.ILLEGAL             # c.lwsp x0 (reserved)
    assert decode_at(b"\x13", 0, 0).cls is C.ILLEGAL      # truncated
    assert decode_at(b"\x13\x05", 0, 0).cls is C.ILLEGAL  # truncated 32-bit


def test_random_words_never_raise_and_are_consistent() -> None:
    import random
    rng = random.Random(1234)
    for _ in range(20000):
        raw = rng.getrandbits(32)
        ins = decode(raw, 0x1000)
        assert ins.size == (4 if raw & 3 == 3 else 2)
        assert 0 not in ins.reads and 0 not in ins.writes
        assert all(0 < r < 64 for r in ins.reads | ins.writes)
        if ins.cls is not C.ILLEGAL:
            assert ins.text()
            if ins.mem_width:
                assert ins.mem_width in (1, 2, 4, 8)
            if ins.is_branch or ins.cls is C.JAL:
                assert ins.target == (0x1000 + ins.imm) % (1 << 64)
