"""Annotation files: loop bounds and facts the analyser cannot find itself.

Format (TOML, parsed with ``tomllib``; top-level keys come before the first
``[[loop]]``, which would otherwise own them)::

    noreturn = ["panic"]           # functions that never return
    preemption = ["preemption_point"]  # preemption-point functions:
                                   # a loop whose every iteration calls one is
                                   # bounded by 1 (interrupt assumed pending,
                                   # so the first poll ends the operation)

    [constants]                    # symbols whose value is fixed at run time
    num_cpus = 1                   # (value of the 8-byte word at the symbol)

    # Each [[loop]] bounds one loop.  Identify it by address or by source line.
    [[loop]]
    function = "clear_page"        # function containing the loop
    line = "kernel/mm.c:88"        # a source line inside the loop (DWARF)
    max = 512                      # see below

    [[loop]]
    function = "reply_error"       # function alone: it must contain exactly
    max = 6                        # one loop (robust against line changes)

    [[loop]]                       # anchors that survive edits elsewhere:
    function = "copy_words"        # the 2nd loop of copy_words in source
    loop = 2                       # order, whose own source lines include
    source = "i < n_words"         # this text (either or both; both must agree)
    max = "msg_max_length + 1"     # an expression over [parameters]

    [[loop]]                       # a bound the solver derives from a fact:
    function = "merge_overlapping" # it proves "header <= X + c" for the value
    loop = 1                       # X the loop starts from, given X <= the
    parameter = "max_refills"      # parameter; `of` must occur in the source
    of = "refill_count"            # line that computes X
    least = 1                      # optional: and X >= 1 (an invariant of the
                                   # system, like the parameter itself)

    [[loop]]
    address = 0x80201a3c           # any instruction address inside the loop
    max = 16
    context = ["handle_syscall"]   # optional: only when reached through these
                                   # functions (in this order, as a subsequence
                                   # of the call chain from the entry)
    note = "free text"

    [parameters]                   # system parameters, before the first [[loop]]
    queue_length = { default = 64, note = "threads per queue" }
    max_refills = { default = 8, define = "CONFIG_MAX_REFILLS" }  # `define`:
                                   # the kernel macro with the same value
                                   # (checked against the headers by a test)
    extra_caps = { default = 3, define = "MSG_MAX_EXTRA_CAPS", fixed = true }
                                   # `fixed`: a constant of the kernel that
                                   # loop bounds use, not a system parameter

    [[loop]]
    function = "tqueue_insert"
    max = "queue_length + 1"       # over parameters: + - * //, heap_depth(n, arity)

    [[loop]]
    function = "lookup"
    max = "depth"
    limit = true                   # a system limit below the code's own: also
                                   # applies where an automatic bound exists

    [[object]]                     # a trusted fact about where accesses stay:
    functions = ["merge_overlapping"]  # in these functions, every access
    argument = 1                   # through argument 1 (a0) plus an index
    size = "96 + 16 * max_refills" # touches bytes [0, size) of its object
    align = 128                    # optional: the argument is a multiple of it
    note = "why (a proof)"         # (docs/wcet.md "Data addresses")

    [[pointer]]                    # a trusted fact about loaded pointers:
    fields = ["tcb.queue_next"]    # these pointer members hold NULL or a
    align = 2048                   # multiple of align; 8-byte loads of them
    functions = ["tqueue_insert"]  # (optional: only in these functions)
    note = "why (objects are naturally aligned)"

``max`` is the maximum number of executions of the loop *header* per entry
into the loop: for ``for (i = 0; i < n; i++)`` compiled with the test at the
bottom (gcc's usual form) that is ``n``; with the test at the top it is
``n + 1``.  When unsure, give ``n + 1``: an over-estimate is safe.

A loop that no annotation names may be bounded by a ``loopbound`` pragma
before its statement in the C source (``sourcebounds``: ``max`` body
iterations give ``max + 1`` header executions), checked like an
annotation; ``Annotations.source_bounds = False`` turns that off.

Annotations are used where the analyser finds no bound itself (an automatic
bound is proven, and an annotation may be meant for another call site of the
same code).  If several annotations match a loop in a context, the smallest
``max`` wins (each is a claimed upper bound).  An annotation that matches no analysed loop
is reported as a warning (it may refer to code that changed, or to code not
reached from the analysed entries).

Parameters are the system's own limits that the kernel does not fix (threads
per queue, refills per scheduling context ...): ``parse``/``load`` take values
for them (``kairos latency --param name=value``), otherwise the declared
default is used.
"""

from __future__ import annotations

import ast
import os
import re
import tomllib
from dataclasses import dataclass, field

from kairos.wcet.errors import WcetError


@dataclass
class LoopAnnotation:
    max: int | None                # None: bounded from `parameter` by the solver
    origin: str
    function: str | None = None
    address: int | None = None
    file: str | None = None
    line: int | None = None
    context: tuple[str, ...] = ()
    note: str = ""
    used: bool = False
    index: int | None = None        # `loop = N`: N-th loop of the function in source order
    source: str | None = None       # text on one of the loop's own source lines
    parameter: str | None = None    # name in [parameters] bounding the loop's start value
    parameter_value: int | None = None
    of: str | None = None           # identifier on the line computing that value
    least: int = 0                  # `least = N`: that value is also at least N (a stated invariant)
    path: str = ""                  # the annotation file
    limit: bool = False            # applies even where an automatic bound exists
    expression: str | None = None  # the parameter expression max came from
    pragma: str | None = None      # "file.c:LINE" of the loopbound pragma it stands for (sourcebounds)

    def describe(self) -> str:
        where = []
        if self.function:
            where.append(self.function)
        if self.index is not None:
            where.append(f"loop {self.index}")
        if self.source is not None:
            where.append(f"source {self.source!r}")
        if self.address is not None:
            where.append(f"{self.address:#x}")
        if self.file:
            where.append(f"{self.file}:{self.line}")
        return f"{self.origin} ({' '.join(where)})"

    def place(self) -> str:
        """``FILE: loop #N (function ...)`` for error messages."""
        if self.pragma is not None:
            return f"{self.pragma}: loopbound pragma"
        return f"{self.path or self.origin.split(' ')[0]}: {self.describe().split(' ', 1)[1]}"


@dataclass
class ObjectFact:
    """``[[object]]``: in each of ``functions``, every access through an
    address computed as argument ``argument`` (1 = a0) plus an index touches
    bytes ``[0, size)`` of the object that argument points to.  A trusted
    fact (the binary cannot show it), reported as such; ``note`` says why
    it holds."""

    functions: tuple[str, ...]
    argument: int
    size: int
    origin: str
    note: str = ""
    expression: str | None = None
    align: int = 1                 # the argument is a multiple of this (a power of two)

    @property
    def register(self) -> int:
        return 9 + self.argument           # a0 = x10

    def describe(self) -> str:
        size = f"{self.expression} = {self.size}" if self.expression else str(self.size)
        aligned = f", which is {self.align}-byte aligned" if self.align > 1 else ""
        return (f"{self.origin}: indexed accesses from argument {self.argument} of "
                f"{', '.join(self.functions)} stay within its first {size} bytes{aligned}")


@dataclass
class PointerFact:
    """``[[pointer]]``: each of ``fields`` (``"struct.member"``, a pointer
    member by its DWARF name) and each of ``variables`` (a pointer
    variable's symbol) holds NULL or the address of an object that is a
    multiple of ``align``; so does every 8-byte load of that member (in
    ``functions``, or anywhere when empty) whose source line names the
    member, and every 8-byte load of exactly that variable's address.  A
    trusted fact, reported as such; ``note`` says why.

    With ``flags`` (a mask below ``align``), each field is an 8-byte word
    (a pointer or an integer) holding such an address with flag bits in
    ``flags``: the word itself is only known once masked, ``word & c`` for
    a constant ``c`` that clears every flag bit.  A field may name a
    member of a nested structure (``"cte.mdb.next"``)."""

    fields: tuple[str, ...]
    align: int
    origin: str
    functions: tuple[str, ...] = ()
    note: str = ""
    variables: tuple[str, ...] = ()   # pointer variables (symbols), every load of them
    flags: int | None = None          # low flag bits of a word holding the pointer

    def describe(self) -> str:
        where = f" (loads in {', '.join(self.functions)})" if self.functions else ""
        what = f" with flag bits {self.flags:#x}" if self.flags else ""
        return (f"{self.origin}: {', '.join(self.fields + self.variables)} hold NULL or a pointer to a "
                f"{self.align}-byte aligned object{what}{where}")


@dataclass
class RecursionBound:
    """``[[recursion]]``: at most ``calls`` activations of ``function`` per
    entry into its recursion (a call into the cycle's functions from outside
    them), the outermost one included: TACLeBench's ``flowrestriction
    1*f <= N*marker`` with the marker on the call from outside."""
    function: str
    calls: int
    origin: str
    note: str = ""
    used: bool = False


@dataclass
class CallTargets:
    """``[[call]]``: the possible targets of an indirect call, the ``jalr``
    given by ``address``, or by ``function`` with ``line``/``source`` (or
    alone: its only indirect call)."""
    targets: tuple[str, ...]
    origin: str
    function: str | None = None
    address: int | None = None
    file: str | None = None
    line: int | None = None
    source: str | None = None
    note: str = ""
    used: bool = False


@dataclass
class Annotations:
    loops: list[LoopAnnotation] = field(default_factory=list)
    recursion: list[RecursionBound] = field(default_factory=list)
    calls: list[CallTargets] = field(default_factory=list)
    objects: list[ObjectFact] = field(default_factory=list)
    pointers: list[PointerFact] = field(default_factory=list)
    noreturn: set[str] = field(default_factory=set)
    preemption: set[str] = field(default_factory=set)
    constants: dict[str, int] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)
    parameters: dict[str, "Parameter"] = field(default_factory=dict)
    #: read ``loopbound`` pragmas from the C sources (``sourcebounds``) for
    #: loops no [[loop]] annotation names; ``source_dirs``: where a moved
    #: source tree now is (``--source-dir``)
    source_bounds: bool = True
    source_dirs: list[str] = field(default_factory=list)

    def merge(self, other: "Annotations") -> None:
        self.parameters.update(other.parameters)
        self.loops.extend(other.loops)
        self.recursion.extend(other.recursion)
        self.calls.extend(other.calls)
        self.objects.extend(other.objects)
        self.pointers.extend(other.pointers)
        self.noreturn |= other.noreturn
        self.preemption |= other.preemption
        self.constants.update(other.constants)
        self.paths.extend(other.paths)


@dataclass
class Parameter:
    name: str
    default: int
    value: int
    note: str = ""
    define: str | None = None      # C macro that must have the same value
    fixed: bool = False            # a kernel constant: no --param may change it


_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.FloorDiv: lambda a, b: a // b}


def heap_depth(n: int, arity: int) -> int:
    """Levels below the root of an ``arity``-ary heap of ``n`` entries: the
    level of its last entry (0 for one entry or none).  A sift moves an
    entry at most that many levels."""
    depth, start, width = 0, 1, arity
    while n > start:            # entries 0 .. start - 1 are on levels 0 .. depth
        depth += 1
        start += width
        width *= arity
    return depth


_WHAT = "an expression over parameters (+ - * //, heap_depth(n, arity))"


def evaluate(expr: str, params: dict[str, int], origin: str) -> int:
    """Value of an integer expression over parameter names (+ - * //, and
    ``heap_depth(n, arity)``)."""
    def ev(n: ast.AST) -> int:
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.Name):
            if n.id not in params:
                raise WcetError(f"{origin}: unknown parameter {n.id!r} in {expr!r}")
            return params[n.id]
        if isinstance(n, ast.BinOp) and type(n.op) in _OPS:
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.FloorDiv) and b == 0:
                raise WcetError(f"{origin}: division by zero in {expr!r}")
            return _OPS[type(n.op)](a, b)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "heap_depth" and \
                not n.keywords:
            if len(n.args) != 2:
                raise WcetError(f"{origin}: heap_depth takes 2 arguments, in {expr!r}")
            entries, arity = ev(n.args[0]), ev(n.args[1])
            if arity < 2:
                raise WcetError(f"{origin}: heap_depth's arity must be at least 2, in {expr!r}")
            return heap_depth(entries, arity)
        raise WcetError(f"{origin}: {expr!r} is not {_WHAT}")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise WcetError(f"{origin}: {expr!r} is not {_WHAT}") from None
    return ev(tree)


def _parameters(data: dict, path: str, given: dict[str, int]) -> dict[str, Parameter]:
    table = data.get("parameters", {})
    if not isinstance(table, dict):
        raise WcetError(f"{path}: [parameters] must be a table")
    out: dict[str, Parameter] = {}
    for name, ent in table.items():
        origin = f"{os.path.basename(path)} parameter {name}"
        if not name.isidentifier():
            raise WcetError(f"{origin}: the name must be an identifier")
        if not isinstance(ent, dict) or "default" not in ent or set(ent) - {"default", "note", "define", "fixed"}:
            raise WcetError(f"{origin}: expected {{ default = N, note = \"...\", define = \"MACRO\", fixed = BOOL }}")
        default = _int(ent["default"], "default", origin)
        fixed = ent.get("fixed", False)
        if not isinstance(fixed, bool):
            raise WcetError(f"{origin}: fixed must be true or false")
        if fixed and name in given and given[name] != default:
            raise WcetError(f"{origin}: a constant of the kernel (fixed = true), not a system parameter: "
                            f"it is {default}")
        value = given.get(name, default)
        if default < 0 or value < 0:
            raise WcetError(f"{origin}: must be >= 0")
        define = ent.get("define")
        if define is not None and (not isinstance(define, str) or not define.isidentifier()):
            raise WcetError(f"{origin}: define must be the name of a C macro")
        out[name] = Parameter(name, default, value, str(ent.get("note", "")), define, fixed)
    return out


def _file_line(v, origin: str) -> tuple[str, int]:
    """An anchor's ``line = "file.c:NUMBER"``, split."""
    if not isinstance(v, str) or ":" not in v:
        raise WcetError(f"{origin}: line must be \"file.c:NUMBER\", got {v!r}")
    f, _, n = v.rpartition(":")
    return f, _int(n, "line number", origin)


def _int(v, what: str, origin: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise WcetError(f"{origin}: {what} must be an integer, got {v!r}")
    if isinstance(v, str):
        try:
            return int(v, 0)
        except ValueError:
            raise WcetError(f"{origin}: {what} must be an integer, got {v!r}") from None
    return v


def parse(text: str, path: str = "<annotations>", params: dict[str, int] | None = None) -> Annotations:
    """Parse an annotation file; ``params`` gives values to its declared
    parameters (names it does not declare are ignored here: the caller checks
    them against all files)."""
    base = os.path.basename(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise WcetError(f"{path}: invalid TOML: {exc}") from None
    ann = Annotations(paths=[path])
    ann.parameters = _parameters(data, path, params or {})
    values = {n: p.value for n, p in ann.parameters.items()}
    known = {"loop", "noreturn", "constants", "preemption", "parameters", "object", "pointer", "recursion",
             "call"}
    for k in data:
        if k not in known:
            raise WcetError(f"{path}: unknown key {k!r} (expected one of {', '.join(sorted(known))})")
    loops = data.get("loop", [])
    if not isinstance(loops, list):
        raise WcetError(f"{path}: 'loop' must be an array of tables ([[loop]])")
    for i, ent in enumerate(loops, 1):
        origin = f"{base} loop #{i}"
        if not isinstance(ent, dict):
            raise WcetError(f"{origin}: must be a table")
        extra = set(ent) - {"function", "address", "line", "max", "context", "note", "limit", "loop", "source",
                            "parameter", "of", "least"}
        if extra:
            raise WcetError(f"{origin}: unknown field(s) {', '.join(sorted(extra))}")
        if "max" not in ent and "parameter" not in ent:
            raise WcetError(f"{origin}: missing 'max' (or 'parameter')")
        expression = None
        mx: int | None = None
        if "max" not in ent:
            pass
        elif isinstance(ent["max"], str) and not ent["max"].strip().lstrip("-").isdigit() \
                and not ent["max"].strip().lower().startswith("0x"):
            expression = ent["max"]
            mx = evaluate(expression, values, origin)
        else:
            mx = _int(ent["max"], "max", origin)
        if mx is not None and mx < 1:
            raise WcetError(f"{origin}: max must be >= 1 (header executions per loop entry)"
                            + (f"; {expression!r} gives {mx}" if expression else ""))
        if not isinstance(ent.get("limit", False), bool):
            raise WcetError(f"{origin}: limit must be true or false")
        la = LoopAnnotation(max=mx, origin=origin, note=str(ent.get("note", "")),
                            limit=bool(ent.get("limit", False)), expression=expression, path=path)
        if "parameter" in ent:
            pn = ent["parameter"]
            if not isinstance(pn, str) or pn not in ann.parameters:
                raise WcetError(f"{origin}: parameter {pn!r} is not in [parameters]")
            la.parameter, la.parameter_value = pn, ann.parameters[pn].value
            if "of" in ent:
                if not isinstance(ent["of"], str) or not ent["of"].strip():
                    raise WcetError(f"{origin}: of must be an identifier")
                la.of = ent["of"].strip()
            if "least" in ent:
                la.least = _int(ent["least"], "least", origin)
                if not 0 <= la.least <= la.parameter_value:
                    raise WcetError(f"{origin}: least = {la.least} must lie between 0 and "
                                    f"{pn} = {la.parameter_value}")
        elif "of" in ent or "least" in ent:
            raise WcetError(f"{origin}: '{'of' if 'of' in ent else 'least'}' needs 'parameter'")
        if "loop" in ent:
            la.index = _int(ent["loop"], "loop", origin)
            if la.index < 1:
                raise WcetError(f"{origin}: loop must be >= 1 (the N-th loop of the function in source order)")
        if "source" in ent:
            if not isinstance(ent["source"], str) or not ent["source"].strip():
                raise WcetError(f"{origin}: source must be a non-empty text from the loop's source line")
            la.source = ent["source"].strip()
        if (la.index is not None or la.source is not None) and "function" not in ent:
            raise WcetError(f"{origin}: 'loop' and 'source' also need 'function'")
        if "function" in ent:
            if not isinstance(ent["function"], str):
                raise WcetError(f"{origin}: function must be a string")
            la.function = ent["function"]
        if "address" in ent:
            la.address = _int(ent["address"], "address", origin)
        if "line" in ent:
            la.file, la.line = _file_line(ent["line"], origin)
            if la.function is None and not la.limit:
                raise WcetError(f"{origin}: a loop given by line also needs 'function' (or limit = true: "
                                f"a system limit for that line wherever it is inlined)")
        if la.address is None and la.line is None and la.function is None:
            raise WcetError(f"{origin}: give 'address', 'function' + 'line', or 'function' alone "
                            f"(for a function with a single loop)")
        ctx = ent.get("context", [])
        if not isinstance(ctx, list) or not all(isinstance(c, str) for c in ctx):
            raise WcetError(f"{origin}: context must be a list of function names")
        la.context = tuple(ctx)
        ann.loops.append(la)
    ann.objects = _objects(data, path, values)
    ann.recursion = _recursion(data, path, values)
    ann.calls = _calls(data, path)
    ann.pointers = _pointers(data, path)
    nr = data.get("noreturn", [])
    if not isinstance(nr, list) or not all(isinstance(x, str) for x in nr):
        raise WcetError(f"{path}: noreturn must be a list of function names")
    ann.noreturn = set(nr)
    pp = data.get("preemption", [])
    if not isinstance(pp, list) or not all(isinstance(x, str) for x in pp):
        raise WcetError(f"{path}: preemption must be a list of function names")
    ann.preemption = set(pp)
    consts = data.get("constants", {})
    if not isinstance(consts, dict):
        raise WcetError(f"{path}: [constants] must be a table")
    for k, v in consts.items():
        ann.constants[k] = _int(v, f"constant {k}", base)
    return ann


def _fact_tables(data: dict, path: str, key: str, allowed: set[str]):
    """(origin, table) for each ``[[key]]`` table, after the checks every
    fact kind shares: an array of tables with no unknown field."""
    ents = data.get(key, [])
    if not isinstance(ents, list):
        raise WcetError(f"{path}: '{key}' must be an array of tables ([[{key}]])")
    for i, ent in enumerate(ents, 1):
        origin = f"{os.path.basename(path)} {key} #{i}"
        if not isinstance(ent, dict):
            raise WcetError(f"{origin}: must be a table")
        extra = set(ent) - allowed
        if extra:
            raise WcetError(f"{origin}: unknown field(s) {', '.join(sorted(extra))}")
        yield origin, ent


def _objects(data: dict, path: str, values: dict[str, int]) -> list[ObjectFact]:
    out = []
    for origin, ent in _fact_tables(data, path, "object", {"functions", "argument", "size", "note", "align"}):
        missing = {"functions", "argument", "size"} - set(ent)
        if missing:
            raise WcetError(f"{origin}: missing {', '.join(sorted(missing))}")
        fns = ent["functions"]
        if not isinstance(fns, list) or not fns or not all(isinstance(x, str) and x for x in fns):
            raise WcetError(f"{origin}: functions must be a non-empty list of function names")
        arg = _int(ent["argument"], "argument", origin)
        if not 1 <= arg <= 8:
            raise WcetError(f"{origin}: argument must be 1..8 (the n-th integer argument, in a0..a7)")
        expression = None
        if isinstance(ent["size"], str) and not ent["size"].strip().isdigit() \
                and not ent["size"].strip().lower().startswith("0x"):
            expression = ent["size"]
            size = evaluate(expression, values, origin)
        else:
            size = _int(ent["size"], "size", origin)
        if size < 1:
            raise WcetError(f"{origin}: size must be >= 1")
        align = _int(ent.get("align", 1), "align", origin)
        if align < 1 or align & (align - 1):
            raise WcetError(f"{origin}: align must be a power of two")
        out.append(ObjectFact(tuple(fns), arg, size, origin, str(ent.get("note", "")), expression, align))
    return out


def _recursion(data: dict, path: str, values: dict[str, int]) -> list[RecursionBound]:
    out = []
    for origin, ent in _fact_tables(data, path, "recursion", {"function", "calls", "note"}):
        if not isinstance(ent.get("function"), str) or not ent["function"]:
            raise WcetError(f"{origin}: needs function = \"NAME\" (a function of the recursion)")
        if "calls" not in ent:
            raise WcetError(f"{origin}: needs calls = N (the most activations of {ent['function']} "
                            f"per entry into its recursion)")
        c = ent["calls"]
        n = evaluate(c, values, origin) if isinstance(c, str) and not c.strip().isdigit() \
            else _int(c, "calls", origin)
        if n < 1:
            raise WcetError(f"{origin}: calls must be >= 1")
        out.append(RecursionBound(ent["function"], n, origin, str(ent.get("note", ""))))
    return out


def _calls(data: dict, path: str) -> list[CallTargets]:
    out = []
    for origin, ent in _fact_tables(data, path, "call", {"function", "address", "line", "source", "targets",
                                                         "note"}):
        tg = ent.get("targets")
        if not isinstance(tg, list) or not tg or not all(isinstance(x, str) and x for x in tg):
            raise WcetError(f"{origin}: targets must be a non-empty list of function names")
        ct = CallTargets(tuple(dict.fromkeys(tg)), origin, note=str(ent.get("note", "")))
        if "function" in ent:
            if not isinstance(ent["function"], str) or not ent["function"]:
                raise WcetError(f"{origin}: function must be a function name")
            ct.function = ent["function"]
        if "address" in ent:
            ct.address = _int(ent["address"], "address", origin)
        if "line" in ent:
            ct.file, ct.line = _file_line(ent["line"], origin)
        if "source" in ent:
            if not isinstance(ent["source"], str) or not ent["source"].strip():
                raise WcetError(f"{origin}: source must be a non-empty text from the call's source line")
            ct.source = ent["source"].strip()
        if ct.address is None and ct.function is None:
            raise WcetError(f"{origin}: give 'address' or 'function' (with 'line' or 'source', or alone "
                            f"for a function with one indirect call)")
        out.append(ct)
    return out


_FIELD = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*){1,3}")


def _pointers(data: dict, path: str) -> list[PointerFact]:
    out = []
    for origin, ent in _fact_tables(data, path, "pointer", {"fields", "variables", "align", "functions", "note", "flags"}):
        if "align" not in ent or not ("fields" in ent or "variables" in ent):
            raise WcetError(f"{origin}: needs align and fields or variables")
        fields = ent.get("fields", [])
        if not isinstance(fields, list) or not all(isinstance(x, str) and _FIELD.fullmatch(x) for x in fields):
            raise WcetError(f"{origin}: fields must be a list of \"struct.member\" names")
        variables = ent.get("variables", [])
        if not isinstance(variables, list) or not all(isinstance(x, str) and x for x in variables):
            raise WcetError(f"{origin}: variables must be a list of symbol names")
        if not fields and not variables:
            raise WcetError(f"{origin}: names no field and no variable")
        fns = ent.get("functions", [])
        if not isinstance(fns, list) or not all(isinstance(x, str) and x for x in fns):
            raise WcetError(f"{origin}: functions must be a list of function names")
        align = _int(ent["align"], "align", origin)
        if align < 2 or align & (align - 1):
            raise WcetError(f"{origin}: align must be a power of two >= 2")
        flags = _int(ent["flags"], "flags", origin) if "flags" in ent else None
        if flags is not None and not 0 <= flags < align:
            raise WcetError(f"{origin}: flags must be a mask below align")
        if flags is not None and variables:
            raise WcetError(f"{origin}: flags applies to fields only")
        out.append(PointerFact(tuple(fields), align, origin, tuple(fns), str(ent.get("note", "")), tuple(variables),
                               flags))
    return out


def load(path: str, params: dict[str, int] | None = None) -> Annotations:
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8")
    except OSError as exc:
        raise WcetError(f"cannot read annotation file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise WcetError(f"annotation file {path} is not UTF-8 text") from None
    return parse(text, path, params)


def context_matches(required: tuple[str, ...], chain: list[str]) -> bool:
    """Is ``required`` a subsequence of the call chain's function names?"""
    it = iter(chain)
    return all(any(name == c for c in it) for name in required)
