"""System parameters in annotation files: declared defaults, values given
by the caller, loop bounds written as expressions, and their errors."""

from __future__ import annotations

import pytest

from kairos.wcet.annotations import evaluate, parse
from kairos.wcet.errors import WcetError

TEXT = '''
[parameters]
queue = { default = 64, note = "threads per queue" }
depth = { default = 8 }

[[loop]]
function = "walk"
max = "queue + 1"

[[loop]]
line = "lookup.h:12"
max = "depth * 2 // 4"
limit = true

[[loop]]
function = "plain"
max = 7
'''


def test_defaults_and_given_values() -> None:
    ann = parse(TEXT, "sys.toml")
    assert [la.max for la in ann.loops] == [65, 4, 7]
    assert ann.parameters["queue"].default == 64 and ann.parameters["queue"].note == "threads per queue"
    ann = parse(TEXT, "sys.toml", {"queue": 3, "depth": 20})
    assert [la.max for la in ann.loops] == [4, 10, 7]
    assert ann.loops[0].expression == "queue + 1" and ann.loops[1].limit and not ann.loops[0].limit


@pytest.mark.parametrize("expr, message", [
    ("queue + nope", "unknown parameter 'nope'"),
    ("queue ** 2", "not an expression over parameters"),
    ("queue // 0", "division by zero"),
    ("queue +", "not an expression over parameters"),
    ("__import__('os')", "not an expression over parameters"),
    ("heap_depth(queue)", "heap_depth takes 2 arguments"),
    ("heap_depth(queue, 1)", "arity must be at least 2"),
    ("other(queue, 4)", "not an expression over parameters"),
    ("heap_depth(queue, arity=4)", "not an expression over parameters"),
])
def test_bad_expressions_name_the_file_and_loop(expr: str, message: str) -> None:
    with pytest.raises(WcetError, match=message) as exc:
        parse(f'[parameters]\nqueue = {{ default = 4 }}\n[[loop]]\nfunction = "f"\nmax = "{expr}"\n', "s.toml")
    assert "s.toml loop #1" in str(exc.value)


def test_expression_below_one_is_an_error() -> None:
    with pytest.raises(WcetError, match="'q - 4' gives 0"):
        parse('[parameters]\nq = { default = 4 }\n[[loop]]\nfunction = "f"\nmax = "q - 4"\n', "s.toml")


@pytest.mark.parametrize("table", ['q = 4', 'q = { note = "x" }', 'q = { default = -1 }',
                                   'q = { default = 1, other = 2 }', '"not ok" = { default = 1 }'])
def test_bad_parameter_declarations(table: str) -> None:
    with pytest.raises(WcetError, match="parameter"):
        parse(f"[parameters]\n{table}\n", "s.toml")


def test_line_without_function_needs_limit() -> None:
    with pytest.raises(WcetError, match="also needs 'function'"):
        parse('[[loop]]\nline = "a.c:3"\nmax = 2\n', "s.toml")
    with pytest.raises(WcetError, match="limit must be true or false"):
        parse('[[loop]]\nfunction = "f"\nmax = 2\nlimit = "yes"\n', "s.toml")


def test_evaluate_is_integer_arithmetic_only() -> None:
    assert evaluate("a * 3 - 1 + 10 // 4", {"a": 5}, "x") == 16
    with pytest.raises(WcetError):
        evaluate("a.b", {"a": 1}, "x")
