"""Expressions of the UPPAAL subset: tokens, a precedence-climbing parser, and
the operations the later stages need on the tree (constant folding, renaming,
quantifier expansion, printing as C/Promela).

The subset: integer and boolean literals, identifiers, array indexing,
`Process.name` references (a location or a local variable of an instance, in
queries), unary `- ! not`, binary `* / % + - < <= == != >= > && || and or
imply`, the conditional `c ? a : b`, and the bounded quantifiers
`forall (i : int[lo,hi]) e` / `exists (i : int[lo,hi]) e`. Updates are
`x = e`, `x := e`, `x += e`, `x -= e`, `x++`, `x--` on scalars or array
elements. This is the part of the UPPAAL language the scheduler models use
(UPPAAL 4 manual, "Expressions"); functions and records are rejected with an
error naming the construct.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterator


class TaSyntaxError(Exception):
    """A malformed or unsupported expression; the message names the problem."""


# ---- tree ----

@dataclass(frozen=True)
class Num:
    value: int


@dataclass(frozen=True)
class Name:
    ident: str


@dataclass(frozen=True)
class Dot:
    """`Process.member` (queries only): a location or local variable."""
    process: str
    member: str


@dataclass(frozen=True)
class Index:
    array: "Expr"
    index: "Expr"


@dataclass(frozen=True)
class Unary:
    op: str  # "-" or "!"
    arg: "Expr"


@dataclass(frozen=True)
class Binary:
    op: str  # C spelling: * / % + - < <= == != >= > && || and "imply" as "->"
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True)
class Cond:
    test: "Expr"
    then: "Expr"
    other: "Expr"


@dataclass(frozen=True)
class Quant:
    kind: str  # "forall" or "exists"
    var: str
    lo: "Expr"
    hi: "Expr"
    body: "Expr"


Expr = Num | Name | Dot | Index | Unary | Binary | Cond | Quant


@dataclass(frozen=True)
class Update:
    """`target op value`; op is "=", "+=" or "-=" (x++ is x += 1)."""
    target: Expr  # Name or Index
    op: str
    value: Expr


# ---- tokens ----

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>\d+)
  | (?P<ident>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op>:=|\+\+|--|\+=|-=|==|!=|<=|>=|&&|\|\||[-+*/%<>!?:()\[\],.=;])
""", re.VERBOSE)

_KEYWORD_OPS = {"and": "&&", "or": "||", "not": "!", "imply": "->"}


@dataclass
class _Tokens:
    text: str
    items: list[str] = field(default_factory=list)
    pos: int = 0

    def peek(self, ahead: int = 0) -> str | None:
        i = self.pos + ahead
        return self.items[i] if i < len(self.items) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None:
            raise TaSyntaxError(f"unexpected end of '{self.text}'")
        if expected is not None and tok != expected:
            raise TaSyntaxError(f"expected '{expected}' but found '{tok}' in '{self.text}'")
        self.pos += 1
        return tok

    def done(self) -> bool:
        return self.pos >= len(self.items)


def tokenize(text: str) -> _Tokens:
    items: list[str] = []
    i = 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if not m:
            raise TaSyntaxError(f"unexpected character '{text[i]}' in '{text}'")
        i = m.end()
        if m.lastgroup == "ws":
            continue
        tok = m.group()
        items.append(_KEYWORD_OPS.get(tok, tok))
    return _Tokens(text, items)


# ---- parser (precedence climbing; UPPAAL/C precedences) ----

_BINARY_PRECEDENCE = {
    "->": 1, "||": 2, "&&": 3,
    "==": 4, "!=": 4,
    "<": 5, "<=": 5, ">": 5, ">=": 5,
    "+": 6, "-": 6,
    "*": 7, "/": 7, "%": 7,
}
_UNSUPPORTED_WORDS = {"sum": "the sum quantifier", "return": "functions", "struct": "records",
                      "typedef": "type definitions"}


def _is_ident(tok: str | None) -> bool:
    return tok is not None and re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", tok) is not None


def _parse_cond(ts: _Tokens) -> Expr:
    test = _climb(ts, _parse_unary(ts), 1)
    if ts.peek() == "?":
        ts.take("?")
        then = _parse_cond(ts)
        ts.take(":")
        other = _parse_cond(ts)
        return Cond(test, then, other)
    return test


def _climb(ts: _Tokens, left: Expr, min_prec: int) -> Expr:
    while True:
        op = ts.peek()
        prec = _BINARY_PRECEDENCE.get(op or "")
        if prec is None or prec < min_prec:
            return left
        ts.take()
        # "->" (imply) is right-associative, everything else left.
        right = _climb(ts, _parse_unary(ts), prec if op == "->" else prec + 1)
        left = Binary(op, left, right)  # type: ignore[arg-type]


def _parse_unary(ts: _Tokens) -> Expr:
    tok = ts.peek()
    if tok == "-":
        ts.take()
        return Unary("-", _parse_unary(ts))
    if tok == "!":
        ts.take()
        return Unary("!", _parse_unary(ts))
    if tok in ("forall", "exists"):
        ts.take()
        ts.take("(")
        var = ts.take()
        if not _is_ident(var):
            raise TaSyntaxError(f"expected a variable after {tok} in '{ts.text}'")
        ts.take(":")
        lo, hi = parse_range_type(ts)
        ts.take(")")
        body = _parse_unary(ts) if ts.peek() == "(" else _parse_cond(ts)
        return Quant(tok, var, lo, hi, body)
    return _parse_postfix(ts)


def parse_range_type(ts: _Tokens) -> tuple[Expr, Expr]:
    """`int[lo,hi]` (the tokens after the colon of a quantifier or select)."""
    ts.take("int")
    ts.take("[")
    lo = _parse_cond(ts)
    ts.take(",")
    hi = _parse_cond(ts)
    ts.take("]")
    return lo, hi


def _parse_postfix(ts: _Tokens) -> Expr:
    e = _parse_primary(ts)
    while ts.peek() in ("[", "."):
        if ts.take() == "[":
            idx = _parse_cond(ts)
            ts.take("]")
            e = Index(e, idx)
        else:
            member = ts.take()
            if not isinstance(e, Name) or not _is_ident(member):
                raise TaSyntaxError(f"bad '.' reference in '{ts.text}'")
            e = Dot(e.ident, member)
    return e


def _parse_primary(ts: _Tokens) -> Expr:
    tok = ts.take()
    if tok == "(":
        e = _parse_cond(ts)
        ts.take(")")
        return e
    if tok.isdigit():
        return Num(int(tok))
    if tok == "true":
        return Num(1)
    if tok == "false":
        return Num(0)
    if tok in _UNSUPPORTED_WORDS:
        raise TaSyntaxError(f"unsupported: {_UNSUPPORTED_WORDS[tok]} ('{tok}' in '{ts.text}')")
    if _is_ident(tok):
        if ts.peek() == "(":
            raise TaSyntaxError(f"unsupported: function call '{tok}(...)' in '{ts.text}'")
        return Name(tok)
    raise TaSyntaxError(f"unexpected '{tok}' in '{ts.text}'")


def parse_expr(text: str) -> Expr:
    ts = tokenize(text)
    e = _parse_cond(ts)
    if not ts.done():
        raise TaSyntaxError(f"unexpected '{ts.peek()}' in '{text}'")
    return e


def parse_guard(text: str) -> Expr | None:
    """A guard or invariant label; empty means true."""
    return None if not text.strip() else parse_expr(text)


def parse_updates(text: str) -> list[Update]:
    """A comma-separated assignment label."""
    ts = tokenize(text)
    updates: list[Update] = []
    while not ts.done():
        target = _parse_postfix(ts)
        if not isinstance(target, (Name, Index)):
            raise TaSyntaxError(f"cannot assign to an expression in '{text}'")
        op = ts.take()
        if op in ("=", ":="):
            updates.append(Update(target, "=", _parse_cond(ts)))
        elif op in ("+=", "-="):
            updates.append(Update(target, op, _parse_cond(ts)))
        elif op in ("++", "--"):
            updates.append(Update(target, "+=" if op == "++" else "-=", Num(1)))
        else:
            raise TaSyntaxError(f"expected an assignment operator, found '{op}' in '{text}'")
        if not ts.done():
            ts.take(",")
    return updates


# ---- operations on trees ----

def walk(e: Expr) -> Iterator[Expr]:
    yield e
    match e:
        case Index(a, i):
            yield from walk(a)
            yield from walk(i)
        case Unary(_, a):
            yield from walk(a)
        case Binary(_, a, b):
            yield from walk(a)
            yield from walk(b)
        case Cond(t, a, b):
            yield from walk(t)
            yield from walk(a)
            yield from walk(b)
        case Quant(_, _, lo, hi, body):
            yield from walk(lo)
            yield from walk(hi)
            yield from walk(body)


def substitute(e: Expr, env: dict[str, Expr]) -> Expr:
    """Replace free names by expressions (template parameters, select and
    quantifier variables)."""
    match e:
        case Num() | Dot():
            return e
        case Name(ident):
            return env.get(ident, e)
        case Index(a, i):
            return Index(substitute(a, env), substitute(i, env))
        case Unary(op, a):
            return Unary(op, substitute(a, env))
        case Binary(op, a, b):
            return Binary(op, substitute(a, env), substitute(b, env))
        case Cond(t, a, b):
            return Cond(substitute(t, env), substitute(a, env), substitute(b, env))
        case Quant(kind, var, lo, hi, body):
            inner = {k: v for k, v in env.items() if k != var}
            return Quant(kind, var, substitute(lo, env), substitute(hi, env), substitute(body, inner))
    raise TypeError(e)


_FOLD: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b), "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b), ">=": lambda a, b: int(a >= b), ">": lambda a, b: int(a > b),
    "&&": lambda a, b: int(bool(a) and bool(b)), "||": lambda a, b: int(bool(a) or bool(b)),
    "->": lambda a, b: int((not a) or bool(b)),
}


def fold(e: Expr, arrays: dict[str, list[int]] | None = None) -> Expr:
    """Constant folding, expansion of quantifiers whose bounds fold to numbers
    (so that the translations never see a quantifier), and, given `arrays`
    (constant arrays by name), their elements at constant indices."""
    arrays = arrays or {}
    match e:
        case Num() | Name() | Dot():
            return e
        case Index(a, i):
            a, i = fold(a, arrays), fold(i, arrays)
            if isinstance(a, Name) and a.ident in arrays and isinstance(i, Num):
                values = arrays[a.ident]
                if not 0 <= i.value < len(values):
                    raise TaSyntaxError(f"index {i.value} outside {a.ident}[{len(values)}]")
                return Num(values[i.value])
            return Index(a, i)
        case Unary(op, a):
            a = fold(a, arrays)
            if isinstance(a, Num):
                return Num(-a.value if op == "-" else int(not a.value))
            return Unary(op, a)
        case Binary(op, a, b):
            a, b = fold(a, arrays), fold(b, arrays)
            if isinstance(a, Num) and isinstance(b, Num):
                if op in ("/", "%"):
                    if b.value == 0:
                        raise TaSyntaxError("division by zero in a constant expression")
                    q = abs(a.value) // abs(b.value) * (1 if (a.value >= 0) == (b.value > 0) else -1)
                    return Num(q if op == "/" else a.value - q * b.value)
                return Num(_FOLD[op](a.value, b.value))
            return Binary(op, a, b)
        case Cond(t, a, b):
            t = fold(t, arrays)
            if isinstance(t, Num):
                return fold(a, arrays) if t.value else fold(b, arrays)
            return Cond(t, fold(a, arrays), fold(b, arrays))
        case Quant(kind, var, lo, hi, body):
            lo, hi = fold(lo, arrays), fold(hi, arrays)
            if not (isinstance(lo, Num) and isinstance(hi, Num)):
                raise TaSyntaxError(f"{kind} over a range that is not constant")
            parts = [fold(substitute(body, {var: Num(v)}), arrays) for v in range(lo.value, hi.value + 1)]
            op = "&&" if kind == "forall" else "||"
            if not parts:
                return Num(1 if kind == "forall" else 0)
            acc = parts[0]
            for p in parts[1:]:
                acc = fold(Binary(op, acc, p), arrays)
            return acc
    raise TypeError(e)


def const_value(e: Expr, what: str) -> int:
    v = fold(e)
    if not isinstance(v, Num):
        raise TaSyntaxError(f"{what} is not a constant expression")
    return v.value


_C_PRECEDENCE = {**_BINARY_PRECEDENCE, "->": 2}


def render(e: Expr, name: Callable[[str], str], dot: Callable[[str, str], str] | None = None) -> str:
    """C/Promela text (fully parenthesised, so no precedence questions);
    `name` maps a variable to its target spelling, `dot` a Process.member."""
    match e:
        case Num(v):
            return str(v)
        case Name(ident):
            return name(ident)
        case Dot(p, m):
            if dot is None:
                raise TaSyntaxError(f"'{p}.{m}' is only allowed in queries")
            return dot(p, m)
        case Index(a, i):
            return f"{render(a, name, dot)}[{render(i, name, dot)}]"
        case Unary(op, a):
            return f"({op}{render(a, name, dot)})"
        case Binary("->", a, b):
            return f"((!{render(a, name, dot)}) || {render(b, name, dot)})"
        case Binary(op, a, b):
            return f"({render(a, name, dot)} {op} {render(b, name, dot)})"
        case Cond(t, a, b):
            return f"({render(t, name, dot)} -> {render(a, name, dot)} : {render(b, name, dot)})"
        case Quant():
            raise TaSyntaxError("quantifier left after folding")
    raise TypeError(e)
