"""Property-based tests (Hypothesis) of every parser of user values: sizes, size series,
durations, CPU lists, key=value parameters, suites and the text-file reader. Each gives a valid
value or one sentence (UserError), never another exception, never a hang, never memory
exhaustion (tests/bad_input.py)."""

from __future__ import annotations

import math
import os
import tomllib

import pytest
from bad_input import outcome
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from perfatlas.benchmarks import get
from perfatlas.cli.options import key_values
from perfatlas.common.errors import UserError
from perfatlas.common.text_file import MAX_TEXT_BYTES, read_text_file
from perfatlas.common.units import (
    MAX_CPU,
    MAX_SERIES_POINTS,
    parse_cpu_list,
    parse_duration,
    parse_size,
    parse_size_series,
)
from perfatlas.machine.topology import Machine
from perfatlas.plan import suite as suites

GOOD = ("value", "sentence")

# Text that looks like what users type: numbers, units, separators, and anything else.
NUMBERISH = st.one_of(
    st.text(),
    st.from_regex(r"\A-?[0-9.e+\-]{0,12}\s?(KiB|MiB|GiB|kB|B|k|M|G|T|ns|us|ms|s|min|x)?\Z"),
    st.sampled_from(["1e999", "nan", "inf", "-inf", "1e308", "9" * 400, "0x10", "1_000", "²"]),
)
CPU_TEXT = st.one_of(
    st.text(),
    st.from_regex(r"\A[0-9]{1,12}(-[0-9]{1,12})?(,[0-9]{1,12}(-[0-9]{1,12})?){0,3}\Z"),
)
SERIES_TEXT = st.one_of(
    NUMBERISH,
    st.builds(
        lambda a, b, n: f"{a}..{b}/{n}",
        NUMBERISH,
        NUMBERISH,
        st.one_of(st.integers(-5, 10**12).map(str), st.text(max_size=4)),
    ),
)


@pytest.mark.parametrize(
    "parse, text",
    [
        (parse_size, "1e999"),
        (parse_size, "nan"),
        (parse_size, "9" * 400),
        (parse_size, "1e30"),
        (parse_duration, "inf"),
        (parse_duration, "nan"),
        (parse_duration, "1e999s"),
        (parse_duration, "1e9s"),
        (parse_cpu_list, "0-100000000"),
        (parse_cpu_list, "0-99999999999999999999"),
        (parse_cpu_list, "²"),
        (parse_size_series, "4KiB..1e999"),
        (parse_size_series, "1..1TiB/1000000"),
        (parse_size_series, "1,2,3," * 10000),
        (parse_size_series, "4KiB..1GiB/²"),
    ],
)
def test_hostile_values_are_one_sentence(parse, text):
    assert outcome(lambda: parse(text)) == "sentence"


@given(NUMBERISH)
def test_sizes_are_whole_bytes_or_one_sentence(text):
    result = outcome(lambda: parse_size(text))
    assert result in GOOD
    if result == "value":
        assert 0 <= parse_size(text) <= 2**62


@given(NUMBERISH)
def test_durations_are_finite_or_one_sentence(text):
    result = outcome(lambda: parse_duration(text))
    assert result in GOOD
    if result == "value":
        assert math.isfinite(parse_duration(text)) and parse_duration(text) >= 0


@given(CPU_TEXT)
def test_cpu_lists_are_bounded_or_one_sentence(text):
    result = outcome(lambda: parse_cpu_list(text))
    assert result in GOOD
    if result == "value":
        assert all(0 <= cpu <= MAX_CPU for cpu in parse_cpu_list(text))


@given(SERIES_TEXT)
def test_size_series_are_bounded_or_one_sentence(text):
    result = outcome(lambda: parse_size_series(text))
    assert result in GOOD
    if result == "value":
        assert 1 <= len(parse_size_series(text)) <= MAX_SERIES_POINTS


@pytest.fixture(scope="module")
def machine() -> Machine:
    return Machine.detect()


@settings(max_examples=100)
@given(
    st.sampled_from(["example.sum", "mem.latency", "mem.bandwidth", "noise"]),
    st.lists(
        st.tuples(
            st.sampled_from(["bytes", "cpus", "threads", "samples", "min_sample_time", "duration"])
            | st.text(max_size=6),
            NUMBERISH | CPU_TEXT,
        ).map(lambda kv: f"{kv[0]}={kv[1]}"),
        max_size=3,
    ),
)
def test_key_value_parameters_resolve_or_are_one_sentence(machine, name, words):
    benchmark = get(name)
    assert outcome(lambda: benchmark.resolve(key_values(words), machine)) in GOOD


# -- suites: arbitrary TOML-able documents -------------------------------------------------------
BENCHMARKS = ["mem.latency", "mem.bandwidth", "noise", "example.sum", "nope"]
KEYS = ["bytes", "threads", "cpus", "samples", "bind", "mempolicy", "launches", "chain", "op"]
SCALAR = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    NUMBERISH,
    st.sampled_from(["all", "4xLLC", "1e999xLLC", "nanxLLC", "close", "local", "node:0"]),
)
VALUE = st.recursive(
    SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.fixed_dictionaries(
            {},
            optional={"from": inner, "to": inner, "per_doubling": inner, "x": inner},
        ),
    ),
    max_leaves=6,
)
STEP = st.fixed_dictionaries(
    {},
    optional={"benchmark": st.sampled_from(BENCHMARKS) | SCALAR, **{k: VALUE for k in KEYS}},
)
SUITE = st.one_of(
    st.fixed_dictionaries({"step": st.lists(STEP, max_size=3)}),
    st.fixed_dictionaries({"step": VALUE}),
    st.dictionaries(st.text(max_size=5), VALUE, max_size=3),
)


def _toml(value: object) -> str:
    """A TOML inline value (tomllib reads, does not write)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else ("inf" if value > 0 else "-inf")
            if math.isinf(value)
            else repr(value)
        )
    if isinstance(value, str):
        return (
            '"'
            + "".join(
                c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}"
                for c in value
                if ord(c) < 0x10000 and not 0xD800 <= ord(c) < 0xE000
            )
            + '"'
        )
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{" + ", ".join(f"{_toml(str(k))} = {_toml(v)}" for k, v in value.items()) + "}"


def _suite_text(document: dict) -> str:
    return "\n".join(f"{_toml(str(key))} = {_toml(value)}" for key, value in document.items())


def _plan(path, machine):
    from perfatlas.plan.measurement_plan import suite_plan

    definition = suites.load(str(path))
    return suite_plan(str(path), definition, machine, None, None, 1)


@settings(max_examples=120)
@given(SUITE)
def test_any_suite_document_plans_or_is_one_sentence(tmp_path, machine, document):
    path = tmp_path / "suite.toml"
    path.write_text(_suite_text(document))
    try:  # keys that only differ in what _toml leaves out collide
        tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError:
        assume(False)
    assert outcome(lambda: _plan(path, machine)) in GOOD


MALFORMED_SUITES = [
    "step = 5",
    'step = "x"',
    "[[step]]\nbenchmark = 5",
    '[[step]]\nbenchmark = "mem.latency"\nbytes = { to = "1MiB" }',
    '[[step]]\nbenchmark = "mem.latency"\nbytes = { from = "4KiB" }',
    '[[step]]\nbenchmark = "mem.latency"\nbytes = { from = "4KiB", to = "1MiB", per_doubling = 1e9 }',
    '[[step]]\nbenchmark = "mem.latency"\nbytes = { from = "4KiB", to = "1MiB", per_doubling = "x" }',
    '[[step]]\nbenchmark = "mem.bandwidth"\nthreads = ["x"]',
    '[[step]]\nbenchmark = "mem.bandwidth"\nthreads = 1.5',
    '[[step]]\nbenchmark = "mem.bandwidth"\nthreads = [true]',
    '[[step]]\nbenchmark = "mem.latency"\nbytes = { from = 1e999, to = "1MiB" }',
    '[[step]]\nbenchmark = "mem.latency"\nbytes = { from = "nanxLLC", to = "1MiB" }',
    '[[step]]\nbenchmark = "mem.latency"\nbytes = { from = "4KiB", to = "1e9xLLC" }',
    '[[step]]\nbenchmark = "mem.latency"\nbytes = [[1, 2]]',
    '[[step]]\nbenchmark = "mem.latency"\nbytes = []',
    '[[step]]\nbenchmark = "mem.latency"\nsamples = { x = 1 }',
    '[[step]]\nbenchmark = "mem.bandwidth"\nbind = "close"\nlaunches = 1e9',
    '[[step]]\nbenchmark = "mem.bandwidth"\nbind = 5',
    '[[step]]\nbenchmark = "mem.bandwidth"\nlaunches = 1000000000',
    '[[step]]\nbenchmark = "mem.bandwidth"\nthreads = 100000000000000000',
    "[[step]]\nbenchmark = 'mem.latency'\ncpus = '0-100000000'",
    "[[step]]\nbenchmark = 'mem.latency'\nsamples = 1e999",
    "[[step]]\nbenchmark = 'mem.latency'\nmin_sample_time = 'nan'",
    "[[step]]\nbenchmark = 'mem.latency'\n" + "\n".join(f"k{i} = [1, 2]" for i in range(40)),
]


@pytest.mark.parametrize("text", MALFORMED_SUITES)
def test_malformed_suites_are_one_sentence(tmp_path, machine, text):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    assert outcome(lambda: _plan(path, machine)) == "sentence"


# -- the text-file reader ----------------------------------------------------------------------
@given(st.binary(max_size=300))
def test_any_bytes_read_as_text_or_one_sentence(tmp_path, data):
    path = tmp_path / "any.toml"
    path.write_bytes(data)
    result = outcome(lambda: read_text_file(path, "suite"))
    assert result in GOOD
    if result == "value":
        assert read_text_file(path, "suite").encode() == data


def test_files_that_are_not_regular_text_are_one_sentence(tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.toml"
    with huge.open("wb") as file:
        file.truncate(MAX_TEXT_BYTES + 1)  # sparse: no disk used
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes("name = 'caf\xe9'".encode("latin-1"))
    for path in (fifo, huge, latin1, tmp_path, tmp_path / "missing.toml", "/dev/zero"):
        assert outcome(lambda p=path: read_text_file(p, "suite")) == "sentence", path


@pytest.mark.parametrize(
    "text",
    [
        "x = " + "[" * 5000 + "]" * 5000,
        "x = " + "{a = " * 5000 + "1" + "}" * 5000,
        "[" + ".".join(["a"] * 5000) + "]",
    ],
)
def test_deep_toml_is_one_sentence(tmp_path, machine, text):
    path = tmp_path / "deep.toml"
    path.write_text(text)
    assert outcome(lambda: suites.load(str(path))) == "sentence"
    from perfatlas.scenario.scenario import load

    assert outcome(lambda: load(path, machine)) == "sentence"


def test_reader_refuses_with_the_path_and_reason(tmp_path):
    path = tmp_path / "fifo.toml"
    os.mkfifo(path)
    with pytest.raises(UserError, match=r"fifo.toml is not a regular file"):
        read_text_file(path, "suite")
