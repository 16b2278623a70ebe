"""Unit tests of the cache models: the concrete simulator (trace replay) and
the abstract must/may domains, against hand-computed cases."""

from __future__ import annotations

import pytest

from kairos.wcet.cache import ConcreteCache, Lfsr16, MayCache, MustCache
from kairos.wcet.errors import WcetError
from kairos.wcet.model import CacheConfig, get_preset, preset_names

# 4 sets x 2 ways x 16 B lines: lines l and l+4k share a set.
SMALL_LRU = CacheConfig(128, 2, 16, "lru")
SMALL_RND = CacheConfig(128, 2, 16, "random")


def test_geometry_and_presets() -> None:
    assert SMALL_LRU.sets == 4
    assert SMALL_LRU.analysis_ways == 2
    assert SMALL_RND.analysis_ways == 1          # random: only the MRU line is guaranteed
    u54 = get_preset("u54")
    assert u54.sound and u54.icache.sets == 64 and u54.dcache.analysis_ways == 1
    lru = get_preset("u54-lru")
    assert not lru.sound and lru.dcache.analysis_ways == 8
    assert "IDEALISED" in lru.description
    assert preset_names()[0] == "u54"            # the sound preset is the default
    with pytest.raises(WcetError):
        get_preset("cortex-a8")
    with pytest.raises(WcetError):
        CacheConfig(100, 2, 16)


def test_concrete_lru_hits_misses_and_eviction_order() -> None:
    c = ConcreteCache(SMALL_LRU, polluted=False)
    assert c.access(0) == (False, False)
    assert c.access(4) == (False, False)          # same set, second way
    assert c.access(0) == (True, False)           # 0 is now MRU
    assert c.access(8) == (False, False)          # evicts LRU = 4
    assert c.contains(0) and c.contains(8) and not c.contains(4)
    assert c.access(4) == (False, False)          # evicts 0
    assert not c.contains(0)
    assert (c.hits, c.misses) == (1, 4)


def test_concrete_writeback_of_dirty_victims() -> None:
    c = ConcreteCache(SMALL_LRU, polluted=False)
    c.access(0, write=True)
    c.access(4)
    assert c.access(8) == (False, True)           # victim 0 was dirty
    assert c.access(12) == (False, False)         # victim 4 was clean


def test_polluted_start_every_first_touch_misses_with_writeback() -> None:
    c = ConcreteCache(SMALL_LRU, polluted=True)
    for line in range(8):
        assert c.access(line) == (False, True)
    assert c.access(3) == (True, False)


def test_random_replacement_is_seeded_and_stays_in_set() -> None:
    def run(seed: int) -> list[bool]:
        c = ConcreteCache(SMALL_RND, seed=seed, polluted=False)
        return [c.access(l)[0] for l in (0, 4, 8, 0, 4, 8, 0, 4, 8, 1, 0)]

    assert run(3) == run(3)
    outs = {tuple(run(s)) for s in range(1, 20)}
    assert len(outs) > 1                          # the victim depends on the seed
    c = ConcreteCache(SMALL_RND, seed=5, polluted=False)
    c.access(1)
    for l in (0, 4, 8, 12, 16):
        c.access(l)
    assert c.contains(1)                          # other sets are untouched


def test_lfsr_is_maximal_length() -> None:
    lf = Lfsr16(1)
    seen = set()
    for _ in range(65535):
        seen.add(lf.next())
    assert len(seen) == 65535 and 0 not in seen


def test_must_lru_ages() -> None:
    m = MustCache.empty(SMALL_LRU)
    m = m.access(0).access(4)                     # set 0: 4 (age 0), 0 (age 1)
    assert m.hit(0) and m.hit(4)
    m2 = m.access(8)                              # 0 ages out of a 2-way set
    assert not m2.hit(0) and m2.hit(4) and m2.hit(8)
    m3 = m.access(0).access(8)                    # touching 0 first keeps it
    assert m3.hit(0) and not m3.hit(4)
    assert m.access(1).hit(0)                     # other sets do not age set 0


def test_must_random_keeps_only_mru_line() -> None:
    m = MustCache.empty(SMALL_RND).access(0).access(4)
    assert m.hit(4) and not m.hit(0)


def test_must_join_and_meet() -> None:
    a = MustCache.empty(SMALL_LRU).access(0).access(4)   # 0: age 1
    b = MustCache.empty(SMALL_LRU).access(0)             # 0: age 0
    j = a.join(b)
    assert j.hit(0) and not j.hit(4)
    assert j.age(0) == 1                                 # the older age survives
    k = a.meet(MustCache.empty(SMALL_LRU).access(1))
    assert k.hit(0) and k.hit(4) and k.hit(1)


def test_must_unknown_and_range_accesses_age_their_sets() -> None:
    m = MustCache.empty(SMALL_LRU).access(0).access(1)
    r = m.access_range([4, 8])                    # one of two lines of set 0
    assert r.hit(0) and r.hit(1)                  # 0 aged to 1 (still < 2 ways)
    r2 = r.access_range([4, 8])
    assert not r2.hit(0) and r2.hit(1)
    assert not m.access_unknown(None).access_unknown(None).hit(1)
    assert m.access_range([12]).hit(12)           # a one-line range is a known access


def test_may_sure_miss() -> None:
    may = MayCache.initial(SMALL_LRU)
    assert not may.sure_miss(0)                   # initial content unknown
    m = MayCache.known_empty(2, 4)                # known-empty cache
    assert m.sure_miss(0)
    m = m.access(0)
    assert not m.sure_miss(0) and m.sure_miss(4)
    m = m.access(4).access(8)
    assert m.sure_miss(0)                         # certainly evicted from a 2-way set
    assert not m.access_unknown([0]).sure_miss(12)
    assert m.join(MayCache.known_empty(2, 4).access(12)).sure_miss(0)
