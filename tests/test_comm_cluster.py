"""Several hosts on this one machine (network namespaces, ../shared/tools/netns-cluster): the
inter-node label comes from the ranks' host names, a planted slow link (a throttled host) is
flagged by the anomaly detection, and Open MPI's default binding — every host's first rank on
core 0 of the same machine — is reported with its fix."""

from __future__ import annotations

import os
import random
import shlex
import subprocess
from pathlib import Path

import pytest
from machine_load import skip_when_cores_are_busy
from netns_hosts import (
    hosts_lock,
    hosts_unavailable,
    hosts_up,
    pair_spanning_args,
    remove_stray_links,
)

from perfatlas.comm.analysis_comm import find_anomalies
from perfatlas.common.warning import Kind
from perfatlas.store.database import Store

TOOL = Path(
    os.environ.get(
        "PERFATLAS_NETNS_CLUSTER",
        Path(__file__).resolve().parents[2] / "shared" / "tools" / "netns-cluster",
    )
)
FAST = ["samples=9", "min_sample_time=1ms", "time_limit=1s", "warmup=20"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Four hosts pa1..pa4; pa3's link throttled to 200 Mbit/s; the mpirun arguments.

    The hosts are global (namespaces pa1..pa4): a lock keeps two test runs from tearing down
    each other's cluster; every mpirun is bounded by PERFATLAS_LAUNCH_TIMEOUT."""
    why = hosts_unavailable(TOOL)
    if why:
        pytest.skip(why)
    folder = tmp_path_factory.mktemp("cluster")
    with hosts_lock():
        try:
            hosts_up(TOOL, 4, folder)
            subprocess.run([str(TOOL), "throttle", "pa3", "200mbit"], check=True, timeout=60)
            os.environ["PERFATLAS_LAUNCH_TIMEOUT"] = "120"
            yield shlex.split((folder / "mpirun-args").read_text())
        finally:
            os.environ.pop("PERFATLAS_LAUNCH_TIMEOUT", None)
            subprocess.run([str(TOOL), "down", str(folder)], capture_output=True, timeout=120)
            remove_stray_links()


def stored(cli) -> list:
    store = Store(cli.db)
    return store.results(store.resolve_run("last"))


def test_hosts_are_labelled_inter_node_and_the_slow_link_is_flagged(cli, cluster):
    args = shlex.join([*cluster, "--map-by", "node"])
    result = cli(
        "measure", "comm.distance", "np=4", "bandwidth_bytes=64KiB", "window=8", *FAST,
        "--mpirun-args", args,
    )  # fmt: skip
    assert result.code == 0, result.err
    results = stored(cli)
    hosts = [r["host"] for r in results[0].document["placement"]["ranks"]]
    assert hosts == ["pa1", "pa2", "pa3", "pa4"]  # read back from the ranks
    assert {r.document["placement"]["link"] for r in results} == {"inter-node"}
    report = find_anomalies(results)
    slow = [a for a in report.anomalies if a.metric == "bandwidth_Bps"]
    assert [a.subject for a in slow] == ["rank 2"] and slow[0].worse, report.anomalies
    assert slow[0].hosts == ("pa1", "pa3") and slow[0].relative < -0.5
    assert "pa3" in [s.host for s in report.suspects]


def test_a_randomly_chosen_slow_host_is_named_in_every_trial(cli, cluster):
    """Issue 16: in each trial one of pa2..pa4 (a seeded random order of the three) is throttled;
    the anomaly rule, with its re-measurement, must name it in every trial. Rank 0 is on pa1,
    which every pair of the distance scan involves, so pa1 cannot be singled out; it is bound to
    CPU 0 and the others to CPU 1, so that every measured pair spans both CPUs (unbound, a pair
    may share one). Another host named beside it (a false alarm) is a disturbance of this test
    bed, four hosts on two CPUs, that outlasts the re-measurement: measured at about 1 trial in
    25 (docs/guide/communication.md, bench/slow_link_trials.py). A false alarm in 2 of the 3
    trials fails the test: at that rate it happens 0.5 % of the time; a rule that alarms in one
    trial of three, 26 % of the time."""
    skip_when_cores_are_busy()  # other processes' bursts read as slow links
    if (os.cpu_count() or 1) < 2:
        pytest.skip("pinning each pair across two cores needs two CPUs")
    subprocess.run([str(TOOL), "unthrottle", "pa3"], check=True, timeout=60)
    for host in ("pa1", "pa2", "pa3", "pa4"):  # what the TCP stacks remember of pa3's throttle
        subprocess.run(["ip", "-n", host, "tcp_metrics", "flush", "all"], timeout=60)
    args = shlex.join(pair_spanning_args(cluster, cli.db.parent, 4))
    false_alarms = []
    try:
        for trial, slow in enumerate(random.Random(16).sample(["pa2", "pa3", "pa4"], 3), 1):
            subprocess.run([str(TOOL), "throttle", slow, "200mbit"], check=True, timeout=60)
            db = cli.db.with_name(f"trial-{trial}.db")
            try:
                result = cli(
                    "measure", "comm.distance", "np=4", "bandwidth_bytes=64KiB", "window=8",
                    *FAST, "--mpirun-args", args, db_path=db,
                )  # fmt: skip
            finally:  # the throttle, and what the TCP stacks remember of it (a slow link)
                subprocess.run([str(TOOL), "unthrottle", slow], timeout=60)
                for host in ("pa1", "pa2", "pa3", "pa4"):
                    subprocess.run(["ip", "-n", host, "tcp_metrics", "flush", "all"], timeout=60)
            assert result.code == 0, result.err
            store = Store(db)
            report = find_anomalies(store.results(store.resolve_run("last")))
            named = {s.host for s in report.suspects}
            assert slow in named, (trial, slow, report)
            if named == {slow}:
                assert all(slow in a.hosts for a in report.anomalies if a.worse), report.anomalies
            else:
                false_alarms.append((trial, slow, report))
        assert len(false_alarms) <= 1, false_alarms
    finally:
        subprocess.run([str(TOOL), "throttle", "pa3", "200mbit"], check=True, timeout=60)


def test_every_host_binding_its_rank_to_core_0_is_reported_with_the_fix(cli, cluster):
    bound = [word for word in cluster if word not in ("--bind-to", "none")]  # Open MPI default
    result = cli(
        "measure", "comm.pingpong", "np=2", "max_bytes=8", *FAST,
        "--mpirun-args", shlex.join([*bound, "--map-by", "node"]),
    )  # fmt: skip
    assert result.code == 0, result.err
    results = stored(cli)
    ranks = results[0].document["placement"]["ranks"]
    assert [r["host"] for r in ranks] == ["pa1", "pa2"]
    if ranks[0]["cpus_allowed"] != ranks[1]["cpus_allowed"] or "," in ranks[0]["cpus_allowed"]:
        pytest.skip(f"this Open MPI did not bind both ranks to one core: {ranks}")
    warnings = [w for r in results for w in r.warnings if w.kind is Kind.RANKS_SHARE_CORE]
    assert warnings and "--bind-to none" in warnings[0].fix and "pa1, pa2" in warnings[0].message
