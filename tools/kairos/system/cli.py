"""`kairos build`: a system description to a bootable image (docs/system-description.md)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kairos.runner import REPO_ROOT, RunError, parse_memory
from kairos.system.pack import PackError, build_image
from kairos.system.parse import DescriptionError, parse_system


def default_loader(flavour: str) -> Path:
    return REPO_ROOT / "build" / flavour / "user" / "loader" / "loader.elf"


def make_loader(flavour: str) -> Path:
    target = default_loader(flavour).relative_to(REPO_ROOT)
    proc = subprocess.run(["make", "--no-print-directory", "-s", f"FLAVOUR={flavour}", str(target)],
                          cwd=REPO_ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RunError(f"loader build failed:\n{proc.stdout}{proc.stderr}")
    return default_loader(flavour)


def write_atomically(path: Path, data: bytes) -> None:
    """Write through a temporary file in the same directory: a failure leaves
    no half-written image behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _cmd_build(args: argparse.Namespace) -> int:
    start = time.monotonic()
    search = [Path(p) for p in args.search_path]
    try:
        memory = int(parse_memory(args.memory)[:-1]) << 20
        system = parse_system(args.system, search, memory)
    except DescriptionError as e:
        print(f"kairos build: error: {e}", file=sys.stderr)
        return 2
    except RunError as e:
        print(f"kairos build: error: {e}", file=sys.stderr)
        return 2
    try:
        loader = Path(args.loader) if args.loader else make_loader(args.flavour)
        if not loader.is_file():
            raise RunError(f"loader {loader} does not exist")
        image = build_image(system, loader)
    except PackError as e:
        print(f"kairos build: error: {args.system}:{e.line}: {e}", file=sys.stderr)
        return 2
    except (RunError, ValueError, OSError) as e:
        print(f"kairos build: error: {e}", file=sys.stderr)
        return 2
    write_atomically(Path(args.output), image)
    if not args.quiet:
        print(f"kairos build: {args.output}: {len(system.pds)} protection domains, {len(image)} bytes "
              f"({time.monotonic() - start:.2f} s)")
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("build", help="build a bootable image from a system description (XML)")
    p.add_argument("system", help="the system description (docs/system-description.md)")
    p.add_argument("-o", "--output", required=True, help="the image: a root task ELF for `kairos run`")
    p.add_argument("--search-path", action="append", default=[],
                   help="a directory where program images are looked up (after the description's own)")
    p.add_argument("--flavour", default="debug", choices=["debug", "check", "release"],
                   help="which build's loader to use (default debug)")
    p.add_argument("--loader", help="the loader ELF (default: build/<flavour>/user/loader/loader.elf, made if needed)")
    p.add_argument("--memory", "-m", default="1G", help="the platform's RAM, as for kairos run (default 1G)")
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(func=_cmd_build)
