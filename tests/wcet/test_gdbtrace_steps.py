"""The gdb-stub capture loop, driven by a scripted stub: a step that retires
nothing is not recorded twice, a jump to itself is."""

from __future__ import annotations

import pytest

from kairos.wcet.errors import WcetError
from kairos.wcet.gdbtrace import _record_run
from kairos.wcet.isa import decode_at

C_LI_T1_8 = (0x4321).to_bytes(2, "little")     # c.li t1, 8
C_J_SELF = (0xA001).to_bytes(2, "little")      # c.j .
SRET = (0x10200073).to_bytes(4, "little")


class ScriptedStub:
    """Reports the pcs of ``stops`` one per step, as QEMU's stub would."""

    def __init__(self, stops: list[int]) -> None:
        self.stops = stops
        self.at = 0
        self.steps = 0

    def registers(self) -> list[int]:
        return [0] * 32 + [self.stops[self.at]]

    def step(self) -> str:
        self.steps += 1
        self.at += 1
        return "T05"


def decoder(code: dict[int, bytes]):
    return lambda pc: decode_at(code[pc], 0, pc)


def test_a_step_that_retires_nothing_is_not_recorded() -> None:
    code = {0x1000: C_LI_T1_8, 0x1002: C_LI_T1_8, 0x1004: SRET}
    stub = ScriptedStub([0x1000, 0x1000, 0x1002, 0x1004])
    run = _record_run(stub, decoder(code), {0x1002: "handler"}, "entry", 100)
    assert run is not None
    assert list(run.trace.pcs) == [0x1000, 0x1002, 0x1004]
    assert run.trace.stop == "sret"
    assert run.handlers == ["handler"]
    assert stub.steps == 3


def test_a_jump_to_itself_is_recorded_each_time() -> None:
    code = {0x1000: C_J_SELF, 0x1002: SRET}
    stub = ScriptedStub([0x1000, 0x1000, 0x1000, 0x1002])
    run = _record_run(stub, decoder(code), {}, "entry", 100)
    assert run is not None
    assert list(run.trace.pcs) == [0x1000, 0x1000, 0x1000, 0x1002]


def test_a_stub_that_never_steps_is_an_error() -> None:
    code = {0x1000: C_LI_T1_8}
    stub = ScriptedStub([0x1000] * 1000)
    with pytest.raises(WcetError, match="retired nothing"):
        _record_run(stub, decoder(code), {}, "entry", 10_000)


def test_a_run_longer_than_the_step_limit_is_none() -> None:
    code = {0x1000: C_J_SELF}
    stub = ScriptedStub([0x1000] * 50)
    assert _record_run(stub, decoder(code), {}, "entry", 20) is None
