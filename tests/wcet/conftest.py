"""Fixtures shared by the analyser tests."""

import pytest


@pytest.fixture
def private_solver_cache(tmp_path, monkeypatch):
    """An empty on-disk SMT answer cache and an empty in-process memo, so a
    test sees the solver's own answers, not ones an earlier run stored."""
    monkeypatch.setenv("KAIROS_WCET_CACHE", str(tmp_path / "smt-cache"))
    from kairos.wcet import smtloops
    smtloops._memo.clear()
