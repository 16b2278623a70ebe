"""Benchmark results: parsing the bench root task's output, the stored JSON
files, and the comparison of two runs (docs/benchmarks.md).

A results file is a JSON list of objects, one per benchmark::

    [{"name": "ipc_call_fastpath", "unit": "instructions", "min": 363,
      "median": 363, "max": 370, "samples": 256, "overhead": 1}, ...]
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

#: A median more than this many percent above the old one is a regression.
DEFAULT_THRESHOLD_PCT = 2.0

#: seL4's MCS kernel on the same QEMU (-icount shift=0), from issue 6.
SEL4_REFERENCE: dict[str, int] = {
    "ipc_call_fastpath": 363,
    "ipc_replyrecv_fastpath": 443,
    "ipc_roundtrip_fastpath": 806,
    "ipc_send_slowpath": 1778,
    "ipc_call_10w": 2051,
    "ipc_replyrecv_10w": 2081,
    "signal_higher_prio": 1869,
    "fault_roundtrip": 2957,
    "yield_other_thread": 1326,
    "map_4k_page": 664,
}

#: Kairos's own targets where they are stricter than seL4's figure.
KAIROS_TARGET: dict[str, int] = {"ipc_roundtrip_fastpath": 645}

#: Every benchmark the root task reports (tests check they are all there).
EXPECTED_NAMES: tuple[str, ...] = (
    "ipc_call_fastpath",
    "ipc_replyrecv_fastpath",
    "ipc_roundtrip_fastpath",
    "ipc_call_fastpath_xas",
    "ipc_replyrecv_fastpath_xas",
    "ipc_roundtrip_fastpath_xas",
    "ipc_call_active",
    "ipc_replyrecv_active",
    "ipc_roundtrip_active",
    "ipc_send_slowpath",
    "ipc_call_10w",
    "ipc_replyrecv_10w",
    "ipc_call_120w",
    "ipc_replyrecv_120w",
    "signal_higher_prio",
    "sc_switch",
    "irq_to_user_handler",
    "fault_roundtrip",
    "yield_other_thread",
    "yield_self",
    "timer_read",
    "map_4k_page",
)

BENCH_LINE = re.compile(r"^BENCH (\{.*\})\s*$")
_INT_FIELDS = ("min", "median", "max", "samples")


class ResultsError(Exception):
    """A results file or bench output that cannot be used; the message is one line."""


@dataclass(frozen=True)
class BenchResult:
    name: str
    unit: str
    min: int
    median: int
    max: int
    samples: int
    overhead: int | None = None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        if self.overhead is None:
            del d["overhead"]
        return d


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def result_from_obj(obj: object, where: str) -> BenchResult:
    """Validate one benchmark object; `where` names it in error messages."""
    if not isinstance(obj, dict):
        raise ResultsError(f"{where}: expected an object, got {type(obj).__name__}")
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        raise ResultsError(f"{where}: missing or empty 'name'")
    where = f"{where} ({name})"
    unit = obj.get("unit")
    if not isinstance(unit, str):
        raise ResultsError(f"{where}: missing or non-string 'unit'")
    values: dict[str, int] = {}
    for key in _INT_FIELDS:
        if key not in obj:
            raise ResultsError(f"{where}: missing '{key}'")
        v = obj[key]
        if not _is_int(v) or v < 0:
            raise ResultsError(f"{where}: '{key}' is not a non-negative integer: {v!r}")
        values[key] = v
    overhead = obj.get("overhead")
    if overhead is not None and (not _is_int(overhead) or overhead < 0):
        raise ResultsError(f"{where}: 'overhead' is not a non-negative integer: {overhead!r}")
    if not values["min"] <= values["median"] <= values["max"]:
        raise ResultsError(f"{where}: min <= median <= max does not hold")
    return BenchResult(name, unit, values["min"], values["median"], values["max"], values["samples"], overhead)


def _check_unique(results: list[BenchResult], where: str) -> None:
    seen: set[str] = set()
    for r in results:
        if r.name in seen:
            raise ResultsError(f"{where}: benchmark {r.name!r} appears twice")
        seen.add(r.name)


def parse_output(lines: Iterable[str]) -> list[BenchResult]:
    """The BENCH lines of the root task's console output, in order."""
    results: list[BenchResult] = []
    for n, line in enumerate(lines, 1):
        m = BENCH_LINE.match(line.strip())
        if not m:
            continue
        try:
            obj = json.loads(m.group(1))
        except json.JSONDecodeError as e:
            raise ResultsError(f"console line {n}: bad BENCH JSON ({e.msg})") from None
        results.append(result_from_obj(obj, f"console line {n}"))
    _check_unique(results, "bench output")
    return results


def load_results(path: Path) -> list[BenchResult]:
    """Read a results file; any problem raises ResultsError with one line."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file") from None
    except OSError as e:
        raise ResultsError(f"{path}: cannot read ({e.strerror})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ResultsError(f"{path}: not valid JSON (line {e.lineno} column {e.colno}: {e.msg})") from None
    if not isinstance(data, list):
        raise ResultsError(f"{path}: expected a JSON list of benchmark objects, got {type(data).__name__}")
    results = [result_from_obj(obj, f"{path}: entry {i}") for i, obj in enumerate(data)]
    _check_unique(results, str(path))
    return results


def dump_results(results: list[BenchResult]) -> str:
    return json.dumps([r.to_json() for r in results], indent=2) + "\n"


def timestamp_name(now: datetime | None = None) -> str:
    """File name of a run: UTC time, fixed width, so names sort by time."""
    now = now or datetime.now(timezone.utc)
    return now.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%S_%fZ") + ".json"


def save_results(results: list[BenchResult], bench_dir: Path, now: datetime | None = None) -> Path:
    """Write bench_dir/results/<UTC timestamp>.json and bench_dir/latest.json."""
    results_dir = bench_dir / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    text = dump_results(results)
    path = results_dir / timestamp_name(now)
    path.write_text(text)
    (bench_dir / "latest.json").write_text(text)
    return path


def stored_runs(bench_dir: Path) -> list[Path]:
    """The stored runs, oldest first."""
    results_dir = bench_dir / "results"
    if not results_dir.is_dir():
        return []
    return sorted(p for p in results_dir.glob("*.json") if p.is_file())


def previous_run(bench_dir: Path, new: Path) -> Path | None:
    """The run to compare `new` with: the stored run before it if `new` is a
    stored run; the second newest if `new` is bench_dir/latest.json (a copy
    of the newest); the newest stored run for any other file."""
    runs = stored_runs(bench_dir)
    resolved = new.resolve()
    for i, p in enumerate(runs):
        if p.resolve() == resolved:
            return runs[i - 1] if i > 0 else None
    if new.name == "latest.json" and new.resolve().parent == bench_dir.resolve():
        # latest.json is a copy of the newest stored run.
        return runs[-2] if len(runs) >= 2 else None
    return runs[-1] if runs else None


# ---- comparison ----------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    name: str
    old: int | None  # old median
    new: int | None  # new median
    delta_pct: float | None
    status: str  # "regression", "improvement", "same", "new", "missing"


@dataclass(frozen=True)
class Comparison:
    rows: list[Row]
    threshold_pct: float

    @property
    def regressions(self) -> list[Row]:
        return [r for r in self.rows if r.status == "regression"]

    @property
    def missing(self) -> list[Row]:
        return [r for r in self.rows if r.status == "missing"]


def delta_pct(old: int, new: int) -> float:
    if old == 0:
        return 0.0 if new == 0 else float("inf")
    return (new - old) * 100.0 / old


def compare(new: list[BenchResult], old: list[BenchResult],
            threshold_pct: float = DEFAULT_THRESHOLD_PCT) -> Comparison:
    """Medians of every benchmark in either run, in the new run's order
    (benchmarks only in the old run last). Over `threshold_pct` percent
    slower is a regression, as much faster an improvement."""
    old_by = {r.name: r for r in old}
    new_by = {r.name: r for r in new}
    rows: list[Row] = []
    for r in new:
        o = old_by.get(r.name)
        if o is None:
            rows.append(Row(r.name, None, r.median, None, "new"))
            continue
        d = delta_pct(o.median, r.median)
        status = "regression" if d > threshold_pct else "improvement" if d < -threshold_pct else "same"
        rows.append(Row(r.name, o.median, r.median, d, status))
    for o in old:
        if o.name not in new_by:
            rows.append(Row(o.name, o.median, None, None, "missing"))
    return Comparison(rows, threshold_pct)
