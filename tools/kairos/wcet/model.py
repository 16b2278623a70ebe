"""Processor model of the WCET analyser and of the trace replayer.

One ``ProcessorModel`` describes the timing of an in-order, single-issue
RISC-V core with split L1 caches.  The *same* model drives both the static
analysis (``microarch``: abstract caches, block costs) and the concrete
replay of traces (``sim``: exact cache sets, exact pipeline timing), so a
bound and an observed run are always measured with the same ruler.

The timing semantics (shared by both sides) is a max-plus "scoreboard":

* Each instruction *issues* at ``max(fetch_ready, operand readiness,
  multiply/divide unit free)`` where ``fetch_ready`` is the cycle after the
  previous instruction issued (plus that instruction's pipeline-blocking
  penalties) plus the I-cache miss penalty of this instruction's line(s).
* Results become ready ``latency`` cycles after issue (1 for ALU ops; the
  load latencies below for loads, plus the D-cache miss penalty if it
  missed: the D-cache is modelled as blocking).
* Control transfers add ``mispredict_penalty`` to the next fetch (no
  predictor is modelled: every branch, taken or not, and every jump is
  charged, which bounds any predictor state).
* Stores enter a store buffer; each later instruction that does not use the
  D-cache drains one entry.  A load that overlaps (same aligned doubleword)
  a store still in the buffer pays ``store_load_penalty``, which drains the
  buffer up to and including that store.

Every delay in this model is a non-negative constant added inside ``max``/
``+`` expressions, so the completion time is monotone in every penalty: a
possible cache miss can always be assumed to be a miss (no timing anomalies
*inside the model*; whether the real core has anomalies is discussed in
docs/processor-model.md).

Parameters carry a provenance string in ``PARAM_SOURCES`` (per preset);
``(assumed)`` marks values that are not published and were chosen to be safe.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Literal

from kairos.wcet.errors import WcetError

if TYPE_CHECKING:
    from kairos.wcet.elfimage import ElfImage

__all__ = ["CacheConfig", "CacheLevel", "ProcessorModel", "PRESETS", "get_preset", "preset_for",
           "preset_names", "PARAM_SOURCES", "ITIM_START", "ITIM_END"]

Policy = Literal["lru", "random"]
AccessKind = Literal["fetch", "data"]


@dataclass(frozen=True)
class CacheConfig:
    """An L1 cache: ``size`` bytes, ``ways``-way set associative, ``line``-byte
    lines, with the given replacement ``policy``.

    ``policy`` is ``"lru"`` (true LRU) or ``"random"`` (a 16-bit LFSR picks
    the victim way on every refill, as in the Rocket RTL the U54 derives
    from).  For ``random`` the static analysis may only rely on the most
    recently used line of each set (it is analysed as a direct-mapped cache
    with the same number of sets: ``analysis_ways`` = 1).
    """

    size: int
    ways: int
    line: int
    policy: Policy = "lru"

    def __post_init__(self) -> None:
        if self.line <= 0 or self.line & (self.line - 1):
            raise WcetError(f"cache line size {self.line} is not a power of two")
        if self.ways <= 0 or self.size <= 0 or self.size % (self.ways * self.line):
            raise WcetError(f"cache size {self.size} is not a multiple of ways*line")
        sets = self.size // (self.ways * self.line)
        if sets & (sets - 1):
            raise WcetError(f"cache set count {sets} is not a power of two")
        if self.policy not in ("lru", "random"):
            raise WcetError(f"unknown replacement policy {self.policy!r}")

    @property
    def sets(self) -> int:
        return self.size // (self.ways * self.line)

    @property
    def analysis_ways(self) -> int:
        """Associativity the *static* analysis may count on: all ways for
        LRU, only the most-recently-used line of a set for random."""
        return self.ways if self.policy == "lru" else 1

    def line_of(self, addr: int) -> int:
        """Memory-block number (address // line size) of ``addr``."""
        return addr // self.line

    def set_of_line(self, line: int) -> int:
        return line % self.sets


@dataclass(frozen=True)
class CacheLevel:
    """One cache as the timing sees it: the ``ProcessorModel`` field it comes
    from (``name``), its geometry, and the accesses it serves (``"fetch"``:
    instruction fetches, never dirty; ``"data"``: loads, stores and AMOs,
    write-back).  ``miss_penalty`` is the worst extra cycles of a miss."""

    name: str
    config: CacheConfig
    serves: AccessKind
    miss_penalty: int

    @property
    def dirty(self) -> bool:
        """Whether a victim may be dirty (and cost a write-back)."""
        return self.serves == "data"


@dataclass(frozen=True)
class ProcessorModel:
    """Timing parameters; all times are core clock cycles.

    See the module docstring for how they combine and docs/processor-model.md
    for the source of every value of the presets.
    """

    name: str
    description: str
    sound: bool
    # --- pipeline ------------------------------------------------------
    alu_latency: int = 1              # result latency of ALU ops, lui/auipc, jal/jalr link
    load_latency_word: int = 2        # lw/lwu/ld result latency on a D-cache hit
    load_latency_subword: int = 3     # lb/lbu/lh/lhu result latency on a D-cache hit
    fp_load_latency: int = 2          # flw/fld result latency on a D-cache hit
    mul_latency: int = 5              # mul/mulh*/mulw result latency
    div_latency: int = 65             # div/rem (any width) worst-case latency
    muldiv_pipelined: bool = False    # False: one MUL/DIV at a time (shared iterative unit)
    fpu_latency: int = 25             # worst FP arithmetic latency (fdiv/fsqrt bound)
    csr_read_latency: int = 3         # result latency of the CSR value read by csrr*
    csr_write_flush: int = 5          # extra cycles of a CSR write (pipeline flush)
    mispredict_penalty: int = 3       # extra cycles of a mispredicted control transfer
    predictor: Literal["none"] = "none"  # "none": every branch/jump is charged a mispredict
    store_load_penalty: int = 5       # load hitting a store still in the store buffer
    store_buffer_entries: int = 8     # store-buffer capacity (a store into a full buffer waits 1 cycle)
    fence_penalty: int = 20           # extra cycles of fence (drains stores, orders memory)
    fence_i_penalty: int = 5          # extra cycles of fence.i (flush); I-cache also invalidated
    sfence_vma_penalty: int = 10      # extra cycles of sfence.vma (TLBs themselves not modelled)
    trap_entry_penalty: int = 8       # ecall/ebreak/trap: extra cycles to redirect to the vector
    xret_penalty: int = 5             # sret/mret: extra cycles (pipeline flush + redirect)
    wfi_penalty: int = 5              # wfi, excluding the time spent waiting
    amo_extra_latency: int = 5        # AMO/LR/SC extra result latency over a word load
    # --- memory system ---------------------------------------------------
    icache: CacheConfig = field(default_factory=lambda: CacheConfig(32768, 8, 64, "random"))
    dcache: CacheConfig = field(default_factory=lambda: CacheConfig(32768, 8, 64, "random"))
    memory_latency: int = 150         # line refill from the next level (L2 treated as missing)
    writeback_latency: int = 150      # writing back one dirty victim line before a refill
    device_latency: int = 200         # one uncached access to a device range
    device_ranges: tuple[tuple[int, int], ...] = (     # [lo, hi) uncached device windows
        (0x0, 0x8000_0000),                             # physical: everything below DRAM
        (0xFFFF_FFC0_0000_0000, 0xFFFF_FFC0_8000_0000),  # the same seen through Kairos' kernel window
    )
    # --- instruction memory beside the I-cache (the U54's ITIM) ------------
    itim_bytes: int = 0               # capacity; 0: no ITIM (every fetch goes through the I-cache)
    itim_ranges: tuple[tuple[int, int], ...] = ()  # [lo, hi) of the program that runs from it
                                      # (set per program by ``with_itim``)
    # --- concrete replay ---------------------------------------------------
    random_seeds: int = 8             # replays with different LFSR seeds for random caches

    # ------------------------------------------------------------------
    @property
    def caches(self) -> tuple[CacheLevel, ...]:
        """The caches, in the order the static analysis and the replay keep
        their states: one level per cache field, each serving the accesses
        of its kind.  Every access kind has one level (split L1s); both
        sides of the analyser iterate over this list and name no cache."""
        return (CacheLevel("icache", self.icache, "fetch", self.icache_miss_penalty),
                CacheLevel("dcache", self.dcache, "data", self.dcache_miss_penalty))

    def refill_penalty(self, dirty_victim: bool) -> int:
        """Extra cycles of one miss: the refill from the next level, plus the
        write-back of the victim when it is dirty."""
        return self.memory_latency + (self.writeback_latency if dirty_victim else 0)

    @property
    def icache_miss_penalty(self) -> int:
        """Extra cycles of an instruction fetch that misses the I-cache
        (I-cache lines are never dirty)."""
        return self.refill_penalty(False)

    @property
    def dcache_miss_penalty(self) -> int:
        """Worst extra cycles of a data access that misses: refill plus the
        write-back of a possibly dirty victim."""
        return self.refill_penalty(True)

    def in_itim(self, addr: int) -> bool:
        """Whether an instruction at ``addr`` is fetched from the ITIM (never
        a miss, and no I-cache line touched)."""
        return any(lo <= addr < hi for lo, hi in self.itim_ranges)

    def with_itim(self, symbols: dict[str, int], program: str) -> "ProcessorModel":
        """This model with its ITIM holding the program's range
        ``[__itim_start, __itim_end)`` (the linker script's symbols): the
        code a board runs from the ITIM.  A model without an ITIM is returned
        as it is; one with an ITIM needs the two symbols and a range that
        fits (a ``WcetError`` naming ``program`` otherwise)."""
        if self.itim_bytes == 0:
            return self
        lo, hi = symbols.get(ITIM_START), symbols.get(ITIM_END)
        if lo is None or hi is None:
            raise WcetError(f"{program}: model {self.name} needs the symbols {ITIM_START} and {ITIM_END} "
                            f"around the code that runs from the ITIM (none in this ELF)")
        if hi < lo:
            raise WcetError(f"{program}: {ITIM_END} ({hi:#x}) is below {ITIM_START} ({lo:#x})")
        if hi - lo > self.itim_bytes:
            raise WcetError(f"{program}: the ITIM range [{lo:#x}, {hi:#x}) is {hi - lo} bytes, over the "
                            f"{self.itim_bytes} bytes of model {self.name}'s ITIM")
        return replace(self, itim_ranges=((lo, hi),))

    def is_device(self, lo: int, hi: int) -> bool:
        """Whether [lo, hi) may touch an uncached device range."""
        return any(lo < dhi and dlo < hi for dlo, dhi in self.device_ranges)

    def is_all_device(self, lo: int, hi: int) -> bool:
        """Whether [lo, hi) lies entirely inside one device range."""
        return any(dlo <= lo and hi <= dhi for dlo, dhi in self.device_ranges)

    def describe(self) -> list[tuple[str, object, str]]:
        """(parameter, value, source) rows for reports and docs."""
        src = PARAM_SOURCES.get(self.name, {})
        rows = []
        for f in fields(self):
            if f.name in ("name", "description"):
                continue
            rows.append((f.name, getattr(self, f.name), src.get(f.name, "")))
        return rows


_U54 = ProcessorModel(
    name="u54",
    description=("SiFive U54 (FU540-C000 / PolarFire SoC application core), sound: "
                 "pseudo-random L1s analysed by their MRU line only (64-set direct-mapped), "
                 "L2 assumed to always miss, every branch charged a mispredict"),
    sound=True,
)

_U54_LRU = replace(
    _U54,
    name="u54-lru",
    description=("IDEALISED U54 with true-LRU 8-way L1s: NOT sound for FU540/PolarFire "
                 "silicon (whose L1s replace pseudo-randomly); for comparison only"),
    sound=False,
    icache=CacheConfig(32768, 8, 64, "lru"),
    dcache=CacheConfig(32768, 8, 64, "lru"),
    random_seeds=1,
)

# The FU540's L2-LIM (FU540-C000 manual §11.2.1: L2 ways not enabled as
# cache are RAM at 0x0800_0000 - 0x081f_ffff, served with L2-hit timing and
# no misses).  Everything below DRAM except that window stays a device.
_L2LIM_RANGE = (0x0800_0000, 0x0820_0000)
_KERNEL_WINDOW = 0xFFFF_FFC0_0000_0000

_U54_L2LIM = replace(
    _U54,
    name="u54-l2lim",
    description=("SiFive U54 on a platform whose memory is all served by the L2 without "
                 "misses (the system in L2-LIM, at most 1.875 MiB, or DRAM lines locked in "
                 "L2 ways by WayMask): as u54, but an L1 refill or write-back costs an "
                 "assumed L2 hit (30 cycles); sound only for a system configured so"),
    memory_latency=30,
    writeback_latency=30,
    device_ranges=(
        (0x0, _L2LIM_RANGE[0]),
        (_L2LIM_RANGE[1], 0x8000_0000),
        (_KERNEL_WINDOW, _KERNEL_WINDOW + _L2LIM_RANGE[0]),
        (_KERNEL_WINDOW + _L2LIM_RANGE[1], _KERNEL_WINDOW + 0x8000_0000),
    ),
)

# The U54's ITIM (FU540-C000 manual §4.1.1; PolarFire SoC TRM §3.1.2.4): up to
# 28 KiB of the 32 KiB I-cache used as instruction memory, in whole ways, so
# that one 4 KiB way (64 sets of 64 B) stays a cache.  Fetches from it are as
# fast as an I-cache hit and never miss.  The program names the code it holds
# by two symbols (``with_itim``); the rest is fetched through the one way
# left, analysed as before (one line per set).
ITIM_START, ITIM_END = "__itim_start", "__itim_end"
_ITIM_BYTES = 28 * 1024
_ITIM_ICACHE = CacheConfig(4096, 1, 64, "random")

_U54_ITIM = replace(
    _U54,
    name="u54-itim",
    description=("SiFive U54 with 28 KiB of its I-cache as ITIM holding the program's "
                 "[__itim_start, __itim_end) (fetches from it never miss) and one 4 KiB way left "
                 "as I-cache; otherwise as u54; sound only for a board whose boot code puts that "
                 "range in the ITIM"),
    icache=_ITIM_ICACHE,
    itim_bytes=_ITIM_BYTES,
)

_U54_L2LIM_ITIM = replace(
    _U54_L2LIM,
    name="u54-l2lim-itim",
    description=("u54-l2lim with the ITIM of u54-itim: the system's memory in L2-LIM (or locked L2 "
                 "ways) and the program's [__itim_start, __itim_end) in the ITIM; sound only for a "
                 "platform configured so"),
    icache=_ITIM_ICACHE,
    itim_bytes=_ITIM_BYTES,
)

PRESETS: dict[str, ProcessorModel] = {"u54": _U54, "u54-lru": _U54_LRU, "u54-l2lim": _U54_L2LIM,
                                      "u54-itim": _U54_ITIM, "u54-l2lim-itim": _U54_L2LIM_ITIM}

_U54_SOURCES = {
    "sound": "random L1 replacement analysed via the MRU line only; see docs/processor-model.md",
    "alu_latency": "FU540 manual §4.3 (doc)",
    "load_latency_word": "FU540 manual §4.3-4.4: word/doubleword loads 2 cycles (doc)",
    "load_latency_subword": "FU540 manual §4.3-4.4: byte/half loads 3 cycles (doc)",
    "fp_load_latency": "LLVM Rocket model (unverified); U54 FP not used by RV64IMAC code",
    "mul_latency": "FU540 manual §4.3: MUL 5 cycles (doc); MULW not stated, assumed 5",
    "div_latency": "FU540 manual §4.3: DIV 2..65 cycles, worst case taken (doc); W forms bounded by 65",
    "muldiv_pipelined": "Rocket MulDiv is iterative and shared (unverified) -> safe: not pipelined",
    "fpu_latency": "fsqrt.d 25 (GCC/LLVM cost models, unverified); safe upper value (assumed)",
    "csr_read_latency": "FU540 manual §4.3: CSR reads 3 cycles (doc)",
    "csr_write_flush": "FU540 manual §4.3: most CSR writes flush the pipeline, 5 cycles (doc)",
    "mispredict_penalty": "FU540 manual §4.2: 3-cycle mispredict penalty (doc)",
    "predictor": "BTB/BHT/RAS not modelled: every control transfer charged (safe)",
    "store_load_penalty": "FU540 manual §4.4: load hitting a pending store 5 cycles (doc)",
    "store_buffer_entries": "(assumed) store-pipeline depth not published (FU540 manual §4.4 describes "
                            "the pipeline, not its depth)",
    "fence_penalty": "(assumed) not published; flush 5 + store-buffer drain margin",
    "fence_i_penalty": "(assumed) pipeline flush as for CSR writes; I-cache invalidation modelled",
    "sfence_vma_penalty": "(assumed) not published; TLB refills are not modelled",
    "trap_entry_penalty": "(assumed) FU540 §8.6 gives 4 cycles best-case interrupt latency; "
                          "flush 5 + margin",
    "xret_penalty": "(assumed) pipeline flush as for CSR writes",
    "wfi_penalty": "(assumed) pipeline flush; waiting time is not execution time",
    "amo_extra_latency": "(assumed) not published",
    "icache": "FU540 manual §4.1: 32 KiB 8-way 64 B (doc); replacement random (Rocket RTL, unverified)",
    "dcache": "FU540 manual §4.4: 32 KiB 8-way 64 B write-back (doc); replacement random "
              "(Rocket RTL, unverified)",
    "memory_latency": "(assumed) L1 refill latency not published; L2 (random) treated as missing; "
                      "placeholder to be measured with mhpmcounter events",
    "writeback_latency": "(assumed) dirty-victim write-back before refill (Rocket ordering, unverified)",
    "device_latency": "(assumed) uncached MMIO round trip not published",
    "device_ranges": "FU540 memory map: everything below DRAM (0x8000_0000) is devices/TIMs; "
                     "plus its image in the Kairos kernel window (0xffffffc0_00000000 + paddr)",
    "itim_bytes": "no ITIM used: the whole 32 KiB is I-cache (FU540 manual §4.1.1: the ITIM is carved "
                  "out of the I-cache only when software uses it)",
    "itim_ranges": "none: every fetch goes through the I-cache",
    "random_seeds": "concrete replay only: number of LFSR seeds whose maximum is reported",
}
PARAM_SOURCES: dict[str, dict[str, str]] = {
    "u54": _U54_SOURCES,
    "u54-lru": {**_U54_SOURCES,
                "sound": "IDEALISED: true LRU is not what the silicon implements",
                "icache": "as u54 but true LRU (idealised, not sound for silicon)",
                "dcache": "as u54 but true LRU (idealised, not sound for silicon)"},
    "u54-l2lim": {**_U54_SOURCES,
                  "sound": "sound for a system whose memory is all in L2-LIM or in locked L2 ways "
                           "(FU540 manual §11.2.1-11.2.2); L1s analysed as for u54",
                  "memory_latency": "(assumed) an L2 hit: not published for FU540/PolarFire; "
                                    "about 10 cycles refill-to-completion reported for a Rocket "
                                    "L2 (Chipyard), taken x3 as margin; to be measured",
                  "writeback_latency": "(assumed) the dirty victim goes to the L2 before the "
                                       "refill (Rocket ordering, unverified): one more L2 access",
                  "device_ranges": "FU540 memory map below DRAM minus the L2-LIM window "
                                   "0x0800_0000-0x081f_ffff (§11.2.1), and its image in the "
                                   "Kairos kernel window"},
}
_ITIM_SOURCES = {
    "icache": "FU540 manual §4.1-4.1.1: the 32 KiB 8-way I-cache less the 28 KiB given to the ITIM "
              "(at least one way stays a cache): one 4 KiB way, 64 sets of 64 B (doc)",
    "itim_bytes": "FU540 manual §4.1.1, PolarFire SoC TRM §3.1.2.4: ITIM up to 28 KiB; fetches from "
                  "it as fast as an I-cache hit, never a miss (doc)",
    "itim_ranges": "the analysed program's [__itim_start, __itim_end): its boot code must copy that "
                   "range into the ITIM and run it there (the integrator's statement)",
}
PARAM_SOURCES["u54-itim"] = {**_U54_SOURCES, **_ITIM_SOURCES,
                             "sound": "sound for a board that runs the program's ITIM range from the ITIM; "
                                      "L1s analysed as for u54"}
PARAM_SOURCES["u54-l2lim-itim"] = {**PARAM_SOURCES["u54-l2lim"], **_ITIM_SOURCES,
                                   "sound": "sound for a platform with the system in L2-LIM (or locked L2 "
                                            "ways) and the program's ITIM range in the ITIM"}

DEFAULT_PRESET = "u54"


def preset_names() -> list[str]:
    return list(PRESETS)


def preset_for(name: str, image: "ElfImage", itim_code: bool = True) -> ProcessorModel:
    """The named preset for one program: with its ITIM range when the model
    has an ITIM (``ProcessorModel.with_itim``).  ``itim_code=False`` is for a
    program that runs no code from the ITIM (a user program on a board whose
    ITIM holds the kernel's code): it keeps the model's I-cache, which has
    lost the ITIM's ways to it all the same, and an empty range."""
    m = get_preset(name)
    if m.itim_bytes == 0 or not itim_code:
        return m
    syms = {n: image.symbol(n).addr for n in (ITIM_START, ITIM_END) if image.has_symbol(n)}
    return m.with_itim(syms, image.path)


def get_preset(name: str = DEFAULT_PRESET) -> ProcessorModel:
    """The named preset; unknown names are a ``WcetError``."""
    try:
        return PRESETS[name]
    except KeyError:
        raise WcetError(f"unknown processor model {name!r} (known: {', '.join(PRESETS)})") from None
