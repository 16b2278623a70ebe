"""The benchmark suite's host side: `kairos bench run` boots the benchmark
root task (user/bench) on the release kernel under -icount and stores its
results as JSON; `kairos bench compare` compares two stored runs."""

from kairos.bench.results import (
    DEFAULT_THRESHOLD_PCT,
    EXPECTED_NAMES,
    SEL4_REFERENCE,
    BenchResult,
    Comparison,
    ResultsError,
    compare,
    load_results,
    parse_output,
    save_results,
)

__all__ = [
    "DEFAULT_THRESHOLD_PCT",
    "EXPECTED_NAMES",
    "SEL4_REFERENCE",
    "BenchResult",
    "Comparison",
    "ResultsError",
    "compare",
    "load_results",
    "parse_output",
    "save_results",
]
