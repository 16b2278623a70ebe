"""A heap's sift loop under a system limit on the heap's size
(`heap_depth(n, arity)` in an annotation's bound, `limit = true`; its
bad calls are among test_annotation_params.py's bad expressions): the
release queue's case (kernel/wcet-annotations.toml `release_queue_length`).
The loop's own bound is the levels of the largest heap the code allows; a
system with fewer entries states its count and gets the levels of that."""

from __future__ import annotations

from pathlib import Path

import pytest

from kairos.wcet.annotations import evaluate, heap_depth, parse
from wcet_helpers import build, needs_cc

HEAP = """
#define ARITY 4
#define LEVELS 4
#define MAX 256
unsigned long heap[MAX];
unsigned long count, slot, key;

unsigned long rise(unsigned long i, unsigned long k)
{
    for (unsigned level = 0; level < LEVELS && i > 0; level++) {   /* RISE */
        unsigned long parent = (i - 1) / ARITY;
        if (heap[parent] <= k)
            break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = k;
    return i;
}

int main(void)
{
    return (int)rise(slot < count ? slot : 0, key);
}
"""
LINE = next(n for n, text in enumerate(HEAP.splitlines(), 1) if "/* RISE */" in text)
ANN = f"""
[parameters]
entries = {{ default = 256 }}
arity = {{ default = 4, fixed = true }}

[[loop]]
line = "heap.c:{LINE}"
max = "heap_depth(entries, arity) + 1"
limit = true
"""


def test_heap_depth_is_the_level_of_the_last_entry() -> None:
    # a 4-ary heap: level 0 holds entry 0, level 1 entries 1-4, level 2 5-20, ...
    assert [heap_depth(n, 4) for n in (0, 1, 2, 5, 6, 21, 22, 85, 86, 256, 341, 342)] == \
        [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 5]
    assert [heap_depth(n, 2) for n in (1, 2, 3, 4, 7, 8)] == [0, 1, 1, 2, 2, 3]
    assert evaluate("heap_depth(q, 4) + 1", {"q": 256}, "x") == 5


@pytest.fixture(scope="module")
def elf(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("heap"), "heap", c_src=HEAP)


@needs_cc
def test_a_smaller_heap_gets_the_levels_of_its_size(elf: Path) -> None:
    from kairos.wcet import driver
    from kairos.wcet.emulator import load_elf, run_entry
    rows = {}
    bounds = {}
    for n in (256, 21, 4):
        ann = parse(ANN, "heap.toml", {"entries": n})
        row, = [r for r in driver.list_loops(str(elf), ["main"], ann) if r.function == "rise"]
        rows[n] = row
        bounds[n] = driver.run(str(elf), ["main"], annotations=ann, sp0="__stack_top").results[0].bound
    # the code's own bound at the default (4 levels; gcc rotates the loop,
    # so its header runs at most 4 times, below the limit's 5); the stated
    # limit where it is below that
    assert max(rows[256].bounds) == 4 and rows[256].kind == "automatic", rows[256]
    assert max(rows[21].bounds) == 3 and "system limit" in rows[21].origin, rows[21]
    assert max(rows[4].bounds) == 2 and "system limit" in rows[4].origin, rows[4]
    assert bounds[4] < bounds[21] < bounds[256]
    # the heap of 4 entries at its worst: the last entry rises to the root
    # in one step, and the program's bound covers the run
    from kairos.wcet.model import get_preset
    from kairos.wcet.sim import replay
    prog = load_elf(elf)
    heap = b"".join((100 + k).to_bytes(8, "little") for k in range(4))
    word = lambda v: v.to_bytes(8, "little")  # noqa: E731
    trace = run_entry(prog, "main", {"heap": heap, "count": word(4), "slot": word(3), "key": word(1)})
    assert trace.stop == "return"
    assert replay(trace, prog.memory, get_preset("u54")).cycles <= bounds[4]
