"""Loop bounds stated in the program's C sources: ``loopbound`` pragmas.

The WCET benchmark suites (TACLeBench, and the WCC compiler's convention
that other WCET tools read) state each loop's bound in the source, directly
before the loop statement::

    _Pragma( "loopbound min 0 max 16" )
    while ( lo <= hi ) { ... }

    #pragma loopbound min 4 max 4
    for ( i = 0; i < n; i++ ) ...

``max`` is the most *body iterations* per entry into the loop.  The
analyser's bound counts executions of the binary loop's header per entry
(``annotations``): at most one more than the body iterations (the test at
the top runs once more than the body; GCC's rotated loops, test at the
bottom, run the header once per iteration), so a pragma gives the header
bound ``max + 1``; the solver's check (``bounds``) may prove less.

Mapping a binary loop to its source loop (``SourceBounds.match``), from
the DWARF lines of the loop's *own* instructions (``anchors``: those not in
an inner loop) and a statement-level parse of the C file:

1. Every token of the file belongs to the innermost loop statement whose
   extent (keyword to the end of its body) holds it; a line's *owners* are
   the loop statements with a token on it.
2. The candidates of a binary loop are the owners of the lines of its
   *control*: the last instruction of each of its own blocks that exits
   the loop or closes an iteration (GCC gives a branch the line of the
   condition it tests; the body's code may carry other loops' lines, such
   as an inner loop's guard or a reload of an outer loop's variable).
3. Exactly one candidate; one of those control lines is a line of
   that statement's head (``for (...)``, ``while (...)``, a do-while's
   tail; a loop whose condition is empty or constant has no head code and
   is exempt); and the line of the binary loop's header belongs to no other
   loop statement, except as the head of a loop nested in it (its
   initialisation): so the header runs once per iteration of that
   statement, plus the final test: that statement is the loop; its
   pragma, if any, bounds it.

Where GCC gives a loop's exit or latch the line of another loop's head
(TACLeBench's cubic: an inner loop's guard ends an outer iteration), the
loop has two candidates and gets no bound from the pragmas, rather than a
guess.  No own line may use a macro that contains a loop, and every file of
its own lines must be readable.

Anything else gives no bound from the pragmas, with the reason (shown by
``--loops`` and in the unbounded-loop error): two source loops could be the
binary loop (two loops on one line), a line of a macro that contains a
loop, a source file that cannot be found, no loop statement on the lines
of the loop's control (a loop GCC made from a recursion).  Loop statements
inside ``#define`` are not read.  A malformed loopbound pragma in a file the
analysis reads is an error naming its file and line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from kairos.wcet.errors import WcetError

#: files read per translation unit for macros through ``#include "..."``
MAX_INCLUDE_FILES = 64
MAX_INCLUDE_DEPTH = 4

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<number>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<punct>->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^!~<>=]=?|[()\[\]{};:,.?#\\])
  | (?P<other>.)
""", re.S | re.X)

_PRAGMA = re.compile(r"^\s*loopbound\b(.*)$", re.S)
_PRAGMA_ARGS = re.compile(r"^\s+min\s+(\d+)\s+max\s+(\d+)\s*$")
_LOOP_WORD = re.compile(r"\b(for|while|do)\b")


@dataclass(frozen=True)
class Pragma:
    file: str          # as DWARF names it
    line: int
    min: int
    max: int           # body iterations per entry into the loop

    @property
    def place(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line}"


@dataclass(eq=False)
class SourceLoop:
    kind: str                      # for, while, do
    line: int                      # line of the keyword
    head: frozenset[int]           # lines of the head (for/while (...), do-while's tail)
    first: int                     # token range [first, last) of the statement
    last: int = 0
    parent: "SourceLoop | None" = None
    pragma: Pragma | None = None
    constant: bool = False         # empty or constant condition: no head code

    def describe(self, file: str) -> str:
        return f"{self.kind} at {os.path.basename(file)}:{self.line}"


@dataclass
class SourceModel:
    """The loop statements of one C file and which of them own each line."""
    file: str
    loops: list[SourceLoop] = field(default_factory=list)
    owners: dict[int, set] = field(default_factory=dict)      # line -> {SourceLoop}
    macro_lines: set[int] = field(default_factory=set)         # lines using a macro with a loop
    stray: list[Pragma] = field(default_factory=list)          # loopbound pragmas before no loop
    deep: bool = False                                         # too deeply nested to parse


MACRO = "macro"


@dataclass
class Match:
    """What the pragmas say about one binary loop."""
    loop: SourceLoop | None = None
    file: str = ""
    why: str = ""                  # when no pragma bounds the loop
    candidates: frozenset = frozenset()

    @property
    def pragma(self) -> Pragma | None:
        return self.loop.pragma if self.loop is not None else None


def _tokens(text: str, path: str):
    """(kind, text, line) tokens; preprocessor lines are gone except
    ``#pragma loopbound`` (a ``pragma`` token); ``_Pragma("...")`` is one
    ``pragma`` token too.  Also returns the names of macros whose
    definition contains a loop keyword, and the ``#include "..."`` names."""
    toks: list[tuple[str, str, int]] = []
    loop_macros: set[str] = set()
    includes: list[str] = []
    line = 1
    at_line_start = True
    pos = 0
    n = len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        kind = m.lastgroup
        s = m.group()
        if kind == "punct" and s == "#" and at_line_start:
            # a preprocessor line, with its continuations
            end = pos
            while True:
                nl = text.find("\n", end)
                if nl < 0:
                    nl = n
                if nl > 0 and text[nl - 1] == "\\" and nl < n:
                    end = nl + 1
                    continue
                break
            directive = text[pos + 1:nl]
            _directive(directive, line, path, toks, loop_macros, includes)
            line += text.count("\n", pos, nl)
            pos = nl
            continue
        if kind == "nl":
            at_line_start = True
        elif kind not in ("ws", "comment"):
            at_line_start = False
        if kind in ("nl", "ws", "comment"):
            if kind == "comment":
                line += s.count("\n")
            else:
                line += s == "\n"
            pos = m.end()
            continue
        toks.append((kind, s, line))
        line += s.count("\n")
        pos = m.end()
    # _Pragma ( "text" ) -> one pragma token
    out: list[tuple[str, str, int]] = []
    i = 0
    while i < len(toks):
        k, s, ln = toks[i]
        if k == "ident" and s == "_Pragma" and i + 3 < len(toks) and toks[i + 1][1] == "(" \
                and toks[i + 2][0] == "string" and toks[i + 3][1] == ")":
            body = toks[i + 2][1][1:-1].encode().decode("unicode_escape", errors="replace")
            out.append(("pragma", body, ln))
            i += 4
            continue
        out.append(toks[i])
        i += 1
    return out, loop_macros, includes


def _directive(d: str, line: int, path: str, toks: list, loop_macros: set[str], includes: list[str]) -> None:
    body = re.sub(r"/\*.*?\*/|//[^\n]*", " ", d.replace("\\\n", " "), flags=re.S).strip()
    m = re.match(r"(\w+)\s*(.*)$", body, re.S)
    if not m:
        return
    word, rest = m.group(1), m.group(2)
    if word == "pragma":
        toks.append(("pragma", rest, line))
    elif word == "define":
        dm = re.match(r"([A-Za-z_]\w*)(.*)$", rest, re.S)
        if dm and _LOOP_WORD.search(re.sub(r'"(?:\\.|[^"\\])*"', "", dm.group(2))):
            loop_macros.add(dm.group(1))
    elif word == "include":
        im = re.match(r'"([^"]+)"', rest)
        if im:
            includes.append(im.group(1))


def _parse_pragma(text: str, path: str, line: int) -> Pragma | None:
    m = _PRAGMA.match(text)
    if not m:
        return None
    a = _PRAGMA_ARGS.match(m.group(1))
    if not a:
        raise WcetError(f"{os.path.basename(path)}:{line}: malformed loopbound pragma {text.strip()!r}: "
                        f"expected \"loopbound min N max M\" with decimal N <= M")
    lo, hi = int(a.group(1)), int(a.group(2))
    if lo > hi:
        raise WcetError(f"{os.path.basename(path)}:{line}: malformed loopbound pragma {text.strip()!r}: "
                        f"min {lo} is above max {hi}")
    return Pragma(path, line, lo, hi)


class _Parser:
    """Statement-level parse of function bodies: just enough C to find each
    loop statement's extent, head and preceding pragma."""

    def __init__(self, toks: list, path: str) -> None:
        self.t = toks
        self.path = path
        self.loops: list[SourceLoop] = []
        self.stray: list[Pragma] = []

    def kind(self, i: int) -> str:
        return self.t[i][0] if i < len(self.t) else "eof"

    def text(self, i: int) -> str:
        return self.t[i][1] if i < len(self.t) else ""

    def close(self, i: int) -> int:
        """Index after the bracket group opening at ``i``."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        stack = []
        n = len(self.t)
        while i < n:
            s = self.t[i][1] if self.t[i][0] == "punct" else ""
            if s in pairs:
                stack.append(pairs[s])
            elif stack and s == stack[-1]:
                stack.pop()
                if not stack:
                    return i + 1
            i += 1
        return n

    def top(self) -> None:
        i, n = 0, len(self.t)
        while i < n:
            k, s, _ = self.t[i]
            if k == "punct" and s == "{":
                # a function body (also after K&R parameter declarations or
                # an #ifdef'd second head); a struct or an initializer
                # parses as statements without loops
                i = self.statement(i, None)
                continue
            if k == "pragma" and _parse_pragma(s, self.path, self.t[i][2]) is not None:
                self.stray.append(_parse_pragma(s, self.path, self.t[i][2]))
            i += 1

    def statement(self, i: int, parent: SourceLoop | None) -> int:
        """Parse the statement starting at ``i``; index after it.  Bounded
        by the token count: every step consumes at least one token."""
        n = len(self.t)
        pragmas: list[Pragma] = []
        while self.kind(i) == "pragma":
            p = _parse_pragma(self.text(i), self.path, self.t[i][2])
            if p is not None:
                pragmas.append(p)
            i += 1
        if i >= n:
            self.stray.extend(pragmas)
            return n
        k, s, ln = self.t[i]
        if k == "ident" and s in ("for", "while", "do"):
            loop = SourceLoop(s, ln, frozenset(), i, parent=parent)
            self.loops.append(loop)
            if len(pragmas) > 1:
                raise WcetError(f"{os.path.basename(self.path)}:{pragmas[1].line}: a second loopbound "
                                f"pragma for the loop at line {ln}")
            loop.pragma = pragmas[0] if pragmas else None
            if s == "do":
                j = self.statement(i + 1, loop)
                if self.text(j) == "while" and self.text(j + 1) == "(":
                    k2 = self.close(j + 1)
                    cond = self.t[j + 2:k2 - 1]
                    end = k2 + 1 if self.text(k2) == ";" else k2
                    loop.head = frozenset(t[2] for t in self.t[j:end])
                else:
                    end, cond = j, []
                loop.constant = _constant(cond)
            else:
                if self.text(i + 1) != "(":
                    loop.last = i + 1
                    return i + 1
                k2 = self.close(i + 1)
                loop.head = frozenset(t[2] for t in self.t[i:k2])
                inner = self.t[i + 2:k2 - 1]
                if s == "for":
                    parts = _split_semicolons(inner)
                    loop.constant = len(parts) == 3 and (not parts[1] or _constant(parts[1]))
                else:
                    loop.constant = _constant(inner)
                end = self.statement(k2, loop)
            loop.last = end
            return end
        self.stray.extend(pragmas)
        if k == "punct" and s == "{":
            j = i + 1
            while j < n and not (self.kind(j) == "punct" and self.text(j) == "}"):
                j = self.statement(j, parent)
            return min(j + 1, n)
        if k == "punct" and s == ";":
            return i + 1
        if k == "ident" and s in ("if", "switch") and self.text(i + 1) == "(":
            j = self.statement(self.close(i + 1), parent)
            # an else-if chain iteratively: generated code has long ones
            while s == "if" and self.text(j) == "else":
                if self.text(j + 1) == "if" and self.text(j + 2) == "(":
                    j = self.statement(self.close(j + 2), parent)
                else:
                    j = self.statement(j + 1, parent)
                    break
            return j
        if k == "ident" and s == "else":
            return self.statement(i + 1, parent)
        if k == "ident" and s in ("case", "default"):
            j = i + 1
            while j < n and self.text(j) != ":":
                j += 1
            return self.statement(j + 1, parent)
        if k == "ident" and self.text(i + 1) == ":" and s not in ("return",):
            return self.statement(i + 2, parent)            # a label
        # an expression or declaration: up to ';' outside brackets, or the
        # '}' that ends the enclosing block
        j = i
        while j < n:
            t = self.text(j) if self.kind(j) == "punct" else ""
            if t in ("(", "[", "{"):
                j = self.close(j)
                continue
            if t == ";":
                return j + 1
            if t == "}":
                return j
            j += 1
        return n


def _split_semicolons(toks: list) -> list[list]:
    parts: list[list] = [[]]
    depth = 0
    for t in toks:
        if t[1] in ("(", "[", "{"):
            depth += 1
        elif t[1] in (")", "]", "}"):
            depth -= 1
        if t[1] == ";" and depth == 0:
            parts.append([])
        else:
            parts[-1].append(t)
    return parts


def _constant(cond: list) -> bool:
    """A condition that is a nonzero literal (``while (1)``) or ``true``."""
    texts = [t[1] for t in cond if t[1] not in ("(", ")")]
    if len(texts) != 1:
        return False
    s = texts[0]
    if s == "true":
        return True
    try:
        return int(s.rstrip("uUlL"), 0) != 0
    except ValueError:
        return False


def parse_source(text: str, path: str, loop_macros: set[str] = frozenset()) -> SourceModel:
    """The model of one C file (``loop_macros``: macro names with loops
    defined in files it includes)."""
    toks, own_macros, _inc = _tokens(text, path)
    p = _Parser(toks, path)
    p.top()
    model = SourceModel(path, p.loops, stray=p.stray)
    owner: list[SourceLoop | None] = [None] * len(toks)
    for lp in p.loops:              # pre-order: inner loops overwrite outer ones
        for i in range(lp.first, min(lp.last, len(toks))):
            owner[i] = lp
    macros = set(loop_macros) | own_macros
    for i, (k, s, ln) in enumerate(toks):
        if owner[i] is not None and k != "pragma":        # a pragma is no code
            model.owners.setdefault(ln, set()).add(owner[i])
        if k == "ident" and s in macros:
            model.macro_lines.add(ln)
    return model


class SourceBounds:
    """Pragmas for the binary loops of one program (see module doc)."""

    def __init__(self, image, text) -> None:
        self.image = image
        self.text = text                            # an anchors.SourceText
        self._models: dict[str, SourceModel | None] = {}
        self._raw: dict[str, str | None] = {}
        self._matches: dict[tuple[int, int], Match] = {}

    # -- files -------------------------------------------------------------
    def _read(self, file: str) -> str | None:
        if file not in self._raw:
            ls = self.text.lines(file)
            self._raw[file] = None if ls is None else "\n".join(ls) + "\n"
        return self._raw[file]

    def model(self, file: str) -> SourceModel | None:
        if file not in self._models:
            raw = self._read(file)
            md = None
            if raw is not None:
                try:
                    md = parse_source(raw, file, self._included_macros(file, raw))
                except RecursionError:
                    # statements nested deeper than Python's stack: no model,
                    # so no loop of this file gets a bound from its pragmas
                    md = SourceModel(file, deep=True)
            self._models[file] = md
        return self._models[file]

    def _included_macros(self, file: str, raw: str) -> set[str]:
        """Loop macros defined in the files ``file`` includes with quotes
        (next to it, then the usual roots), a few levels deep."""
        out: set[str] = set()
        seen = {file}
        work = [(file, raw, 0)]
        while work and len(seen) < MAX_INCLUDE_FILES:
            f, text, depth = work.pop()
            _t, macros, incs = _tokens(text, f)
            if f != file:
                out |= macros
            if depth >= MAX_INCLUDE_DEPTH:
                continue
            for inc in incs:
                cand = os.path.normpath(os.path.join(os.path.dirname(f), inc))
                if cand in seen:
                    continue
                seen.add(cand)
                t = self._read(cand)
                if t is not None:
                    work.append((cand, t, depth + 1))
        return out

    # -- binary loop -> source loop ---------------------------------------------
    def match(self, forest, loop) -> Match:
        key = (id(forest.func), loop.header)
        m = self._matches.get(key)
        if m is None:
            m = self._matches[key] = self._match(forest, loop)
        return m

    def _control_lines(self, forest, loop) -> set[tuple[str, int]]:
        """Lines of the loop's control: the last instruction of each of its
        own blocks that leaves the loop or closes an iteration (its exit
        tests, its latches).  GCC gives a branch the line of the condition
        it tests, so these are the lines of the loop statement's head (or
        of a ``break`` in its body), not of code moved into the loop."""
        blocks = forest.func.blocks
        out = set()
        latches = set(loop.latches)
        for b in loop.blocks:
            if forest.innermost.get(b) is not loop:
                continue
            blk = blocks[b]
            if b in latches or any(t not in loop.blocks for t in blk.succs):
                li = self.image.line_of(blk.last.addr)
                if li is not None:
                    out.add(li)
        return out

    def _match(self, forest, loop) -> Match:
        from kairos.wcet.anchors import _own_lines
        lines = set(_own_lines(self.image, forest, loop))
        control = self._control_lines(forest, loop)
        if not lines:
            return Match(why="no source lines (no DWARF line information for its code)")
        if not control:
            return Match(why="none of its exit tests and latches has a source line")
        files = sorted({f for f, _ in lines})
        texts = {f: self._read(f) for f in files}
        missing = [f for f in files if texts[f] is None]
        if missing:
            return Match(why=f"source file {os.path.basename(missing[0])} not found "
                             f"(DWARF names {missing[0]}; --source-dir DIR for a moved tree)")
        if not any("loopbound" in texts[f] for f in files):
            # the statement's pragma is in the file of its head, one of
            # these: no parse where there is none (the kernel's sources)
            where = ", ".join(os.path.basename(f) for f in files)
            return Match(why=f"no loopbound pragma in {where}")
        deep = [f for f in files if self.model(f).deep]
        if deep:
            return Match(why=f"{os.path.basename(deep[0])} nests statements too deeply to parse")
        macro_at = None
        for f, ln in sorted(lines):
            if ln in self.model(f).macro_lines:
                macro_at = f"{os.path.basename(f)}:{ln}"
                break
        if macro_at is not None:
            return Match(why=f"a macro containing a loop is used on {macro_at}")
        cands: set = set()
        for f, ln in control:
            for o in self.model(f).owners.get(ln, ()):
                cands.add((f, o))
        if not cands:
            where = ", ".join(sorted(f"{os.path.basename(f)}:{ln}" for f, ln in control))
            return Match(why=f"no loop statement on the lines of its exit tests and latches ({where})")
        if len(cands) > 1:
            desc = ", ".join(sorted(o.describe(f) for f, o in cands))
            return Match(why=f"two or more source loops could be it ({desc})")
        (f, src), = cands
        if not src.constant and not any(ln in src.head for ff, ln in control if ff == f):
            return Match(why=f"none of its exit tests and latches is on the head of the {src.describe(f)}")
        # its header executes once per iteration of the statement (or once
        # more, at the final test) if it is that statement's own code, or
        # the initialisation of a loop nested in it (run once per iteration)
        hl = self.image.line_of(loop.header)
        if hl is not None:
            hm = self.model(hl[0]) if hl[0] in texts else None
            other = set()
            for o in (hm.owners.get(hl[1], ()) if hm else ()):
                if (hl[0], o) == (f, src):
                    continue
                p = o.parent
                while p is not None and p is not src:
                    p = p.parent
                if p is None or hl[1] not in o.head:
                    other.add(o)
            if other:
                desc = ", ".join(sorted(o.describe(hl[0]) for o in other))
                return Match(why=f"its header's line {os.path.basename(hl[0])}:{hl[1]} belongs to {desc}, not "
                                 f"to the {src.describe(f)}")
        m = Match(src, f)
        if src.pragma is None:
            m.why = f"the {src.describe(f)} has no loopbound pragma"
        return m
