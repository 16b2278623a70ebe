"""The `kairos` command line: one subcommand per tool, each registered by its module."""

from __future__ import annotations

import argparse
import sys

from kairos import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kairos", description="Kairos host tools")
    parser.add_argument("--version", action="version", version=f"kairos {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    # Each tool module owns its subcommand(s): register(sub) adds them and sets
    # `func` on its parser so main() can dispatch without knowing the tools.
    from kairos import runner
    runner.register(sub)
    from kairos.bench import cli as bench_cli
    bench_cli.register(sub)
    from kairos.ta import cli as ta_cli
    ta_cli.register(sub)
    from kairos import fuzz
    fuzz.register(sub)
    from kairos.system import cli as system_cli
    system_cli.register(sub)
    try:
        from kairos.wcet import cli as wcet_cli
    except ImportError:  # the analyser is optional while it is being built
        wcet_cli = None
    if wcet_cli is not None:
        wcet_cli.register(sub)
        from kairos.latency import cli as latency_cli
        latency_cli.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["trace", "schedule"]:
        # `kairos trace` is the WCET trace validation; its `schedule` form is
        # the schedule trace of a system (kairos.system.cli).
        argv = ["trace-schedule"] + argv[2:]
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
