"""Schedule traces (docs/schedule-traces.md): the kernel's trace buffer,
read from the console of a run booted with `trace=on`, turned into
per-thread execution intervals, jobs and response times, a table and a
Gantt chart.

Lines the kernel prints when the machine halts (kernel/kernel/trace.c):

    ktrace-begin: N events, D dropped, T ticks per ms
    kt <time hex> <kind> <tcb hex> <arg hex>
    ktrace-thread: <tcb hex> <name>
    ktrace-end

Times are timer ticks; `T ticks per ms` converts them to µs. Under QEMU's
`-icount shift=0` one instruction takes 1 ns of virtual time, the time base
of `kairos analyze` with its default model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SWITCH, THROTTLE, RELEASE, IRQ, SYSCALL, TIMEOUT, WAKE = range(1, 8)
KIND_NAMES = {SWITCH: "switch", THROTTLE: "throttle", RELEASE: "release", IRQ: "irq", SYSCALL: "syscall",
              TIMEOUT: "timeout", WAKE: "wake"}
# Kernel thread states (kernel/include/object.h): blocked ones end a job.
BLOCKED_STATES = {3, 4, 5, 6}       # on receive, send, reply, notification
STATE_NAMES = {0: "inactive", 1: "running", 2: "restart", 3: "blocked on receive", 4: "blocked on send",
               5: "blocked on reply", 6: "blocked on notification", 7: "idle", 0xFF: "idle"}

BEGIN = re.compile(r"ktrace-begin: (\d+) events, (\d+) dropped, (\d+) ticks per ms")
EVENT = re.compile(r"kt ([0-9a-f]+) (\d+) ([0-9a-f]+) ([0-9a-f]+)$")
THREAD = re.compile(r"ktrace-thread: ([0-9a-f]+) (.*)$")


class TraceError(Exception):
    pass


@dataclass(frozen=True)
class Event:
    time_us: float
    kind: int
    thread: str          # a name, or "idle"
    arg: int


@dataclass
class Trace:
    events: list[Event]
    dropped: int
    ticks_per_us: float
    end_us: float

    def threads(self) -> list[str]:
        names = []
        for e in self.events:
            if e.thread != "idle" and e.thread not in names:
                names.append(e.thread)
        return names


def parse_trace(lines: list[str]) -> Trace:
    """The trace from a console log; TraceError if it is missing or cut short."""
    begin = None
    raw: list[tuple[int, int, int, int]] = []
    names: dict[int, str] = {}
    ended = False
    for line in lines:
        line = line.strip()
        if begin is None:
            m = BEGIN.search(line)
            if m:
                begin = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
            continue
        if line == "ktrace-end":
            ended = True
            break
        m = EVENT.match(line)
        if m:
            raw.append((int(m.group(1), 16), int(m.group(2)), int(m.group(3), 16), int(m.group(4), 16)))
            continue
        m = THREAD.match(line)
        if m:
            names[int(m.group(1), 16)] = m.group(2)
    if begin is None:
        raise TraceError("no schedule trace in the output (a debug or check kernel booted with trace=on, "
                         "and a run that ends in seL4_DebugHalt)")
    if not ended or len(raw) != begin[0]:
        raise TraceError(f"the trace is cut short: {len(raw)} of {begin[0]} events")
    ticks_per_us = begin[2] / 1000.0
    t0 = raw[0][0] if raw else 0

    def name(tcb: int) -> str:
        return "idle" if tcb == 0 else names.get(tcb, f"tcb@{tcb:x}")

    events = [Event((t - t0) / ticks_per_us, kind, name(tcb), arg) for t, kind, tcb, arg in raw]
    return Trace(events, begin[1], ticks_per_us, events[-1].time_us if events else 0.0)


@dataclass
class Job:
    release_us: float
    end_us: float | None = None

    @property
    def response_us(self) -> float | None:
        return None if self.end_us is None else self.end_us - self.release_us


@dataclass
class ThreadStats:
    name: str
    intervals: list[tuple[float, float]] = field(default_factory=list)   # running (start, end)
    jobs: list[Job] = field(default_factory=list)
    throttles: list[float] = field(default_factory=list)
    releases: list[float] = field(default_factory=list)
    wakes: list[float] = field(default_factory=list)
    timeouts: list[float] = field(default_factory=list)
    job_kind: str = ""                      # "notified" or "init"
    deadline_us: float | None = None

    @property
    def busy_us(self) -> float:
        return sum(b - a for a, b in self.intervals)

    def completed(self) -> list[Job]:
        return [j for j in self.jobs if j.end_us is not None]

    def worst_response_us(self) -> float | None:
        done = self.completed()
        return max(j.response_us for j in done) if done else None   # type: ignore[type-var]

    def misses(self) -> list[Job]:
        if self.deadline_us is None:
            return []
        return [j for j in self.jobs if (j.response_us if j.end_us is not None else None) is not None
                and j.response_us > self.deadline_us]                # type: ignore[operator]

    def max_job_busy_us(self) -> float:
        """The most processor time any completed job used (its budget use)."""
        best = 0.0
        for j in self.completed():
            best = max(best, sum(max(0.0, min(b, j.end_us) - max(a, j.release_us))   # type: ignore[type-var]
                                 for a, b in self.intervals))
        return best


def thread_stats(trace: Trace, job_kinds: dict[str, str] | None = None,
                 deadlines: dict[str, float] | None = None) -> dict[str, ThreadStats]:
    """Per thread: running intervals, and jobs by the thread's job kind.

    * "notified": a job is released when the thread is woken (a signal,
      message or interrupt notification) and ends when it next leaves the
      processor blocked;
    * "init" (periodic by Yield, or spinning on its budget): a job is
      released when its refill comes back (release queue -> ready) and ends
      when it next waits for a refill (Yield, or its budget used up).
    Without a kind for a thread, one that was ever woken is "notified",
    else "init".
    """
    stats = {n: ThreadStats(n) for n in trace.threads()}
    running: str | None = None
    since = 0.0
    for e in trace.events:
        s = stats.get(e.thread)
        if e.kind == SWITCH:
            if running is not None and running in stats:
                stats[running].intervals.append((since, e.time_us))
            running = None if e.thread == "idle" else e.thread
            since = e.time_us
        elif s is None:
            continue
        elif e.kind == WAKE:
            s.wakes.append(e.time_us)
        elif e.kind == THROTTLE:
            s.throttles.append(e.time_us)
        elif e.kind == RELEASE:
            s.releases.append(e.time_us)
        elif e.kind == TIMEOUT:
            s.timeouts.append(e.time_us)
    if running is not None and running in stats:
        stats[running].intervals.append((since, trace.end_us))
    for s in stats.values():
        s.job_kind = (job_kinds or {}).get(s.name) or ("notified" if s.wakes else "init")
        if deadlines and s.name in deadlines:
            s.deadline_us = deadlines[s.name]
        _build_jobs(trace, s)
    return stats


def _build_jobs(trace: Trace, s: ThreadStats) -> None:
    if s.job_kind == "notified":
        starts = sorted(s.wakes)
        # Ends: the thread left the processor blocked.
        ends = []
        running = False
        for e in trace.events:
            if e.kind != SWITCH:
                continue
            if running and e.arg in BLOCKED_STATES:
                ends.append(e.time_us)
            running = e.thread == s.name
    else:
        starts = sorted(s.releases)
        ends = sorted(s.throttles)
    jobs = []
    i = 0
    for k, r in enumerate(starts):
        nxt = starts[k + 1] if k + 1 < len(starts) else float("inf")
        while i < len(ends) and ends[i] < r:
            i += 1
        end = ends[i] if i < len(ends) and ends[i] <= nxt else None
        jobs.append(Job(r, end))
    s.jobs = jobs


def gantt(trace: Trace, stats: dict[str, ThreadStats], paths: list[str], title: str = "",
          window: tuple[float, float] | None = None) -> None:
    """One row per thread: running intervals; releases (green ^), budget
    exhaustion (red x), deadline misses (red |, at release + deadline)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lo, hi = window if window else (0.0, trace.end_us)
    names = list(stats)
    fig, ax = plt.subplots(figsize=(14, 1.0 + 0.6 * len(names)))
    for row, name in enumerate(names):
        s = stats[name]
        bars = [(a, b - a) for a, b in s.intervals if b > lo and a < hi]
        ax.broken_barh(bars, (row - 0.35, 0.7), facecolors=f"C{row % 10}")
        rel = [j.release_us for j in s.jobs if lo <= j.release_us <= hi]
        ax.plot(rel, [row - 0.45] * len(rel), "^", color="green", markersize=5, linestyle="none",
                label="release" if row == 0 else None)
        thr = [t for t in s.throttles if lo <= t <= hi]
        ax.plot(thr, [row + 0.45] * len(thr), "x", color="red", markersize=5, linestyle="none",
                label="budget exhausted" if row == 0 else None)
        for j in s.misses():
            at = j.release_us + (s.deadline_us or 0)
            if lo <= at <= hi:
                ax.vlines(at, row - 0.5, row + 0.5, colors="red", linewidth=2)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names)
    ax.set_xlim(lo, hi)
    ax.set_ylim(-0.8, len(names) - 0.2)
    ax.invert_yaxis()
    ax.set_xlabel("time (µs of QEMU virtual time since the first event)")
    ax.set_title(title)
    handles, labels = ax.get_legend_handles_labels()
    if any(s.misses() for s in stats.values()):
        from matplotlib.lines import Line2D
        handles.append(Line2D([0], [0], color="red", linewidth=2))
        labels.append("deadline miss")
    if handles:
        ax.legend(handles, labels, loc="upper right", fontsize=8)
    fig.tight_layout()
    for p in paths:
        fig.savefig(p)
    plt.close(fig)
