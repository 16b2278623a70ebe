"""A library of reservation-scheduler models, written as UPPAAL XML.

The structure follows Åsberg, Pettersson and Nolte ("Evaluating the run-time
performance of synthesised resource-reservation schedulers using TAtoC,
UPPAAL and Frama-C", MRTC report 2013): a global scheduler over servers, each
server holding tasks under a local scheduler, driven once per time unit by a
timer; event order within one instant is explicit (here: releases and
replenishments, then the polling rule, then the scheduling decision, then one
unit of execution), as the paper encodes it with guards rather than channel
priorities. Their models only have periodic servers; this library adds
polling and deferrable servers (Strosnider, Lehoczky and Sha, "The deferrable
server algorithm", IEEE ToC 1995) and EDF as the global policy.

One instant is a chain of committed locations of the `Timer`, each step a
broadcast the other automata react to:
- `tick`: a server whose period ends gets its budget back (all kinds: full
  budget C); a task job's deadline counter runs down, a periodic task releases
  its next job when its period ends, a sporadic task may release one any
  time once its minimum inter-arrival time has passed (nondeterministic);
  a job still unfinished at its deadline sets `missed`.
- `poll`: a polling server with no pending job loses its budget.
- `decide`: the `Scheduler` picks the server (FPS: highest priority, EDF:
  earliest end of period, ties to the lower index) among the eligible ones
  (budget left; polling and deferrable servers also need a pending job; a
  periodic server runs its budget out even when idle, as the paper's
  periodic servers), then the task inside it (FPS or EDF locally).
- `execute`: the chosen server's budget and the chosen task's remaining
  execution drop by one; `used[i]` counts what server i consumed since its
  last replenishment (the observer).

Properties (queries in the file): no deadlock; no server uses more than its
budget in a period; no deadline missed; the decision is the policy's (the
chosen server is eligible and no eligible server beats it); budgets never
exceed their capacity.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from math import lcm

SERVER_KINDS = ("periodic", "polling", "deferrable")
POLICIES = ("fps", "edf")


@dataclass(frozen=True)
class Server:
    name: str
    kind: str      # periodic | polling | deferrable
    budget: int    # time units per period
    period: int
    priority: int  # larger runs first (FPS)


@dataclass(frozen=True)
class Task:
    name: str
    server: int    # index into the servers
    wcet: int
    period: int    # period, or minimum inter-arrival time if sporadic
    deadline: int  # relative, <= period
    priority: int = 0
    sporadic: bool = False


@dataclass
class Workload:
    servers: list[Server]
    tasks: list[Task]
    policy: str = "fps"        # global: fps | edf
    local_policy: str = "fps"  # inside a server: fps | edf
    bugs: set[str] = field(default_factory=set)  # planted faults, for tests

    def check(self) -> None:
        if self.policy not in POLICIES or self.local_policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}")
        for s in self.servers:
            if s.kind not in SERVER_KINDS:
                raise ValueError(f"server {s.name}: kind must be one of {SERVER_KINDS}")
            if not 0 < s.budget <= s.period:
                raise ValueError(f"server {s.name}: need 0 < budget <= period")
        for t in self.tasks:
            if not 0 <= t.server < len(self.servers):
                raise ValueError(f"task {t.name}: no server {t.server}")
            if not 0 < t.wcet <= t.deadline <= t.period:
                raise ValueError(f"task {t.name}: need 0 < wcet <= deadline <= period")


def _arr(values: list[int]) -> str:
    return "{" + ", ".join(str(v) for v in values) + "}"


def _work(w: Workload, i: int) -> str:
    ks = [k for k, t in enumerate(w.tasks) if t.server == i]
    return "(" + " || ".join(f"rem[{k}] > 0" for k in ks) + ")" if ks else "false"


def _eligible(w: Workload, i: int) -> str:
    s = w.servers[i]
    if s.kind == "periodic":
        return f"(budget[{i}] > 0)"
    return f"(budget[{i}] > 0 && {_work(w, i)})"


def _beats(w: Workload, i: int, j: int) -> str:
    """Server i is preferred to server j by the global policy."""
    if w.policy == "fps":
        a, b = w.servers[i].priority, w.servers[j].priority
        return "true" if (a > b or (a == b and i < j)) else "false"
    tie = "true" if i < j else "false"
    return f"(next_rel[{i}] < next_rel[{j}] || (next_rel[{i}] == next_rel[{j}] && {tie}))"


def _server_choice(w: Workload) -> str:
    n = len(w.servers)
    conds = []
    for i in range(n):
        others = " && ".join(f"(!{_eligible(w, j)} || {_beats(w, i, j)})" for j in range(n) if j != i)
        conds.append(f"{_eligible(w, i)}" + (f" && {others}" if others else ""))
    expr = "NS"
    for i in reversed(range(n)):
        expr = f"(({conds[i]}) ? {i} : {expr})"
    return expr


def _task_choice(w: Workload) -> str:
    expr = "NT"
    for i in reversed(range(len(w.servers))):
        ks = [k for k, t in enumerate(w.tasks) if t.server == i]
        inner = "NT"
        for k in reversed(ks):
            others = []
            for m in ks:
                if m == k:
                    continue
                if w.local_policy == "fps":
                    a, b = w.tasks[k].priority, w.tasks[m].priority
                    better = "true" if (a > b or (a == b and k < m)) else "false"
                else:
                    tie = "true" if k < m else "false"
                    better = f"(tdl[{k}] < tdl[{m}] || (tdl[{k}] == tdl[{m}] && {tie}))"
                others.append(f"(rem[{m}] == 0 || {better})")
            cond = " && ".join([f"rem[{k}] > 0"] + others)
            inner = f"(({cond}) ? {k} : {inner})"
        expr = f"((run_s == {i}) ? {inner} : {expr})"
    return expr


class _Builder:
    def __init__(self) -> None:
        self.root = ET.Element("nta")
        self._ids = 0

    def declaration(self, parent: ET.Element, text: str) -> None:
        ET.SubElement(parent, "declaration").text = text

    def template(self, name: str, params: str = "") -> ET.Element:
        t = ET.SubElement(self.root, "template")
        ET.SubElement(t, "name").text = name
        if params:
            ET.SubElement(t, "parameter").text = params
        return t

    def location(self, t: ET.Element, name: str, invariant: str = "", committed: bool = False) -> str:
        self._ids += 1
        ident = f"id{self._ids}"
        loc = ET.SubElement(t, "location", id=ident)
        ET.SubElement(loc, "name").text = name
        if invariant:
            ET.SubElement(loc, "label", kind="invariant").text = invariant
        if committed:
            ET.SubElement(loc, "committed")
        return ident

    def init(self, t: ET.Element, ident: str) -> None:
        # UPPAAL wants <init> after the locations and before the transitions.
        t.append(ET.Element("init", ref=ident))

    def edge(self, t: ET.Element, src: str, dst: str, guard: str = "", sync: str = "",
             update: str = "") -> None:
        e = ET.SubElement(t, "transition")
        ET.SubElement(e, "source", ref=src)
        ET.SubElement(e, "target", ref=dst)
        for kind, text in (("guard", guard), ("synchronisation", sync), ("assignment", update)):
            if text:
                ET.SubElement(e, "label", kind=kind).text = text

    def text(self) -> str:
        ET.indent(self.root)
        return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(self.root, encoding="unicode") + "\n"


def build(w: Workload) -> str:
    """The UPPAAL XML model of a workload, with its queries."""
    w.check()
    ns, nt = len(w.servers), len(w.tasks)
    S, T = w.servers, w.tasks
    hi_t = max(max(s.period for s in S), max((t.period for t in T), default=1))
    b = _Builder()
    b.declaration(b.root, "\n".join([
        f"const int NS = {ns};",
        f"const int NT = {nt};",
        f"const int C[NS] = {_arr([s.budget for s in S])};",
        f"const int T[NS] = {_arr([s.period for s in S])};",
        f"const int TC[NT] = {_arr([t.wcet for t in T])};",
        f"const int TP[NT] = {_arr([t.period for t in T])};",
        f"const int TD[NT] = {_arr([t.deadline for t in T])};",
        f"int[0,{2 * hi_t}] budget[NS] = {_arr([s.budget for s in S])};",
        f"int[0,{hi_t}] next_rel[NS] = {_arr([s.period for s in S])};",
        f"int[0,{2 * hi_t}] used[NS];",
        f"int[0,{hi_t}] rem[NT] = {_arr([t.wcet for t in T])};",
        f"int[0,{hi_t}] trel[NT] = {_arr([t.period for t in T])};",
        f"int[0,{hi_t}] tdl[NT] = {_arr([t.deadline for t in T])};",
        "bool missed = false;",
        "int[0,NS] run_s = NS;",
        "int[0,NT] run_t = NT;",
        "broadcast chan tick, poll, decide, execute;",
    ]))

    timer = b.template("Timer")
    b.declaration(timer, "clock x;")
    wait = b.location(timer, "Wait", "x <= 1")
    released = b.location(timer, "Released", committed=True)
    polled = b.location(timer, "Polled", committed=True)
    decided = b.location(timer, "Decided", committed=True)
    b.init(timer, released)
    # The last decision is cleared when time moves on (by the sender, whose
    # updates come before the receivers'; nobody reads it at a tick).
    b.edge(timer, wait, released, "x == 1", "tick!", "x = 0, run_s = NS, run_t = NT")
    b.edge(timer, released, polled, sync="poll!")
    b.edge(timer, polled, decided, sync="decide!")
    b.edge(timer, decided, wait, sync="execute!")

    srv = b.template("Server", "const int i, const int kind")
    run = b.location(srv, "Serving")
    b.init(srv, run)
    refill = "C[i]" if "refill_adds" not in w.bugs else "budget[i] + C[i]"
    b.edge(srv, run, run, sync="tick?", update=(
        f"budget[i] = (next_rel[i] == 1) ? {refill} : budget[i], "
        + ("" if "used_not_reset" in w.bugs else "used[i] = (next_rel[i] == 1) ? 0 : used[i], ")
        + "next_rel[i] = (next_rel[i] == 1) ? T[i] : next_rel[i] - 1"))
    b.edge(srv, run, run, sync="execute?", update=(
        "budget[i] = (run_s == i) ? budget[i] - 1 : budget[i], "
        "used[i] = (run_s == i) ? used[i] + 1 : used[i]"))

    # The polling rule needs the server's tasks: one small template per
    # polling server keeps the expression concrete.
    for i, s in enumerate(S):
        if s.kind == "polling":
            pt = b.template(f"Poll{i}")
            loc = b.location(pt, "Watching")
            b.init(pt, loc)
            b.edge(pt, loc, loc, sync="poll?", update=f"budget[{i}] = {_work(w, i)} ? budget[{i}] : 0")

    task = b.template("Task", "const int k, const int sporadic")
    tl = b.location(task, "Active")
    b.init(task, tl)
    countdown = ("missed = missed || (rem[k] > 0 && tdl[k] == 1), "
                 "tdl[k] = (rem[k] > 0 && tdl[k] > 0) ? tdl[k] - 1 : tdl[k]")
    b.edge(task, tl, tl, "trel[k] > 1", "tick?", countdown + ", trel[k] = trel[k] - 1")
    b.edge(task, tl, tl, "trel[k] == 1", "tick?",
           countdown + ", rem[k] = TC[k], tdl[k] = TD[k], trel[k] = TP[k]")
    b.edge(task, tl, tl, "trel[k] == 1 && sporadic == 1", "tick?", countdown)
    # A finished job's deadline counter is cleared, so that states differing
    # only in a value nobody reads are one state.
    b.edge(task, tl, tl, sync="execute?", update="rem[k] = (run_t == k && rem[k] > 0) ? rem[k] - 1 : rem[k], "
                                                 "tdl[k] = (rem[k] == 0) ? 0 : tdl[k]")

    sched = b.template("Scheduler")
    sl = b.location(sched, "Ready")
    b.init(sched, sl)
    choice = _server_choice(w)
    if "ignore_budget" in w.bugs:
        choice = choice.replace("budget[0] > 0", "true")
    b.edge(sched, sl, sl, sync="decide?", update=f"run_s = {choice}, run_t = {_task_choice(w)}")

    inst = []
    names = []
    for i, s in enumerate(S):
        inst.append(f"{s.name} = Server({i}, {SERVER_KINDS.index(s.kind)});")
        names.append(s.name)
        if s.kind == "polling":
            names.append(f"Poll{i}")
    for k, t in enumerate(T):
        inst.append(f"{t.name} = Task({k}, {int(t.sporadic)});")
        names.append(t.name)
    ET.SubElement(b.root, "system").text = "\n".join(inst + ["system Timer, " + ", ".join(names)
                                                             + ", Scheduler;"])
    queries = ET.SubElement(b.root, "queries")

    def query(formula: str, comment: str) -> None:
        q = ET.SubElement(queries, "query")
        ET.SubElement(q, "formula").text = formula
        ET.SubElement(q, "comment").text = comment

    query("A[] not deadlock", "no deadlock")
    query("A[] forall (i : int[0,NS-1]) used[i] <= C[i]",
          "no server uses more than its budget between two replenishments")
    query("A[] forall (i : int[0,NS-1]) budget[i] <= C[i]", "a budget never exceeds its capacity")
    query("A[] !missed", "no task misses its deadline")
    policy = []
    for i in range(ns):
        beaten = " && ".join(f"(!{_eligible(w, j)} || {_beats(w, i, j)})" for j in range(ns) if j != i)
        policy.append(f"(run_s == {i} imply ({_eligible(w, i)}" + (f" && {beaten}" if beaten else "") + "))")
    none = " && ".join(f"!{_eligible(w, i)}" for i in range(ns))
    policy.append(f"(run_s == NS imply ({none}))")
    query("A[] Timer.Decided imply (" + " && ".join(policy) + ")",
          f"the chosen server is the one the {w.policy.upper()} policy gives")
    return b.text()


def hyperperiod(w: Workload) -> int:
    return lcm(*[s.period for s in w.servers], *[t.period for t in w.tasks])


# Named examples: the paper's shape (2-7 servers, one task each) and mixes of
# the three server kinds. Small numbers keep the state spaces small.
EXAMPLES: dict[str, Workload] = {
    "fps-periodic": Workload(
        [Server("S1", "periodic", 2, 5, 3), Server("S2", "periodic", 2, 6, 2), Server("S3", "periodic", 2, 10, 1)],
        [Task("A", 0, 2, 5, 5), Task("B", 1, 2, 6, 6), Task("C", 2, 1, 10, 10)]),
    "fps-mixed": Workload(
        [Server("Ctl", "periodic", 2, 5, 2), Server("Evt", "deferrable", 1, 4, 3),
         Server("Bg", "polling", 2, 10, 1)],
        [Task("Ctl1", 0, 1, 5, 5, 1), Task("Ctl2", 0, 1, 10, 10, 0), Task("Irq", 1, 1, 4, 4, sporadic=True),
         Task("Log", 2, 1, 20, 20, sporadic=True)]),
    "edf-mixed": Workload(
        [Server("Ctl", "periodic", 2, 5, 0), Server("Evt", "deferrable", 1, 4, 0),
         Server("Bg", "polling", 2, 10, 0)],
        [Task("Ctl1", 0, 1, 5, 5), Task("Ctl2", 0, 1, 10, 10), Task("Irq", 1, 1, 4, 4, sporadic=True),
         Task("Log", 2, 1, 20, 20, sporadic=True)],
        policy="edf", local_policy="edf"),
    # The on-target scheduler (user/tasched): 3 servers, 6 periodic tasks.
    "tasched-3x6": Workload(
        [Server("S1", "periodic", 2, 5, 3), Server("S2", "deferrable", 2, 8, 2), Server("S3", "polling", 2, 10, 1)],
        [Task("A", 0, 1, 5, 5, 1), Task("B", 0, 1, 10, 10, 0), Task("C", 1, 1, 8, 8, 1),
         Task("D", 1, 1, 16, 16, 0), Task("E", 2, 1, 10, 10, 1), Task("F", 2, 1, 20, 20, 0)]),
}


def paper_workload(n: int) -> Workload:
    """The paper's measured shape (Åsberg et al. §6: periodic servers under
    FPS, one task per server, 2 to 7 servers): server i has budget 1 every
    n + 1 + i units and rate-monotonic priority, its task one unit of work
    every period. The servers' utilisation, the sum of 1/(n + 1 + i), stays
    below ln 2 and so below the Liu-Layland bound: every deadline holds."""
    if not 1 <= n <= 9:
        raise ValueError("paper workloads have 1 to 9 servers")
    return Workload([Server(f"S{i + 1}", "periodic", 1, n + 1 + i, n - i) for i in range(n)],
                    [Task(f"T{i + 1}", i, 1, n + 1 + i, n + 1 + i) for i in range(n)])


# The overhead benchmark's workloads (user/tasched/tabench.c), apart from
# EXAMPLES: the tests model-check every example, and these have
# hyperperiods of up to lcm(8..14) = 360,360 units.
BENCH: dict[str, Workload] = {f"paper-{n}": paper_workload(n) for n in range(2, 8)}


def named(name: str) -> Workload | None:
    """A library workload by name (an example or a benchmark workload)."""
    return EXAMPLES.get(name) or BENCH.get(name)
