"""The test suite's own rules (docs/contributing.md): no test asserts on a time it measured.

A shared machine under load can stretch any interval a test times, so an assertion on a clock
reading fails on a busy machine and proves nothing on an idle one: speed is measured in bench/.
This check reads every test module's syntax tree and fails on an `assert` that uses a clock's
reading, directly or through the names assigned from it (deadlines in loops are fine: they bound
how long a test waits, and assert nothing).
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
CLOCKS = frozenset(
    {"time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns"}
    | {"process_time", "process_time_ns", "thread_time", "thread_time_ns"}
)


def clock_names(tree: ast.Module) -> set[str]:
    """The clocks imported by name (`from time import perf_counter as now`)."""
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "time"
        for alias in node.names
        if alias.name in CLOCKS
    }


def reads_clock(node: ast.AST, imported: set[str], tainted: set[str]) -> bool:
    """Whether `node` calls a clock or uses a name that holds (something computed from) one."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call):
            function = inner.func
            if (
                isinstance(function, ast.Attribute)
                and function.attr in CLOCKS
                and isinstance(function.value, ast.Name)
                and function.value.id == "time"
            ):
                return True
            if isinstance(function, ast.Name) and function.id in imported:
                return True
        if isinstance(inner, ast.Name) and inner.id in tainted:
            return True
    return False


def assigned_names(target: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(target) if isinstance(node, ast.Name)}


def timed_asserts(source: str) -> list[int]:
    """Line numbers of the asserts of `source` that read a clock (per function, names followed
    through assignments until nothing more is reached)."""
    tree = ast.parse(source)
    imported = clock_names(tree)
    lines = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        tainted: set[str] = set()
        grew = True
        while grew:
            grew = False
            for node in ast.walk(function):
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if node.value is not None and reads_clock(node.value, imported, tainted):
                        new = set().union(*map(assigned_names, targets)) - tainted
                        tainted |= new
                        grew |= bool(new)
        lines += [
            node.lineno
            for node in ast.walk(function)
            if isinstance(node, ast.Assert) and reads_clock(node, imported, tainted)
        ]
    return sorted(set(lines))


def test_no_test_asserts_on_a_time_it_measured():
    found = [
        f"{path.name}:{line}"
        for path in sorted(TESTS.glob("*.py"))
        for line in timed_asserts(path.read_text(encoding="utf-8"))
    ]
    assert not found, f"asserts on a measured time (move them to bench/): {found}"


def test_the_rule_sees_clocks_through_names_and_imports():
    flagged = """
import time
from time import perf_counter as now

def direct():
    assert time.monotonic() > 0

def through_names():
    started = time.perf_counter()
    elapsed = time.perf_counter() - started
    assert elapsed < 5

def imported_by_name():
    t0 = now()
    spent = [now() - t0]
    assert spent[0] < 1
"""
    assert timed_asserts(flagged) == [6, 11, 16]
    allowed = """
import time

def waits_with_a_deadline():
    deadline = time.monotonic() + 60
    count = 0
    while count < 2 and time.monotonic() < deadline:
        count += 1
    assert count == 2
"""
    assert timed_asserts(allowed) == []
