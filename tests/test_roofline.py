"""The roofline from stored results (perfatlas.cpu.analysis_roofline): ceilings exact from known stored
values, ridge points, the working-set-to-level assignment, each proxy's arithmetic intensity
exact against the formula of its declared counts (real documents of pa-spmv, pa-madbench and
pa-sweep), the missing-input sentences, the report section and the terminal table, and one run
through the CLI that measures all of it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mpi_helpers import mpirun
from test_report_apps import section_html, table_with

from perfatlas.common.stats import summarize
from perfatlas.cpu import analysis_roofline as rl
from perfatlas.launch.native import bin_dir, executable
from perfatlas.machine.topology import Machine
from perfatlas.report import render_report
from perfatlas.store.database import Store
from perfatlas.store.run_data import RunData
from perfatlas.terminal.run_summary import print_summary

KiB, MiB = 1024, 1024 * 1024
# hwloc's caches of a made-up machine: private L1 and L2 on each of 2 cores, one shared L3
TOPOLOGY = {
    "caches": [
        {"level": 1, "type": "data", "size_bytes": 32 * KiB, "count": 2},
        {"level": 1, "type": "instruction", "size_bytes": 32 * KiB, "count": 2},
        {"level": 2, "type": "unified", "size_bytes": 1 * MiB, "count": 2},
        {"level": 3, "type": "unified", "size_bytes": 16 * MiB, "count": 1},
    ]
}
CACHES = rl.cache_levels(TOPOLOGY)


# -- documents shaped like docs/contract.md -------------------------------------------------------
def around(median: float) -> list[float]:
    """Three samples whose median is exactly `median`."""
    return [median * 0.98, median, median * 1.01]


def document(benchmark: str, params: dict, metric: str, unit: str, samples: list[float]) -> dict:
    return {
        "schema": "perfatlas.result/1",
        "benchmark": benchmark,
        "params": params,
        "samples": {metric: samples},
        "units": {metric: unit},
        "sample_seconds": [0.01] * len(samples),
        "derived": {"verified": True},
    }


def peakflops(precision: str, isa: str, threads: int, rate: float) -> dict:
    params = {"precision": precision, "isa": isa, "threads": threads}
    return document("cpu.peakflops", params, "flop_rate", "flop/s", around(rate))


def bandwidth(op: str, n_bytes: int, threads: int, rate: float, store: str = "normal") -> dict:
    params = {"op": op, "bytes": n_bytes, "threads": threads, "store": store, "node": "local"}
    return document("mem.bandwidth", params, "bandwidth_Bps", "byte/s", around(rate))


def stored_run(tmp_path: Path, documents: list[dict], topology: dict = TOPOLOGY) -> RunData:
    """The documents stored through the real store API, read back as the report reads them."""
    store = Store(tmp_path / "roofline.db")
    run_id = store.start_run(
        fingerprint="test", topology=topology, context={}, suite=None, argv=[], software={}
    )
    for doc in documents:
        store.add_document(run_id, doc, [])
    store.finish_run(run_id, "complete")
    return RunData.load(store, run_id)


def roof_of(data: RunData) -> rl.Roofline:
    return rl.roofline(data.results, data.run["topology"])


# measured values of the made-up machine: flop/s and byte/s
PEAKS = {("double", "scalar"): 4e9, ("double", "avx2"): 32e9, ("single", "avx2"): 64e9}
L1 = {"read": [200e9, 210e9], "triad": [150e9, 160e9]}  # at 8 KiB and 16 KiB, 1 thread
MEMORY_1, MEMORY_2 = [20e9, 22e9, 21e9], [30e9, 33e9, 31e9]  # 32, 64, 128 MiB: 1 and 2 threads


def machine_documents() -> list[dict]:
    docs = [
        peakflops(precision, isa, threads, rate * threads)
        for (precision, isa), rate in PEAKS.items()
        for threads in (1, 2)
    ]
    for op, rates in L1.items():
        docs += [bandwidth(op, size, 1, r) for size, r in zip((8 * KiB, 16 * KiB), rates)]
    docs.append(bandwidth("triad", 32 * KiB, 1, 1e12))  # a transition point: in no level
    docs.append(bandwidth("copy", 256 * KiB, 1, 90e9))  # L2: a plateau of one working set
    for threads, rates in ((1, MEMORY_1), (2, MEMORY_2)):
        sizes = (32 * MiB, 64 * MiB, 128 * MiB)
        docs += [bandwidth("triad", s, threads, r) for s, r in zip(sizes, rates)]
    return docs


# -- levels ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "working_set, threads, level",
    [
        (8 * KiB, 1, "L1"),
        (16 * KiB, 1, "L1"),
        (32 * KiB, 1, None),  # fills L1 exactly: a transition
        (64 * KiB, 1, "L2"),
        (512 * KiB, 1, "L2"),
        (1 * MiB, 1, None),
        (2 * MiB, 1, "L3"),
        (8 * MiB, 1, "L3"),
        (16 * MiB, 1, None),
        (32 * MiB, 1, "memory"),
        (32 * KiB, 2, "L1"),  # two private L1s hold twice as much
        (128 * KiB, 2, "L2"),
        (1 * MiB, 2, "L2"),
        (4 * MiB, 2, "L3"),  # two private L2s: 2 MiB; one shared L3: 16 MiB
        (32 * MiB, 2, "memory"),
    ],
)
def test_a_working_set_is_assigned_to_the_level_that_serves_it(working_set, threads, level):
    assert rl.level_of(working_set, threads, CACHES) == level


@given(st.integers(1, 1 << 34), st.integers(1, 1 << 34), st.integers(1, 64))
def test_a_larger_working_set_never_lands_in_a_faster_level(a, b, threads):
    order = rl.level_names(CACHES)
    small, large = (rl.level_of(w, threads, CACHES) for w in sorted((a, b)))
    if small is not None and large is not None:
        assert order.index(small) <= order.index(large)


@pytest.mark.parametrize(
    "working_set, level",
    [
        (2 * MiB, "L3"),  # within the 4 MiB the run could use of the L3
        (8 * MiB, None),  # beyond the effective LLC, within hwloc's 16 MiB: perhaps still L3
        (16 * MiB, None),
        (32 * MiB, "memory"),  # twice hwloc's L3: memory whatever the L3 holds for others
    ],
)
def test_memory_begins_beyond_hwlocs_llc_when_the_effective_one_is_smaller(working_set, level):
    caches = rl.cache_levels(TOPOLOGY, llc_bytes=4 * MiB)
    assert caches[-1].size_bytes == 4 * MiB and caches[-1].hwloc_bytes == 16 * MiB
    assert rl.level_of(working_set, 1, caches) == level


def test_without_hwloc_caches_no_working_set_gets_a_level():
    assert rl.cache_levels({"caches": []}) == []
    assert rl.level_of(1 << 30, 1, []) is None


# -- ceilings and ridge points --------------------------------------------------------------------
def test_ceilings_are_the_stored_medians(tmp_path):
    roof = roof_of(stored_run(tmp_path, machine_documents()))
    assert roof.compute_threads() == [1, 2] and roof.bandwidth_threads() == [1, 2]
    for threads in (1, 2):
        peak = roof.peak("double", threads)
        assert (peak.isa, peak.rate.median) == ("avx2", 32e9 * threads)
        assert roof.peak("single", threads).rate.median == 64e9 * threads
        lower = {(c.precision, c.isa): c.rate.median for c in roof.compute if c.threads == threads}
        assert lower == {key: rate * threads for key, rate in PEAKS.items()}
    # L1, 1 thread: the best operation (read) and the median of its two point medians
    l1 = roof.ceiling("L1", 1)
    assert (l1.op, l1.rate.median, l1.sizes) == ("read", 205e9, (8 * KiB, 16 * KiB))
    assert (l1.rate.lo, l1.rate.hi) == (200e9, 210e9)
    memory = roof.ceiling("memory", 1)
    assert (memory.rate.median, memory.rate.lo, memory.rate.hi) == (21e9, 20e9, 22e9)
    assert roof.ceiling("memory", 2).rate.median == 31e9
    l2 = roof.ceiling("L2", 1)  # one point: its own samples' median and interval
    assert (l2.op, l2.rate.median, l2.rate.lo, l2.rate.hi) == (
        "copy",
        90e9,
        90e9 * 0.98,
        90e9 * 1.01,
    )
    assert roof.ceiling("L2", 2) is None  # not measured: no ceiling is made up
    assert all(c.rate.median < 1e12 for c in roof.bandwidth)  # the transition point is in none


def test_the_ridge_point_is_the_peak_over_the_bandwidth(tmp_path):
    roof = roof_of(stored_run(tmp_path, machine_documents()))
    assert roof.ridge("double", 1) == 32e9 / 21e9
    assert roof.ridge("double", 2) == 64e9 / 31e9
    assert roof.ridge("single", 1, "L1") == 64e9 / 205e9
    assert roof.ridge("double", 1, "L3") is None


# -- the proxies' intensity from their declared counts --------------------------------------------
def run_native(argv: list[str]) -> dict:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def proxy_documents() -> dict[str, dict]:
    docs = {
        "app.spmv": run_native(
            [
                str(executable("pa-spmv")),
                "problem=laplace2d",
                "n=12",
                "samples=3",
                "variants=read_element",
            ]
        ),
        "app.sweep": run_native([str(executable("pa-sweep")), "repeat=2", "warmup=0"]),
    }
    if (bin_dir() / "pa-madbench").is_file():
        words = ["npix=48", "nbin=2", "lbin=3", "bsize=16", "repeat=2", "warmup=0"]
        docs["app.madbench"] = run_native([*mpirun(1), str(executable("pa-madbench")), *words])
    return docs


def test_each_proxy_sits_at_the_intensity_of_its_declared_counts(tmp_path, proxy_documents):
    roof = roof_of(stored_run(tmp_path, list(proxy_documents.values())))
    found = {p.benchmark: p for p in roof.points}
    assert set(found) == set(proxy_documents)
    spmv = proxy_documents["app.spmv"]["derived"]
    nnz, n = spmv["nnz"], spmv["n"]  # one rank touches every column: compulsory traffic, SC07
    assert found["app.spmv"].intensity == pytest.approx(2 * nnz / (12 * nnz + 16 * n + 4 * (n + 1)))
    assert found["app.spmv"].intensity_low == pytest.approx(2 * nnz / (20 * nnz + 12 * n + 4))
    sweep = proxy_documents["app.sweep"]["derived"]
    directions = sweep["directions"]
    assert found["app.sweep"].intensity == pytest.approx(13 * directions / 24)
    assert found["app.sweep"].intensity_low == pytest.approx(13 / 24)
    solve = proxy_documents["app.sweep"]["samples"]["solve_s"]
    flops = 13 * sweep["cells"] * directions * sweep["iterations"]
    assert found["app.sweep"].rate.median == pytest.approx(
        summarize([flops / s for s in solve]).median
    )
    if "app.madbench" in found:
        assert found["app.madbench"].intensity == pytest.approx(48 / 12)  # 2 n^3 / 24 n^2
        w = proxy_documents["app.madbench"]["samples"]["W_flops_per_s"]
        assert found["app.madbench"].rate.median == pytest.approx(summarize(w).median)
    assert all(p.cores == 1 for p in roof.points)


def test_a_point_is_bound_by_the_lower_roof_at_its_core_count(tmp_path, proxy_documents):
    roof = roof_of(stored_run(tmp_path, machine_documents() + list(proxy_documents.values())))
    for p in roof.points:  # one core: 1-thread ceilings
        bound, by = roof.limit(p)
        assert bound == min(32e9, p.intensity * 21e9)
        assert by == ("memory" if p.intensity * 21e9 < 32e9 else "compute")


# -- what is missing ------------------------------------------------------------------------------
def test_missing_inputs_are_named_and_no_ceiling_is_invented(tmp_path, proxy_documents):
    data = stored_run(tmp_path, [proxy_documents["app.sweep"]])
    roof = roof_of(data)
    assert roof.missing == (
        "This run has no cpu.peakflops and mem.bandwidth results: measure cpu.peakflops and "
        "mem.bandwidth to draw the roofline."
    )
    assert roof.bound(roof.points[0]) is None
    html = section_html(render_report(data, only=("roofline",)), "roofline")
    assert "measure cpu.peakflops and mem.bandwidth to draw the roofline" in html
    assert "<svg" not in html
    assert table_with(html, "proxy point")[0]["bound"] == "-"


def test_bandwidth_without_peakflops_says_peakflops_is_missing(tmp_path, proxy_documents):
    docs = [d for d in machine_documents() if d["benchmark"] == "mem.bandwidth"]
    roof = roof_of(stored_run(tmp_path, [*docs, proxy_documents["app.spmv"]]))
    assert roof.missing.startswith("This run has no cpu.peakflops results: measure")
    assert roof.ceiling("memory", 1) is not None and roof.peak("double", 1) is None


def test_a_memory_run_has_no_roofline_section(tmp_path):
    docs = [d for d in machine_documents() if d["benchmark"] == "mem.bandwidth"]
    html = render_report(stored_run(tmp_path, docs), only=("roofline",))
    assert '<section id="roofline">' not in html


# -- the report and the summary -------------------------------------------------------------------
def test_the_section_draws_the_ceilings_and_tabulates_them(tmp_path, proxy_documents, capsys):
    data = stored_run(tmp_path, machine_documents() + list(proxy_documents.values()))
    html = section_html(render_report(data, only=("roofline",)), "roofline")
    assert html.count("<svg") == 1
    ceilings = {(row["ceiling"], row["threads"]): row for row in table_with(html, "ceiling")}
    assert ceilings["peak double, avx2", "1"]["median [95 % CI]"].startswith("32 [")
    memory = ceilings["bandwidth memory", "1"]
    assert memory["median [95 % CI]"] == "21 [20, 22] GB/s"
    assert memory["ridge point, flop/byte (double)"] == f"{32 / 21:.3g}"
    points = {row["proxy point"]: row for row in table_with(html, "proxy point")}
    assert len(points) == len(proxy_documents)
    for p in roof_of(data).points:
        bound = min(32e9, p.intensity * 21e9)
        assert points[p.label]["% of bound"] == f"{100 * p.rate.median / bound:.3g} %"
    print_summary(RunData.load(Store(tmp_path / "roofline.db"), data.run["id"]))
    out = capsys.readouterr().out
    assert "roofline" in out and "ridge point (double, memory)" in out


# -- end to end -----------------------------------------------------------------------------------
SUITE = """
description = "the roofline from a few seconds of measurements"

[[step]]
benchmark = "cpu.peakflops"
precision = ["double", "single"]
isa = "scalar"
threads = 1

[[step]]
benchmark = "mem.bandwidth"
op = "triad"
bytes = { from = "4KiB", to = "4xLLC", per_doubling = 1 }
threads = 1
samples = 3
min_sample_time = "1ms"

[[step]]  # memory: 4x hwloc's LLC (memory begins at twice it)
benchmark = "mem.bandwidth"
op = "triad"
bytes = "{memory_bytes}"
threads = 1
samples = 3
min_sample_time = "1ms"

[[step]]
benchmark = "app.spmv"
problem = "laplace2d"
n = 30
variants = "read_element"
samples = 3
"""


def test_a_run_through_the_cli_draws_its_roofline(cli, tmp_path):
    suite, out = tmp_path / "roofline.toml", tmp_path / "out"
    suite.write_text(
        SUITE.replace("{memory_bytes}", str(4 * Machine.detect().last_level_cache_bytes))
    )
    done = cli("run", str(suite), "--out", str(out))
    assert done.code == 0, done.err
    html = section_html(next(out.glob("run-*.html")).read_text(), "roofline")
    assert "<svg" in html and "to draw the roofline" not in html
    rows = table_with(html, "proxy point")
    assert len(rows) == 1 and rows[0]["% of bound"].endswith("%")
    ceilings = {row["ceiling"] for row in table_with(html, "ceiling")}
    assert {"peak double, scalar", "peak single, scalar", "bandwidth memory"} <= ceilings
