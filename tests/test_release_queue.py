"""Host-side tests of the release queue's heap, kernel/kernel/release.c.

release.c is compiled natively with AddressSanitizer and UBSan together with
tests/host/release_harness.c. Hypothesis drives it with random histories of
insertions (release times from a small range, so that equal times are
common), removals from anywhere (which leave a stale entry in the SC's slot),
deletions of an SC's slot, takes of the first thread and re-queues of the
first thread with a new release time (the release loop's re-keying of a
thread whose head moved), and compares every
answer with a reference: seL4's release queue, a list sorted by release time
in which a thread is queued behind every equal time (tcbReleaseEnqueue). The
number of entries, stale ones included, is compared with a model of the
slots (one per SC at most, a stale one leaving when it comes first or its SC
is deleted). After each step the heap's own invariants (order, recorded
slots, queued threads) are checked too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import host_harness

CAPACITY = 256  # CONFIG_MAX_SPORADIC_SCS


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    return host_harness.build(tmp_path_factory.mktemp("release") / "release_harness",
                              ['tests/host/release_harness.c', 'kernel/kernel/release.c'], "debug")


def run(harness: Path, commands: list[str]) -> list[str]:
    return host_harness.run(harness, commands, timeout=60)


class Reference:
    """seL4's sorted release list: behind every equal release time."""

    def __init__(self) -> None:
        self.queue: list[tuple[int, int]] = []  # (time, id)

    def insert(self, tid: int, time: int) -> None:
        i = 0
        while i < len(self.queue) and self.queue[i][0] <= time:
            i += 1
        self.queue.insert(i, (time, tid))

    def remove(self, tid: int) -> None:
        self.queue = [e for e in self.queue if e[1] != tid]

    def holds(self, tid: int) -> bool:
        return any(e[1] == tid for e in self.queue)


class Slots:
    """The heap's entries by SC: key (time, insertion number) and whether
    the SC's thread is in it. Taking the first thread takes every entry
    before it (stale ones) too, as the release loop does."""

    def __init__(self) -> None:
        self.entries: dict[int, tuple[int, int, bool]] = {}
        self.seq = 0

    def insert(self, tid: int, time: int) -> None:
        self.entries[tid] = (time, self.seq, True)
        self.seq += 1

    def remove(self, tid: int) -> None:
        time, seq, _ = self.entries[tid]
        self.entries[tid] = (time, seq, False)

    def take_first_thread(self) -> None:
        while self.entries:
            tid = min(self.entries, key=lambda i: self.entries[i][:2])
            live = self.entries.pop(tid)[2]
            if live:
                return

    def requeue_first_thread(self, time: int) -> None:
        """The stale entries before the first thread leave; its entry gets
        the new key."""
        while self.entries:
            tid = min(self.entries, key=lambda i: self.entries[i][:2])
            if self.entries[tid][2]:
                self.insert(tid, time)
                return
            self.entries.pop(tid)


ops = st.lists(st.one_of(
    st.tuples(st.just("I"), st.integers(0, 40), st.integers(0, 6)),
    st.tuples(st.just("R"), st.integers(0, 40), st.just(0)),
    st.tuples(st.just("P"), st.just(0), st.just(0)),
    st.tuples(st.just("F"), st.integers(0, 40), st.just(0)),
    st.tuples(st.just("Q"), st.just(0), st.integers(0, 6)),
), min_size=1, max_size=300)


@settings(max_examples=300, deadline=None)
@given(ops)
def test_heap_releases_in_sel4_order(harness: Path, history: list[tuple[str, int, int]]) -> None:
    ref = Reference()
    slots = Slots()
    commands, expected = [], []
    for op, tid, time in history:
        if op == "I":
            commands.append(f"I {tid} {time}")
            expected.append("refused" if ref.holds(tid) else "ok")
            if not ref.holds(tid):
                ref.insert(tid, time)
                slots.insert(tid, time)
        elif op == "R":
            commands.append(f"R {tid}")
            expected.append("ok" if ref.holds(tid) else "refused")
            if ref.holds(tid):
                ref.remove(tid)
                slots.remove(tid)
        elif op == "F":
            commands.append(f"F {tid}")
            expected.append("refused" if ref.holds(tid) else "ok")
            if not ref.holds(tid):
                slots.entries.pop(tid, None)
        elif op == "Q":
            # The release loop's re-queue of a thread whose head moved:
            # seL4 takes it off the sorted list and queues it again.
            commands.append(f"Q {time}")
            slots.requeue_first_thread(time)
            if ref.queue:
                _, i = ref.queue.pop(0)
                ref.insert(i, time)
                expected.append(str(i))
            else:
                expected.append("refused")
        else:
            commands.append("P")
            slots.take_first_thread()
            if ref.queue:
                t, i = ref.queue.pop(0)
                expected.append(f"{i} {t}")
            else:
                expected.append("refused")
        commands += ["V", "C"]
        expected += ["ok", str(len(slots.entries))]
    assert run(harness, commands) == expected


def test_removal_leaves_one_stale_entry_per_sc(harness: Path) -> None:
    """Queueing and taking out the same threads again and again never grows
    the heap beyond one entry per SC: a thread queued again reuses its SC's
    stale slot with the new key, and the stale slots leave when they come
    first or their SC goes."""
    commands = []
    for round_ in range(50):
        for i in range(4):
            commands += [f"I {i} {1000 - 10 * round_ + i}", f"R {i}"]
    commands += ["C", "V", "I 2 5", "I 7 5", "C", "P", "P", "C", "F 0", "F 1", "F 3", "C", "V", "P"]
    out = run(harness, commands)
    assert out[:400] == ["ok"] * 400
    assert out[400:] == ["4", "ok", "ok", "ok", "5", "2 5", "7 5", "3", "ok", "ok", "ok", "0", "ok", "refused"]


def test_full_queue_in_order_with_ties(harness: Path) -> None:
    """All CAPACITY threads queued with four distinct times in a shuffled
    order come out by time, and in queueing order within a time; one more is
    refused by the harness (the kernel's admission check prevents it)."""
    import random
    rng = random.Random(13)
    ids = list(range(CAPACITY))
    rng.shuffle(ids)
    times = {i: rng.choice([100, 200, 200, 300]) for i in ids}
    commands = [f"I {i} {times[i]}" for i in ids] + ["V", "I 0 5"] + ["P"] * CAPACITY + ["V", "P"]
    out = run(harness, commands)
    assert out[:CAPACITY] == ["ok"] * CAPACITY
    assert out[CAPACITY:CAPACITY + 2] == ["ok", "refused"]
    popped = [tuple(int(x) for x in line.split()) for line in out[CAPACITY + 2:CAPACITY + 2 + CAPACITY]]
    want = sorted(((times[i], ids.index(i), i) for i in ids))
    assert popped == [(i, t) for t, _, i in want]
    assert out[-2:] == ["ok", "refused"]


def test_requeue_with_a_later_key_is_deferred_and_keeps_sel4_order(harness: Path) -> None:
    """A thread queued again into its SC's stale slot with a key that comes
    later than the slot's is deferred (the slot keeps its key, no sink): it
    still leaves behind a thread queued at the same time in between, as in
    seL4's list, and a deferred first entry is re-keyed before any release.
    The counts of deferred threads show the path was taken."""
    commands = ["I 0 10", "I 1 20", "R 0", "I 2 10", "I 0 10", "D", "V",
                "I 3 5", "R 3", "I 3 30", "D", "V", "C",
                "P", "D", "P", "P", "P", "D", "C", "V"]
    out = run(harness, commands)
    assert out == ["ok", "ok", "ok", "ok", "ok", "1", "ok",
                   "ok", "ok", "ok", "2", "ok", "4",
                   # thread 3's slot (key 5) comes first: stale-keyed, re-keyed
                   # to 30; thread 0's slot (key 10, seq 0) is re-keyed to
                   # (10, seq 3), behind thread 2's (10, seq 2)
                   "2 10", "0", "0 10", "1 20", "3 30", "0", "0", "ok"]


def test_earlier_key_rises_in_the_stale_slot(harness: Path) -> None:
    """A key that comes before its stale slot's is not deferred: the entry
    rises at once (no thread is deferred)."""
    out = run(harness, ["I 0 50", "I 1 40", "R 0", "I 0 30", "D", "V", "P", "P"])
    assert out == ["ok", "ok", "ok", "ok", "0", "ok", "0 30", "1 40"]
