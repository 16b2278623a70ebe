"""ELF loading for the WCET analyser (pyelftools).

``ElfImage(path)`` loads a little-endian riscv64 ELF executable and offers:

* ``sections`` — allocated sections as ``Section(name, addr, size, data,
  executable, writable, nobits)``; ``read(addr, n)`` / ``read_int(addr, width,
  signed)`` read initialised bytes at virtual addresses (``WcetError`` outside
  them), ``is_readonly(addr)``, ``section_at(addr)``.
* ``symbols`` (``Symbol(name, addr, size, kind, bind)``), ``symbol(name)``,
  ``symbol_at(addr)`` (innermost symbol covering the address, for display),
  ``function_starts`` (addresses of STT_FUNC and global code symbols).
* ``instr(addr)`` — the decoded instruction at ``addr`` (cached).
* DWARF line information: ``line_of(addr) -> (file, line) | None`` and
  ``addrs_of_line(file, line) -> list[int]`` (file matched by basename suffix).
* ``gp`` — value of ``__global_pointer$`` if present.

Malformed input is a ``WcetError`` with a one-line message naming the problem.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from functools import cached_property

from kairos.wcet.errors import WcetError
from kairos.wcet.isa import Instr, InstrClass, decode_at

EM_RISCV = "EM_RISCV"


@dataclass(frozen=True)
class Section:
    name: str
    addr: int
    size: int
    data: bytes
    executable: bool
    writable: bool
    nobits: bool

    @property
    def end(self) -> int:
        return self.addr + self.size


@dataclass(frozen=True)
class Symbol:
    name: str
    addr: int
    size: int
    kind: str   # "func", "object", "notype", ...
    bind: str   # "global", "local", "weak"


class ElfImage:
    def __init__(self, path: str) -> None:
        self.path = str(path)
        try:
            from elftools.common.exceptions import ELFError
            from elftools.elf.elffile import ELFFile
        except ImportError as exc:  # pragma: no cover
            raise WcetError(f"pyelftools is not installed: {exc}") from None
        try:
            with open(self.path, "rb") as fh:
                blob = fh.read()
        except OSError as exc:
            raise WcetError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        if blob[:4] != b"\x7fELF":
            raise WcetError(f"{self.path} is not an ELF file (bad magic)")
        import io
        try:
            elf = ELFFile(io.BytesIO(blob))
            if elf.header["e_machine"] != EM_RISCV:
                raise WcetError(f"{self.path} is not a RISC-V ELF (machine {elf.header['e_machine']})")
            if elf.elfclass != 64:
                raise WcetError(f"{self.path} is a {elf.elfclass}-bit ELF; only riscv64 is supported")
            if not elf.little_endian:
                raise WcetError(f"{self.path} is big-endian; only little-endian riscv64 is supported")
            self.entry_point = int(elf.header["e_entry"])
            self.sections = self._load_sections(elf)
            self.symbols = self._load_symbols(elf)
            self._elf = elf
            self._has_dwarf = elf.has_dwarf_info()
        except WcetError:
            raise
        except (ELFError, ValueError, KeyError, IndexError, AssertionError, OSError) as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise WcetError(f"malformed ELF {self.path}: {msg}") from None
        except Exception as exc:  # pyelftools raises assorted errors on corrupt input
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise WcetError(f"malformed ELF {self.path}: {type(exc).__name__}: {msg}") from None
        if not any(s.executable for s in self.sections):
            raise WcetError(f"{self.path} has no executable section")
        self._sec_starts = [s.addr for s in self.sections]
        self._instr_cache: dict[int, Instr] = {}
        by_name: dict[str, Symbol] = {}
        for s in self.symbols:
            if s.name and (s.name not in by_name or (by_name[s.name].bind == "local" and s.bind != "local")):
                by_name[s.name] = s
        self._by_name = by_name
        # At one address: functions first, then labels, a sizeless "__" name
        # (a linker script's marker such as __itim_start) after the others.
        code_syms = sorted((s for s in self.symbols if s.name and self._is_code(s.addr)),
                           key=lambda s: (s.addr, s.kind != "func", s.size == 0 and s.name.startswith("__"),
                                          s.bind == "local", s.name))
        self._code_syms = code_syms
        self._code_sym_addrs = [s.addr for s in code_syms]
        self.function_starts = frozenset(
            s.addr for s in code_syms if s.kind == "func" or (s.bind != "local" and s.kind == "notype"))

    # ------------------------------------------------------------------
    @staticmethod
    def _load_sections(elf) -> list[Section]:
        out = []
        for sec in elf.iter_sections():
            flags = int(sec["sh_flags"])
            if not flags & 0x2:  # SHF_ALLOC
                continue
            size = int(sec["sh_size"])
            if size == 0:
                continue
            nobits = sec["sh_type"] == "SHT_NOBITS"
            data = b"" if nobits else sec.data()
            if not nobits and len(data) != size:
                raise WcetError(f"malformed ELF: section {sec.name} is truncated")
            out.append(Section(sec.name, int(sec["sh_addr"]), size, data,
                               bool(flags & 0x4), bool(flags & 0x1), nobits))
        out.sort(key=lambda s: s.addr)
        return out

    @staticmethod
    def _load_symbols(elf) -> list[Symbol]:
        out = []
        symtab = elf.get_section_by_name(".symtab")
        if symtab is None:
            return out
        for sym in symtab.iter_symbols():
            kind = sym["st_info"]["type"]
            if kind in ("STT_SECTION", "STT_FILE"):
                continue
            if sym["st_shndx"] in ("SHN_UNDEF",):
                continue
            name = sym.name
            if name.startswith("$x") or name.startswith("$d") or name.startswith(".L"):
                continue
            out.append(Symbol(name, int(sym["st_value"]), int(sym["st_size"]),
                              kind[4:].lower(), sym["st_info"]["bind"][4:].lower()))
        return out

    # ------------------------------------------------------------------
    def section_at(self, addr: int) -> Section | None:
        i = bisect.bisect_right(self._sec_starts, addr) - 1
        if i >= 0 and addr < self.sections[i].end:
            return self.sections[i]
        return None

    def _is_code(self, addr: int) -> bool:
        s = self.section_at(addr)
        return s is not None and s.executable

    def is_code(self, addr: int) -> bool:
        return self._is_code(addr)

    def is_readonly(self, addr: int) -> bool:
        s = self.section_at(addr)
        return s is not None and not s.writable and not s.nobits

    def read(self, addr: int, n: int) -> bytes:
        s = self.section_at(addr)
        if s is None or addr + n > s.end:
            raise WcetError(f"address {addr:#x} (+{n}) is outside the loaded image")
        if s.nobits:
            return bytes(n)
        off = addr - s.addr
        return s.data[off:off + n]

    def read_int(self, addr: int, width: int, signed: bool = False) -> int:
        return int.from_bytes(self.read(addr, width), "little", signed=signed)

    def instr(self, addr: int) -> Instr:
        ins = self._instr_cache.get(addr)
        if ins is not None:
            return ins
        s = self.section_at(addr)
        if s is None or not s.executable:
            raise WcetError(f"control flow reaches {addr:#x}, which is not in an executable section")
        if addr & 1:
            raise WcetError(f"control flow reaches misaligned address {addr:#x}")
        ins = decode_at(s.data, addr - s.addr, addr)
        self._instr_cache[addr] = ins
        return ins

    # ------------------------------------------------------------------
    def symbol(self, name: str) -> Symbol:
        s = self._by_name.get(name)
        if s is None:
            raise WcetError(f"symbol {name!r} not found in {os.path.basename(self.path)}")
        return s

    def has_symbol(self, name: str) -> bool:
        return name in self._by_name

    def symbol_at(self, addr: int) -> tuple[str, int] | None:
        """(name, offset) of the code symbol at or before ``addr``."""
        hi = bisect.bisect_right(self._code_sym_addrs, addr)
        while hi > 0:
            # the symbols at one address, in ``_code_syms``'s order: a
            # function before a bare label such as a linker script's marker
            lo = bisect.bisect_left(self._code_sym_addrs, self._code_sym_addrs[hi - 1])
            for s in self._code_syms[lo:hi]:
                # prefer a sized symbol that covers addr, else the nearest one before it
                if s.size == 0 or addr < s.addr + s.size:
                    return s.name, addr - s.addr
            hi = lo
        return None

    def symbol_name_at(self, addr: int) -> str | None:
        """Name of a code symbol starting exactly at ``addr`` (func preferred)."""
        i = bisect.bisect_left(self._code_sym_addrs, addr)
        if i < len(self._code_syms) and self._code_syms[i].addr == addr:
            return self._code_syms[i].name
        return None

    def symbol_size(self, addr: int) -> int:
        i = bisect.bisect_left(self._code_sym_addrs, addr)
        best = 0
        while i < len(self._code_syms) and self._code_syms[i].addr == addr:
            best = max(best, self._code_syms[i].size)
            i += 1
        return best

    def describe(self, addr: int) -> str:
        sa = self.symbol_at(addr)
        if sa is None:
            return f"{addr:#x}"
        name, off = sa
        return f"{addr:#x} <{name}+{off:#x}>" if off else f"{addr:#x} <{name}>"

    @property
    def gp(self) -> int | None:
        s = self._by_name.get("__global_pointer$")
        return s.addr if s else None

    # ------------------------------------------------------------------
    @cached_property
    def _lines(self) -> tuple[list[int], list[tuple[str, int]]]:
        addrs: list[int] = []
        rows: list[tuple[str, int]] = []
        if not self._has_dwarf:
            return addrs, rows
        try:
            dwarf = self._elf.get_dwarf_info()
            entries: list[tuple[int, str, int, bool]] = []
            for cu in dwarf.iter_CUs():
                lp = dwarf.line_program_for_CU(cu)
                if lp is None:
                    continue
                files = lp["file_entry"]
                dirs = lp["include_directory"]
                ver = lp["version"]
                for ent in lp.get_entries():
                    st = ent.state
                    if st is None:
                        continue
                    idx = st.file if ver >= 5 else st.file - 1
                    if 0 <= idx < len(files):
                        fe = files[idx]
                        fname = fe.name.decode(errors="replace") if isinstance(fe.name, bytes) else str(fe.name)
                        di = fe.dir_index if ver >= 5 else fe.dir_index - 1
                        if not os.path.isabs(fname) and 0 <= di < len(dirs):
                            d = dirs[di]
                            d = d.decode(errors="replace") if isinstance(d, bytes) else str(d)
                            fname = os.path.join(d, fname)
                    else:
                        fname = "?"
                    entries.append((st.address, fname, st.line, st.end_sequence))
            # at an address where one sequence ends and the next begins, the
            # end marker goes first: the address belongs to the new row
            entries.sort(key=lambda e: (e[0], not e[3]))
            for a, f, ln, end in entries:
                if end:
                    addrs.append(a)
                    rows.append(("", 0))
                else:
                    addrs.append(a)
                    rows.append((f, ln))
        except Exception as exc:  # corrupt DWARF must not crash the analysis
            raise WcetError(f"malformed DWARF line information in {self.path}: {exc}") from None
        return addrs, rows

    def comp_dirs(self) -> list[str]:
        """The compilation directories of the DWARF units (where relative
        source names are)."""
        out: list[str] = []
        if self._has_dwarf:
            try:
                for cu in self._elf.get_dwarf_info().iter_CUs():
                    at = cu.get_top_DIE().attributes.get("DW_AT_comp_dir")
                    if at is not None:
                        v = at.value.decode(errors="replace") if isinstance(at.value, bytes) else str(at.value)
                        if v not in out:
                            out.append(v)
            except Exception as exc:  # corrupt DWARF must not crash the analysis
                raise WcetError(f"malformed DWARF information in {self.path}: {exc}") from None
        return out

    def line_of(self, addr: int) -> tuple[str, int] | None:
        addrs, rows = self._lines
        i = bisect.bisect_right(addrs, addr) - 1
        if i < 0 or not rows[i][0]:
            return None
        return rows[i]

    def addrs_of_line(self, file: str, line: int) -> list[int]:
        """Addresses of line-table rows for ``file:line`` (``file`` matched as a
        path suffix of the DWARF file name)."""
        key = (file, line)
        cache = self.__dict__.setdefault("_line_query_cache", {})
        if key in cache:
            return cache[key]
        by_line = self.__dict__.get("_by_line")
        if by_line is None:
            by_line = {}
            addrs, rows = self._lines
            for a, (f, ln) in zip(addrs, rows):
                if f:
                    by_line.setdefault(ln, []).append((f, a))
            self.__dict__["_by_line"] = by_line
        file = file.replace("\\", "/")
        out = [a for f, a in by_line.get(line, [])
               if f == file or f.endswith("/" + file) or os.path.basename(f) == file]
        cache[key] = out
        return out

    def source_of(self, addr: int) -> str:
        li = self.line_of(addr)
        if li is None:
            return "no line info"
        return f"{os.path.basename(li[0])}:{li[1]}"


def is_terminator(ins: Instr) -> bool:
    return ins.cls in (InstrClass.BRANCH, InstrClass.JAL, InstrClass.JALR, InstrClass.ECALL,
                       InstrClass.EBREAK, InstrClass.SRET, InstrClass.MRET, InstrClass.WFI,
                       InstrClass.ILLEGAL)
