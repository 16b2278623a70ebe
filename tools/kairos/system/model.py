"""The data model of a system description (docs/system-description.md).

Every object here is the validated form of one XML element: `parse.py`
builds them and checks every rule the document states, so the packer
(`pack.py`) and the analysis (`analysis.py`) can trust what they get.
Times are microseconds, sizes and addresses bytes, as in the XML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# Limits a description must respect (docs/system-description.md "Limits").
MAX_PRIORITY = 254          # the loader runs at 255, above every PD (as the Microkit's monitor)
MAX_CHANNEL_ID = 62         # a channel id is a notification badge bit; bit 63 marks a ppcall
MAX_PDS = 63
PAGE_SIZE = 4096
MIN_BUDGET_US = 20          # seL4's riscv64 minimum budget (2 x the 10 us kernel WCET constant)
MAX_EXTRA_REFILLS = 16         # a scheduling context of up to 2^9 bytes (seL4_MaxExtraRefills)
USER_TOP = 0x3FFFFFF000     # seL4_UserTop for riscv64 Sv39
DEFAULT_STACK_SIZE = 0x2000
MAX_STACK_SIZE = 0x100000

# The fixed part of every PD's address space (user/pd/include/kairos/pd.h).
PD_STACK_TOP = 0x3FFF100000
PD_IPC_BUFFER = 0x3FFF101000

ENTRY_POINTS = ("init", "notified", "protected")


@dataclass(frozen=True)
class Map:
    mr: str
    vaddr: int
    perms: str          # a subset of "rwx", in that order
    cached: bool
    setvar_vaddr: str | None
    line: int


@dataclass(frozen=True)
class Irq:
    irq: int
    id: int
    trigger: str        # "level" or "edge"
    line: int


@dataclass(frozen=True)
class ScCap:
    """A capability to another PD's scheduling context (a Kairos extension)."""
    pd: str
    id: int
    line: int


@dataclass(frozen=True)
class Wcet:
    """A declared worst-case execution time of one entry point, in microseconds."""
    entry: str
    time: float
    line: int


@dataclass
class ProtectionDomain:
    name: str
    priority: int
    budget: int
    period: int
    passive: bool
    stack_size: int
    extra_refills: int
    deadline: int
    criticality: int
    image: Path
    line: int
    maps: list[Map] = field(default_factory=list)
    irqs: list[Irq] = field(default_factory=list)
    sc_caps: list[ScCap] = field(default_factory=list)
    wcets: dict[str, Wcet] = field(default_factory=dict)
    # Filled by validation: the image's loadable segments (vaddr, memsz, flags).
    segments: list[tuple[int, int, int]] = field(default_factory=list)
    entry: int = 0


@dataclass(frozen=True)
class MemoryRegion:
    name: str
    size: int
    phys_addr: int | None
    line: int


@dataclass(frozen=True)
class ChannelEnd:
    pd: str
    id: int
    pp: bool
    line: int


@dataclass(frozen=True)
class Channel:
    a: ChannelEnd
    b: ChannelEnd
    line: int


@dataclass
class SystemDescription:
    path: Path
    pds: list[ProtectionDomain]
    regions: list[MemoryRegion]
    channels: list[Channel]

    def pd(self, name: str) -> ProtectionDomain:
        return next(p for p in self.pds if p.name == name)

    def region(self, name: str) -> MemoryRegion:
        return next(r for r in self.regions if r.name == name)

    def pd_index(self, name: str) -> int:
        return next(i for i, p in enumerate(self.pds) if p.name == name)
