"""The ``kairos trace`` subcommand: capture a run and replay it through the
processor model (the observed side of the WCET validation).

Capture routes:

* ``kairos trace ELF --entry SYM [--input SYM=HEX ...]`` runs ``SYM`` in the
  analyser's own RV64IMAC emulator (instruction and data addresses);
* ``--replay FILE`` replays a saved trace (``--save FILE`` writes one);
* ``--qemu-log LOG [--start ADDR --stop ADDR]`` replays the PC-only trace of a
  QEMU ``-d exec,nochain -accel tcg,one-insn-per-tb=on`` log; its data
  accesses are charged at their worst cost (no data addresses in the log);
* ``kairos trace KERNEL.elf --qemu-gdb ROOTTASK.elf`` boots the kernel with a
  root task in QEMU and records kernel runs (trap entry to ``sret``) by
  single-stepping QEMU's gdb stub (``gdbtrace``): instruction *and* data
  addresses of the real system.  Runs are grouped by the handler they went
  through; ``--wcet`` bounds ``ENTRY@HANDLER`` for each group.

``--wcet`` also runs the static analysis of the entry (same model, ``sp`` =
the emulator's stack top) and reports bound, observed and tightness, plus
the bound of the traced path itself.
"""

from __future__ import annotations

import argparse
import json
import sys

from kairos.wcet.errors import WcetError

__all__ = ["register", "main"]


def register(sub) -> None:
    p = sub.add_parser("trace", help="run or load a trace and replay it through the processor model",
                       description="Observed cycle count of a run under a processor model "
                                   "(exact caches, exact pipeline). See docs/wcet.md, Validation.")
    p.add_argument("elf", help="the riscv64 ELF executable")
    p.add_argument("--entry", "-e", metavar="SYMBOL", help="function to run in the emulator")
    p.add_argument("--input", "-i", action="append", default=[], metavar="SYMBOL=HEX",
                   help="bytes (hex, little-endian memory order) written at SYMBOL before the run; "
                        "SYMBOL=@FILE reads them from a file (repeatable)")
    p.add_argument("--model", "-m", default="u54",
                   help="processor model preset (u54, u54-lru, u54-l2lim, u54-itim, u54-l2lim-itim)")
    p.add_argument("--seeds", type=int, default=None,
                   help="LFSR seeds for random replacement (default: the model's random_seeds)")
    p.add_argument("--replay", metavar="TRACE", help="replay a saved trace instead of running")
    p.add_argument("--qemu-log", metavar="LOG", help="replay the PCs of a QEMU -d exec,nochain log")
    p.add_argument("--start", metavar="ADDR|SYMBOL", help="with --qemu-log: first PC of the run")
    p.add_argument("--stop", metavar="ADDR|SYMBOL", help="with --qemu-log: last PC of the run")
    p.add_argument("--qemu-gdb", metavar="ROOTTASK",
                   help="ELF is a kernel: boot it with ROOTTASK in QEMU and capture kernel runs")
    p.add_argument("--kernel-entry", default="trap_entry", metavar="SYMBOL",
                   help="with --qemu-gdb: where kernel runs start (default trap_entry)")
    p.add_argument("--count", type=int, default=20, help="with --qemu-gdb: kernel runs to record")
    p.add_argument("--skip", type=int, default=0, help="with --qemu-gdb: kernel runs to skip first")
    p.add_argument("--path-bounds", action="store_true",
                   help="with --qemu-gdb: also the analysis' bound of each captured run's own path")
    p.add_argument("--save", metavar="TRACE", help="write the captured trace to a file")
    p.add_argument("--max-steps", type=int, default=5_000_000, help="emulator instruction limit")
    p.add_argument("--wcet", action="store_true",
                   help="also compute the static bound of the entry and the tightness")
    p.add_argument("--annotations", "-a", action="append", default=[], metavar="FILE",
                   help="with --wcet: loop-bound annotation files")
    p.add_argument("--blocks", type=int, default=0, metavar="N",
                   help="with --wcet: the N blocks whose analysed cost exceeds the observed cycles most")
    p.add_argument("--json", metavar="OUT.json", help="write the result as JSON")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except WcetError as exc:
        print(f"kairos trace: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _addr(text: str, symbols: dict[str, tuple[int, int]]) -> int:
    try:
        return int(text, 0)
    except ValueError:
        if text in symbols:
            return symbols[text][0]
        raise WcetError(f"unknown address or symbol {text!r}") from None


def _patches(items: list[str]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for it in items:
        sym, sep, val = it.partition("=")
        if not sep or not sym:
            raise WcetError(f"bad --input {it!r}: expected SYMBOL=HEX or SYMBOL=@FILE")
        if val.startswith("@"):
            try:
                with open(val[1:], "rb") as fh:
                    out[sym] = fh.read()
            except OSError as e:
                raise WcetError(f"--input {sym}: cannot read {val[1:]} ({e.strerror})") from None
        else:
            try:
                out[sym] = bytes.fromhex(val.replace("_", ""))
            except ValueError:
                raise WcetError(f"bad --input {it!r}: not hexadecimal bytes") from None
    return out


def _run(args: argparse.Namespace) -> int:
    from kairos.wcet.emulator import load_elf, run_entry
    from kairos.wcet.model import get_preset
    from kairos.wcet.sim import replay
    from kairos.wcet.trace import load_trace, parse_qemu_exec_log, save_trace

    model = get_preset(args.model)
    if model.itim_bytes:
        from kairos.wcet.elfimage import ElfImage
        from kairos.wcet.model import preset_for
        model = preset_for(args.model, ElfImage(args.elf))
    if args.qemu_gdb:
        return _kernel(args, model)
    prog = load_elf(args.elf)
    if args.replay and args.qemu_log:
        raise WcetError("give only one of --replay and --qemu-log")
    if args.replay:
        trace = load_trace(args.replay)
    elif args.qemu_log:
        start = _addr(args.start, prog.symbols) if args.start else None
        stop = _addr(args.stop, prog.symbols) if args.stop else None
        trace = parse_qemu_exec_log(args.qemu_log, start, stop)
    else:
        if not args.entry:
            raise WcetError("no --entry given (or use --replay/--qemu-log)")
        trace = run_entry(prog, args.entry, _patches(args.input), max_steps=args.max_steps)
    if args.save:
        save_trace(trace, args.save)
    if not len(trace):
        raise WcetError("empty trace")
    res = replay(trace, prog.memory, model, args.seeds, timeline=bool(args.blocks))
    out: dict = {"elf": args.elf, "model": model.name, "entry": trace.entry or args.entry,
                 "stop": trace.stop, "has_data_addresses": trace.has_data, **res.as_dict()}
    entry = trace.entry or args.entry
    if args.wcet:
        if not entry:
            raise WcetError("--wcet needs the entry symbol (--entry)")
        from kairos.wcet import annotations as annmod
        from kairos.wcet import driver
        from kairos.wcet.trace import block_path, path_bound
        ann = annmod.Annotations()
        for pth in args.annotations:
            ann.merge(annmod.load(pth))
        an = driver.run(args.elf, [entry], model_name=model.name, annotations=ann, sp0=prog.stack_top)
        r = an.results[0]
        out["bound"] = r.bound
        out["tightness"] = round(r.bound / res.cycles, 4) if res.cycles else None
        out["sound"] = r.bound >= res.cycles
        if r.costs is not None and trace.has_data:
            try:
                tp = block_path(an.program, entry, trace)
                out["path_bound"] = path_bound(tp, r.costs)
                if args.blocks and res.timeline is not None:
                    from kairos.wcet.trace import block_comparison
                    rows = block_comparison(tp, r.costs, res.timeline)[:args.blocks]
                    out["blocks"] = [{**row, "context": [hex(c) for c in row["context"]],
                                      "block": hex(row["block"]),
                                      "function": an.program.name_of(an.program.block(row["block"]).func)}
                                     for row in rows]
            except WcetError as e:
                out["path_bound_error"] = str(e)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)
    _print(out)
    return 0 if out.get("sound", True) else 1


def _kernel(args: argparse.Namespace, model) -> int:
    """Capture kernel runs under QEMU, replay them, group them by handler."""
    from kairos.wcet.emulator import load_elf
    from kairos.wcet.gdbtrace import capture_kernel_runs
    from kairos.wcet.sim import replay

    runs = capture_kernel_runs(args.elf, args.qemu_gdb, args.kernel_entry, count=args.count,
                               skip=args.skip)
    if not runs:
        raise WcetError(f"no kernel run reached {args.kernel_entry} (did the system boot?)")
    prog = load_elf(args.elf)
    groups: dict[str, dict] = {}
    rows = []
    for r in runs:
        res = replay(r.trace, prog.memory, model, args.seeds)
        key = r.handlers[0] if r.handlers else "-"
        g = groups.setdefault(key, {"runs": 0, "max_observed": 0, "max_instructions": 0})
        g["runs"] += 1
        g["max_observed"] = max(g["max_observed"], res.cycles)
        g["max_instructions"] = max(g["max_instructions"], res.instructions)
        rows.append({"handler": key, "stop": r.trace.stop, **res.as_dict()})
    sound = True
    if args.path_bounds:
        from kairos.wcet.gdbtrace import path_bounds
        for row, pb in zip(rows, path_bounds(args.elf, runs, model, args.kernel_entry)):
            row["path_bound"] = pb
            g = groups[row["handler"]]
            g["max_path_ratio"] = max(g.get("max_path_ratio", 0), round(pb / row["cycles"], 4))
            g["min_path_ratio"] = min(g.get("min_path_ratio", 1e9), round(pb / row["cycles"], 4))
            sound = sound and pb >= row["cycles"]
    if args.wcet:
        from kairos.wcet import annotations as annmod
        from kairos.wcet import driver
        ann = annmod.Annotations()
        for pth in args.annotations:
            ann.merge(annmod.load(pth))
        specs = [f"{args.kernel_entry}@{h}" for h in groups if h != "-"]
        if specs:
            an = driver.run(args.elf, specs, model_name=model.name, annotations=ann)
            for res_ in an.results:
                h = res_.spec.via[0]
                g = groups[h]
                g["bound"] = res_.bound
                g["tightness"] = round(res_.bound / g["max_observed"], 4) if g["max_observed"] else None
                g["sound"] = res_.bound >= g["max_observed"]
                sound = sound and g["sound"]
    out = {"kernel": args.elf, "roottask": args.qemu_gdb, "model": model.name, "groups": groups,
           "runs": rows}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)
    print(f"{len(runs)} kernel runs from {args.kernel_entry}, model {model.name}")
    for h, g in groups.items():
        line = (f"  {h:28s} runs {g['runs']:4d}  max {g['max_instructions']:6d} instructions, "
                f"{g['max_observed']:9d} cycles observed")
        if "min_path_ratio" in g:
            line += f"  path bound / observed {g['min_path_ratio']}..{g['max_path_ratio']}"
        if "bound" in g:
            line += f"  bound {g['bound']} (tightness {g['tightness']}){'' if g['sound'] else '  UNSOUND'}"
        print(line)
    if args.path_bounds and not sound:
        print("UNSOUND: a path bound is below its observed run")
    return 0 if sound else 1


def _print(o: dict) -> None:
    print(f"entry         {o['entry'] or '-'} (stopped: {o['stop'] or '-'})")
    print(f"model         {o['model']}")
    print(f"instructions  {o['instructions']}")
    seeds = o["per_seed"]
    extra = f" (max over {len(seeds)} seeds, min {min(seeds)})" if len(seeds) > 1 else ""
    print(f"observed      {o['cycles']} cycles{extra}")
    levels = ", ".join(f"{name} {n}" for name, n in o["misses"].items())
    print(f"misses        {levels} ({o['writebacks']} write-backs), device accesses {o['device_accesses']}")
    if not o["has_data_addresses"]:
        print("note          PC-only trace: data accesses charged at their worst cost")
    if "bound" in o:
        print(f"bound         {o['bound']} cycles (tightness {o['tightness']})"
              f"{'' if o['sound'] else '  UNSOUND: bound < observed'}")
    if "path_bound" in o:
        print(f"path bound    {o['path_bound']} cycles (analysis costs along this trace's path)")
    if o.get("blocks"):
        print("blocks (most over-estimated first):")
        print(f"  {'function':24s} {'block':>12s} {'count':>6s} {'observed':>9s} {'bound':>9s} {'excess':>8s}")
        for r in o["blocks"]:
            print(f"  {r['function'][:24]:24s} {r['block']:>12s} {r['count']:6d} {r['observed']:9d} "
                  f"{r['bound']:9d} {r['excess']:8d}")
