"""`kairos wcet` command line: outputs, entry restrictions and error handling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kairos.cli import main

from wcet_helpers import build, needs_cc

pytestmark = needs_cc

SRC = r"""
volatile int sink;
int buf[16];

__attribute__((noinline)) void light(void) { sink = 1; }

__attribute__((noinline)) void heavy(void)
{
    for (int i = 0; i < 16; i++)
        buf[i] = sink * i;
}

__attribute__((noinline)) void dispatch(int which)
{
    if (which)
        heavy();
    else
        light();
}

__attribute__((noinline)) int strlen_(const char *s)
{
    int n = 0;
    while (*s++)
        n++;
    return n;
}

int main(void)
{
    dispatch(sink);
    return strlen_((const char *)buf);
}
"""


@pytest.fixture(scope="module")
def elf(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("cli"), "cli", SRC)


def _err_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_json_and_html_outputs(elf: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.json"
    html = tmp_path / "r.html"
    rc = main(["wcet", str(elf), "--entry", "dispatch", "--entry", "dispatch@light", "--model", "simple",
               "--json", str(out), "--html", str(html), "--quiet"])
    assert rc == 0
    data = json.loads(out.read_text())
    names = [e["name"] for e in data["entries"]]
    assert names == ["dispatch", "dispatch@light"]
    full, light = data["entries"]
    assert full["bound_cycles"] > light["bound_cycles"] > 0
    # the unrestricted worst path goes through heavy's loop, the restricted one through light
    fns = {s["function"] for s in full["worst_path"]}
    assert "heavy" in fns and "light" not in fns
    assert "light" in {s["function"] for s in light["worst_path"]}
    # path steps add up to the bound (simple model: no loop-entry penalties)
    assert sum(s["cycles_total"] for s in full["worst_path"]) == full["bound_cycles"]
    assert sum(full["per_function"].values()) == full["bound_cycles"]
    loops = full["loops"]
    assert len(loops) == 1 and loops[0]["function"] == "heavy" and loops[0]["bound"] == 16
    text = html.read_text()
    assert "heavy" in text and "<table>" in text and f"{full['bound_cycles']:,}" in text


def test_via_view_prunes_without_changing_the_bound(elf: Path) -> None:
    from kairos.wcet import driver, ipet
    from kairos.wcet.bounds import BoundAnalysis
    from kairos.wcet.cfg import build_program
    from kairos.wcet.elfimage import ElfImage
    img = ElfImage(str(elf))
    p = build_program(img, ["dispatch"])
    light = img.symbol("light").addr
    view = p.restricted("dispatch", [light])
    full_f, view_f = p.function("dispatch"), view.function("dispatch")
    assert len(view_f.blocks) < len(full_f.blocks)
    assert all(c == light for _, c in view_f.calls)          # heavy's call site is gone
    assert len(view.contexts("dispatch")) < len(p.contexts("dispatch"))
    ba = BoundAnalysis(p)
    via = [driver.via_constraint(p, ["light"])]
    on_full = ipet.solve(p, "dispatch", ba, ipet.simple_cost, extra_constraints=via).bound
    on_view = ipet.solve(view, "dispatch", ba, ipet.simple_cost, extra_constraints=via).bound
    assert on_full == on_view > 0


def test_avoid_restriction(elf: Path, tmp_path: Path) -> None:
    out = tmp_path / "avoid.json"
    assert main(["wcet", str(elf), "-e", "dispatch", "-e", "dispatch@!heavy", "-e", "dispatch@light",
                 "-m", "simple", "--json", str(out), "-q"]) == 0
    full, no_heavy, light = (e["bound_cycles"] for e in json.loads(out.read_text())["entries"])
    assert no_heavy == light < full


def test_restriction_excluding_every_path_names_the_entry(elf: Path, capsys) -> None:
    """``@light,!light`` leaves no path: the typed InfeasiblePath becomes one
    line naming the entry specification, exit status 2."""
    assert main(["wcet", str(elf), "-e", "dispatch@light,!light", "-m", "simple", "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kairos wcet: error: dispatch@light,!light: no feasible path")


def test_table_output(elf: Path, capsys) -> None:
    rc = main(["wcet", str(elf), "-e", "dispatch", "-m", "simple", "--path"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "WCET bounds" in out and "dispatch" in out and "worst-case path" in out


def test_default_model_runs(elf: Path, tmp_path: Path) -> None:
    pytest.importorskip("kairos.wcet.microarch")
    out = tmp_path / "u54.json"
    assert main(["wcet", str(elf), "-e", "dispatch", "--json", str(out), "-q"]) == 0
    simple = tmp_path / "s.json"
    assert main(["wcet", str(elf), "-e", "dispatch", "-m", "simple", "--json", str(simple), "-q"]) == 0
    u54 = json.loads(out.read_text())["entries"][0]["bound_cycles"]
    assert u54 > 0
    assert json.loads(out.read_text())["model"] == "u54"


def test_loop_listing(elf: Path, capsys) -> None:
    rc = main(["wcet", str(elf), "-e", "main", "-m", "simple", "--loops"])
    out = capsys.readouterr().out
    assert rc == 1                       # strlen_ has no bound
    lines = {ln.split("│")[1].strip(): ln for ln in out.splitlines() if ln.count("│") > 5}
    assert "UNBOUNDED" in lines["strlen_"] and "cli.c:" in lines["strlen_"]
    assert "16" in lines["heavy"].split("│")[5]


def test_unbounded_loop_reported(elf: Path, capsys) -> None:
    rc = main(["wcet", str(elf), "-e", "strlen_", "-m", "simple"])
    assert rc == 2
    line = _err_line(capsys)
    assert line.startswith("kairos wcet: error: loop at 0x")
    assert "in strlen_ (cli.c:" in line and "has no bound" in line


def test_unused_annotation_is_a_warning(elf: Path, tmp_path: Path) -> None:
    ann = tmp_path / "u.toml"
    ann.write_text("[[loop]]\naddress = 0x10\nmax = 2\n")
    out = tmp_path / "u.json"
    assert main(["wcet", str(elf), "-e", "dispatch", "-m", "simple", "-a", str(ann), "--json", str(out), "-q"]) == 0
    warnings = json.loads(out.read_text())["warnings"]
    assert any("matches no analysed loop" in w and "0x10" in w for w in warnings)


def test_annotation_fixes_unbounded_loop(elf: Path, tmp_path: Path, capsys) -> None:
    ann = tmp_path / "a.toml"
    ann.write_text('[[loop]]\nfunction = "strlen_"\nmax = 64\n')
    out = tmp_path / "a.json"
    assert main(["wcet", str(elf), "-e", "strlen_", "-m", "simple", "-a", str(ann), "--json", str(out), "-q"]) == 0
    e = json.loads(out.read_text())["entries"][0]
    assert e["loops"][0]["bound"] == 64 and "a.toml" in e["loops"][0]["bound_source"]


@pytest.mark.parametrize("content,needle", [
    ("[[loop]]\nmax = 3\n", "give 'address'"),
    ("[[loop]]\nfunction = \"x\"\n", "missing 'max'"),
    ("[[loop\n", "invalid TOML"),
    ("[[loop]]\nfunction = \"heavy\"\nmax = 0\n", "max must be >= 1"),
    ("bogus = 1\n", "unknown key"),
])
def test_bad_annotation_files(elf: Path, tmp_path: Path, capsys, content: str, needle: str) -> None:
    ann = tmp_path / "bad.toml"
    ann.write_text(content)
    rc = main(["wcet", str(elf), "-e", "dispatch", "-m", "simple", "-a", str(ann), "-q"])
    assert rc == 2
    line = _err_line(capsys)
    assert line.startswith("kairos wcet: error:") and needle in line


@pytest.mark.parametrize("argv,needle", [
    (["--entry", "no_such_symbol"], "symbol 'no_such_symbol' not found"),
    (["--entry", "dispatch@no_such"], "symbol 'no_such' not found"),
    (["--entry", "dispatch", "--model", "pentium"], "unknown processor model"),
])
def test_bad_arguments(elf: Path, capsys, argv: list[str], needle: str) -> None:
    rc = main(["wcet", str(elf), *argv, "-q"])
    assert rc == 2
    assert needle in _err_line(capsys)


def test_not_an_elf(tmp_path: Path, capsys) -> None:
    f = tmp_path / "junk.bin"
    f.write_bytes(b"\x7fELF" + bytes(60))
    assert main(["wcet", str(f), "-e", "x"]) == 2
    line = _err_line(capsys)
    assert line.startswith("kairos wcet: error:") and "junk.bin" in line


SHARED_SRC = r"""
volatile int sink;
__attribute__((noinline)) void leaf(int n) { for (int i = 0; i < 3; i++) sink = n + i; }
__attribute__((noinline)) void mid(int x) { leaf(x); if (sink) leaf(x + 1); leaf(x + 2); }
__attribute__((noinline)) void top(void) { for (int k = 0; k < 4; k++) { mid(k); if (sink > 3) mid(k + 9); } }
int main(void) { top(); mid(1); return 0; }
"""


def test_shared_contexts_keep_the_bound(tmp_path: Path) -> None:
    """With a context-free cost model, sharing the contexts of the most
    multiplied functions (balanced call/return flow in the ILP) must give the
    same bound as full virtual inlining, with fewer contexts."""
    from kairos.wcet import ipet
    from kairos.wcet.bounds import BoundAnalysis
    from kairos.wcet.cfg import build_program
    from kairos.wcet.elfimage import ElfImage
    elf_path = build(tmp_path, "shared", SHARED_SRC)
    full = build_program(ElfImage(str(elf_path)), ["main"])
    n_full = len(full.contexts("main"))
    r_full = ipet.solve(full, "main", BoundAnalysis(full), ipet.simple_cost)
    shared = build_program(ElfImage(str(elf_path)), ["main"])
    names = shared.limit_contexts("main", 4)
    assert names                                   # something was shared
    n_shared = len(shared.contexts("main"))
    assert n_shared < n_full
    assert sum(shared.context_counts("main").values()) == n_shared
    r_shared = ipet.solve(shared, "main", BoundAnalysis(shared), ipet.simple_cost)
    assert r_shared.bound == r_full.bound
    # the shared callee's blocks run as often in total as over all full contexts
    leaf = full.function("leaf").entry
    tot_full = sum(c for (ctx, b), c in r_full.counts.items() if b == leaf)
    tot_shared = sum(c for (ctx, b), c in r_shared.counts.items() if b == leaf)
    assert tot_full == tot_shared > 0


def test_shared_contexts_lose_as_few_as_needed(tmp_path: Path) -> None:
    """A program one context over the budget flattens the function whose
    flattening removes the fewest contexts while still fitting (the least
    precision lost), not the most multiplied one."""
    from kairos.wcet.cfg import build_program
    from kairos.wcet.elfimage import ElfImage
    elf_path = build(tmp_path, "shared", SHARED_SRC)

    def fresh():
        return build_program(ElfImage(str(elf_path)), ["main"])
    p = fresh()
    n_full = sum(p.context_counts("main").values())
    budget = n_full - 1
    names = p.limit_contexts("main", budget)
    assert len(names) == 1
    kept = sum(p.context_counts("main").values())
    assert kept <= budget
    # every other single function that would fit keeps no more contexts
    counts = fresh().context_counts("main")
    fits = []
    for fe, n in counts.items():
        q = fresh()
        if fe == q.function("main").entry or n < 2:
            continue
        q.flatten.add(fe)
        after = sum(q.context_counts("main").values())
        if after <= budget:
            fits.append((after, q.functions[fe].name))
    assert len(fits) >= 2, fits                    # a real choice
    assert len({a for a, _ in fits}) >= 2, fits    # and the choices differ
    assert kept == max(a for a, _ in fits), (names, fits)
    # a function to keep (the latency analysis's preemption points) is never shared
    q = fresh()
    other = q.limit_contexts("main", budget, keep={q.function(names[0]).entry})
    assert names[0] not in other and sum(q.context_counts("main").values()) <= budget


def test_documented_annotation_example_parses() -> None:
    import re
    from kairos.wcet import annotations
    doc = (Path(__file__).resolve().parents[2] / "docs" / "wcet.md").read_text()
    block = re.search(r"```toml\n(.*?)```", doc, re.S).group(1)
    ann = annotations.parse(block, "docs/wcet.md")
    assert len(ann.loops) == 3 and ann.noreturn == {"panic"} and ann.preemption == {"preemption_point"}
    assert [la.max for la in ann.loops] == [512, 16, 6] and ann.loops[1].context == ("handle_syscall",)


def test_stop_at_ends_the_path(elf: Path, tmp_path: Path) -> None:
    out = tmp_path / "stop.json"
    assert main(["wcet", str(elf), "-e", "dispatch", "-m", "simple", "--json", str(out), "-q"]) == 0
    full = json.loads(out.read_text())["entries"][0]
    assert main(["wcet", str(elf), "-e", "dispatch", "-m", "simple", "--stop-at", "heavy",
                 "--json", str(out), "-q"]) == 0
    stopped = json.loads(out.read_text())["entries"][0]
    assert "heavy" not in stopped["per_function"]
    assert 0 < stopped["bound_cycles"] < full["bound_cycles"]


STOP_SRC = r"""
volatile int sink;
int buf[64];

__attribute__((noinline)) void shared_(void) { sink = 2; }

__attribute__((noinline)) void report(int n)
{
    for (int i = 0; i < n; i++)
        buf[i & 63] = sink;
}

__attribute__((noinline, noreturn)) void panic_(int n)
{
    report(n);
    shared_();
    for (;;)
        sink = 3;
}

__attribute__((noinline)) int checked(int x)
{
    for (int i = 0; i < 8; i++) {
        if (buf[i] == x)
            panic_(x);
        shared_();
        buf[i] = x;
    }
    return 0;
}

int main(void) { return checked(sink); }
"""


def test_stop_functions_are_analysed_without_their_bodies(tmp_path: Path) -> None:
    """With --stop-at, the stop function is one path-ending block and the
    functions called only below it are not analysed (``report``'s loop has
    no bound: the run needs none); a function also called elsewhere stays.
    The bound is no larger than with the bodies (their lines no longer age
    the loop around the call), and equal without the cache model."""
    from kairos.wcet import driver
    from kairos.wcet.cfg import Term, build_program
    from kairos.wcet.elfimage import ElfImage
    elf = build(tmp_path, "stop", STOP_SRC)
    img = ElfImage(str(elf))
    prog = build_program(img, ["checked"])
    addr = {n: img.symbol(n).addr for n in ("report", "panic_", "shared_", "checked")}
    assert addr["report"] in prog.functions
    view = driver._without_stop_bodies(prog, [addr["panic_"]])
    assert addr["report"] not in view.functions and addr["shared_"] in view.functions
    stub = view.functions[addr["panic_"]]
    assert [b.kind for b in stub.blocks.values()] == [Term.HALT] and not stub.calls
    assert not list(view.callgraph.successors(addr["panic_"]))
    assert prog.functions[addr["panic_"]].calls        # the program itself is unchanged
    for model in ("u54", "simple"):
        got = [driver.run(str(elf), ["checked"], model, stop_at=["panic_"], prune_stops=p).results[0].bound
               for p in (True, False)]
        assert 0 < got[0] <= got[1] and (model == "u54" or got[0] == got[1]), (model, got)


POLL_SRC = r"""
volatile int sink;
int buf[64];

__attribute__((noinline)) void poll_(void) { sink = 1; }

__attribute__((noinline)) int work(int n)
{
    for (int i = 0; i < 16; i++) {
        buf[i] = n;
        poll_();
        if (sink == n)
            break;
    }
    return buf[3];
}

int main(void) { return work(sink); }
"""


def test_stop_at_a_call_inside_a_loop(tmp_path: Path, capsys) -> None:
    """A stop function called in a loop's body cuts every way to the loop's
    back edge and exit: the cache analysis must not transfer those blocks
    (their entry state is unreachable), where it used to stop with an
    internal error (a poll function as --stop-at on the kernel)."""
    elf = build(tmp_path, "poll", POLL_SRC)
    out = tmp_path / "poll.json"
    for model in ("u54", "simple"):
        assert main(["wcet", str(elf), "-e", "work", "-m", model, "--stop-at", "poll_",
                     "--json", str(out), "-q"]) == 0, capsys.readouterr().err
        stopped = json.loads(out.read_text())["entries"][0]
        assert main(["wcet", str(elf), "-e", "work", "-m", model, "--json", str(out), "-q"]) == 0
        full = json.loads(out.read_text())["entries"][0]
        assert 0 < stopped["bound_cycles"] < full["bound_cycles"], (model, stopped, full)


STOP_BELOW_STOP_SRC = """
volatile int sink;

__attribute__((noinline)) void report_(int v) { sink = v; }

__attribute__((noinline)) void panic_(int v)
{
    report_(v);
    for (;;)
        ;
}

__attribute__((noinline)) int work(int n)
{
    if (n < 0)
        panic_(n);
    return n + sink;
}

int main(void) { return work(sink); }
"""


def test_stop_at_a_function_called_only_below_another_stop(tmp_path: Path, capsys) -> None:
    """Two --stop-at functions, one called only from the other (the kernel's
    `--stop-at kernel_panic --stop-at kprintf`): the inner one is gone with
    the outer one's body, which used to stop with an internal error."""
    elf = build(tmp_path, "stops", STOP_BELOW_STOP_SRC)
    out = tmp_path / "stops.json"
    bounds = []
    for stops in (["panic_"], ["panic_", "report_"], ["report_", "panic_"]):
        args = ["wcet", str(elf), "-e", "work", "-m", "simple", "--json", str(out), "-q"]
        for s in stops:
            args += ["--stop-at", s]
        assert main(args) == 0, capsys.readouterr().err
        bounds.append(json.loads(out.read_text())["entries"][0]["bound_cycles"])
    assert bounds[0] > 0 and bounds[0] == bounds[1] == bounds[2], bounds


def test_quiet_run_prints_nothing(elf: Path, tmp_path: Path) -> None:
    """`-q` prints nothing on the standard output, in a fresh process, where
    the ILP solver's library announces itself when its first instance is
    made (HiGHS 1.16); `--json /dev/stdout` output is then one JSON document."""
    import subprocess
    import sys
    code = "import sys; from kairos.cli import main; sys.exit(main(sys.argv[1:]))"
    quiet = subprocess.run([sys.executable, "-c", code, "wcet", str(elf), "-e", "dispatch", "-q",
                            "--json", str(tmp_path / "q.json")], capture_output=True, text=True, timeout=300)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == ""
    doc = subprocess.run([sys.executable, "-c", code, "wcet", str(elf), "-e", "dispatch", "-q", "--json", "/dev/stdout"],
                         capture_output=True, text=True, timeout=300)
    assert doc.returncode == 0, doc.stderr
    assert json.loads(doc.stdout)["entries"][0]["bound_cycles"] > 0
