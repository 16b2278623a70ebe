"""Foreign code: C the analyser has never seen, in the style of the WCET
benchmark suites (tests/wcet/programs/foreign.c, no annotation file).  The
bounded entries get bounds that cover replayed runs; the entry that reaches
a loop without any bound (a Collatz walk) gets one clear error line and
exit status 2, never a traceback."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import progbuild
from kairos.cli import main


pytestmark = pytest.mark.usefixtures("private_solver_cache")


@pytest.fixture(scope="module")
def elf(tmp_path_factory) -> Path:
    if not progbuild.have_compiler():
        pytest.skip(f"{progbuild.CC} not installed")
    return progbuild.build("foreign", tmp_path_factory.mktemp("foreign"))


def test_unboundable_loop_is_one_error_line(elf: Path, capsys) -> None:
    rc = main(["wcet", str(elf), "-e", "main", "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1, err
    assert err[0].startswith("kairos wcet: error: loop at ") and "collatz (foreign.c:" in err[0], err
    assert "has no bound" in err[0] and "Traceback" not in err[0]


def test_loops_listing_names_the_unbounded_loop(elf: Path, capsys) -> None:
    rc = main(["wcet", str(elf), "-e", "main", "--loops", "-q"])
    out = capsys.readouterr().out
    assert rc == 1                       # some loop has no bound
    assert "collatz" in out and "UNBOUNDED" in out


def test_bounded_entries_cover_replayed_runs(elf: Path) -> None:
    from kairos.wcet import driver
    from kairos.wcet.emulator import load_elf, run_entry
    from kairos.wcet.model import get_preset
    from kairos.wcet.sim import replay
    an = driver.run(str(elf), ["foreign_main"], model_name="u54", sp0="__stack_top")
    bound = an.results[0].bound
    rng = random.Random(5)
    m = get_preset("u54")
    seen = 0
    for _ in range(6):
        inp = {"seed_in": rng.randrange(1 << 40).to_bytes(8, "little"),
               "n_in": rng.choice([0, 3, 50, 51, 1 << 60]).to_bytes(8, "little")}
        prog = load_elf(elf)
        obs = replay(run_entry(prog, "foreign_main", inp), prog.memory, m, seeds=2).cycles
        assert obs <= bound, f"observed {obs} > bound {bound}"
        seen = max(seen, obs)
    assert seen > 0 and bound < 20 * seen, f"bound {bound} far above every run ({seen})"
