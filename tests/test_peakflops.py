"""cpu.peakflops: every kernel this CPU has measured through the CLI and checked against its
closed form (the scalar kernel everywhere), a spoiled kernel caught (exit 3, naming the element),
an ISA the CPU lacks stored as "not measurable here" (refused by the native program asked
directly), bad input in one sentence, and the report's section and summary table."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from perfatlas.benchmarks import get
from perfatlas.cpu.analysis_peakflops import nominal_clock, peak_rows, unmeasured_kernels
from perfatlas.cpu.bench_peakflops import kernel_catalog, kernel_of
from perfatlas.cpu.section_peakflops import peakflops_section
from perfatlas.cpu.summary_peakflops import peakflops_table
from perfatlas.launch.native import executable
from perfatlas.store.database import Store
from perfatlas.store.run_data import RunData

FAST = ("samples=2", "min_sample_time=1ms")
ALL_ISAS = ("scalar", "sse", "avx2", "avx512", "neon", "sve")  # x86-64 and aarch64


def peakflops(*words: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(executable("pa-cpu-peakflops")), *words],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )


def sentence(done: subprocess.CompletedProcess, status: int) -> str:
    assert done.returncode == status, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pa-cpu-peakflops: "), done.stderr
    assert done.stdout == ""
    return lines[0]


def test_parameters_come_from_the_native_table():
    params = {p.name: p for p in get("cpu.peakflops").params}
    assert list(params) == ["precision", "isa", "threads", "cpus", "samples", "min_sample_time"]
    assert params["precision"].choices == ("double", "single")
    assert params["isa"].default == "widest" and "scalar" in params["isa"].choices
    catalog = kernel_catalog()
    assert {k["isa"] for k in catalog["kernels"]} < set(params["isa"].choices)
    assert catalog["flops_per_lane_iteration"] == 2 and catalog["accumulators"] >= 8


@pytest.mark.parametrize("precision", ["double", "single"])
@pytest.mark.parametrize("isa", ALL_ISAS)
def test_every_kernel_of_this_cpu_is_checked(cli, tmp_path, isa, precision):
    kernel = kernel_of(isa, precision)
    if kernel is None:  # stored as not measurable here, as a suite for every machine needs
        assert cli("measure", "cpu.peakflops", f"isa={isa}", f"precision={precision}").code == 0
        store = Store(cli.db)
        [stored] = store.results(store.resolve_run("last"))
        assert " instruction set; this build's kernels are " in stored.not_measurable
        pytest.skip(f"{isa} is not an instruction set of this architecture")
    if kernel["not_measurable"]:
        assert isa != "scalar"  # the scalar kernel runs everywhere
        pytest.skip(f"not measurable here: {kernel['not_measurable']}")
    out = tmp_path / "doc.json"
    result = cli(
        "measure",
        "cpu.peakflops",
        f"isa={isa}",
        f"precision={precision}",
        *FAST,
        "--json",
        str(out),
    )
    assert result.code == 0, result.err
    doc = json.loads(out.read_text())
    derived = doc["derived"]
    assert derived["verified"] and derived["isa"] == isa and derived["precision"] == precision
    assert derived["lanes"] == kernel["lanes"]
    assert derived["operations"] == ("mul+add" if isa in ("scalar", "sse") else "fma")
    # the flops of a sample follow from the declared counts, and each sample is flops / seconds
    per_block = derived["accumulators"] * derived["iterations_per_block"] * derived["lanes"] * 2
    assert derived["flops_per_block"] == per_block
    assert derived["flops_per_sample"] == per_block * derived["blocks_per_sample"]
    for rate, seconds in zip(doc["samples"]["flop_rate"], doc["sample_seconds"]):
        assert rate == pytest.approx(derived["flops_per_sample"] / seconds, rel=1e-12)
    store = Store(cli.db)
    [stored] = store.results(store.resolve_run("last"))
    assert (stored.metric, stored.unit, stored.n) == ("flop_rate", "flop/s", 2)
    assert stored.params["isa"] == isa and stored.params["threads"] == 1 and stored.median > 0


def test_all_threads_one_per_core_first(cli, tmp_path):
    out = tmp_path / "doc.json"
    result = cli("measure", "cpu.peakflops", "threads=2", "isa=scalar", *FAST, "--json", str(out))
    assert result.code == 0, result.err
    doc = json.loads(out.read_text())
    threads = doc["placement"]["threads"]
    assert len(threads) == 2 and doc["derived"]["threads"] == 2
    assert len({t["cpus_allowed"] for t in threads}) == 2  # each pinned to its own PU
    store = Store(cli.db)
    [stored] = store.results(store.resolve_run("last"))
    assert stored.params["threads"] == 2 and len(stored.params["cpus"]) == 2


def test_widest_names_the_isa_it_resolved_to(cli):
    result = cli("measure", "cpu.peakflops", *FAST)
    assert result.code == 0, result.err
    store = Store(cli.db)
    [stored] = store.results(store.resolve_run("last"))
    assert stored.params["isa"] == kernel_catalog()["widest"] != "widest"


@pytest.mark.parametrize(
    "corrupt, element",
    [
        ("iteration", "thread 1 (PU {cpu}), accumulator 0, lane 0 ended its last block at"),
        ("lane", "thread 1 (PU {cpu}), accumulator 0, lane 0 ended its last block at"),
    ],
)
def test_a_skipped_iteration_or_lane_fails_naming_it(corrupt, element):
    """The hook spoils the last thread: one iteration short, or the last lane not incremented
    (scalar: one lane, so lane 0)."""
    done = peakflops("isa=scalar", "cpus=0,1", *FAST, env={"PERFATLAS_PEAKFLOPS_CORRUPT": corrupt})
    line = sentence(done, status=3)
    assert "scalar double kernel failed its check: " in line
    assert element.format(cpu=1) in line and "(its closed form)" in line


def test_a_skipped_vector_lane_names_the_last_lane():
    widest = kernel_catalog()["widest"]
    lanes = kernel_of(widest, "single")["lanes"]
    done = peakflops(
        f"isa={widest}", "precision=single", *FAST, env={"PERFATLAS_PEAKFLOPS_CORRUPT": "lane"}
    )
    assert f"thread 0 (PU 0), accumulator 0, lane {lanes - 1} ended" in sentence(done, 3)


def test_a_missing_isa_is_not_measurable_here(cli, monkeypatch):
    widest = kernel_catalog()["widest"]
    if widest == "scalar":
        pytest.skip("this CPU runs only the scalar kernels: no ISA to hide")
    monkeypatch.setenv("PERFATLAS_PEAKFLOPS_LACKS", widest)
    result = cli("measure", "cpu.peakflops", f"isa={widest}", *FAST)
    assert result.code == 0, result.err
    store = Store(cli.db)
    [stored] = store.results(store.resolve_run("last"))
    assert stored.not_measurable.startswith("this CPU lacks ") and not stored.samples
    # asked directly, the native program refuses in one sentence
    done = peakflops(f"isa={widest}", env={"PERFATLAS_PEAKFLOPS_LACKS": widest})
    assert f"isa={widest} is not measurable here: this CPU lacks" in sentence(done, 2)
    # and "widest" then means the next narrower one
    assert kernel_catalog()["widest"] != widest


@pytest.mark.parametrize(
    "words, says",
    [
        (["isa=mmx"], "cpu.peakflops: isa='mmx' is not one of "),
        (["precision=half"], "cpu.peakflops: precision='half' is not one of double, single"),
        (["threads=4097"], "threads=4097 exceeds the "),
        (["threads=0"], "cpu.peakflops: threads=0 is below the minimum 1"),
    ],
)
def test_bad_input_is_one_sentence(cli, words, says):
    result = cli("measure", "cpu.peakflops", *words)
    assert result.code == 2 and says in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_native_bad_input_is_one_sentence():
    assert "precision 'half' is not one of double, single" in sentence(
        peakflops("precision=half"), 2
    )


SUITE = """
description = "peak flops: scalar and the widest ISA, 1 and all threads; another architecture's"

[[step]]
benchmark = "cpu.peakflops"
precision = ["double", "single"]
isa = ["scalar", "widest"]
threads = [1, "all"]
samples = 2
min_sample_time = "1ms"

[[step]]
benchmark = "cpu.peakflops"
isa = "{other}"
"""


def test_section_and_summary_table(cli, tmp_path):
    suite = tmp_path / "peak.toml"
    other = "neon" if kernel_of("neon", "double") is None else "sse"  # another architecture's
    suite.write_text(SUITE.format(other=other))
    result = cli("run", str(suite), "--out", str(tmp_path / "out"))
    assert result.code == 0, result.err
    assert "peak floating-point rate" in result.out  # the terminal table
    store = Store(cli.db)
    data = RunData.load(store, store.resolve_run("last"))
    rows = peak_rows(data)
    widest = kernel_catalog()["widest"]
    assert {(r.precision, r.isa) for r in rows} == {
        (p, i) for p in ("double", "single") for i in ("scalar", widest)
    }
    pus = len(data.run["topology"]["pus"])
    assert all(set(r.by_threads) == {1, pus} for r in rows)
    [(precision, isa, why)] = unmeasured_kernels(data)
    assert (precision, isa) == ("double", other) and "instruction set" in why
    assert peakflops_table(data) is not None
    blocks = peakflops_section(data)
    assert blocks[0].kind == "figure" and blocks[1].kind == "table"
    assert len(blocks[1].rows) == len(rows)
    assert any(b.kind == "note" and f"{other} double: " in b.text for b in blocks)
    report = next((tmp_path / "out").glob("run-*.html")).read_text()
    assert "Peak compute (cpu.peakflops)" in report


def test_the_nominal_clock_is_stated_never_guessed():
    stated = {"derived": {"nominal_clock_hz": 2.6e9, "nominal_clock_source": "cpufreq"}}
    assert nominal_clock(stated) == (2.6e9, "cpufreq")
    tsc = {"derived": {"nominal_clock_hz": None}, "timer": {"source": "rdtsc (invariant TSC)"}}
    tsc["timer"]["tsc_hz"] = 2.4e9
    assert nominal_clock(tsc)[0] == 2.4e9 and "invariant TSC" in nominal_clock(tsc)[1]
    monotonic = {
        "derived": {"nominal_clock_hz": None, "nominal_clock_source": "not reported"},
        "timer": {"source": "clock_gettime(CLOCK_MONOTONIC_RAW)", "tsc_hz": None},
    }
    assert nominal_clock(monotonic) == (None, "not reported")
