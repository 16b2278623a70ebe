"""Loop bounds: automatic for simple counted loops, otherwise annotations.

Automatic bounds (``auto_bound``) work on one loop of one function:

1. *Exit tests*: blocks of the loop (not inside an inner loop) that end in a
   conditional branch with one successor outside the loop and that dominate
   every latch, so they run in every completed iteration.
2. *Register evolution*: a register with no definition in the loop is
   invariant; a register with exactly one definition, in a block that is not
   in an inner loop and dominates every latch, whose new value depends only
   on itself and invariants (``addi i, i, 4``, ``addiw``, ``srli`` …), is an
   induction variable.  Calls in the loop clobber caller-saved registers.
3. *Initial values*: constant propagation (``cfg.constant_registers``) at
   the end of every entry edge's source block; all entry edges must agree.
   Loads in the exit test are allowed from read-only data and from symbols
   listed in the annotation file's ``[constants]``.
4. The exit test is then evaluated concretely, iteration by iteration, with
   exact RV64 semantics (wrap-around, 32-bit ``w`` forms, signed/unsigned
   compares) until it leaves the loop; the header bound is that iteration
   number + 1.  The smallest bound over all exit tests is used.

Anything else needs an annotation (see ``annotations``); ``loop_bound``
raises a ``WcetError`` naming the function, loop address and source line.

Hook for SMT-based bounds (later issue): ``BOUND_PROVIDERS`` is a list of
callables ``provider(program, forest, loop) -> LoopBound | None`` tried after
the pattern-based bound and before giving up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kairos.wcet import cfg as cfgmod
from kairos.wcet.annotations import Annotations, context_matches
from kairos.wcet.cfg import CALLER_SAVED, MASK64, Program, Term, _apply, _c, _sx, sym_step
from kairos.wcet.errors import WcetError
from kairos.wcet.isa import InstrClass
from kairos.wcet.loops import Loop, LoopForest

MAX_SIMULATED_ITERATIONS = 1 << 20


@dataclass(frozen=True)
class LoopBound:
    max: int          # header executions per loop entry
    source: str       # "auto: …" or the annotation's origin


BoundProvider = Callable[[Program, LoopForest, Loop], "LoopBound | None"]
#: Extra automatic bound providers (e.g. z3-based); tried in order.
BOUND_PROVIDERS: list[BoundProvider] = []


class _Cannot(Exception):
    pass


def _eval(e: tuple, env: dict, load) -> int:
    k = e[0]
    if k == "c":
        return e[1]
    if k == "r":
        if e[1] not in env:
            raise _Cannot(f"register {e[1]} is neither constant nor an induction variable")
        return env[e[1]] & MASK64
    if k == "?":
        raise _Cannot("unknown value")
    if k == "ld":
        return load(_eval(e[3], env, load), e[1], e[2]) & MASK64
    if k == "sx32":
        return _sx(_eval(e[1], env, load), 32) & MASK64
    return _apply(k, _eval(e[1], env, load), _eval(e[2], env, load)) & MASK64


def _branch_taken(mn: str, a: int, b: int) -> bool:
    sa, sb = _sx(a, 64), _sx(b, 64)
    return {"beq": a == b, "bne": a != b, "blt": sa < sb, "bge": sa >= sb,
            "bltu": a < b, "bgeu": a >= b}[mn]


class BoundAnalysis:
    """Per-program cache of constant-propagation results and automatic bounds."""

    def __init__(self, program: Program, annotations: Annotations | None = None) -> None:
        self.program = program
        self.image = program.image
        self.ann = annotations or Annotations()
        self._consts: dict[int, dict[int, dict[int, int]]] = {}
        self._auto: dict[tuple[int, int], LoopBound | None] = {}
        self._ctx_consts: dict[tuple[int, tuple[int, ...]], dict[int, dict[int, int]]] = {}
        self._auto_ctx: dict[tuple[int, int, tuple[int, ...]], LoopBound | None] = {}
        self._const_addrs: dict[int, int] = {}
        for name, val in self.ann.constants.items():
            self._const_addrs[self.image.symbol(name).addr] = val

    # -- memory for loads in exit tests ----------------------------------------
    def _load(self, addr: int, width: int, signed: bool) -> int:
        if addr in self._const_addrs:
            v = self._const_addrs[addr] & ((1 << (8 * width)) - 1)
            return _sx(v, 8 * width) if signed else v
        if not self.image.is_readonly(addr):
            raise _Cannot(f"exit test loads from writable memory at {addr:#x}")
        return self.image.read_int(addr, width, signed)

    def consts_in(self, func) -> dict[int, dict[int, int]]:
        c = self._consts.get(func.entry)
        if c is None:
            c = cfgmod.constant_registers(func.blocks, func.entry, self.image)
            self._consts[func.entry] = c
        return c

    def consts_in_context(self, func, ctx: tuple[int, ...]) -> dict[int, dict[int, int]]:
        """Constant propagation in ``func`` seeded with the constant argument
        registers at the call site ending ``ctx`` (recursively along ctx)."""
        if not ctx:
            return self.consts_in(func)
        key = (func.entry, ctx)
        c = self._ctx_consts.get(key)
        if c is not None:
            return c
        site = ctx[-1]
        caller = None
        for f in self.program.functions.values():
            for bs, callee in f.calls:
                if callee == func.entry and f.blocks[bs].last.addr == site:
                    caller, cblock = f, bs
                    break
            if caller is not None:
                break
        seed: dict[int, int] = {}
        if caller is not None:
            cin = self.consts_in_context(caller, ctx[:-1])
            out = self._out_consts(caller, cblock, cin, clobber=False)
            seed = {r: v for r, v in out.items() if r in (2, 3, 4) or 10 <= r <= 17}
        c = cfgmod.constant_registers(func.blocks, func.entry, self.image, seed)
        self._ctx_consts[key] = c
        return c

    def _out_consts(self, func, block_start: int, cin: dict | None = None, clobber: bool = True) -> dict[int, int]:
        blk = func.blocks[block_start]
        cin = self.consts_in(func) if cin is None else cin
        regs = {r: _c(v) for r, v in cin.get(block_start, {}).items()}
        for ins in blk.instrs:
            sym_step(regs, ins)
        out = {r: e[1] for r, e in regs.items() if e[0] == "c"}
        if blk.kind is Term.CALL and clobber:
            for r in CALLER_SAVED:
                out.pop(r, None)
        return out

    # -- automatic bound ---------------------------------------------------------
    def auto_bound(self, forest: LoopForest, loop: Loop) -> LoopBound | None:
        key = (loop.func.entry, loop.header)
        if key not in self._auto:
            try:
                self._auto[key] = self._auto_bound(forest, loop)
            except _Cannot:
                self._auto[key] = None
            if self._auto[key] is None:
                for prov in BOUND_PROVIDERS:
                    b = prov(self.program, forest, loop)
                    if b is not None:
                        self._auto[key] = b
                        break
        return self._auto[key]

    def auto_bound_in_context(self, forest: LoopForest, loop: Loop, ctx: tuple[int, ...]) -> LoopBound | None:
        """Automatic bound using constant arguments along the call string."""
        b = self.auto_bound(forest, loop)
        if b is not None or not ctx:
            return b
        key = (loop.func.entry, loop.header, ctx)
        if key not in self._auto_ctx:
            try:
                cin = self.consts_in_context(loop.func, ctx)
                r = self._auto_bound(forest, loop, cin)
                if r is not None:
                    r = LoopBound(r.max, r.source + " (constant arguments in this context)")
                self._auto_ctx[key] = r
            except _Cannot:
                self._auto_ctx[key] = None
        return self._auto_ctx[key]

    def _auto_bound(self, forest: LoopForest, loop: Loop, cin: dict | None = None) -> LoopBound | None:
        func = loop.func
        blocks = func.blocks
        if not loop.entry_edges or loop.is_infinite:
            return None
        latches = loop.latches

        def every_iteration(b: int) -> bool:
            return forest.innermost.get(b) is loop and all(forest.dominates(b, l) for l in latches)

        # definitions of registers inside the loop
        defs: dict[int, list[tuple[int, int]]] = {}
        has_call = False
        for bs in loop.blocks:
            blk = blocks[bs]
            for idx, ins in enumerate(blk.instrs):
                for w in ins.writes:
                    if w < 32:
                        defs.setdefault(w, []).append((bs, idx))
            if blk.kind in (Term.CALL, Term.TAILCALL):
                has_call = True
        # initial values at loop entry
        init: dict[int, int] | None = None
        for p, _h in loop.entry_edges:
            out = self._out_consts(func, p, cin)
            init = out if init is None else {r: v for r, v in init.items() if out.get(r) == v}
        init = init or {}
        invariant = {r: v for r, v in init.items() if r not in defs and not (has_call and r in CALLER_SAVED)}
        ivs: dict[int, tuple[int, int, tuple]] = {}   # reg -> (def block, index, update expr)
        for r, dl in defs.items():
            if len(dl) != 1 or (has_call and r in CALLER_SAVED) or r not in init:
                continue
            bs, idx = dl[0]
            if not every_iteration(bs):
                continue
            regs: dict[int, tuple] = {}
            sym_step(regs, blocks[bs].instrs[idx])
            expr = regs.get(r, ("?",))
            used = cfgmod._uses(expr, set())
            if cfgmod._has_unknown(expr) or not used <= ({r} | set(invariant)):
                continue
            ivs[r] = (bs, idx, expr)

        best: LoopBound | None = None
        for bs in sorted(loop.blocks):
            blk = blocks[bs]
            br = blk.last
            if br.cls is not InstrClass.BRANCH or not every_iteration(bs):
                continue
            outside = [s for s in blk.succs if s not in loop.blocks]
            if len(outside) != 1 or len(blk.succs) != 2:
                continue
            exit_taken = br.target == outside[0]
            # symbolic values of the branch operands over the block's entry regs
            regs = {}
            for ins in blk.instrs[:-1]:
                sym_step(regs, ins)
            ea = regs.get(br.rs1, ("r", br.rs1)) if br.rs1 else _c(0)
            eb = regs.get(br.rs2, ("r", br.rs2)) if br.rs2 else _c(0)
            used = cfgmod._uses(ea, set()) | cfgmod._uses(eb, set())
            if not used or not used <= (set(ivs) | set(invariant)) or not (used & set(ivs)):
                continue
            # IV values at this block's entry in iteration k: updates whose block
            # strictly dominates bs (executed earlier in the iteration) are applied
            try:
                n = self._simulate(forest, ivs, invariant, init, bs, br.mnemonic, ea, eb, exit_taken)
            except _Cannot:
                continue
            if n is not None and (best is None or n < best.max):
                names = ",".join(cfgmod.reg_name(r) for r in sorted(used & set(ivs)))
                best = LoopBound(n, f"auto: induction {names}, exit test at {br.addr:#x}")
        return best

    def _simulate(self, forest, ivs, invariant, init, bs, mn, ea, eb, exit_taken) -> int | None:
        env = dict(invariant)
        vals = {r: init[r] for r in ivs}
        before = {r for r, (dbs, _i, _e) in ivs.items() if dbs != bs and forest.dominates(dbs, bs)}

        def step(r: int) -> int:
            e = ivs[r][2]
            return _eval(e, {**env, r: vals[r]}, self._load)

        for k in range(MAX_SIMULATED_ITERATIONS):
            for r in before:
                vals[r] = step(r)
            a = _eval(ea, {**env, **vals}, self._load)
            b = _eval(eb, {**env, **vals}, self._load)
            if _branch_taken(mn, a, b) == exit_taken:
                return k + 1
            for r in ivs:
                if r not in before:
                    vals[r] = step(r)
        return None

    # -- the bound used by path analysis ---------------------------------------
    def bound(self, forest: LoopForest, loop: Loop, chain: list[str], ctx: tuple[int, ...] = ()) -> LoopBound:
        """Bound for ``loop`` reached through the call string ``ctx`` whose
        function names (from the entry down to the loop's function) are
        ``chain``."""
        ann = self._annotation(loop, chain)
        if ann is not None:
            return ann
        auto = self.auto_bound_in_context(forest, loop, ctx)
        if auto is not None:
            return auto
        func = loop.func
        src = self.image.source_of(loop.header)
        via = f" (reached via {' -> '.join(chain)})" if len(chain) > 1 else ""
        raise WcetError(f"loop at {loop.header:#x} in {func.name} ({src}) has no bound{via}: "
                        f"not a simple counted loop; add a [[loop]] annotation with max = N")

    def _annotation(self, loop: Loop, chain: list[str]) -> LoopBound | None:
        best: LoopBound | None = None
        for la in self.ann.loops:
            if la.function is not None and la.function != loop.func.name:
                continue
            if la.context and not context_matches(la.context, chain):
                continue
            if not self._ann_matches(la, loop):
                continue
            la.used = True
            if best is None or la.max < best.max:
                best = LoopBound(la.max, la.origin)
        return best

    def _ann_matches(self, la, loop: Loop) -> bool:
        func = loop.func
        if la.address is not None:
            blk = func.block_containing(la.address)
            if blk is None:
                return False
            return self._innermost_of(loop, blk.start)
        addrs = self.image.addrs_of_line(la.file, la.line)
        for a in addrs:
            blk = func.block_containing(a)
            if blk is not None and self._innermost_of(loop, blk.start):
                return True
        return False

    def _innermost_of(self, loop: Loop, block_start: int) -> bool:
        if block_start not in loop.blocks:
            return False
        # innermost loop containing the block must be this loop
        return not any(block_start in c.blocks for c in loop.children)

    def check_unused(self) -> None:
        for la in self.ann.loops:
            if not la.used:
                raise WcetError(f"annotation {la.describe()} matches no analysed loop")
