"""A small RV64IMAC + Zicsr user-level emulator for trace capture.

It runs a bare-metal program from an entry symbol until that function
returns (to a sentinel return address), or until ``ebreak``/``ecall``, and
records the trace the replayer (``sim``) needs: every executed instruction
address and, for memory instructions, the data address and width.

Instruction decoding is the analyser's own (``isa.decode_at``), so the
emulator and the static analysis agree on what every instruction is.

It can also start from a register snapshot (``Emulator.from_snapshot``):
the route for tracing kernel paths, where QEMU supplies the register state
at the trap vector and this emulator replays the path with data addresses
(see docs/wcet.md, "Validation").
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from kairos.wcet.errors import WcetError
from kairos.wcet.isa import Instr, InstrClass, decode_at

__all__ = ["Memory", "Emulator", "Trace", "load_elf", "run_entry", "RETURN_SENTINEL"]

MASK = (1 << 64) - 1
RETURN_SENTINEL = 0xFFFF_FFFF_FFFF_F000  # ra of the entry call; reaching it ends the run


def _s64(x: int) -> int:
    x &= MASK
    return x - (1 << 64) if x >> 63 else x


def _s32(x: int) -> int:
    x &= 0xFFFF_FFFF
    return x - (1 << 32) if x >> 31 else x


@dataclass
class Trace:
    """One run: instruction addresses, and per instruction the data address
    and access width (width 0: the instruction does not access memory)."""

    pcs: array = field(default_factory=lambda: array("Q"))
    daddrs: array = field(default_factory=lambda: array("Q"))
    widths: array = field(default_factory=lambda: array("B"))
    entry: str = ""
    stop: str = ""           # "return", "ebreak", "ecall", ...
    has_data: bool = True    # False for PC-only traces (QEMU exec logs)

    def __len__(self) -> int:
        return len(self.pcs)

    def append(self, pc: int, daddr: int = -1, width: int = 0) -> None:
        self.pcs.append(pc)
        self.daddrs.append(daddr & MASK if width else 0)
        self.widths.append(width)


class Memory:
    """Flat memory made of disjoint regions; accesses outside them raise a
    ``WcetError`` naming the address."""

    def __init__(self) -> None:
        self.regions: list[tuple[int, bytearray]] = []
        self._last: tuple[int, int, bytearray] | None = None

    def add_region(self, base: int, size: int, data: bytes = b"") -> None:
        end = base + size
        # Every region the new one overlaps is merged into one, with its
        # contents kept (a default stack below the program's segments may
        # overlap several of them: the segments' bytes must stay visible).
        over = [(b, buf) for b, buf in self.regions if base < b + len(buf) and b < end]
        if over:
            lo = min([base] + [b for b, _ in over])
            hi = max([end] + [b + len(buf) for b, buf in over])
            nbuf = bytearray(hi - lo)
            for b, buf in over:
                nbuf[b - lo:b - lo + len(buf)] = buf
                self.regions.remove((b, buf))
            if data:
                nbuf[base - lo:base - lo + len(data)] = data
            self.regions.append((lo, nbuf))
        else:
            buf = bytearray(size)
            buf[:len(data)] = data
            self.regions.append((base, buf))
        self.regions.sort(key=lambda r: r[0])
        self._last = None

    def _find(self, addr: int, n: int) -> tuple[bytearray, int]:
        last = self._last
        if last is not None and last[0] <= addr and addr + n <= last[1]:
            return last[2], addr - last[0]
        for base, buf in self.regions:
            if base <= addr and addr + n <= base + len(buf):
                self._last = (base, base + len(buf), buf)
                return buf, addr - base
        raise WcetError(f"emulator: access to unmapped address {addr:#x} ({n} bytes)")

    def read(self, addr: int, n: int) -> int:
        buf, off = self._find(addr, n)
        return int.from_bytes(buf[off:off + n], "little")

    def write(self, addr: int, n: int, value: int) -> None:
        buf, off = self._find(addr, n)
        buf[off:off + n] = (value & ((1 << (8 * n)) - 1)).to_bytes(n, "little")

    def read_bytes(self, addr: int, n: int) -> bytes:
        buf, off = self._find(addr, n)
        return bytes(buf[off:off + n])

    def write_bytes(self, addr: int, data: bytes) -> None:
        buf, off = self._find(addr, len(data))
        buf[off:off + len(data)] = data


@dataclass
class ElfProgram:
    memory: Memory
    symbols: dict[str, tuple[int, int]]  # name -> (address, size)
    entry: int
    stack_top: int


def load_elf(path: str | Path, stack_size: int = 0x10000) -> ElfProgram:
    """Load the PT_LOAD segments and the symbol table of a RISC-V ELF.  A
    stack is mapped at ``__stack_top`` if the program defines it, otherwise
    just above the highest segment."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        with open(path, "rb") as fh:
            elf = ELFFile(fh)
            if elf["e_machine"] != "EM_RISCV" or elf.elfclass != 64:
                raise WcetError(f"{path}: not a 64-bit RISC-V ELF")
            mem = Memory()
            hi = 0
            for seg in elf.iter_segments():
                if seg["p_type"] != "PT_LOAD" or seg["p_memsz"] == 0:
                    continue
                mem.add_region(seg["p_vaddr"], seg["p_memsz"], seg.data())
                hi = max(hi, seg["p_vaddr"] + seg["p_memsz"])
            syms: dict[str, tuple[int, int]] = {}
            symtab = elf.get_section_by_name(".symtab")
            if symtab is not None:
                for s in symtab.iter_symbols():
                    if s.name and s["st_shndx"] != "SHN_UNDEF":
                        syms.setdefault(s.name, (s["st_value"], s["st_size"]))
            entry = elf["e_entry"]
    except FileNotFoundError:
        raise WcetError(f"{path}: no such file") from None
    except (ELFError, OSError, ValueError) as e:
        raise WcetError(f"{path}: cannot read ELF ({e})") from None
    if "__stack_top" in syms:
        top = syms["__stack_top"][0]
        bottom = syms.get("__stack_bottom", (top - stack_size, 0))[0]
        mem.add_region(bottom, top - bottom)
    else:
        top = (hi + 0xFFF) // 0x1000 * 0x1000 + stack_size
        mem.add_region(top - stack_size, stack_size)
    return ElfProgram(mem, syms, entry, top)


class Emulator:
    """Interprets decoded instructions; ``step()`` executes one."""

    def __init__(self, memory: Memory, pc: int, regs: dict[int, int] | None = None,
                 max_steps: int = 5_000_000) -> None:
        self.mem = memory
        self.pc = pc
        self.x = [0] * 32
        for r, v in (regs or {}).items():
            if 0 < r < 32:
                self.x[r] = v & MASK
        self.csrs: dict[int, int] = {}
        self.max_steps = max_steps
        self.steps = 0
        self.reservation: int | None = None
        self._decoded: dict[int, Instr] = {}

    @classmethod
    def from_snapshot(cls, memory: Memory, pc: int, regs: dict[int, int],
                      csrs: dict[int, int] | None = None, max_steps: int = 5_000_000) -> "Emulator":
        """Start from a register snapshot (e.g. taken in QEMU at a trap vector)."""
        emu = cls(memory, pc, regs, max_steps)
        emu.csrs.update(csrs or {})
        return emu

    def fetch(self, pc: int) -> Instr:
        ins = self._decoded.get(pc)
        if ins is None:
            try:
                lo = self.mem.read(pc, 2)
            except WcetError:
                raise WcetError(f"emulator: instruction fetch from unmapped address {pc:#x}") from None
            if lo & 3 == 3:
                raw = self.mem.read(pc, 4)
                ins = decode_at(raw.to_bytes(4, "little"), 0, pc)
            else:
                ins = decode_at(lo.to_bytes(2, "little"), 0, pc)
            if ins.cls is InstrClass.ILLEGAL:
                raise WcetError(f"emulator: illegal instruction at {pc:#x}")
            self._decoded[pc] = ins
        return ins

    # ------------------------------------------------------------------
    def run(self, trace: Trace | None = None, stop_pc: int = RETURN_SENTINEL) -> str:
        """Run until ``stop_pc`` is reached or ebreak/ecall; returns the reason."""
        while True:
            if self.pc == stop_pc:
                return "return"
            if self.steps >= self.max_steps:
                raise WcetError(f"emulator: no return after {self.max_steps} instructions "
                                f"(pc {self.pc:#x})")
            ins = self.fetch(self.pc)
            if ins.cls in (InstrClass.EBREAK, InstrClass.ECALL):
                if trace is not None:
                    trace.append(ins.addr)
                self.steps += 1
                return ins.mnemonic
            if ins.cls in (InstrClass.SRET, InstrClass.MRET, InstrClass.WFI):
                if trace is not None:
                    trace.append(ins.addr)
                self.steps += 1
                return ins.mnemonic
            daddr, width = self.execute(ins)
            self.steps += 1
            if trace is not None:
                trace.append(ins.addr, daddr, width)

    def execute(self, ins: Instr) -> tuple[int, int]:
        """Execute ``ins`` (at ``self.pc``); returns (data address, width) or (-1, 0)."""
        x = self.x
        m = ins.mnemonic
        cls = ins.cls
        rs1 = x[ins.rs1] if ins.rs1 else 0
        rs2 = x[ins.rs2] if ins.rs2 else 0
        next_pc = ins.addr + ins.size
        result: int | None = None
        daddr, width = -1, 0
        if cls is InstrClass.ALU:
            f = ALU.get(m)
            if f is None:
                raise WcetError(f"emulator: unsupported instruction {m} at {ins.addr:#x}")
            result = f(rs1, rs2, ins.imm, ins.addr)
        elif cls is InstrClass.LOAD:
            daddr = (rs1 + ins.imm) & MASK
            width = ins.mem_width
            v = self.mem.read(daddr, width)
            if ins.mem_signed and v >> (8 * width - 1):
                v -= 1 << (8 * width)
            result = v
        elif cls is InstrClass.STORE:
            daddr = (rs1 + ins.imm) & MASK
            width = ins.mem_width
            self.mem.write(daddr, width, rs2)
        elif cls is InstrClass.BRANCH:
            if BRANCH[m](rs1, rs2):
                next_pc = ins.addr + ins.imm
        elif cls is InstrClass.JAL:
            result = ins.addr + ins.size
            next_pc = ins.addr + ins.imm
        elif cls is InstrClass.JALR:
            result = ins.addr + ins.size
            next_pc = (rs1 + ins.imm) & MASK & ~1
        elif cls in (InstrClass.MUL, InstrClass.DIV):
            result = MULDIV[m](rs1, rs2)
        elif cls is InstrClass.CSR:
            result = self._csr(ins, rs1)
        elif cls in (InstrClass.FENCE, InstrClass.FENCE_I, InstrClass.SFENCE_VMA):
            pass
        elif cls is InstrClass.LR:
            daddr, width = rs1 & MASK, ins.mem_width
            v = self.mem.read(daddr, width)
            result = _s32(v) if width == 4 else v
            self.reservation = daddr
        elif cls is InstrClass.SC:
            daddr, width = rs1 & MASK, ins.mem_width
            if self.reservation == daddr:
                self.mem.write(daddr, width, rs2)
                result = 0
            else:
                result = 1
            self.reservation = None
        elif cls is InstrClass.AMO:
            daddr, width = rs1 & MASK, ins.mem_width
            old = self.mem.read(daddr, width)
            if width == 4:
                old_s, src = _s32(old), _s32(rs2)
            else:
                old_s, src = _s64(old), _s64(rs2)
            op = m.split(".")[0]
            new = _AMO[op](old_s, src, old, rs2 & ((1 << (8 * width)) - 1))
            self.mem.write(daddr, width, new)
            result = old_s
        else:
            raise WcetError(f"emulator: unsupported instruction {ins.text()} at {ins.addr:#x}")
        if result is not None and ins.rd:
            x[ins.rd] = result & MASK
        self.pc = next_pc & MASK
        return daddr, width

    def _csr(self, ins: Instr, rs1: int) -> int:
        num = ins.csr or 0
        if num in (0xC00, 0xB00, 0xC02, 0xB02, 0xC01):   # cycle, mcycle, instret, minstret, time
            old = self.steps
        else:
            old = self.csrs.get(num, 0)
        src = ins.imm if ins.rs1 is None else rs1
        m = ins.mnemonic
        if m in ("csrrw", "csrrwi"):
            self.csrs[num] = src & MASK
        elif m in ("csrrs", "csrrsi"):
            if src:
                self.csrs[num] = (old | src) & MASK
        elif m in ("csrrc", "csrrci"):
            if src:
                self.csrs[num] = (old & ~src) & MASK
        return old


def _sra(v: int, sh: int) -> int:
    return _s64(v) >> sh


def _w(v: int) -> int:
    return _s32(v) & MASK


ALU: dict[str, Callable[[int, int, int, int], int]] = {
    "lui": lambda a, b, i, pc: i,
    "auipc": lambda a, b, i, pc: pc + i,
    "addi": lambda a, b, i, pc: a + i,
    "slti": lambda a, b, i, pc: int(_s64(a) < i),
    "sltiu": lambda a, b, i, pc: int(a < (i & MASK)),
    "xori": lambda a, b, i, pc: a ^ (i & MASK),
    "ori": lambda a, b, i, pc: a | (i & MASK),
    "andi": lambda a, b, i, pc: a & (i & MASK),
    "slli": lambda a, b, i, pc: a << (i & 63),
    "srli": lambda a, b, i, pc: a >> (i & 63),
    "srai": lambda a, b, i, pc: _sra(a, i & 63),
    "addiw": lambda a, b, i, pc: _w(a + i),
    "slliw": lambda a, b, i, pc: _w(a << (i & 31)),
    "srliw": lambda a, b, i, pc: _w((a & 0xFFFF_FFFF) >> (i & 31)),
    "sraiw": lambda a, b, i, pc: _w(_s32(a) >> (i & 31)),
    "add": lambda a, b, i, pc: a + b,
    "sub": lambda a, b, i, pc: a - b,
    "sll": lambda a, b, i, pc: a << (b & 63),
    "slt": lambda a, b, i, pc: int(_s64(a) < _s64(b)),
    "sltu": lambda a, b, i, pc: int(a < b),
    "xor": lambda a, b, i, pc: a ^ b,
    "srl": lambda a, b, i, pc: a >> (b & 63),
    "sra": lambda a, b, i, pc: _sra(a, b & 63),
    "or": lambda a, b, i, pc: a | b,
    "and": lambda a, b, i, pc: a & b,
    "addw": lambda a, b, i, pc: _w(a + b),
    "subw": lambda a, b, i, pc: _w(a - b),
    "sllw": lambda a, b, i, pc: _w(a << (b & 31)),
    "srlw": lambda a, b, i, pc: _w((a & 0xFFFF_FFFF) >> (b & 31)),
    "sraw": lambda a, b, i, pc: _w(_s32(a) >> (b & 31)),
}

BRANCH: dict[str, Callable[[int, int], bool]] = {
    "beq": lambda a, b: a == b,
    "bne": lambda a, b: a != b,
    "blt": lambda a, b: _s64(a) < _s64(b),
    "bge": lambda a, b: _s64(a) >= _s64(b),
    "bltu": lambda a, b: a < b,
    "bgeu": lambda a, b: a >= b,
}


def _div(a: int, b: int) -> int:
    if b == 0:
        return -1
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _rem(a: int, b: int) -> int:
    if b == 0:
        return a
    r = abs(a) % abs(b)
    return -r if a < 0 else r


MULDIV: dict[str, Callable[[int, int], int]] = {
    "mul": lambda a, b: a * b,
    "mulh": lambda a, b: (_s64(a) * _s64(b)) >> 64,
    "mulhsu": lambda a, b: (_s64(a) * b) >> 64,
    "mulhu": lambda a, b: (a * b) >> 64,
    "div": lambda a, b: a if (_s64(a) == -(1 << 63) and _s64(b) == -1) else _div(_s64(a), _s64(b)),
    "divu": lambda a, b: MASK if b == 0 else a // b,
    "rem": lambda a, b: 0 if (_s64(a) == -(1 << 63) and _s64(b) == -1) else _rem(_s64(a), _s64(b)),
    "remu": lambda a, b: a if b == 0 else a % b,
    "mulw": lambda a, b: _w(a * b),
    "divw": lambda a, b: _w(a if (_s32(a) == -(1 << 31) and _s32(b) == -1) else _div(_s32(a), _s32(b))),
    "divuw": lambda a, b: _w(0xFFFF_FFFF if b & 0xFFFF_FFFF == 0
                              else (a & 0xFFFF_FFFF) // (b & 0xFFFF_FFFF)),
    "remw": lambda a, b: _w(0 if (_s32(a) == -(1 << 31) and _s32(b) == -1) else _rem(_s32(a), _s32(b))),
    "remuw": lambda a, b: _w(a if b & 0xFFFF_FFFF == 0 else (a & 0xFFFF_FFFF) % (b & 0xFFFF_FFFF)),
}

_AMO: dict[str, Callable[[int, int, int, int], int]] = {
    # (old signed, src signed, old unsigned, src unsigned) -> new
    "amoswap": lambda o, s, ou, su: su,
    "amoadd": lambda o, s, ou, su: o + s,
    "amoxor": lambda o, s, ou, su: ou ^ su,
    "amoand": lambda o, s, ou, su: ou & su,
    "amoor": lambda o, s, ou, su: ou | su,
    "amomin": lambda o, s, ou, su: min(o, s),
    "amomax": lambda o, s, ou, su: max(o, s),
    "amominu": lambda o, s, ou, su: min(ou, su),
    "amomaxu": lambda o, s, ou, su: max(ou, su),
}


def run_entry(prog: ElfProgram, entry: str, patches: dict[str, bytes] | None = None,
              max_steps: int = 5_000_000) -> Trace:
    """Run function ``entry`` of a loaded program (after writing ``patches``:
    symbol -> bytes) and return its trace.  The memory image is modified."""
    if entry not in prog.symbols:
        raise WcetError(f"no symbol {entry!r} in the program")
    for sym, data in (patches or {}).items():
        if sym not in prog.symbols:
            raise WcetError(f"input patch names unknown symbol {sym!r}")
        addr, size = prog.symbols[sym]
        if size and len(data) > size:
            raise WcetError(f"input patch for {sym!r} is {len(data)} bytes, symbol has {size}")
        prog.memory.write_bytes(addr, data)
    pc = prog.symbols[entry][0]
    emu = Emulator(prog.memory, pc, {1: RETURN_SENTINEL, 2: prog.stack_top}, max_steps)
    trace = Trace(entry=entry)
    trace.stop = emu.run(trace)
    return trace
