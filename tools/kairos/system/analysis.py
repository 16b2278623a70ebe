"""Response-time analysis of a system description (docs/analysis.md).

Fixed-priority preemptive scheduling of the active PDs, each a sporadic
server (budget C, period T); passive servers reached by ppcall run on the
caller's budget at their own priority (blocking as under the immediate
priority ceiling protocol); kernel overheads are the kernel's own WCET
bounds (`kairos wcet` on the kernel ELF, with loop bounds specialised to
the system); PD execution times are `kairos wcet` bounds of their entry
points or the WCETs the description declares.

All times here are microseconds; kernel and PD bounds in cycles are
converted with `cpu_mhz` cycles per microsecond.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kairos.system.model import ProtectionDomain, SystemDescription

# Kernel entries a PD can reach. A PD holds no untyped, CNode, TCB,
# SchedControl, IRQControl, page-table, frame or ASID capability (the loader
# gives none: docs/system-description.md), so the system-call paths through
# those decoders are infeasible for it; console output is left out too (a
# real-time configuration prints nothing), and so is the schedule trace's
# dump, which runs once, when the machine halts.
PD_UNREACHABLE = ("kprintf", "machine_putc", "trace_dump", "invoke_untyped", "invoke_cnode",
                  "invoke_tcb", "invoke_sched_control", "invoke_irq_control",
                  "invoke_page_table", "invoke_frame", "invoke_asid_control", "invoke_asid_pool",
                  "invoke_domain")
SYSCALL_ENTRY = "trap_entry@handle_syscall," + ",".join("!" + f for f in PD_UNREACHABLE)
EXCEPTION_ENTRY = "trap_entry@handle_exception,!kprintf,!machine_putc"
IRQ_ENTRY = "trap_entry@handle_interrupt,!kprintf"


def kernel_entries(has_symbol: Callable[[str], bool]) -> tuple[str, str, str]:
    """SYSCALL_ENTRY, EXCEPTION_ENTRY and IRQ_ENTRY with only the excluded
    functions this kernel has: the release kernel has no `trace_dump`, and
    the analyser rejects an entry that names a function it lacks."""
    def kept(spec: str) -> str:
        head, *excluded = spec.split(",")
        return ",".join([head, *(e for e in excluded if has_symbol(e[1:]))])
    return kept(SYSCALL_ENTRY), kept(EXCEPTION_ENTRY), kept(IRQ_ENTRY)


# Loops of kernel/wcet-annotations.toml whose bound is a system parameter:
# the number of threads (queue walks) or of refills per SC.


class AnalysisError(Exception):
    pass


@dataclass
class KernelCosts:
    """Kernel WCET bounds in cycles."""
    syscall: int
    exception: int
    interrupt: int
    interrupt_response: int
    source: str


def kernel_costs_from_json(path: Path) -> KernelCosts:
    """Read `kairos wcet --json` output for the kernel: the entries through
    handle_syscall, handle_exception, handle_interrupt and the
    interrupt-response bound."""
    try:
        data = json.loads(Path(path).read_text())
        found: dict[str, int] = {}
        for e in data["entries"]:
            for key in ("handle_syscall", "handle_exception", "handle_interrupt"):
                if e["via"] and key in e["via"] or key in e["name"]:
                    found[key] = max(found.get(key, 0), int(e["bound_cycles"]))
        ir = data.get("interrupt_response") or {}
        if set(found) != {"handle_syscall", "handle_exception", "handle_interrupt"} or "bound_cycles" not in ir:
            raise AnalysisError(f"{path}: needs the kernel's syscall, exception and interrupt entries and the "
                                f"interrupt-response bound (kairos wcet ... --irq-entry)")
        return KernelCosts(found["handle_syscall"], found["handle_exception"], found["handle_interrupt"],
                           int(ir["bound_cycles"]), str(path))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise AnalysisError(f"{path}: not a kairos wcet JSON report ({e})") from None


#: CNode levels one lookup walks in a described system: every CSpace the
#: loader makes is one CNode whose guard and radix take all 64 bits, and no
#: PD holds a CNode capability (docs/system-description.md), so no lookup
#: goes on to a second level.
SYSTEM_DECODE_DEPTH = 1


def system_annotations(base: str, threads: int, refills: int) -> str:
    """kernel/wcet-annotations.toml with its system parameters (the threads
    on one wait queue, the refills of one scheduling context, the CNode
    levels of one lookup, the threads in the release queue: at most one per
    scheduling context, and the system has one per PD and the loader's) set
    to this system's figures: the loop bounds are
    written in terms of them (docs/wcet.md "Annotation format"). A figure
    above the file's default (the limit the kernel enforces) is not used."""
    def set_default(text: str, name: str, value: int) -> str:
        pattern = rf"^({name} = {{ default = )(\d+)"
        m = re.search(pattern, text, flags=re.M)
        if m is None:
            return text
        return re.sub(pattern, lambda g: f"{g.group(1)}{min(value, int(g.group(2)))}", text, count=1,
                      flags=re.M)
    text = set_default(base, "queue_length", threads)
    text = set_default(text, "release_queue_length", threads)
    text = set_default(text, "decode_depth", SYSTEM_DECODE_DEPTH)
    return set_default(text, "refills_per_sc", refills)


def system_parameters(system: SystemDescription) -> tuple[int, int]:
    """Threads (the PDs and the loader) and the most refills any SC has."""
    return len(system.pds) + 1, 2 + max(p.extra_refills for p in system.pds)


def latency_inputs(system_path: str, search_path: list[str], kernel_elf: str) -> tuple[dict[str, int], list[str],
                                                                                      list[str]]:
    """What `kairos latency --system` instantiates for a described system
    (docs/wcet.md "Interrupt latency" -> "A described system"): the system
    parameters (threads on one wait queue: the PDs and the loader; refills
    per SC: the most any PD's SC has; CNode levels per lookup:
    ``SYSTEM_DECODE_DEPTH``; threads in the release queue: one per
    scheduling context, the PDs' and the loader's, since no PD can make
    one), the kernel functions
    no PD can reach (``PD_UNREACHABLE`` that this kernel has) and notes for
    the report.  A bad description is a WcetError (one line, exit 2)."""
    from kairos.system.parse import DescriptionError, parse_system
    from kairos.wcet.elfimage import ElfImage
    from kairos.wcet.errors import WcetError

    try:
        system = parse_system(system_path, [Path(p) for p in search_path])
    except DescriptionError as e:
        raise WcetError(str(e)) from None
    threads, refills = system_parameters(system)
    image = ElfImage(kernel_elf)
    present = [n for n in PD_UNREACHABLE if image.has_symbol(n)]
    params = {"queue_length": threads, "refills_per_sc": refills, "decode_depth": SYSTEM_DECODE_DEPTH,
              "release_queue_length": threads}
    notes = [f"system {system_path}: {len(system.pds)} PDs + the loader; " +
             ", ".join(f"{k}={v}" for k, v in params.items()) +
             "; the paths through " + ", ".join(present) + " excluded (no PD holds a capability that reaches "
             "them, and the loader, after the PDs' init, only waits for faults)"]
    return params, present, notes


def kernel_costs_key(kernel: bytes, annotations: str, model: str, analyser: str) -> str:
    """Name of the cached kernel figures: the kernel's bytes, the system's
    annotation text, the entries, the model and the analyser's identity."""
    return hashlib.sha256(kernel + annotations.encode() + SYSCALL_ENTRY.encode() + model.encode()
                          + analyser.encode()).hexdigest()[:16]


def kernel_costs_for(system: SystemDescription, kernel_elf: Path, annotations: Path, cache_dir: Path,
                     model: str = "simple") -> KernelCosts:
    """Run the WCET analysis of the kernel with this system's loop bounds;
    cached by kernel, annotations, entries, model and the analyser's own
    code (``analyser_fingerprint``: a changed analysis computes again)."""
    from kairos.wcet import annotations as annmod
    from kairos.wcet import driver, report
    from kairos.wcet.elfimage import ElfImage
    from kairos.wcet.errors import WcetError
    from kairos.wcet.version import analyser_fingerprint

    threads, refills = system_parameters(system)
    text = system_annotations(annotations.read_text(), threads, refills)
    key = kernel_costs_key(kernel_elf.read_bytes(), text, model, analyser_fingerprint())
    cache_dir.mkdir(parents=True, exist_ok=True)
    out = cache_dir / f"kernel-wcet-{key}.json"
    if not out.is_file():
        ann_file = cache_dir / f"annotations-{key}.toml"
        ann_file.write_text(text)
        try:
            syscall, exception, irq = kernel_entries(ElfImage(str(kernel_elf)).has_symbol)
            an = driver.run(str(kernel_elf), [syscall, exception], model, annmod.load(str(ann_file)),
                            None, ["kernel_panic"], irq)
        except WcetError as e:
            raise AnalysisError(f"kernel WCET analysis failed: {e}") from None
        tmp = out.with_suffix(".tmp")
        report.write_json(an, str(tmp))
        tmp.replace(out)
    return kernel_costs_from_json(out)


def pd_entry_wcet(pd: ProtectionDomain, entry: str, model: str = "simple") -> int | None:
    """`kairos wcet` bound (cycles) of one entry point of a PD's program, or
    None if the analyser cannot bound it (an endless loop, a loop without a
    bound) or the program has no such symbol.  Under a model with an ITIM a
    PD's code runs from the I-cache the ITIM leaves: the ITIM holds the
    kernel's code (kernel/arch/riscv/itim.ld)."""
    from kairos.wcet import driver
    from kairos.wcet.errors import WcetError
    try:
        an = driver.run(str(pd.image), [entry], model, itim_code=False)
    except WcetError:
        return None
    return int(an.results[0].result.bound)


@dataclass
class PdResult:
    name: str
    kind: str                    # "active" or "passive"
    priority: int
    criticality: int
    budget: int
    period: int
    deadline: int
    job_entry: str
    wcet_us: float | None        # the job entry's own WCET
    wcet_source: str             # "declared", "kairos wcet", "budget" (none known)
    server_us: float = 0.0       # passive servers' work per job (charged to this PD)
    kernel_us: float = 0.0       # kernel entries per job (charged to this PD)
    demand_us: float = 0.0       # C: what one job needs from its budget
    blocking_us: float = 0.0     # B
    response_us: float | None = None
    slack_us: float | None = None
    utilisation: float = 0.0     # budget / period (reserved)
    demand_utilisation: float = 0.0
    sensitivity_us: int | None = None
    verdict: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass
class Analysis:
    system: str
    cpu_mhz: float
    kernel: dict
    pds: list[PdResult]
    schedulable: bool
    total_utilisation: float
    missing: list[str]


def job_entry(system: SystemDescription, pd: ProtectionDomain) -> str:
    """The entry point one job runs: the one with a declared WCET (notified
    first), else `notified` for a PD woken by channels or interrupts, else
    `init` (a PD whose work is a loop in init: periodic by Yield, or
    spinning)."""
    if "notified" in pd.wcets:
        return "notified"
    if "init" in pd.wcets:
        return "init"
    woken = bool(pd.irqs) or any(pd.name in (c.a.pd, c.b.pd) for c in system.channels)
    return "notified" if woken else "init"


class Analyser:
    def __init__(self, system: SystemDescription, kernel: KernelCosts, cpu_mhz: float, use_wcet_tool: bool = True,
                 model: str = "simple"):
        self.s = system
        self.model = model
        self.k = kernel
        self.mhz = cpu_mhz
        self.use_tool = use_wcet_tool
        self.k_sys = kernel.syscall / cpu_mhz
        self.k_exc = kernel.exception / cpu_mhz
        self.k_irq = kernel.interrupt / cpu_mhz
        self.k_resp = kernel.interrupt_response / cpu_mhz
        self.k_entry = max(self.k_sys, self.k_exc, self.k_irq)

    def entry_wcet(self, pd: ProtectionDomain, entry: str) -> tuple[float | None, str]:
        if entry in pd.wcets:
            return pd.wcets[entry].time, "declared"
        # init may never return (a PD whose work is a loop in init): only the
        # entry points the runtime needs to return are given to kairos wcet.
        if self.use_tool and entry != "init":
            cycles = pd_entry_wcet(pd, entry, self.model)
            if cycles is not None:
                return cycles / self.mhz, "kairos wcet"
        return None, "budget"

    def callees(self, pd: ProtectionDomain) -> list[str]:
        out = []
        for c in self.s.channels:
            for me, peer in ((c.a, c.b), (c.b, c.a)):
                if me.pd == pd.name and me.pp:
                    out.append(peer.pd)
        return out

    def callers(self, server: str) -> list[str]:
        out = []
        for c in self.s.channels:
            for me, peer in ((c.a, c.b), (c.b, c.a)):
                if peer.pd == server and me.pp:
                    out.append(me.pd)
        return out

    def prepare(self) -> tuple[list[PdResult], list[str]]:
        missing: list[str] = []
        self.server_wcet: dict[str, float] = {}
        self.lp_interrupts: dict[str, int] = {}
        for p in self.s.pds:
            if self.callers(p.name):
                w, src = self.entry_wcet(p, "protected")
                if w is None:
                    missing.append(f"{p.name}: no WCET for protected (declare <wcet entry=\"protected\">)")
                    w = float("inf")
                self.server_wcet[p.name] = w
        results = []
        for p in self.s.pds:
            if p.passive:
                r = PdResult(p.name, "passive", p.priority, p.criticality, p.budget, p.period, p.deadline,
                             "protected", self.server_wcet.get(p.name), "declared" if "protected" in p.wcets
                             else "kairos wcet", verdict="passive")
                r.notes.append("runs on its callers' budgets; its work is in their demand")
                results.append(r)
                continue
            entry = job_entry(self.s, p)
            w, src = self.entry_wcet(p, entry)
            r = PdResult(p.name, "active", p.priority, p.criticality, p.budget, p.period, p.deadline, entry, w, src)
            calls = self.callees(p)
            r.server_us = sum(self.server_wcet[c] for c in calls)
            # Kernel entries per job: the release (an interrupt), the receive
            # or yield that ends the job, a Signal per channel end, a Call and
            # the server's ReplyRecv per ppcall, and the budget-exhaustion
            # interrupt.
            ends = sum(1 for c in self.s.channels for e in (c.a, c.b) if e.pd == p.name)
            r.kernel_us = 2 * self.k_irq + (1 + ends + 2 * len(calls)) * self.k_sys
            r.utilisation = p.budget / p.period
            self.lp_interrupts[p.name] = (1 if p.budget < p.period else 0) + len(p.irqs)
            results.append(r)
        return results, missing

    def response(self, r: PdResult, active: list[PdResult], budgets: dict[str, float]) -> float | None:
        """Worst-case response time of r, or None if it exceeds the deadline."""
        hp = [j for j in active if j is not r and j.priority >= r.priority]
        lp = [j for j in active if j.priority < r.priority]
        c = r.demand_us
        r_now = r.blocking_us + c
        for _ in range(10000):
            interference = sum(math.ceil(r_now / j.period) * (budgets[j.name] + self.k_entry) for j in hp)
            # Interrupts of lower-priority PDs preempt r at interrupt priority:
            # the timer releasing a sporadic PD from the release queue (a
            # round-robin one never waits there) and its device interrupts.
            interrupts = sum(math.ceil(r_now / j.period) * self.lp_interrupts[j.name] * self.k_irq for j in lp)
            nxt = r.blocking_us + c + interference + interrupts
            if nxt > r.deadline:
                return None
            if nxt <= r_now:
                return nxt
            r_now = nxt
        return None

    def blocking(self, r: PdResult) -> float:
        """One non-preemptible kernel path (the interrupt-response bound) and
        one passive server with a priority at or above r's (its ceiling)
        serving a caller below r: the immediate priority ceiling protocol."""
        server = 0.0
        for s, w in self.server_wcet.items():
            sp = self.s.pd(s)
            if sp.priority >= r.priority and any(self.s.pd(c).priority < r.priority for c in self.callers(s)):
                server = max(server, w + 2 * self.k_sys)
        return self.k_resp + server

    def schedule(self, results: list[PdResult], budgets: dict[str, float]) -> bool:
        active = [r for r in results if r.kind == "active"]
        ok = True
        for r in active:
            if r.wcet_us is None:
                r.demand_us = budgets[r.name]
            else:
                r.demand_us = r.wcet_us + r.server_us + r.kernel_us
            r.blocking_us = self.blocking(r)
            if r.demand_us > budgets[r.name]:
                r.response_us, r.slack_us = None, None
                r.verdict = "MISS: demand exceeds budget"
                ok = False
                continue
            rt = self.response(r, active, budgets)
            r.response_us = rt
            r.slack_us = None if rt is None else r.deadline - rt
            r.verdict = "ok" if rt is not None else "MISS: response exceeds deadline"
            ok = ok and rt is not None
        return ok

    def run(self) -> Analysis:
        results, missing = self.prepare()
        budgets = {p.name: float(p.budget) for p in self.s.pds}
        ok = self.schedule(results, budgets)
        active = [r for r in results if r.kind == "active"]
        for r in active:
            r.demand_utilisation = r.demand_us / r.period
            if r.wcet_us is None:
                r.notes.append("no WCET for its job: analysed as using its whole budget")
        # Sensitivity: how far each budget can grow (whole µs, up to its
        # period) with every PD still meeting its deadline.
        for r in active:
            if not ok:
                r.sensitivity_us = None
                continue
            lo, hi = 0, r.period - r.budget
            while lo < hi:
                mid = (lo + hi + 1) // 2
                trial = dict(budgets)
                trial[r.name] = r.budget + mid
                if self.schedule(results, trial):
                    lo = mid
                else:
                    hi = mid - 1
            r.sensitivity_us = lo
        self.schedule(results, budgets)   # the figures for the budgets as described
        kernel = {"syscall_us": self.k_sys, "exception_us": self.k_exc, "interrupt_us": self.k_irq,
                  "interrupt_response_us": self.k_resp, "source": self.k.source}
        total = sum(r.utilisation for r in active)
        return Analysis(str(self.s.path), self.mhz, kernel, results, ok and not missing, total, missing)


def analysis_json(a: Analysis) -> dict:
    return asdict(a)
