"""RV64 bit-vector semantics in z3, for reasoning about paths of the binary.

One module for the analyser's SMT work (infeasible paths today; SMT loop
bounds can build on the same API).  ``SymState`` is a symbolic machine
state; ``execute(state, ins)`` applies one decoded instruction
(``isa.Instr``) and returns, for a conditional branch, the z3 condition
under which it is taken.

Values are 64-bit z3 bit-vectors.  Every unknown value is a fresh constant
whose name says where it comes from, which the memory model uses:

* ``in_*``: a register or memory word at the start of the analysed code;
* ``ld_*``: a value loaded through a pointer that is neither a constant
  address nor stack-relative (an *object* access), or read from a CSR;
* ``hv_*``: a value that a summarised region (loop, call) may have changed.

Memory is split three ways:

* **named locations**: words at constant addresses (globals, and the kernel
  stack when ``sp`` is a constant) and stack slots ``sp0 + k`` are tracked
  exactly, keyed by (address or offset, width);
* **object accesses** (any other address): a load returns the value of the
  latest object access at a syntactically equal address and width unless a
  store in between may alias it (then a fresh value); such stores never
  change named locations.  That is the memory-model assumption the caller
  must justify (``infeasible.escaping_globals``: the address of a tracked
  global is never stored to memory or passed on, and stack addresses do
  not escape);
* read-only data loads read the image.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import z3

from kairos.wcet.elfimage import ElfImage
from kairos.wcet.isa import Instr, InstrClass

MASK64 = (1 << 64) - 1
BV = z3.BitVecRef
CALLER_SAVED = (1, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17, 28, 29, 30, 31)

_counter = itertools.count()


def fresh(kind: str, hint: str = "") -> BV:
    return z3.BitVec(f"{kind}_{hint}_{next(_counter)}", 64)


def const(v: int, ctx: z3.Context | None = None) -> BV:
    """64-bit constant, in ``ctx`` or z3's default context."""
    return z3.BitVecVal(v & MASK64, 64, ctx)


def leaves(e: z3.ExprRef) -> set[str]:
    """Names of the fresh constants an expression depends on."""
    out: set[str] = set()
    stack = [e]
    seen: set[int] = set()
    while stack:
        x = stack.pop()
        if x.get_id() in seen:
            continue
        seen.add(x.get_id())
        if z3.is_const(x) and x.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.add(x.decl().name())
        else:
            stack.extend(x.children())
    return out


def as_int(e: BV) -> int | None:
    e = z3.simplify(e)
    return e.as_long() if z3.is_bv_value(e) else None


@dataclass
class SymState:
    """Registers, named memory and recent object accesses."""
    image: ElfImage | None
    regs: dict[int, BV] = field(default_factory=dict)
    named: dict[tuple, BV] = field(default_factory=dict)     # (kind, addr|offset, width) -> value
    #: recent object accesses, oldest first: (address, width, value, store?,
    #: key: the address ``canon`` gives, steps: the access's own path step
    #: and the steps ``canon`` relied on)
    objects: list[tuple[BV, int, BV, bool, BV, frozenset]] = field(default_factory=list)
    sp0: BV | None = None
    #: addresses of the globals whose address escapes (never named)
    untracked: object = None
    #: address -> (lo, hi) of the data object holding it, or None
    extent: object = None
    #: address -> True if an indexed store cannot reach it (an assumption)
    keep_scalar: object = None
    #: the path step being executed (``infeasible.PathChecker``), and the
    #: earlier steps whose accesses a load was answered from: the value
    #: holds on paths through those steps only, so the step's results are
    #: guarded by their literals too
    step: int = -1
    deps: set = field(default_factory=set)
    #: address -> (the address with copied values replaced by the value
    #: they copy, the steps that made the copies); None: addresses compare
    #: as they are
    canon: object = None

    @staticmethod
    def initial(image: ElfImage | None, regs: dict[int, int] | None = None, untracked=None,
                extent=None, keep_scalar=None) -> "SymState":
        st = SymState(image, untracked=untracked, extent=extent, keep_scalar=keep_scalar)
        for r in range(1, 32):
            st.regs[r] = fresh("in", f"x{r}")
        for r, v in (regs or {}).items():
            st.regs[r] = const(v)
        st.sp0 = st.regs[2]
        return st

    def copy(self) -> "SymState":
        return SymState(self.image, dict(self.regs), dict(self.named), list(self.objects), self.sp0,
                        self.untracked, self.extent, self.keep_scalar, self.step, set(self.deps), self.canon)

    def get(self, r: int | None) -> BV:
        if not r:
            return const(0)
        v = self.regs.get(r)
        if v is None:     # FP registers and anything never written
            v = self.regs[r] = fresh("in", f"f{r}")
        return v

    def set(self, r: int | None, v: BV) -> None:
        if r:
            self.regs[r] = z3.simplify(v)

    # -- memory ---------------------------------------------------------------
    def classify(self, addr: BV) -> tuple:
        """("abs", a) constant address, ("stack", k) = sp0 + k, or ("obj",)."""
        a = as_int(addr)
        if a is not None:
            return ("abs", a)
        if self.sp0 is not None:
            k = as_int(addr - self.sp0)
            if k is not None:
                return ("stack", k - (1 << 64) if k >> 63 else k)
        return ("obj",)

    def _tracked(self, kind: str, a: int) -> bool:
        return kind == "stack" or not (self.untracked and self.untracked(a))

    def load(self, addr: BV, width: int, signed: bool) -> BV:
        addr = z3.simplify(addr)
        cls = self.classify(addr)
        v: BV | None = None
        if cls[0] == "abs" and self.image is not None and self.image.is_readonly(cls[1]):
            try:
                v = const(self.image.read_int(cls[1], width, signed))
                return v
            except Exception:
                v = None
        if cls[0] != "obj" and self._tracked(cls[0], cls[1]):
            key = (cls[0], cls[1], width)
            v = self.named.get(key)
            if v is None:
                if any(self._overlaps(k, cls[0], cls[1], width) for k in self.named):
                    v = fresh("hv", "partial")
                else:
                    v = fresh("in", f"{cls[0]}{cls[1]:x}w{width}")
                    self.named[key] = v
            return self._extend(v, width, signed)
        key, ksteps = self._key(addr)
        passed: set = set()      # steps of the stores found apart only through their keys
        for a, w, val, is_store, k, steps in reversed(self.objects):
            if w == width and (z3.eq(a, addr) or z3.eq(k, key)):
                self.deps |= steps | passed | (ksteps if not z3.eq(a, addr) else frozenset())
                return self._extend(val, width, signed)
            if not is_store:
                continue
            if self._apart(addr, a, width, w):
                continue
            if self._apart(key, k, width, w):
                passed |= steps | ksteps
                continue
            break
        v = fresh("ld", f"{width}")
        self.objects.append((addr, width, v, False, key, frozenset({self.step}) | ksteps))
        return self._extend(v, width, signed)

    def _key(self, addr: BV) -> tuple[BV, frozenset]:
        return self.canon(addr) if self.canon is not None else (addr, frozenset())

    @staticmethod
    def _apart(x: BV, y: BV, wx: int, wy: int) -> bool:
        """Do [x, x + wx) and [y, y + wy) lie apart (a constant distance)?"""
        d = as_int(x - y)
        if d is None:
            return False
        d = d - (1 << 64) if d >> 63 else d
        return d >= wy or -d >= wx

    @staticmethod
    def _extend(v: BV, width: int, signed: bool) -> BV:
        if width == 8:
            return v
        low = z3.Extract(8 * width - 1, 0, v)
        return z3.SignExt(64 - 8 * width, low) if signed else z3.ZeroExt(64 - 8 * width, low)

    @staticmethod
    def _overlaps(key: tuple, kind: str, a: int, width: int) -> bool:
        return key[0] == kind and key[1] < a + width and a < key[1] + key[2]

    def store(self, addr: BV, width: int, value: BV) -> None:
        addr = z3.simplify(addr)
        cls = self.classify(addr)
        if cls[0] != "obj" and self._tracked(cls[0], cls[1]):
            for k in [k for k in self.named if self._overlaps(k, cls[0], cls[1], width)]:
                del self.named[k]
            val = value if width == 8 else z3.ZeroExt(64 - 8 * width, z3.Extract(8 * width - 1, 0, value))
            self.named[(cls[0], cls[1], width)] = z3.simplify(val)
            return
        val = value if width == 8 else z3.ZeroExt(64 - 8 * width, z3.Extract(8 * width - 1, 0, value))
        key, ksteps = self._key(addr)
        self.objects.append((addr, width, z3.simplify(val), True, key, frozenset({self.step}) | ksteps))
        # an index into a global (base constant + unknown offset) may hit any
        # tracked word of it, and of the stack: forget those
        if self.extent is not None:
            for c in addends(addr):
                ext = self.extent(c)
                if ext is not None:
                    lo, hi = ext
                    self.havoc_named(lambda k, a, w: k == "abs" and a < hi and lo < a + w
                                     and not (self.keep_scalar and self.keep_scalar(a)))

    def forget_objects(self) -> None:
        self.objects.clear()

    def havoc_named(self, pred) -> None:
        """Forget the named locations ``pred(kind, addr, width)`` selects."""
        for k in [k for k in self.named if pred(*k)]:
            del self.named[k]


def addends(e: BV) -> list[int]:
    """Constant terms of a (simplified) sum."""
    if z3.is_bv_value(e):
        return [e.as_long()]
    if z3.is_app_of(e, z3.Z3_OP_BADD):
        return [c.as_long() for c in e.children() if z3.is_bv_value(c)]
    return []


def _w(v: BV) -> BV:
    return z3.SignExt(32, z3.Extract(31, 0, v))


def _lo(v: BV) -> BV:
    return z3.Extract(31, 0, v)


ALU = {
    "addi": lambda a, b, i: a + i, "slti": lambda a, b, i: z3.If(a < i, const(1, a.ctx), const(0, a.ctx)),
    "sltiu": lambda a, b, i: z3.If(z3.ULT(a, i), const(1, a.ctx), const(0, a.ctx)),
    "xori": lambda a, b, i: a ^ i, "ori": lambda a, b, i: a | i, "andi": lambda a, b, i: a & i,
    "slli": lambda a, b, i: a << (i & 63), "srli": lambda a, b, i: z3.LShR(a, i & 63),
    "srai": lambda a, b, i: a >> (i & 63),
    "addiw": lambda a, b, i: _w(a + i), "slliw": lambda a, b, i: _w(a << (i & 31)),
    "srliw": lambda a, b, i: _w(z3.ZeroExt(32, z3.LShR(_lo(a), _lo(i) & 31))),
    "sraiw": lambda a, b, i: z3.SignExt(32, _lo(a) >> (_lo(i) & 31)),
    "add": lambda a, b, i: a + b, "sub": lambda a, b, i: a - b,
    "sll": lambda a, b, i: a << (b & 63), "srl": lambda a, b, i: z3.LShR(a, b & 63),
    "sra": lambda a, b, i: a >> (b & 63),
    "slt": lambda a, b, i: z3.If(a < b, const(1, a.ctx), const(0, a.ctx)),
    "sltu": lambda a, b, i: z3.If(z3.ULT(a, b), const(1, a.ctx), const(0, a.ctx)),
    "xor": lambda a, b, i: a ^ b, "or": lambda a, b, i: a | b, "and": lambda a, b, i: a & b,
    "addw": lambda a, b, i: _w(a + b), "subw": lambda a, b, i: _w(a - b),
    "sllw": lambda a, b, i: _w(a << (b & 31)),
    "srlw": lambda a, b, i: _w(z3.ZeroExt(32, z3.LShR(_lo(a), _lo(b) & 31))),
    "sraw": lambda a, b, i: z3.SignExt(32, _lo(a) >> (_lo(b) & 31)),
}

# The overflow cases below compare with Python ints, which z3 converts in
# the operand's own context: no module-level z3 constant, so the tables work
# in whichever context a query builds its terms (``smtloops.own_context``).


def _mulh(a: BV, b: BV, sa: bool, sb: bool) -> BV:
    ea = z3.SignExt(64, a) if sa else z3.ZeroExt(64, a)
    eb = z3.SignExt(64, b) if sb else z3.ZeroExt(64, b)
    return z3.Extract(127, 64, ea * eb)


def _div32(a: z3.BitVecRef, b: z3.BitVecRef, op: str) -> BV:
    if op == "divw":
        r = z3.If(b == 0, z3.BitVecVal(-1, 32, a.ctx), z3.If(z3.And(a == 1 << 31, b == -1), a, a / b))
    elif op == "remw":
        r = z3.If(b == 0, a, z3.If(z3.And(a == 1 << 31, b == -1), z3.BitVecVal(0, 32, a.ctx), z3.SRem(a, b)))
    elif op == "divuw":
        r = z3.UDiv(a, b)          # z3: x / 0 = all ones, as RISC-V
    else:
        r = z3.URem(a, b)          # z3: x % 0 = x, as RISC-V
    return z3.SignExt(32, r)


MULDIV = {
    "mul": lambda a, b: a * b,
    "mulh": lambda a, b: _mulh(a, b, True, True),
    "mulhsu": lambda a, b: _mulh(a, b, True, False),
    "mulhu": lambda a, b: _mulh(a, b, False, False),
    "div": lambda a, b: z3.If(b == 0, const(MASK64, a.ctx), z3.If(z3.And(a == 1 << 63, b == MASK64), a, a / b)),
    "divu": lambda a, b: z3.UDiv(a, b),
    "rem": lambda a, b: z3.If(b == 0, a, z3.If(z3.And(a == 1 << 63, b == MASK64), const(0, a.ctx), z3.SRem(a, b))),
    "remu": lambda a, b: z3.URem(a, b),
    "mulw": lambda a, b: _w(a * b),
    "divw": lambda a, b: _div32(_lo(a), _lo(b), "divw"),
    "divuw": lambda a, b: _div32(_lo(a), _lo(b), "divuw"),
    "remw": lambda a, b: _div32(_lo(a), _lo(b), "remw"),
    "remuw": lambda a, b: _div32(_lo(a), _lo(b), "remuw"),
}

BRANCH = {
    "beq": lambda a, b: a == b, "bne": lambda a, b: a != b,
    "blt": lambda a, b: a < b, "bge": lambda a, b: a >= b,
    "bltu": lambda a, b: z3.ULT(a, b), "bgeu": lambda a, b: z3.UGE(a, b),
}


def execute(st: SymState, ins: Instr) -> z3.BoolRef | None:
    """Apply ``ins`` to ``st``.  Returns the taken condition of a conditional
    branch, else None.  Calls, jumps and returns only write their link
    register here: following control flow is the caller's business."""
    m = ins.mnemonic
    cls = ins.cls
    if cls is InstrClass.ALU:
        if m == "lui":
            st.set(ins.rd, const(ins.imm))
        elif m == "auipc":
            st.set(ins.rd, const(ins.addr + ins.imm))
        else:
            f = ALU.get(m)
            a = st.get(ins.rs1)
            b = st.get(ins.rs2) if ins.rs2 is not None else const(0)
            st.set(ins.rd, f(a, b, const(ins.imm)) if f else fresh("hv", m))
        return None
    if cls is InstrClass.LOAD:
        st.set(ins.rd, st.load(st.get(ins.rs1) + ins.imm, ins.mem_width, ins.mem_signed))
        return None
    if cls is InstrClass.STORE:
        st.store(st.get(ins.rs1) + ins.imm, ins.mem_width, st.get(ins.rs2))
        return None
    if cls is InstrClass.BRANCH:
        return z3.simplify(BRANCH[m](st.get(ins.rs1), st.get(ins.rs2)))
    if cls in (InstrClass.JAL, InstrClass.JALR):
        st.set(ins.rd, const(ins.addr + ins.size))
        return None
    if cls in (InstrClass.MUL, InstrClass.DIV):
        st.set(ins.rd, MULDIV[m](st.get(ins.rs1), st.get(ins.rs2)))
        return None
    if cls in (InstrClass.LR, InstrClass.SC, InstrClass.AMO):
        addr = st.get(ins.rs1)
        old = st.load(addr, ins.mem_width, True)
        if cls is not InstrClass.LR:
            st.store(addr, ins.mem_width, fresh("hv", "amo"))
        st.set(ins.rd, fresh("ld", m) if cls is InstrClass.SC else old)
        return None
    if cls is InstrClass.FP_STORE:
        st.store(st.get(ins.rs1) + ins.imm, ins.mem_width, fresh("hv", "fp"))
        return None
    # CSR reads, FP results, anything else: the written registers are unknown
    for r in ins.writes:
        st.set(r, fresh("ld", m))
    return None
