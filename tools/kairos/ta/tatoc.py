"""TAtoC: C code from a timed-automata network (`kairos tatoc`).

State-oriented, as the generator of Åsberg, Pettersson and Nolte (MRTC report
2013, §4): each process holds its current location, each location a table of
its outgoing edges, and a step scans only the edges leaving the current
locations; a location change is one store. Time is discrete, as in the model
checking (docs/timed-automata.md): `ta_tick` lets one time unit pass, then
`ta_settle` fires enabled steps until none is left (maximal progress: an
edge fires as soon as it is enabled, which is one of the executions the model
checker explored). Choices the model leaves open are made deterministically:
the first process, the first edge, the first partner in declaration order.

The generated C has no dynamic allocation, no recursion and no function
pointers; every loop is bounded by a constant of the model, and the steps per
instant by TA_MAX_STEPS (a model with a longer zero-time chain gets
TA_ERR_ZENO, never an endless loop). Integer ranges, array indices and
divisions are checked at run time (`ta_status` errors), so no model input
makes the code misbehave; ACSL contracts state what the functions keep true,
for Frama-C/WP (docs/timed-automata.md "Generated code").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kairos.ta.expr import Binary, Cond, Dot, Expr, Index, Name, Num, Quant, Unary
from kairos.ta.model import FlatNetwork, ModelError

HEADER = "ta_sched.h"
SOURCE = "ta_sched.c"


@dataclass
class Generated:
    header: str
    source: str
    wcet: str = ""  # loop bounds for `kairos wcet` (docs/wcet.md format)


def _cname(name: str) -> str:
    return "v_" + name


class _Emitter:
    def __init__(self, net: FlatNetwork, prefix: str):
        self.net = net
        self.p = prefix
        self.flat = False

    def flat_expr(self, e: Expr | None) -> str | None:
        """C for an expression without branches, or None if it can set
        s->error (a checked index or a division), where evaluating both
        sides would not be the same.

        `&&`, `||` and `?:` become `&`, `|` and a select by mask over 0/1
        values: the same value for an expression without side effects,
        and straight-line code. CIL lowers each `&&`, `||`, `?:` into an
        `if` with temporaries, and in a function that `assigns \\nothing`
        every temporary's store was a goal of its own (86 for the
        Scheduler's decision alone)."""
        self.flat = True
        try:
            text = self.expr(e)
        finally:
            self.flat = False
        if any(f"{self.p}_{h}(" in text for h in ("read", "div", "mod")):
            return None
        return text

    def expr(self, e: Expr | None) -> str:
        """C for a guard/update expression over the state `s`, evaluated in
        int64_t (model values are 32-bit, so + - and one * cannot overflow)."""
        if e is None:
            return "1"
        match e:
            case Num(v):
                return f"(int64_t){v}"
            case Name(n):
                v = self.net.vars[n]
                if v.kind == "clock":
                    return f"(int64_t)s->{_cname(n)}"
                if v.size is not None:
                    raise ModelError(f"{self.net.path}: array '{n}' used without an index")
                return f"(int64_t)s->{_cname(n)}"
            case Index(Name(n), Num(k)) if 0 <= k < (self.net.vars[n].size or 0):
                # A constant index in range (the usual case after `select`
                # expansion): a plain load, nothing for the prover to check.
                v = self.net.vars[n]
                return f"(int64_t){_cname(n) if v.const else 's->' + _cname(n)}[{k}]"
            case Index(Name(n), i):
                v = self.net.vars[n]
                array = _cname(n) if v.const else f"s->{_cname(n)}"
                lo, hi = (min(v.init), max(v.init)) if v.const else (v.lo, v.hi)
                return f"{self.p}_read(s, {array}, {v.size}, {self.expr(i)}, {lo}, {hi})"
            case Unary("-", a):
                return f"(-{self.expr(a)})"
            case Unary("!", a):
                return f"(int64_t)!{self.expr(a)}"
            case Binary("/", a, b):
                return f"{self.p}_div(s, {self.expr(a)}, {self.expr(b)})"
            case Binary("%", a, b):
                return f"{self.p}_mod(s, {self.expr(a)}, {self.expr(b)})"
            case Binary("->", a, b) if self.flat:
                return f"(int64_t)(({self.expr(a)} == 0) | ({self.expr(b)} != 0))"
            case Binary(op, a, b) if self.flat and op in ("&&", "||"):
                return f"(int64_t)(({self.expr(a)} != 0) {op[0]} ({self.expr(b)} != 0))"
            case Cond(t, a, b) if self.flat:
                # m_ is 0 or -1 (all ones): a where t holds, b elsewhere.
                m = f"(-(int64_t)({self.expr(t)} != 0))"
                return f"(({self.expr(a)} & {m}) | ({self.expr(b)} & ~{m}))"
            case Binary("->", a, b):
                return f"(int64_t)(!{self.expr(a)} || {self.expr(b)})"
            case Binary(op, a, b) if op in ("&&", "||", "<", "<=", "==", "!=", ">=", ">"):
                return f"(int64_t)({self.expr(a)} {op} {self.expr(b)})"
            case Binary(op, a, b):
                return f"({self.expr(a)} {op} {self.expr(b)})"
            case Cond(t, a, b):
                return f"({self.expr(t)} ? {self.expr(a)} : {self.expr(b)})"
            case Dot() | Quant() | Index():
                raise ModelError(f"{self.net.path}: cannot generate C for {e}")
        raise TypeError(e)


def generate(net: FlatNetwork, prefix: str = "ta", max_steps: int = 64) -> Generated:
    P = prefix
    em = _Emitter(net, P)
    nproc = len(net.instances)
    ints = [v for v in net.vars.values() if v.kind == "int" and not v.const]
    consts = [v for v in net.vars.values() if v.kind == "int" and v.const]
    clocks = [v for v in net.vars.values() if v.kind == "clock"]
    chans = sorted({e.sync[0] for e in net.edges if e.sync})
    chan_index = {c: i for i, c in enumerate(chans)}
    broadcast = [net.vars[c.split("[")[0]].kind == "broadcast chan" for c in chans]
    for v in clocks:
        if v.size:
            raise ModelError(f"{net.path}: unsupported in generated code: clock array '{v.name}'")

    # ---- header ----
    h = [f"/* Generated by kairos tatoc from {net.path.name}: do not edit. */",
         f"#ifndef {P.upper()}_SCHED_H", f"#define {P.upper()}_SCHED_H", "",
         "#include <stdint.h>", "",
         f"#define {P.upper()}_NPROC {nproc}",
         f"#define {P.upper()}_NEDGES {len(net.edges)}",
         f"#define {P.upper()}_MAX_STEPS {max_steps} /* steps per instant */", "",
         f"enum {P}_status {{",
         f"    {P.upper()}_OK = 0,",
         f"    {P.upper()}_ERR_RANGE = 1,     /* a value left its declared range, or an index its array */",
         f"    {P.upper()}_ERR_DIVZERO = 2,   /* division by zero */",
         f"    {P.upper()}_ERR_TIMELOCK = 3,  /* time cannot pass and no edge is enabled */",
         f"    {P.upper()}_ERR_ZENO = 4,      /* more than MAX_STEPS steps in one instant */",
         "};", "",
         f"/* Processes, in declaration order (index into loc[]). */"]
    for i, inst in enumerate(net.instances):
        h.append(f"#define {P.upper()}_PROC_{inst.name.upper()} {i}")
        for j, loc in enumerate(inst.locations):
            h.append(f"#define {P.upper()}_LOC_{inst.name.upper()}_{loc.name.upper()} {j}")
    h += ["", f"struct {P}_state {{", f"    uint8_t loc[{P.upper()}_NPROC]; /* current location of each process */"]
    for v in ints:
        dims = f"[{v.size}]" if v.size else ""
        h.append(f"    int32_t {_cname(v.name)}{dims}; /* [{v.lo},{v.hi}] */")
    for v in clocks:
        h.append(f"    int32_t {_cname(v.name)}; /* clock, stops at {net.clock_max.get(v.name, 0) + 1} */")
    h += [f"    int32_t error; /* enum {P}_status: the first error; the state is then frozen */", "};", "",
          f"/* The initial state. */",
          f"void {P}_init(struct {P}_state *s);",
          f"/* Fire enabled steps until none is left; returns s->error. */",
          f"int {P}_settle(struct {P}_state *s);",
          f"/* One time unit passes, then {P}_settle; returns s->error. */",
          f"int {P}_tick(struct {P}_state *s);", "", "#endif", ""]

    # ---- source ----
    c = [f"/* Generated by kairos tatoc from {net.path.name}: do not edit.",
         " * Semantics: docs/timed-automata.md \"Generated code\". */",
         f'#include "{P}_sched.h"', "", "#include <stdbool.h>", ""]
    for v in consts:
        c.append(f"static const int32_t {_cname(v.name)}[{v.size}] = {{{', '.join(map(str, v.init))}}};")
    c += ["",
          f"/*@ requires \\valid(s);",
          f"    assigns s->error;",
          f"    ensures \\result == 0 && s->error != 0; */",
          f"static int64_t {P}_fail(struct {P}_state *s, int32_t why)",
          "{",
          "    if (s->error == 0)",
          "        s->error = why != 0 ? why : 1;",
          "    return 0;",
          "}", "",
          f"/*@ requires \\valid(s) && n > 0 && \\valid_read(a + (0 .. n - 1));",
          f"    requires \\separated(&s->error, a + (0 .. n - 1));",
          f"    requires lo <= 0 <= hi || lo <= hi;",
          f"    requires \\forall integer k; 0 <= k < n ==> lo <= a[k] <= hi;",
          f"    assigns s->error;",
          f"    ensures \\result == 0 || lo <= \\result <= hi; */",
          f"static int64_t {P}_read(struct {P}_state *s, const int32_t *a, int64_t n, int64_t i,",
          f"                       int64_t lo, int64_t hi)",
          "{",
          "    (void)lo;",
          "    (void)hi;",
          f"    return (i >= 0 && i < n) ? (int64_t)a[i] : {P}_fail(s, {P.upper()}_ERR_RANGE);",
          "}", "",
          f"/*@ requires \\valid(s) && INT64_MIN < a;",
          f"    assigns s->error;",
          f"    ensures \\result == 0 || (b != 0 && \\result == a / b); */",
          f"static int64_t {P}_div(struct {P}_state *s, int64_t a, int64_t b)",
          "{",
          f"    return b != 0 ? a / b : {P}_fail(s, {P.upper()}_ERR_DIVZERO);",
          "}", "",
          f"/*@ requires \\valid(s) && INT64_MIN < a;",
          f"    assigns s->error;",
          f"    ensures \\result == 0 || (b != 0 && \\result == a % b); */",
          f"static int64_t {P}_mod(struct {P}_state *s, int64_t a, int64_t b)",
          "{",
          f"    return b != 0 ? a % b : {P}_fail(s, {P.upper()}_ERR_DIVZERO);",
          "}", ""]
    # Location properties and the outgoing-edge tables.
    flags = []
    for inst in net.instances:
        flags.append("{" + ", ".join(str((1 if loc.committed else 0) | (2 if loc.urgent else 0))
                                     for loc in inst.locations) + "}")
    maxloc = max(len(i.locations) for i in net.instances)
    c.append(f"#define {P.upper()}_MAXLOC {maxloc}")
    c.append(f"#define {P.upper()}_NOUT {max(1, sum(1 for _ in net.edges))}")
    vparts, vlines = _valid_predicate(net, P, ints, clocks)
    c += vlines
    c.append(f"/* bit 0: committed, bit 1: urgent */")
    c.append(f"static const uint8_t {P}_locflags[{P.upper()}_NPROC][{maxloc}] = {{{', '.join(flags)}}};")
    out_lists: list[int] = []
    first, count = [], []
    for i, inst in enumerate(net.instances):
        frow, crow = [], []
        for j in range(len(inst.locations)):
            es = [e.ident for e in net.edges if e.instance == i and e.source == j]
            frow.append(len(out_lists))
            crow.append(len(es))
            out_lists += es
        first.append("{" + ", ".join(map(str, frow)) + "}")
        count.append("{" + ", ".join(map(str, crow)) + "}")
    c.append(f"static const uint16_t {P}_out[{P.upper()}_NOUT] = "
             f"{{{', '.join(map(str, out_lists)) or '0'}}};")
    c.append(f"static const uint16_t {P}_out_first[{P.upper()}_NPROC][{maxloc}] = {{{', '.join(first)}}};")
    c.append(f"static const uint8_t {P}_out_count[{P.upper()}_NPROC][{maxloc}] = {{{', '.join(count)}}};")
    ne = max(1, len(net.edges))
    c.append(f"static const uint8_t {P}_edge_target[{ne}] = "
             f"{{{', '.join(str(e.target) for e in net.edges) or '0'}}};")
    c.append("/* channel index, or -1; direction 1 = send (!), 2 = receive (?) */")
    c.append(f"static const int16_t {P}_edge_chan[{ne}] = "
             f"{{{', '.join(str(chan_index[e.sync[0]]) if e.sync else '-1' for e in net.edges) or '-1'}}};")
    c.append(f"static const uint8_t {P}_edge_dir[{ne}] = "
             f"{{{', '.join(('1' if e.sync[1] == '!' else '2') if e.sync else '0' for e in net.edges) or '0'}}};")
    c.append(f"#define {P.upper()}_NCHAN {max(1, len(chans))}")
    c.append(f"static const uint8_t {P}_chan_broadcast[{P.upper()}_NCHAN] = "
             f"{{{', '.join('1' if b else '0' for b in broadcast) or '0'}}};")
    c.append("")

    # Guards and updates: one case per edge. A guard only reads the state
    # unless it indexes an array by a computed value or divides (the checks
    # that can set s->error): then its contract says `assigns \nothing`, and
    # its callers keep the state invariant by the frame alone instead of
    # proving it again after every guard evaluated.
    guards = [em.expr(e.guard) for e in net.edges]
    pure = not any(f"{P}_{h}(" in g for g in guards for h in ("read", "div", "mod"))
    if pure:  # then without branches (see _Emitter.flat_expr)
        guards = [em.flat_expr(e.guard) or "" for e in net.edges]
    c += [f"/*@ requires {P}_valid(s);"]
    c += ["    assigns \\nothing; */"] if pure else [
        f"    assigns s->error;", f"    {P.upper()}_ENSURES_VALID */"]
    c += [f"static bool {P}_guard(struct {P}_state *s, uint16_t e)", "{", "    switch (e) {"]
    for e, g in zip(net.edges, guards):
        c.append(f"    case {e.ident}: /* {e.text} */")
        c.append(f"        return {g} != 0;")
    c += ["    default:", "        return false;", "    }", "}", ""]
    # One function per edge with updates: each is a small proof of its own
    # (one switch over every edge's updates made goals too big for WP).
    updating = [e for e in net.edges if e.updates]
    for e in updating:
        values: list[str] = []
        body = ["    " + _assign_c(em, net, u, P, f"{e.ident}_{k}", values) for k, u in enumerate(e.updates)]
        c += values
        c += [f"/* {e.text} */",
              f"/*@ requires {P}_valid(s);",
              f"    assigns {', '.join(_assigned(net, e))}, s->error;",
              f"    {P.upper()}_ENSURES_VALID */",
              f"static void {P}_update_{e.ident}(struct {P}_state *s)", "{"]
        checked = any("err_ =" in line for line in body)
        c += [f"    {P}_unfold(s);"] + (["    int32_t err_ = 0;"] if checked else []) + body
        if checked:  # the first error stays; stored unconditionally (see _assign_c)
            c += ["    { int32_t e_ = s->error; if (e_ == 0) e_ = err_; s->error = e_; }"]
        c += [f"    {P}_fold(s);", "}", ""]
    c += [f"/*@ requires {P}_valid(s);",
          f"    assigns *s;",
          f"    {P.upper()}_ENSURES_VALID */",
          f"static void {P}_update(struct {P}_state *s, uint16_t e)", "{", "    switch (e) {"]
    for e in updating:
        c.append(f"    case {e.ident}:")
        c.append(f"        {P}_update_{e.ident}(s);")
        c.append("        break;")
    c += ["    default:", "        break;", "    }", "}", ""]
    c += _engine(net, P, clocks, ints, pure, vparts)
    maxout = max([len([e for e in net.edges if e.instance == i and e.source == j])
                  for i, inst in enumerate(net.instances) for j in range(len(inst.locations))], default=1)
    return Generated("\n".join(h), _drop_unused("\n".join(c) + "\n", P),
                     _wcet_annotations(net, P, nproc, maxout, max_steps))


def _wcet_annotations(net: FlatNetwork, P: str, nproc: int, maxout: int, max_steps: int) -> str:
    """The loop bounds of the engine for `kairos wcet -a` (docs/wcet.md
    format). Each loop is bounded by a constant of this model; the loops
    leave early (return, break), so the analyser does not count them by
    itself. `max` counts executions of the loop header: the bound + 1."""
    loops = [
        (f"{P}_time_may_pass", 1, nproc, "one per process"),
        (f"{P}_receiver", 1, maxout, "the most edges leaving one location"),
        (f"{P}_step", 1, nproc, "one per process (committed?)"),
        (f"{P}_step", 2, nproc, "one per process (its edges)"),
        (f"{P}_step", 3, maxout, "the most edges leaving one location"),
        (f"{P}_step", 4, nproc, "one per process (binary partner)"),
        (f"{P}_step", 5, nproc, "one per process (broadcast receivers)"),
        (f"{P}_step", 6, nproc, "one per process (receivers' updates)"),
        (f"{P}_step", 7, nproc, "one per process (receivers' moves)"),
        (f"{P}_settle", 1, max_steps, "TA_MAX_STEPS steps per instant"),
    ]
    out = [f"# Loop bounds of the code kairos tatoc generated from {net.path.name}",
           "# (kairos wcet -a; format: docs/wcet.md). Generated: do not edit.", ""]
    for fn, n, bound, why in loops:
        out += ["[[loop]]", f'function = "{fn}"', f"loop = {n}", f"max = {bound + 1}",
                f'note = "{why}: {bound}"', ""]
    return "\n".join(out)


def _drop_unused(text: str, P: str) -> str:
    """Leave out the constant arrays and helpers this model never uses (the
    code is compiled with -Werror, and unused code is noise to a reader)."""
    lines = text.split("\n")
    keep = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"static (?:const int32_t (\w+)\[|int64_t (\w+)\(|const uint8_t (\w+)\[)", line)
        name = next((g for g in m.groups() if g), None) if m else None
        if name and len(re.findall(rf"\b{name}\b", text)) == 1:
            if line.rstrip().endswith(";"):
                i += 1
                continue
            if keep and keep[-1].rstrip().endswith("*/"):  # and its contract
                while keep and not keep[-1].lstrip().startswith("/*@"):
                    keep.pop()
                keep.pop()
            while lines[i] != "}":  # a helper function: skip to its closing brace
                i += 1
            i += 2 if i + 1 < len(lines) and lines[i + 1] == "" else 1
            continue
        keep.append(line)
        i += 1
    return "\n".join(keep)


_BRANCHES = re.compile(r"\?|&&|\|\|")


def _assign_c(em: _Emitter, net: FlatNetwork, u, P: str, tag: str, values: list[str]) -> str:
    """An update, written out so that the range check is in plain sight of
    the prover: out of range sets the error and leaves the variable.

    A value with branches (`?:`, `&&`, `||`: CIL lowers each into an `if`)
    that only reads the state is computed by a function of its own,
    `P_value_TAG`, appended to `values`: `requires \\valid_read(s); assigns
    \\nothing`, proved free of runtime errors on its own. The update then
    sees its result as an unknown int64_t, and since the range check alone
    decides what is stored, the invariant needs nothing more; inline, every
    goal after the store carried every branch of the expression (the
    Scheduler's decision over all servers took Qed 51 s on one goal)."""
    base = u.target.array if isinstance(u.target, Index) else u.target
    assert isinstance(base, Name)
    v = net.vars[base.ident]
    if v.kind == "clock":
        return f"s->{_cname(v.name)} = {u.value.value};"  # type: ignore[union-attr]
    cur = em.expr(u.target)
    value = em.expr(u.value)
    rhs = value if u.op == "=" else f"({cur} {u.op[0]} {value})"
    flat = em.flat_expr(u.value) if _BRANCHES.search(rhs) else None
    if flat is not None:
        rhs = flat if u.op == "=" else f"({cur} {u.op[0]} {flat})"
        # Each field the value reads is loaded once, first, into a local:
        # one memory-access goal per field on a straight path, instead of
        # one per read on every branch CIL makes of the expression.
        fields = list(dict.fromkeys(re.findall(r"s->v_\w+(?:\[\d+\])?", rhs)))
        loads = []
        for k, f in enumerate(fields):
            loads.append(f"    int64_t r{k}_ = {f};")
            rhs = rhs.replace(f"(int64_t){f}", f"r{k}_")
        values += [f"/* The value an update of edge {tag.split('_')[0]} stores in {v.name}. */",
                   "/*@ requires \\valid_read(s);",
                   "    assigns \\nothing; */",
                   f"static int64_t {P}_value_{tag}(const struct {P}_state *s)", "{",
                   *loads, f"    return {rhs};", "}", ""]
        rhs = f"{P}_value_{tag}(s)"
    # A store at a fixed place: the check decides the value stored, not
    # whether to store, and the error goes to a local (err_, stored once at
    # the end of the update function, see generate()). The memory is then one
    # store after another on every path, and WP's simplifier sees that
    # every other field keeps its value; with a store on one branch and a
    # call of ta_fail (which may write s->error) on the other, each
    # unwritten conjunct of the invariant was a prover goal of its own.
    place = None
    if isinstance(u.target, Index) and isinstance(u.target.index, Num) and 0 <= u.target.index.value < v.size:
        place = f"s->{_cname(v.name)}[{u.target.index.value}]"
    elif not isinstance(u.target, Index):
        place = f"s->{_cname(v.name)}"
    if place is not None:
        return (f"{{ int64_t v_ = {rhs}; int32_t w_ = {place}; "
                f"if (v_ < {v.lo} || v_ > {v.hi}) err_ = {P.upper()}_ERR_RANGE; else w_ = (int32_t)v_; "
                f"{place} = w_; }}")
    # A computed index: the place itself is checked; out of range, nothing
    # is stored (ta_fail records the error).
    idx = em.expr(u.target.index)
    return (f"{{ int64_t i_ = {idx}; int64_t v_ = {rhs}; "
            f"if (i_ < 0 || i_ >= {v.size} || v_ < {v.lo} || v_ > {v.hi}) {P}_fail(s, {P.upper()}_ERR_RANGE); "
            f"else s->{_cname(v.name)}[i_] = (int32_t)v_; }}")


def _assigned(net: FlatNetwork, e) -> list[str]:
    """The state fields an edge's updates may write (for its assigns clause)."""
    out: list[str] = []
    for u in e.updates:
        base = u.target.array if isinstance(u.target, Index) else u.target
        v = net.vars[base.ident]
        if not v.size:
            loc = f"s->{_cname(v.name)}"
        elif isinstance(u.target, Index) and isinstance(u.target.index, Num) and 0 <= u.target.index.value < v.size:
            loc = f"s->{_cname(v.name)}[{u.target.index.value}]"
        else:
            loc = f"s->{_cname(v.name)}[0 .. {v.size - 1}]"
        if loc not in out:
            out.append(loc)
    return out


def _indexed_by_value(net: FlatNetwork) -> set[str]:
    """The arrays some guard, update or invariant indexes by anything but a
    constant in range (the generated code reaches those through a checked
    index)."""
    found: set[str] = set()
    todo: list[object] = []
    for e in net.edges:
        todo.append(e.guard)
        for u in e.updates:
            todo += [u.target, u.value]
    for inst in net.instances:
        todo += list(inst.invariants)
    while todo:
        x = todo.pop()
        if isinstance(x, Index) and isinstance(x.array, Name):
            size = net.vars[x.array.ident].size if x.array.ident in net.vars else None
            if not (isinstance(x.index, Num) and size is not None and 0 <= x.index.value < size):
                found.add(x.array.ident)
        if hasattr(x, "__dataclass_fields__"):
            todo += [getattr(x, f) for f in x.__dataclass_fields__]  # type: ignore[union-attr]
    return found


def _valid_predicate(net: FlatNetwork, P: str, ints: list, clocks: list) -> tuple[list[str], list[str]]:
    """What every function keeps true: locations index the tables, and every
    variable is in its declared range (clocks up to where they stop)."""
    # One conjunct per array element rather than a \forall over the array:
    # the arrays have a few constant elements, and quantifier-free
    # conjuncts are what WP's simplifier (Qed) settles by itself. A function
    # that writes budget[0] leaves the conjunct on budget[1] over a memory
    # where read-over-write at another constant offset simplifies away, so
    # Qed proves it in milliseconds; under a \forall the same conjunct was a
    # quantified goal for CVC4 in every function (the same property: the
    # arrays have exactly these elements).
    # An array the code indexes by a computed value keeps its \forall (a
    # per-element form would make the prover split cases on the index); so
    # does loc[], which the engine indexes by process number (and which lives
    # in memory no update function writes, so its \forall is framed by Qed).
    by_value = _indexed_by_value(net)
    parts = [r"\valid(s)",
             rf"(\forall integer i_; 0 <= i_ < {P.upper()}_NPROC ==> s->loc[i_] < {P.upper()}_MAXLOC)"]
    for v in ints:
        n = _cname(v.name)
        if v.size and v.name in by_value:
            parts.append(rf"(\forall integer k; 0 <= k < {v.size} ==> {v.lo} <= s->{n}[k] <= {v.hi})")
        elif v.size:
            parts += [f"{v.lo} <= s->{n}[{k}] <= {v.hi}" for k in range(v.size)]
        else:
            parts.append(f"{v.lo} <= s->{n} <= {v.hi}")
    for v in clocks:
        parts.append(f"0 <= s->{_cname(v.name)} <= {net.clock_max.get(v.name, 0) + 1}")
    # The invariant is one ACSL predicate, ta_valid, in every contract and
    # loop invariant: where a function only passes the state on (the engine,
    # the dispatch of updates), requires, ensures and loop invariants are the
    # same predicate over the same or a framed memory, which WP's simplifier
    # (Qed) closes without a prover, as one goal instead of one per conjunct.
    # A function that writes the state brackets its writes with two lemma
    # functions (empty C functions with a contract; -O2 inlines them to
    # nothing): ta_unfold (requires the predicate, ensures each conjunct) at
    # entry and ta_fold (requires each conjunct, ensures the predicate)
    # before returning. The call to ta_fold leaves one goal per conjunct
    # over the written memory, which Qed settles by read-over-write for the
    # fields the function did not write, a prover for the few it wrote; the
    # two lemma functions' own proofs are the only goals that open the
    # predicate, over a memory nothing has written. (An `ensures
    # ta_valid(s)` proved directly after ta_init's 45 stores timed out in
    # CVC4; as macros, one clause per conjunct everywhere, the tasched-3x6
    # code had over 4,000 goals and the engine's pass-through goals took Qed
    # about a second each.)
    return parts, ["/* ACSL only (contracts): the state invariant (docs/timed-automata.md",
            " * \"Proofs of the generated code\"). */",
            f"#define {P.upper()}_VALID(s) \\", "    (" + " \\\n     && ".join(parts) + ")",
            f"/*@ predicate {P}_valid(struct {P}_state *s) = {P.upper()}_VALID(s); */",
            f"#define {P.upper()}_ENSURES_VALID ensures {P}_valid(s);",
            f"#define {P.upper()}_INVARIANT_VALID loop invariant {P}_valid(s);",
            "/* Lemma functions: no code, a contract each (inlined to nothing). */",
            "/*@ requires " + f"{P}_valid(s);",
            "    assigns \\nothing;",
            *[f"    ensures {x};" for x in parts],
            "*/",
            f"static inline void {P}_unfold(struct {P}_state *s)", "{", "    (void)s;", "}", "",
            "/*@", *[f"    requires {x};" for x in parts],
            "    assigns \\nothing;",
            f"    ensures {P}_valid(s); */",
            f"static inline void {P}_fold(struct {P}_state *s)", "{", "    (void)s;", "}", ""]


def _engine(net: FlatNetwork, P: str, clocks: list, ints: list, pure: bool, vparts: list[str]) -> list[str]:
    N = f"{P.upper()}_NPROC"
    V = f"{P}_valid(s)"
    EV = f"{P.upper()}_ENSURES_VALID"  # ensures V
    LV = f"{P.upper()}_INVARIANT_VALID"  # loop invariant V
    out = [f"/*@ requires \\valid(s);", "    assigns *s;", f"    ensures s->error == 0; {EV} */",
           f"void {P}_init(struct {P}_state *s)", "{"]
    for i, inst in enumerate(net.instances):
        out.append(f"    s->loc[{i}] = {inst.init};")
    for v in ints:
        if v.size:
            for k, x in enumerate(v.init):
                out.append(f"    s->{_cname(v.name)}[{k}] = {x};")
        else:
            out.append(f"    s->{_cname(v.name)} = {v.init[0]};")
    for v in clocks:
        out.append(f"    s->{_cname(v.name)} = 0;")
    out += ["    s->error = 0;", f"    {P}_fold(s);", "}", ""]
    # Time may pass: nobody urgent or committed, every invariant holds one
    # time unit later.
    tmp_at = len(out)
    out += [f"static bool {P}_time_may_pass(struct {P}_state *s)", "{",
            f"    /*@ loop invariant 0 <= p <= {N};",
            "        loop assigns p;",
            f"        loop variant {N} - p; */",
            f"    for (int p = 0; p < {N}; p++)",
            f"        if ({P}_locflags[p][s->loc[p]] != 0)",
            "            return false;"]
    em = _Emitter(net, P)
    for i, inst in enumerate(net.instances):
        for j, inv in enumerate(inst.invariants):
            if inv is None:
                continue
            text = em.expr(inv)
            for v in clocks:
                cap = net.clock_max.get(v.name, 0) + 1
                text = text.replace(f"(int64_t)s->{_cname(v.name)}",
                                    f"(int64_t)(s->{_cname(v.name)} < {cap} ? s->{_cname(v.name)} + 1 : {cap})")
            out.append(f"    if (s->loc[{i}] == {j} && !({text}))")
            out.append("        return false;")
    out += ["    return true;", "}", ""]
    # Read-only unless an invariant needs a checked index or division.
    tmp_pure = not any(f"{P}_{h}(" in line for line in out[tmp_at:] for h in ("read", "div", "mod"))
    out[tmp_at:tmp_at] = ([f"/*@ requires {V};", "    assigns \\nothing; */"] if tmp_pure
                          else [f"/*@ requires {V};", "    assigns s->error;", f"    {EV} */"])
    # What the edge scans write: nothing when the guards are read-only (the
    # invariant then holds through the loops by the frame, no loop
    # invariant needed), else s->error.
    scan_assigns = "" if pure else ", s->error"
    scan_lv = "" if pure else f" {LV}"
    rx_assigns = "\\nothing" if pure else "s->error"
    rx_ev = "" if pure else f" {EV}"
    out += [f"/*@ requires {V} && 0 <= p < {N};", "    assigns \\nothing; */",
            f"static bool {P}_committed(struct {P}_state *s, int p)",
            "{", f"    return ({P}_locflags[p][s->loc[p]] & 1) != 0;", "}", "",
            "/* The first enabled edge of process q receiving on channel ch, or -1. */",
            f"/*@ requires {V} && 0 <= q < {N};",
            f"    assigns {rx_assigns};",
            f"    ensures -1 <= \\result < {P.upper()}_NEDGES;{rx_ev} */",
            f"static int {P}_receiver(struct {P}_state *s, int q, int16_t ch)",
            "{",
            f"    uint16_t first = {P}_out_first[q][s->loc[q]];",
            f"    /*@ loop invariant 0 <= k;{scan_lv}",
            f"        loop assigns k{scan_assigns};",
            "        loop variant 255 - k; */",
            f"    for (int k = 0; k < {P}_out_count[q][s->loc[q]]; k++) {{",
            f"        if (first + k >= {P.upper()}_NOUT)",
            "            break; /* cannot happen: the tables are generated consistent */",
            f"        uint16_t e = {P}_out[first + k];",
            f"        if (e < {P.upper()}_NEDGES && {P}_edge_chan[e] == ch && {P}_edge_dir[e] == 2 && {P}_guard(s, e))",
            "            return e;",
            "    }",
            "    return -1;",
            "}", "",
            f"/* Move process p along edge e (its target is a location of p by",
            f" * construction; checked so that no table can break the state). */",
            f"/*@ requires {V} && 0 <= p < {N} && 0 <= e < {P.upper()}_NEDGES;",
            "    assigns s->loc[p], s->error;",
            f"    {EV} */",
            f"static void {P}_move(struct {P}_state *s, int p, int e)",
            "{",
            f"    {P}_unfold(s);",
            f"    if ({P}_edge_target[e] < {P.upper()}_MAXLOC)",
            f"        s->loc[p] = {P}_edge_target[e];",
            "    else",
            f"        {P}_fail(s, {P.upper()}_ERR_RANGE);",
            f"    {P}_fold(s);",
            "}", "",
            "/* Fire the first possible step; false if there is none. */",
            f"/*@ requires {V};", "    assigns *s;", f"    {EV} */",
            f"static bool {P}_step(struct {P}_state *s)",
            "{",
            "    bool any_committed = false;",
            f"    /*@ loop invariant 0 <= p <= {N};",
            "        loop assigns p, any_committed;",
            f"        loop variant {N} - p; */",
            f"    for (int p = 0; p < {N}; p++)",
            f"        any_committed = any_committed || {P}_committed(s, p);",
            f"    /*@ loop invariant 0 <= p <= {N};{scan_lv}",
            f"        loop assigns p{scan_assigns};",
            f"        loop variant {N} - p; */",
            f"    for (int p = 0; p < {N}; p++) {{",
            f"        uint16_t first = {P}_out_first[p][s->loc[p]];",
            f"        /*@ loop invariant 0 <= k;{scan_lv}",
            f"            loop assigns k{scan_assigns};",
            "            loop variant 255 - k; */",
            f"        for (int k = 0; k < {P}_out_count[p][s->loc[p]]; k++) {{",
            f"            if (first + k >= {P.upper()}_NOUT)",
            "                break; /* cannot happen: the tables are generated consistent */",
            f"            uint16_t e = {P}_out[first + k];",
            f"            if (e >= {P.upper()}_NEDGES)",
            "                break; /* cannot happen, as above */",
            f"            int16_t ch = {P}_edge_chan[e];",
            f"            if ({P}_edge_dir[e] == 2 || !{P}_guard(s, e))",
            "                continue;",
            "            if (ch < 0) {",
            f"                if (any_committed && !{P}_committed(s, p))",
            "                    continue;",
            f"                {P}_update(s, e);",
            f"                {P}_move(s, p, e);",
            "                return true;",
            "            }",
            f"            if (ch >= {P.upper()}_NCHAN)",
            "                break; /* cannot happen, as above */",
            f"            if (!{P}_chan_broadcast[ch]) {{",
            f"                /*@ loop invariant 0 <= q <= {N};{scan_lv}",
            f"                    loop assigns q{scan_assigns};",
            f"                    loop variant {N} - q; */",
            f"                for (int q = 0; q < {N}; q++) {{",
            "                    if (q == p)",
            "                        continue;",
            f"                    int r = {P}_receiver(s, q, ch);",
            f"                    if (r < 0 || (any_committed && !{P}_committed(s, p) && !{P}_committed(s, q)))",
            "                        continue;",
            f"                    {P}_update(s, e);",
            f"                    {P}_update(s, (uint16_t)r);",
            f"                    {P}_move(s, p, e);",
            f"                    {P}_move(s, q, r);",
            "                    return true;",
            "                }",
            "                continue;",
            "            }",
            "            /* Broadcast: the receivers are chosen in the state before the",
            "             * step; the sender's updates come first. */",
            f"            int rx[{N}];",
            "            bool rx_committed = false;",
            f"            /*@ loop invariant 0 <= q <= {N};{scan_lv}",
            f"                loop invariant \\forall integer j; 0 <= j < q ==> -1 <= rx[j] < {P.upper()}_NEDGES;",
            f"                loop assigns q, rx[0 .. q], rx_committed{scan_assigns};",
            f"                loop variant {N} - q; */",
            f"            for (int q = 0; q < {N}; q++) {{",
            f"                rx[q] = q == p ? -1 : {P}_receiver(s, q, ch);",
            f"                rx_committed = rx_committed || (rx[q] >= 0 && {P}_committed(s, q));",
            "            }",
            f"            if (any_committed && !{P}_committed(s, p) && !rx_committed)",
            "                continue;",
            f"            {P}_update(s, e);",
            f"            /*@ loop invariant 0 <= q <= {N}; {LV}",
            "                loop assigns q, *s;",
            f"                loop variant {N} - q; */",
            f"            for (int q = 0; q < {N}; q++)",
            "                if (rx[q] >= 0)",
            f"                    {P}_update(s, (uint16_t)rx[q]);",
            f"            {P}_move(s, p, e);",
            f"            /*@ loop invariant 0 <= q <= {N}; {LV}",
            "                loop assigns q, s->loc[0 .. {N} - 1], s->error;".replace("{N}", N),
            f"                loop variant {N} - q; */",
            f"            for (int q = 0; q < {N}; q++)",
            "                if (rx[q] >= 0)",
            f"                    {P}_move(s, q, rx[q]);",
            "            return true;",
            "        }",
            "    }",
            "    return false;",
            "}", "",
            f"/*@ requires {V};", "    assigns *s;", f"    {EV} */",
            f"int {P}_settle(struct {P}_state *s)",
            "{",
            f"    /*@ loop invariant 0 <= n <= {P.upper()}_MAX_STEPS; {LV}",
            "        loop assigns n, *s;",
            f"        loop variant {P.upper()}_MAX_STEPS - n; */",
            f"    for (int n = 0; n < {P.upper()}_MAX_STEPS; n++) {{",
            "        if (s->error != 0)",
            "            return s->error;",
            f"        if (!{P}_step(s))",
            "            return s->error;",
            "    }",
            f"    {P}_unfold(s);",
            f"    {P}_fail(s, {P.upper()}_ERR_ZENO);",
            f"    {P}_fold(s);",
            "    return s->error;",
            "}", "",
            f"/*@ requires {V};", "    assigns *s;", f"    {EV} */",
            f"int {P}_tick(struct {P}_state *s)",
            "{",
            "    if (s->error != 0)",
            "        return s->error;",
            f"    {P}_unfold(s);",
            f"    if (!{P}_time_may_pass(s)) {{",
            f"        {P}_fail(s, {P.upper()}_ERR_TIMELOCK);",
            f"        {P}_fold(s);",
            "        return s->error;",
            "    }"]
    for v in clocks:
        cap = net.clock_max.get(v.name, 0) + 1
        out.append(f"    if (s->{_cname(v.name)} < {cap})")
        out.append(f"        s->{_cname(v.name)}++;")
    out += [f"    {P}_fold(s);", f"    return {P}_settle(s);", "}"]
    return out


def write(net: FlatNetwork, outdir: Path, prefix: str = "ta", max_steps: int = 64) -> list[Path]:
    """Write the header, the source and the loop bounds for kairos wcet;
    nothing is written if generation fails."""
    g = generate(net, prefix, max_steps)
    outdir.mkdir(parents=True, exist_ok=True)
    hp, cp = outdir / f"{prefix}_sched.h", outdir / f"{prefix}_sched.c"
    wp = outdir / f"{prefix}_sched.wcet.toml"
    hp.write_text(g.header + "\n")
    cp.write_text(g.source)
    wp.write_text(g.wcet)
    return [hp, cp, wp]
