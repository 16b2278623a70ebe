"""Loop anchors that survive edits: a loop named by its function and its
place among the function's loops, or by a text on one of its source lines.

* ``loop_order(image, forest)``: the function's loops in *source order*: by
  the first line of the function's own source file among the loop's own
  blocks (not its inner loops'), then by address.  ``loop = N`` in an
  annotation is the N-th loop of that list (1-based).
* ``SourceText(image, extra_dirs)``: reads source lines named by DWARF
  (relative names are tried from the current directory, the ELF's directory
  and its parents, and ``extra_dirs``).
* ``loops_with_text(image, forest, text, src)``: the innermost loops one of
  whose own source lines contains ``text`` (``source = "..."``).

``python -m kairos.wcet.anchors ELF FILE.toml ENTRY...`` rewrites the
``line = "file.c:N"`` anchors of an annotation file into ``loop = K`` plus
``source = "..."`` (the recipe for converting an annotation file after the
code it describes has been merged; see docs/wcet.md).
"""

from __future__ import annotations

import os
import re
import sys

from kairos.wcet.elfimage import ElfImage
from kairos.wcet.loops import Loop, LoopForest


class SourceText:
    """``moved_dirs`` (``--source-dir``): roots of a source tree that is no
    longer where DWARF says; a file is looked up there by the longest
    suffix of its DWARF path that exists (``/old/tree/src/a.c`` as
    ``DIR/tree/src/a.c``, ``DIR/src/a.c``, then ``DIR/a.c``)."""

    def __init__(self, image: ElfImage, extra_dirs: list[str] = (), moved_dirs: list[str] = ()) -> None:
        d = os.path.dirname(os.path.abspath(image.path))
        roots = [os.getcwd()]
        for _ in range(4):
            roots.append(d)
            d = os.path.dirname(d)
        self.roots = list(dict.fromkeys(roots + [os.path.abspath(x) for x in extra_dirs]
                                        + list(image.comp_dirs())))
        self.moved = [os.path.abspath(x) for x in moved_dirs]
        self._files: dict[str, list[str] | None] = {}

    def lines(self, file: str) -> list[str] | None:
        if file not in self._files:
            text = None
            cands = [file] if os.path.isabs(file) else [os.path.join(r, file) for r in self.roots]
            parts = [x for x in file.replace("\\", "/").split("/") if x and x != "."]
            for m in self.moved:
                cands += [os.path.join(m, *parts[k:]) for k in range(len(parts))]
            for c in cands:
                try:
                    with open(c, encoding="utf-8", errors="replace") as fh:
                        text = fh.read().splitlines()
                    break
                except OSError:
                    continue
            self._files[file] = text
        return self._files[file]

    def line(self, file: str, line: int) -> str | None:
        ls = self.lines(file)
        if ls is None or not 1 <= line <= len(ls):
            return None
        return ls[line - 1]


def _own_lines(image: ElfImage, forest: LoopForest, loop: Loop) -> list[tuple[str, int]]:
    out = []
    for b in sorted(loop.blocks):
        if forest.innermost.get(b) is not loop:
            continue
        for ins in forest.func.blocks[b].instrs:
            li = image.line_of(ins.addr)
            if li is not None:
                out.append(li)
    return out


def loop_order(image: ElfImage, forest: LoopForest) -> list[Loop]:
    """The function's loops in source order (see module doc)."""
    home = image.line_of(forest.func.entry)
    home_file = home[0] if home else None

    def key(lp: Loop):
        lines = [ln for f, ln in _own_lines(image, forest, lp) if f == home_file]
        if not lines:       # all of it inlined from elsewhere: after the function's own loops
            lines = [ln + (1 << 20) for _f, ln in _own_lines(image, forest, lp)] or [1 << 30]
        return (min(lines), lp.header)
    return sorted(forest.loops, key=key)


def loops_with_text(image: ElfImage, forest: LoopForest, text: str, src: SourceText) -> list[Loop]:
    """Innermost loops whose own source lines contain ``text``."""
    hits = []
    for lp in forest.loops:
        for f, ln in set(_own_lines(image, forest, lp)):
            t = src.line(f, ln)
            if t is not None and text in t:
                hits.append(lp)
                break

    def has_hit_below(lp: Loop) -> bool:
        return any(c in hits or has_hit_below(c) for c in lp.children)
    return [lp for lp in hits if not has_hit_below(lp)]


# ---------------------------------------------------------------------------
# conversion of `line = "file.c:N"` anchors
# ---------------------------------------------------------------------------

def _snippet(text: str) -> str:
    """The loop's source line without comments and surrounding blanks."""
    t = re.sub(r"/\*.*?\*/|//.*$", "", text).strip()
    return t.rstrip("{").strip()


def convert(elf: str, toml_path: str, entries: list[str]) -> str:
    """The annotation file with every line anchor replaced (see module doc)."""
    from kairos.wcet import annotations as annmod
    from kairos.wcet.bounds import BoundAnalysis
    from kairos.wcet.cfg import build_program
    from kairos.wcet.loops import find_loops
    image = ElfImage(elf)
    text = open(toml_path, encoding="utf-8").read()
    ann = annmod.load(toml_path)
    prog = build_program(image, entries, noreturn=ann.noreturn | {"kernel_panic"}, recursion=ann.recursion,
                         calls=ann.calls)
    ba = BoundAnalysis(prog, ann)
    src = SourceText(image, [os.path.dirname(os.path.abspath(toml_path))])
    by_name = {f.name: f for f in prog.functions.values()}
    out_lines = text.splitlines(keepends=True)
    for la in ann.loops:
        if la.line is None or la.function not in by_name:
            continue
        f = by_name[la.function]
        fo = find_loops(f)
        targets = [lp for lp in fo.loops if ba._ann_matches(la, lp)]
        if len(targets) != 1:
            print(f"{la.describe()}: matches {len(targets)} loops, left as it is", file=sys.stderr)
            continue
        lp = targets[0]
        k = loop_order(image, fo).index(lp) + 1
        snippet = None
        for fname, ln in sorted(set(_own_lines(image, fo, lp)), key=lambda x: x[1]):
            if ln == la.line and fname.endswith(la.file.split("/")[-1]):
                t = src.line(fname, ln)
                snippet = _snippet(t) if t else None
        if snippet and [x for x in loops_with_text(image, fo, snippet, src)] != [lp]:
            snippet = None
        pat = re.compile(r'^line\s*=\s*"' + re.escape(f"{la.file}:{la.line}") + r'"\s*$')
        for i, l in enumerate(out_lines):
            if pat.match(l.strip()):
                # the text alone where there is one: a loop's index may differ
                # between builds (flavours inline differently), its text does not
                new = ("source = " + _toml_str(snippet) + "\n") if snippet else f"loop = {k}\n"
                out_lines[i] = new
                break
    return "".join(out_lines)


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: python -m kairos.wcet.anchors ELF ANNOTATIONS.toml ENTRY...", file=sys.stderr)
        return 2
    sys.stdout.write(convert(argv[0], argv[1], argv[2:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
