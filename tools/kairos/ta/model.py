"""Networks of timed automata: the UPPAAL XML subset read into Python, and
flattened into one network of instances over global names.

Reading (`load`) keeps the structure of the file: declarations, templates
with parameters, locations, edges, the system line and the queries. Flattening
(`flatten`) instantiates every template, renames local variables to
`Instance_name`, replaces parameters and constants by their values, expands
`select` bindings and quantifiers, and checks what the digitised semantics
needs: every clock constraint closed (`<=`, `>=`, `==` against an integer),
clocks compared only with constants, channels resolved to one name.

Errors are `ModelError("FILE:LINE: problem")`.
"""

from __future__ import annotations

import re
import xml.parsers.expat
from dataclasses import dataclass, field
from pathlib import Path

from kairos.ta.expr import (
    Binary, Cond, Dot, Expr, Index, Name, Num, Quant, TaSyntaxError, Unary, Update, const_value,
    fold, parse_guard, parse_range_type, parse_updates, substitute, tokenize, walk,
)


class ModelError(Exception):
    """One line: FILE:LINE: problem."""


# ---- a minimal XML tree with line numbers ----

@dataclass
class _Node:
    tag: str
    attrs: dict[str, str]
    line: int
    children: list["_Node"] = field(default_factory=list)
    text: str = ""

    def find(self, tag: str) -> "_Node | None":
        return next((c for c in self.children if c.tag == tag), None)

    def findall(self, tag: str) -> list["_Node"]:
        return [c for c in self.children if c.tag == tag]


def _read_xml(path: Path) -> _Node:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ModelError(f"{path}: cannot read: {e.strerror}") from None
    parser = xml.parsers.expat.ParserCreate()
    stack: list[_Node] = []
    root: list[_Node] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        node = _Node(tag, attrs, parser.CurrentLineNumber)
        (stack[-1].children if stack else root).append(node)
        stack.append(node)

    def end(tag: str) -> None:
        stack.pop()

    def chars(text: str) -> None:
        if stack:
            stack[-1].text += text

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(data, True)
    except xml.parsers.expat.ExpatError as e:
        raise ModelError(f"{path}:{e.lineno}: malformed XML: {xml.parsers.expat.ErrorString(e.code)}") from None
    if not root or root[0].tag != "nta":
        raise ModelError(f"{path}:1: not an UPPAAL model (the root element must be <nta>)")
    return root[0]


# ---- the model as written ----

@dataclass
class Var:
    name: str
    kind: str            # "int", "clock", "chan", "broadcast chan"
    lo: int = -32768     # UPPAAL's default int range
    hi: int = 32767
    size: int | None = None  # array length, or None for a scalar
    init: list[int] = field(default_factory=list)
    const: bool = False
    line: int = 0


@dataclass
class Location:
    ident: str
    name: str
    invariant: Expr | None
    urgent: bool
    committed: bool
    line: int


@dataclass
class Edge:
    source: str
    target: str
    select: list[tuple[str, Expr, Expr]]
    guard: Expr | None
    sync: tuple[Expr, str] | None  # channel expression, "!" or "?"
    updates: list[Update]
    line: int


@dataclass
class Template:
    name: str
    params: list[tuple[str, str]]  # (name, "const int" | "int" | "bool")
    decls: list[Var]
    locations: list[Location]
    init: str
    edges: list[Edge]
    line: int


@dataclass
class Query:
    text: str
    kind: str            # "A[]" or "E<>"
    expr: Expr | None    # None: "not deadlock"
    comment: str
    line: int


@dataclass
class Network:
    path: Path
    globals: list[Var]
    templates: dict[str, Template]
    instances: list[tuple[str, str, list[Expr], int]]  # (name, template, args, line)
    queries: list[Query]


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def _statements(text: str, base_line: int) -> list[tuple[str, int]]:
    """Split a declaration block at ';', keeping each statement's line."""
    out = []
    text = _COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text)
    line = base_line
    for chunk in text.split(";"):
        stripped = chunk.strip()
        first = line + chunk[: len(chunk) - len(chunk.lstrip())].count("\n")
        if stripped:
            if "{" in stripped and "(" in stripped.split("{")[0]:
                raise ModelError(f"@{first}: unsupported: function declarations")
            out.append((stripped, first))
        line += chunk.count("\n")
    return out


_DECL = re.compile(r"^(const\s+)?(broadcast\s+chan|urgent\s+chan|chan|clock|bool|int(\s*\[[^\]]*\])?)\s+(.*)$", re.DOTALL)


def _parse_decls(text: str, base_line: int, consts: dict[str, int]) -> list[Var]:
    out: list[Var] = []
    for stmt, line in _statements(text, base_line):
        m = _DECL.match(stmt)
        if not m:
            word = stmt.split()[0]
            raise ModelError(f"@{line}: unsupported declaration '{word} ...'")
        is_const, typ, rng, rest = bool(m.group(1)), m.group(2), m.group(3), m.group(4)
        if typ.startswith("urgent"):
            raise ModelError(f"@{line}: unsupported: urgent channels")
        kind = "broadcast chan" if typ.startswith("broadcast") else typ if typ in ("chan", "clock") else "int"
        lo, hi = (0, 1) if typ == "bool" else (-32768, 32767)
        try:
            if rng:
                ts = tokenize("int" + rng)
                lo_e, hi_e = parse_range_type(ts)
                lo = const_value(substitute(lo_e, {k: Num(v) for k, v in consts.items()}), "a range bound")
                hi = const_value(substitute(hi_e, {k: Num(v) for k, v in consts.items()}), "a range bound")
            for item in _split_top(rest):
                out.append(_parse_declarator(item, kind, lo, hi, is_const, line, consts))
                if is_const and out[-1].size is None:
                    consts[out[-1].name] = out[-1].init[0]
        except TaSyntaxError as e:
            raise ModelError(f"@{line}: {e}") from None
    return out


def _split_top(text: str) -> list[str]:
    """Split at commas outside braces and brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def _parse_declarator(item: str, kind: str, lo: int, hi: int, const: bool, line: int,
                      consts: dict[str, int]) -> Var:
    m = re.match(r"^([A-Za-z_]\w*)\s*(\[([^\]]*)\])?\s*(=\s*(.*))?$", item, re.DOTALL)
    if not m:
        raise TaSyntaxError(f"cannot read the declaration '{item}'")
    name, size_text, init_text = m.group(1), m.group(3), m.group(5)
    env = {k: Num(v) for k, v in consts.items()}
    size = None
    if size_text is not None:
        size = const_value(substitute(parse_guard(size_text) or Num(0), env), "an array size")
        if size <= 0:
            raise TaSyntaxError(f"array '{name}' has size {size}")
    if kind in ("clock", "chan", "broadcast chan"):
        if init_text:
            raise TaSyntaxError(f"a {kind} cannot have an initial value ('{name}')")
        return Var(name, kind, size=size, line=line)
    n = size or 1
    if init_text is None:
        if const:
            raise TaSyntaxError(f"constant '{name}' has no value")
        init = [max(lo, min(hi, 0))] * n
    else:
        text = init_text.strip()
        if size is not None:
            if not (text.startswith("{") and text.endswith("}")):
                raise TaSyntaxError(f"array '{name}' needs an initialiser {{...}}")
            items = _split_top(text[1:-1])
        else:
            items = [text]
        init = [const_value(substitute(parse_guard(i) or Num(0), env), f"the initial value of '{name}'")
                for i in items]
        if len(init) != n:
            raise TaSyntaxError(f"array '{name}' has {n} elements but {len(init)} initial values")
    for v in init:
        if not lo <= v <= hi:
            raise TaSyntaxError(f"initial value {v} of '{name}' is outside [{lo},{hi}]")
    return Var(name, "int", lo, hi, size, init, const, line)


def _label(node: _Node, kind: str) -> _Node | None:
    return next((c for c in node.findall("label") if c.attrs.get("kind") == kind), None)


def load(path: str | Path) -> Network:
    """Read an UPPAAL XML file (the subset in the module docstring)."""
    path = Path(path)
    root = _read_xml(path)

    def err(line: int, msg: str) -> ModelError:
        return ModelError(f"{path}:{line}: {msg}")

    def located(fn, node: _Node, *args):  # run a parse step, turning errors into FILE:LINE
        try:
            return fn(*args)
        except TaSyntaxError as e:
            raise err(node.line, str(e)) from None
        except ModelError as e:
            msg = str(e)
            if msg.startswith("@"):
                rel, _, rest = msg[1:].partition(": ")
                raise err(int(rel), rest) from None
            raise

    consts: dict[str, int] = {}
    decl = root.find("declaration")
    globals_ = located(_parse_decls, decl, decl.text, decl.line, consts) if decl is not None else []
    templates: dict[str, Template] = {}
    for tn in root.findall("template"):
        name_node = tn.find("name")
        if name_node is None or not name_node.text.strip():
            raise err(tn.line, "template without a <name>")
        tname = name_node.text.strip()
        if tname in templates:
            raise err(name_node.line, f"duplicate template '{tname}'")
        params = []
        pnode = tn.find("parameter")
        if pnode is not None and pnode.text.strip():
            for p in _split_top(pnode.text):
                pm = re.match(r"^(const\s+int|int|bool)\s+([A-Za-z_]\w*)$", p.strip())
                if not pm:
                    raise err(pnode.line, f"unsupported parameter '{p.strip()}' (value parameters "
                                          "'const int x', 'int x' or 'bool x' only)")
                params.append((pm.group(2), pm.group(1)))
        local_consts = dict(consts)
        dnode = tn.find("declaration")
        decls = located(_parse_decls, dnode, dnode.text, dnode.line, local_consts) if dnode is not None else []
        locations = []
        for ln in tn.findall("location"):
            ident = ln.attrs.get("id")
            if not ident:
                raise err(ln.line, "location without an id")
            lname = ln.find("name")
            inv = _label(ln, "invariant")
            locations.append(Location(
                ident, lname.text.strip() if lname is not None else ident,
                located(parse_guard, inv, inv.text) if inv is not None else None,
                ln.find("urgent") is not None, ln.find("committed") is not None, ln.line))
        if not locations:
            raise err(tn.line, f"template '{tname}' has no locations")
        ids = {loc.ident for loc in locations}
        init = tn.find("init")
        if init is None or init.attrs.get("ref") not in ids:
            raise err(tn.line, f"template '{tname}' has no valid <init ref=...>")
        edges = []
        for en in tn.findall("transition"):
            src, dst = en.find("source"), en.find("target")
            if src is None or dst is None or src.attrs.get("ref") not in ids or dst.attrs.get("ref") not in ids:
                raise err(en.line, "transition with a missing or unknown source/target")
            select = []
            sel = _label(en, "select")
            if sel is not None and sel.text.strip():
                for part in _split_top(sel.text):
                    ts = located(tokenize, sel, part)
                    var = ts.take()
                    located(ts.take, sel, ":")
                    lo, hi = located(parse_range_type, sel, ts)
                    select.append((var, lo, hi))
            guard = _label(en, "guard")
            sync = _label(en, "synchronisation")
            sync_v = None
            if sync is not None and sync.text.strip():
                s = sync.text.strip()
                if s[-1] not in "!?":
                    raise err(sync.line, f"synchronisation '{s}' must end in ! or ?")
                sync_v = (located(parse_guard, sync, s[:-1]), s[-1])
            upd = _label(en, "assignment")
            edges.append(Edge(src.attrs["ref"], dst.attrs["ref"], select,
                              located(parse_guard, guard, guard.text) if guard is not None else None,
                              sync_v, located(parse_updates, upd, upd.text) if upd is not None else [],
                              en.line))
        templates[tname] = Template(tname, params, decls, locations, init.attrs["ref"], edges, tn.line)
    instances = _parse_system(root, path, templates, err)
    queries = []
    qnode = root.find("queries")
    for q in (qnode.findall("query") if qnode is not None else []):
        f = q.find("formula")
        if f is None or not f.text.strip():
            continue
        c = q.find("comment")
        queries.append(located(_parse_query, f, f.text.strip(), c.text.strip() if c is not None else "", f.line))
    return Network(path, globals_, templates, instances, queries)


def _parse_query(text: str, comment: str, line: int) -> Query:
    t = " ".join(text.split())
    for kind in ("A[]", "E<>"):
        if t.startswith(kind):
            body = t[len(kind):].strip()
            if kind == "A[]" and body == "not deadlock":
                return Query(text, kind, None, comment, line)
            return Query(text, kind, parse_guard(body) or Num(1), comment, line)
    raise TaSyntaxError(f"unsupported query '{text}' (A[] or E<> only)")


def _parse_system(root: _Node, path: Path, templates: dict[str, Template], err) -> list:
    snode = root.find("system")
    if snode is None:
        raise err(root.line, "no <system> declaration")
    named: dict[str, tuple[str, list[Expr], int]] = {}
    listed: list[tuple[str, int]] = []
    for stmt, line in _statements(snode.text, snode.line):
        m = re.match(r"^([A-Za-z_]\w*)\s*(:?=)\s*([A-Za-z_]\w*)\s*\((.*)\)$", stmt, re.DOTALL)
        if m:
            args = [parse_guard(a) or Num(0) for a in _split_top(m.group(4))]
            named[m.group(1)] = (m.group(3), args, line)
            continue
        if stmt.startswith("system"):
            if "<" in stmt:
                raise err(line, "unsupported: process priorities in the system line")
            listed += [(n.strip(), line) for n in stmt[len("system"):].split(",")]
            continue
        raise err(line, f"cannot read '{stmt}' in <system>")
    if not listed:
        raise err(snode.line, "the <system> block has no 'system ...;' line")
    out = []
    for name, line in listed:
        tname, args, aline = named.get(name, (name, [], line))
        t = templates.get(tname)
        if t is None:
            raise err(line, f"'{name}' is neither a template nor an instance")
        if len(args) != len(t.params):
            raise err(aline, f"{tname} takes {len(t.params)} arguments, {name} gives {len(args)}")
        out.append((name, tname, args, aline))
    return out


# ---- the flattened network ----

@dataclass
class FlatVar:
    name: str       # global spelling: g, or Instance_v for locals
    kind: str       # "int", "clock", "chan", "broadcast chan"
    lo: int
    hi: int
    size: int | None
    init: list[int]
    const: bool = False  # a constant array (never assigned, not shown in traces)


@dataclass
class FlatEdge:
    ident: int
    instance: int
    source: int
    target: int
    guard: Expr | None
    sync: tuple[str, str] | None  # (channel name, "!"/"?")
    updates: list[Update]
    text: str       # for traces: "Inst: A -> B [guard] c! {updates}"
    line: int


@dataclass
class FlatInstance:
    name: str
    template: str
    locations: list[Location]
    init: int
    invariants: list[Expr | None]


@dataclass
class FlatNetwork:
    path: Path
    vars: dict[str, FlatVar]
    instances: list[FlatInstance]
    edges: list[FlatEdge]
    queries: list[Query]
    clock_max: dict[str, int]  # largest constant each clock is compared with


def flatten(net: Network) -> FlatNetwork:
    path = net.path

    def err(line: int, msg: str) -> ModelError:
        return ModelError(f"{path}:{line}: {msg}")

    consts = {v.name: v.init[0] for v in net.globals if v.const and v.size is None}
    const_arrays = {v.name: v.init for v in net.globals if v.const and v.size is not None}
    vars_: dict[str, FlatVar] = {}
    for v in net.globals:
        if v.const and v.size is None:
            continue
        vars_[v.name] = FlatVar(v.name, v.kind, v.lo, v.hi, v.size, v.init, v.const)
    instances: list[FlatInstance] = []
    edges: list[FlatEdge] = []
    inst_env: dict[str, dict[str, Expr]] = {}
    for iname, tname, args, line in net.instances:
        t = net.templates[tname]
        env: dict[str, Expr] = {k: Num(v) for k, v in consts.items()}
        for (pname, ptype), arg in zip(t.params, args):
            try:
                env[pname] = Num(const_value(substitute(arg, env), f"argument '{pname}' of {iname}"))
            except TaSyntaxError as e:
                raise err(line, str(e)) from None
        for v in t.decls:
            if v.const and v.size is None:
                env[v.name] = Num(v.init[0])
                continue
            flat = f"{iname}_{v.name}"
            vars_[flat] = FlatVar(flat, v.kind, v.lo, v.hi, v.size, v.init, v.const)
            if v.const:
                const_arrays[flat] = v.init
            env[v.name] = Name(flat)
        inst_env[iname] = env
        ids = [loc.ident for loc in t.locations]
        try:
            invariants = [fold(substitute(loc.invariant, env), const_arrays) if loc.invariant else None for loc in t.locations]
        except TaSyntaxError as e:
            raise err(t.line, str(e)) from None
        inst_index = len(instances)
        instances.append(FlatInstance(iname, tname, t.locations, ids.index(t.init), invariants))
        for e in t.edges:
            for binding in _select_bindings(e, env, err):
                benv = {**env, **binding}
                try:
                    guard = fold(substitute(e.guard, benv), const_arrays) if e.guard is not None else None
                    if isinstance(guard, Num) and guard.value == 0:
                        continue  # a select value the guard excludes
                    sync = None
                    if e.sync is not None:
                        sync = (_channel_name(fold(substitute(e.sync[0], benv), const_arrays), vars_), e.sync[1])
                    updates = [Update(fold(substitute(u.target, benv)), u.op, fold(substitute(u.value, benv), const_arrays))
                               for u in e.updates]
                except TaSyntaxError as ex:
                    raise err(e.line, str(ex)) from None
                src, dst = ids.index(e.source), ids.index(e.target)
                sel = "".join(f" {k}={v.value}" for k, v in binding.items())  # type: ignore[union-attr]
                text = (f"{iname}: {t.locations[src].name} -> {t.locations[dst].name}{sel}"
                        + (f" {sync[0]}{sync[1]}" if sync else ""))
                edges.append(FlatEdge(len(edges), inst_index, src, dst, guard, sync, updates, text, e.line))
    flat = FlatNetwork(path, vars_, instances, edges, [], {})
    flat.queries = [_resolve_query(q, flat, inst_env, consts, const_arrays, err) for q in net.queries]
    _check_names_and_clocks(flat, err)
    return flat


def _select_bindings(e: Edge, env: dict[str, Expr], err) -> list[dict[str, Expr]]:
    out: list[dict[str, Expr]] = [{}]
    for var, lo, hi in e.select:
        try:
            lo_v = const_value(substitute(lo, env), "a select bound")
            hi_v = const_value(substitute(hi, env), "a select bound")
        except TaSyntaxError as ex:
            raise err(e.line, str(ex)) from None
        out = [{**b, var: Num(v)} for b in out for v in range(lo_v, hi_v + 1)]
    return out


def _channel_name(e: Expr, vars_: dict[str, FlatVar]) -> str:
    if isinstance(e, Name) and e.ident in vars_ and vars_[e.ident].kind.endswith("chan"):
        if vars_[e.ident].size is not None:
            raise TaSyntaxError(f"channel array '{e.ident}' used without an index")
        return e.ident
    if isinstance(e, Index) and isinstance(e.array, Name) and isinstance(e.index, Num):
        v = vars_.get(e.array.ident)
        if v is not None and v.kind.endswith("chan") and v.size is not None:
            if not 0 <= e.index.value < v.size:
                raise TaSyntaxError(f"channel index {e.index.value} outside {e.array.ident}[{v.size}]")
            return f"{e.array.ident}[{e.index.value}]"
    raise TaSyntaxError("a synchronisation must name a channel (with a constant index for arrays)")


def _resolve_query(q: Query, flat: FlatNetwork, inst_env: dict[str, dict[str, Expr]],
                   consts: dict[str, int], const_arrays: dict[str, list[int]], err) -> Query:
    if q.expr is None:
        return q
    names = {inst.name: inst for inst in flat.instances}

    def resolve(e: Expr) -> Expr:
        match e:
            case Dot(p, m):
                inst = names.get(p)
                if inst is None:
                    raise TaSyntaxError(f"no process '{p}'")
                locs = [loc.name for loc in inst.locations]
                if m in locs:
                    return e  # a location test, rendered by the back end
                local = inst_env[p].get(m)
                if local is None:
                    raise TaSyntaxError(f"process '{p}' has no location or variable '{m}'")
                return local
            case Name(ident):
                return e
            case Num():
                return e
            case Index(a, i):
                return Index(resolve(a), resolve(i))
            case Unary(op, a):
                return Unary(op, resolve(a))
            case Binary(op, a, b):
                return Binary(op, resolve(a), resolve(b))
            case Cond(t, a, b):
                return Cond(resolve(t), resolve(a), resolve(b))
            case Quant(k, v, lo, hi, body):
                return Quant(k, v, lo, hi, resolve(body))
        raise TypeError(e)

    try:
        expr = fold(resolve(substitute(q.expr, {k: Num(v) for k, v in consts.items()})), const_arrays)
    except TaSyntaxError as e:
        raise err(q.line, f"query '{q.text}': {e}") from None
    return Query(q.text, q.kind, expr, q.comment, q.line)


def _clock_atoms(e: Expr, clocks: set[str]) -> list[tuple[str, str, Expr]]:
    """The clock constraints of a guard/invariant: (clock, op, bound)."""
    out = []
    for sub in walk(e):
        if isinstance(sub, Binary) and sub.op in ("<", "<=", "==", "!=", ">=", ">"):
            for side, other in ((sub.left, sub.right), (sub.right, sub.left)):
                if isinstance(side, Name) and side.ident in clocks:
                    out.append((side.ident, sub.op, other))
    return out


def _check_names_and_clocks(flat: FlatNetwork, err) -> None:
    clocks = {n for n, v in flat.vars.items() if v.kind == "clock"}
    known = set(flat.vars)
    clock_max = {c: 0 for c in clocks}

    def check(e: Expr | None, line: int, where: str, in_query: bool = False) -> None:
        if e is None:
            return
        for sub in walk(e):
            if isinstance(sub, Name) and sub.ident not in known:
                raise err(line, f"unknown name '{sub.ident}' in {where}")
            if isinstance(sub, Binary) and sub.op in ("+", "-", "*", "/", "%"):
                for side in (sub.left, sub.right):
                    if isinstance(side, Name) and side.ident in clocks:
                        raise err(line, f"unsupported: arithmetic on clock '{side.ident}' in {where} "
                                        "(clock differences are not in the subset)")
        for clock, op, bound in _clock_atoms(e, clocks):
            if op in ("<", ">", "!="):
                raise err(line, f"{where}: the clock constraint on '{clock}' uses '{op}': the model is not "
                                "closed, so discrete-time checking would not be exact (use <=, >= or ==)")
            if not isinstance(bound, Num):
                raise err(line, f"{where}: clock '{clock}' is compared with a non-constant")
            clock_max[clock] = max(clock_max[clock], bound.value)

    for inst in flat.instances:
        for loc, inv in zip(inst.locations, inst.invariants):
            check(inv, loc.line, f"the invariant of {inst.name}.{loc.name}")
            if inv is not None:
                for clock, op, _ in _clock_atoms(inv, clocks):
                    if op not in ("<=", "=="):
                        raise err(loc.line, f"invariant of {inst.name}.{loc.name}: only upper bounds "
                                            f"(<=) on clocks are allowed, found '{clock} {op}'")
    for e in flat.edges:
        check(e.guard, e.line, f"a guard of {e.text}")
        for u in e.updates:
            target = u.target.array if isinstance(u.target, Index) else u.target
            if not isinstance(target, Name) or target.ident not in known:
                raise err(e.line, f"assignment to unknown '{target}' in {e.text}")
            v = flat.vars[target.ident]
            if v.kind == "clock":
                if u.op != "=" or not isinstance(u.value, Num) or u.value.value < 0:
                    raise err(e.line, f"clock '{v.name}' may only be reset to a non-negative constant")
                clock_max[v.name] = max(clock_max[v.name], u.value.value)
            elif v.kind != "int" or v.const:
                raise err(e.line, f"cannot assign to {'constant' if v.const else v.kind} '{v.name}'")
            elif target.ident in flat.vars and isinstance(u.target, Name) and v.size is not None:
                raise err(e.line, f"array '{v.name}' assigned without an index")
            check(u.value, e.line, f"an update of {e.text}")
    for q in flat.queries:
        check(q.expr, q.line, f"query '{q.text}'", in_query=True)
    flat.clock_max = clock_max
