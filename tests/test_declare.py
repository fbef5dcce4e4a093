"""One benchmark, one place: every native program declares its parameters once (its pa_param
table, `--params`), Python builds its parameters from that table, and benchmarks and summary
tables are discovered, not listed (docs/adding-a-benchmark.md)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from native_build import partial_bin

from perfatlas.benchmarks import all_benchmarks, get
from perfatlas.benchmarks.benchmark import Benchmark, native_param
from perfatlas.common.errors import UserError
from perfatlas.launch.native import bin_dir
from perfatlas.launch.native_params import KINDS, native_table
from perfatlas.report.report_sections import all_sections
from perfatlas.terminal.summary_registry import all_tables

ROOT = Path(__file__).resolve().parents[1]


def runnable() -> list[Benchmark]:
    return [b for b in all_benchmarks() if (bin_dir() / b.executable).is_file()]


@pytest.mark.parametrize("program", sorted({b.executable for b in all_benchmarks()}))
def test_every_program_writes_its_table(program):
    if not (bin_dir() / program).is_file():
        pytest.skip(f"{program} is not built here (no MPI, or no ScaLAPACK)")
    proc = subprocess.run([str(bin_dir() / program), "--params"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == ""
    table = json.loads(proc.stdout)
    assert table["schema"] == "perfatlas.params/1" and table["program"] == program
    names = [row["name"] for row in table["params"]]
    assert len(names) == len(set(names)) and "json" not in names
    for row in table["params"]:
        assert row["kind"] in KINDS and row["help"]
        assert (row["min"] is None) == (row["max"] is None)
        assert row["min"] is None or row["min"] < row["max"]
        assert row["choices"] is None or row["kind"] in ("choice", "size")


@pytest.mark.parametrize("benchmark", runnable(), ids=lambda b: b.name)
def test_python_parameters_are_the_native_table_plus_what_python_adds(benchmark):
    table = native_table(benchmark.executable)
    params = {p.name: p for p in benchmark.params}
    native = [row for row in table.params if row.name not in benchmark.withheld]
    added = {p.name for p in benchmark.adds}
    assert set(params) == {row.name for row in native} | added
    for row in native:
        expected = native_param(row)
        refined = benchmark.refines.get(row.name, {})
        for field in ("default", "minimum", "maximum", "choices", "help", "series"):
            want = refined.get(field, getattr(expected, field))
            assert getattr(params[row.name], field) == want, (row.name, field)


def test_series_cpu_lists_and_additions_keep_their_meaning():
    latency = {p.name: p for p in get("mem.latency").params}
    assert latency["bytes"].series and latency["bytes"].default == 64 * 2**20
    assert latency["bytes"].value("4KiB..16KiB/1", "mem.latency") == [4096, 8192, 16384]
    assert latency["cpus"].default is None  # the benchmark picks PUs of the machine
    assert latency["cpus"].value("0-2", "mem.latency") == [0, 1, 2]
    bandwidth = [p.name for p in get("mem.bandwidth").params]
    assert bandwidth[:3] == ["op", "bytes", "threads"]  # threads: added after bytes
    assert [p.name for p in get("noise").params][:3] == ["method", "cpu", "cpus"]
    if (bin_dir() / "pa-comm-collectives").is_file():  # np: the launcher's; op: fixed
        barrier = [p.name for p in get("comm.barrier").params]
        assert barrier[0] == "np" and "op" not in barrier and "min_bytes" not in barrier


def test_bounds_are_the_native_ones():
    samples = {p.name: p for p in get("mem.latency").params}["samples"]
    assert samples.maximum == 1e6  # native/mem/latency.c (Python once said 10000)
    with pytest.raises(UserError, match="samples=1000001 is above the maximum 1000000"):
        samples.value("1000001", "mem.latency")
    page = {p.name: p for p in get("mem.latency").params}["page"]  # a size with choices
    assert page.value("2MiB", "mem.latency") == 2 * 2**20
    with pytest.raises(UserError, match="mem.latency: page=8KiB is not one of 4KiB, 2MiB"):
        page.value("8KiB", "mem.latency")


def refusing_bin_dir(tmp_path: Path, sentence: str) -> Path:
    """The installed executables, but pa-example-sum one that refuses as the ISA check does."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for installed in bin_dir().iterdir():
        (folder / installed.name).symlink_to(installed)
    (folder / "pa-example-sum").unlink()
    refusing = folder / "pa-example-sum"
    refusing.write_text(f"#!/bin/sh\necho '{sentence}' >&2\nexit 2\n")
    refusing.chmod(0o755)
    return folder


def test_a_program_that_cannot_run_here_is_one_sentence(cli, tmp_path, monkeypatch):
    sentence = "pa-example-sum: this CPU (a test) lacks avx512f, which this build needs"
    monkeypatch.setenv("PERFATLAS_BIN_DIR", str(refusing_bin_dir(tmp_path, sentence)))
    result = cli("measure", "example.sum")
    assert result.code == 2 and result.err.strip() == f"perfatlas: {sentence}"
    listed = cli("list")
    assert listed.code == 0
    assert "example.sum: a checked sum" in listed.out
    assert f"  parameters unknown here: {sentence}" in listed.out
    assert "mem.latency" in listed.out and "  bytes " in listed.out  # the others as before


def test_benchmarks_are_discovered_not_listed():
    for listing in ("common/discovery.py", "benchmarks/__init__.py"):
        text = (ROOT / "src/perfatlas" / listing).read_text()
        assert "bench_latency" not in text and "bench_pingpong" not in text, listing
    modules = {b.__class__.__module__ for b in all_benchmarks()}
    assert "perfatlas.example.bench_example_sum" in modules and len(modules) >= 17
    # one room per domain: a benchmark is a module bench_* of its domain's package
    assert all(m.rpartition(".")[2].startswith("bench_") for m in modules), modules
    rooms = {m.split(".")[1] for m in modules}
    assert {"mem", "noise", "comm", "app", "parbench"} <= rooms, rooms


def test_a_benchmark_lives_in_the_package_its_name_begins_with():
    """One spelling per domain: `mem.latency` is measured in perfatlas.mem, `app.sweep` in
    perfatlas.app, `noise` in perfatlas.noise (the name's first part is the package)."""
    for benchmark in all_benchmarks():
        package = benchmark.__class__.__module__.split(".")[1]
        assert package == benchmark.name.partition(".")[0], (benchmark.name, package)


def test_sections_and_tables_live_in_section_and_summary_modules():
    sections = {s.build.__module__ for s in all_sections()}
    tables = {t.build.__module__ for t in all_tables()}
    assert all(m.rpartition(".")[2].startswith("section_") for m in sections), sections
    assert all(m.rpartition(".")[2].startswith("summary_") for m in tables), tables
    assert "perfatlas.mem.section_latency" in sections
    assert "perfatlas.report.section_machine" in sections  # run-wide sections stay in report/
    assert "perfatlas.comm.summary_comm" in tables


def test_summary_tables_name_registered_benchmarks():
    names = {b.name for b in all_benchmarks()}
    tables = all_tables()
    assert [t.order for t in tables] == sorted(t.order for t in tables)
    for table in tables:
        assert table.benchmarks and set(table.benchmarks) <= names, table.name
    summary = (ROOT / "src/perfatlas/terminal/run_summary.py").read_text()
    assert "_table(data)" not in summary  # no hard-coded table list


def test_a_benchmark_this_build_lacks_has_no_parameters_to_check(tmp_path, monkeypatch):
    """app.madbench in a build without ScaLAPACK: no table to read, so its parameters stay as
    given and the step is stored as not built (test_report_apps runs such a suite)."""
    folder = partial_bin(tmp_path / "bin", {"ScaLAPACK": ("pa-madbench",)})
    monkeypatch.setenv("PERFATLAS_BIN_DIR", str(folder))
    madbench = get("app.madbench")
    assert madbench.absent() == "not built here: ScaLAPACK: ScaLAPACK was not found at build time"
    assert madbench.params == ()
    assert madbench.resolved({"npix": "64", "np": "4"}, None) == {"npix": "64", "np": "4"}
