"""The timed-automata tools: expression parser, UPPAAL XML reader, the
digitised Promela semantics (checked on small networks whose answers are
known by hand), the scheduler library with SPIN, planted bugs, and the CLI."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kairos.ta import library
from kairos.ta.checker import check, check_all, properties
from kairos.ta.expr import Num, TaSyntaxError, fold, parse_expr, parse_updates
from kairos.ta.model import ModelError, flatten, load



def net_of(tmp_path: Path, body: str, name: str = "m.xml"):
    p = tmp_path / name
    p.write_text('<?xml version="1.0"?>\n<nta>\n' + textwrap.dedent(body) + "\n</nta>\n")
    return flatten(load(p))


def results(net) -> dict[str, bool]:
    return {r.prop.name: r.holds for r in check_all(net)}


# ---- expressions ----

def test_precedence_and_folding() -> None:
    assert fold(parse_expr("1 + 2 * 3 == 7 && !(2 > 3)")) == Num(1)
    assert fold(parse_expr("false imply false")) == Num(1)
    assert fold(parse_expr("true imply false")) == Num(0)
    assert fold(parse_expr("true ? 4 : 5")) == Num(4)
    assert fold(parse_expr("-7 / 2")) == Num(-3)  # C truncation, as UPPAAL
    assert fold(parse_expr("-7 % 2")) == Num(-1)


def test_quantifiers_expand_to_conjunctions() -> None:
    assert fold(parse_expr("forall (i : int[0,3]) i < 4")) == Num(1)
    assert fold(parse_expr("exists (i : int[0,3]) i == 5")) == Num(0)
    e = fold(parse_expr("forall (i : int[0,1]) a[i] > 0"))
    assert "a" in repr(e) and "Quant" not in repr(e)


def test_updates_and_errors() -> None:
    ups = parse_updates("x = 0, n++, a[2] += 3, y := 1")
    assert [u.op for u in ups] == ["=", "+=", "+=", "="]
    for bad in ("f(3)", "x +", "1 = 2", "sum (i : int[0,1]) i"):
        with pytest.raises(TaSyntaxError):
            parse_expr(bad) if "=" not in bad else parse_updates(bad)


# ---- reading and flattening ----

def test_malformed_xml_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.xml"
    p.write_text("<nta>\n<template>\n</nta>\n")
    with pytest.raises(ModelError, match=r"bad\.xml:3: malformed XML"):
        load(p)


def test_open_clock_constraint_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"m\.xml:\d+: .*not closed"):
        net_of(tmp_path, """
        <declaration>clock x;</declaration>
        <template><name>P</name>
          <location id="a"><name>A</name></location><location id="b"><name>B</name></location>
          <init ref="a"/>
          <transition><source ref="a"/><target ref="b"/><label kind="guard">x &lt; 3</label></transition>
        </template>
        <system>system P;</system>""")


@pytest.mark.parametrize("decl, edge, message", [
    ("int n;", "m = 1", "unknown"),
    ("void f() { }", "", "function"),
    ("clock x;", "x = x + 1", "clock"),
    ("const int K = 2;", "K = 3", "unknown"),
])
def test_bad_models_give_one_line_errors(tmp_path: Path, decl: str, edge: str, message: str) -> None:
    with pytest.raises(ModelError, match=message) as info:
        net_of(tmp_path, f"""
        <declaration>{decl}</declaration>
        <template><name>P</name>
          <location id="a"><name>A</name></location><init ref="a"/>
          <transition><source ref="a"/><target ref="a"/><label kind="assignment">{edge}</label></transition>
        </template>
        <system>system P;</system>""")
    assert "\n" not in str(info.value) and str(info.value).startswith(str(tmp_path / "m.xml"))


# ---- semantics, on networks with known answers ----

TWO_PROCESSES = """
<declaration>chan c; broadcast chan b; int[0,10] n; clock x;</declaration>
<template><name>S</name>
  <location id="s0"><name>Idle</name><label kind="invariant">x &lt;= 2</label></location>
  <location id="s1"><name>Sent</name></location>
  <location id="s2"><name>Mid</name><committed/></location>
  <init ref="s0"/>
  <transition><source ref="s0"/><target ref="s2"/><label kind="guard">x == 2</label>
    <label kind="synchronisation">c!</label><label kind="assignment">n = n + 1</label></transition>
  <transition><source ref="s2"/><target ref="s1"/><label kind="synchronisation">b!</label>
    <label kind="assignment">n = n * 2</label></transition>
</template>
<template><name>R</name><parameter>const int id</parameter>
  <location id="r0"><name>Wait</name></location><location id="r1"><name>Got</name></location>
  <location id="r2"><name>Heard</name></location>
  <init ref="r0"/>
  <transition><source ref="r0"/><target ref="r1"/><label kind="synchronisation">c?</label>
    <label kind="assignment">n = n + 10 * 0 + id</label></transition>
  <transition><source ref="r1"/><target ref="r2"/><label kind="synchronisation">b?</label></transition>
  <transition><source ref="r0"/><target ref="r2"/><label kind="synchronisation">b?</label></transition>
</template>
<system>R1 = R(1); R2 = R(2); system S, R1, R2;</system>
<queries>
  <query><formula>A[] n &lt;= 5</formula></query>
  <query><formula>A[] (S.Sent imply (R1.Heard and R2.Heard))</formula></query>
  <query><formula>E&lt;&gt; S.Sent and n == 4</formula></query>
  <query><formula>E&lt;&gt; S.Sent and n == 3</formula></query>
  <query><formula>A[] (S.Idle imply x &lt;= 2)</formula></query>
  <query><formula>E&lt;&gt; S.Mid and x == 1</formula></query>
</queries>
"""


def test_sync_broadcast_committed_and_invariants(tmp_path: Path) -> None:
    # At x == 2 (forced by the invariant) S sends c to R1 or R2 (sender's
    # update first: n = 1, then the receiver's: n = 1 + id), then,
    # committed (no time passes), broadcasts b, which every receiver in Wait
    # or Got hears; n doubles: 4 or 6, never 3; the receivers all end in
    # Heard, where nothing can happen any more (a deadlock, found first).
    got = [r.holds for r in check_all(net_of(tmp_path, TWO_PROCESSES))]
    assert got == [False, False, True, True, False, True, False]


def test_deadlock_is_found_with_a_trace(tmp_path: Path) -> None:
    net = net_of(tmp_path, """
    <declaration>clock x;</declaration>
    <template><name>P</name>
      <location id="a"><name>A</name><label kind="invariant">x &lt;= 3</label></location>
      <location id="b"><name>Stuck</name><label kind="invariant">x &lt;= 0</label></location>
      <init ref="a"/>
      <transition><source ref="a"/><target ref="b"/><label kind="guard">x &gt;= 3</label></transition>
    </template>
    <system>system P;</system>""")
    r = check(net, properties(net)[0])
    assert not r.holds and "deadlock" in r.detail
    assert r.trace[-1].startswith("t=3") and "P: A -> Stuck" in r.trace[-1]


def test_urgent_location_stops_time(tmp_path: Path) -> None:
    net = net_of(tmp_path, """
    <declaration>clock x; int[0,1] late;</declaration>
    <template><name>P</name>
      <location id="a"><name>U</name><urgent/></location><location id="b"><name>Done</name></location>
      <init ref="a"/>
      <transition><source ref="a"/><target ref="b"/><label kind="assignment">late = (x &gt;= 1) ? 1 : 0</label></transition>
    </template>
    <system>system P;</system>
    <queries><query><formula>A[] late == 0</formula></query></queries>""")
    assert [r.holds for r in check_all(net)] == [False, True]  # Done is a deadlock (time saturates)


# ---- the scheduler library ----

@pytest.mark.parametrize("name", list(library.EXAMPLES))
def test_library_models_are_verified(tmp_path: Path, name: str) -> None:
    p = tmp_path / f"{name}.xml"
    p.write_text(library.build(library.EXAMPLES[name]))
    res = check_all(flatten(load(p)))
    assert len(res) == 5
    failing = [(r.prop.name, r.detail, r.trace[-3:]) for r in res if not r.holds]
    assert not failing


@pytest.mark.parametrize("bug, broken", [
    ("used_not_reset", "no server uses more than its budget"),
    ("ignore_budget", "the chosen server is the one"),
])
def test_planted_bug_is_rejected_with_a_counterexample(tmp_path: Path, bug: str, broken: str) -> None:
    w = library.EXAMPLES["fps-periodic"]
    p = tmp_path / "bug.xml"
    p.write_text(library.build(library.Workload(w.servers, w.tasks, bugs={bug})))
    net = flatten(load(p))
    prop = next(q for q in properties(net) if q.name.startswith(broken))
    r = check(net, prop)
    assert not r.holds and r.complete
    assert r.trace and r.trace[0].startswith("t=0    initial state")
    assert any("time passes" in step for step in r.trace)


def test_unschedulable_workload_misses_a_deadline(tmp_path: Path) -> None:
    w = library.Workload([library.Server("S", "periodic", 1, 4, 1)], [library.Task("A", 0, 2, 4, 4)])
    p = tmp_path / "tight.xml"
    p.write_text(library.build(w))
    net = flatten(load(p))
    r = check(net, next(q for q in properties(net) if "misses its deadline" in q.name))
    assert not r.holds and "missed=1" in r.trace[-1]


# ---- command line ----

def kairos(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kairos.cli", *args], capture_output=True, text=True)


def test_cli_exit_codes(tmp_path: Path) -> None:
    out = tmp_path / "m.xml"
    assert kairos("ta", "library", "fps-periodic", "-o", str(out)).returncode == 0
    ok = kairos("ta", "check", str(out), "--property", "1")
    assert ok.returncode == 0 and "1/1 properties hold" in ok.stdout
    bad = tmp_path / "bad.xml"
    bad.write_text("<nta><oops></nta>")
    err = kairos("ta", "check", str(bad))
    assert err.returncode == 2 and err.stderr.count("\n") == 1 and "bad.xml:1:" in err.stderr
    w = library.EXAMPLES["fps-periodic"]
    buggy = tmp_path / "buggy.xml"
    buggy.write_text(library.build(library.Workload(w.servers, w.tasks, bugs={"used_not_reset"})))
    fail = kairos("ta", "check", str(buggy), "--property", "2")
    assert fail.returncode == 1 and "FAILS" in fail.stdout and "counterexample" in fail.stdout


# ---- generated C (TAtoC) against the reference execution ----

def _state_fields(net) -> list[tuple[str, int]]:
    return [(n, v.size or 1) for n, v in sorted(net.vars.items())
            if v.kind in ("int", "clock") and not v.const]


def _driver(net, ticks: int) -> str:
    prints = ['printf("%d", s.error);']
    prints += [f'printf(" %d", s.loc[{i}]);' for i in range(len(net.instances))]
    for n, size in _state_fields(net):
        v = net.vars[n]
        prints += [f'printf(" %d", (int)s.v_{n}{f"[{k}]" if v.size else ""});' for k in range(size)]
    body = "\n        ".join(prints)
    return f"""#include <stdio.h>
#include "ta_sched.h"
int main(void) {{
    struct ta_state s;
    ta_init(&s);
    ta_settle(&s);
    for (int t = 0; t <= {ticks}; t++) {{
        {body}
        printf("\\n");
        if (ta_tick(&s) != 0) {{ printf("error %d\\n", s.error); return 1; }}
    }}
    return 0;
}}
"""


@pytest.mark.parametrize("name", list(library.EXAMPLES))
def test_generated_c_follows_the_reference_execution(tmp_path: Path, name: str) -> None:
    from kairos.ta import tatoc
    from kairos.ta.simulate import Simulator
    p = tmp_path / f"{name}.xml"
    p.write_text(library.build(library.EXAMPLES[name]))
    net = flatten(load(p))
    tatoc.write(net, tmp_path)
    ticks = 2 * library.hyperperiod(library.EXAMPLES[name])
    (tmp_path / "driver.c").write_text(_driver(net, ticks))
    exe = tmp_path / "run"
    cc = subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-fsanitize=undefined,address",
                         "-fno-sanitize-recover=all", "-o", str(exe), str(tmp_path / "driver.c"),
                         str(tmp_path / "ta_sched.c"), f"-I{tmp_path}"], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout[-500:] + run.stderr[-2000:]
    c_states = [list(map(int, line.split())) for line in run.stdout.splitlines()]
    sim = Simulator(net)
    sim.settle()
    fields = _state_fields(net)
    for t, row in enumerate(c_states):
        want = [0] + list(sim.state.loc) + [x for n, size in fields for x in sim.state.vals[n][:size]]
        assert row == want, f"t={t}: C {row} != reference {want}"
        sim.tick()
    assert len(c_states) == ticks + 1
    # The observers hold along this execution, as the model checker said.
    names = [n for n, size in fields for _ in range(size)]
    for row in c_states:
        vals = dict(zip(names, row[1 + len(net.instances):]))
        assert vals["missed"] == 0
    used = [i for i, n in enumerate(names) if n == "used"]
    budgets = library.EXAMPLES[name].servers
    assert all(row[1 + len(net.instances) + i] <= budgets[k].budget
               for row in c_states for k, i in enumerate(used))


def test_tatoc_cli_writes_compilable_code_or_nothing(tmp_path: Path) -> None:
    model_path = tmp_path / "m.xml"
    model_path.write_text(library.build(library.EXAMPLES["fps-mixed"]))
    out = tmp_path / "gen"
    r = kairos("tatoc", str(model_path), "-o", str(out), "--prefix", "srv")
    assert r.returncode == 0, r.stderr
    cc = subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-ffreestanding", "-c",
                         str(out / "srv_sched.c"), "-o", str(tmp_path / "o.o")], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    text = (out / "srv_sched.c").read_text()
    assert "malloc" not in text and "while" not in text  # every loop is a bounded for
    bad = tmp_path / "open.xml"
    bad.write_text(model_path.read_text().replace("x == 1", "x &gt; 0"))
    r = kairos("tatoc", str(bad), "-o", str(tmp_path / "nothing"))
    assert r.returncode == 2 and r.stderr.startswith("kairos tatoc: error: ") and "not closed" in r.stderr
    assert not (tmp_path / "nothing").exists()
