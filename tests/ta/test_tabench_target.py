"""The overhead benchmark (user/tasched/tabench.c, `make tabench`,
docs/timed-automata.md "Overhead"): generated and hand-written schedulers
for 2 to 7 servers choose alike every time unit, and their instruction
counts per unit stay near the figures in the docs (a guard: a change to
tatoc or to the hand-written code that moves them by more than the margin
must update the table)."""

from __future__ import annotations

import subprocess

from conftest import REPO
from kairos.ta import tabench

ELF = REPO / "build" / "debug" / "user" / "tasched" / "tabench.elf"

# (servers) -> decision median, instructions: docs/timed-automata.md "Overhead".
STORED_GEN = {2: 4581, 3: 6041, 4: 7566, 5: 9061, 6: 10672, 7: 12175}
STORED_HAND = {2: 57, 3: 72, 4: 87, 5: 102, 6: 117, 7: 132}


def test_tabench_generated_and_hand_written_agree_and_cost_what_the_docs_say(debug_kernel) -> None:
    b = subprocess.run(["make", "-s", "--no-print-directory", "FLAVOUR=debug", str(ELF.relative_to(REPO))],
                       cwd=REPO, capture_output=True, text=True, timeout=900)
    assert b.returncode == 0, b.stdout + b.stderr
    rows = tabench.run(ELF, debug_kernel)  # raises unless the run printed PASS
    by = {(r["impl"], r["servers"]): r for r in rows}
    assert set(by) == {(i, n) for i in ("gen", "hand") for n in range(2, 8)}
    for n in range(2, 8):
        g, h = by[("gen", n)], by[("hand", n)]
        assert g["decision_units"] + g["release_units"] == 240 and g["release_units"] > 0
        assert abs(g["decision_median"] - STORED_GEN[n]) <= 0.1 * STORED_GEN[n], (n, g)
        assert abs(h["decision_median"] - STORED_HAND[n]) <= 0.25 * STORED_HAND[n], (n, h)
        assert g["decision_median"] <= g["decision_max"] and h["release_median"] <= h["release_max"]
    # Both grow with the number of servers.
    assert all(by[("gen", n + 1)]["decision_median"] > by[("gen", n)]["decision_median"] for n in range(2, 7))
    assert all(by[("hand", n + 1)]["decision_median"] > by[("hand", n)]["decision_median"] for n in range(2, 7))


def test_tabench_output_without_verdict_is_an_error() -> None:
    import pytest
    line = ('TABENCH {"impl": "gen", "servers": 2, "decision_median": 1, "decision_max": 1, '
            '"release_median": 1, "release_max": 1}\n')
    with pytest.raises(tabench.TabenchError, match="FAIL: 2 servers"):
        tabench.parse(line + "tabench: FAIL: 2 servers, unit 3: chose differently\n")
    with pytest.raises(tabench.TabenchError, match="without its fields"):
        tabench.parse('TABENCH {"impl": "gen"}\ntabench verdict: PASS\n')
    assert tabench.parse(line + "tabench verdict: PASS\n")[0]["servers"] == 2
