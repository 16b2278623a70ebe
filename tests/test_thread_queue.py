"""Host-side tests of the endpoint and notification wait queues,
kernel/kernel/queue.c.

queue.c is compiled natively (check flavour, with AddressSanitizer and
UBSan) together with tests/host/queue_harness.c. Seeded random histories of
insertions, removals from anywhere, takes of the head and priority changes
of queued threads (reordering) drive it; after every step the queue is
compared with a reference, seL4's wait queue: a list ordered by priority,
highest first, a thread queued behind every thread of its own priority
(tcbEPAppend; a reordered thread is taken out and appended again), and the
kernel's own check (tqueue_violation: links, ends, order) must pass.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import host_harness

NTHREADS = 512  # queue_harness.c


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    return host_harness.build(tmp_path_factory.mktemp("tqueue") / "queue_harness",
                              ['tests/host/queue_harness.c', 'kernel/kernel/queue.c'], "check")


def run(harness: Path, commands: list[str]) -> list[str]:
    return host_harness.run(harness, commands, timeout=120)


class Reference:
    """seL4's wait queue: highest priority first, FIFO among equals."""

    def __init__(self) -> None:
        self.queue: list[tuple[int, int]] = []  # (priority, id)

    def insert(self, tid: int, prio: int) -> None:
        i = 0
        while i < len(self.queue) and self.queue[i][0] >= prio:
            i += 1
        self.queue.insert(i, (prio, tid))

    def remove(self, tid: int) -> None:
        self.queue = [e for e in self.queue if e[1] != tid]

    def ids(self) -> str:
        return " ".join(str(e[1]) for e in self.queue) or "-"


def priority(rng: random.Random, style: str) -> int:
    if style == "few":  # many equals, runs of several threads
        return rng.choice([0, 3, 15, 16, 17, 100, 255])
    if style == "group":  # one group and its neighbours' edges
        return rng.choice([15, 16, 17, 20, 24, 30, 31, 32])
    return rng.randrange(256)


def history(seed: int, steps: int, style: str, size: int) -> list[tuple[str, ...]]:
    """Commands with the reference's answers, after each step L and V."""
    rng = random.Random(seed)
    ref = Reference()
    out: list[tuple[str, ...]] = []
    for _ in range(steps):
        queued = [tid for _, tid in ref.queue]
        free = [t for t in range(size) if t not in queued]
        r = rng.random()
        if free and (r < 0.45 or not queued):
            tid, prio = rng.choice(free), priority(rng, style)
            ref.insert(tid, prio)
            out.append((f"I {tid} {prio}", "ok"))
        elif r < 0.6:
            tid = rng.choice(queued)
            ref.remove(tid)
            out.append((f"R {tid}", "ok"))
        elif r < 0.75:
            head = ref.queue[0][1]
            ref.remove(head)
            out.append(("P", str(head)))
        else:
            tid, prio = rng.choice(queued), priority(rng, style)
            ref.remove(tid)
            ref.insert(tid, prio)
            out.append((f"O {tid} {prio}", "ok"))
        out.append(("L", ref.ids()))
        out.append(("V", "ok"))
    return out


@pytest.mark.parametrize("seed,style,size", [
    (1, "any", 24), (2, "few", 24), (3, "group", 24), (4, "any", 200), (5, "few", 300),
])
def test_random_histories_against_seL4_order(harness: Path, seed: int, style: str, size: int) -> None:
    steps = history(seed, 3000, style, size)
    answers = run(harness, [c for c, _ in steps])
    for i, ((command, expected), got) in enumerate(zip(steps, answers)):
        assert got == expected, f"step {i // 3}: {command}: expected {expected!r}, got {got!r}"


def test_long_queue_drains_in_order(harness: Path) -> None:
    """All NTHREADS threads queued at every priority, then taken from the
    head: priority order and FIFO among equals throughout."""
    rng = random.Random(7)
    ref = Reference()
    commands, expected = [], []
    for tid in range(NTHREADS):
        prio = rng.randrange(256)
        ref.insert(tid, prio)
        commands += [f"I {tid} {prio}", "V"]
        expected += ["ok", "ok"]
    for _, tid in list(ref.queue):
        commands += ["P", "V"]
        expected += [str(tid), "ok"]
    commands.append("P")
    expected.append("-")
    assert run(harness, commands) == expected


def test_check_finds_a_priority_out_of_order(harness: Path) -> None:
    """The check is not vacuous: a priority raised behind the queue's back
    (no reordering) breaks the order, and the check says so; the harness
    refuses what the kernel never does."""
    out = run(harness, ["I 1 10", "I 2 40", "I 3 40", "V", "X 1 50", "L", "V"])
    assert out == ["ok"] * 5 + ["2 3 1", "thread queue: not in priority order"]
    assert run(harness, ["R 5", "O 5 3", "I 1 1", "I 1 2"]) == ["refused", "refused", "ok", "refused"]
