"""Every processor-model parameter is documented, with a source, in
docs/processor-model.md and in the preset's source table."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from kairos.wcet.model import PARAM_SOURCES, PRESETS, ProcessorModel

DOC = Path(__file__).resolve().parents[2] / "docs" / "processor-model.md"


def test_every_parameter_documented() -> None:
    text = DOC.read_text()
    for f in fields(ProcessorModel):
        if f.name in ("name", "description"):
            continue
        assert f"`{f.name}`" in text, f"{f.name} missing from {DOC.name}"
        for preset in PRESETS:
            assert PARAM_SOURCES[preset].get(f.name), f"{preset}.{f.name} has no source"


def test_unpublished_values_are_marked() -> None:
    # Values the notes list as not found must be flagged as assumptions.
    for name in ("memory_latency", "writeback_latency", "device_latency", "fence_penalty"):
        assert "(assumed)" in PARAM_SOURCES["u54"][name]
    assert "IDEALISED" in PRESETS["u54-lru"].description and not PRESETS["u54-lru"].sound
