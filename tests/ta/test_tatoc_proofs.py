"""Frama-C/WP proofs of `kairos tatoc` output (kairos/ta/prove.py, `make
prove-tatoc`): the generated functions keep the state invariant and have no
runtime errors, every goal proved by CVC4 within the fixed timeout; and a
generated update function with its range check taken out is not proved."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from kairos.ta import library, prove, tatoc
from kairos.ta.model import flatten, load

def _generate(tmp_path: Path, name: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    model = tmp_path / f"{name}.xml"
    model.write_text(library.build(library.EXAMPLES[name]))
    tatoc.write(flatten(load(model)), tmp_path)
    return tmp_path / "ta_sched.c"


def _decrementing_update(source: str) -> tuple[str, str]:
    """An edge's update function that counts a budget down, and the
    statement that does it: its range check is what keeps the budget from
    going below 0."""
    # A value with branches is computed by a function of its own
    # (ta_value_E_K, see kairos/ta/tatoc.py); the update calls it.
    values = dict(re.findall(r"static int64_t (ta_value_\w+)\(const struct ta_state \*s\)\n\{\n(.*?)\n\}",
                             source, re.S))
    for m in re.finditer(r"static void (ta_update_\d+)\(struct ta_state \*s\)\n\{\n(.*?)\n\}", source, re.S):
        for stmt in m.group(2).splitlines():
            k = re.search(r"s->v_budget\[(\d+)\] = w_;", stmt)
            call = re.search(r"(ta_value_\w+)\(s\)", stmt)
            if not k:
                continue
            budget = f"s->v_budget[{k.group(1)}]"
            if call:  # the value function loads the budget into a local first
                body = values.get(call.group(1), "")
                local = re.search(rf"int64_t (r\d+_) = {re.escape(budget)};", body)
                if local and f"{local.group(1)} - (int64_t)1" in body:
                    return m.group(1), stmt
            elif f"(int64_t){budget} - (int64_t)1" in stmt:
                return m.group(1), stmt
    raise AssertionError("no budget-decrementing update in the generated code")



def assert_every_goal_proved(r, more_than: int) -> None:
    """A tatoc --prove run printed `ta_sched.c: proved N/N goals` with N
    above more_than, nothing "not proved", and exited 0."""
    out = r.stdout + r.stderr
    m = re.search(r"ta_sched\.c: proved (\d+)/(\d+) goals", out)
    assert m, out[-3000:]
    proved, total = int(m.group(1)), int(m.group(2))
    assert total > more_than and proved == total, out[-3000:]
    assert "not proved" not in out and r.returncode == 0, out[-3000:]

def test_update_function_is_proved_and_its_mutant_is_not(tmp_path: Path) -> None:
    good = _generate(tmp_path / "good", "fps-periodic")
    text = good.read_text()
    fn, stmt = _decrementing_update(text)
    result = prove.prove(good, functions=[fn])
    assert result.complete, result.unproved or result.log[-2000:]
    assert result.total >= 10

    # The mutant stores the decremented budget without the range check.
    mutated, n = re.subn(r"if \(v_ < 0 \|\| v_ > \d+\) err_ = TA_ERR_RANGE; else ", "", stmt)
    assert n == 1
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    shutil.copy(good.parent / "ta_sched.h", bad_dir)
    bad = bad_dir / "ta_sched.c"
    bad.write_text(text.replace(stmt, mutated))
    mutant = prove.prove(bad, functions=[fn])
    assert not mutant.complete
    # What fails is the invariant after the write: the conjunct on the budget
    # that the fold lemma requires before the function returns.
    assert any(g.startswith(f"typed_{fn}_call_ta_fold_requires") for g in mutant.unproved), mutant.unproved


def _edge_functions(source: str, edge_text: str) -> list[str]:
    """The update function of the edge whose comment is `edge_text`, and the
    value functions it calls."""
    m = re.search(r"/\* " + re.escape(edge_text) + r" \*/\n/\*@[^/]*\*/\nstatic void (ta_update_(\d+))\(", source)
    assert m, f"no update function for '{edge_text}'"
    return [m.group(1)] + sorted(set(re.findall(rf"\b(ta_value_{m.group(2)}_\d+)\(s\)", source)))


# A slice of the whole-file proof (`make prove-tatoc`, the test at the end),
# a quick check of the functions that decide its cost, chosen by role. The
# lemma functions (the only goals that open the invariant: ta_unfold's 34
# conjuncts, ta_fold's predicate); the Scheduler's decision, the update over
# every server's eligibility (once the hot spot: 51 s of Qed on one goal),
# with its value functions (the fold goals over the written fields, the
# range checks, runtime errors of the expressions); and the engine's write
# of a location (ta_move).
SLICE_EDGES = ("Scheduler: Ready -> Ready decide?",)
SLICE_FIXED = ("ta_unfold", "ta_fold", "ta_move")


def test_slice_of_the_tasched_scheduler_is_proved(tmp_path: Path) -> None:
    """`kairos tatoc --prove --prove-functions` on the code user/tasched
    runs (the model tasched-3x6): every goal of the slice proved."""
    import subprocess
    import sys

    model = tmp_path / "tasched-3x6.xml"
    model.write_text(library.build(library.EXAMPLES["tasched-3x6"]))
    tatoc.write(flatten(load(model)), tmp_path / "gen")
    source = (tmp_path / "gen" / "ta_sched.c").read_text()
    functions = list(SLICE_FIXED) + [f for e in SLICE_EDGES for f in _edge_functions(source, e)]
    assert len([f for f in functions if f.startswith("ta_value_")]) == 2
    r = subprocess.run([sys.executable, "-m", "kairos.cli", "tatoc", str(model), "-o", str(tmp_path / "gen"),
                        "--prove", "--prove-functions", ",".join(functions)],
                       capture_output=True, text=True, timeout=1200)
    assert_every_goal_proved(r, more_than=150)


def test_prove_functions_must_name_functions_of_the_file(tmp_path: Path) -> None:
    import subprocess
    import sys

    model = tmp_path / "m.xml"
    model.write_text(library.build(library.EXAMPLES["fps-periodic"]))
    r = subprocess.run([sys.executable, "-m", "kairos.cli", "tatoc", str(model), "-o", str(tmp_path / "gen"),
                        "--prove", "--prove-functions", "ta_init,no_such_function"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "no_such_function" in r.stderr, r.stderr


def test_make_prove_tatoc_proves_every_goal_of_the_tasched_scheduler() -> None:
    """`make prove-tatoc` (in CI: `make test`): every function of
    the code user/tasched runs (the model tasched-3x6), every goal proved:
    the runtime-error guards, the state invariant before and after every
    function, loop invariants and variants, assigns clauses."""
    import subprocess

    from conftest import REPO
    r = subprocess.run(["make", "-s", "--no-print-directory", "prove-tatoc"], cwd=REPO,
                       capture_output=True, text=True, timeout=3600)
    assert_every_goal_proved(r, more_than=1000)
    # The proved file is the one tasched compiles (same model, same generator).
    gen = "build/debug/user/tasched/gen/ta_sched.c"
    b = subprocess.run(["make", "-s", "--no-print-directory", "FLAVOUR=debug", gen], cwd=REPO,
                       capture_output=True, text=True, timeout=600)
    assert b.returncode == 0, b.stdout + b.stderr
    assert (REPO / "build" / "debug" / "prove-tatoc" / "ta_sched.c").read_text() == (REPO / gen).read_text()
