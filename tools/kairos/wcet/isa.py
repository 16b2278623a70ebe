"""RISC-V instruction decoder for the WCET analyser.

Covers RV64I, M, A, C (compressed), Zicsr, Zifencei, the privileged
instructions a kernel uses (``sret``, ``mret``, ``wfi``, ``sfence.vma``) and
the F/D loads, stores and common arithmetic (so context-switch code that
saves FP registers and user programs built for rv64gc decode).

Conventions (relied on by the rest of the analyser and by the emulator):

* Register numbers: integer registers are ``0..31``; FP registers are
  ``32 + n``.  ``reads``/``writes`` never contain ``x0`` (it is a constant, not
  a dependence).
* ``imm`` is always the sign-extended value the instruction *uses*:
  for ``lui``/``auipc`` that is the shifted value (``imm = sext(imm20 << 12)``),
  for branches and jumps the byte offset relative to ``addr``, for shifts the
  shift amount, for CSR immediates (``csrrwi`` …) the 5-bit unsigned value
  (held in ``imm``; ``rs1`` is ``None``), for ``fence`` the 12-bit
  ``fm|pred|succ`` field unsigned.
* Compressed instructions are expanded: ``mnemonic`` is the canonical 32-bit
  mnemonic of the expansion (``c.mv`` → ``add rd, x0, rs2``, ``c.j`` →
  ``jal x0``, ``c.jr`` → ``jalr x0, 0(rs1)``, ``c.nop`` → ``addi x0, x0, 0``),
  ``compressed`` is True and ``cname`` holds the compressed name.
* ``decode`` never raises: undecodable or reserved encodings produce an
  ``Instr`` with ``cls is InstrClass.ILLEGAL``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

__all__ = ["InstrClass", "Instr", "decode", "decode_at", "REG_NAMES", "reg_name", "CSR_NAMES"]


class InstrClass(enum.Enum):
    ALU = "alu"
    LOAD = "load"
    STORE = "store"
    MUL = "mul"
    DIV = "div"
    BRANCH = "branch"
    JAL = "jal"
    JALR = "jalr"
    CSR = "csr"
    FENCE = "fence"
    FENCE_I = "fence.i"
    ECALL = "ecall"
    EBREAK = "ebreak"
    SRET = "sret"
    MRET = "mret"
    WFI = "wfi"
    SFENCE_VMA = "sfence.vma"
    AMO = "amo"
    LR = "lr"
    SC = "sc"
    FPU = "fpu"
    FP_LOAD = "fp_load"
    FP_STORE = "fp_store"
    ILLEGAL = "illegal"


REG_NAMES = [
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2",
    "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
    "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7",
    "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
]
FREG_NAMES = [
    "ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7",
    "fs0", "fs1", "fa0", "fa1", "fa2", "fa3", "fa4", "fa5",
    "fa6", "fa7", "fs2", "fs3", "fs4", "fs5", "fs6", "fs7",
    "fs8", "fs9", "fs10", "fs11", "ft8", "ft9", "ft10", "ft11",
]

CSR_NAMES = {
    0x001: "fflags", 0x002: "frm", 0x003: "fcsr",
    0xC00: "cycle", 0xC01: "time", 0xC02: "instret",
    0x100: "sstatus", 0x104: "sie", 0x105: "stvec", 0x106: "scounteren",
    0x140: "sscratch", 0x141: "sepc", 0x142: "scause", 0x143: "stval", 0x144: "sip",
    0x180: "satp",
    0x300: "mstatus", 0x301: "misa", 0x302: "medeleg", 0x303: "mideleg", 0x304: "mie",
    0x305: "mtvec", 0x340: "mscratch", 0x341: "mepc", 0x342: "mcause", 0x343: "mtval",
    0x344: "mip", 0xB00: "mcycle", 0xB02: "minstret", 0xF14: "mhartid",
}


def reg_name(r: int) -> str:
    """ABI name of register number ``r`` (FP registers are 32+n)."""
    if r >= 32:
        return FREG_NAMES[r - 32]
    return REG_NAMES[r]


def _sext(value: int, bits: int) -> int:
    sign = 1 << (bits - 1)
    value &= (1 << bits) - 1
    return (value ^ sign) - sign


def _bits(x: int, hi: int, lo: int) -> int:
    return (x >> lo) & ((1 << (hi - lo + 1)) - 1)


def _regs(*rs: int | None) -> frozenset[int]:
    return frozenset(r for r in rs if r is not None and r != 0)


@dataclass(frozen=True, slots=True)
class Instr:
    addr: int
    size: int
    raw: int
    mnemonic: str
    cls: InstrClass
    rd: int | None = None
    rs1: int | None = None
    rs2: int | None = None
    imm: int = 0
    csr: int | None = None
    mem_width: int = 0
    mem_signed: bool = False
    reads: frozenset[int] = field(default_factory=frozenset)
    writes: frozenset[int] = field(default_factory=frozenset)
    compressed: bool = False
    cname: str = ""
    aq: bool = False
    rl: bool = False
    rs3: int | None = None
    rm: int | None = None

    # --- control-flow helpers -------------------------------------------
    @property
    def is_branch(self) -> bool:
        """Conditional branch (beq … bgeu, c.beqz, c.bnez)."""
        return self.cls is InstrClass.BRANCH

    @property
    def is_jump(self) -> bool:
        """Unconditional jump: jal or jalr (calls and returns included)."""
        return self.cls in (InstrClass.JAL, InstrClass.JALR)

    @property
    def is_call(self) -> bool:
        """jal/jalr that links into ra or t0 (the standard call registers)."""
        return self.is_jump and self.rd in (1, 5)

    @property
    def is_return(self) -> bool:
        """``jalr x0, 0(ra)`` (also through t0), i.e. ``ret``."""
        return (self.cls is InstrClass.JALR and self.rd in (0, None)
                and self.rs1 in (1, 5) and self.imm == 0)

    @property
    def target(self) -> int | None:
        """Static target for branches and ``jal``; None otherwise."""
        if self.cls in (InstrClass.BRANCH, InstrClass.JAL):
            return (self.addr + self.imm) & 0xFFFF_FFFF_FFFF_FFFF
        return None

    @property
    def next_addr(self) -> int:
        return self.addr + self.size

    @property
    def is_mem(self) -> bool:
        return self.mem_width > 0

    # --- display -----------------------------------------------------------
    def text(self) -> str:
        """Assembly-like string (canonical expanded form, ABI register names)."""
        m = self.mnemonic
        c = self.cls
        r = reg_name
        if c is InstrClass.ILLEGAL:
            return f"illegal 0x{self.raw:0{self.size * 2}x}"
        if c in (InstrClass.LOAD, InstrClass.FP_LOAD):
            return f"{m} {r(self.rd)}, {self.imm}({r(self.rs1)})"
        if c in (InstrClass.STORE, InstrClass.FP_STORE):
            return f"{m} {r(self.rs2)}, {self.imm}({r(self.rs1)})"
        if c is InstrClass.BRANCH:
            return f"{m} {r(self.rs1)}, {r(self.rs2)}, 0x{self.target:x}"
        if c is InstrClass.JAL:
            return f"{m} {r(self.rd)}, 0x{self.target:x}"
        if c is InstrClass.JALR:
            return f"{m} {r(self.rd)}, {self.imm}({r(self.rs1)})"
        if c is InstrClass.CSR:
            name = CSR_NAMES.get(self.csr or 0, f"0x{self.csr:x}")
            src = r(self.rs1) if self.rs1 is not None else str(self.imm)
            return f"{m} {r(self.rd)}, {name}, {src}"
        if c in (InstrClass.AMO, InstrClass.SC):
            sfx = (".aq" if self.aq else "") + (".rl" if self.rl else "")
            return f"{m}{sfx} {r(self.rd)}, {r(self.rs2)}, ({r(self.rs1)})"
        if c is InstrClass.LR:
            sfx = (".aq" if self.aq else "") + (".rl" if self.rl else "")
            return f"{m}{sfx} {r(self.rd)}, ({r(self.rs1)})"
        if c is InstrClass.SFENCE_VMA:
            return f"{m} {r(self.rs1 or 0)}, {r(self.rs2 or 0)}"
        if c is InstrClass.FENCE:
            return f"{m} 0x{self.imm:x}"
        if m in ("lui", "auipc"):
            return f"{m} {r(self.rd)}, 0x{(self.imm >> 12) & 0xFFFFF:x}"
        ops = [x for x in (self.rd, self.rs1, self.rs2, self.rs3) if x is not None]
        parts = [r(x) for x in ops]
        if self.rs2 is None and self.rs3 is None and c in (InstrClass.ALU,) and self.rs1 is not None:
            parts.append(str(self.imm))
        if not parts:
            return m
        return f"{m} {', '.join(parts)}"

    def __str__(self) -> str:  # pragma: no cover - convenience
        return f"{self.addr:#x}: {self.text()}"


def _illegal(raw: int, addr: int, size: int) -> Instr:
    return Instr(addr, size, raw, "illegal", InstrClass.ILLEGAL)


# ---------------------------------------------------------------------------
# 32-bit encodings
# ---------------------------------------------------------------------------

_LOADS = {0: ("lb", 1, True), 1: ("lh", 2, True), 2: ("lw", 4, True), 3: ("ld", 8, True),
          4: ("lbu", 1, False), 5: ("lhu", 2, False), 6: ("lwu", 4, False)}
_STORES = {0: ("sb", 1), 1: ("sh", 2), 2: ("sw", 4), 3: ("sd", 8)}
_BRANCHES = {0: "beq", 1: "bne", 4: "blt", 5: "bge", 6: "bltu", 7: "bgeu"}
_OPIMM = {0: "addi", 2: "slti", 3: "sltiu", 4: "xori", 6: "ori", 7: "andi"}
_OP = {(0, 0): "add", (0x20, 0): "sub", (0, 1): "sll", (0, 2): "slt", (0, 3): "sltu",
       (0, 4): "xor", (0, 5): "srl", (0x20, 5): "sra", (0, 6): "or", (0, 7): "and",
       (1, 0): "mul", (1, 1): "mulh", (1, 2): "mulhsu", (1, 3): "mulhu",
       (1, 4): "div", (1, 5): "divu", (1, 6): "rem", (1, 7): "remu"}
_OP32 = {(0, 0): "addw", (0x20, 0): "subw", (0, 1): "sllw", (0, 5): "srlw", (0x20, 5): "sraw",
         (1, 0): "mulw", (1, 4): "divw", (1, 5): "divuw", (1, 6): "remw", (1, 7): "remuw"}
_AMO = {0x00: "amoadd", 0x01: "amoswap", 0x04: "amoxor", 0x08: "amoor", 0x0C: "amoand",
        0x10: "amomin", 0x14: "amomax", 0x18: "amominu", 0x1C: "amomaxu"}
_CSR = {1: "csrrw", 2: "csrrs", 3: "csrrc", 5: "csrrwi", 6: "csrrsi", 7: "csrrci"}
_FMA = {0x43: "fmadd", 0x47: "fmsub", 0x4B: "fnmsub", 0x4F: "fnmadd"}


def _mulcls(name: str) -> InstrClass:
    if name.startswith("mul"):
        return InstrClass.MUL
    if name.startswith(("div", "rem")):
        return InstrClass.DIV
    return InstrClass.ALU


def _decode32(raw: int, addr: int) -> Instr:
    opcode = raw & 0x7F
    rd = _bits(raw, 11, 7)
    funct3 = _bits(raw, 14, 12)
    rs1 = _bits(raw, 19, 15)
    rs2 = _bits(raw, 24, 20)
    funct7 = _bits(raw, 31, 25)
    i_imm = _sext(raw >> 20, 12)
    A = InstrClass

    def mk(mn: str, cls: InstrClass, **kw) -> Instr:
        return Instr(addr, 4, raw, mn, cls, **kw)

    if opcode == 0x37 or opcode == 0x17:
        imm = _sext(raw & 0xFFFFF000, 32)
        return mk("lui" if opcode == 0x37 else "auipc", A.ALU, rd=rd, imm=imm,
                  writes=_regs(rd))
    if opcode == 0x6F:
        imm = (_bits(raw, 31, 31) << 20) | (_bits(raw, 30, 21) << 1) | \
              (_bits(raw, 20, 20) << 11) | (_bits(raw, 19, 12) << 12)
        return mk("jal", A.JAL, rd=rd, imm=_sext(imm, 21), writes=_regs(rd))
    if opcode == 0x67:
        if funct3 != 0:
            return _illegal(raw, addr, 4)
        return mk("jalr", A.JALR, rd=rd, rs1=rs1, imm=i_imm, reads=_regs(rs1), writes=_regs(rd))
    if opcode == 0x63:
        name = _BRANCHES.get(funct3)
        if name is None:
            return _illegal(raw, addr, 4)
        imm = (_bits(raw, 31, 31) << 12) | (_bits(raw, 30, 25) << 5) | \
              (_bits(raw, 11, 8) << 1) | (_bits(raw, 7, 7) << 11)
        return mk(name, A.BRANCH, rs1=rs1, rs2=rs2, imm=_sext(imm, 13), reads=_regs(rs1, rs2))
    if opcode == 0x03:
        ld = _LOADS.get(funct3)
        if ld is None:
            return _illegal(raw, addr, 4)
        return mk(ld[0], A.LOAD, rd=rd, rs1=rs1, imm=i_imm, mem_width=ld[1], mem_signed=ld[2],
                  reads=_regs(rs1), writes=_regs(rd))
    if opcode == 0x23:
        st = _STORES.get(funct3)
        if st is None:
            return _illegal(raw, addr, 4)
        imm = _sext((funct7 << 5) | rd, 12)
        return mk(st[0], A.STORE, rs1=rs1, rs2=rs2, imm=imm, mem_width=st[1],
                  reads=_regs(rs1, rs2))
    if opcode == 0x13:
        if funct3 in _OPIMM:
            return mk(_OPIMM[funct3], A.ALU, rd=rd, rs1=rs1, imm=i_imm,
                      reads=_regs(rs1), writes=_regs(rd))
        f6 = _bits(raw, 31, 26)
        sh = _bits(raw, 25, 20)
        if funct3 == 1 and f6 == 0:
            name = "slli"
        elif funct3 == 5 and f6 == 0:
            name = "srli"
        elif funct3 == 5 and f6 == 0x10:
            name = "srai"
        else:
            return _illegal(raw, addr, 4)
        return mk(name, A.ALU, rd=rd, rs1=rs1, imm=sh, reads=_regs(rs1), writes=_regs(rd))
    if opcode == 0x1B:
        if funct3 == 0:
            return mk("addiw", A.ALU, rd=rd, rs1=rs1, imm=i_imm, reads=_regs(rs1), writes=_regs(rd))
        sh = _bits(raw, 24, 20)
        if funct3 == 1 and funct7 == 0:
            name = "slliw"
        elif funct3 == 5 and funct7 == 0:
            name = "srliw"
        elif funct3 == 5 and funct7 == 0x20:
            name = "sraiw"
        else:
            return _illegal(raw, addr, 4)
        return mk(name, A.ALU, rd=rd, rs1=rs1, imm=sh, reads=_regs(rs1), writes=_regs(rd))
    if opcode == 0x33 or opcode == 0x3B:
        name = (_OP if opcode == 0x33 else _OP32).get((funct7, funct3))
        if name is None:
            return _illegal(raw, addr, 4)
        return mk(name, _mulcls(name), rd=rd, rs1=rs1, rs2=rs2,
                  reads=_regs(rs1, rs2), writes=_regs(rd))
    if opcode == 0x0F:
        if funct3 == 0:
            return mk("fence", A.FENCE, imm=(raw >> 20) & 0xFFF)
        if funct3 == 1:
            return mk("fence.i", A.FENCE_I)
        return _illegal(raw, addr, 4)
    if opcode == 0x73:
        if funct3 == 0:
            if raw == 0x00000073:
                return mk("ecall", A.ECALL)
            if raw == 0x00100073:
                return mk("ebreak", A.EBREAK)
            if raw == 0x10200073:
                return mk("sret", A.SRET)
            if raw == 0x30200073:
                return mk("mret", A.MRET)
            if raw == 0x10500073:
                return mk("wfi", A.WFI)
            if funct7 == 0x09 and rd == 0:
                return mk("sfence.vma", A.SFENCE_VMA, rs1=rs1, rs2=rs2, reads=_regs(rs1, rs2))
            return _illegal(raw, addr, 4)
        name = _CSR.get(funct3)
        if name is None:
            return _illegal(raw, addr, 4)
        csr = (raw >> 20) & 0xFFF
        if funct3 >= 5:
            return mk(name, A.CSR, rd=rd, imm=rs1, csr=csr, writes=_regs(rd))
        return mk(name, A.CSR, rd=rd, rs1=rs1, csr=csr, reads=_regs(rs1), writes=_regs(rd))
    if opcode == 0x2F:
        if funct3 not in (2, 3):
            return _illegal(raw, addr, 4)
        sfx = ".w" if funct3 == 2 else ".d"
        width = 4 if funct3 == 2 else 8
        f5 = funct7 >> 2
        aq = bool(funct7 & 2)
        rl = bool(funct7 & 1)
        if f5 == 0x02:
            if rs2 != 0:
                return _illegal(raw, addr, 4)
            return mk("lr" + sfx, A.LR, rd=rd, rs1=rs1, mem_width=width, mem_signed=True,
                      aq=aq, rl=rl, reads=_regs(rs1), writes=_regs(rd))
        if f5 == 0x03:
            return mk("sc" + sfx, A.SC, rd=rd, rs1=rs1, rs2=rs2, mem_width=width,
                      aq=aq, rl=rl, reads=_regs(rs1, rs2), writes=_regs(rd))
        name = _AMO.get(f5)
        if name is None:
            return _illegal(raw, addr, 4)
        return mk(name + sfx, A.AMO, rd=rd, rs1=rs1, rs2=rs2, mem_width=width, mem_signed=True,
                  aq=aq, rl=rl, reads=_regs(rs1, rs2), writes=_regs(rd))
    if opcode == 0x07:
        if funct3 not in (2, 3):
            return _illegal(raw, addr, 4)
        w = 4 if funct3 == 2 else 8
        return mk("flw" if w == 4 else "fld", A.FP_LOAD, rd=32 + rd, rs1=rs1, imm=i_imm,
                  mem_width=w, reads=_regs(rs1), writes=frozenset({32 + rd}))
    if opcode == 0x27:
        if funct3 not in (2, 3):
            return _illegal(raw, addr, 4)
        w = 4 if funct3 == 2 else 8
        imm = _sext((funct7 << 5) | rd, 12)
        return mk("fsw" if w == 4 else "fsd", A.FP_STORE, rs1=rs1, rs2=32 + rs2, imm=imm,
                  mem_width=w, reads=_regs(rs1) | {32 + rs2})
    if opcode in _FMA:
        fmt = _bits(raw, 26, 25)
        if fmt not in (0, 1):
            return _illegal(raw, addr, 4)
        rs3 = _bits(raw, 31, 27)
        name = _FMA[opcode] + (".s" if fmt == 0 else ".d")
        return mk(name, A.FPU, rd=32 + rd, rs1=32 + rs1, rs2=32 + rs2, rs3=32 + rs3, rm=funct3,
                  reads=frozenset({32 + rs1, 32 + rs2, 32 + rs3}), writes=frozenset({32 + rd}))
    if opcode == 0x53:
        return _decode_opfp(raw, addr, rd, funct3, rs1, rs2, funct7)
    return _illegal(raw, addr, 4)


def _decode_opfp(raw: int, addr: int, rd: int, funct3: int, rs1: int, rs2: int, funct7: int) -> Instr:
    A = InstrClass
    fmt = funct7 & 3
    op = funct7 >> 2
    if fmt not in (0, 1):
        return _illegal(raw, addr, 4)
    s = ".s" if fmt == 0 else ".d"
    F = 32

    def ff(name: str, two: bool = True, rm: bool = True) -> Instr:
        reads = {F + rs1} | ({F + rs2} if two else set())
        return Instr(addr, 4, raw, name, A.FPU, rd=F + rd, rs1=F + rs1,
                     rs2=(F + rs2) if two else None, rm=funct3 if rm else None,
                     reads=frozenset(reads), writes=frozenset({F + rd}))

    if op in (0x00, 0x01, 0x02, 0x03):
        return ff(("fadd", "fsub", "fmul", "fdiv")[op] + s)
    if op == 0x0B and rs2 == 0:
        return ff("fsqrt" + s, two=False)
    if op == 0x04 and funct3 <= 2:
        return ff(("fsgnj", "fsgnjn", "fsgnjx")[funct3] + s, rm=False)
    if op == 0x05 and funct3 <= 1:
        return ff(("fmin", "fmax")[funct3] + s, rm=False)
    if op == 0x08:
        # fcvt.s.d (fmt=0, rs2=1) / fcvt.d.s (fmt=1, rs2=0)
        if (fmt == 0 and rs2 == 1) or (fmt == 1 and rs2 == 0):
            return ff("fcvt" + s + (".d" if fmt == 0 else ".s"), two=False)
        return _illegal(raw, addr, 4)
    if op == 0x14 and funct3 <= 2:
        name = ("fle", "flt", "feq")[funct3] + s
        return Instr(addr, 4, raw, name, A.FPU, rd=rd, rs1=F + rs1, rs2=F + rs2,
                     reads=frozenset({F + rs1, F + rs2}), writes=_regs(rd))
    if op == 0x18 and rs2 <= 3:
        name = "fcvt" + (".w", ".wu", ".l", ".lu")[rs2] + s
        return Instr(addr, 4, raw, name, A.FPU, rd=rd, rs1=F + rs1, rm=funct3,
                     reads=frozenset({F + rs1}), writes=_regs(rd))
    if op == 0x1A and rs2 <= 3:
        name = "fcvt" + s + (".w", ".wu", ".l", ".lu")[rs2]
        return Instr(addr, 4, raw, name, A.FPU, rd=F + rd, rs1=rs1, rm=funct3,
                     reads=_regs(rs1), writes=frozenset({F + rd}))
    if op == 0x1C and rs2 == 0 and funct3 in (0, 1):
        name = ("fmv.x.w" if fmt == 0 else "fmv.x.d") if funct3 == 0 else "fclass" + s
        return Instr(addr, 4, raw, name, A.FPU, rd=rd, rs1=F + rs1,
                     reads=frozenset({F + rs1}), writes=_regs(rd))
    if op == 0x1E and rs2 == 0 and funct3 == 0:
        name = "fmv.w.x" if fmt == 0 else "fmv.d.x"
        return Instr(addr, 4, raw, name, A.FPU, rd=F + rd, rs1=rs1,
                     reads=_regs(rs1), writes=frozenset({F + rd}))
    return _illegal(raw, addr, 4)


# ---------------------------------------------------------------------------
# 16-bit (RVC) encodings, expanded
# ---------------------------------------------------------------------------

def _decode16(raw: int, addr: int) -> Instr:
    A = InstrClass
    op = raw & 3
    f3 = _bits(raw, 15, 13)
    b12 = _bits(raw, 12, 12)
    rdp = 8 + _bits(raw, 4, 2)        # rd' / rs2'
    rs1p = 8 + _bits(raw, 9, 7)       # rs1' / rd'
    rd = _bits(raw, 11, 7)
    rs2 = _bits(raw, 6, 2)
    ci_imm = _sext((b12 << 5) | _bits(raw, 6, 2), 6)

    def mk(cname: str, mn: str, cls: InstrClass, **kw) -> Instr:
        return Instr(addr, 2, raw, mn, cls, compressed=True, cname=cname, **kw)

    def ill() -> Instr:
        return _illegal(raw, addr, 2)

    if raw == 0:
        return ill()
    if op == 0:
        if f3 == 0:  # c.addi4spn
            imm = (_bits(raw, 12, 11) << 4) | (_bits(raw, 10, 7) << 6) | \
                  (_bits(raw, 6, 6) << 2) | (_bits(raw, 5, 5) << 3)
            if imm == 0:
                return ill()
            return mk("c.addi4spn", "addi", A.ALU, rd=rdp, rs1=2, imm=imm,
                      reads=_regs(2), writes=_regs(rdp))
        uimm_d = (_bits(raw, 12, 10) << 3) | (_bits(raw, 6, 5) << 6)
        uimm_w = (_bits(raw, 12, 10) << 3) | (_bits(raw, 6, 6) << 2) | (_bits(raw, 5, 5) << 6)
        if f3 == 1:
            return mk("c.fld", "fld", A.FP_LOAD, rd=32 + rdp, rs1=rs1p, imm=uimm_d, mem_width=8,
                      reads=_regs(rs1p), writes=frozenset({32 + rdp}))
        if f3 == 2:
            return mk("c.lw", "lw", A.LOAD, rd=rdp, rs1=rs1p, imm=uimm_w, mem_width=4,
                      mem_signed=True, reads=_regs(rs1p), writes=_regs(rdp))
        if f3 == 3:
            return mk("c.ld", "ld", A.LOAD, rd=rdp, rs1=rs1p, imm=uimm_d, mem_width=8,
                      mem_signed=True, reads=_regs(rs1p), writes=_regs(rdp))
        if f3 == 5:
            return mk("c.fsd", "fsd", A.FP_STORE, rs1=rs1p, rs2=32 + rdp, imm=uimm_d, mem_width=8,
                      reads=_regs(rs1p) | {32 + rdp})
        if f3 == 6:
            return mk("c.sw", "sw", A.STORE, rs1=rs1p, rs2=rdp, imm=uimm_w, mem_width=4,
                      reads=_regs(rs1p, rdp))
        if f3 == 7:
            return mk("c.sd", "sd", A.STORE, rs1=rs1p, rs2=rdp, imm=uimm_d, mem_width=8,
                      reads=_regs(rs1p, rdp))
        return ill()
    if op == 1:
        if f3 == 0:
            if rd == 0:
                return mk("c.nop", "addi", A.ALU, rd=0, rs1=0, imm=ci_imm)
            return mk("c.addi", "addi", A.ALU, rd=rd, rs1=rd, imm=ci_imm,
                      reads=_regs(rd), writes=_regs(rd))
        if f3 == 1:
            if rd == 0:
                return ill()
            return mk("c.addiw", "addiw", A.ALU, rd=rd, rs1=rd, imm=ci_imm,
                      reads=_regs(rd), writes=_regs(rd))
        if f3 == 2:
            return mk("c.li", "addi", A.ALU, rd=rd, rs1=0, imm=ci_imm, writes=_regs(rd))
        if f3 == 3:
            if rd == 2:
                imm = (b12 << 9) | (_bits(raw, 6, 6) << 4) | (_bits(raw, 5, 5) << 6) | \
                      (_bits(raw, 4, 3) << 7) | (_bits(raw, 2, 2) << 5)
                imm = _sext(imm, 10)
                if imm == 0:
                    return ill()
                return mk("c.addi16sp", "addi", A.ALU, rd=2, rs1=2, imm=imm,
                          reads=_regs(2), writes=_regs(2))
            imm = _sext((b12 << 17) | (_bits(raw, 6, 2) << 12), 18)
            if imm == 0:
                return ill()
            return mk("c.lui", "lui", A.ALU, rd=rd, imm=imm, writes=_regs(rd))
        if f3 == 4:
            f2 = _bits(raw, 11, 10)
            if f2 in (0, 1):
                sh = (b12 << 5) | _bits(raw, 6, 2)
                name = "srli" if f2 == 0 else "srai"
                return mk("c." + name, name, A.ALU, rd=rs1p, rs1=rs1p, imm=sh,
                          reads=_regs(rs1p), writes=_regs(rs1p))
            if f2 == 2:
                return mk("c.andi", "andi", A.ALU, rd=rs1p, rs1=rs1p, imm=ci_imm,
                          reads=_regs(rs1p), writes=_regs(rs1p))
            f2b = _bits(raw, 6, 5)
            if b12 == 0:
                name = ("sub", "xor", "or", "and")[f2b]
            elif f2b <= 1:
                name = ("subw", "addw")[f2b]
            else:
                return ill()
            return mk("c." + name, name, A.ALU, rd=rs1p, rs1=rs1p, rs2=rdp,
                      reads=_regs(rs1p, rdp), writes=_regs(rs1p))
        if f3 == 5:
            imm = (b12 << 11) | (_bits(raw, 11, 11) << 4) | (_bits(raw, 10, 9) << 8) | \
                  (_bits(raw, 8, 8) << 10) | (_bits(raw, 7, 7) << 6) | (_bits(raw, 6, 6) << 7) | \
                  (_bits(raw, 5, 3) << 1) | (_bits(raw, 2, 2) << 5)
            return mk("c.j", "jal", A.JAL, rd=0, imm=_sext(imm, 12))
        # c.beqz / c.bnez
        imm = (b12 << 8) | (_bits(raw, 11, 10) << 3) | (_bits(raw, 6, 5) << 6) | \
              (_bits(raw, 4, 3) << 1) | (_bits(raw, 2, 2) << 5)
        name = "beq" if f3 == 6 else "bne"
        return mk("c.beqz" if f3 == 6 else "c.bnez", name, A.BRANCH, rs1=rs1p, rs2=0,
                  imm=_sext(imm, 9), reads=_regs(rs1p))
    if op == 2:
        if f3 == 0:
            sh = (b12 << 5) | _bits(raw, 6, 2)
            return mk("c.slli", "slli", A.ALU, rd=rd, rs1=rd, imm=sh,
                      reads=_regs(rd), writes=_regs(rd))
        if f3 in (1, 3):
            imm = (b12 << 5) | (_bits(raw, 6, 5) << 3) | (_bits(raw, 4, 2) << 6)
            if f3 == 1:
                return mk("c.fldsp", "fld", A.FP_LOAD, rd=32 + rd, rs1=2, imm=imm, mem_width=8,
                          reads=_regs(2), writes=frozenset({32 + rd}))
            if rd == 0:
                return ill()
            return mk("c.ldsp", "ld", A.LOAD, rd=rd, rs1=2, imm=imm, mem_width=8, mem_signed=True,
                      reads=_regs(2), writes=_regs(rd))
        if f3 == 2:
            if rd == 0:
                return ill()
            imm = (b12 << 5) | (_bits(raw, 6, 4) << 2) | (_bits(raw, 3, 2) << 6)
            return mk("c.lwsp", "lw", A.LOAD, rd=rd, rs1=2, imm=imm, mem_width=4, mem_signed=True,
                      reads=_regs(2), writes=_regs(rd))
        if f3 == 4:
            if b12 == 0:
                if rs2 == 0:
                    if rd == 0:
                        return ill()
                    return mk("c.jr", "jalr", A.JALR, rd=0, rs1=rd, imm=0, reads=_regs(rd))
                return mk("c.mv", "add", A.ALU, rd=rd, rs1=0, rs2=rs2,
                          reads=_regs(rs2), writes=_regs(rd))
            if rs2 == 0:
                if rd == 0:
                    return mk("c.ebreak", "ebreak", A.EBREAK)
                return mk("c.jalr", "jalr", A.JALR, rd=1, rs1=rd, imm=0,
                          reads=_regs(rd), writes=_regs(1))
            return mk("c.add", "add", A.ALU, rd=rd, rs1=rd, rs2=rs2,
                      reads=_regs(rd, rs2), writes=_regs(rd))
        if f3 in (5, 7):
            imm = (_bits(raw, 12, 10) << 3) | (_bits(raw, 9, 7) << 6)
            if f3 == 5:
                return mk("c.fsdsp", "fsd", A.FP_STORE, rs1=2, rs2=32 + rs2, imm=imm, mem_width=8,
                          reads=_regs(2) | {32 + rs2})
            return mk("c.sdsp", "sd", A.STORE, rs1=2, rs2=rs2, imm=imm, mem_width=8,
                      reads=_regs(2, rs2))
        if f3 == 6:
            imm = (_bits(raw, 12, 9) << 2) | (_bits(raw, 8, 7) << 6)
            return mk("c.swsp", "sw", A.STORE, rs1=2, rs2=rs2, imm=imm, mem_width=4,
                      reads=_regs(2, rs2))
    return ill()


def decode(raw: int, addr: int) -> Instr:
    """Decode one instruction.  ``raw`` may hold 16 or 32 bits; its low two
    bits decide the length (``0b11`` → 32-bit).  Never raises."""
    if raw & 3 == 3:
        if raw & 0x1C == 0x1C:  # 48-bit and longer encodings are not supported
            return _illegal(raw & 0xFFFFFFFF, addr, 4)
        return _decode32(raw & 0xFFFFFFFF, addr)
    return _decode16(raw & 0xFFFF, addr)


def decode_at(code: bytes, offset: int, addr: int) -> Instr:
    """Decode the instruction at ``code[offset:]`` located at address ``addr``.
    A truncated instruction at the end of ``code`` decodes as ILLEGAL."""
    if offset + 2 > len(code) or offset < 0:
        return _illegal(0, addr, 2)
    lo = code[offset] | (code[offset + 1] << 8)
    if lo & 3 != 3:
        return _decode16(lo, addr)
    if offset + 4 > len(code):
        return _illegal(lo, addr, 2)
    raw = lo | (code[offset + 2] << 16) | (code[offset + 3] << 24)
    return decode(raw, addr)
