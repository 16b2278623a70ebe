"""Host-side tests of the refill (sporadic-server) algorithms, kernel/kernel/refill.c.

refill.c is compiled natively with AddressSanitizer and UBSan together with
tests/host/refill_harness.c, which keeps a scheduling context in a heap block
of exactly the object's size and runs the operations named on its stdin.

Hypothesis drives it with thousands of random scheduler histories (configure,
run and charge, overrun, block and wake, preemption, yield, reconfigure,
idle) that follow the scheduler's protocol (Lyons 2018 thesis §7.1.2, §7.3.1): a thread runs
only with a ready and sufficient head (it waits in the release queue
otherwise, released by a kernel entry up to one kernel WCET early: the ready
slack); charges come at kernel entries, the last one at most one kernel entry
(the kernel WCET, 10 us) past the budget expiry; refill_unblock_check runs
whenever the context becomes current ("switch" protocol, thesis §5.8) or only
when a blocked thread wakes ("wake", mainline seL4's sporadic flag). After
every operation it checks:

* agreement with `Model`, a list-based reference model in Python: every
  return value, ready/sufficient decision and every release time and amount;
* the ring invariants: 1 <= size <= max <= the object's capacity and
  CONFIG_MAX_REFILLS (kernel/include/config.h), release
  times non-decreasing from head to tail, amounts summing to the budget, the
  head at least MIN_BUDGET, the head ending before the next release (and
  refill_valid() agrees);
* under the "switch" protocol, the sliding window: in any window of one
  period (from the last reconfiguration on) the context runs at most its
  budget plus one kernel WCET (the larger of one overrun and the ready
  slack); the worked example test_overrun_tolerance_is_reached
  shows the tolerance is needed, and test_starved_context_catches_up_... why
  the "wake" protocol has no such bound;
* a reconfiguration never makes more time available at once than the old
  head held.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import host_harness
from conftest import kernel_max_refills

ROOT = Path(__file__).resolve().parent.parent
KINC = ROOT / "kernel" / "include"
AINC = ROOT / "kernel" / "arch" / "riscv" / "include"
HEADER = 96


MAX_REFILLS = kernel_max_refills()


def us_to_ticks(us: int, hz: int) -> int:
    return us // 1_000_000 * hz + (us % 1_000_000) * hz // 1_000_000


def capacity(size_bits: int) -> int:
    return (2**size_bits - HEADER) // 16


def max_for_size(size_bits: int) -> int:
    """The most refills ConfigureFlags accepts for a 2^size_bits context."""
    return min(capacity(size_bits), MAX_REFILLS)


# --------------------------------------------------------------------------
# The harness
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def harness_bin(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("refill") / "refill_harness"
    return host_harness.build(out, ["tests/host/refill_harness.c", "kernel/kernel/refill.c"], "debug")


@dataclass
class State:
    ret: bool
    ready: bool
    sufficient: bool
    valid: bool
    period: int
    budget: int
    max: int
    head: int
    count: int
    refills: list[tuple[int, int]]


def parse_state(line: str) -> State:
    left, _, right = line.partition(":")
    f = [int(x) for x in left.split()]
    nums = [int(x) for x in right.split()]
    return State(bool(f[0]), bool(f[1]), bool(f[2]), bool(f[3]), f[4], f[5], f[6], f[7], f[8],
                 list(zip(nums[0::2], nums[1::2])))


class Harness:
    """One harness process; a script of commands is sent at once and the
    answers read back (one line each)."""

    def __init__(self, path: Path):
        self.p = subprocess.Popen([str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)

    def run(self, cmds: list[str]) -> list[str]:
        self.p.stdin.write("".join(c + "\n" for c in cmds) + "E\n")
        self.p.stdin.flush()
        out = []
        while True:
            line = self.p.stdout.readline()
            if line == "":
                err = self.p.stderr.read()
                raise AssertionError(f"harness died ({self.p.wait()}):\n{err}\n"
                                     f"commands:\n" + "\n".join(cmds))
            line = line.rstrip("\n")
            if line == "end":
                break
            assert not line.startswith("error"), line
            out.append(line)
        assert len(out) == len(cmds)
        return out

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait()
        err = self.p.stderr.read()
        assert rc == 0 and "runtime error" not in err and "AddressSanitizer" not in err, err


@pytest.fixture(scope="module")
def harness(harness_bin):
    h = Harness(harness_bin)
    yield h
    h.close()


# --------------------------------------------------------------------------
# Reference model
# --------------------------------------------------------------------------

class Model:
    """The refill algorithms of docs/scheduling.md "Refills", on a Python list
    (head first) instead of a ring in an object."""

    def __init__(self, hz: int):
        self.hz = hz
        self.min = us_to_ticks(20, hz)   # MIN_BUDGET
        self.w = us_to_ticks(10, hz)     # kernel WCET: the ready slack
        self.r: list[list[int]] = []
        self.period = self.budget = self.max = 0
        self.sporadic = True

    # -- configuration
    def new(self, max_refills, budget, period, now, sporadic=None):
        rr = period in (0, budget)
        self.budget, self.period = budget, 0 if rr else period
        self.max = 2 if rr else min(max(max_refills, 2), MAX_REFILLS)
        self.r = [[now, budget]] + ([[now, 0]] if rr else [])
        if sporadic is not None:
            self.sporadic = sporadic

    def update(self, period, budget, max_refills, usage, now):
        if not self.r:
            return self.new(max_refills, budget, period, now)
        # The running context's usage since its last charge is charged
        # first (refill.c does the same to the head in O(1)).
        self.budget_check(usage, now)
        rr = period in (0, budget)
        t, a = self.r[0]
        t = max(t, now)
        self.budget, self.period = budget, 0 if rr else period
        self.max = 2 if rr else min(max(max_refills, 2), MAX_REFILLS)
        if a >= budget:
            self.r = [[t, budget]] + ([[t, 0]] if rr else [])
        else:
            self.r = [[t, a], [t + self.period, budget - a]]

    def rr(self):
        return self.period == 0 or self.period == self.budget

    # -- predicates
    def ready(self, now):
        return self.r[0][0] <= now + self.w

    def sufficient(self, usage):
        return max(self.r[0][1] - usage, 0) >= self.min

    # -- helpers
    def _merge_overlapping(self):
        while len(self.r) > 1 and self.r[0][0] + self.r[0][1] >= self.r[1][0]:
            t, a = self.r.pop(0)
            self.r[0] = [t, self.r[0][1] + a]

    def _schedule_used(self, t, a):
        tail = self.r[-1]
        if tail[0] + tail[1] >= t:
            tail[1] += a
        elif (a < self.min and len(self.r) > 1) or len(self.r) == self.max:
            self.r[-1] = [t - tail[1], tail[1] + a]
        else:
            self.r.append([t, a])

    def _split(self, usage):
        t, a = self.r[0]
        remnant = a - usage
        if remnant < self.min:
            if len(self.r) == 1:
                self.r[0][0] += self.period
            else:
                self.r.pop(0)
                self.r[0][1] += remnant
                self._schedule_used(t + self.period, usage)
            return True
        self.r[0] = [t + usage, remnant]
        self._schedule_used(t + self.period, usage)
        return False

    def _rr_charge(self, usage, now):
        used = min(usage, self.r[0][1])
        self.r[0][1] -= used
        if len(self.r) > 1:
            self.r[-1][1] += used
        if self.r[0][1] >= self.min:
            return False
        t = max(self.r[0][0], now)
        self.r[0] = [t, self.budget]
        if len(self.r) > 1:
            self.r[-1] = [t, 0]
        return True

    # -- operations
    def budget_check(self, usage, now):
        if not self.r or usage == 0:
            return False
        if self.rr():
            return self._rr_charge(usage, now)
        used_up = False
        for _ in range(len(self.r)):
            if usage < self.r[0][1]:
                break
            used_up = True
            usage -= self.r[0][1]
            if len(self.r) == 1:
                self.r[0][0] += self.period
            else:
                t, a = self.r.pop(0)
                self._schedule_used(t + self.period, a)
        if usage > 0:
            if usage < self.r[0][1]:
                used_up |= self._split(usage)
            else:
                self.r[0][0] += usage
        while len(self.r) > 1 and self.r[0][1] < self.min:
            _, a = self.r.pop(0)
            self.r[0][1] += a
            used_up = True
        self._merge_overlapping()
        return used_up

    def unblock(self, now):
        if not self.r or self.rr() or not self.ready(now):
            return False
        self.r[0][0] = max(self.r[0][0], now)
        self._merge_overlapping()
        return True

    def yield_(self, usage, now):
        if not self.r:
            return False
        if self.rr():
            return self._rr_charge(self.r[0][1], now)
        if not self.ready(now):
            return self.budget_check(usage, now)
        return self.budget_check(max(usage, self.r[0][1]), now)


# --------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------

def check_state(s: State, m: Model, size_bits: int, now: int, ret: bool, where: str):
    """The harness's state agrees with the model, and the ring invariants hold."""
    assert s.refills == [tuple(r) for r in m.r], f"{where}: ring {s.refills} != model {m.r}"
    assert (s.period, s.budget, s.max) == (m.period, m.budget, m.max), where
    assert s.ret == ret, f"{where}: returned {s.ret}, model {ret}"
    assert s.ready == m.ready(now) and s.sufficient == m.sufficient(0), where
    # Ring invariants (and refill_valid agrees).
    assert 1 <= s.count <= s.max <= max_for_size(size_bits), where
    assert s.head < s.max, where
    times = [t for t, _ in s.refills]
    assert times == sorted(times), f"{where}: release times out of order {s.refills}"
    assert sum(a for _, a in s.refills) == s.budget, f"{where}: sum != budget {s.refills}"
    assert s.refills[0][1] >= m.min, f"{where}: head below MIN_BUDGET {s.refills}"
    if not m.rr() and len(s.refills) > 1:
        assert s.refills[0][0] + s.refills[0][1] < s.refills[1][0], f"{where}: head overlaps {s.refills}"
    assert s.valid, f"{where}: refill_valid() false for {s.refills}"


def max_window(intervals: list[tuple[int, int]], period: int, since: int) -> tuple[int, int]:
    """Most time run in any window [x, x + period) with x >= since; returns
    (time, x). The maximum is reached with x at an interval's start or
    x + period at an interval's end."""
    best, at = 0, since
    ivs = [(s, e) for s, e in intervals if e > since]
    cands = {max(s, since) for s, _ in ivs} | {max(e - period, since) for _, e in ivs}
    for x in cands:
        got = sum(max(0, min(e, x + period) - max(s, x)) for s, e in ivs)
        if got > best:
            best, at = got, x
    return best, at


# --------------------------------------------------------------------------
# Random scheduler histories
# --------------------------------------------------------------------------

class Sim:
    """Builds a history from a PRNG, drives the model with it and
    records the harness commands and the model's answers, then compares."""

    def __init__(self, rng: random.Random, hz: int, kind: str):
        self.rng, self.kind = rng, kind
        self.m = Model(hz)
        self.hz = hz
        self.cmds: list[str] = []
        self.expect: list[tuple[int, bool, str]] = []  # (now, ret, label)
        self.snap: list[tuple] = []  # the model after each command
        self.runs: list[tuple[int, int]] = []
        self.epochs: list[tuple[int, int, int, bool, list[tuple[int, int]]]] = []
        self.now = self.pick(0, 5000)
        self.epoch_start = self.now
        self.blocked = True
        self.size_bits = self.pick(7, 10)
        self.cap = max_for_size(self.size_bits)
        self.max_overrun = self.m.w  # one kernel entry: at most the kernel WCET

    # Parameters of a configuration of the kind under test.
    def params(self):
        m = self.m
        budget = self.pick(m.min, 20 * m.min)
        if self.kind == "rr":
            period = self.rng.choice([0, budget])
        else:
            period = self.pick(budget + 1, 8 * budget + 4 * m.min)
        extra = self.pick(0, self.cap - 2)
        return budget, period, extra + 2

    def pick(self, lo: int, hi: int) -> int:
        """A number in [lo, hi], the bounds themselves more often than the
        rest (the edges are where the algorithms branch)."""
        x = self.rng.random()
        if x < 0.15:
            return lo
        if x < 0.3:
            return hi
        return self.rng.randint(lo, hi)

    def coin(self) -> bool:
        return self.rng.random() < 0.5

    def sporadic_flag(self):
        # refill.c does not look at the flag: it decides only when the
        # scheduler calls refill_unblock_check (the protocols below).
        return self.kind == "wake"

    def op(self, cmd: str, ret: bool, label: str):
        self.cmds.append(cmd)
        self.expect.append((self.now, ret, label))
        m = self.m
        self.snap.append(([list(r) for r in m.r], m.period, m.budget, m.max, m.sporadic))

    def end_epoch(self):
        """Close the history under the current configuration: its windows
        are checked with its own budget and period, from its start."""
        m = self.m
        self.epochs.append((self.epoch_start, m.budget, m.period, m.sporadic, self.runs))
        self.runs = []
        self.epoch_start = self.now

    def configure(self, first=False):
        budget, period, maxr = self.params()
        update = not first and self.coin()
        usage = 0
        if update and self.coin():
            # The running context reconfigures itself after using part of
            # its head (the entry found at least MIN_BUDGET left); that run
            # belongs to the configuration before.
            self.wake()
            usage = self.pick(0, self.m.r[0][1] - self.m.min)
            start = self.now
            self.now += usage
            if usage:
                self.runs.append((start, self.now))
        if not first:
            self.end_epoch()
        if not update:
            sp = self.sporadic_flag()
            self.m.new(maxr, budget, period, self.now, sp)
            self.op(f"N {self.size_bits} {maxr} {budget} {period} {int(sp)} {self.now}", False, "new")
        else:
            before_ready = sum(a for t, a in self.m.r if t <= self.now + self.m.w)
            old_head = self.m.r[0][1] - usage if self.m.ready(self.now) else 0
            self.m.update(period, budget, maxr, usage, self.now)
            self.op(f"U {period} {budget} {maxr} {usage} {self.now}", False, "update")
            # No more time at once than the old head held (§8 item 13); a
            # round-robin tail is time used, not time to come.
            if self.m.rr():
                return
            now_avail = sum(a for t, a in self.m.r if t <= self.now + self.m.w)
            assert now_avail <= max(old_head, 0) or now_avail <= before_ready, (now_avail, old_head)

    def charge(self, usage: int, label: str) -> bool:
        start = self.now
        self.now += usage
        if usage:
            self.runs.append((start, self.now))
        ret = self.m.budget_check(usage, self.now)
        self.op(f"C {usage} {self.now}", ret, label)
        return ret

    def wake(self):
        """The thread is picked to run. If it was blocked it becomes runnable
        now; if its head is not ready it waits in the release queue until a
        kernel entry within the ready slack of the head's release (the release
        timer). refill_unblock_check runs when its context becomes current
        ("switch" protocol, thesis §5.8) or only when it was blocked ("wake":
        mainline seL4's sporadic flag)."""
        m = self.m
        if self.kind == "wake" and self.blocked:
            ret = m.unblock(self.now)
            self.op(f"B {self.now}", ret, "unblock")
        if not m.ready(self.now):
            early = self.pick(0, m.w)
            self.now = max(self.now, m.r[0][0] - early)
        if self.kind != "wake":
            ret = m.unblock(self.now)
            self.op(f"B {self.now}", ret, "unblock")
        self.blocked = False
        assert m.ready(self.now) and m.sufficient(0)

    def usage(self) -> int:
        m = self.m
        head = m.r[0][1]
        if self.coin():
            return head + self.pick(0, self.max_overrun)
        return self.pick(1, max(1, head - 1))

    def run(self):
        self.wake()
        for _ in range(self.pick(1, 4)):
            self.charge(self.usage(), "charge")
            # Same context picked again without a switch: no unblock check.
            if not (self.m.ready(self.now) and self.m.sufficient(0)):
                return  # to the release queue, still runnable
            if not self.coin():
                break
        self.blocked = self.coin()  # blocked, or preempted (still runnable)

    def yield_(self):
        self.wake()
        head = self.m.r[0][1]
        u = self.pick(0, head - 1)
        start = self.now
        self.now += u
        if u:
            self.runs.append((start, self.now))
        ret = self.m.yield_(u, self.now)
        self.op(f"Y {u} {self.now}", ret, "yield")

    def idle(self):
        self.now += self.pick(0, 3 * max(self.m.period, self.m.budget))

    def history(self, steps: int):
        self.configure(first=True)
        for _ in range(steps):
            what = self.rng.choice(
                ["run", "run", "run", "run", "yield", "idle", "idle", "configure", "charge0"])
            if what == "run":
                self.run()
            elif what == "yield":
                self.yield_()
            elif what == "idle":
                self.idle()
            elif what == "configure":
                self.configure()
            else:
                self.charge(0, "charge0")
        self.end_epoch()

    def compare(self, harness: Harness):
        out = harness.run([f"T {self.hz}"] + self.cmds)
        assert out[0] == "ok"
        m = Model(self.hz)
        for i, (line, (now, ret, label)) in enumerate(zip(out[1:], self.expect)):
            s = parse_state(line)
            m.r, m.period, m.budget, m.max, m.sporadic = self.snap[i]
            where = f"step {i} ({self.cmds[i]}, {label})"
            try:
                check_state(s, m, self.size_bits, now, ret, where)
            except AssertionError as e:
                # The script reproduces it: feed it to the harness.
                raise AssertionError(f"{e}\nharness script:\nT {self.hz}\n"
                                     + "\n".join(self.cmds[:i + 1])) from None


def windows_ok(sim: Sim, tolerance: int):
    """The sliding window, for histories under the "switch" protocol."""
    for since, budget, period, _, runs in sim.epochs:
        if period == 0 or period == budget:
            continue
        got, at = max_window(runs, period, since)
        limit = budget + tolerance
        assert got <= limit, (f"{got} ticks in the window [{at}, {at + period}) "
                              f"(budget {budget}, period {period}, limit {limit})\n"
                              + "\n".join(sim.cmds))


def history_strategy(kind: str, hz: int, max_steps: int):
    """Hypothesis draws the length of the history and a seed; the details
    come from a PRNG with that seed (drawing every number through Hypothesis
    costs ~0.1 ms each, too slow for thousands of histories; shrinking still
    shortens a failing history)."""
    @st.composite
    def build(draw):
        steps = draw(st.integers(1, max_steps), label="steps")
        seed = draw(st.integers(0, 2**64 - 1), label="seed")
        sim = Sim(random.Random(seed), hz, kind)
        sim.history(steps)
        return sim
    return build()


HZ_QEMU = 10_000_000
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                derandomize=True)


def tolerance(hz: int) -> int:
    """Honest tolerance: one kernel WCET (10 us). Time is used before its
    release in two ways, an overrun (at most one kernel entry past the expiry,
    the histories use up to the kernel WCET) and the ready slack (a head due
    within one kernel WCET runs); the worst excess is the larger of the two,
    not the sum (model-only runs with the two set apart). Tight: the
    histories reach it."""
    return us_to_ticks(10, hz)


@settings(max_examples=3000, **SETTINGS)
@given(history_strategy("switch", HZ_QEMU, 40))
def test_sporadic_histories(harness, sim):
    """Sporadic contexts, refill_unblock_check at every switch to the context
    (thesis §5.8): model agreement, ring invariants, sliding window."""
    sim.compare(harness)
    windows_ok(sim, tolerance(HZ_QEMU))


@settings(max_examples=1000, **SETTINGS)
@given(history_strategy("switch", 1_000_000, 40))
def test_sporadic_histories_1mhz(harness, sim):
    """The same at a 1 MHz timebase (HiFive Unleashed): MIN_BUDGET is 20
    ticks, the overrun at most 10."""
    sim.compare(harness)
    windows_ok(sim, tolerance(1_000_000))


@settings(max_examples=1000, **SETTINGS)
@given(history_strategy("wake", HZ_QEMU, 40))
def test_wake_only_protocol_histories(harness, sim):
    """refill_unblock_check only when a blocked thread wakes (mainline seL4's
    sporadic flag): model agreement and ring invariants. There is no window
    bound to check: see test_starved_context_catches_up_without_switch_check."""
    sim.compare(harness)


@settings(max_examples=1000, **SETTINGS)
@given(history_strategy("rr", HZ_QEMU, 40))
def test_round_robin_histories(harness, sim):
    """Round robin (budget == period, stored as period 0): model agreement and
    the two-refill ring (head = slice left, tail = slice used)."""
    sim.compare(harness)


# --------------------------------------------------------------------------
# Worked examples: each correction and rule on its own
# --------------------------------------------------------------------------

MIN = us_to_ticks(20, HZ_QEMU)  # 200
WCET = us_to_ticks(10, HZ_QEMU)  # 100


def script(harness, *cmds: str) -> list[State]:
    out = harness.run([f"T {HZ_QEMU}", *cmds])
    assert out[0] == "ok"
    states = [parse_state(line) for line in out[1:]]
    for s, c in zip(states, cmds):
        assert s.valid, f"{c}: {s}"
    return states


def test_capacity(harness):
    """(2^b - 96) / 16 refills (seL4's 96-byte SC header, seL4_MaxExtraRefills): 2 for 2^7, 10 for 2^8; the
    ring of a 2^7 object holds exactly MIN_REFILLS. A context may be
    configured with at most CONFIG_MAX_REFILLS of them."""
    sizes = (7, 8, 9, 10, 38)
    out = [tuple(int(x) for x in line.split()) for line in harness.run([f"K {b}" for b in sizes])]
    assert [c for c, _ in out] == [2, 10, 26, 58, (2**38 - 96) // 16]
    assert [m for _, m in out] == [min(c, MAX_REFILLS) for c, _ in out]
    assert out[0][1] == 2 and out[-1][1] == MAX_REFILLS


def test_ring_never_exceeds_max_refills(harness):
    """A request for more refills than CONFIG_MAX_REFILLS (which
    ConfigureFlags refuses) still gets a ring of at most that many, also from
    refill_update; and a history that splits the head at every step fills the
    ring up to exactly that many, never more (the loops' WCET bound)."""
    big = MAX_REFILLS + 50
    s = script(harness, f"N 12 {big} 1000 100000 1 0", f"U 100000 1000 {big} 0 0")
    assert s[0].max == MAX_REFILLS and s[1].max == MAX_REFILLS
    cmds = [f"N 12 {big} 4000 100000 1 0"]
    now = 0
    for _ in range(3 * MAX_REFILLS):
        cmds += [f"B {now}", f"C 200 {now + 200}"]  # a chunk of MIN_BUDGET, then preempted
        now += 1000
    s = script(harness, *cmds)
    counts = [x.count for x in s]
    assert max(counts) == MAX_REFILLS, counts


def test_at_least_two_refills(harness):
    s = script(harness, "N 8 1 1000 10000 1 0", "N 8 0 1000 10000 1 0")
    assert s[0].max == 2 and s[1].max == 2


def test_new_sporadic_and_round_robin(harness):
    s = script(harness, "N 8 4 1000 10000 1 500", "N 7 9 1000 1000 0 500", "N 7 9 1000 0 0 500")
    assert (s[0].period, s[0].max, s[0].refills) == (10000, 4, [(500, 1000)])
    # budget == period and period 0 are both round robin: period stored as 0,
    # two refills whatever extra_refills says.
    for rr in s[1:]:
        assert (rr.period, rr.max, rr.refills) == (0, 2, [(500, 1000), (500, 0)])


def test_partial_use_keeps_remnant_with_two_refills(harness):
    """The App. B loop `while (head < MIN_BUDGET || refill_full)` would, with
    the default two refills, merge the rest of the head into the refill a
    period away at every preemption. Here the rest stays usable now."""
    s = script(harness, "N 7 2 1000 10000 1 0", "B 0", "C 300 300", "D 300")
    assert s[2].refills == [(300, 700), (10000, 300)]
    assert s[3].ready and s[3].sufficient
    # A second preemption with the ring full merges into the tail (moved so
    # it ends where the new chunk would), not the head.
    s = script(harness, "N 7 2 1000 10000 1 0", "B 0", "C 300 300", "B 5000", "C 300 5300")
    assert s[4].refills == [(5300, 400), (15000 + 300 - 600, 600)]
    assert s[4].ready


def test_single_refill_never_popped(harness):
    """Listing 7.4 ends with `while (head < MIN_BUDGET || head == tail)`: on a
    one-refill ring that pops the only refill. The ring stays non-empty."""
    s = script(harness, "N 7 2 1000 10000 1 0", "B 0", "C 1000 1000", "B 10000", "C 900 10900")
    assert s[2].refills == [(10000, 1000)]
    # 100 left is below MIN_BUDGET: the whole budget moves a period on.
    assert s[4].refills == [(20000, 1000)] and s[4].ret


def test_small_remnant_joins_next_refill(harness):
    s = script(harness, "N 8 4 1000 10000 1 0", "B 0", "C 400 400", "B 2000", "C 500 2500")
    # 100 left of the head (< MIN_BUDGET) joins the next refill.
    assert s[4].refills == [(10000, 500), (12000, 500)] and s[4].ret


def test_overrun_is_charged_and_delays(harness):
    """An overrun (time past the expiry) is cut off the next refill (back one
    period after that refill's release) and the rest of it moves on by it."""
    s = script(harness, "N 8 4 1000 10000 1 0", "B 0", "C 600 600",
               "B 5000", "C 480 5480")  # head 400: ran 80 over
    # The 80 cut off is below MIN_BUDGET: it joins the tail, which moves so
    # that the merged refill ends where the 80 would have (20000 + 80).
    assert s[4].refills == [(10080, 520), (20000 + 80 - 480, 480)]
    assert s[4].ret and not s[4].ready


def test_overrun_tolerance_is_reached(harness):
    """The tolerance is tight: a history that gets budget + one overrun in a
    window of one period (the overrun is the kernel entry that noticed the
    expiry; the window holds that entry and the whole budget)."""
    st_ = script(harness, "N 8 4 1000 10000 1 0", "B 0", f"C {1000 + WCET} {1000 + WCET}")
    head = st_[2].refills[0]
    # The budget comes back one period after the first use; the window
    # [0, 10000) saw 1000 + WCET. The next use of the overrun's share is a
    # period after its refill's release, outside that window.
    assert head[0] >= 10000 and st_[2].refills == [(10000 + WCET, 1000 - WCET), (20000, WCET)]


def test_slack_does_not_shorten_the_period(harness):
    """A thread woken within the ready slack before its release (one kernel
    WCET) runs early, but its release stays where it was: the thesis's
    `HEAD.time = now` would move it earlier and, repeated every period,
    shorten the period by the slack."""
    cmds = ["N 7 2 1000 10000 1 0", "B 0", "C 1000 1000"]
    t = 10000
    for _ in range(5):
        cmds += [f"B {t - WCET}", f"C 1000 {t - WCET + 1000}"]
        t += 10000
    s = script(harness, *cmds)
    assert [x.refills[0][0] for x in s[3::2]] == [10000, 20000, 30000, 40000, 50000]
    assert s[-1].refills == [(60000, 1000)]


def test_yield(harness):
    """Sporadic: the rest of the head refill is given up (back one period
    after its release); round robin: the slice is refilled."""
    s = script(harness, "N 8 4 1000 10000 1 0", "B 0", "Y 300 300",
               "N 7 2 1000 1000 0 0", "C 500 500", "Y 100 600")
    assert s[2].refills == [(10000, 1000)] and s[2].ret and not s[2].ready
    assert s[4].refills == [(0, 500), (0, 500)] and not s[4].ret
    assert s[5].refills == [(600, 1000), (600, 0)] and s[5].ret


def test_round_robin_refills_below_min_budget(harness):
    s = script(harness, "N 7 2 1000 0 0 0", "C 700 700", "C 150 850", "C 5000 5850")
    assert s[1].refills == [(0, 300), (0, 700)] and not s[1].ret
    assert s[2].refills == [(850, 1000), (850, 0)] and s[2].ret  # 150 left < 200
    assert s[3].refills == [(5850, 1000), (5850, 0)] and s[3].ret  # overrun: no carry


def test_update_defers_extra_budget(harness):
    """§8 item 13: reconfiguring an active context must not hand out the new
    budget at once; pending refills are dropped; a smaller budget trims the
    head."""
    s = script(harness, "N 8 4 1000 10000 1 0", "B 0", "C 400 400",
               "U 20000 3000 6 0 500", "U 20000 300 6 0 600")
    assert s[3].refills == [(500, 600), (20500, 2400)] and s[3].max == 6
    assert s[4].refills == [(600, 300)]


def test_update_of_the_running_context_takes_its_usage_off_the_head(harness):
    """The scheduler reconfigures a running context without charging it
    first: refill_update takes the usage since the last charge off the head
    (its release moves on by it, sporadic; the slice shrinks, round robin),
    which is what a charge followed by the update gives."""
    s = script(harness, "N 8 4 1000 10000 1 0", "B 0", "U 20000 3000 6 300 300")
    assert s[2].refills == [(300, 700), (20300, 2300)]
    charged = script(harness, "N 8 4 1000 10000 1 0", "B 0", "C 300 300", "U 20000 3000 6 0 300")
    assert charged[3].refills == s[2].refills
    # Round robin before: the slice shrinks, the release stays (then now).
    s = script(harness, "N 8 4 1000 1000 0 0", "U 20000 3000 6 300 300")
    assert s[1].refills == [(300, 700), (20300, 2300)]


def test_starved_context_catches_up_without_switch_check(harness):
    """Why refill_unblock_check must run when the context is switched to, not
    only when its thread wakes (mainline's sporadic flag): a runnable thread
    kept off the processor for five periods still has refills dated before
    that, and runs them back to back: five budgets in one period. With the
    check at the switch its head starts when it runs, and it gets one."""
    pre = ["N 8 4 1000 10000 1 0", "B 0", "C 500 500"]  # preempted at 500
    t = 60000
    wake_only, switch = list(pre), list(pre) + [f"B {t}"]
    for i in range(5):
        wake_only.append(f"C 500 {t + 500}")
        wake_only.append(f"D {t + 500}")
        t += 500
    a = script(harness, *wake_only)
    assert all(x.ready and x.sufficient for x in a[3:])  # still going at 62500
    b = script(harness, *switch, "C 500 60500", "C 500 61000", "D 61000")
    assert not b[-1].ready  # one budget, then it waits a period


def test_refill_source_builds_freestanding(tmp_path):
    """refill.c builds with the kernel's flags and needs nothing but
    us_to_ticks (no libgcc, no memcpy for the struct copies)."""
    cc = shutil.which("riscv64-unknown-elf-gcc")
    nm = shutil.which("riscv64-unknown-elf-nm")
    if cc is None or nm is None:
        pytest.fail("riscv64-unknown-elf-gcc/nm not found: install gcc-riscv64-unknown-elf",
                    pytrace=False)
    obj = tmp_path / "refill.o"
    p = subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-ffreestanding",
                        "-fno-builtin", "-nostdlib", "-march=rv64imac_zicsr_zifencei", "-mabi=lp64",
                        "-mcmodel=medany", "-mno-relax", "-fno-pic", "-fno-stack-protector",
                        "-fno-common", "-DKAIROS_FLAVOUR_DEBUG", "-I", str(KINC), "-I", str(AINC),
                        "-c", str(ROOT / "kernel/kernel/refill.c"), "-o", str(obj)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    undefined = set(subprocess.run([nm, "-u", str(obj)], capture_output=True, text=True,
                                   check=True).stdout.split()) - {"U"}
    assert undefined <= {"us_to_ticks"}, undefined


def test_user_library_knows_the_refill_cap():
    """The user library's KAIROS_MAX_REFILLS (what the on-target tests
    expect in the ConfigureFlags RangeError) is the kernel's
    CONFIG_MAX_REFILLS: kairos.h includes the uapi header config.h takes it
    from and keeps no copy of its own."""
    text = (ROOT / "user/lib/include/kairos/kairos.h").read_text()
    assert re.search(r"^#include <kairos/limits.h>", text, re.M), "kairos.h does not include <kairos/limits.h>"
    assert not re.search(r"^#define KAIROS_MAX_REFILLS", text, re.M), "kairos.h defines its own KAIROS_MAX_REFILLS"
