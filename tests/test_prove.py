"""make prove: the Frama-C/WP proofs of kernel code (docs/proofs.md).

test_prove runs every proof set of the Makefile, as `make prove` does, and
requires every goal proved. The mutation tests are the proofs' teeth: each
copies the kernel sources, breaks refill.c, thread.c, queue.c or release.c in one place (a flipped
comparison, a loop that runs one step too far), runs the same WP command on
the function it broke, and requires the proof to fail there; where the
clause the mutant breaks first has a name (MUTANT_PROPS), only that clause
is proved, and it must be the one that fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = re.compile(r"^prove: proved (\d+)/(\d+) goals$", re.M)


def proof_sets() -> list[str]:
    """The PROOF_SETS of the Makefile (what `make prove` proves)."""
    out = subprocess.run(["make", "-s", "--no-print-directory", "-pn", "prove"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"^PROOF_SETS :?= (.+)$", out, re.M)
    assert m, "PROOF_SETS not found in the Makefile"
    return m.group(1).split()


def prove(tmp: Path, sets: list[str], root: Path = ROOT, functions: str = "", props: str = "") -> tuple[int, str]:
    env = dict(os.environ, PROVE_ROOT=str(root), PROVE_OUT=str(tmp / "out"), PROVE_FCT=functions, PROVE_PROP=props)
    r = subprocess.run([str(ROOT / "proofs/prove.sh"), *sets], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=1800)
    return r.returncode, r.stdout + r.stderr


def test_prove(tmp_path: Path) -> None:
    sets = proof_sets()
    assert {"refill", "refill-order", "refill-charge", "refill-window", "refill-history", "ready", "ready-callers",
            "tqueue", "tqueue-insert", "release", "release-order", "release-backptr", "cdt"} <= set(sets)
    rc, out = prove(tmp_path, sets)
    m = SUMMARY.search(out)
    assert m, out
    proved, total = int(m.group(1)), int(m.group(2))
    assert total > 0 and proved == total, out
    assert rc == 0, out


def test_lemmas_are_goals_and_a_false_one_fails(tmp_path: Path) -> None:
    """WP proves an ACSL lemma only when no -wp-fct is given: with it, a
    lemma is a hypothesis of every goal and never a goal. prove.sh's lemma
    pass makes each set's lemmas goals; here one of the ready set's bit
    lemmas is made false (it now also claims x < 64 for x = 64), and the pass
    must fail on it and on no other."""
    copy = tmp_path / "tree"
    shutil.copytree(ROOT / "kernel", copy / "kernel")
    hdr = copy / "kernel" / "include" / "sched.h"
    before = "lemma u32_small: \\forall integer x; 0 <= x < 64 ==> (unsigned int)x == x;"
    after = "lemma u32_small: \\forall integer x; 0 <= x < 65 ==> (unsigned int)x == x && x < 64;"
    text = hdr.read_text()
    assert text.count(before) == 1, "lemma u32_small not found once in sched.h"
    env = dict(os.environ, PROVE_OUT=str(tmp_path / "out"), PROVE_LEMMAS_ONLY="1")
    good = subprocess.run([str(ROOT / "proofs/prove.sh"), "ready"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    m = SUMMARY.search(good.stdout)
    assert good.returncode == 0 and m and int(m.group(1)) == int(m.group(2)) >= 13, good.stdout + good.stderr
    hdr.write_text(text.replace(before, after))
    bad = subprocess.run([str(ROOT / "proofs/prove.sh"), "ready"], cwd=ROOT,
                         env=dict(env, PROVE_ROOT=str(copy)), capture_output=True, text=True, timeout=900)
    out = bad.stdout + bad.stderr
    m = SUMMARY.search(out)
    assert bad.returncode == 1 and m and int(m.group(1)) == int(m.group(2)) - 1, out
    assert re.findall(r"\[Failed\] Goal (\S+)", out) == ["typed_lemma_u32_small"], out


# (proof set, file under kernel/, function, the text to replace, what it
# becomes[, an id when the function has another mutant])
MUTATIONS: list[tuple[str, ...]] = [
    # clamp_max no longer caps max_refills at CONFIG_MAX_REFILLS
    ("refill", "kernel/refill.c", "clamp_max",
     "return max_refills > CONFIG_MAX_REFILLS ? CONFIG_MAX_REFILLS : (u32)max_refills;",
     "return max_refills < CONFIG_MAX_REFILLS ? CONFIG_MAX_REFILLS : (u32)max_refills;"),
    # (The small-head merge without `!single(sc)` is no longer a mutant: with
    # its precondition min_budget <= ring_sum, a single refill holds at least
    # min_budget, so the loop stops before popping it and the proof holds;
    # docs/proofs.md "Optimisations".)
    # merging the head into the next refill loses the head's amount: the
    # amounts no longer add up to the budget (ring_sum's loop invariant fails)
    ("refill", "kernel/refill.c", "merge_overlapping",
     "        add_amount(sc, sc->refill_head, r.amount);\n        set_release(sc, sc->refill_head, r.release_time);",
     "        set_release(sc, sc->refill_head, r.release_time);"),
    # the small-head merge (sporadic_charge's last step) stops at half the
    # minimum budget: the charge may leave a head too small for a kernel
    # entry and exit (its postcondition head >= min_budget fails)
    ("refill", "kernel/refill.c", "merge_small_head",
     "while (!single(sc) && refill_head(sc)->amount < min_budget) {",
     "while (!single(sc) && refill_head(sc)->amount < min_budget / 2) {",
     "min-budget"),
    # a round-robin charge refills the slice only once it is empty, not once
    # it falls below the minimum budget: the head may be left too small
    ("refill", "kernel/refill.c", "round_robin_charge",
     "    if (h->amount >= min_budget)\n        return false;",
     "    if (h->amount > 0)\n        return false;",
     "min-budget"),
    # a round-robin charge adds all of `usage` to the tail though it took at
    # most the head's amount off the head: the sum exceeds the budget
    ("refill", "kernel/refill.c", "round_robin_charge",
     "        add_amount(sc, tail_index(sc), used);",
     "        add_amount(sc, tail_index(sc), usage);"),
    # order (refill-order set): the unblock moves the head's release up to
    # `now` and no longer merges it: the head may then be released after
    # the next refill (the ring's order and non-overlap postcondition,
    # ring_apart, fails)
    ("refill-order", "kernel/refill.c", "refill_unblock_check",
     "    /* Refills that become available before the head runs out join it. */\n    merge_overlapping(sc);",
     "    /* Refills that become available before the head runs out join it. */"),
    # order: the merge stops at a head that ends exactly at the next
    # release (`>` for `>=`): the strict non-overlap of the head fails
    ("refill-order", "kernel/refill.c", "merge_overlapping",
     "    return !single(sc) && h->release_time + h->amount >= next_of_head(sc)->release_time;",
     "    return !single(sc) && h->release_time + h->amount > next_of_head(sc)->release_time;"),
    # order (refill-order set): a reconfiguration releases the extra budget
    # with the kept head instead of one new period after it (the thesis's
    # §8 item 13): the head then overlaps the new refill, so refill_update's
    # order and non-overlap fails (its assertion on the tail's release, from
    # which ring_apart and head_apart follow); the sum, the invariant and the
    # minimum budget still hold (the refill set proves 75/75 on it)
    ("refill-order", "kernel/refill.c", "refill_update",
     "        add_tail(sc, (struct refill){ .release_time = h.release_time + sc->period,",
     "        add_tail(sc, (struct refill){ .release_time = h.release_time,"),
    # charge (refill-charge set): the sporadic charge no longer merges the
    # head at the end: after a split, an overrun's delay or a small-head
    # merge the head may overlap (or follow) the next refill, so the
    # charge's order and non-overlap postcondition fails
    ("refill-charge", "kernel/refill.c", "sporadic_charge",
     "    merge_overlapping(sc);\n    return used_up;",
     "    return used_up;"),
    # window (refill-window set): a split leaves the head's release where it
    # was (the thesis listing, before mainline seL4's correction): the rest
    # of the head is still released at the old time while the chunk cut
    # from it comes back one period after that, so the tail ends `usage`
    # past one period after the head's release (the ring window, split's
    # `ensures window`, fails); order, sum and the minimum still hold (the
    # refill and refill-charge sets prove the mutant's split_check)
    ("refill-window", "kernel/refill.c", "split_check",
     "    set_release(sc, sc->refill_head, h->release_time + usage);\n",
     ""),
    # history (refill-history set): the charge's first loop returns a used-up
    # refill one tick before one period after its release: the ring window
    # still holds (earlier is within it), and so do order, non-overlap and
    # the sum, so the refill, refill-order, refill-charge and refill-window
    # sets prove the mutant's sporadic_charge; the loop invariant that what
    # was charged is back at the tail no earlier than one period after the
    # old head's release fails
    ("refill-history", "kernel/refill.c", "sporadic_charge",
     "            r.release_time += sc->period;\n",
     "            r.release_time += sc->period - 1;\n"),
    # removing a thread clears its priority's bit while the queue is not empty
    ("ready", "kernel/thread.c", "ready_remove",
     "    if (!n->ready_head[p])\n        ready_bitmap_clear(n, p);",
     "    if (n->ready_head[p])\n        ready_bitmap_clear(n, p);"),
    # inserting at the head of a queue leaves the thread's old predecessor link
    ("ready", "kernel/thread.c", "ready_insert",
     "        t->ready_prev = NULL;\n        t->ready_next = n->ready_head[p];",
     "        t->ready_next = n->ready_head[p];"),
    # inserting at the tail leaves the old tail's successor link NULL: t is
    # not reachable from the head, while the ends (head without
    # predecessor, t the tail without successor) and the bitmap still hold,
    # so the proof before the whole-list model proved it; the list's links
    # (the assertion t_into_t, rq_links) fail
    ("ready", "kernel/thread.c", "ready_insert",
     "        if (n->ready_tail[p])\n            n->ready_tail[p]->ready_next = t;\n        else\n            n->ready_head[p] = t;",
     "        if (!n->ready_tail[p])\n            n->ready_head[p] = t;",
     "list"),
    # the caller's flag test inverted (ready-callers set): a thread whose
    # flag says it is in no ready queue is removed from one, and a queued
    # one is left there: ready_remove's preconditions (t the member at
    # rq_pos, linked in the queue) do not follow from the flag; main's
    # proof has no caller contracts and says nothing about it
    ("ready-callers", "kernel/thread.c", "sched_dequeue",
     "    if (t->in_ready_queue)\n        ready_remove(t);",
     "    if (!t->in_ready_queue)\n        ready_remove(t);"),
    # the word's summary bit is cleared whenever a bit of the word is
    ("ready", "kernel/thread.c", "ready_bitmap_clear",
     "    if (n->bitmap[p / 64] == 0)\n        n->bitmap_top &= ~BIT(p / 64);",
     "    n->bitmap_top &= ~BIT(p / 64);"),
    # removing the tail of an endpoint/notification queue makes its
    # successor (NULL) the tail while a predecessor remains
    ("tqueue", "kernel/queue.c", "tqueue_remove",
     "        q->tail = t->queue_prev;",
     "        q->tail = t->queue_next;"),
    # reordering inserts t again without taking it out first (t would be
    # in the list twice: insertion's precondition that t is no member fails)
    ("tqueue", "kernel/queue.c", "tqueue_reorder",
     "    tqueue_remove(q, t);\n    /* Insertion",
     "    /* Insertion"),
    # insertion walks past the threads of its own priority too: t goes in
    # front of them, not behind (FIFO among equals broken; the order
    # postcondition fails)
    ("tqueue-insert", "kernel/queue.c", "tqueue_insert",
     "    while (before && before->priority < t->priority) {",
     "    while (before && before->priority <= t->priority) {"),
    # insertion leaves its successor's back link pointing at t's predecessor
    # (the list's prev links fail)
    ("tqueue-insert", "kernel/queue.c", "tqueue_insert",
     "    if (after)\n        after->queue_prev = t;\n    else\n        q->tail = t;",
     "    if (!after)\n        q->tail = t;",
     "link"),
    # a sink goes one level further down when the hole's first child is the
    # slot just past the heap: it reads that slot's stale entry as a child
    # and writes its SC (the present-children count n is 0 and the entry
    # need not be valid: consider's and place's preconditions fail)
    ("release", "kernel/release.c", "sink",
     "        if (first >= count)\n            break;",
     "        if (first > count)\n            break;"),
    # taking an entry out leaves the count as it was: the slot past the new
    # last entry is still counted (take_out's postcondition on the count
    # fails)
    ("release", "kernel/release.c", "take_out",
     "    u32 last = --q->count;",
     "    u32 last = q->count - 1;"),
    # order (release-order set): a rise moves the parent down when the
    # parent comes before the key (the comparison's operands swapped), so
    # an earlier entry goes below a later one; the release set still
    # proves the mutant (entries valid, termination), the loop invariant
    # that the key comes no later than the hole's children fails
    ("release-order", "kernel/release.c", "rise",
     "        if (!before_mask(time, seq, p.time, p.seq))",
     "        if (!before_mask(p.time, p.seq, time, seq))"),
    # order: a sink moves the earliest child up only when the key comes
    # before it (the comparison's operands swapped): the key stays above an
    # earlier child, or goes below a later one
    ("release-order", "kernel/release.c", "sink",
     "        if (!before_mask(ch.time, ch.seq, time, seq))",
     "        if (!before_mask(time, seq, ch.time, ch.seq))"),
    # order: a re-queue defers when its new key comes first and rises with
    # a later key, which may then sit above an earlier child
    ("release-order", "kernel/release.c", "release_queue_insert",
     "        if (!before_mask(e.time, e.seq, slot->time, slot->seq)) {",
     "        if (before_mask(e.time, e.seq, slot->time, slot->seq)) {"),
    # back-pointers (release-backptr set): place records the slot itself,
    # not slot + 1, in the moved entry's SC (0 would then mean slot 0 and
    # not "no slot"); the release and release-order sets prove the mutant,
    # which changes no value their contracts name; place's postconditions
    # that every slot's SC records slot + 1 fail
    ("release-backptr", "kernel/release.c", "place",
     "    e.sc->release_pos = i + 1;",
     "    e.sc->release_pos = i;"),
    # insertion into the derivation tree leaves the old successor's back
    # link at the parent instead of the new slot (a swapped link store: the
    # postcondition that the successor's predecessor is dest fails)
    ("cdt", "kernel/cdt.c", "cdt_insert_new_cap",
     "        next->mdb.prev = (word_t)dest;\n    set_next(parent, dest);",
     "        next->mdb.prev = (word_t)parent;\n    set_next(parent, dest);"),
    # the swap leaves s1's old successor's back link at s1 instead of s2
    # (the slot that takes s1's place): bwd(N1, s2) fails where the slots
    # are apart or s2 comes first, and where s1 comes first s1 ends up as
    # its own predecessor
    ("cdt", "kernel/cdt.c", "cdt_swap",
     "        n->mdb.prev = (word_t)s2;",
     "        n->mdb.prev = (word_t)s1;"),
]


# The refill-sum mutants and the round-robin minimum-budget one run outside
# CI (`make campaign`): with the sum contracts test_prove's refill set
# already costs CI about 2.3 min more CPU than before them (docs/proofs.md),
# and these take 37 s to 573 s each. The small-head merge's minimum-budget
# mutant proves the same function as the mutant it replaced in CI. The
# reorder mutant takes 118 s of CPU (three goals run into the timeout), the
# cdt_swap one 238 s (its 113 unmutated goals; test_prove proves the
# unmutated function in CI), the ready_insert list one 57 s of CPU, 79 s
# wall-clock (its 118 unmutated goals and the failing one's timeouts), the
# ready-callers sched_dequeue one 122 s of CPU, 211 s wall-clock (the
# failing preconditions' timeouts).
CAMPAIGN_MUTANTS = {"ready-ready_insert-list", "ready-callers-sched_dequeue",
                    "refill-merge_overlapping", "refill-round_robin_charge",
                    "refill-round_robin_charge-min-budget", "release-take_out",
                    "tqueue-insert-tqueue_insert-link", "tqueue-tqueue_reorder",
                    "refill-order-merge_overlapping", "refill-charge-sporadic_charge",
                    "release-order-sink", "release-order-release_queue_insert",
                    "cdt-cdt_swap"}


# The named clause a mutant breaks first: its run proves that clause alone
# (PROVE_PROP) and requires that it, and nothing else, fails; the unmutated
# clause is proved by test_prove. Every CI mutant has one; the campaign ones
# prove their whole function and require some goal of it to fail. A clause
# of a callee's contract (sink's n_present, consider's precondition) selects
# its call-site goals. Where a mutant breaks several clauses, the first is
# named (a failed assertion is still a hypothesis of the goals after it).
# Measured alone (docs/proofs.md "How it runs"): the clause alone costs 20 to
# 42 s of CPU (the failing goal's two prover timeouts and Frama-C's start)
# instead of 20 to 98 s for the whole function. A name that selects nothing
# fails the test (0 goals).
MUTANT_PROPS = {
    "refill-clamp_max": "clamped",
    "refill-merge_small_head-min-budget": "head_min",
    "refill-order-refill_unblock_check": "unblock_apart",
    "refill-order-refill_update": "tail_release",
    "refill-window-split_check": "single_end",
    "refill-history-sporadic_charge": "tail_back",
    "ready-ready_remove": "prios",
    "ready-ready_insert": "h_t",
    "ready-ready_bitmap_clear": "top_iff",
    "tqueue-tqueue_remove": "new_tail",
    "tqueue-insert-tqueue_insert": "walked",
    "release-sink": "n_present",
    "release-order-rise": "key_above",
    "release-backptr-place": "slot_recorded",
    "cdt-cdt_insert_new_cap": "succ_back",
}


def mutant_id(m: tuple[str, ...]) -> str:
    return "-".join([m[0], m[2], *m[5:]])


@pytest.mark.parametrize("proof_set,path,function,before,after,prop", [
    pytest.param(*m[:5], MUTANT_PROPS.get(mutant_id(m), ""), id=mutant_id(m),
                 marks=[pytest.mark.campaign] if mutant_id(m) in CAMPAIGN_MUTANTS else [])
    for m in MUTATIONS])
def test_mutated_code_fails(tmp_path: Path, proof_set: str, path: str, function: str,
                            before: str, after: str, prop: str) -> None:
    copy = tmp_path / "tree"
    shutil.copytree(ROOT / "kernel", copy / "kernel")
    src = copy / "kernel" / path
    text = src.read_text()
    assert text.count(before) == 1, f"mutation site not found once in {path}: {before}"
    src.write_text(text.replace(before, after))
    rc, out = prove(tmp_path, [proof_set], root=copy, functions=function, props=prop)
    m = SUMMARY.search(out)
    assert m, out
    proved, total = int(m.group(1)), int(m.group(2))
    assert total > 0 and proved < total, out
    assert rc == 1, out
    assert re.search(rf"\[Failed\] Goal typed_{function}_", out), out
    if prop:
        failed = re.findall(r"\[(?:Failed|Timeout|Unknown)\] Goal (\S+)", out)
        assert failed and all(re.fullmatch(rf"typed_{function}_\w*{prop}\w*", g) for g in failed), out
