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

from dataclasses import dataclass
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
# Abstract domains.  A state maps set index -> tuple of (line, age) pairs,
# sorted by line; sets absent from the mapping hold nothing known.


def _set_items(d: dict[int, int]) -> tuple[tuple[int, int], ...]:
    return tuple(sorted(d.items()))


@dataclass(frozen=True)
class MustCache:
    """Must analysis: lines guaranteed cached, each with an upper bound on
    its LRU age (0 = most recent).  A line with age < ways is a sure hit."""

    ways: int
    sets: int
    content: tuple[tuple[int, tuple[tuple[int, int], ...]], ...] = ()

    @staticmethod
    def empty(cfg: CacheConfig) -> "MustCache":
        return MustCache(cfg.analysis_ways, cfg.sets, ())

    def _as_dict(self) -> dict[int, dict[int, int]]:
        return {s: dict(items) for s, items in self.content}

    @staticmethod
    def _from_dict(ways: int, sets: int, d: dict[int, dict[int, int]]) -> "MustCache":
        return MustCache(ways, sets, tuple(sorted((s, _set_items(v)) for s, v in d.items() if v)))

    def hit(self, line: int) -> bool:
        for s, items in self.content:
            if s == line % self.sets:
                return any(l == line for l, _ in items)
        return False

    def lines(self) -> set[int]:
        return {l for _, items in self.content for l, _ in items}

    def access(self, line: int) -> "MustCache":
        """Access to one known line."""
        d = self._as_dict()
        s = line % self.sets
        cur = d.get(s, {})
        age = cur.get(line)
        new: dict[int, int] = {}
        for l, a in cur.items():
            if l == line:
                continue
            if age is None or a < age:
                a += 1
            if a < self.ways:
                new[l] = a
        new[line] = 0
        d[s] = new
        return MustCache._from_dict(self.ways, self.sets, d)

    def access_unknown(self, sets: Iterable[int] | None) -> "MustCache":
        """Access to an unknown line in one of ``sets`` (None: any set).  Every
        line of those sets ages by one; nothing becomes guaranteed."""
        d = self._as_dict()
        targets = list(d) if sets is None else [s for s in set(sets) if s in d]
        for s in targets:
            d[s] = {l: a + 1 for l, a in d[s].items() if a + 1 < self.ways}
        return MustCache._from_dict(self.ways, self.sets, d)

    def access_range(self, lines: Iterable[int]) -> "MustCache":
        """Access to one of several possible lines."""
        ls = list(dict.fromkeys(lines))
        if len(ls) == 1:
            return self.access(ls[0])
        return self.access_unknown({l % self.sets for l in ls})

    def join(self, other: "MustCache") -> "MustCache":
        a = self._as_dict()
        b = other._as_dict()
        d: dict[int, dict[int, int]] = {}
        for s in a.keys() & b.keys():
            x, y = a[s], b[s]
            m = {l: max(x[l], y[l]) for l in x.keys() & y.keys()}
            if m:
                d[s] = m
        return MustCache._from_dict(self.ways, self.sets, d)

    def meet(self, other: "MustCache") -> "MustCache":
        """Combine two sound must states (both guarantees hold): union of
        lines, smaller age bound."""
        a = self._as_dict()
        for s, items in other.content:
            cur = a.setdefault(s, {})
            for l, age in items:
                if l not in cur or age < cur[l]:
                    cur[l] = age
        return MustCache._from_dict(self.ways, self.sets, a)

    def flush(self) -> "MustCache":
        return MustCache(self.ways, self.sets, ())


@dataclass(frozen=True)
class MayCache:
    """May analysis: lines possibly cached, with a lower bound on their age.
    A line absent from a set that is not ``unknown`` is a sure miss.  Sets in
    ``unknown`` may hold arbitrary other lines (initial state, unknown
    accesses), so nothing there is a sure miss."""

    ways: int
    sets: int
    content: tuple[tuple[int, tuple[tuple[int, int], ...]], ...] = ()
    unknown: frozenset[int] | None = None  # None: every set unknown

    @staticmethod
    def initial(cfg: CacheConfig) -> "MayCache":
        return MayCache(cfg.analysis_ways, cfg.sets, (), None)

    def _as_dict(self) -> dict[int, dict[int, int]]:
        return {s: dict(items) for s, items in self.content}

    def _mk(self, d: dict[int, dict[int, int]], unknown: frozenset[int] | None) -> "MayCache":
        return MayCache(self.ways, self.sets,
                        tuple(sorted((s, _set_items(v)) for s, v in d.items() if v)), unknown)

    def sure_miss(self, line: int) -> bool:
        s = line % self.sets
        if self.unknown is None or s in self.unknown:
            return False
        for ss, items in self.content:
            if ss == s:
                return all(l != line for l, _ in items)
        return True

    def access(self, line: int) -> "MayCache":
        d = self._as_dict()
        s = line % self.sets
        cur = d.get(s, {})
        age = cur.get(line, self.ways)
        new: dict[int, int] = {}
        for l, a in cur.items():
            if l == line:
                continue
            if a <= age:
                a += 1
            if a < self.ways:
                new[l] = a
        new[line] = 0
        d[s] = new
        return self._mk(d, self.unknown)

    def access_unknown(self, sets: Iterable[int] | None) -> "MayCache":
        if sets is None:
            return self._mk(self._as_dict(), None)
        unk = None if self.unknown is None else self.unknown | frozenset(sets)
        return self._mk(self._as_dict(), unk)

    def access_range(self, lines: Iterable[int]) -> "MayCache":
        ls = list(dict.fromkeys(lines))
        if len(ls) == 1:
            return self.access(ls[0])
        # Any of them may now be cached (age 0); others are not evicted for sure.
        d = self._as_dict()
        for l in ls:
            d.setdefault(l % self.sets, {})[l] = 0
        return self._mk(d, self.unknown)

    def join(self, other: "MayCache") -> "MayCache":
        a = self._as_dict()
        b = other._as_dict()
        d: dict[int, dict[int, int]] = {}
        for s in a.keys() | b.keys():
            x, y = a.get(s, {}), b.get(s, {})
            d[s] = {l: min(x.get(l, self.ways), y.get(l, self.ways)) for l in x.keys() | y.keys()}
        if self.unknown is None or other.unknown is None:
            unk = None
        else:
            unk = self.unknown | other.unknown
        return self._mk(d, unk)
