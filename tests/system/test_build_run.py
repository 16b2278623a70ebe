"""`kairos build` + `kairos run` of every example system
(docs/system-description.md), the loader's capability discipline, and the
build time of a 10-PD description.

Each run is under `-icount shift=0` with a timeout and must end with the
example's own verdict line and `kairos-result: PASS` (for the infeasible
example: every job missed its deadline, as `kairos analyze` predicts).
"""

from __future__ import annotations

import re
import struct
import time
from pathlib import Path

import pytest

from conftest import REPO
from kairos.cli import main
from kairos.runner import run
from kairos.system.pack import build_spec, OP, NOTIFY_BASE, PPCALL_BASE, IRQ_BASE, SC_BASE
from kairos.system.parse import parse_system

EXAMPLES = REPO / "examples"
PD_BUILD = REPO / "build" / "debug" / "examples"
LOADER_LINE = re.compile(r"kairos loader: (\d+) protection domains, (\d+) operations, built in (\d+) us")


@pytest.fixture(scope="module")
def built(debug_user) -> Path:
    return debug_user


def build_example(name: str, out_dir: Path) -> Path:
    image = out_dir / f"{name}.elf"
    assert main(["build", str(EXAMPLES / name / "system.xml"), "--search-path", str(PD_BUILD / name),
                 "-o", str(image), "-q"]) == 0
    return image


@pytest.mark.parametrize("name, verdict, pds", [
    ("demo", "demo verdict: PASS", 4),
    ("passive_server", "passive verdict: PASS", 3),
    ("device", "device verdict: PASS", 2),
    ("infeasible", "infeasible verdict: MISSED (5 of 5 jobs)", 2),
])
def test_example_builds_and_runs(name, verdict, pds, built, tmp_path):
    image = build_example(name, tmp_path)
    r = run(image, kernel=built, timeout=180, icount=True)
    detail = "\n".join(r.lines[-25:])
    assert r.passed, f"{r.reason}\n{detail}"
    assert verdict in r.lines, detail
    loader = [m for m in (LOADER_LINE.search(l) for l in r.lines) if m]
    assert len(loader) == 1 and int(loader[0].group(1)) == pds, detail
    # No PD faulted into the loader.
    assert not [l for l in r.lines if "kairos loader: PD" in l], detail


def test_passive_server_runs_only_on_donated_time(built, tmp_path):
    r = run(build_example("passive_server", tmp_path), kernel=built, timeout=180, icount=True)
    assert r.passed, r.reason
    summary = next(l for l in r.lines if l.startswith("passive: 20 calls from client_hi"))
    m = re.search(r"(\d+) from client_lo; server's own context consumed (\d+) us; client_hi consumed (\d+) us",
                  summary)
    assert m and int(m.group(1)) >= 19 and int(m.group(2)) == 0 and int(m.group(3)) >= 20 * 80, summary


def cnode_contents(spec, cnode_slot: int) -> dict[int, tuple[int, int, int]]:
    """Index -> (source slot, rights, badge) of every mint into one PD CNode."""
    return {op[2]: (op[4], op[5], op[6]) for op in spec.ops if op[0] == OP["MINT"] and op[1] == cnode_slot}


def test_each_pd_gets_exactly_what_its_description_names(built):
    s = parse_system(EXAMPLES / "passive_server" / "system.xml", [PD_BUILD / "passive_server"])
    spec = build_spec(s)
    creates = {op[3]: op[1] for op in spec.ops if op[0] == OP["CREATE"]}
    cnodes = [op[3] for op in spec.ops if op[0] == OP["CREATE"] and op[1] == 4]
    assert len(cnodes) == 3
    by_pd = {}
    for op in spec.ops:
        if op[0] == OP["TCB_CONFIGURE"]:
            by_pd[len(by_pd)] = op[2]
    server, hi, lo = (cnode_contents(spec, by_pd[i]) for i in range(3))
    # The passive server: input endpoint, reply, loader endpoint; notify caps
    # back to both clients; nothing else (no ppcall, irq or SC caps).
    assert sorted(server) == [1, 2, 3, NOTIFY_BASE + 1, NOTIFY_BASE + 2]
    assert creates[server[1][0]] == 2                      # an endpoint
    assert server[3][2] == 1                                # loader badge: PD index + 1
    # client_hi: input notification, reply, notify + ppcall on channel 0, SC caps 0 and 1.
    assert sorted(hi) == [1, 2, NOTIFY_BASE, PPCALL_BASE, SC_BASE, SC_BASE + 1]
    assert creates[hi[1][0]] == 3                           # a notification: nobody ppcalls it
    assert hi[PPCALL_BASE][2] == (1 << 63) | 1              # the server's channel 1
    assert hi[PPCALL_BASE][1] == 0x9                        # write + grant-reply
    assert hi[NOTIFY_BASE][2] == 1 << 1
    assert sorted(lo) == [1, 2, NOTIFY_BASE, PPCALL_BASE]
    assert lo[PPCALL_BASE][2] == (1 << 63) | 2
    assert not any(i >= IRQ_BASE for pd in (server, hi, lo) for i in pd if i < SC_BASE)


def ten_pd_description(tmp: Path) -> Path:
    images = PD_BUILD / "demo"
    pds = []
    for i in range(10):
        pds.append(f'<protection_domain name="pd{i}" priority="{10 + i}" budget="500" period="10000">'
                   f'<program_image path="{images / "greedy.elf"}"/>'
                   f'<map mr="shared" vaddr="0x2000000" perms="rw"/></protection_domain>')
    chans = [f'<channel><end pd="pd{i}" id="0" pp="true"/><end pd="pd{i + 1}" id="1"/></channel>' for i in range(9)]
    xml = tmp / "ten.xml"
    xml.write_text('<system><memory_region name="shared" size="0x10000"/>' + "".join(pds) + "".join(chans)
                   + "</system>")
    return xml


def test_ten_pd_description_builds_in_under_5_s_and_boots(built, tmp_path):
    xml = ten_pd_description(tmp_path)
    image = tmp_path / "ten.elf"
    loader = REPO / "build" / "debug" / "user" / "loader" / "loader.elf"
    start = time.monotonic()
    assert main(["build", str(xml), "-o", str(image), "--loader", str(loader), "-q"]) == 0
    elapsed = time.monotonic() - start
    assert elapsed < 5.0, f"building 10 PDs took {elapsed:.2f} s"
    print(f"10-PD build: {elapsed:.2f} s")
    # The PDs spin (greedy.elf); the loader's line says all ten started.
    r = run(image, kernel=built, timeout=60, icount=True, expect=r"kairos loader: 10 protection domains")
    assert r.passed, r.reason + "\n" + "\n".join(r.lines[-10:])
    m = LOADER_LINE.search(r.reason)
    assert m, r.reason
    print(f"loader boot time, 10 PDs: {m.group(3)} us under -icount")


def test_image_is_the_loader_plus_one_segment(built, tmp_path):
    image = build_example("device", tmp_path)
    loader = (REPO / "build" / "debug" / "user" / "loader" / "loader.elf").read_bytes()
    data = image.read_bytes()
    assert data[:len(loader)] == loader[:32] + data[32:40] + loader[40:56] + data[56:58] + loader[58:]
    phoff, = struct.unpack_from("<Q", data, 32)
    phnum, = struct.unpack_from("<H", data, 56)
    last = struct.unpack_from("<IIQQQQQQ", data, phoff + (phnum - 1) * 56)
    assert last[0] == 1 and last[1] == 4 and last[3] % 4096 == 0       # PT_LOAD, read-only, page aligned
    assert data[last[2]:last[2] + 8] == b"KAIROSYS"
