"""Turn a validated description into the loader's spec and a bootable image.

The spec (user/loader/spec.h) is a list of operations the loader runs in
order. Everything is decided here: every object, the loader slot of every
capability, what each PD's CNode holds, where each frame is mapped. The
image is the loader ELF with one more PT_LOAD segment, at SPEC_VADDR,
holding the spec (docs/system-description.md "The packed spec").
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from kairos.system.model import PAGE_SIZE, PD_IPC_BUFFER, PD_STACK_TOP, ProtectionDomain, SystemDescription

SPEC_MAGIC = 0x5359534F5249414B   # "KAIROSYS"
SPEC_VERSION = 1
SPEC_NAME_LEN = 32
FIXED = 1 << 63
SCHEDCONTROL = FIXED | 0xFFFF
ROOT_CNODE = FIXED | 2            # seL4_CapInitThreadCNode

# Operation codes (spec.h enum spec_opcode).
OP = dict(CREATE=1, DEVICE_FRAME=2, MINT=3, MAP_TABLE=4, MAP_FRAME=5, LOAD=6, ASID_ASSIGN=7, TCB_CONFIGURE=8,
          SC_CONFIGURE=9, TCB_SCHED=10, BIND_NTFN=11, IRQ_GET=12, IRQ_NTFN=13, START=14, PASSIVE=15, SERVE=16)

# seL4 riscv64 object types and their sizes in bytes (libsel4 constants).
TCB, ENDPOINT, NOTIFICATION, CNODE, SCHEDCONTEXT, REPLY, FRAME, PAGE_TABLE = 1, 2, 3, 4, 5, 6, 8, 10
OBJECT_BYTES = {TCB: 1 << 11, ENDPOINT: 16, NOTIFICATION: 64, REPLY: 32, FRAME: 4096, PAGE_TABLE: 4096}

# A PD's CSpace (user/pd/include/kairos/pd.h).
PD_CNODE_BITS = 9
SLOT_INPUT, SLOT_REPLY, SLOT_LOADER = 1, 2, 3
NOTIFY_BASE, PPCALL_BASE, IRQ_BASE, SC_BASE = 10, 74, 138, 202
FLAG_PASSIVE, FLAG_ENDPOINT = 1, 2

# Capability rights words (seL4_CapRights_new(grant_reply, grant, read, write)).
RIGHTS_ALL = 0xF
RIGHTS_WRITE = 0x1
RIGHTS_CALL = 0x9                 # write + grant-reply: a Call that can be answered
RIGHTS_RW = 0x3
RIGHTS_R = 0x2
EXECUTE_NEVER = 1


def sc_bits(extra_refills: int) -> int:
    """The smallest scheduling context holding 2 + extra refills (seL4_MaxExtraRefills)."""
    bits = 8
    while ((1 << bits) - 128) // 16 < extra_refills + 2:
        bits += 1
    return bits


@dataclass
class Spec:
    ops: list[tuple[int, ...]] = field(default_factory=list)
    creates: list[tuple[int, int, int, int]] = field(default_factory=list)   # (bytes, type, bits, slot)
    pages: list[bytes] = field(default_factory=list)
    n_slots: int = 0

    def slot(self) -> int:
        self.n_slots += 1
        return self.n_slots - 1

    def create(self, type_: int, bits: int = 0) -> int:
        s = self.slot()
        size = (1 << bits) if type_ in (SCHEDCONTEXT,) else (1 << (bits + 5)) if type_ == CNODE \
            else OBJECT_BYTES[type_]
        self.creates.append((size, type_, bits, s))
        return s

    def op(self, name: str, *args: int) -> None:
        assert len(args) <= 7
        self.ops.append((OP[name],) + tuple(args) + (0,) * (7 - len(args)))

    def mint(self, cnode: int, index: int, depth: int, src: int, rights: int, badge: int = 0) -> None:
        self.op("MINT", cnode, index, depth, src, rights, badge)

    def mint_local(self, src: int, rights: int, badge: int) -> int:
        s = self.slot()
        self.mint(ROOT_CNODE, s, 64, src, rights, badge)
        return s

    def page(self, data: bytes) -> int:
        self.pages.append(data)
        return len(self.pages) - 1


@dataclass
class PdObjects:
    tcb: int
    sc: int
    cnode: int
    vspace: int
    ntfn: int
    reply: int
    ep: int | None


def symbol_address(elf: ELFFile, name: str) -> tuple[int, int] | None:
    symtab = elf.get_section_by_name(".symtab")
    if not isinstance(symtab, SymbolTableSection):
        return None
    syms = symtab.get_symbol_by_name(name)
    if not syms:
        return None
    return syms[0]["st_value"], syms[0]["st_size"]


class PackError(Exception):
    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line


def image_pages(pd: ProtectionDomain, patches: dict[int, bytes]) -> dict[int, tuple[bytearray, int]]:
    """The PD's program image as pages: vaddr -> (contents, ELF flags), with
    `patches` (vaddr -> bytes) written over the file's contents."""
    pages: dict[int, tuple[bytearray, int]] = {}
    with pd.image.open("rb") as f:
        elf = ELFFile(f)
        for seg in elf.iter_segments():
            if seg["p_type"] != "PT_LOAD" or not seg["p_memsz"]:
                continue
            data = seg.data()[: seg["p_filesz"]]
            va, memsz, flags = seg["p_vaddr"], seg["p_memsz"], seg["p_flags"]
            first = va - va % PAGE_SIZE
            for page in range(first, va + memsz, PAGE_SIZE):
                buf, old = pages.get(page, (bytearray(PAGE_SIZE), 0))
                pages[page] = (buf, old | flags)
            pos = 0
            while pos < len(data):
                addr = va + pos
                page = addr - addr % PAGE_SIZE
                n = min(PAGE_SIZE - addr % PAGE_SIZE, len(data) - pos)
                pages[page][0][addr % PAGE_SIZE: addr % PAGE_SIZE + n] = data[pos: pos + n]
                pos += n
    for addr, blob in patches.items():
        for i, b in enumerate(blob):
            a = addr + i
            page = a - a % PAGE_SIZE
            if page not in pages:
                raise ValueError(f"patched address {addr:#x} is outside the program image")
            pages[page][0][a % PAGE_SIZE] = b
    return pages


def pd_patches(system: SystemDescription, pd: ProtectionDomain) -> dict[int, bytes]:
    """setvar_vaddr symbols and the PD's name, written into its image."""
    patches: dict[int, bytes] = {}
    with pd.image.open("rb") as f:
        elf = ELFFile(f)
        for m in pd.maps:
            if m.setvar_vaddr is None:
                continue
            sym = symbol_address(elf, m.setvar_vaddr)
            if sym is None or sym[1] != 8:
                raise PackError(m.line, f"setvar_vaddr '{m.setvar_vaddr}': {pd.image.name} has no 8-byte symbol "
                                        f"of that name")
            patches[sym[0]] = struct.pack("<Q", m.vaddr)
        sym = symbol_address(elf, "kairos_pd_name_text")
        if sym is not None and sym[1] >= SPEC_NAME_LEN:
            patches[sym[0]] = pd.name.encode().ljust(SPEC_NAME_LEN, b"\0")
    return patches


def page_tables(vaddrs: set[int]) -> tuple[list[int], list[int]]:
    """Page tables an Sv39 address space needs to map 4 KiB pages at vaddrs:
    one per GiB (level 1) and one per 2 MiB (level 0) in use."""
    gib = sorted({v >> 30 << 30 for v in vaddrs})
    mib2 = sorted({v >> 21 << 21 for v in vaddrs})
    return gib, mib2


def build_spec(system: SystemDescription) -> Spec:
    spec = Spec()
    loader_ep = spec.create(ENDPOINT)
    loader_reply = spec.create(REPLY)
    has_ep = {p.name: p.passive for p in system.pds}
    for ch in system.channels:
        for caller, callee in ((ch.a, ch.b), (ch.b, ch.a)):
            if caller.pp:
                has_ep[callee.pd] = True

    objs: dict[str, PdObjects] = {}
    for p in system.pds:
        objs[p.name] = PdObjects(
            tcb=spec.create(TCB), sc=spec.create(SCHEDCONTEXT, sc_bits(p.extra_refills)),
            cnode=spec.create(CNODE, PD_CNODE_BITS), vspace=spec.create(PAGE_TABLE),
            ntfn=spec.create(NOTIFICATION), reply=spec.create(REPLY),
            ep=spec.create(ENDPOINT) if has_ep[p.name] else None)

    # Memory regions: one frame per page, created once; mapped through copies.
    region_frames: dict[str, list[int]] = {}
    device_ops: list[tuple[int, int]] = []
    for r in system.regions:
        frames = []
        for i in range(r.size // PAGE_SIZE):
            if r.phys_addr is None:
                frames.append(spec.create(FRAME))
            else:
                s = spec.slot()
                device_ops.append((r.phys_addr + i * PAGE_SIZE, s))
                frames.append(s)
        region_frames[r.name] = frames

    # Creation first, largest objects first (little alignment waste).
    for size, type_, bits, slot in sorted(spec.creates, key=lambda c: -c[0]):
        spec.op("CREATE", type_, bits, slot)
    for pa, slot in device_ops:
        spec.op("DEVICE_FRAME", pa, slot)

    for index, p in enumerate(system.pds):
        o = objs[p.name]
        cn = o.cnode
        # The CSpace.
        spec.mint(cn, SLOT_INPUT, PD_CNODE_BITS, o.ep if o.ep is not None else o.ntfn, RIGHTS_ALL)
        spec.mint(cn, SLOT_REPLY, PD_CNODE_BITS, o.reply, RIGHTS_ALL)
        if p.passive:
            spec.mint(cn, SLOT_LOADER, PD_CNODE_BITS, loader_ep, RIGHTS_WRITE, index + 1)
        for ch in system.channels:
            for me, peer in ((ch.a, ch.b), (ch.b, ch.a)):
                if me.pd != p.name:
                    continue
                po = objs[peer.pd]
                spec.mint(cn, NOTIFY_BASE + me.id, PD_CNODE_BITS, po.ntfn, RIGHTS_WRITE, 1 << peer.id)
                if me.pp:
                    assert po.ep is not None
                    spec.mint(cn, PPCALL_BASE + me.id, PD_CNODE_BITS, po.ep, RIGHTS_CALL, FIXED | peer.id)
        for irq in p.irqs:
            handler = spec.slot()
            spec.op("IRQ_GET", irq.irq, 1 if irq.trigger == "edge" else 0, handler)
            spec.op("IRQ_NTFN", handler, spec.mint_local(o.ntfn, RIGHTS_WRITE, 1 << irq.id))
            spec.mint(cn, IRQ_BASE + irq.id, PD_CNODE_BITS, handler, RIGHTS_ALL)
        for sc in p.sc_caps:
            spec.mint(cn, SC_BASE + sc.id, PD_CNODE_BITS, objs[sc.pd].sc, RIGHTS_ALL)

        # The address space: tables, then the image, stack, IPC buffer, regions.
        pages = image_pages(p, pd_patches(system, p))
        stack = list(range(PD_STACK_TOP - p.stack_size, PD_STACK_TOP, PAGE_SIZE))
        mapped = set(pages) | set(stack) | {PD_IPC_BUFFER}
        for m in p.maps:
            mapped |= {m.vaddr + i * PAGE_SIZE for i in range(system.region(m.mr).size // PAGE_SIZE)}
        spec.op("ASID_ASSIGN", o.vspace)
        gib, mib2 = page_tables(mapped)
        for va in gib + mib2:
            spec.op("MAP_TABLE", _late_table(spec), o.vspace, va)
        for va, (data, flags) in sorted(pages.items()):
            frame = _late_frame(spec)
            if any(data):
                spec.op("LOAD", frame, spec.page(bytes(data)), PAGE_SIZE)
            rights = RIGHTS_RW if flags & 2 else RIGHTS_R
            spec.op("MAP_FRAME", frame, o.vspace, va, rights, 0 if flags & 1 else EXECUTE_NEVER)
        for va in stack:
            spec.op("MAP_FRAME", _late_frame(spec), o.vspace, va, RIGHTS_RW, EXECUTE_NEVER)
        ipc = _late_frame(spec)
        spec.op("MAP_FRAME", ipc, o.vspace, PD_IPC_BUFFER, RIGHTS_RW, EXECUTE_NEVER)
        for m in p.maps:
            rights = RIGHTS_RW if "w" in m.perms else RIGHTS_R
            attrs = 0 if "x" in m.perms else EXECUTE_NEVER
            for i, frame in enumerate(region_frames[m.mr]):
                copy = spec.mint_local(frame, RIGHTS_ALL, 0)
                spec.op("MAP_FRAME", copy, o.vspace, m.vaddr + i * PAGE_SIZE, rights, attrs)

        # The thread and its time.
        cspace_data = (64 - PD_CNODE_BITS) & 0x3F      # seL4_CNode_CapData_new(0, 55)
        spec.op("TCB_CONFIGURE", o.tcb, cn, cspace_data, o.vspace, PD_IPC_BUFFER, ipc)
        spec.op("SC_CONFIGURE", o.sc, p.budget, p.period, p.extra_refills, index)
        fault_ep = spec.mint_local(loader_ep, RIGHTS_CALL, index + 1)
        spec.op("TCB_SCHED", o.tcb, p.priority, o.sc + 1, fault_ep)
        if o.ep is not None:
            spec.op("BIND_NTFN", o.tcb, o.ntfn)
    for index, p in enumerate(system.pds):
        o = objs[p.name]
        flags = (FLAG_PASSIVE if p.passive else 0) | (FLAG_ENDPOINT if o.ep is not None else 0)
        spec.op("START", o.tcb, p.entry, PD_STACK_TOP, flags, PD_IPC_BUFFER, index)
        if p.passive:
            spec.op("PASSIVE", index, o.tcb, o.sc, o.ntfn)
    spec.op("SERVE", loader_ep, loader_reply)
    return spec


# Objects created after the sorted creation block (frames and tables whose
# number is known only while the address space is laid out) get their own
# CREATE right where they are first used.
def _late_frame(spec: Spec) -> int:
    s = spec.slot()
    spec.op("CREATE", FRAME, 0, s)
    return s


def _late_table(spec: Spec) -> int:
    s = spec.slot()
    spec.op("CREATE", PAGE_TABLE, 0, s)
    return s


def encode_spec(system: SystemDescription, spec: Spec) -> bytes:
    """The spec's bytes: header, names, operations, then the pages LOAD copies
    (page-aligned); LOAD operations are rewritten from page index to offset."""
    header_size = 64
    names = b"".join(p.name.encode().ljust(SPEC_NAME_LEN, b"\0") for p in system.pds)
    names_offset = header_size
    ops_offset = names_offset + len(names)
    ops_size = 64 * len(spec.ops)
    pages_offset = -(-(ops_offset + ops_size) // PAGE_SIZE) * PAGE_SIZE
    total = pages_offset + PAGE_SIZE * len(spec.pages)
    out = bytearray(total)
    struct.pack_into("<8Q", out, 0, SPEC_MAGIC, SPEC_VERSION, len(spec.ops), ops_offset, len(system.pds),
                     names_offset, spec.n_slots, total)
    out[names_offset: names_offset + len(names)] = names
    for i, op in enumerate(spec.ops):
        if op[0] == OP["LOAD"]:
            op = (op[0], op[1], pages_offset + PAGE_SIZE * op[2]) + op[3:]
        struct.pack_into("<8Q", out, ops_offset + 64 * i, *op)
    for i, page in enumerate(spec.pages):
        out[pages_offset + PAGE_SIZE * i: pages_offset + PAGE_SIZE * (i + 1)] = page
    return bytes(out)


def append_segment(loader_elf: bytes, data: bytes) -> bytes:
    """A copy of the loader ELF with one more read-only PT_LOAD segment
    holding `data` at the first page after the loader's image (where the
    loader looks for it). The program headers move to the end of the file,
    so the existing segments and sections stay where they are."""
    e = loader_elf
    if e[:4] != b"\x7fELF" or e[4] != 2 or e[5] != 1:
        raise ValueError("the loader is not a little-endian ELF64 file")
    phoff, = struct.unpack_from("<Q", e, 32)
    phentsize, phnum = struct.unpack_from("<HH", e, 54)
    phdrs = [e[phoff + i * phentsize: phoff + (i + 1) * phentsize] for i in range(phnum)]
    end = 0
    for ph in phdrs:
        p_type, _, _, p_vaddr, _, _, p_memsz, _ = struct.unpack("<IIQQQQQQ", ph)
        if p_type == 1:
            end = max(end, p_vaddr + p_memsz)
    if end == 0:
        raise ValueError("the loader has no loadable segment")
    vaddr = -(-end // PAGE_SIZE) * PAGE_SIZE
    body = bytearray(e)
    body += b"\0" * (-len(body) % PAGE_SIZE)
    data_off = len(body)
    body += data
    body += b"\0" * (-len(body) % 8)
    new_phoff = len(body)
    new = struct.pack("<IIQQQQQQ", 1, 4, data_off, vaddr, vaddr, len(data), len(data), PAGE_SIZE)
    for ph in phdrs:
        body += ph
    body += new
    struct.pack_into("<Q", body, 32, new_phoff)
    struct.pack_into("<H", body, 56, phnum + 1)
    return bytes(body)


def build_image(system: SystemDescription, loader_elf: Path) -> bytes:
    spec = build_spec(system)
    return append_segment(loader_elf.read_bytes(), encode_spec(system, spec))
