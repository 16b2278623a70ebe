"""Kernel trace capture by single-stepping QEMU through its gdb stub.

QEMU's ``-d exec,nochain`` log gives program counters only, and Debian's
QEMU ships no TCG-plugin header, so the data addresses of a kernel path are
obtained here: QEMU runs the real system (kernel + root task) with
``-gdb tcp:…``, a hardware breakpoint stops it at the kernel's trap entry,
and each kernel instruction is then single-stepped (interrupts stay masked
while stepping, QEMU's default) with the register file read before every
step.  The data address of a load/store/AMO is ``x[rs1] + imm`` evaluated
on those registers, i.e. exactly the address the real instruction used
(MMIO included, with its real side effects, because the real system runs).
A run ends at ``sret``/``mret`` (or ``wfi``, where the kernel idles).

The traces replay through ``sim`` with the kernel ELF as instruction image.

Only the GDB remote-protocol packets needed are implemented (no-ack mode,
``?``, ``g``, ``s``, ``c``, ``Z1``/``z1``, ``k``).
"""

from __future__ import annotations

import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from kairos.wcet.emulator import Trace
from kairos.wcet.errors import WcetError
from kairos.wcet.isa import InstrClass
from kairos.wcet.pipeline import MEM_CLASSES

__all__ = ["GdbClient", "KernelRun", "capture_kernel_runs"]

_MASK = (1 << 64) - 1


class GdbClient:
    """Minimal GDB remote-serial-protocol client."""

    def __init__(self, host: str, port: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                self.sock = socket.create_connection((host, port), timeout=timeout)
                break
            except OSError as e:
                last = e
                time.sleep(0.05)
        else:
            raise WcetError(f"cannot connect to the gdb stub at {host}:{port} ({last})")
        self.sock.settimeout(timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.ack = True
        self.pending_ack = b""
        if self.command("QStartNoAckMode") == "OK":
            self.ack = False

    def _send(self, data: str) -> None:
        cs = sum(data.encode()) & 0xFF
        # The acknowledgement of the previous reply travels with the next packet.
        self.sock.sendall(self.pending_ack + f"${data}#{cs:02x}".encode())
        self.pending_ack = b""

    def _recv(self) -> str:
        while True:
            start = self.buf.find(b"$")
            if start >= 0:
                end = self.buf.find(b"#", start)
                if end >= 0 and len(self.buf) >= end + 3:
                    pkt = self.buf[start + 1:end].decode(errors="replace")
                    self.buf = self.buf[end + 3:]
                    if self.ack:
                        self.pending_ack = b"+"
                    return pkt
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                raise WcetError("gdb stub did not answer (timeout)") from None
            if not chunk:
                raise WcetError("gdb stub closed the connection (QEMU exited?)")
            self.buf += chunk

    def command(self, data: str) -> str:
        self._send(data)
        return self._recv()

    def registers(self) -> list[int]:
        """x0..x31 and pc."""
        hexs = self.command("g")
        if len(hexs) < 33 * 16 or hexs.startswith("E"):
            raise WcetError(f"gdb stub returned no register file ({hexs[:20]!r})")
        return [int.from_bytes(bytes.fromhex(hexs[i * 16:(i + 1) * 16]), "little") for i in range(33)]

    def step(self) -> str:
        return self.command("s")

    def cont(self, timeout: float | None = None) -> str | None:
        """Continue; None if the target did not stop within ``timeout``."""
        if timeout is None:
            return self.command("c")
        old = self.sock.gettimeout()
        self.sock.settimeout(timeout)
        try:
            return self.command("c")
        except WcetError:
            return None
        finally:
            self.sock.settimeout(old)

    def set_hw_breakpoint(self, addr: int) -> None:
        r = self.command(f"Z1,{addr:x},2")
        if r != "OK":
            r = self.command(f"Z0,{addr:x},2")
            if r != "OK":
                raise WcetError(f"gdb stub refused a breakpoint at {addr:#x} ({r!r})")

    def kill(self) -> None:
        try:
            self._send("k")
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass


@dataclass
class KernelRun:
    trace: Trace
    handlers: list[str] = field(default_factory=list)   # handler symbols the path went through


# Instructions whose next pc may equal their own.
_SELF_TARGETING = (InstrClass.BRANCH, InstrClass.JAL, InstrClass.JALR)
# Consecutive steps that may retire nothing before the capture gives up.
_MAX_STALLS = 100


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _record_run(gdb: "GdbClient", dec, handler_addrs: dict[int, str], entry: str,
                max_steps: int) -> KernelRun | None:
    """Single-step one kernel run from ``entry`` to its sret/mret/wfi; None
    if it is longer than ``max_steps`` instructions."""
    trace = Trace(entry=entry)
    hs: list[str] = []
    stalls = 0
    ins = None
    for _ in range(max_steps):
        regs = gdb.registers()
        pc = regs[32]
        if ins is not None and pc == trace.pcs[-1] and ins.cls not in _SELF_TARGETING:
            # The stub reported a step that retired nothing (seen on a
            # loaded host: QEMU's vCPU left its step early).  Only a jump or
            # branch can lead back to its own address.
            stalls += 1
            if stalls > _MAX_STALLS:
                raise WcetError(f"gdb stub: {stalls} steps at {pc:#x} retired nothing")
            gdb.step()
            continue
        ins = dec(pc)
        if pc in handler_addrs:
            hs.append(handler_addrs[pc])
        daddr, width = -1, 0
        if ins.cls in MEM_CLASSES:
            base = regs[ins.rs1] if ins.rs1 else 0
            imm = ins.imm if ins.cls not in (InstrClass.AMO, InstrClass.LR, InstrClass.SC) else 0
            daddr, width = (base + imm) & _MASK, ins.mem_width
        trace.append(pc, daddr, width)
        if ins.cls in (InstrClass.SRET, InstrClass.MRET, InstrClass.WFI):
            trace.stop = ins.mnemonic
            return KernelRun(trace, hs)
        gdb.step()
    return None


def capture_kernel_runs(kernel: str | Path, roottask: str | Path | None, entry: str = "trap_entry",
                        count: int = 20, skip: int = 0, max_steps: int = 200_000,
                        handlers: tuple[str, ...] = ("handle_syscall", "handle_exception",
                                                     "handle_interrupt"),
                        memory: str = "512M", timeout: float = 120.0,
                        idle_timeout: float = 5.0, serial_log: str | Path | None = None,
                        icount: bool = False, skip_long: bool = False) -> list[KernelRun]:
    """Boot ``kernel`` with ``roottask`` in QEMU and record ``count`` kernel
    runs (after skipping ``skip``) from ``entry`` to the next sret/mret/wfi.
    Capture also ends when the system stays idle (no kernel entry) for
    ``idle_timeout`` seconds, or after ``timeout`` seconds in all.  With
    ``icount`` virtual time follows the instructions run, so the slow
    single-stepping does not make every timer interrupt fall due at once.
    With ``skip_long`` a run longer than ``max_steps`` is left unrecorded
    (and counted in ``capture_kernel_runs.skipped``) instead of an error."""
    from kairos.runner import RunError, qemu_command
    from kairos.wcet.emulator import load_elf
    from kairos.wcet.sim import Decoder

    prog = load_elf(kernel)
    if entry not in prog.symbols:
        raise WcetError(f"no symbol {entry!r} in {kernel}")
    dec = Decoder(prog.memory)
    handler_addrs = {prog.symbols[h][0]: h for h in handlers if h in prog.symbols}
    if roottask is not None and not Path(roottask).is_file():
        raise WcetError(f"root task {roottask} does not exist")
    port = _free_port()
    try:
        cmd = qemu_command(Path(kernel), Path(roottask) if roottask else None, memory, icount=icount,
                           extra=["-gdb", f"tcp:127.0.0.1:{port}", "-S"])
    except RunError as e:
        raise WcetError(str(e)) from None
    import tempfile
    if serial_log is None:
        serial = tempfile.NamedTemporaryFile(prefix="kairos-trace-serial-", suffix=".log", delete=False)
        serial.close()
        serial_name, keep = serial.name, False
    else:
        serial_name, keep = str(serial_log), True
    if "-serial" in cmd:
        # A file backend: the console must accept output while single-stepping.
        cmd[cmd.index("-serial") + 1] = f"file:{serial_name}"
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    runs: list[KernelRun] = []
    deadline = time.monotonic() + timeout
    gdb = None
    try:
        gdb = GdbClient("127.0.0.1", port)
        gdb.set_hw_breakpoint(prog.symbols[entry][0])
        seen = 0
        skipped = 0
        while len(runs) < count:
            if time.monotonic() > deadline:
                break
            reply = gdb.cont(idle_timeout)
            if reply is None or not reply.startswith(("T", "S")):
                break  # idle for good, or QEMU exited
            seen += 1
            if seen <= skip:
                continue
            run = _record_run(gdb, dec, handler_addrs, entry, max_steps)
            if run is None:
                if not skip_long:
                    raise WcetError(f"kernel run did not reach sret within {max_steps} instructions")
                skipped += 1
                continue
            runs.append(run)
    finally:
        if gdb is not None:
            gdb.kill()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if not keep:
            Path(serial_name).unlink(missing_ok=True)
    capture_kernel_runs.skipped = skipped if gdb is not None else 0
    return runs


def path_bounds(kernel: str | Path, runs: list[KernelRun], model, entry: str = "trap_entry",
                context_budget: int = 20000) -> list[int]:
    """The analysis' bound of each captured run's own path: block costs of
    ``microarch`` (on ``entry``, all handlers) summed along the path, plus
    first-miss penalties per loop entry.  Needs no loop bounds, so it checks
    the micro-architectural analysis on real kernel paths even when the
    kernel's loop annotations are incomplete."""
    from kairos.wcet import microarch
    from kairos.wcet.cfg import build_program
    from kairos.wcet.elfimage import ElfImage
    from kairos.wcet.trace import block_path, path_bound
    from kairos.wcet.valueanalysis import ValueInfo

    prog = build_program(ElfImage(str(kernel)), [entry])
    if context_budget:
        prog.limit_contexts(entry, context_budget)
    costs = microarch.analyse(prog, entry, model, ValueInfo(prog))
    return [path_bound(block_path(prog, entry, r.trace), costs) for r in runs]
