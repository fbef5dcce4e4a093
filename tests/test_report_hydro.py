"""The app.hydro report section after small real measurements through the CLI (the comm atlas
the documents carry is the stored comm results; the model's cycle time recomputed here from them
and the np = 1 compute time), and the model's arithmetic on exact made-up documents."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_report_apps import by_metric, run_suite, section_html, table_with

from perfatlas.app import analysis_hydro
from perfatlas.app.proxy_figures import seconds
from perfatlas.comm.comm_atlas import allreduce_ns, message_ns
from perfatlas.common.stats import ratio
from perfatlas.common.units import format_number
from perfatlas.store.database import Store

SUITE = """
[[step]]
benchmark = "comm.pingpong"
np = 2
min_bytes = "1KiB"
max_bytes = "8KiB"
samples = 3
min_sample_time = "1ms"
time_limit = "0.1s"

[[step]]
benchmark = "comm.allreduce"
np = 2
samples = 3
min_sample_time = "1ms"
time_limit = "0.1s"

[[step]]
benchmark = "app.hydro"
nx = 6
ny = 6
cells_per_pe = 144
cycles = 4
np = [1, 2]
repeat = 3
"""


def one_way_ns(pingpong: dict[int, float], size: float) -> float:
    """Log-log interpolation between the stored sizes around `size`."""
    sizes = sorted(pingpong)
    above = next(s for s in sizes if s >= size)
    below = max(s for s in sizes if s <= size)
    if above == below:
        return pingpong[above]
    share = (math.log(size) - math.log(below)) / (math.log(above) - math.log(below))
    return math.exp(
        math.log(pingpong[below]) + share * (math.log(pingpong[above]) - math.log(pingpong[below]))
    )


def test_hydro_section_draws_the_model_from_the_stored_comm_atlas(cli, tmp_path):
    html, results = run_suite(cli, tmp_path, SUITE)
    section = section_html(html, "app-hydro")
    assert section.count("<svg") == 1
    one = by_metric(results, "app.hydro", np=1)
    two = by_metric(results, "app.hydro", np=2)
    pingpong = {
        r.params["bytes"]: r.median
        for r in results
        if r.benchmark == "comm.pingpong" and r.metric == "latency_ns"
    }
    [allreduce] = [r.median for r in results if r.benchmark == "comm.allreduce"]
    # the document carries the stored medians (the latest run of this machine: this one)
    atlas = two["cycle_s"].document["derived"]["comm_atlas"]
    assert atlas["pingpong"] == [[b, t] for b, t in sorted(pingpong.items())]
    assert sorted(pingpong) == [1024, 2048, 4096, 8192]
    assert atlas["allreduce"] == [[2, allreduce]]
    assert "comm.pingpong of run" in atlas["source"] and "comm.allreduce of run" in atlas["source"]
    # np = 2 on 6 x 6 x 8 (periodic): each slab of 4 planes receives 2 planes above and 2 below
    # (wrapped), all the other's: one message of 144 cells per sweep, 3 sweeps per cycle; one
    # time-step reduction per cycle
    derived = two["cycle_s"].document["derived"]
    assert [m["cells"] for m in derived["exchange"]["per_rank"][0]["receive"]] == [144]
    compute = float(np.median(one["compute_s"].samples))
    gather = 3 * one_way_ns(pingpong, 144 * 40) * 1e-9
    expected = compute + gather + allreduce * 1e-9
    rows = {r["np"]: r for r in table_with(section, "model cycle")}
    assert rows["2"]["model cycle"] == seconds(expected)
    assert rows["2"]["model gather/scatter"] == seconds(gather)
    assert rows["1"]["model cycle"] == seconds(compute)  # one rank: no messages, no reduction
    efficiency = ratio(one["cycle_s"].samples, two["cycle_s"].samples)
    assert rows["2"]["efficiency T(1)/T(np) [95 % CI]"].startswith(
        f"{format_number(efficiency.median)} ["
    )
    assert rows["1"]["efficiency T(1)/T(np) [95 % CI]"] == "1 [1, 1]"
    assert rows["2"]["model efficiency"] == format_number(compute / expected)
    assert rows["2"]["global grid"] == "6 x 6 x 8" and rows["2"]["most neighbours"] == "1"
    rates = {r["np"]: r for r in table_with(section, "against one process [95 % CI]")}
    assert rates["1"]["against one process [95 % CI]"] == "1 [1, 1]"
    against = ratio(two["cc_per_s_per_pe"].samples, one["cc_per_s_per_pe"].samples)
    assert rates["2"]["against one process [95 % CI]"].startswith(
        f"{format_number(against.median)} ["
    )
    assert rates["2"]["processes per node"] == "2"
    assert "comm.pingpong of run" in section and "T(np) = c t_cell" in section
    # the run's stored findings state the same model against the measured cycle time
    store = Store(cli.db)
    stored = store.findings(store.resolve_run("last"))["findings"]
    cycles = {f["subject"].rsplit("np=", 1)[1]: f for f in stored if f["kind"] == "app.hydro.cycle"}
    assert cycles["2"]["details"]["predicted_s"] == pytest.approx(expected)
    assert cycles["2"]["value"] == pytest.approx(float(np.median(two["cycle_s"].samples)))
    assert cycles["1"]["details"]["predicted_s"] == pytest.approx(compute)


def test_without_a_stored_atlas_the_section_says_what_to_measure(cli, tmp_path):
    hydro_only = SUITE[SUITE.index('[[step]]\nbenchmark = "app.hydro"') :]
    html, _ = run_suite(cli, tmp_path, hydro_only)
    section = section_html(html, "app-hydro")
    assert "no stored comm.pingpong of this machine (measure comm.pingpong first)" in section
    rows = {r["np"]: r for r in table_with(section, "model cycle")}
    assert rows["1"]["model cycle"] != "-"  # one rank needs no atlas


def exchange(per_rank: list[list[int]], cg: float = 0.0) -> dict:
    return {
        "exchanges_per_cycle": 3,
        "cg_exchanges_per_cycle": cg,
        "bytes_per_cell": 40,
        "cg_bytes_per_cell": 8,
        "per_rank": [
            {"rank": r, "receive": [{"rank": 0, "cells": c} for c in cells]}
            for r, cells in enumerate(per_rank)
        ],
    }


def test_the_busiest_rank_sets_the_gather_scatter_time():
    """Two ranks: one receiving 3 messages of 100 cells, one receiving 1 of 400 cells, with a
    ping-pong of 1 us at 4000 B and 2 us at 16000 B (log-log: 4000 B -> 1 us)."""
    pingpong = [[4000, 1000.0], [16000, 2000.0]]
    assert message_ns(pingpong, 4000) == pytest.approx(1000.0)
    assert message_ns(pingpong, 8000) == pytest.approx(1000.0 * math.sqrt(2))
    assert message_ns(pingpong, 32000) == pytest.approx(4000.0)  # the last time per byte
    seconds_ = analysis_hydro.exchange_seconds(exchange([[100, 100, 100], [400]]), pingpong)
    assert seconds_ == pytest.approx(3 * 3 * 1000e-9)  # 3 sweeps x 3 messages of 4000 B
    with_cg = analysis_hydro.exchange_seconds(exchange([[500]], cg=4.0), pingpong)
    assert with_cg == pytest.approx(3 * message_ns(pingpong, 20000) * 1e-9 + 4 * 1000e-9)
    assert allreduce_ns([[2, 10.0], [8, 40.0]], 4) == pytest.approx(25.0)  # midway in log2 P
    assert allreduce_ns([[2, 10.0]], 1) == 0.0
