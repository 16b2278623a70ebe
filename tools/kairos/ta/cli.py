"""`kairos ta check` and `kairos ta library` (docs/timed-automata.md)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from kairos.ta import library
from kairos.ta.checker import CheckerError, check, properties
from kairos.ta.model import ModelError, flatten, load


def _err(msg: str, prog: str = "kairos ta") -> int:
    print(f"{prog}: error: {msg}", file=sys.stderr)
    return 2


def cmd_check(args: argparse.Namespace) -> int:
    try:
        net = flatten(load(args.model))
        props = properties(net)
        if args.property:
            chosen = [p for i, p in enumerate(props, 1) if str(i) in args.property or p.name in args.property]
            if not chosen:
                return _err(f"{args.model}: no property {', '.join(args.property)} "
                            f"(there are {len(props)}: see the list without --property)")
            props = chosen
        print(f"{args.model}: {len(net.instances)} processes, {len(net.edges)} edges, "
              f"{sum(1 for v in net.vars.values() if v.kind == 'clock')} clocks; closed (discrete time is exact)")
        failed = 0
        start = time.monotonic()
        for i, p in enumerate(props, 1):
            r = check(net, p, max_depth=args.max_depth)
            verdict = "holds" if r.holds else ("INCOMPLETE" if not r.complete else "FAILS")
            print(f"  {i}. {p.name}: {verdict} ({r.states:,} states)")
            if not r.holds:
                failed += 1
                if r.detail:
                    print(f"     {r.detail}")
                if r.trace:
                    label = "witness" if p.kind == "reachable" else "counterexample"
                    print(f"     {label} ({len(r.trace)} steps):")
                    for step in r.trace[-args.trace_steps:] if args.trace_steps else r.trace:
                        print("       " + step.replace("\n", "\n       "))
            elif p.kind == "reachable" and args.show_witness:
                for step in r.trace:
                    print("       " + step.replace("\n", "\n       "))
        held = len(props) - failed
        print(f"{held}/{len(props)} properties hold ({time.monotonic() - start:.1f} s)")
        return 0 if failed == 0 else 1
    except (ModelError, CheckerError) as e:
        return _err(str(e))


def cmd_library(args: argparse.Namespace) -> int:
    if args.name is None:
        for name, w in [*library.EXAMPLES.items(), *library.BENCH.items()]:
            kinds = ", ".join(f"{s.name} {s.kind} {s.budget}/{s.period}" for s in w.servers)
            print(f"{name}: global {w.policy.upper()}, local {w.local_policy.upper()}; {kinds}; "
                  f"{len(w.tasks)} tasks")
        return 0
    w = library.named(args.name)
    if w is None:
        return _err(f"no library model '{args.name}' (known: {', '.join([*library.EXAMPLES, *library.BENCH])})")
    text = library.build(w)
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_tatoc(args: argparse.Namespace) -> int:
    from kairos.ta import tatoc
    if not args.prefix.isidentifier():
        return _err(f"--prefix '{args.prefix}' is not a C identifier", "kairos tatoc")
    try:
        net = flatten(load(args.model))
        written = tatoc.write(net, Path(args.output), args.prefix, args.max_steps)
    except ModelError as e:
        return _err(str(e), "kairos tatoc")
    for path in written:
        print(f"wrote {path}")
    if not args.prove:
        return 0
    from kairos.ta import prove
    source = Path(args.output) / f"{args.prefix}_sched.c"
    functions = None
    if args.prove_functions:
        functions = [f for f in args.prove_functions.split(",") if f]
        known = {name for name, _ in prove.functions_of(source)}
        unknown = [f for f in functions if f not in known]
        if unknown or not functions:
            return _err(f"--prove-functions: no function '{unknown[0] if unknown else ''}' in {source}",
                        "kairos tatoc")
    try:
        result = prove.prove(source, timeout=args.prove_timeout, jobs=args.jobs, functions=functions)
    except prove.ProofSetupError as e:
        return _err(str(e), "kairos tatoc")
    for goal in result.unproved:
        print(f"not proved: {goal}")
    print(f"{source}: proved {result.proved}/{result.total} goals (Frama-C/WP -wp-rte, "
          f"{prove.PROVERS}, {args.prove_timeout} s per goal, {args.jobs} processes)")
    return 0 if result.complete else 1


def register(sub: argparse._SubParsersAction) -> None:
    t = sub.add_parser("tatoc", help="generate C for a timed-automata network (state-oriented, as TAtoC)")
    t.add_argument("model", help="UPPAAL XML file")
    t.add_argument("-o", "--output", required=True, help="directory for PREFIX_sched.h and PREFIX_sched.c")
    t.add_argument("--prefix", default="ta", help="C name prefix (default ta)")
    t.add_argument("--max-steps", type=int, default=64, help="steps allowed in one instant (default 64)")
    t.add_argument("--prove", action="store_true",
                   help="then prove the code with Frama-C/WP (exit 1 unless every goal is proved)")
    t.add_argument("--prove-timeout", type=int, default=10, help="seconds per goal (default 10)")
    t.add_argument("--prove-functions", metavar="F1,F2",
                   help="prove only these functions of the generated file (default: every one)")
    t.add_argument("--jobs", type=int, default=2,
                   help="Frama-C processes run side by side, each on a share of the functions (default 2)")
    t.set_defaults(func=cmd_tatoc)
    p = sub.add_parser("ta", help="timed-automata models of schedulers: check with SPIN, library")
    tsub = p.add_subparsers(dest="ta_command", required=True)
    c = tsub.add_parser("check", help="model-check the queries of an UPPAAL XML model with SPIN")
    c.add_argument("model", help="UPPAAL XML file (the subset in docs/timed-automata.md)")
    c.add_argument("--property", action="append", help="only this property (number or formula); repeatable")
    c.add_argument("--max-depth", type=int, default=2_000_000, help="SPIN search depth limit")
    c.add_argument("--trace-steps", type=int, default=12,
                   help="show the last N steps of a counterexample (0: all)")
    c.add_argument("--show-witness", action="store_true", help="print the witness of E<> queries that hold")
    c.set_defaults(func=cmd_check)
    lib = tsub.add_parser("library", help="list the scheduler model library, or write one model")
    lib.add_argument("name", nargs="?", help="model name (none: list them)")
    lib.add_argument("-o", "--output", help="write here instead of standard output")
    lib.set_defaults(func=cmd_library)
