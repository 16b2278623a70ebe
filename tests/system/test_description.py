"""System descriptions (docs/system-description.md): the parse+validate stage
and `kairos build`'s handling of bad input.

Every bad description must give exactly one line
`kairos build: error: FILE:LINE: ...` on stderr naming the problem, exit
status 2, and leave no image behind. The PD programs are the demo's
(built with `make user`), so the image checks see real RISC-V ELFs.
"""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import REPO
from kairos.cli import main
from kairos.system.parse import DescriptionError, parse_system

DEMO = REPO / "examples" / "demo"
DEMO_BUILD = REPO / "build" / "debug" / "examples" / "demo"


@pytest.fixture(scope="module")
def pd_images() -> Path:
    proc = subprocess.run(["make", "-s", "--no-print-directory", "FLAVOUR=debug", "user"], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in ("monitor", "greedy", "critical", "background"):
        assert (DEMO_BUILD / f"{name}.elf").is_file()
    return DEMO_BUILD


def write(tmp: Path, body: str, name: str = "system.xml") -> Path:
    p = tmp / name
    p.write_text(textwrap.dedent(body).lstrip())
    return p


def build(capsys, xml: Path, images: Path, *extra: str) -> tuple[int, str, Path]:
    out = xml.parent / "out.img"
    status = main(["build", str(xml), "--search-path", str(images), "-o", str(out), *extra])
    return status, capsys.readouterr().err, out


def test_the_demo_description_parses_into_the_model(pd_images):
    s = parse_system(DEMO / "system.xml", [pd_images])
    assert [p.name for p in s.pds] == ["monitor", "greedy", "critical", "background"]
    greedy = s.pd("greedy")
    assert (greedy.priority, greedy.budget, greedy.period, greedy.extra_refills) == (200, 3000, 10000, 4)
    assert greedy.deadline == 10000 and not greedy.passive and greedy.stack_size == 0x2000
    bg = s.pd("background")
    assert bg.budget == bg.period == 1000
    critical = s.pd("critical")
    assert critical.wcets == {} and s.pd("monitor").wcets["init"].time == 200
    assert bg.deadline == 10000
    assert [(m.mr, m.vaddr, m.perms, m.setvar_vaddr) for m in critical.maps] == \
        [("job_state", 0x2000000, "rw", "job_state")]
    assert s.region("job_state").size == 0x1000 and s.region("job_state").phys_addr is None
    (ch,) = s.channels
    assert (ch.a.pd, ch.a.id, ch.b.pd, ch.b.id) == ("monitor", 0, "critical", 0)
    assert [sc.pd for sc in s.pd("monitor").sc_caps] == ["greedy", "critical", "background", "monitor"]
    assert critical.entry == 0x400000 and critical.segments


PD = '<protection_domain name="{name}" priority="{prio}" {attrs}><program_image path="greedy.elf"/>{body}' \
     '</protection_domain>'


def pd(name: str = "a", prio: int = 10, attrs: str = "", body: str = "") -> str:
    return PD.format(name=name, prio=prio, attrs=attrs, body=body)


# (description, line of the error, words the message must contain)
BAD = {
    "malformed_xml": ("<system>\n" + pd() + "\n<channel>\n</system>\n", 4, "malformed XML"),
    "unknown_element": ("<system>\n" + pd() + "\n<domain_schedule/>\n</system>\n", 3, "unknown element <domain_schedule>"),
    "unknown_attribute": ("<system>\n" + pd(attrs='colour="red"') + "\n</system>\n", 2, "unknown attribute 'colour'"),
    "unknown_child": ("<system>\n" + pd(body='<mapp mr="x" vaddr="0x1000"/>') + "\n</system>\n", 2,
                      "unknown element <mapp>"),
    "duplicate_pd": ("<system>\n" + pd("a") + "\n" + pd("a") + "\n</system>\n", 3,
                     "duplicate protection domain name 'a'"),
    "duplicate_region": ("<system>\n" + pd() + '\n<memory_region name="m" size="0x1000"/>\n'
                         '<memory_region name="m" size="0x2000"/>\n</system>\n', 4, "duplicate memory region name 'm'"),
    "budget_over_period": ("<system>\n" + pd(attrs='budget="2000" period="1000"') + "\n</system>\n", 2,
                           "budget 2000 us > period 1000 us"),
    "priority_out_of_range": ("<system>\n" + pd(prio=255) + "\n</system>\n", 2, "priority=255 is out of range"),
    "priority_not_a_number": ("<system>\n" + pd().replace('priority="10"', 'priority="high"') + "\n</system>\n",
                              2, "not an integer"),
    "budget_below_minimum": ("<system>\n" + pd(attrs='budget="5" period="1000"') + "\n</system>\n", 2,
                             "budget=5 is out of range"),
    "overlapping_maps": ("<system>\n<memory_region name=\"m\" size=\"0x2000\"/>\n<memory_region name=\"n\" "
                         "size=\"0x1000\"/>\n" + pd(body='\n<map mr="m" vaddr="0x2000000"/>\n'
                                                       '<map mr="n" vaddr="0x2001000"/>\n') + "\n</system>\n",
                         6, "overlaps mapping of 'm'"),
    "map_over_image": ("<system>\n<memory_region name=\"m\" size=\"0x1000\"/>\n"
                       + pd(body='<map mr="m" vaddr="0x400000"/>') + "\n</system>\n", 3, "overlaps the program image"),
    "map_missing_region": ("<system>\n" + pd(body='<map mr="nothing" vaddr="0x2000000"/>') + "\n</system>\n", 2,
                           "memory region 'nothing', which does not exist"),
    "channel_missing_pd": ("<system>\n" + pd() + '\n<channel>\n<end pd="a" id="0"/>\n<end pd="ghost" id="1"/>\n'
                           "</channel>\n</system>\n", 5, "'ghost', which does not exist"),
    "channel_one_end": ("<system>\n" + pd() + '\n<channel>\n<end pd="a" id="0"/>\n</channel>\n</system>\n', 3,
                        "exactly two <end>s"),
    "channel_id_reused": ("<system>\n" + pd("a") + "\n" + pd("b", 20) + '\n<channel><end pd="a" id="1"/>'
                          '<end pd="b" id="1"/></channel>\n<channel>\n<end pd="a" id="1"/>\n<end pd="b" id="2"/>\n'
                          "</channel>\n</system>\n", 6, "id 1 is already used"),
    "ppcall_to_lower_priority": ("<system>\n" + pd("a", 50) + "\n" + pd("b", 20) +
                                 '\n<channel>\n<end pd="a" id="0" pp="true"/>\n<end pd="b" id="0"/>\n</channel>\n'
                                 "</system>\n", 5, "higher priority"),
    "image_not_elf": ("<system>\n<protection_domain name=\"a\"><program_image path=\"system.xml\"/>"
                      "</protection_domain>\n</system>\n", 2, "not a RISC-V 64 ELF"),
    "image_missing": ("<system>\n<protection_domain name=\"a\"><program_image path=\"nope.elf\"/>"
                      "</protection_domain>\n</system>\n", 2, "program image 'nope.elf' not found"),
    "no_image": ("<system>\n<protection_domain name=\"a\"/>\n</system>\n", 2, "has no <program_image>"),
    "too_much_memory": ("<system>\n" + pd() + '\n<memory_region name="big" size="0x40000000"/>\n</system>\n', 1,
                        "needs about"),
    "bad_perms": ("<system>\n<memory_region name=\"m\" size=\"0x1000\"/>\n" + pd(body='<map mr="m" vaddr="0x2000000" '
                  'perms="w"/>') + "\n</system>\n", 3, "perms='w'"),
    "unaligned_vaddr": ("<system>\n<memory_region name=\"m\" size=\"0x1000\"/>\n" + pd(body='<map mr="m" '
                        'vaddr="0x2000010"/>') + "\n</system>\n", 3, "not page aligned"),
    "irq_twice": ("<system>\n" + pd("a", body='<irq irq="11" id="1"/>') + "\n" + pd("b", body='<irq irq="11" id="1"/>')
                  + "\n</system>\n", 3, "irq 11 is already given to 'a'"),
    "wcet_unknown_entry": ("<system>\n" + pd(body='<wcet entry="main" time="10"/>') + "\n</system>\n", 2,
                           "entry='main'"),
    "empty_system": ("<system>\n</system>\n", 1, "no protection_domain"),
    "wrong_root": ("<sdf>\n</sdf>\n", 1, "expected <system>"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_description_gives_one_line_status_2_and_no_image(case, tmp_path, capsys, pd_images):
    text, line, words = BAD[case]
    xml = write(tmp_path, text)
    status, err, out = build(capsys, xml, pd_images)
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    m = re.fullmatch(r"kairos build: error: (.+):(\d+): (.+)", lines[0])
    assert m, lines[0]
    assert m.group(1) == str(xml)
    assert int(m.group(2)) == line, lines[0]
    assert words in m.group(3), lines[0]
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.img")]


def test_host_elf_is_not_a_riscv_image(tmp_path, capsys, pd_images):
    xml = write(tmp_path, '<system>\n<protection_domain name="a"><program_image path="/bin/true"/>'
                          '</protection_domain>\n</system>\n')
    status, err, out = build(capsys, xml, pd_images)
    assert status == 2 and "is not a RISC-V 64 ELF" in err and "EM_X86_64" in err, err
    assert not out.exists()


def test_a_failed_build_keeps_an_earlier_image_whole(tmp_path, capsys, pd_images):
    good = write(tmp_path, "<system>\n" + pd() + "\n</system>\n")
    status, err, out = build(capsys, good, pd_images)
    assert status == 0, err
    before = out.read_bytes()
    write(tmp_path, "<system>\n" + pd(prio=300) + "\n</system>\n")
    status, err, _ = build(capsys, good, pd_images)
    assert status == 2
    assert out.read_bytes() == before


def test_parse_error_carries_file_and_line(tmp_path, pd_images):
    xml = write(tmp_path, "<system>\n\n" + pd(attrs='passive="maybe"') + "\n</system>\n")
    with pytest.raises(DescriptionError) as e:
        parse_system(xml, [pd_images])
    assert e.value.line == 3 and "passive='maybe'" in e.value.message
