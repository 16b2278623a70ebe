"""Cache models: the concrete simulator (trace replay) and the abstract
must/may domains (static analysis).

Caches are described by ``model.CacheConfig``.  Memory is addressed in
*lines* (``addr // line_size``); set index = ``line % sets``.

Concrete (``ConcreteCache``): exact per-set state with dirty bits.  LRU keeps
each set ordered by recency; ``random`` picks the victim way with a 16-bit
Galois LFSR advanced on every refill (one LFSR per cache, like the Rocket
RTL).  ``polluted=True`` starts every way full of dirty lines that belong to
no program address, the worst start state (as in Blackham's measurements,
which polluted the caches with dirty lines before each run).

Abstract (``MustCache`` / ``MayCache``): the classic LRU age domains of
Ferdinand & Wilhelm, with associativity ``CacheConfig.analysis_ways`` (1 for
random replacement: only the most recently used line of a set is
guaranteed).  States are immutable; every operation returns a new state.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

from kairos.wcet.model import CacheConfig

__all__ = ["ConcreteCache", "MustCache", "MayCache", "Lfsr16"]


class Lfsr16:
    """16-bit maximal-length Galois LFSR (taps 16,14,13,11: mask 0xB400)."""

    def __init__(self, seed: int) -> None:
        self.state = (seed & 0xFFFF) or 0xACE1

    def next(self) -> int:
        lsb = self.state & 1
        self.state >>= 1
        if lsb:
            self.state ^= 0xB400
        return self.state


class ConcreteCache:
    """Exact cache state.  ``access(line, write)`` returns ``(hit, writeback)``
    where ``writeback`` tells whether a dirty victim had to be written back."""

    def __init__(self, cfg: CacheConfig, seed: int = 1, polluted: bool = True) -> None:
        self.cfg = cfg
        self.sets = cfg.sets
        self.ways = cfg.ways
        self.lfsr = Lfsr16(seed)
        # Each set: list of [line, dirty] entries.  For LRU index 0 is the
        # most recently used; for random the index is the way number.
        self.state: list[list[list]] = []
        foreign = -1
        for _ in range(self.sets):
            ways: list[list] = []
            for _ in range(self.ways):
                if polluted:
                    ways.append([foreign, True])
                    foreign -= 1
            self.state.append(ways)
        self.hits = 0
        self.misses = 0
        self.writebacks = 0

    def contains(self, line: int) -> bool:
        return any(e[0] == line for e in self.state[line % self.sets])

    def access(self, line: int, write: bool = False) -> tuple[bool, bool]:
        s = self.state[line % self.sets]
        for i, e in enumerate(s):
            if e[0] == line:
                if write:
                    e[1] = True
                if self.cfg.policy == "lru" and i:
                    s.insert(0, s.pop(i))
                self.hits += 1
                return True, False
        self.misses += 1
        wb = False
        if len(s) < self.ways:
            entry = [line, write]
            if self.cfg.policy == "lru":
                s.insert(0, entry)
            else:
                s.append(entry)
            return False, False
        if self.cfg.policy == "lru":
            victim = s.pop()
            s.insert(0, [line, write])
        else:
            way = self.lfsr.next() % self.ways
            victim = s[way]
            s[way] = [line, write]
        if victim[1]:
            wb = True
            self.writebacks += 1
        return False, wb

    def invalidate(self) -> None:
        """Drop every line (fence.i on the I-cache); dirty data is not modelled
        as written back (only used for the never-dirty I-cache)."""
        for s in self.state:
            s.clear()


# ---------------------------------------------------------------------------
# Abstract domains.  A state holds, per cache set, a tuple of (line, age)
# pairs sorted by line.  States are immutable; updates copy the per-set
# tuple of the one set they touch (cheap: sets is a few dozen).

_Set = tuple  # tuple[tuple[int, int], ...]


def _sorted_items(d: dict[int, int]) -> _Set:
    return tuple(sorted(d.items())) if len(d) > 1 else tuple(d.items())


class MustCache:
    """Must analysis: lines guaranteed cached, each with an upper bound on
    its LRU age (0 = most recent).  A line with age < ways is a sure hit."""

    __slots__ = ("ways", "sets", "content")

    def __init__(self, ways: int, sets: int, content: tuple[_Set, ...] | None = None) -> None:
        self.ways = ways
        self.sets = sets
        self.content = content if content is not None else ((),) * sets

    @staticmethod
    def empty(cfg: CacheConfig) -> "MustCache":
        return MustCache(cfg.analysis_ways, cfg.sets)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MustCache) and (self.content is other.content or self.content == other.content)

    def __hash__(self) -> int:
        return hash(self.content)

    def __repr__(self) -> str:
        return f"MustCache({[ (s, c) for s, c in enumerate(self.content) if c]})"

    def _with(self, s: int, items: _Set) -> "MustCache":
        if items == self.content[s]:
            return self
        c = list(self.content)
        c[s] = items
        return MustCache(self.ways, self.sets, tuple(c))

    def age(self, line: int) -> int | None:
        for l, a in self.content[line % self.sets]:
            if l == line:
                return a
        return None

    def hit(self, line: int) -> bool:
        for l, _ in self.content[line % self.sets]:
            if l == line:
                return True
        return False

    def lines(self) -> set[int]:
        return {l for items in self.content for l, _ in items}

    def access(self, line: int) -> "MustCache":
        """Access to one known line."""
        s = line % self.sets
        cur = self.content[s]
        age = None
        for l, a in cur:
            if l == line:
                age = a
                break
        new = {line: 0}
        ways = self.ways
        for l, a in cur:
            if l == line:
                continue
            if age is None or a < age:
                a += 1
            if a < ways:
                new[l] = a
        return self._with(s, _sorted_items(new))

    def _age_set(self, items: _Set) -> _Set:
        ways = self.ways
        return tuple((l, a + 1) for l, a in items if a + 1 < ways)

    def access_unknown(self, sets: Iterable[int] | None) -> "MustCache":
        """Access to an unknown line in one of ``sets`` (None: any set).  Every
        line of those sets ages by one; nothing becomes guaranteed."""
        c = list(self.content)
        targets = range(self.sets) if sets is None else set(sets)
        changed = False
        for s in targets:
            if c[s]:
                c[s] = self._age_set(c[s])
                changed = True
        return MustCache(self.ways, self.sets, tuple(c)) if changed else self

    def access_range(self, lines: Iterable[int]) -> "MustCache":
        """Access to one of several possible lines."""
        ls = list(dict.fromkeys(lines))
        if len(ls) == 1:
            return self.access(ls[0])
        return self.access_unknown({l % self.sets for l in ls})

    def join(self, other: "MustCache") -> "MustCache":
        if self.content is other.content or self.content == other.content:
            return self
        out = []
        for x, y in zip(self.content, other.content):
            if x is y or x == y:
                out.append(x)
            elif not x or not y:
                out.append(())
            else:
                dy = dict(y)
                out.append(tuple((l, a if a >= dy[l] else dy[l]) for l, a in x if l in dy))
        return MustCache(self.ways, self.sets, tuple(out))

    def meet(self, other: "MustCache") -> "MustCache":
        """Combine two sound must states (both guarantees hold): union of
        lines, smaller age bound."""
        out = []
        for x, y in zip(self.content, other.content):
            if x is y or not y:
                out.append(x)
            elif not x:
                out.append(y)
            else:
                d = dict(x)
                for l, a in y:
                    if l not in d or a < d[l]:
                        d[l] = a
                out.append(_sorted_items(d))
        return MustCache(self.ways, self.sets, tuple(out))

    def flush(self) -> "MustCache":
        return MustCache(self.ways, self.sets)


class MayCache:
    """May analysis: lines possibly cached, with a lower bound on their age.
    A line absent from a set that is not marked unknown is a sure miss.
    ``unknown`` is a bit mask of sets that may hold arbitrary other lines
    (initial state, unknown accesses): nothing there is a sure miss."""

    __slots__ = ("ways", "sets", "content", "unknown")

    def __init__(self, ways: int, sets: int, content: tuple[_Set, ...] | None = None,
                 unknown: int = 0) -> None:
        self.ways = ways
        self.sets = sets
        self.content = content if content is not None else ((),) * sets
        self.unknown = unknown

    @staticmethod
    def initial(cfg: CacheConfig) -> "MayCache":
        return MayCache(cfg.analysis_ways, cfg.sets, None, (1 << cfg.sets) - 1)

    @staticmethod
    def known_empty(ways: int, sets: int) -> "MayCache":
        return MayCache(ways, sets, None, 0)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, MayCache) and self.unknown == other.unknown
                and (self.content is other.content or self.content == other.content))

    def __hash__(self) -> int:
        return hash((self.content, self.unknown))

    def sure_miss(self, line: int) -> bool:
        s = line % self.sets
        if self.unknown >> s & 1:
            return False
        return all(l != line for l, _ in self.content[s])

    def _with(self, s: int, items: _Set, unknown: int) -> "MayCache":
        if items == self.content[s] and unknown == self.unknown:
            return self
        c = list(self.content)
        c[s] = items
        return MayCache(self.ways, self.sets, tuple(c), unknown)

    def access(self, line: int) -> "MayCache":
        s = line % self.sets
        cur = self.content[s]
        age = self.ways
        for l, a in cur:
            if l == line:
                age = a
                break
        new = {line: 0}
        for l, a in cur:
            if l == line:
                continue
            if a <= age:
                a += 1
            if a < self.ways:
                new[l] = a
        return self._with(s, _sorted_items(new), self.unknown)

    def access_unknown(self, sets: Iterable[int] | None) -> "MayCache":
        if sets is None:
            mask = (1 << self.sets) - 1
        else:
            mask = 0
            for s in sets:
                mask |= 1 << s
        if self.unknown | mask == self.unknown:
            return self
        return MayCache(self.ways, self.sets, self.content, self.unknown | mask)

    def access_range(self, lines: Iterable[int]) -> "MayCache":
        ls = list(dict.fromkeys(lines))
        if len(ls) == 1:
            return self.access(ls[0])
        # Any of them may now be cached (age 0); others are not evicted for sure.
        c = list(self.content)
        for l in ls:
            s = l % self.sets
            d = dict(c[s])
            d[l] = 0
            c[s] = _sorted_items(d)
        return MayCache(self.ways, self.sets, tuple(c), self.unknown)

    def join(self, other: "MayCache") -> "MayCache":
        if self.content is other.content or self.content == other.content:
            if self.unknown | other.unknown == self.unknown:
                return self
            return MayCache(self.ways, self.sets, self.content, self.unknown | other.unknown)
        out = list(self.content)
        ways = self.ways
        for i, y in enumerate(other.content):
            x = out[i]
            if x is y or not y or x == y:
                continue
            if not x:
                out[i] = y
            else:
                d = dict(x)
                for l, a in y:
                    d[l] = min(d.get(l, ways), a)
                out[i] = _sorted_items(d)
        return MayCache(self.ways, self.sets, tuple(out), self.unknown | other.unknown)


# ---------------------------------------------------------------------------
# Symbolic lines: data reached through a pointer of unknown value.
#
# A *base* is a value of unknown address named by the definition that
# produced it (``valueanalysis.Kind``) in one call context.  For each base the
# state holds byte intervals ``[lo, hi)`` of offsets from it whose lines are
# guaranteed cached: every such line was touched, and no refill has happened
# in its set since.  Under random replacement only a refill evicts, and with
# LRU a line leaves only on a refill in its set too, so that is sound for
# both (docs/processor-model.md §3, "Symbolic lines").  The set of a
# symbolic line is unknown, so any refill that is not provably in another
# set removes everything; refills of the same base within
# ``SAME_OBJECT_SPAN`` bytes are provably in other sets (64 consecutive
# lines fill 64 different sets of a 4 KiB way).
#
# The alignment of a base within its line is unknown, so it is not known
# which access of a straight-line run through one base is the first to touch
# a line.  ``run_misses`` counts the misses of such a run for every
# alignment the accesses allow (they are naturally aligned) and takes the
# worst.

Intervals = tuple  # tuple[tuple[int, int], ...], sorted, disjoint
SymState = tuple   # tuple[tuple[base, Intervals], ...], sorted by repr of base

#: Bytes of one base that may be in flight at once without two of their
#: lines sharing a set of a 64-set, 64-byte-line way: 63 lines.
SAME_OBJECT_SPAN = 4032


def covered(iv: Intervals, lo: int, hi: int) -> bool:
    return any(a <= lo and hi <= b for a, b in iv)


def add_interval(iv: Intervals, lo: int, hi: int, line: int) -> Intervals:
    """``iv`` plus ``[lo, hi)``.  Intervals less than a line apart merge: every
    byte between two touched bytes at most a line apart lies in one of their
    two lines."""
    out = []
    for a, b in sorted(iv + ((lo, hi),)):
        if out and a - out[-1][1] < line:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return tuple(out)


def intersect(x: Intervals, y: Intervals) -> Intervals:
    out = []
    for a, b in x:
        for c, d in y:
            lo, hi = max(a, c), min(b, d)
            if lo < hi:
                out.append((lo, hi))
    return tuple(sorted(out))


def near(iv: Intervals, lo: int, hi: int, span: int = SAME_OBJECT_SPAN) -> Intervals:
    """The intervals whose lines are provably in other sets than any line of
    ``[lo, hi)`` (or the same line): both together span at most ``span``
    bytes, (sets - 1) lines."""
    return tuple((a, b) for a, b in iv if max(b, hi) - min(a, lo) <= span)


def sym_join(x: SymState, y: SymState) -> SymState:
    if x is y or x == y:
        return x
    dy = dict(y)
    out = []
    for base, iv in x:
        other = dy.get(base)
        if other is not None:
            both = iv if iv == other else intersect(iv, other)
            if both:
                out.append((base, both))
    return tuple(out)


def run_misses(base_iv: Intervals, accesses, line: int, align: tuple[int, int] | None = None) -> int:
    """Worst number of misses of naturally aligned accesses ``(offset, width)``
    through one base, in order, when the lines of ``base_iv`` are cached at
    the start and nothing else evicts in between: the maximum over every
    position of the base within its line that keeps all accesses aligned
    and, with ``align = (m, r)``, that is ``r`` modulo ``m`` (a known
    alignment of the base)."""
    if not accesses:
        return 0
    return _run_misses(tuple(base_iv), tuple(accesses), line, align)


@lru_cache(maxsize=65536)
def _run_misses(base_iv: Intervals, accesses: tuple, line: int, align: tuple[int, int] | None = None) -> int:
    # The positions allowed: base ≡ -offset (mod width) for every access
    # (widths are powers of two, so the widest one decides the granule).
    gran, res = 1, 0
    for o, w in accesses:
        r = (-o) % w
        if w >= gran:
            if (r - res) % gran:
                return len(accesses)   # misaligned: count every access
            gran, res = w, r
        elif (res + o) % w:
            return len(accesses)
    worst = -1
    for al in range(res, line, gran):
        if align is not None and (al - align[1]) % align[0]:
            continue
        have: set[int] = set()
        for a, b in base_iv:
            have.update(range((al + a) // line, (al + b - 1) // line + 1))
        n = 0
        for o, _w in accesses:
            ln = (al + o) // line
            if ln not in have:
                have.add(ln)
                n += 1
        worst = max(worst, n)
    # No position fits both the accesses and the alignment (a fact that
    # contradicts the code): count every access.
    return worst if worst >= 0 else len(accesses)
