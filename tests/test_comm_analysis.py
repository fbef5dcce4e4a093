"""Anomaly detection, the growth check of collectives and the shared-core warning, on synthetic
data (perfatlas.comm.analysis_comm)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from perfatlas.comm.analysis_comm import (
    find_anomalies,
    growth,
    robust_outliers,
)
from perfatlas.common.warning import Kind
from perfatlas.launch.contract import rank_sharing_warnings
from perfatlas.store.result import Result


def ranks(hosts: list[str], cpus: list[str] | None = None, boot: str = "b" * 36) -> list[dict]:
    cpus = cpus or ["0-1"] * len(hosts)
    return [
        {"rank": r, "host": h, "cpus_allowed": c, "cpu": 0, "pid": 100 + r, "boot_id": boot}
        for r, (h, c) in enumerate(zip(hosts, cpus))
    ]


def distance_result(peer: int, metric: str, median: float, hosts: list[str], id_: int) -> Result:
    rng = np.random.default_rng(peer)
    samples = list(median * (1 + 0.01 * rng.standard_normal(7)))
    link = "intra-node" if hosts[0] == hosts[peer] else "inter-node"
    document = {
        "benchmark": "comm.distance",
        "params": {"np": len(hosts), "peer": peer, "latency_bytes": 8, "bandwidth_bytes": 65536},
        "placement": {"ranks": ranks(hosts), "link": link, "involved": [0, peer]},
    }
    return Result(
        id_, 1, "comm.distance", document["params"], metric,
        "byte/s" if metric.endswith("_Bps") else "ns", samples, 7, float(np.median(samples)),
        min(samples), max(samples), min(samples), max(samples), None, [], document,
    )  # fmt: skip


# 8 ranks on 8 hosts, one rank per host; rank 0 on h0.
HOSTS = [f"h{i}" for i in range(8)]


def distance_run(bandwidth: dict[int, float], latency: dict[int, float]) -> list[Result]:
    results = []
    for peer in range(1, 8):
        results.append(
            distance_result(peer, "bandwidth_Bps", bandwidth.get(peer, 1e9), HOSTS, peer)
        )
        results.append(
            distance_result(peer, "latency_ns", latency.get(peer, 2000.0), HOSTS, 100 + peer)
        )
    return results


def test_a_planted_slow_link_is_flagged_and_its_host_named():
    report = find_anomalies(distance_run(bandwidth={3: 2.5e7}, latency={}))
    (anomaly,) = report.anomalies
    assert anomaly.subject == "rank 3" and anomaly.metric == "bandwidth_Bps" and anomaly.worse
    assert anomaly.relative == pytest.approx(-0.975, abs=0.01) and anomaly.hosts == ("h0", "h3")
    assert [s.host for s in report.suspects] == ["h3"]  # not h0: it is in every pair
    assert report.groups_checked == 2 and report.figures_checked == 14


def test_a_uniform_set_flags_nothing():
    rng = np.random.default_rng(7)
    bandwidth = {peer: 1e9 * (1 + 0.03 * rng.standard_normal()) for peer in range(1, 8)}
    latency = {peer: 2000 * (1 + 0.03 * rng.standard_normal()) for peer in range(1, 8)}
    report = find_anomalies(distance_run(bandwidth, latency))
    assert report.anomalies == [] and report.suspects == [] and report.groups_checked == 2


def test_a_slow_latency_is_flagged_as_worse_and_a_fast_one_as_better():
    report = find_anomalies(distance_run({}, latency={2: 9000.0, 5: 600.0}))
    found = {a.subject: a.worse for a in report.anomalies}
    assert found == {"rank 2": True, "rank 5": False}


def test_intra_and_inter_node_figures_are_never_compared():
    hosts = ["h0", "h0", "h0", "h0", "h1", "h1", "h1", "h1"]  # ranks 1-3 intra, 4-7 inter
    results = []
    for peer in range(1, 8):
        fast = hosts[peer] == "h0"
        results.append(distance_result(peer, "bandwidth_Bps", 1e10 if fast else 1e9, hosts, peer))
    report = find_anomalies(results)
    assert report.anomalies == [] and report.groups_checked == 2


def test_robust_outliers_need_both_the_z_score_and_the_relative_floor():
    assert robust_outliers([1.0, 1.0]) == []  # two figures: not judged
    assert robust_outliers([100, 101, 99, 100, 102]) == []  # MAD small, but within 25 %
    (only,) = robust_outliers([100, 101, 99, 100, 60])
    assert only.index == 4 and only.relative == pytest.approx(-0.4)
    (same,) = robust_outliers([5.0, 5.0, 5.0, 9.0])  # MAD = 0: any deviation beyond the floor
    assert same.index == 3 and math.isinf(same.robust_z)


def test_growth_recognizes_logarithmic_and_linear_shapes():
    p = [2, 4, 8, 16, 32, 64]
    assert growth(p, [5 + 3 * math.log2(x) for x in p]).verdict == "logarithmic"
    assert growth(p, [5 + 3 * x for x in p]).verdict == "linear"
    assert growth(p, [10, 10.5, 10.2, 10.8, 11, 10.4]).verdict == "flat"
    small = growth([2, 3, 4], [1.0, 2.0, 3.0])
    assert small.verdict == "inconclusive" and "factor of 4" in small.reason
    assert growth([2, 4], [1.0, 2.0]).verdict == "inconclusive"
    fit = growth(p, [5 + 3 * math.log2(x) for x in p]).log_fit
    assert fit.slope == pytest.approx(3) and fit.intercept == pytest.approx(5)


def test_ranks_bound_to_one_core_of_one_machine_get_the_fix():
    placement = {"ranks": ranks(["pa1", "pa2", "pa3", "pa4"], ["0", "0", "0", "0"])}
    (warning,) = rank_sharing_warnings(placement)
    assert warning.kind is Kind.RANKS_SHARE_CORE and warning.metric is None
    assert warning.message.startswith("ranks share a core: ranks 0-3 (hosts pa1, pa2, pa3, pa4)")
    assert "--bind-to none" in warning.fix


def test_only_the_ranks_a_measurement_involves_can_take_turns_on_a_core():
    """The distance scan pins rank 0 to one core and its peers to the other: each pair spans
    two cores while the ranks outside it sleep."""
    pinned = ranks(["pa1", "pa2", "pa3", "pa4"], ["0", "1", "1", "1"])
    assert rank_sharing_warnings({"ranks": pinned, "involved": [0, 2]}) == []
    (warning,) = rank_sharing_warnings({"ranks": pinned, "involved": [0, 1, 2, 3]})
    assert warning.message.startswith("ranks share a core: ranks 1-3 (hosts pa2, pa3, pa4)")
    (pair,) = rank_sharing_warnings({"ranks": pinned, "involved": [2, 3]})
    assert pair.message.startswith("ranks share a core: ranks 2-3 (hosts pa3, pa4)")


def test_ranks_on_their_own_cores_or_machines_are_fine():
    assert rank_sharing_warnings({"ranks": ranks(["a", "a"], ["0", "1"])}) == []
    machines = [dict(r, boot_id=str(i) * 36) for i, r in enumerate(ranks(["a", "b"], ["0", "0"]))]
    assert rank_sharing_warnings({"ranks": machines}) == []
    (over,) = rank_sharing_warnings({"ranks": ranks(["a"] * 4, ["0-1"] * 4)})
    assert over.kind is Kind.OVERSUBSCRIBED and over.message.startswith("oversubscribed: 4 ranks")
