"""Scenario files as a hostile user or a broken generator writes them (docs/safety/launch.md).

Property (Hypothesis): for arbitrary TOML values in every field, the parser returns a Scenario
within the limits that keep a run finite (copies, runtimes, offsets, names that are file names),
or raises a UserError of one line; never another exception. Nothing is run, so no example can
hang: the values that would hang or exhaust memory at run time are the ones the limits refuse.
"""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from perfatlas.common.errors import UserError
from perfatlas.machine.topology import Machine
from perfatlas.scenario.scenario import JOB_KEYS, MIX_KEYS, TARGET_KEYS, TOP_KEYS, parse

MACHINE = Machine.detect()
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# The limits a valid scenario keeps (perfatlas.scenario.scenario states them; restated here so
# that a change of either is a decision, not an accident).
MAX_COPIES, MAX_RUNTIME_S, MAX_START_S = 1024, 3600.0, 3600.0


# -- TOML text from Python values --------------------------------------------------------------
def toml_string(text: str) -> str:
    """A TOML basic string holding `text` exactly (every awkward character as \\UXXXXXXXX)."""
    plain = "".join(c if c.isprintable() and c not in '"\\' else f"\\U{ord(c):08x}" for c in text)
    return f'"{plain}"'


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else "inf" if value == math.inf else repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    pairs = (f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items())
    return "{ " + ", ".join(pairs) + " }"


def toml_text(top: dict, jobs: list[dict]) -> str:
    lines = [f"{toml_string(k)} = {toml_value(v)}" for k, v in top.items()]
    for job in jobs:
        lines.append("[[job]]")
        lines += [f"{toml_string(k)} = {toml_value(v)}" for k, v in job.items()]
    return "\n".join(lines) + "\n"


# -- values ------------------------------------------------------------------------------------
# Words the parser gives a meaning to, and their hostile neighbours.
WORDS = [
    "all", "N", "N+1", "N-1", "2N", "N/2", "N/0", "99999999999999999999N", "1s", "0.2s",
    "1e9s", "1e999s", "nan", "inf", "-1", "0", "0-1", "0,1", "50%", "1e999%", "4GB/s",
    "1e999GB/s", "1Gflop/s", "25MB", "240kB", "2xLLC", "1e300xLLC", "infxLLC", "nanxLLC",
    "1e999", "999TB", "triad", "dot", "a", "../x", "a/b", ".", "..", "-x", "a b", "x\ny", "",
]  # fmt: skip
scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(WORDS),
    st.text(max_size=10),
)
anything = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
GOOD = {
    "name": st.sampled_from(["t", "job-1", "a.b_c"]),
    "description": st.just("a scenario"),
    "cpus": st.sampled_from(["all", "0", [0]]),
    "seed": st.integers(0, 10),
    "variation": st.sampled_from([0.0, 0.2]),
    "count": st.sampled_from([1, 2, "N", "N+1"]),
    "threads": st.just(1),
    "runtime": st.sampled_from(["1s", 0.5, "2min"]),
    "start": st.sampled_from(["0s", 0.2, "1s"]),
    "nice": st.sampled_from([0, 3]),
    "bind": st.sampled_from(["0", [0]]),
    "kernels": st.sampled_from([["triad"], "dot"]),
    "bytes": st.sampled_from(["240kB", "25MB", "2xLLC"]),
    "transfer_rate": st.sampled_from(["40%", "4GB/s", 1e9]),
    "flop_rate": st.sampled_from(["1Gflop/s", "10%"]),
    "write_fraction": st.sampled_from([0.25, 0]),
    "kernel": st.sampled_from(["triad", "dot"]),
    "stride": st.sampled_from([1, 2]),
    "share": st.sampled_from([1, 2.5]),
}


def bounded(value) -> bool:
    """No CPU range whose expansion alone would take long (perfatlas.common.units' business)."""
    return not re.search(r"\d{5,}", repr(value))


def hostile(key: str):
    return anything.filter(bounded) if key in ("cpus", "bind") else anything


def table(keys: set[str], required: tuple[str, ...] = ()):
    """A table of good values, one of them now and then replaced by anything at all, so that
    each field's checks are reached with the others valid."""

    @st.composite
    def draw(draw_):
        names = sorted(keys)
        chosen = {
            key: draw_(GOOD.get(key, anything))
            for key in names
            if key in required or draw_(st.booleans())
        }
        if draw_(st.sampled_from([False, False, False, True])):  # one table in four: a field
            key = draw_(st.sampled_from(names))  # holds anything at all
            chosen[key] = draw_(hostile(key))
        if draw_(st.sampled_from([False] * 19 + [True])):  # now and then a key no table takes
            chosen[draw_(st.text(min_size=1, max_size=6))] = draw_(anything)
        return chosen

    return draw()


@st.composite
def jobs(draw):
    job = draw(table(JOB_KEYS - {"target", "mix"}, required=("runtime",)))
    if draw(st.booleans()):
        job["target"] = draw(table(TARGET_KEYS, required=("transfer_rate",)))
    else:
        job["mix"] = draw(st.lists(table(MIX_KEYS, required=("kernel",)), min_size=1, max_size=3))
    return job


# -- the properties ----------------------------------------------------------------------------
@given(
    top=table(TOP_KEYS - {"job"}),
    job_list=st.lists(jobs(), min_size=1, max_size=3),
    scale=st.sampled_from([1.0, 1.0, 1.0, 0.5, None]).flatmap(
        lambda s: st.floats(allow_nan=True, allow_infinity=True) if s is None else st.just(s)
    ),
)
def test_any_scenario_is_valid_within_its_limits_or_one_sentence(top, job_list, scale):
    text = toml_text(top, job_list)
    try:
        scenario = parse(text, "s.toml", MACHINE, scale)
    except UserError as error:
        assert "\n" not in str(error) and str(error), repr(str(error))
        event("refused")
        return
    event("a valid scenario")
    assert SAFE_NAME.fullmatch(scenario.name)
    assert 1 <= scenario.instances <= MAX_COPIES
    memory = MACHINE.memory_bytes
    for job in scenario.jobs:
        assert SAFE_NAME.fullmatch(job.name)
        assert 0 < job.runtime_s <= MAX_RUNTIME_S and 0 <= job.start_s <= MAX_START_S
        assert all(0 < size <= memory for size in job.sizes or ())
        for part in job.mix or ():
            assert math.isfinite(part.share) and part.share > 0 and 0 < part.bytes <= memory
            assert type(part.stride) is int
        for rate in (job.transfer_rate, job.flop_rate):
            assert rate is None or (math.isfinite(rate.value) and rate.value >= 0)
        assert all(type(cpu) is int for cpu in (job.bind or ()))
    assert all(type(cpu) is int for cpu in scenario.cpus)


# -- the values that hung or ran out of memory, refused with the limit named ---------------------
RUNAWAY = [
    ('start = nan', "start 'nan' is not a number"),
    ('start = inf', "start 'inf' is longer than a week, the longest duration taken"),
    ('start = -1', "start '-1' is negative"),
    ('start = "2h"', "'2h' is not a duration"),
    ('start = "90min"', "start = '90min' is more than the 3600 s a job may start after"),
    ('runtime = inf', "runtime 'inf' is longer than a week, the longest duration taken"),
    ('runtime = "1e9s"', "runtime '1e9s' is longer than a week, the longest duration taken"),
    ('runtime = "120min"', "runtime = '120min' is more than the 3600 s a job may last"),
    ("count = 1000000000", "count = 1000000000 is more than the 1024 copies a scenario may start"),
    ('count = "N/0"', "count = 'N/0' is not a number or an expression of N"),
    ('count = "99999999999999999999N"', "is more than the 1024 copies a scenario may start"),
    ('mix = [{ kernel = "triad", share = nan }]', "share = nan must be a positive number"),
    ('mix = [{ kernel = "triad", share = inf }]', "share = inf must be a positive number"),
    ('mix = [{ kernel = "triad", bytes = 1e300 }]', "is more than 1 EiB (2^60 bytes)"),
    ('mix = [{ kernel = "triad", bytes = "1000TiB" }]', "does not fit: this machine has"),
    ('mix = [{ kernel = "triad", bytes = "infxLLC" }]', "bytes 'inf' is not a size"),
    ('mix = [{ kernel = "triad", stride = 1.0 }]', "stride = 1.0 is not one of 1, 2, 4"),
    ('target = { transfer_rate = inf }', "transfer_rate = inf is not a finite rate"),
    ('target = { flop_rate = "1e999Gflop/s" }', "flop_rate = '1e999Gflop/s' is not a finite rate"),
    ('bind = [0.5]', "bind = [0.5] is not a CPU list"),
    ('name = "../../../../x/JOB"', "the job name '../../../../x/JOB' is not a safe name: use 1 to"),
    ('name = "a/b"', "the job name 'a/b' is not a safe name"),
]  # fmt: skip


@pytest.mark.parametrize("line, says", RUNAWAY, ids=[line for line, _ in RUNAWAY])
def test_a_value_that_would_hang_or_exhaust_memory_is_refused_naming_its_limit(line, says):
    key = line.split(" = ")[0]
    job = {"runtime": '"1s"', "mix": '[{ kernel = "triad" }]', key: line.split(" = ", 1)[1]}
    if key == "target":
        del job["mix"]
    text = "[[job]]\n" + "\n".join(f"{k} = {v}" for k, v in job.items()) + "\n"
    with pytest.raises(UserError) as caught:
        parse(text, "s.toml", MACHINE)
    assert str(caught.value).startswith("scenario s.toml line ") and says in str(caught.value)


def test_copies_are_counted_over_the_whole_scenario():
    job = '[[job]]\ncount = 600\nruntime = "1s"\nmix = [{ kernel = "triad" }]\n'
    with pytest.raises(UserError, match="start 1200 copies, more than the 1024 a scenario may"):
        parse(job.replace("[[job]]", '[[job]]\nname = "a"') + job, "s.toml", MACHINE)


@pytest.mark.parametrize("scale", [math.inf, math.nan, 0.0, -1.0])
def test_a_scale_that_is_not_a_positive_number_is_refused(scale):
    with pytest.raises(UserError, match="--scale .* must be a positive number"):
        parse('[[job]]\nruntime = "1s"\nmix = [{ kernel = "triad" }]\n', "s.toml", MACHINE, scale)


def test_a_scaled_runtime_is_held_to_the_limit():
    text = '[[job]]\nruntime = "10min"\nmix = [{ kernel = "triad" }]\n'
    assert parse(text, "s.toml", MACHINE, 6.0).jobs[0].runtime_s == 3600.0
    with pytest.raises(UserError, match=r"'10min' \(x7 by --scale\) is more than the 3600 s"):
        parse(text, "s.toml", MACHINE, 7.0)


def test_a_scenario_named_outside_its_folder_is_one_sentence_and_makes_nothing(cli, tmp_path):
    out = tmp_path / "deep" / "out"
    for name, job in (("../../X", "a"), ("ok", "../../../../x/JOB")):
        path = tmp_path / "s.toml"
        path.write_text(
            f'name = "{name}"\n[[job]]\nname = "{job}"\nruntime = "1s"\n'
            'mix = [{ kernel = "triad" }]\n'
        )
        result = cli("scenario", "run", str(path), "--out", str(out))
        assert result.code == 2 and result.err.count("\n") == 1, result.err
        assert "is not a safe name" in result.err
    assert [p.name for p in tmp_path.rglob("*")] == ["s.toml"]  # no folder, no database


@pytest.mark.parametrize(
    "flag, value, says",
    [
        ("--duration", "1e999s", "--duration '1e999s' is longer than a week"),
        ("--duration", "120min", "--duration 7200 s is more than the 3600 s a program may last"),
        ("--bytes", "1e30", "--bytes '1e30' is more than 1 EiB (2^60 bytes)"),
    ],
)
def test_a_matrix_that_would_never_end_or_not_fit_is_one_sentence(cli, flag, value, says):
    result = cli("scenario", "matrix", "--classes", "stream", flag, value)
    assert result.code == 2 and result.err.count("\n") == 1
    assert result.err.startswith(f"perfatlas: {says}"), result.err


def test_synthesis_refuses_an_infinite_runtime_instead_of_slicing_it_forever():
    from perfatlas.scenario.synthesis import Target, synthesize
    from perfatlas.scenario.variants import Variant

    variant = Variant("triad", 240_000, 1, 1, 1e-4, 2.4e5, 8e4, 2e4, 1e-4)
    with pytest.raises(UserError, match="job 'a': runtime inf s is not finite"):
        synthesize(
            runtime_s=math.inf,
            threads=1,
            candidates=[variant],
            target=Target(transfer_rate=1e9),
            where="job 'a'",
        )
