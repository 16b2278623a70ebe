"""Control-flow graphs, functions and the call graph.

Data model (shared with ``microarch``/``cache``/``sim``; stable API):

``Context = tuple[int, ...]``
    A call string: the addresses of the call instructions (``jal``/``jalr``
    that link, or a tail-calling jump) from the analysed entry down to the
    function, outermost first.  The entry function runs in context ``()``.
    By default the analysis is fully context sensitive (virtual inlining):
    every distinct call string is its own context.  Functions in
    ``Program.flatten`` instead get one shared context ``(-entry,)`` (a
    negative first element), extended by their callees as usual; this bounds
    the number of contexts of big programs (``Program.limit_contexts``).
    Derive callee contexts with ``Program.callee_context(ctx, site, callee)``
    (``ctx[:-1]`` is *not* the caller of a shared context: use
    ``Program.context_callers(entry)``); ``Program.contexts(entry)``
    enumerates the reachable ones, each once.  Every analysis over contexts
    (``microarch``, ``ipet``, ``valueanalysis``) follows these rules, so the
    driver may share contexts whatever the model.

``BasicBlock``
    ``start`` (address of the first instruction), ``end`` (address just after
    the last one), ``instrs: list[Instr]``, ``succs``/``preds`` (lists of block
    start addresses *within the same function*), ``kind: Term`` (how the block
    ends, see below), ``call_target`` (callee entry for ``CALL``/``TAILCALL``),
    ``func`` (entry address of the owning function), ``table`` (resolved
    jump-table targets for ``SWITCH``).  ``last`` is the final instruction.

``Term`` (block terminator kinds)
    ``FALLTHROUGH`` (next instruction is a leader), ``BRANCH`` (conditional;
    succs are taken target and fall-through, in that order, de-duplicated),
    ``JUMP`` (direct intra-procedural ``jal x0``), ``SWITCH`` (resolved
    jump table), ``CALL`` (succ = return site; no succ if the callee never
    returns), ``TAILCALL`` (``jal x0``/``jr`` to another function: the
    callee's return is this function's return), ``RETURN`` (``ret``),
    ``TRAP_RETURN`` (``sret``/``mret``: the analysed unit ends),
    ``HALT`` (``ebreak``: the path ends), ``ECALL``/``WFI`` (block ends, the
    next instruction follows).

``Function``
    ``name``, ``entry``, ``blocks: dict[int, BasicBlock]``, ``returns``
    (some path reaches a ``RETURN``), ``calls: list[tuple[int, int]]``
    (block start, callee entry), ``exits`` (blocks without successors).

``Program``
    ``image`` (``ElfImage``), ``functions: dict[int, Function]`` (by entry),
    ``function(name_or_addr)``, ``entries`` (analysed entry name → address),
    ``callgraph`` (networkx ``DiGraph`` over function entries, edge attribute
    ``sites`` = list of call-site addresses), ``contexts(entry)`` → list of
    ``(Context, Function)``, ``block(addr)`` (the block starting at ``addr``),
    ``restricted(entry, via)`` (a view without the entry function's blocks
    that are on no path calling a ``via`` function; used for ``SYMBOL@VIA``
    entries, so analyses must not assume one ``Function`` object per entry
    address across views).

``build_program(image, entries)`` builds everything reachable from the
entry symbols.  Errors (``WcetError``): illegal instruction (with address),
unresolved indirect jump (address and register), indirect call through a
function pointer, recursion, control flow leaving executable sections.

Indirect jumps are resolved by symbolic evaluation of the straight-line code
leading to the ``jalr`` (constants from ``lui``/``auipc``/``addi``… and loads
from read-only data); a ``jalr`` whose target depends on one index register
is a *switch*: its range comes from the unsigned bounds check (``bltu``/
``bgeu`` or ``sltiu``+``beqz``/``bnez``) that guards the block, and every
table entry is read from the image.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Iterable

import networkx as nx

from kairos.wcet.elfimage import ElfImage
from kairos.wcet.errors import WcetError
from kairos.wcet.isa import Instr, InstrClass, reg_name

Context = tuple[int, ...]

MASK64 = (1 << 64) - 1
MAX_SWITCH_ENTRIES = 4096
MAX_CONTEXTS = 200_000

#: Functions that never return even if their code looks like it could.
NORETURN_NAMES = frozenset({"abort", "panic", "kernel_panic", "__assert_fail", "_exit", "exit", "halt",
                            "__stack_chk_fail"})


class Term(enum.Enum):
    FALLTHROUGH = "fallthrough"
    BRANCH = "branch"
    JUMP = "jump"
    SWITCH = "switch"
    CALL = "call"
    TAILCALL = "tailcall"
    RETURN = "return"
    TRAP_RETURN = "trap_return"
    HALT = "halt"
    ECALL = "ecall"
    WFI = "wfi"


@dataclass(eq=False)
class BasicBlock:
    start: int
    end: int
    instrs: list[Instr]
    func: int
    kind: Term = Term.FALLTHROUGH
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)
    call_target: int | None = None
    table: list[int] | None = None

    @property
    def last(self) -> Instr:
        return self.instrs[-1]

    @property
    def addrs(self) -> list[int]:
        return [i.addr for i in self.instrs]

    def __repr__(self) -> str:
        return f"<BB {self.start:#x}-{self.end:#x} {self.kind.value} -> {[hex(s) for s in self.succs]}>"


@dataclass(eq=False)
class Function:
    name: str
    entry: int
    blocks: dict[int, BasicBlock] = field(default_factory=dict)
    returns: bool = False
    calls: list[tuple[int, int]] = field(default_factory=list)

    @property
    def exits(self) -> list[BasicBlock]:
        return [b for b in self.blocks.values() if not b.succs]

    def block_containing(self, addr: int) -> BasicBlock | None:
        for b in self.blocks.values():
            if b.start <= addr < b.end:
                return b
        return None

    def graph(self) -> nx.DiGraph:
        g = nx.DiGraph()
        for b in self.blocks.values():
            g.add_node(b.start)
            for s in b.succs:
                g.add_edge(b.start, s)
        return g

    def __repr__(self) -> str:
        return f"<Function {self.name} @{self.entry:#x} {len(self.blocks)} blocks>"


class Program:
    def __init__(self, image: ElfImage) -> None:
        self.image = image
        self.functions: dict[int, Function] = {}
        self.entries: dict[str, int] = {}
        self.callgraph = nx.DiGraph()
        self._block_index: dict[int, BasicBlock] = {}
        self.flatten: set[int] = set()
        #: [[recursion]] bounds: function entry -> most activations per entry
        #: into its recursion; and each recursive function's strongly
        #: connected component of the call graph (all of them in ``flatten``)
        self.recursion: dict[int, int] = {}
        self.recursive_scc: dict[int, frozenset[int]] = {}

    def dag(self, nodes: Iterable[int] | None = None) -> nx.DiGraph:
        """The call graph (over ``nodes``) without the calls into recursive
        functions: acyclic, for the topological orders of context counting."""
        g = self.callgraph if nodes is None else self.callgraph.subgraph(nodes)
        if not self.recursive_scc:
            return g
        g = g.copy()
        g.remove_edges_from([(u, v) for u, v in list(g.edges) if v in self.recursive_scc])
        return g

    def function(self, key: str | int) -> Function:
        if isinstance(key, int):
            f = self.functions.get(key)
            if f is None:
                raise WcetError(f"no function at {key:#x}")
            return f
        addr = self.entries.get(key)
        if addr is None:
            addr = self.image.symbol(key).addr
        f = self.functions.get(addr)
        if f is None:
            raise WcetError(f"function {key} was not built (not reachable from the entries)")
        return f

    def block(self, addr: int) -> BasicBlock:
        return self._block_index[addr]

    def reindex(self) -> None:
        self._block_index = {}
        for f in self.functions.values():
            self._block_index.update(f.blocks)

    # -- call contexts ------------------------------------------------------
    # By default every call string is its own context (full virtual inlining).
    # Functions in ``flatten`` get one *shared* context ``(-entry,)`` whatever
    # the caller (their callees extend it as usual): the analyses then merge
    # all callers' states there.  Users of contexts must derive callee
    # contexts with ``callee_context`` (never ``ctx + (site,)`` directly).

    def callee_context(self, ctx: Context, site: int, callee: int) -> Context:
        """Context of ``callee`` called at ``site`` from context ``ctx``."""
        if callee in self.flatten:
            return (-callee,)
        return ctx + (site,)

    @staticmethod
    def is_shared(ctx: Context) -> bool:
        """Is ``ctx`` (or a context below it) a shared, caller-independent one?"""
        return bool(ctx) and ctx[0] < 0

    def contexts(self, entry: str | int) -> list[tuple[Context, Function]]:
        """All (context, function) pairs reachable from ``entry``, each once,
        in depth-first pre-order."""
        root = self.function(entry)
        out: list[tuple[Context, Function]] = []
        seen: set[Context] = set()
        stack: list[tuple[Context, Function]] = [((), root)]
        while stack:
            ctx, f = stack.pop()
            if ctx in seen:
                continue
            seen.add(ctx)
            out.append((ctx, f))
            if len(out) > MAX_CONTEXTS:
                raise WcetError(f"more than {MAX_CONTEXTS} call contexts below {root.name}")
            for site_block, callee in reversed(f.calls):
                site = f.blocks[site_block].last.addr
                stack.append((self.callee_context(ctx, site, callee), self.functions[callee]))
        return out

    def context_callers(self, entry: str | int) -> dict[Context, list[tuple[Context, int]]]:
        """For every context below ``entry``: the (caller context, call block
        start) pairs that enter it.  A full call string has one; a shared
        context has one per call site in every caller context.  Analyses that
        need "the loops around the call" (persistence) must take all of them."""
        out: dict[Context, list[tuple[Context, int]]] = {}
        for ctx, f in self.contexts(entry):
            for site_block, callee in f.calls:
                site = f.blocks[site_block].last.addr
                out.setdefault(self.callee_context(ctx, site, callee), []).append((ctx, site_block))
        return out

    def context_counts(self, entry: str | int) -> dict[int, int]:
        """Number of contexts per function below ``entry`` under the current
        policy (without enumerating them)."""
        root = self.function(entry).entry
        reach = nx.descendants(self.callgraph, root) | {root}
        order = list(nx.topological_sort(self.dag(reach)))
        count = {f: 0 for f in order}
        count[root] = 1
        for f in reach & self.recursive_scc.keys():
            count[f] = 1               # one shared context, whatever the callers (dag drops their calls)
        for f in order:
            if f in self.flatten and f != root:
                count[f] = 1 if count[f] else 0
            c = count[f]
            if not c:
                continue
            for g_ in self.callgraph.successors(f):
                if g_ in count:
                    count[g_] += c * len(self.callgraph[f][g_]["sites"])
        return count

    def limit_contexts(self, entry: str | int, budget: int, keep: Iterable[int] = ()) -> list[str]:
        """Flatten the functions whose call strings multiply most until at most
        ``budget`` contexts remain below ``entry``; returns their names.

        Each step flattens, among the functions whose flattening alone would
        bring the count within the budget, the one that removes the fewest
        contexts (the least precision lost: a kernel a few contexts over the
        budget loses a leaf's contexts, not those of its system-call
        handler); when none would, the one that removes the most. The
        functions in ``keep`` (entry addresses) are never flattened: the
        latency analysis keeps its preemption-point functions, whose call
        contexts are its region starts."""
        root = self.function(entry).entry
        chosen: list[str] = []
        while True:
            count = self.context_counts(entry)
            total = sum(count.values())
            if total <= budget:
                return chosen
            # contexts contributed by one instance of each function (its subtree)
            weight: dict[int, int] = {}
            for f in reversed(list(nx.topological_sort(self.dag(count.keys())))):
                w = 1
                for g_ in self.callgraph.successors(f):
                    if g_ in count and g_ not in self.flatten:
                        w += len(self.callgraph[f][g_]["sites"]) * weight[g_]
                weight[f] = w
            cands = [f for f in count if f != root and f not in self.flatten and f not in keep and count[f] > 1]
            if not cands:
                return chosen
            saving = {f: (count[f] - 1) * weight[f] for f in cands}
            enough = [f for f in cands if saving[f] >= total - budget]
            best = min(enough, key=lambda f: (saving[f], f)) if enough else max(cands, key=lambda f: saving[f])
            self.flatten.add(best)
            chosen.append(self.functions[best].name)

    def restricted(self, entry: str | int, via: Iterable[int]) -> "Program":
        """A view of the program for the paths from ``entry`` that call every
        function in ``via``: in the entry function, the blocks that neither
        reach nor follow a block calling one of them (directly or through its
        callees) are dropped.  Such blocks are on no admitted path, so every
        analysis of the view is sound for those paths and does less work
        (e.g. a trap vector's other handlers disappear from
        ``trap_entry@handle_interrupt``).  Other functions are shared."""
        root = self.function(entry)
        via = set(via)
        reaches_via: dict[int, bool] = {}

        def calls_via(fe: int) -> bool:          # does fe (transitively) call a via function?
            if fe in via:
                return True
            if fe not in reaches_via:
                reaches_via[fe] = False
                reaches_via[fe] = any(calls_via(c) for c in self.callgraph.successors(fe))
            return reaches_via[fe]

        g = root.graph()
        hits = {b.start for b in root.blocks.values()
                if b.kind in (Term.CALL, Term.TAILCALL) and b.call_target is not None and calls_via(b.call_target)}
        if not hits:
            return self
        keep = set(hits)
        for h in hits:
            keep |= nx.ancestors(g, h) | nx.descendants(g, h)
        if len(keep) == len(root.blocks):
            return self
        f = Function(root.name, root.entry, returns=root.returns)
        for bs in keep:
            b = root.blocks[bs]
            f.blocks[bs] = BasicBlock(b.start, b.end, b.instrs, b.func, b.kind, [s for s in b.succs if s in keep],
                                      [q for q in b.preds if q in keep], b.call_target, b.table)
        f.calls = [(bs, c) for bs, c in root.calls if bs in keep]
        view = Program(self.image)
        view.functions = dict(self.functions)
        view.functions[root.entry] = f
        view.entries = dict(self.entries)
        view.flatten = set(self.flatten)
        view.recursion, view.recursive_scc = self.recursion, self.recursive_scc
        view.callgraph = self.callgraph.copy()
        for c in list(view.callgraph.successors(root.entry)):
            sites = [f.blocks[bs].last.addr for bs, cc in f.calls if cc == c]
            if sites:
                view.callgraph[root.entry][c]["sites"] = sites
            else:
                view.callgraph.remove_edge(root.entry, c)
        view.reindex()
        return view

    def name_of(self, addr: int) -> str:
        f = self.functions.get(addr)
        if f is not None:
            return f.name
        n = self.image.symbol_name_at(addr)
        return n or f"fn_{addr:x}"


# ---------------------------------------------------------------------------
# Symbolic straight-line evaluation (constants, jump tables)
# ---------------------------------------------------------------------------
# Expressions: ("c", v) constant, ("r", key) value of a register/symbol at the
# start of the evaluated code, ("ld", width, signed, addr), (op, a, b) for
# add/sub/and/or/xor/shl/shr/sra/ltu, ("sx32", a), ("?",) unknown.

UNKNOWN = ("?",)


def _c(v: int) -> tuple:
    return ("c", v & MASK64)


def _sx(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _binop(op: str, a: tuple, b: tuple) -> tuple:
    if a == UNKNOWN or b == UNKNOWN:
        return UNKNOWN
    if a[0] == "c" and b[0] == "c":
        return _c(_apply(op, a[1], b[1]))
    if op == "add":
        if a[0] == "c" and a[1] == 0:
            return b
        if b[0] == "c" and b[1] == 0:
            return a
    return (op, a, b)


def _apply(op: str, x: int, y: int) -> int:
    if op == "add":
        return x + y
    if op == "sub":
        return x - y
    if op == "and":
        return x & y
    if op == "or":
        return x | y
    if op == "xor":
        return x ^ y
    if op == "shl":
        return x << (y & 63)
    if op == "shr":
        return (x & MASK64) >> (y & 63)
    if op == "sra":
        return _sx(x, 64) >> (y & 63)
    if op == "ltu":
        return int((x & MASK64) < (y & MASK64))
    if op == "lt":
        return int(_sx(x, 64) < _sx(y, 64))
    raise AssertionError(op)


def _uses(e: tuple, acc: set) -> set:
    if e[0] == "r":
        acc.add(e[1])
    elif e[0] == "ld":
        _uses(e[3], acc)
    elif e[0] in ("c", "?"):
        pass
    else:
        for sub in e[1:]:
            if isinstance(sub, tuple):
                _uses(sub, acc)
    return acc


def _has_unknown(e: tuple) -> bool:
    if e == UNKNOWN:
        return True
    if e[0] == "ld":
        return _has_unknown(e[3])
    return any(isinstance(s, tuple) and _has_unknown(s) for s in e[1:])


def _replace(e: tuple, old: tuple, new: tuple) -> tuple:
    if e == old:
        return new
    if e[0] in ("c", "r", "?"):
        return e
    if e[0] == "ld":
        return ("ld", e[1], e[2], _replace(e[3], old, new))
    return (e[0],) + tuple(_replace(s, old, new) if isinstance(s, tuple) else s for s in e[1:])


def _only_low32(e: tuple, x: tuple) -> bool:
    """Does ``e`` use ``x`` only through its low 32 bits (``x << k`` with
    k >= 32, ``sext32(x)``, ``x & mask`` with mask < 2**32)?"""
    if e == x:
        return False
    if e[0] == "shl" and e[1] == x and e[2][0] == "c" and e[2][1] >= 32:
        return True
    if e[0] == "sx32" and e[1] == x:
        return True
    if e[0] == "and" and x in (e[1], e[2]):
        other = e[2] if e[1] == x else e[1]
        return other[0] == "c" and other[1] < (1 << 32)
    if e[0] in ("c", "r", "?"):
        return True
    if e[0] == "ld":
        return _only_low32(e[3], x)
    return all(_only_low32(sub, x) for sub in e[1:] if isinstance(sub, tuple))


def evaluate(e: tuple, env: dict, image: ElfImage, loads_readonly_only: bool = True) -> int:
    """Concrete value of ``e``; raises KeyError/ValueError when impossible."""
    k = e[0]
    if k == "c":
        return e[1]
    if k == "r":
        return env[e[1]] & MASK64
    if k == "?":
        raise ValueError("unknown")
    if k == "ld":
        addr = evaluate(e[3], env, image, loads_readonly_only)
        if loads_readonly_only and not image.is_readonly(addr):
            raise ValueError(f"load from writable memory at {addr:#x}")
        return image.read_int(addr, e[1], e[2]) & MASK64
    if k == "sx32":
        return _sx(evaluate(e[1], env, image, loads_readonly_only), 32) & MASK64
    return _apply(k, evaluate(e[1], env, image, loads_readonly_only),
                  evaluate(e[2], env, image, loads_readonly_only)) & MASK64


def _sx32(a: tuple) -> tuple:
    if a == UNKNOWN:
        return a
    if a[0] == "c":
        return _c(_sx(a[1], 32))
    if a[0] == "sx32":
        return a
    return ("sx32", a)


def sym_step(regs: dict[int, tuple], ins: Instr) -> None:
    """Update the symbolic register file ``regs`` (missing key r means
    ``("r", r)``) with the effect of ``ins``."""
    def get(r: int | None) -> tuple:
        if r is None or r == 0:
            return _c(0)
        return regs.get(r, ("r", r))

    m = ins.mnemonic
    rd = ins.rd
    val: tuple = UNKNOWN
    if not ins.writes:
        return
    if m == "lui":
        val = _c(ins.imm)
    elif m == "auipc":
        val = _c(ins.addr + ins.imm)
    elif m == "addi":
        val = _binop("add", get(ins.rs1), _c(ins.imm))
    elif m == "addiw":
        val = _sx32(_binop("add", get(ins.rs1), _c(ins.imm)))
    elif m == "add":
        val = _binop("add", get(ins.rs1), get(ins.rs2))
    elif m == "addw":
        val = _sx32(_binop("add", get(ins.rs1), get(ins.rs2)))
    elif m == "sub":
        val = _binop("sub", get(ins.rs1), get(ins.rs2))
    elif m == "slli":
        val = _binop("shl", get(ins.rs1), _c(ins.imm))
    elif m == "slliw":
        val = _sx32(_binop("shl", get(ins.rs1), _c(ins.imm)))
    elif m == "srli":
        val = _binop("shr", get(ins.rs1), _c(ins.imm))
    elif m == "srai":
        val = _binop("sra", get(ins.rs1), _c(ins.imm))
    elif m == "andi":
        val = _binop("and", get(ins.rs1), _c(ins.imm))
    elif m == "and":
        val = _binop("and", get(ins.rs1), get(ins.rs2))
    elif m == "ori":
        val = _binop("or", get(ins.rs1), _c(ins.imm))
    elif m == "or":
        val = _binop("or", get(ins.rs1), get(ins.rs2))
    elif m == "xori":
        val = _binop("xor", get(ins.rs1), _c(ins.imm))
    elif m == "sltiu":
        val = _binop("ltu", get(ins.rs1), _c(ins.imm))
    elif m == "sltu":
        val = _binop("ltu", get(ins.rs1), get(ins.rs2))
    elif ins.cls is InstrClass.LOAD:
        base = get(ins.rs1)
        val = UNKNOWN if base == UNKNOWN else ("ld", ins.mem_width, ins.mem_signed,
                                               _binop("add", base, _c(ins.imm)))
    elif ins.cls in (InstrClass.JAL, InstrClass.JALR):
        val = _c(ins.addr + ins.size)
    for w in ins.writes:
        regs[w] = val if w == rd else UNKNOWN


CALLER_SAVED = frozenset({1, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17, 28, 29, 30, 31})


def constant_registers(blocks: dict[int, BasicBlock], entry: int, image: ElfImage,
                       init_regs: dict[int, int] | None = None,
                       fold_readonly: bool = False) -> dict[int, dict[int, int]]:
    """Forward constant propagation over one function's blocks: for each block
    start, the registers holding a known constant on every path to it.  ``gp``
    is seeded with ``__global_pointer$`` when the image has one; calls clobber
    the caller-saved registers (standard ABI).  With ``fold_readonly`` a load
    from a known address in read-only data gives the constant stored there
    (e.g. the first character of a constant format string)."""
    init: dict[int, int] = dict(init_regs or {})
    if image.gp is not None:
        init[3] = image.gp
    state_in: dict[int, dict[int, int]] = {entry: init}
    order = _rpo(blocks, entry)
    changed = True
    rounds = 0
    while changed and rounds < 50:
        changed = False
        rounds += 1
        for s in order:
            if s not in state_in:
                continue
            b = blocks[s]
            regs = {r: _c(v) for r, v in state_in[s].items()}
            for ins in b.instrs:
                sym_step(regs, ins)
                if fold_readonly and ins.cls is InstrClass.LOAD and ins.rd and regs.get(ins.rd, UNKNOWN)[0] == "ld":
                    try:
                        regs[ins.rd] = _c(evaluate(regs[ins.rd], {}, image))
                    except (KeyError, ValueError):
                        pass
            out = {r: e[1] for r, e in regs.items() if e[0] == "c" and r != 0}
            if b.kind is Term.CALL:
                for r in CALLER_SAVED:
                    out.pop(r, None)
            for t in b.succs:
                old = state_in.get(t)
                if old is None:
                    state_in[t] = dict(out)
                    changed = True
                else:
                    new = {r: v for r, v in old.items() if out.get(r) == v}
                    if new != old:
                        state_in[t] = new
                        changed = True
    return state_in


def _rpo(blocks: dict[int, BasicBlock], entry: int) -> list[int]:
    seen: set[int] = set()
    post: list[int] = []
    stack = [(entry, iter(blocks[entry].succs))] if entry in blocks else []
    if stack:
        seen.add(entry)
    while stack:
        node, it = stack[-1]
        for s in it:
            if s not in seen and s in blocks:
                seen.add(s)
                stack.append((s, iter(blocks[s].succs)))
                break
        else:
            post.append(node)
            stack.pop()
    return post[::-1] + [s for s in blocks if s not in seen]


# ---------------------------------------------------------------------------
# CFG construction
# ---------------------------------------------------------------------------

_ENDS = (InstrClass.BRANCH, InstrClass.JAL, InstrClass.JALR, InstrClass.ECALL, InstrClass.EBREAK,
         InstrClass.SRET, InstrClass.MRET, InstrClass.WFI)


class _Builder:
    def __init__(self, prog: Program, noreturn: Iterable[str] = (), recursive: Iterable[str] = (),
                 calls: Iterable = ()) -> None:
        self.prog = prog
        self.image = prog.image
        self.building: list[int] = []
        self.noreturn = set(NORETURN_NAMES) | set(noreturn)
        self.recursive = set(recursive)        # functions with a [[recursion]] bound
        self.call_anns = list(calls)           # [[call]] annotations (annotations.CallTargets)

    # -- helpers ---------------------------------------------------------
    def _is_function_start(self, addr: int, cur: int) -> bool:
        if addr == cur:
            return False
        if addr in self.prog.functions:
            return True
        if addr in self.image.function_starts:
            size = self.image.symbol_size(cur)
            return not (size and cur <= addr < cur + size)
        return False

    def function(self, entry: int, name: str | None = None) -> Function:
        f = self.prog.functions.get(entry)
        if f is not None:
            return f
        if entry in self.building:
            names = [self.prog.name_of(a) for a in self.building[self.building.index(entry):]]
            if not self.recursive.intersection(n.split(".", 1)[0] for n in names):
                raise WcetError(f"recursion without a bound: {' -> '.join(names)} -> "
                                f"{names[0]}: add a [[recursion]] annotation (function = \"{names[0]}\", "
                                f"calls = N: the most activations of it per entry into the recursion)")
            # A call closing an annotated cycle: the callee is still being
            # built.  It is assumed to return (a path more, never one less);
            # build_program checks the cycle once the call graph is complete.
            return Function(self.prog.name_of(entry), entry, returns=True)
        if not self.image.is_code(entry):
            raise WcetError(f"call target {entry:#x} is not in an executable section")
        self.building.append(entry)
        try:
            f = self._build(entry, name or self.prog.name_of(entry))
        finally:
            self.building.pop()
        self.prog.functions[entry] = f
        for site_block, callee in f.calls:
            site = f.blocks[site_block].last.addr
            if self.prog.callgraph.has_edge(entry, callee):
                self.prog.callgraph[entry][callee]["sites"].append(site)
            else:
                self.prog.callgraph.add_edge(entry, callee, sites=[site])
        self.prog.callgraph.add_node(entry)
        return f

    def _callee_returns(self, target: int) -> bool:
        callee = self.function(target)
        if callee.name in self.noreturn:
            return False
        return callee.returns

    # -- per-function construction ----------------------------------------
    def _build(self, entry: int, name: str) -> Function:
        img = self.image
        leaders: set[int] = {entry}
        seen: set[int] = set()
        # per terminating instruction: (kind, succs, call_target, table)
        ends: dict[int, tuple[Term, list[int], int | None, list[int] | None]] = {}
        pending_indirect: set[int] = set()
        work = [entry]
        resolved: dict[int, tuple[Term, list[int], int | None, list[int] | None]] = {}

        def explore() -> None:
            while work:
                a = work.pop()
                while a not in seen:
                    ins = img.instr(a)
                    seen.add(a)
                    if ins.cls is InstrClass.ILLEGAL:
                        raise WcetError(f"illegal instruction at {img.describe(a)} "
                                        f"(raw {ins.raw:#x}) in {name}")
                    nxt = a + ins.size
                    if ins.cls not in _ENDS:
                        a = nxt
                        continue
                    end = self._classify(ins, entry, name, resolved)
                    if end is None:  # indirect, resolved later
                        pending_indirect.add(a)
                        ends[a] = (Term.HALT, [], None, None)
                        break
                    ends[a] = end
                    kind, succs, _ct, _tb = end
                    for s in succs:
                        leaders.add(s)
                        if s not in seen:
                            work.append(s)
                    if nxt in succs or kind in (Term.CALL, Term.ECALL, Term.WFI):
                        leaders.add(nxt)
                    break

        while True:
            explore()
            blocks = self._form_blocks(entry, seen, leaders, ends)
            progress = False
            for a in sorted(pending_indirect):
                blk = next(b for b in blocks.values() if b.last.addr == a)
                res = self._resolve_indirect(blk, blocks, entry, name)
                resolved[a] = res
                pending_indirect.discard(a)
                ends[a] = res
                for s in res[1]:
                    leaders.add(s)
                    if s not in seen:
                        work.append(s)
                    progress = True
                if res[0] is Term.CALL:
                    leaders.add(a + img.instr(a).size)
                progress = True
            if not progress:
                break
        f = Function(name=name, entry=entry, blocks=blocks)
        for b in blocks.values():
            if b.kind in (Term.CALL, Term.TAILCALL) and b.call_target is not None:
                f.calls.append((b.start, b.call_target))
        f.returns = self._returns(f)
        return f

    def _returns(self, f: Function) -> bool:
        for b in f.blocks.values():
            if b.kind is Term.RETURN:
                return True
            if b.kind is Term.TAILCALL and b.call_target is not None and self._callee_returns(b.call_target):
                return True
        return False

    def _classify(self, ins: Instr, entry: int, name: str, resolved: dict):
        a = ins.addr
        nxt = a + ins.size
        c = ins.cls
        if c is InstrClass.BRANCH:
            succs = [ins.target]
            if nxt != ins.target:
                succs.append(nxt)
            return (Term.BRANCH, succs, None, None)
        if c is InstrClass.JAL:
            tgt = ins.target
            if ins.rd == 0:
                if self._is_function_start(tgt, entry):
                    self.function(tgt)
                    return (Term.TAILCALL, [], tgt, None)
                return (Term.JUMP, [tgt], None, None)
            # call (links into ra/t0 or anything else)
            returns = self._callee_returns(tgt)
            return (Term.CALL, [nxt] if returns else [], tgt, None)
        if c is InstrClass.JALR:
            if a in resolved:
                return resolved[a]
            if ins.is_return:
                return (Term.RETURN, [], None, None)
            return None
        if c in (InstrClass.SRET, InstrClass.MRET):
            return (Term.TRAP_RETURN, [], None, None)
        if c is InstrClass.EBREAK:
            return (Term.HALT, [], None, None)
        if c is InstrClass.ECALL:
            return (Term.ECALL, [nxt], None, None)
        if c is InstrClass.WFI:
            return (Term.WFI, [nxt], None, None)
        raise AssertionError(c)

    def _form_blocks(self, entry: int, seen: set[int], leaders: set[int], ends: dict) -> dict[int, BasicBlock]:
        img = self.image
        blocks: dict[int, BasicBlock] = {}
        starts = sorted(a for a in leaders if a in seen)
        for s in starts:
            instrs = []
            a = s
            kind, succs, ct, tb = Term.FALLTHROUGH, [], None, None
            while True:
                ins = img.instr(a)
                instrs.append(ins)
                nxt = a + ins.size
                if a in ends:
                    kind, succs, ct, tb = ends[a]
                    break
                if nxt in leaders:
                    succs = [nxt]
                    break
                a = nxt
            blocks[s] = BasicBlock(s, instrs[-1].addr + instrs[-1].size, instrs, entry, kind, list(succs), [],
                                   ct, tb)
        for b in blocks.values():
            for s in b.succs:
                if s not in blocks:
                    raise WcetError(f"internal error: successor {s:#x} of block {b.start:#x} has no block")
                blocks[s].preds.append(b.start)
        return blocks

    # -- indirect jumps ---------------------------------------------------
    def _chain(self, blk: BasicBlock, blocks: dict[int, BasicBlock], depth: int = 4) -> list[BasicBlock]:
        chain = [blk]
        cur = blk
        while len(chain) < depth and len(cur.preds) == 1:
            p = blocks[cur.preds[0]]
            if p in chain:
                break
            chain.insert(0, p)
            cur = p
        return chain

    def _resolve_indirect(self, blk: BasicBlock, blocks: dict[int, BasicBlock], entry: int, name: str):
        img = self.image
        ins = blk.last
        where = f"{img.describe(ins.addr)} in {name}"
        chain = self._chain(blk, blocks)
        consts = constant_registers(blocks, entry, self.image).get(chain[0].start, {})
        regs: dict[int, tuple] = {r: _c(v) for r, v in consts.items()}
        branch_state: dict[int, tuple[dict, Instr]] = {}
        for b in chain:
            for i in b.instrs:
                if i is ins:
                    break
                if i is b.last and i.cls is InstrClass.BRANCH:
                    branch_state[b.start] = (dict(regs), i)
                sym_step(regs, i)
        tgt = _binop("add", regs.get(ins.rs1, ("r", ins.rs1)), _c(ins.imm))
        tgt = _binop("and", tgt, _c(~1))
        nxt = ins.addr + ins.size
        link = ins.rd not in (0, None)
        if not _has_unknown(tgt) and not _uses(tgt, set()):
            try:
                t = evaluate(tgt, {}, img)
            except (ValueError, KeyError, WcetError):
                t = None
            if t is not None:
                if link:
                    returns = self._callee_returns(t)
                    return (Term.CALL, [nxt] if returns else [], t, None)
                if self._is_function_start(t, entry):
                    self.function(t)
                    return (Term.TAILCALL, [], t, None)
                return (Term.JUMP, [t], None, None)
        if link:
            t = self._annotated_target(ins.addr, name, where)
            if t is None:
                raise WcetError(f"indirect call through {reg_name(ins.rs1)} at {where}: function pointer "
                                f"with no static target: add a [[call]] annotation (address = {ins.addr:#x}, "
                                f"targets = [\"FUNCTION\"])")
            returns = self._callee_returns(t)
            return (Term.CALL, [nxt] if returns else [], t, None)
        # switch: one index register bounded by the guarding unsigned compare
        table = self._switch(blk, blocks, chain, branch_state, tgt)
        if table is None:
            # the table address computed before the chain (bitcount: scaled
            # in the outer loop, checked in the inner one): its definition
            tgt2 = self._earlier_definitions(tgt, blocks, chain[0], entry, consts)
            if tgt2 is not tgt:
                table = self._switch(blk, blocks, chain, branch_state, tgt2)
        if table is None:
            table = self._masked_switch(tgt)
        if table is None:
            raise WcetError(f"unresolved indirect jump through {reg_name(ins.rs1)} at {where}")
        for t in table:
            if not img.is_code(t):
                raise WcetError(f"jump table at {where} has target {t:#x} outside code")
        return (Term.SWITCH, sorted(set(table)), None, table)

    def _earlier_definitions(self, tgt: tuple, blocks: dict[int, BasicBlock], start: BasicBlock, entry: int,
                             consts: dict[int, int]) -> tuple:
        """``tgt`` (over register values at ``start``) with each register
        written by exactly one instruction D of the function replaced by D's
        expression, where D's block dominates ``start`` and D's operands are
        written on no path from D to ``start``: the register then still
        holds D's value of the same operands (constants where known)."""
        used = _uses(tgt, set())
        regs_used = {r for r in used if isinstance(r, int) and r not in consts and r != 0}
        if not regs_used:
            return tgt
        g = nx.DiGraph()
        for b in blocks.values():
            g.add_node(b.start)
            g.add_edges_from((b.start, t) for t in b.succs)
        idom = nx.immediate_dominators(g, entry)
        before = nx.ancestors(g, start.start) | {start.start}      # writes elsewhere never reach start
        out = tgt
        for r in sorted(regs_used):
            defs = [(b, i) for b in blocks.values() if b.start in before
                    for i, ins in enumerate(b.instrs) if r in ins.writes]
            if not defs or len({b.start for b, _i in defs}) != 1:
                continue
            db, di = defs[-1]
            if db.start == start.start or any(i.cls in (InstrClass.JAL, InstrClass.JALR) and i.rd not in (0, None)
                                              for i in db.instrs[:di]):
                continue
            # db dominates start
            n, dom = start.start, False
            while n in idom:
                if n == db.start:
                    dom = True
                    break
                if idom[n] == n:
                    break
                n = idom[n]
            if not dom:
                continue
            e_regs: dict[int, tuple] = {}
            for ins in db.instrs[:di + 1]:
                sym_step(e_regs, ins)
            e = e_regs.get(r)
            if e is None or _has_unknown(e):
                continue
            # operands: values at db's start, which must still hold at start
            ops = {x for x in _uses(e, set()) if isinstance(x, int)}
            # paths from db to start that do not pass db again (which recomputes r)
            g2 = g.copy()
            g2.remove_node(db.start)
            on_path = nx.ancestors(g2, start.start) if start.start in g2 else set()
            if r in ops or not self._unwritten(ops, blocks, db, start, on_path):
                continue
            for x in ops:
                if x in consts:
                    e = _replace(e, ("r", x), _c(consts[x]))
            out = _replace(out, ("r", r), e)
        return out

    @staticmethod
    def _unwritten(regs: set[int], blocks: dict[int, BasicBlock], db: BasicBlock, start: BasicBlock,
                   on_path: set[int]) -> bool:
        """No instruction of ``db`` or on a path from it to the start of
        ``start`` (through the blocks ``on_path``) writes one of ``regs``
        (calls clobber the caller-saved ones)."""
        def clean(ins) -> bool:
            if ins.cls in (InstrClass.JAL, InstrClass.JALR) and ins.rd not in (0, None):
                return not (regs - {8, 9, *range(18, 28), 2})
            return not (regs & set(ins.writes))
        if not all(clean(i) for i in db.instrs):
            return False
        seen: set[int] = {db.start}
        work = list(db.succs)
        while work:
            a = work.pop()
            if a in seen or a == start.start or a not in on_path:
                continue
            seen.add(a)
            b = blocks[a]
            if not all(clean(i) for i in b.instrs):
                return False
            work.extend(b.succs)
        return True

    def _annotated_target(self, addr: int, fname: str, where: str) -> int | None:
        """The target a ``[[call]]`` annotation gives the indirect call at
        ``addr`` (in function ``fname``), or None if none matches."""
        from kairos.wcet.anchors import SourceText
        li = self.image.line_of(addr)
        for ct in self.call_anns:
            if ct.address is not None and ct.address != addr:
                continue
            if ct.function is not None and ct.function != fname:
                continue
            if ct.line is not None and (li is None or li[1] != ct.line or
                                        not (li[0] == ct.file or li[0].endswith("/" + ct.file))):
                continue
            if ct.source is not None:
                text = SourceText(self.image).line(*li) if li is not None else None
                if text is None or ct.source not in text:
                    continue
            addrs = []
            for tn in ct.targets:
                try:
                    ta = self.image.symbol(tn).addr
                except WcetError:
                    raise WcetError(f"{ct.origin}: target {tn} is not a symbol of the program") from None
                if ta not in self.image.function_starts or not self.image.is_code(ta):
                    raise WcetError(f"{ct.origin}: target {tn} is not a function")
                addrs.append(ta)
            ct.used = True
            if len(set(addrs)) > 1:
                # One call block has one callee in this CFG model (a site with
                # several would need one call context per target).
                raise WcetError(f"{ct.origin}: indirect call at {where} with {len(set(addrs))} targets: "
                                f"only one target per call site is supported yet")
            return addrs[0]
        return None

    def _masked_switch(self, tgt) -> list[int] | None:
        """A jump table indexed by ``x & (2^k - 1)`` (``switch (n % 8)``
        compiled without a bounds check: the mask bounds the index to
        0 .. 2^k - 1, every case present): the targets of all indices."""
        for sub in _masks(tgt, []):
            m = sub[2][1]
            if m <= 0 or m & (m + 1) or m >= MAX_SWITCH_ENTRIES:
                continue
            key = ("r", "__switch_index__")
            t2 = _replace(tgt, sub, key)
            if _has_unknown(t2) or _uses(t2, set()) != {"__switch_index__"}:
                continue
            out = []
            for i in range(m + 1):
                try:
                    out.append(evaluate(t2, {"__switch_index__": i}, self.image))
                except (ValueError, KeyError, WcetError):
                    return None
            return out
        return None

    def _switch(self, blk, blocks, chain, branch_state, tgt) -> list[int] | None:
        img = self.image
        # the guard: the block before blk in the chain (unique predecessor) or,
        # failing that, every predecessor must bound the same index expression
        guards = []
        if len(chain) >= 2:
            guards = [chain[-2]]
        else:
            return None
        g = guards[0]
        if g.start not in branch_state:
            return None
        _regs, br = branch_state[g.start]

        def get(r):
            if r == 0:
                return _c(0)
            return _regs.get(r, ("r", r))

        a, b = get(br.rs1), get(br.rs2)
        taken = blk.start == br.target and blk.start != br.next_addr
        idx = None
        limit = None
        m = br.mnemonic
        # forms: idx <u N  ->  entries 0..N-1;   idx <=u N -> 0..N
        if m in ("bltu", "bgeu"):
            # bltu a,b: taken if a<b ; bgeu a,b: taken if a>=b
            lt_holds = (m == "bltu") == taken  # whether "a < b" holds on the path to blk
            if lt_holds and b[0] == "c":
                idx, limit = a, b[1]            # a < N
            elif not lt_holds and a[0] == "c":
                idx, limit = b, a[1] + 1        # a >= b, i.e. idx <= N
        elif m in ("beq", "bne") and b == _c(0) and a[0] == "ltu" and a[2][0] == "c":
            # sltiu t, idx, N ; beqz/bnez t
            holds = (m == "bne") == taken
            if holds:
                idx, limit = a[1], a[2][1]
        if idx is None or limit is None or limit <= 0 or limit > MAX_SWITCH_ENTRIES:
            return None
        key = ("r", "__switch_index__")
        t2 = _replace(tgt, idx, key)
        if (_has_unknown(t2) or _uses(t2, set()) != {"__switch_index__"}) and idx[0] == "sx32" \
                and _only_low32(tgt, idx[1]):
            # the guard tests sext32(x) but the table is indexed with x's low
            # 32 bits (zero-extended): same values for 0 <= index < limit
            t2 = _replace(tgt, idx[1], key)
        if _has_unknown(t2) or _uses(t2, set()) != {"__switch_index__"}:
            return None
        out = []
        for i in range(limit):
            try:
                out.append(evaluate(t2, {"__switch_index__": i}, img))
            except (ValueError, KeyError, WcetError):
                return None
        return out


def _masks(e: tuple, acc: list) -> list:
    """The subexpressions ``x & m`` of ``e`` with a constant ``m``."""
    if e[0] in ("c", "r", "?"):
        return acc
    if e[0] == "ld":
        return _masks(e[3], acc)
    if e[0] == "and" and isinstance(e[2], tuple) and e[2][0] == "c":
        acc.append(e)
    for sub in e[1:]:
        if isinstance(sub, tuple):
            _masks(sub, acc)
    return acc


def build_program(image: ElfImage, entries: Iterable[str], noreturn: Iterable[str] = (),
                  progress=None, recursion: Iterable = (), calls: Iterable = ()) -> Program:
    """Build CFGs for everything reachable from the named entry symbols.
    ``recursion``: ``[[recursion]]`` bounds (``annotations.RecursionBound``),
    ``calls``: ``[[call]]`` targets of indirect calls (``CallTargets``)."""
    prog = Program(image)
    recursion = list(recursion)
    b = _Builder(prog, noreturn, [r.function for r in recursion], calls)
    for name in entries:
        sym = image.symbol(name)
        if not image.is_code(sym.addr):
            raise WcetError(f"entry {name} ({sym.addr:#x}) is not in an executable section")
        prog.entries[name] = sym.addr
        b.function(sym.addr, name if sym.addr not in prog.functions else None)
        if progress is not None:
            progress(name)
    _recursion(prog, recursion)
    prog.reindex()
    return prog


def _recursion(prog: Program, bounds: list) -> None:
    """Check the call graph's cycles against the ``[[recursion]]`` bounds and
    give every function of a recursion one shared context (the context
    graph stays finite; ``ipet`` bounds the shared context's entries by the
    annotation).  Every cycle must pass through a bounded function: else the
    calls around the others would have no bound."""
    by_name = {}
    for r in bounds:
        by_name.setdefault(r.function, []).append(r)
    for scc in nx.strongly_connected_components(prog.callgraph):
        fe0 = next(iter(scc))
        if len(scc) == 1 and not prog.callgraph.has_edge(fe0, fe0):
            continue
        # a bound on f also covers gcc's clones of it (f.part.0, f.constprop.0, f.isra.0)
        base = {fe: prog.functions[fe].name.split(".", 1)[0] for fe in scc}
        bounded = {fe for fe in scc if base[fe] in by_name}
        rest = prog.callgraph.subgraph(scc - bounded)
        if not nx.is_directed_acyclic_graph(rest):
            cyc = [u for u, _v in nx.find_cycle(rest)]
            names = [prog.functions[a].name for a in cyc]
            raise WcetError(f"recursion without a bound: {' -> '.join(names + names[:1])}: add a "
                            f"[[recursion]] annotation (function = \"{names[0]}\", calls = N)")
        for fe in bounded:
            rs = by_name[base[fe]]
            for r in rs:
                r.used = True
            prog.recursion[fe] = min(r.calls for r in rs)
        for fe in scc:
            prog.recursive_scc[fe] = frozenset(scc)
        prog.flatten |= scc


def build_program_from_file(path: str, entries: Iterable[str], noreturn: Iterable[str] = ()) -> Program:
    return build_program(ElfImage(path), entries, noreturn)
