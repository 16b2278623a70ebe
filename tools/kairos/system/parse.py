"""Parse and validate a system description (docs/system-description.md).

A pure stage: XML file in, `SystemDescription` out, or one
`DescriptionError` naming the file, the line and the problem. Nothing is
written. The expat parser gives every element its line, which each error
message carries.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from kairos.system.model import (
    DEFAULT_STACK_SIZE, ENTRY_POINTS, MAX_CHANNEL_ID, MAX_EXTRA_REFILLS, MAX_PDS, MAX_PRIORITY, MAX_STACK_SIZE,
    MIN_BUDGET_US, PAGE_SIZE, PD_IPC_BUFFER, PD_STACK_TOP, USER_TOP, Channel, ChannelEnd, Irq, Map, MemoryRegion,
    ProtectionDomain, ScCap, SystemDescription, Wcet,
)

# RAM the kernel, the loader and the loader's image keep for themselves, on
# top of what the description asks for (docs/system-description.md "Limits").
RESERVED_RAM = 32 << 20
# Capability slots the loader has in its root CNode (2^13) less the BootInfo's
# initial caps and the untypeds, kept as a margin.
LOADER_SLOTS = 8192 - 512
PLATFORM_IRQS = 1023     # PLIC sources on QEMU virt (source 0 is "no interrupt")
EM_RISCV = 243


class DescriptionError(Exception):
    def __init__(self, path: Path | str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line, self.message = str(path), line, message


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    line: int
    children: list[Element] = field(default_factory=list)


def read_xml(path: Path) -> Element:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise DescriptionError(path, 0, f"cannot read: {e.strerror}") from None
    parser = expat.ParserCreate()
    stack: list[Element] = []
    root: list[Element] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        el = Element(tag, attrs, parser.CurrentLineNumber)
        (stack[-1].children if stack else root).append(el)
        stack.append(el)

    def end(tag: str) -> None:
        stack.pop()

    def text(data: str) -> None:
        if data.strip():
            raise DescriptionError(path, parser.CurrentLineNumber, f"unexpected text {data.strip()[:30]!r}")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    try:
        parser.Parse(data, True)
    except expat.ExpatError as e:
        raise DescriptionError(path, e.lineno, f"malformed XML: {expat.ErrorString(e.code)}") from None
    return root[0]


class Validator:
    def __init__(self, path: Path, search_path: list[Path], memory: int):
        self.path = path
        self.search_path = [path.parent] + search_path
        self.memory = memory

    def fail(self, line: int, message: str) -> DescriptionError:
        return DescriptionError(self.path, line, message)

    # ---- attributes ----------------------------------------------------
    def attrs(self, el: Element, required: tuple[str, ...], optional: tuple[str, ...]) -> dict[str, str]:
        for name in el.attrs:
            if name not in required and name not in optional:
                allowed = ", ".join(required + optional)
                raise self.fail(el.line, f"unknown attribute '{name}' on <{el.tag}> (allowed: {allowed})")
        for name in required:
            if name not in el.attrs:
                raise self.fail(el.line, f"<{el.tag}> needs the attribute '{name}'")
        return el.attrs

    def integer(self, el: Element, name: str, default: int | None = None, lo: int = 0,
                hi: int | None = None) -> int:
        text = el.attrs.get(name)
        if text is None:
            if default is None:
                raise self.fail(el.line, f"<{el.tag}> needs the attribute '{name}'")
            return default
        try:
            value = int(text.replace("_", ""), 0)
        except ValueError:
            raise self.fail(el.line, f"{name}={text!r} is not an integer") from None
        if value < lo or (hi is not None and value > hi):
            bound = f"{lo}..{hi}" if hi is not None else f">= {lo}"
            raise self.fail(el.line, f"{name}={text} is out of range ({bound})")
        return value

    def boolean(self, el: Element, name: str, default: bool) -> bool:
        text = el.attrs.get(name)
        if text is None:
            return default
        if text not in ("true", "false"):
            raise self.fail(el.line, f"{name}={text!r}: use true or false")
        return text == "true"

    def time(self, el: Element, name: str) -> float:
        text = el.attrs[name]
        try:
            value = float(text)
        except ValueError:
            raise self.fail(el.line, f"{name}={text!r} is not a time in microseconds") from None
        if not math.isfinite(value) or value < 0:
            raise self.fail(el.line, f"{name}={text} is not a time in microseconds")
        return value

    def name(self, el: Element, key: str = "name") -> str:
        text = el.attrs[key]
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}", text):
            raise self.fail(el.line, f"{key}={text!r}: a name is 1-32 letters, digits, '_', '.', '-'")
        return text

    def no_children(self, el: Element) -> None:
        if el.children:
            raise self.fail(el.children[0].line, f"unknown element <{el.children[0].tag}> inside <{el.tag}>")

    # ---- elements ------------------------------------------------------
    def system(self, root: Element) -> SystemDescription:
        if root.tag != "system":
            raise self.fail(root.line, f"the root element is <{root.tag}>, expected <system>")
        self.attrs(root, (), ())
        pds: list[ProtectionDomain] = []
        regions: list[MemoryRegion] = []
        channels: list[Channel] = []
        for el in root.children:
            if el.tag == "protection_domain":
                pds.append(self.protection_domain(el))
            elif el.tag == "memory_region":
                regions.append(self.memory_region(el))
            elif el.tag == "channel":
                channels.append(self.channel(el))
            else:
                raise self.fail(el.line, f"unknown element <{el.tag}> inside <system>")
        if not pds:
            raise self.fail(root.line, "the system has no protection_domain")
        if len(pds) > MAX_PDS:
            raise self.fail(pds[MAX_PDS].line, f"more than {MAX_PDS} protection domains")
        self.unique(pds, "protection domain")
        self.unique(regions, "memory region")
        system = SystemDescription(self.path, pds, regions, channels)
        self.root_line = root.line
        self.cross_check(system)
        return system

    def unique(self, items: list, what: str) -> None:
        seen: dict[str, int] = {}
        for item in items:
            if item.name in seen:
                raise self.fail(item.line, f"duplicate {what} name '{item.name}' (first on line {seen[item.name]})")
            seen[item.name] = item.line

    def protection_domain(self, el: Element) -> ProtectionDomain:
        self.attrs(el, ("name",), ("priority", "budget", "period", "passive", "stack_size", "extra_refills",
                                   "deadline", "criticality"))
        name = self.name(el)
        budget = self.integer(el, "budget", 1000, lo=MIN_BUDGET_US)
        period = self.integer(el, "period", budget, lo=MIN_BUDGET_US)
        if budget > period:
            raise self.fail(el.line, f"protection domain '{name}': budget {budget} us > period {period} us")
        stack = self.integer(el, "stack_size", DEFAULT_STACK_SIZE, lo=PAGE_SIZE, hi=MAX_STACK_SIZE)
        if stack % PAGE_SIZE:
            raise self.fail(el.line, f"stack_size={stack:#x} is not a multiple of {PAGE_SIZE:#x}")
        deadline = self.integer(el, "deadline", period, lo=1)
        pd = ProtectionDomain(
            name=name,
            priority=self.integer(el, "priority", 0, hi=MAX_PRIORITY),
            budget=budget, period=period,
            passive=self.boolean(el, "passive", False),
            stack_size=stack,
            extra_refills=self.integer(el, "extra_refills", 0, hi=MAX_EXTRA_REFILLS),
            deadline=deadline,
            criticality=self.integer(el, "criticality", 0, hi=255),
            image=Path(), line=el.line,
        )
        images = 0
        for child in el.children:
            if child.tag == "program_image":
                self.attrs(child, ("path",), ())
                self.no_children(child)
                images += 1
                if images > 1:
                    raise self.fail(child.line, f"protection domain '{name}' has a second <program_image>")
                pd.image = self.program_image(child, child.attrs["path"], pd)
            elif child.tag == "map":
                self.attrs(child, ("mr", "vaddr"), ("perms", "cached", "setvar_vaddr"))
                self.no_children(child)
                perms = child.attrs.get("perms", "rw")
                if not perms or any(c not in "rwx" for c in perms) or len(set(perms)) != len(perms) \
                        or "r" not in perms:
                    raise self.fail(child.line, f"perms={perms!r}: use r, rw, rx or rwx")
                vaddr = self.integer(child, "vaddr", hi=USER_TOP - 1)
                if vaddr % PAGE_SIZE:
                    raise self.fail(child.line, f"vaddr={vaddr:#x} is not page aligned")
                setvar = child.attrs.get("setvar_vaddr")
                if setvar is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", setvar):
                    raise self.fail(child.line, f"setvar_vaddr={setvar!r} is not a symbol name")
                pd.maps.append(Map(child.attrs["mr"], vaddr, "".join(c for c in "rwx" if c in perms),
                                   self.boolean(child, "cached", True), setvar, child.line))
            elif child.tag == "irq":
                self.attrs(child, ("irq", "id"), ("trigger",))
                self.no_children(child)
                trigger = child.attrs.get("trigger", "level")
                if trigger not in ("level", "edge"):
                    raise self.fail(child.line, f"trigger={trigger!r}: use level or edge")
                pd.irqs.append(Irq(self.integer(child, "irq", lo=1, hi=PLATFORM_IRQS),
                                   self.integer(child, "id", hi=MAX_CHANNEL_ID), trigger, child.line))
            elif child.tag == "schedcontext":
                self.attrs(child, ("pd", "id"), ())
                self.no_children(child)
                pd.sc_caps.append(ScCap(child.attrs["pd"], self.integer(child, "id", hi=MAX_CHANNEL_ID),
                                        child.line))
            elif child.tag == "wcet":
                self.attrs(child, ("entry", "time"), ())
                self.no_children(child)
                entry = child.attrs["entry"]
                if entry not in ENTRY_POINTS:
                    raise self.fail(child.line, f"entry={entry!r}: use one of {', '.join(ENTRY_POINTS)}")
                if entry in pd.wcets:
                    raise self.fail(child.line, f"a second <wcet> for entry '{entry}'")
                pd.wcets[entry] = Wcet(entry, self.time(child, "time"), child.line)
            else:
                raise self.fail(child.line, f"unknown element <{child.tag}> inside <protection_domain>")
        if images == 0:
            raise self.fail(el.line, f"protection domain '{name}' has no <program_image>")
        return pd

    def program_image(self, el: Element, text: str, pd: ProtectionDomain) -> Path:
        candidates = [Path(text)] if Path(text).is_absolute() else [d / text for d in self.search_path]
        path = next((c for c in candidates if c.is_file()), None)
        if path is None:
            raise self.fail(el.line, f"program image '{text}' not found (looked in "
                                     f"{', '.join(str(d) for d in self.search_path)})")
        try:
            with path.open("rb") as f:
                elf = ELFFile(f)
                if elf.elfclass != 64 or elf["e_machine"] != "EM_RISCV" or not elf.little_endian:
                    raise self.fail(el.line, f"program image '{text}' is not a RISC-V 64 ELF "
                                             f"({elf.elfclass}-bit, {elf['e_machine']})")
                if elf["e_type"] != "ET_EXEC":
                    raise self.fail(el.line, f"program image '{text}' is not a static executable ({elf['e_type']})")
                pd.entry = elf["e_entry"]
                for seg in elf.iter_segments():
                    if seg["p_type"] == "PT_LOAD" and seg["p_memsz"]:
                        pd.segments.append((seg["p_vaddr"], seg["p_memsz"], seg["p_flags"]))
        except (ELFError, OSError, ValueError) as e:
            raise self.fail(el.line, f"program image '{text}' is not a RISC-V 64 ELF ({e})") from None
        if not pd.segments:
            raise self.fail(el.line, f"program image '{text}' has no loadable segment")
        for vaddr, memsz, _ in pd.segments:
            if vaddr + memsz > USER_TOP:
                raise self.fail(el.line, f"program image '{text}' has a segment above seL4_UserTop")
        return path

    def memory_region(self, el: Element) -> MemoryRegion:
        self.attrs(el, ("name", "size"), ("phys_addr",))
        self.no_children(el)
        size = self.integer(el, "size", lo=PAGE_SIZE)
        if size % PAGE_SIZE:
            raise self.fail(el.line, f"size={size:#x} is not a multiple of {PAGE_SIZE:#x}")
        phys = self.integer(el, "phys_addr") if "phys_addr" in el.attrs else None
        if phys is not None and phys % PAGE_SIZE:
            raise self.fail(el.line, f"phys_addr={phys:#x} is not page aligned")
        return MemoryRegion(self.name(el), size, phys, el.line)

    def channel(self, el: Element) -> Channel:
        self.attrs(el, (), ())
        ends = []
        for child in el.children:
            if child.tag != "end":
                raise self.fail(child.line, f"unknown element <{child.tag}> inside <channel>")
            self.attrs(child, ("pd", "id"), ("pp",))
            self.no_children(child)
            ends.append(ChannelEnd(child.attrs["pd"], self.integer(child, "id", hi=MAX_CHANNEL_ID),
                                   self.boolean(child, "pp", False), child.line))
        if len(ends) != 2:
            raise self.fail(el.line, f"a channel has exactly two <end>s, this one has {len(ends)}")
        return Channel(ends[0], ends[1], el.line)

    # ---- rules across elements ----------------------------------------
    def cross_check(self, s: SystemDescription) -> None:
        names = {p.name for p in s.pds}
        regions = {r.name: r for r in s.regions}
        ids: dict[str, dict[int, tuple[str, int]]] = {p.name: {} for p in s.pds}

        def claim(pd: str, id_: int, what: str, line: int) -> None:
            if id_ in ids[pd]:
                other, other_line = ids[pd][id_]
                raise self.fail(line, f"protection domain '{pd}': id {id_} is already used by the {other} "
                                      f"on line {other_line}")
            ids[pd][id_] = (what, line)

        for ch in s.channels:
            for end in (ch.a, ch.b):
                if end.pd not in names:
                    raise self.fail(end.line, f"channel end names protection domain '{end.pd}', which does not exist")
                claim(end.pd, end.id, "channel", end.line)
            if ch.a.pd == ch.b.pd:
                raise self.fail(ch.line, f"a channel connects two different protection domains, "
                                         f"not '{ch.a.pd}' with itself")
            for caller, callee in ((ch.a, ch.b), (ch.b, ch.a)):
                if caller.pp:
                    hi, lo = s.pd(callee.pd), s.pd(caller.pd)
                    if hi.priority <= lo.priority:
                        raise self.fail(caller.line, f"'{caller.pd}' may ppcall '{callee.pd}' only if '{callee.pd}' "
                                                     f"has a higher priority ({hi.priority} <= {lo.priority})")
        for p in s.pds:
            for irq in p.irqs:
                claim(p.name, irq.id, "irq", irq.line)
            for sc in p.sc_caps:
                if sc.pd not in names:
                    raise self.fail(sc.line, f"schedcontext names protection domain '{sc.pd}', which does not exist")
            seen_sc: dict[int, int] = {}
            for sc in p.sc_caps:
                if sc.id in seen_sc:
                    raise self.fail(sc.line, f"schedcontext id {sc.id} is already used on line {seen_sc[sc.id]}")
                seen_sc[sc.id] = sc.line
        irq_owner: dict[int, tuple[str, int]] = {}
        for p in s.pds:
            for irq in p.irqs:
                if irq.irq in irq_owner:
                    raise self.fail(irq.line, f"irq {irq.irq} is already given to '{irq_owner[irq.irq][0]}' "
                                              f"(line {irq_owner[irq.irq][1]})")
                irq_owner[irq.irq] = (p.name, irq.line)
        self.check_mappings(s, regions)
        self.check_physical(s)
        self.check_memory(s)

    def check_mappings(self, s: SystemDescription, regions: dict[str, MemoryRegion]) -> None:
        for p in s.pds:
            used: list[tuple[int, int, str]] = []
            for vaddr, memsz, _ in p.segments:
                start = vaddr - vaddr % PAGE_SIZE
                used.append((start, vaddr + memsz, "the program image"))
            used.append((PD_STACK_TOP - p.stack_size, PD_IPC_BUFFER + PAGE_SIZE, "the stack and IPC buffer"))
            for m in p.maps:
                if m.mr not in regions:
                    raise self.fail(m.line, f"map names memory region '{m.mr}', which does not exist")
                start, end = m.vaddr, m.vaddr + regions[m.mr].size
                if end > USER_TOP:
                    raise self.fail(m.line, f"mapping of '{m.mr}' at {m.vaddr:#x} ends above seL4_UserTop")
                for a, b, what in used:
                    if start < b and a < end:
                        raise self.fail(m.line, f"mapping of '{m.mr}' at {start:#x}..{end:#x} in '{p.name}' "
                                                f"overlaps {what} ({a:#x}..{b:#x})")
                used.append((start, end, f"mapping of '{m.mr}' (line {m.line})"))

    def check_physical(self, s: SystemDescription) -> None:
        fixed = sorted((r.phys_addr, r.phys_addr + r.size, r) for r in s.regions if r.phys_addr is not None)
        for (a0, a1, ra), (b0, b1, rb) in zip(fixed, fixed[1:]):
            if b0 < a1:
                raise self.fail(rb.line, f"memory region '{rb.name}' overlaps '{ra.name}' in physical memory")

    def check_memory(self, s: SystemDescription) -> None:
        need = sum(r.size for r in s.regions if r.phys_addr is None)
        slots = 0
        maps_per_region: dict[str, int] = {}
        for p in s.pds:
            for m in p.maps:
                maps_per_region[m.mr] = maps_per_region.get(m.mr, 0) + 1
        for r in s.regions:
            slots += (r.size // PAGE_SIZE) * (1 + maps_per_region.get(r.name, 0))
        for p in s.pds:
            pages = sum(-(-(v % PAGE_SIZE + n) // PAGE_SIZE) for v, n, _ in p.segments)
            image = p.image.stat().st_size
            # Image pages and their copy in the loader's own image, the stack,
            # the IPC buffer, TCB, SC, CNode (2^9 slots), endpoint, notification,
            # reply, VSpace and its page tables (at most one per 2 MiB used).
            tables = 3 + len(p.segments) + len(p.maps) + 1
            need += (pages + p.stack_size // PAGE_SIZE + 1) * PAGE_SIZE + image
            need += (4 + 2 + 64 + tables) * PAGE_SIZE
            slots += 2 * pages + p.stack_size // PAGE_SIZE + 1 + 12 + tables + 4 * 64
        if need + RESERVED_RAM > self.memory:
            raise self.fail(self.root_line, f"the system needs about {(need + RESERVED_RAM) >> 20} MiB of RAM "
                               f"(including {RESERVED_RAM >> 20} MiB for the kernel and loader); the platform "
                               f"has {self.memory >> 20} MiB")
        if slots > LOADER_SLOTS:
            raise self.fail(self.root_line, f"the system needs {slots} capability slots in the loader; it has {LOADER_SLOTS} "
                               f"(make memory regions smaller)")


def parse_system(path: Path | str, search_path: list[Path] | None = None,
                 memory: int = 1 << 30) -> SystemDescription:
    """Read and validate `path`; raise DescriptionError on the first problem."""
    path = Path(path)
    v = Validator(path, list(search_path or []), memory)
    return v.system(read_xml(path))
