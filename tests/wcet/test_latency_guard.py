"""Regression guard: the release kernel's worst-case interrupt response
(`kairos latency`, docs/wcet.md "Interrupt latency") may not grow more than
the stored tolerance over the figure in tests/wcet/latency-bound.json.  A
change that lowers the bound, or one that raises it on purpose, updates that
file with its reason."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import REPO, build_flavour
from kairos.latency import regions
from kairos.wcet import annotations

GUARD = REPO / "tests" / "wcet" / "latency-bound.json"
ANNOTATIONS = REPO / "kernel" / "wcet-annotations.toml"


def _stored() -> dict:
    data = json.loads(GUARD.read_text())
    for key in ("model", "bound_cycles", "tolerance", "reason", "updated"):
        assert key in data, f"{GUARD.name}: missing {key!r}"
    assert data["reason"].strip(), f"{GUARD.name}: say why the figure is what it is"
    return data


def test_stored_figure_is_well_formed() -> None:
    data = _stored()
    assert isinstance(data["bound_cycles"], int) and data["bound_cycles"] > 0
    assert data["tolerance"] == 0.05, "the guard allows 5 % growth (issue 13); change the figure, not the tolerance"


def test_release_kernel_interrupt_response_has_not_grown(capsys) -> None:
    data = _stored()
    kernel: Path = build_flavour("release")
    res = regions.analyse(str(kernel), annotations.load(str(ANNOTATIONS)), model_name=data["model"], table=False)
    limit = data["bound_cycles"] * (1 + data["tolerance"])
    with capsys.disabled():
        print(f"\ninterrupt-response bound of the release kernel: {res.bound:,} cycles ({data['model']} model, "
              f"worst region '{res.worst.name}'); stored {data['bound_cycles']:,} ({data['updated']}: "
              f"{data['reason']}); limit {int(limit):,}")
    assert res.bound <= limit, (
        f"the interrupt-response bound grew to {res.bound:,} cycles, more than {data['tolerance']:.0%} over the "
        f"stored {data['bound_cycles']:,}: worst region '{res.worst.name}' ({res.worst.end}); if that is "
        f"intended, update {GUARD.relative_to(REPO)} with the reason")
