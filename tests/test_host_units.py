"""Host-side unit tests of kernel logic that needs no hardware.

The kernel's device-tree parser (kernel/lib/fdt.c), ELF loader helpers
(kernel/lib/elf.c), physical region arithmetic (kernel/lib/regions.c) and
string functions (kernel/lib/string.c) are compiled natively together with
the C drivers in tests/host/, with AddressSanitizer and UndefinedBehavior-
Sanitizer (any report aborts the program), and run against:

* real device trees dumped by QEMU (several -m sizes, with -initrd and
  -append) and hand-written ones compiled with dtc, compared with what
  `dtc -I dtb -O dts` says about the same blob (parsed here in Python);
* damaged device trees (every truncation, byte flips, random corruption,
  bad magic, bad token, deep nesting, overflowing arrays);
* ELF files built by riscv64-unknown-elf-gcc -nostdlib -static in several
  layouts, and corrupted copies for every error the loader reports;
* randomised region operations against a bitmap model, and the untyped cut
  against a transcription of seL4's loop.

Missing tools are a failure, not a skip: these tests are part of `make test`.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOST = ROOT / "tests" / "host"
KLIB = ROOT / "kernel" / "lib"
KINC = ROOT / "kernel" / "include"

CFLAGS = [
    "-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-O1",
    "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
]
SEL4_USER_TOP = 0x3FFFFFF000  # seL4_UserTop, libsel4 riscv64 (Sv39) constants.h


def need(tool: str, package: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} not found: install the Debian package {package} "
                    f"(the bootstrap step does this)", pytrace=False)
    return path


def run(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=kw.pop("timeout", 300), **kw)


def run_ok(cmd, **kw) -> str:
    p = run(cmd, **kw)
    if p.returncode != 0:
        pytest.fail(f"command failed ({p.returncode}): {' '.join(map(str, cmd))}\n"
                    f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}", pytrace=False)
    return p.stdout


# --------------------------------------------------------------------------
# Building the test programs
# --------------------------------------------------------------------------

@pytest.fixture(scope="session")
def bins(tmp_path_factory) -> dict[str, Path]:
    gcc = need("gcc", "gcc")
    out = tmp_path_factory.mktemp("hostbin")
    inc = ["-I", KINC]
    progs = {
        "test_fdt": [HOST / "test_fdt.c", KLIB / "fdt.c"],
        "test_elf": [HOST / "test_elf.c", KLIB / "elf.c"],
        "test_regions": [HOST / "test_regions.c", KLIB / "regions.c"],
    }
    result = {}
    for name, srcs in progs.items():
        run_ok([gcc, *CFLAGS, *inc, *srcs, "-o", out / name])
        result[name] = out / name
    # The kernel's string.c has the libc names; rename them so the test can
    # compare them with the host libc in one program.
    renames = [f"-D{f}=k_{f}" for f in
               ("memset", "memcpy", "memmove", "memcmp", "strlen", "strcmp", "strncmp")]
    run_ok([gcc, *CFLAGS, *inc, *renames, "-c", KLIB / "string.c", "-o", out / "kstring.o"])
    run_ok([gcc, *CFLAGS, HOST / "test_string.c", out / "kstring.o", "-o", out / "test_string"])
    result["test_string"] = out / "test_string"
    return result


def run_bin(bins, name, *args) -> str:
    p = run([bins[name], *args])
    # A sanitizer report makes the program exit non-zero with a report on
    # stderr; show it.
    assert p.returncode == 0 and "runtime error" not in p.stderr, (
        f"{name} {' '.join(map(str, args))} exited {p.returncode}\n"
        f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p.stdout


# --------------------------------------------------------------------------
# Freestanding build of the kernel sources
# --------------------------------------------------------------------------

ALLOWED_UNDEFINED = {"memset", "memcpy", "memmove", "memcmp", "strlen", "strcmp", "strncmp"}


@pytest.mark.parametrize("src", ["fdt", "elf", "regions", "string"])
def test_kernel_sources_build_freestanding(src, tmp_path):
    """Each module builds for the kernel (riscv64, -ffreestanding, no libc)
    and needs nothing but the kernel's own string functions (no libgcc)."""
    cc = need("riscv64-unknown-elf-gcc", "gcc-riscv64-unknown-elf")
    nm = need("riscv64-unknown-elf-nm", "binutils-riscv64-unknown-elf")
    obj = tmp_path / f"{src}.o"
    # The kernel's flags (top-level Makefile, KERNEL_CFLAGS).
    run_ok([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-ffreestanding",
            "-fno-builtin", "-nostdlib", "-march=rv64imac_zicsr_zifencei", "-mabi=lp64",
            "-mcmodel=medany", "-mno-relax", "-fno-pic", "-fno-stack-protector", "-fno-common",
            "-I", KINC, "-c", KLIB / f"{src}.c", "-o", obj])
    undefined = set(run_ok([nm, "-u", obj]).split()) - {"U"}
    assert undefined <= ALLOWED_UNDEFINED, f"{src}.c needs {undefined - ALLOWED_UNDEFINED}"


# --------------------------------------------------------------------------
# Device trees
# --------------------------------------------------------------------------

@dataclass
class Node:
    name: str
    props: dict[str, bytes] = field(default_factory=dict)
    children: list["Node"] = field(default_factory=list)


_ESC = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "v": 11, "f": 12, "\\": 92, '"': 34, "'": 39}


def _unescape(s: str) -> bytes:
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        n = s[i + 1]
        if n == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", s[i + 2:])
            out.append(int(m.group(0), 16))
            i += 2 + len(m.group(0))
        elif n in "01234567":
            m = re.match(r"[0-7]{1,3}", s[i + 1:])
            out.append(int(m.group(0), 8))
            i += 1 + len(m.group(0))
        else:
            out.append(_ESC[n])
            i += 2
    return bytes(out)


_TOKEN = re.compile(r'''\s*(?:
      (?P<str>"(?:[^"\\]|\\.)*")
    | (?P<cells><[^>]*>)
    | (?P<bytes>\[[^\]]*\])
    | (?P<punct>[{};=,])
    | (?P<word>[^\s{};=,"<\[][^\s{};="<\[]*)
)''', re.X | re.S)


def parse_dts(text: str) -> tuple[list[tuple[int, int]], Node]:
    """Parse the DTS that `dtc -O dts` prints for a blob (no labels or
    references). Property values become the bytes the blob holds."""
    toks = []
    pos = 0
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    while True:
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            assert text[pos:].strip() == "", f"dts parse error near {text[pos:pos + 40]!r}"
            break
        pos = m.end()
        kind = m.lastgroup
        toks.append((kind, m.group(kind)))
    i = 0
    resv = []

    def value() -> bytes:
        nonlocal i
        out = b""
        while True:
            kind, v = toks[i]
            i += 1
            if kind == "str":
                out += _unescape(v[1:-1]) + b"\0"
            elif kind == "cells":
                body = v[1:-1].split()
                bits = 32
                if body and body[0] == "/bits/":
                    bits = int(body[1])
                    body = body[2:]
                for c in body:
                    out += int(c, 0).to_bytes(bits // 8, "big")
            elif kind == "bytes":
                out += bytes.fromhex("".join(v[1:-1].split()))
            else:
                raise AssertionError(f"unexpected value token {v!r}")
            kind, v = toks[i]
            i += 1
            if v == ";":
                return out
            assert v == ",", f"expected , or ; got {v!r}"

    def node(name: str) -> Node:
        nonlocal i
        n = Node(name)
        while True:
            kind, v = toks[i]
            i += 1
            if v == "}":
                assert toks[i][1] == ";"
                i += 1
                return n
            nxt = toks[i][1]
            if nxt == "{":
                i += 1
                n.children.append(node(v))
            elif nxt == ";":
                i += 1
                n.props[v] = b""
            else:
                assert nxt == "=", f"unexpected {nxt!r} after {v!r}"
                i += 1
                n.props[v] = value()

    root = None
    while i < len(toks):
        kind, v = toks[i]
        if v == "/dts-v1/":
            i += 2
        elif v == "/memreserve/":
            resv.append((int(toks[i + 1][1], 0), int(toks[i + 2][1], 0)))
            i += 4
        elif v == "/":
            assert toks[i + 1][1] == "{"
            i += 2
            root = node("")
        else:
            raise AssertionError(f"unexpected top-level token {v!r}")
    assert root is not None
    return resv, root


def _strlist(v: bytes) -> list[str]:
    return [s.decode("latin-1") for s in v.split(b"\0")[:-1]] if v else []


def _cells(v: bytes, n: int, off: int) -> int:
    return int.from_bytes(v[off:off + 4 * n], "big")


def _regs(node: Node, parent: Node) -> list[tuple[int, int]]:
    ac = int.from_bytes(parent.props.get("#address-cells", (2).to_bytes(4, "big")), "big")
    sc = int.from_bytes(parent.props.get("#size-cells", (1).to_bytes(4, "big")), "big")
    v = node.props["reg"]
    step = 4 * (ac + sc)
    return [(_cells(v, ac, o), _cells(v, sc, o + 4 * ac)) for o in range(0, len(v), step)]


def _num(v: bytes) -> int:
    assert len(v) in (4, 8)
    return int.from_bytes(v, "big")


def expected_facts(resv_map, root: Node) -> dict:
    """What fdt_parse must report, derived from the dtc view of the blob,
    in the format test_fdt dump prints."""
    def disabled(n):
        return "disabled" in _strlist(n.props.get("status", b""))

    mem, resv = [], [(a, s) for a, s in resv_map if s]
    facts = {"bootargs": "", "timebase": 0, "sstc": 0}
    for name in ("plic", "clint", "uart", "rtc", "test"):
        facts[name] = (0, 0)
    facts.update(plic_ndev=0, uart_irq=0, rtc_irq=0)
    found = set()
    cpu_pick = None  # (is_zero, node)

    def walk(n: Node, parent: Node | None, depth: int):
        nonlocal cpu_pick
        for c in n.children:
            walk(c, n, depth + 1)
        # Node ends here: same order as the C parser (post-order).
        if depth == 1 and "reg" in n.props and not disabled(n):
            dt = n.props.get("device_type")
            is_mem = ("memory" in _strlist(dt)) if dt is not None else \
                n.name.split("@")[0] == "memory"
            if is_mem:
                mem.extend(r for r in _regs(n, parent) if r[1])
        if depth == 1 and n.name == "chosen":
            if "linux,initrd-start" in n.props:
                facts["initrd"] = (_num(n.props["linux,initrd-start"]),
                                   _num(n.props["linux,initrd-end"]))
            if "bootargs" in n.props:
                facts["bootargs"] = n.props["bootargs"].split(b"\0")[0].decode()
        if depth == 1 and n.name == "cpus" and "timebase-frequency" in n.props:
            facts["timebase"] = _num(n.props["timebase-frequency"])
            facts["cpus_tb"] = True
        if depth == 2 and parent.name == "cpus" and \
                "cpu" in _strlist(n.props.get("device_type", b"")) and not disabled(n):
            is_zero = "reg" in n.props and _regs(n, parent)[0][0] == 0
            if cpu_pick is None or (is_zero and not cpu_pick[0]):
                cpu_pick = (is_zero, n)
        if depth == 2 and parent.name == "reserved-memory" and "reg" in n.props \
                and not disabled(n):
            resv.extend(r for r in _regs(n, parent) if r[1])
        compat = _strlist(n.props.get("compatible", b""))
        if compat and not disabled(n):
            kinds = [
                ("plic", {"riscv,plic0", "sifive,plic-1.0.0"}),
                ("clint", {"riscv,clint0", "sifive,clint0"}),
                ("uart", {"ns16550a", "ns16550"}),
                ("rtc", {"google,goldfish-rtc"}),
                ("test", {"sifive,test0", "sifive,test1"}),
            ]
            for kind, names in kinds:
                hit = bool(names & set(compat)) or (
                    kind == "test" and "syscon" in compat and n.name.split("@")[0] == "test")
                if not hit:
                    continue
                if kind not in found:
                    found.add(kind)
                    if "reg" in n.props:
                        facts[kind] = _regs(n, parent)[0]
                    if kind == "plic" and "riscv,ndev" in n.props:
                        facts["plic_ndev"] = _num(n.props["riscv,ndev"])
                    if kind in ("uart", "rtc") and "interrupts" in n.props:
                        facts[f"{kind}_irq"] = _num(n.props["interrupts"][:4])
                break  # C: one kind per node (else-if chain)

    walk(root, None, 0)
    if cpu_pick is not None:
        cpu = cpu_pick[1]
        isa = cpu.props.get("riscv,isa", b"").split(b"\0")[0].decode().lower()
        exts = isa.split("_")[1:]
        if "sstc" in exts or "sstc" in _strlist(cpu.props.get("riscv,isa-extensions", b"")):
            facts["sstc"] = 1
        if not facts.get("cpus_tb") and "timebase-frequency" in cpu.props:
            facts["timebase"] = _num(cpu.props["timebase-frequency"])
    facts.pop("cpus_tb", None)
    facts["mem"] = mem
    facts["resv"] = resv
    return facts


def parse_dump(out: str) -> dict:
    lines = out.splitlines()
    assert lines and lines[0] == "ok", out
    facts = {"mem": [], "resv": []}
    for line in lines[1:]:
        key, _, rest = line.partition(" ")
        if key in ("mem", "resv"):
            a, s = rest.split()
            facts[key].append((int(a, 16), int(s, 16)))
        elif key in ("plic", "clint", "uart", "rtc", "test", "initrd"):
            a, b = rest.split()
            facts[key] = (int(a, 16), int(b, 16))
        elif key == "bootargs":
            facts[key] = rest[1:-1]
        elif key == "totalsize":
            facts[key] = int(rest)
        else:
            facts[key] = int(rest, 0)
    return facts


def dtc_view(dtb: Path) -> dict:
    dtc = need("dtc", "device-tree-compiler")
    resv, root = parse_dts(run_ok([dtc, "-q", "-I", "dtb", "-O", "dts", dtb]))
    return expected_facts(resv, root)


def check_against_dtc(bins, dtb: Path) -> dict:
    got = parse_dump(run_bin(bins, "test_fdt", "dump", dtb))
    want = dtc_view(dtb)
    total = struct.unpack(">I", dtb.read_bytes()[4:8])[0]
    assert got.pop("totalsize") == total
    assert got == want, f"parser and dtc disagree on {dtb.name}"
    return got


@pytest.fixture(scope="session")
def qemu_dtbs(tmp_path_factory) -> dict[str, Path]:
    qemu = need("qemu-system-riscv64", "qemu-system-misc")
    d = tmp_path_factory.mktemp("dtb")
    kernel = d / "kernel.bin"
    kernel.write_bytes(b"\0" * 4096)  # -initrd and -append need a -kernel
    initrd = d / "initrd.bin"
    initrd.write_bytes(b"x" * 12345)
    configs = {
        "m1g": ["-m", "1G"],
        "m2g": ["-m", "2G"],
        "m3g": ["-m", "3G"],
        "m3g_initrd": ["-m", "3G", "-kernel", kernel, "-initrd", initrd,
                       "-append", "test=x console=ttyS0"],
        "m1g_initrd": ["-m", "1024", "-kernel", kernel, "-initrd", initrd],
    }
    out = {}
    for name, args in configs.items():
        dtb = d / f"{name}.dtb"
        run_ok([qemu, "-machine", f"virt,dumpdtb={dtb}", "-nographic", "-bios", "none",
                *args], timeout=60)
        out[name] = dtb
    return out


@pytest.mark.parametrize("cfg,ram", [("m1g", 1 << 30), ("m2g", 2 << 30), ("m3g", 3 << 30),
                                     ("m3g_initrd", 3 << 30), ("m1g_initrd", 1 << 30)])
def test_fdt_qemu_matches_dtc(bins, qemu_dtbs, cfg, ram):
    got = check_against_dtc(bins, qemu_dtbs[cfg])
    # And the facts the kernel relies on, stated plainly.
    assert got["mem"] == [(0x80000000, ram)]
    assert got["timebase"] == 10_000_000
    assert got["sstc"] == 1
    assert got["plic"] == (0xC000000, 0x600000) and got["plic_ndev"] == 96
    assert got["clint"] == (0x2000000, 0x10000)
    assert got["uart"] == (0x10000000, 0x100) and got["uart_irq"] == 10
    assert got["rtc"] == (0x101000, 0x1000) and got["rtc_irq"] == 11
    assert got["test"] == (0x100000, 0x1000)
    if "initrd" in cfg:
        start, end = got["initrd"]
        assert end - start == 12345
        assert 0x80000000 <= start and end <= 0x80000000 + ram and start % 4096 == 0
    else:
        assert "initrd" not in got
    if cfg == "m3g_initrd":
        assert got["bootargs"] == "test=x console=ttyS0"


def test_fdt_fuzz_qemu_blob(bins, qemu_dtbs):
    out = run_bin(bins, "test_fdt", "fuzz", qemu_dtbs["m3g_initrd"])
    m = re.search(r"fuzz ok truncations=(\d+) flips=(\d+) randoms=(\d+)", out)
    assert m, out
    assert int(m.group(1)) > 4000 and int(m.group(2)) > 10000 and int(m.group(3)) == 20000


def test_fdt_nesting_limit(bins):
    assert "nest 16 -> 0 " in run_bin(bins, "test_fdt", "nest", "16")
    for depth in ("17", "100000"):
        out = run_bin(bins, "test_fdt", "nest", depth)
        assert f"nest {depth} -> -12 nodes nested deeper than 16" in out


def _patch_be32(data: bytes, off: int, val: int) -> bytes:
    return data[:off] + struct.pack(">I", val) + data[off + 4:]


def test_fdt_malformed_qemu_blob(bins, qemu_dtbs, tmp_path):
    blob = qemu_dtbs["m3g_initrd"].read_bytes()
    total = struct.unpack(">I", blob[4:8])[0]
    blob = blob[:total]

    def dump(data, name):
        f = tmp_path / name
        f.write_bytes(data)
        p = run([bins["test_fdt"], "dump", f])
        assert "runtime error" not in p.stderr and "Sanitizer" not in p.stderr, p.stderr
        return p.stdout.strip()

    # Bad magic: fdt_total_size refuses it before parsing.
    assert dump(b"\xde\xad" + blob[2:], "magic.dtb") == "error bad header"
    # Truncated file (header still claims the full size).
    assert dump(blob[: total - 100], "trunc.dtb") == "error bad header"
    # Bad structure token: replace the first token after the root's
    # BEGIN_NODE + name word with 7.
    off_struct = struct.unpack(">I", blob[8:12])[0]
    bad_at = off_struct + 8
    out = dump(_patch_be32(blob, bad_at, 7), "token.dtb")
    assert out == f"error -7 bad structure token 0x7 at offset {bad_at}"
    # Property name offset outside the strings block.
    assert struct.unpack(">I", blob[bad_at:bad_at + 4])[0] == 3  # FDT_PROP
    out = dump(_patch_be32(blob, bad_at + 8, 0xFFFFFF), "nameoff.dtb")
    assert out.startswith("error -11 property name offset outside strings block")
    # Property length running past the structure block.
    out = dump(_patch_be32(blob, bad_at + 4, 0x7FFFFFF0), "proplen.dtb")
    assert out.startswith("error -10 property value past the structure block")
    # ... also by a single byte, into the strings block that follows it.
    size_struct = struct.unpack(">I", blob[36:40])[0]
    assert struct.unpack(">I", blob[12:16])[0] >= off_struct + size_struct
    one_past = off_struct + size_struct - (bad_at + 12) + 1
    out = dump(_patch_be32(blob, bad_at + 4, one_past), "proplen1.dtb")
    assert out.startswith("error -10 property value past the structure block")
    out = dump(_patch_be32(blob, bad_at + 4, one_past - 1), "proplen0.dtb")
    assert out.startswith("error -8 structure block ends without FDT_END")
    # Version 16 (no size_dt_struct): refused.
    assert dump(_patch_be32(blob, 20, 16), "ver.dtb").startswith("error -4 ")
    # Structure block outside totalsize.
    assert dump(_patch_be32(blob, 36, total), "layout.dtb").startswith("error -5 ")
    # Missing FDT_END: drop the END token by shrinking size_dt_struct.
    out = dump(_patch_be32(blob, 36, size_struct - 4), "noend.dtb")
    assert out.startswith("error -8 structure block ends without FDT_END")


DTS_HEADER = "/dts-v1/;\n"


def compile_dts(tmp_path: Path, name: str, text: str) -> Path:
    dtc = need("dtc", "device-tree-compiler")
    src = tmp_path / f"{name}.dts"
    src.write_text(text)
    out = tmp_path / f"{name}.dtb"
    run_ok([dtc, "-q", "-I", "dts", "-O", "dtb", "-o", out, src])
    return out


HANDWRITTEN_OK = {
    # 32-bit cells at the root, two memory banks in one node plus a second
    # memory node, 32-bit initrd values, memreserve entries, reserved-memory
    # children (one without reg), isa-extensions list instead of _sstc,
    # timebase on the cpu only, a disabled UART before the real one, the
    # test device found through "syscon" on test@..., a second PLIC ignored.
    "cells32": """
/memreserve/ 0x80000000 0x200000;
/memreserve/ 0x90000000 0x1000;
/ {
    #address-cells = <1>; #size-cells = <1>;
    chosen { linux,initrd-start = <0x84000000>; linux,initrd-end = <0x84001000>;
             bootargs = "a b c"; };
    memory@80000000 { device_type = "memory"; reg = <0x80000000 0x10000000 0xa0000000 0x1000>; };
    memory@c0000000 { device_type = "memory"; reg = <0xc0000000 0x20000000>; };
    memory@f0000000 { device_type = "memory"; status = "disabled"; reg = <0xf0000000 0x1000>; };
    reserved-memory { #address-cells = <2>; #size-cells = <1>; ranges;
        fw@80000000 { reg = <0x0 0x80000000 0x40000>; no-map; };
        dyn { size = <0x100000>; };
        two@88000000 { reg = <0x0 0x88000000 0x1000 0x0 0x89000000 0x2000>; };
    };
    cpus { #address-cells = <1>; #size-cells = <0>;
        cpu@1 { device_type = "cpu"; reg = <1>; riscv,isa = "rv64imac";
                timebase-frequency = <999>; };
        cpu@0 { device_type = "cpu"; reg = <0>; riscv,isa = "rv64imafdc_zicsr";
                riscv,isa-extensions = "i", "m", "sstc", "zicsr";
                timebase-frequency = <1000000>; };
        cpu-map { cluster0 { core0 { cpu = <1>; }; }; };
    };
    soc { #address-cells = <1>; #size-cells = <1>; ranges;
        serial@20000000 { compatible = "ns16550a"; status = "disabled";
                          reg = <0x20000000 0x100>; interrupts = <3>; };
        serial@10000000 { reg = <0x10000000 0x100>; interrupts = <10 4>; compatible = "ns16550a"; };
        serial@10001000 { compatible = "ns16550a"; reg = <0x10001000 0x100>; interrupts = <11>; };
        interrupt-controller@c000000 { compatible = "riscv,plic0"; reg = <0xc000000 0x4000000>;
                  riscv,ndev = <53>; };
        interrupt-controller@d000000 { compatible = "sifive,plic-1.0.0"; reg = <0xd000000 0x1000>;
                  riscv,ndev = <7>; };
        clint@2000000 { compatible = "riscv,clint0"; reg = <0x2000000 0xc000>; };
        test@100000 { compatible = "syscon"; reg = <0x100000 0x1000>; };
        rtc@101000 { compatible = "google,goldfish-rtc"; reg = <0x101000 0x1000>;
                     interrupts = <0xb>; };
    };
};
""",
    # 64-bit initrd values, no bootargs, no devices, ISA without Sstc,
    # NOPs are not producible by dtc but empty nodes and properties are.
    "minimal": """
/ {
    #address-cells = <2>; #size-cells = <2>;
    empty-prop-node { flag; };
    chosen { linux,initrd-start = /bits/ 64 <0x100000000>;
             linux,initrd-end = /bits/ 64 <0x100002000>; };
    memory { device_type = "memory"; reg = <0x1 0x0 0x0 0x40000000>; };
    cpus { #address-cells = <1>; #size-cells = <0>; timebase-frequency = <0x989680>;
        cpu@0 { device_type = "cpu"; reg = <0>; riscv,isa = "rv64gc_sstcx_zsstc"; }; };
};
""",
    # Zero-size memory entry (skipped), sstc in upper case, memory named
    # without device_type.
    "odd": """
/ {
    #address-cells = <2>; #size-cells = <2>;
    memory@80000000 { reg = <0x0 0x80000000 0x0 0x0 0x0 0x90000000 0x0 0x1000>; };
    cpus { #address-cells = <1>; #size-cells = <0>;
        cpu@0 { device_type = "cpu"; reg = <0>; riscv,isa = "RV64IMAFDC_ZICSR_SSTC"; }; };
};
""",
}


@pytest.mark.parametrize("name", sorted(HANDWRITTEN_OK))
def test_fdt_handwritten_matches_dtc(bins, tmp_path, name):
    got = check_against_dtc(bins, compile_dts(tmp_path, name, DTS_HEADER + HANDWRITTEN_OK[name]))
    if name == "cells32":
        assert got["mem"] == [(0x80000000, 0x10000000), (0xA0000000, 0x1000),
                              (0xC0000000, 0x20000000)]
        assert got["resv"] == [(0x80000000, 0x200000), (0x90000000, 0x1000),
                               (0x80000000, 0x40000), (0x88000000, 0x1000),
                               (0x89000000, 0x2000)]
        assert got["initrd"] == (0x84000000, 0x84001000)
        assert got["bootargs"] == "a b c"
        assert got["timebase"] == 1000000 and got["sstc"] == 1
        assert got["uart"] == (0x10000000, 0x100) and got["uart_irq"] == 10
        assert got["plic"] == (0xC000000, 0x4000000) and got["plic_ndev"] == 53
        assert got["test"] == (0x100000, 0x1000)
    elif name == "minimal":
        assert got["initrd"] == (0x100000000, 0x100002000)
        assert got["mem"] == [(0x100000000, 0x40000000)]
        assert got["sstc"] == 0 and got["uart"] == (0, 0)
    elif name == "odd":
        assert got["mem"] == [(0x90000000, 0x1000)] and got["sstc"] == 1


HANDWRITTEN_BAD = {
    "too_many_mem": ("""/ { #address-cells = <1>; #size-cells = <1>;
        memory@0 { device_type = "memory"; reg = <0 1 2 1 4 1 6 1 8 1 10 1 12 1 14 1 16 1>; }; };""",
                     "error -14 more than 8 memory ranges"),
    "too_many_resv": ("".join(f"/memreserve/ {i * 0x1000:#x} 0x1000;\n" for i in range(1, 18))
                      + "/ { };", "error -15 more than 16 reserved ranges"),
    "long_bootargs": ('/ { chosen { bootargs = "' + "x" * 300 + '"; }; };',
                      "error -16 bootargs longer than 255 bytes"),
    "bad_reg_len": ("""/ { #address-cells = <2>; #size-cells = <2>;
        memory@0 { device_type = "memory"; reg = <0 0 1>; }; };""",
                    "error -16 reg length not a multiple of the cells in 'memory@0'"),
    "wide_cells": ("""/ { #address-cells = <3>; #size-cells = <2>;
        memory@0 { device_type = "memory"; reg = <0 0 0 0 1>; }; };""",
                   "error -16 unsupported #address-cells/#size-cells for reg of 'memory@0'"),
    "wrapping_reg": ("""/ { #address-cells = <2>; #size-cells = <2>;
        memory@0 { device_type = "memory"; reg = <0xffffffff 0xfffff000 0 0x2000>; }; };""",
                     "error -17 reg range wraps around in 'memory@0'"),
    "half_initrd": ("/ { chosen { linux,initrd-start = <0x1000>; }; };",
                    "error -16 only one of linux,initrd-start/-end in /chosen"),
    "initrd_3bytes": ("/ { chosen { linux,initrd-start = [00 10 00]; linux,initrd-end = <0>; }; };",
                      "error -16 linux,initrd-start/-end not 4 or 8 bytes"),
    "initrd_backwards": ("/ { chosen { linux,initrd-start = <0x2000>; linux,initrd-end = <0x1000>; }; };",
                         "error -16 linux,initrd-end below linux,initrd-start"),
    "bad_timebase": ("/ { cpus { timebase-frequency = [01 02]; }; };",
                     "error -16 bad timebase-frequency in /cpus"),
    "deep": ("/ { " + "a { " * 17 + "};" * 17 + " };", "error -12 nodes nested deeper than 16"),
}


@pytest.mark.parametrize("name", sorted(HANDWRITTEN_BAD))
def test_fdt_handwritten_errors(bins, tmp_path, name):
    text, want = HANDWRITTEN_BAD[name]
    dtb = compile_dts(tmp_path, name, DTS_HEADER + text)
    p = run([bins["test_fdt"], "dump", dtb])
    assert "runtime error" not in p.stderr and "Sanitizer" not in p.stderr, p.stderr
    assert p.stdout.startswith(want), p.stdout
    # Every error is also survived under the fuzzer.
    run_bin(bins, "test_fdt", "fuzz", dtb)


def test_fdt_deep_but_legal(bins, tmp_path):
    """16 levels (root included) is the documented limit and parses."""
    text = DTS_HEADER + "/ { " + "a { " * 15 + "};" * 15 + " };"
    check_against_dtc(bins, compile_dts(tmp_path, "deep16", text))


# --------------------------------------------------------------------------
# ELF
# --------------------------------------------------------------------------

PROGRAM_C = r"""
volatile int counter = 5;
static const char message[] = "kairos elf loader test: read-only data";
char big_bss[BSS_SIZE];
long small_data[4] = {1, 2, 3, 4};
void _start(void)
{
    big_bss[3] = (char)(counter + message[0] + small_data[1]);
    for (;;) {
    }
}
"""

SHARED_PAGE_LD = """
ENTRY(_start)
PHDRS { text PT_LOAD; data PT_LOAD; }
SECTIONS {
  . = 0x400000;
  .text : { *(.text*) *(.rodata*) *(.srodata*) } :text
  . = ALIGN(16);
  .data : { *(.data*) *(.sdata*) } :data
  .bss : { *(.sbss*) *(.bss*) *(COMMON) } :data
}
"""

THREE_SEG_LD = """
ENTRY(_start)
PHDRS { text PT_LOAD; ro PT_LOAD; data PT_LOAD; }
SECTIONS {
  . = 0x10000;
  .text : { *(.text*) } :text
  . = ALIGN(8);
  .rodata : { *(.rodata*) *(.srodata*) } :ro
  . = 0x200000;
  .data : { *(.data*) *(.sdata*) } :data
  .bss : { *(.sbss*) *(.bss*) *(COMMON) } :data
}
"""


@pytest.fixture(scope="session")
def elfs(tmp_path_factory) -> dict[str, Path]:
    cc = need("riscv64-unknown-elf-gcc", "gcc-riscv64-unknown-elf")
    d = tmp_path_factory.mktemp("elf")
    src = d / "prog.c"
    src.write_text(PROGRAM_C)
    (d / "share.ld").write_text(SHARED_PAGE_LD)
    (d / "three.ld").write_text(THREE_SEG_LD)
    builds = {
        "default": ["-DBSS_SIZE=4096"],
        "shared_page": ["-DBSS_SIZE=100", "-T", d / "share.ld"],
        "align64k": ["-DBSS_SIZE=4096", "-Wl,-z,max-page-size=0x10000"],
        "big_bss": ["-DBSS_SIZE=(64<<20)"],
        "three_segments": ["-DBSS_SIZE=5000", "-T", d / "three.ld"],
        "debug_info": ["-DBSS_SIZE=10", "-g", "-O0"],
    }
    out = {}
    for name, extra in builds.items():
        f = d / f"{name}.elf"
        run_ok([cc, "-nostdlib", "-static", "-O2", *extra, src, "-o", f])
        out[name] = f
    return out


def elf_expected(path: Path):
    """Segments and image bytes from pyelftools (independent of elf.c)."""
    from elftools.elf.elffile import ELFFile
    data = path.read_bytes()
    with path.open("rb") as fh:
        ef = ELFFile(fh)
        entry = ef.header.e_entry
        segs = [s.header for s in ef.iter_segments()
                if s.header.p_type == "PT_LOAD" and s.header.p_memsz > 0]
    segs.sort(key=lambda h: h.p_vaddr)
    low = segs[0].p_vaddr
    high = max(h.p_vaddr + h.p_memsz for h in segs)
    first, last = low & ~4095, (high - 1) & ~4095
    img = bytearray(last + 4096 - first)
    for h in segs:
        o = h.p_vaddr - first
        img[o:o + h.p_filesz] = data[h.p_offset:h.p_offset + h.p_filesz]
    return entry, segs, low, high, bytes(img)


@pytest.mark.parametrize("name", ["default", "shared_page", "align64k", "big_bss",
                                  "three_segments", "debug_info"])
def test_elf_load_matches_segments(bins, elfs, tmp_path, name):
    path = elfs[name]
    img_file = tmp_path / "image.bin"
    out = run_bin(bins, "test_elf", path, hex(SEL4_USER_TOP), img_file)
    entry, segs, low, high, img = elf_expected(path)
    lines = out.splitlines()
    assert lines[0] == f"ok entry={entry:#x} nseg={len(segs)} low={low:#x} high={high:#x}", out
    for line, h in zip(lines[1:], segs):
        flags = h.p_flags & 7
        assert line == (f"seg vaddr={h.p_vaddr:#x} memsz={h.p_memsz:#x} offset={h.p_offset:#x} "
                        f"filesz={h.p_filesz:#x} flags={flags}")
    assert img_file.read_bytes() == img
    if name == "shared_page":
        assert (segs[0].p_vaddr + segs[0].p_memsz - 1) // 4096 == segs[1].p_vaddr // 4096
    if name == "align64k":
        assert all(h.p_align == 0x10000 for h in segs)
    if name == "big_bss":
        assert high - low > (64 << 20)


def _le(fmt, data, off, val):
    return data[:off] + struct.pack("<" + fmt, val) + data[off + struct.calcsize(fmt):]


def _phdrs(data: bytes):
    phoff = struct.unpack_from("<Q", data, 32)[0]
    phnum = struct.unpack_from("<H", data, 56)[0]
    return [(i, phoff + 56 * i) for i in range(phnum)]


def _load_phdrs(data: bytes):
    return [(i, o) for i, o in _phdrs(data) if struct.unpack_from("<I", data, o)[0] == 1]


def make_elf(segments, entry=None, n_pad=0) -> bytes:
    """A minimal RISC-V ELF64 ET_EXEC: segments = [(vaddr, filesz, memsz)];
    file data follows the program headers."""
    phnum = len(segments) + n_pad
    data_off = 64 + 56 * phnum
    body = bytearray()
    phdrs = b""
    for vaddr, filesz, memsz in segments:
        off = data_off + len(body)
        body += bytes((vaddr + k) & 0xFF for k in range(filesz))
        phdrs += struct.pack("<IIQQQQQQ", 1, 5, off, vaddr, vaddr, filesz, memsz, 0x1000)
    phdrs += struct.pack("<IIQQQQQQ", 0, 0, 0, 0, 0, 0, 0, 0) * n_pad
    if entry is None:
        entry = segments[0][0] if segments else 0
    ident = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9
    ehdr = ident + struct.pack("<HHIQQQIHHHHHH", 2, 243, 1, entry, 64, 0, 0, 64, 56, phnum,
                               0, 0, 0)
    return ehdr + phdrs + bytes(body)


def elf_result(bins, tmp_path, data: bytes, top=SEL4_USER_TOP, name="x.elf") -> str:
    f = tmp_path / name
    f.write_bytes(data)
    return run_bin(bins, "test_elf", f, hex(top)).strip()


def test_elf_errors_on_corrupted_copies(bins, elfs, tmp_path):
    good = elfs["default"].read_bytes()
    loads = _load_phdrs(good)
    cases = {
        "short": (good[:40], "error -2 not an ELF file: smaller than the ELF header"),
        "empty": (b"", "error -2 "),
        "magic": (b"\x7fELG" + good[4:], "error -3 not an ELF file: bad magic"),
        "class32": (good[:4] + b"\x01" + good[5:], "error -4 not a 64-bit ELF"),
        "bigendian": (good[:5] + b"\x02" + good[6:], "error -5 not a little-endian ELF"),
        "version": (_le("I", good, 20, 2), "error -6 unsupported ELF version"),
        "machine": (_le("H", good, 18, 62),
                    "error -7 wrong architecture: ELF is not RISC-V (EM_RISCV=243)"),
        "dyn": (_le("H", good, 16, 3),
                "error -8 position-independent (ET_DYN) ELF not supported"),
        "rel": (_le("H", good, 16, 1), "error -9 ELF is not an executable"),
        "phentsize": (_le("H", good, 54, 64), "error -10 bad ELF program header size"),
        "phoff": (_le("Q", good, 32, len(good) - 100), "error -11 ELF program headers outside"),
        "phoff_huge": (_le("Q", good, 32, 2**64 - 8), "error -11 "),
        "phnum": (_le("H", good, 56, 0xFFFF), "error -11 "),
        "noload": (good, None),
        "filesz": (None, "error -15 ELF segment"),
        "truncated": (good[: struct.unpack_from("<Q", good, loads[-1][1] + 8)[0] + 1],
                      f"error -14 truncated ELF: segment {loads[-1][0]} file range past end"),
        "offset_wrap": (None, "error -14 truncated ELF: segment"),
    }
    # No loadable segment: turn every PT_LOAD into PT_NULL.
    noload = good
    for _, o in loads:
        noload = _le("I", noload, o, 0)
    cases["noload"] = (noload, "error -12 ELF has no loadable segment")
    i, o = loads[-1]
    memsz = struct.unpack_from("<Q", good, o + 40)[0]
    cases["filesz"] = (_le("Q", good, o + 32, memsz + 1) if memsz + 1 <= len(good) else
                       _le("Q", _le("Q", good, o + 40, 1), o + 32, 2),
                       f"error -15 ELF segment {i} has filesz > memsz")
    cases["offset_wrap"] = (_le("Q", good, o + 8, 2**64 - 2),
                            f"error -14 truncated ELF: segment {i} file range past end")
    for name, (data, want) in cases.items():
        out = elf_result(bins, tmp_path, data, name=f"{name}.elf")
        assert out.startswith(want), f"{name}: {out!r}, want {want!r}"


def test_elf_errors_synthetic(bins, tmp_path):
    ok = make_elf([(0x10000, 100, 200), (0x10000 + 200, 10, 4096)])
    assert elf_result(bins, tmp_path, ok).startswith("ok entry=0x10000 nseg=2")
    cases = {
        # Byte ranges overlapping by one byte.
        "overlap": (make_elf([(0x10000, 100, 200), (0x10000 + 199, 10, 10)]),
                    SEL4_USER_TOP, "error -18 ELF segments overlap: segment 1"),
        # One segment entirely inside another.
        "inside": (make_elf([(0x20000, 0, 0x10000), (0x21000, 4, 4)], entry=0x21000),
                   SEL4_USER_TOP, "error -18 "),
        "above_top": (make_elf([(SEL4_USER_TOP - 0x1000, 16, 0x1001)]), SEL4_USER_TOP,
                      "error -17 ELF segment 0 ends above the user address space top"),
        "overflow": (make_elf([(2**64 - 0x1000, 16, 0x2000)]), 2**64 - 1,
                     "error -16 ELF segment 0 address range overflows"),
        "too_many": (make_elf([(0x10000 + 0x1000 * k, 8, 8) for k in range(17)]),
                     SEL4_USER_TOP, "error -13 ELF has too many loadable segments"),
        "entry": (make_elf([(0x10000, 8, 8)], entry=0x20000), SEL4_USER_TOP,
                  "error -19 ELF entry point is outside every loadable segment"),
    }
    for name, (data, top, want) in cases.items():
        out = elf_result(bins, tmp_path, data, top=top, name=f"{name}.elf")
        assert out.startswith(want), f"{name}: {out!r}, want {want!r}"
    # Exactly at the limits is fine: 16 segments, a segment ending at user_top,
    # adjacent byte ranges in one page, memsz-0 PT_LOADs and other headers
    # ignored.
    limits = {
        "sixteen": make_elf([(0x10000 + 0x1000 * k, 8, 8) for k in range(16)], n_pad=5),
        "at_top": make_elf([(SEL4_USER_TOP - 0x1000, 16, 0x1000)]),
        "adjacent": make_elf([(0x10000, 10, 10), (0x1000A, 6, 6), (0x10010, 0, 0)]),
    }
    for name, data in limits.items():
        out = elf_result(bins, tmp_path, data, name=f"{name}.elf")
        assert out.startswith("ok "), f"{name}: {out!r}"
    # Adjacent segments in one page are filled byte-exactly.
    f = tmp_path / "adjacent.elf"
    img = tmp_path / "adjacent.img"
    run_bin(bins, "test_elf", f, hex(SEL4_USER_TOP), img)
    page = img.read_bytes()
    assert len(page) == 4096
    assert page[:16] == bytes((0x10000 + k) & 0xFF for k in range(10)) + \
        bytes((0x1000A + k) & 0xFF for k in range(6))
    assert page[16:] == bytes(4096 - 16)


def test_elf_fuzz_headers(bins, elfs, tmp_path):
    """Random damage to the ELF and program headers: any result, but never a
    sanitizer report (run_bin asserts a clean exit)."""
    import random
    rng = random.Random(7)
    good = bytearray(elfs["shared_page"].read_bytes())
    phend = 64 + 56 * struct.unpack_from("<H", good, 56)[0]
    for k in range(150):
        data = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(0, phend)
            data[at] = rng.randrange(256)
        cut = len(data) if rng.random() < 0.7 else rng.randrange(len(data))
        f = tmp_path / f"fuzz{k}.elf"
        f.write_bytes(bytes(data[:cut]))
        # No image output: a damaged but valid layout may span gigabytes.
        out = run_bin(bins, "test_elf", f, hex(SEL4_USER_TOP))
        assert out.startswith(("ok ", "error -")), out


# --------------------------------------------------------------------------
# Regions and string functions
# --------------------------------------------------------------------------

def test_regions_model_and_untyped_cut(bins):
    out = run_bin(bins, "test_regions")
    m = re.search(r"regions ok ops=(\d+) fulls=(\d+) cuts=(\d+)", out)
    assert m, out
    assert int(m.group(1)) >= 100000 and int(m.group(2)) > 0 and int(m.group(3)) > 100000


def test_kernel_string_functions(bins):
    out = run_bin(bins, "test_string")
    assert out.strip() == "string ok 100000"
