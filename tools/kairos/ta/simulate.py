"""The deterministic execution of a network that generated code follows
(tatoc.py), written directly over the model: the reference the generated C is
tested against, and `kairos ta simulate`.

One instant: let one time unit pass (refused if a process is in an urgent or
committed location or an invariant would break), then fire steps until none
is enabled, each time the first possible one: processes in declaration order,
edges in file order, partners in declaration order; committed locations
first as in UPPAAL; broadcast receivers chosen before any update, sender's
updates first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kairos.ta.expr import Binary, Cond, Expr, Index, Name, Num, Unary, Update
from kairos.ta.model import FlatEdge, FlatNetwork


class SimulationError(Exception):
    """The model cannot go on: the same conditions as the generated code's
    ta_status errors (range, division by zero, timelock, zeno)."""


@dataclass
class State:
    loc: list[int]
    vals: dict[str, list[int]] = field(default_factory=dict)  # every variable as a list

    def snapshot(self) -> tuple:
        return tuple(self.loc) + tuple(x for k in sorted(self.vals) for x in self.vals[k])


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class Simulator:
    def __init__(self, net: FlatNetwork, max_steps: int = 64):
        self.net = net
        self.max_steps = max_steps
        self.state = State([i.init for i in net.instances],
                           {n: list(v.init) if v.kind == "int" else [0] * (v.size or 1)
                            for n, v in net.vars.items() if not v.kind.endswith("chan")})
        self.out: dict[tuple[int, int], list[FlatEdge]] = {}
        for e in net.edges:
            self.out.setdefault((e.instance, e.source), []).append(e)

    # ---- expressions ----
    def eval(self, e: Expr | None) -> int:
        if e is None:
            return 1
        match e:
            case Num(v):
                return v
            case Name(n):
                return self.state.vals[n][0]
            case Index(Name(n), i):
                idx = self.eval(i)
                arr = self.state.vals[n]
                if not 0 <= idx < len(arr):
                    raise SimulationError(f"index {idx} outside {n}[{len(arr)}]")
                return arr[idx]
            case Unary("-", a):
                return -self.eval(a)
            case Unary("!", a):
                return int(not self.eval(a))
            case Binary("&&", a, b):
                return int(bool(self.eval(a)) and bool(self.eval(b)))
            case Binary("||", a, b):
                return int(bool(self.eval(a)) or bool(self.eval(b)))
            case Binary("->", a, b):
                return int((not self.eval(a)) or bool(self.eval(b)))
            case Binary(op, a, b):
                x, y = self.eval(a), self.eval(b)
                if op in ("/", "%"):
                    if y == 0:
                        raise SimulationError("division by zero")
                    q = _trunc_div(x, y)
                    return q if op == "/" else x - q * y
                return {"+": x + y, "-": x - y, "*": x * y, "<": int(x < y), "<=": int(x <= y),
                        "==": int(x == y), "!=": int(x != y), ">=": int(x >= y), ">": int(x > y)}[op]
            case Cond(t, a, b):
                return self.eval(a) if self.eval(t) else self.eval(b)
        raise SimulationError(f"cannot evaluate {e}")

    def assign(self, u: Update) -> None:
        if isinstance(u.target, Index):
            name, idx = u.target.array.ident, self.eval(u.target.index)  # type: ignore[union-attr]
        else:
            name, idx = u.target.ident, 0  # type: ignore[union-attr]
        v = self.net.vars[name]
        arr = self.state.vals[name]
        if not 0 <= idx < len(arr):
            raise SimulationError(f"index {idx} outside {name}[{len(arr)}]")
        value = self.eval(u.value)
        if u.op != "=":
            value = arr[idx] + value if u.op == "+=" else arr[idx] - value
        if v.kind == "int" and not v.lo <= value <= v.hi:
            raise SimulationError(f"{name} would become {value}, outside [{v.lo},{v.hi}]")
        arr[idx] = value

    # ---- steps ----
    def _committed(self, p: int) -> bool:
        return self.net.instances[p].locations[self.state.loc[p]].committed

    def _receiver(self, q: int, chan: str) -> FlatEdge | None:
        for e in self.out.get((q, self.state.loc[q]), []):
            if e.sync == (chan, "?") and self.eval(e.guard):
                return e
        return None

    def _fire(self, edges: list[FlatEdge]) -> None:
        for e in edges:
            for u in e.updates:
                self.assign(u)
        for e in edges:
            self.state.loc[e.instance] = e.target

    def step(self) -> list[FlatEdge] | None:
        """Fire the first possible step; the edges that moved, or None."""
        n = len(self.net.instances)
        any_c = any(self._committed(p) for p in range(n))
        for p in range(n):
            for e in self.out.get((p, self.state.loc[p]), []):
                if (e.sync and e.sync[1] == "?") or not self.eval(e.guard):
                    continue
                if e.sync is None:
                    if any_c and not self._committed(p):
                        continue
                    self._fire([e])
                    return [e]
                chan = e.sync[0]
                if self.net.vars[chan.split("[")[0]].kind == "chan":
                    for q in range(n):
                        r = self._receiver(q, chan) if q != p else None
                        if r is None or (any_c and not self._committed(p) and not self._committed(q)):
                            continue
                        self._fire([e, r])
                        return [e, r]
                    continue
                rx = [self._receiver(q, chan) if q != p else None for q in range(n)]
                if any_c and not self._committed(p) and not any(
                        r is not None and self._committed(q) for q, r in enumerate(rx)):
                    continue
                moved = [e] + [r for r in rx if r is not None]
                self._fire(moved)
                return moved
        return None

    def settle(self) -> int:
        for n in range(self.max_steps):
            if self.step() is None:
                return n
        raise SimulationError(f"more than {self.max_steps} steps in one instant (zeno)")

    def tick(self) -> None:
        net = self.net
        for p, inst in enumerate(net.instances):
            loc = inst.locations[self.state.loc[p]]
            if loc.committed or loc.urgent:
                raise SimulationError(f"time cannot pass: {inst.name} is in {loc.name}")
        saved = {n: list(v) for n, v in self.state.vals.items()}
        for n, v in net.vars.items():
            if v.kind == "clock":
                cap = net.clock_max.get(n, 0) + 1
                self.state.vals[n][0] = min(self.state.vals[n][0] + 1, cap)
        for p, inst in enumerate(net.instances):
            if not self.eval(inst.invariants[self.state.loc[p]]):
                self.state.vals = saved
                raise SimulationError(f"timelock: {inst.name}'s invariant stops time and no edge is enabled")
        self.settle()
