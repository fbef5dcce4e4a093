"""cpu.core_to_core: the ping-pong on this machine's pair (0, 1), its checks and bad input, and the
groups found from matrices generated from real topologies (tests/data/topologies), with noise."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from perfatlas.benchmarks.benchmark import get
from perfatlas.common.stats import summarize
from perfatlas.cpu.analysis_core_to_core import (
    OBJECTS,
    CoreMatrix,
    core_matrix,
    display_order,
    groups_found,
    sign_test,
)
from perfatlas.cpu.bench_core_to_core import NEEDS_TWO
from perfatlas.launch.native import executable
from perfatlas.machine.topology import Machine
from perfatlas.report import write_report
from perfatlas.store.database import Store
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

TINY = ["samples=15", "min_sample_time=200us"]
ZOO_DIR = Path(__file__).parent / "data" / "topologies"


def test_the_pair_here_both_directions_symmetric_and_checked(cli, tmp_path, read_json):
    done = cli("measure", "cpu.core_to_core", "cpus=0,1", *TINY, "--json", str(tmp_path / "m.json"))
    assert done.code == 0, done.err
    documents = read_json(tmp_path / "m.json")
    by_direction = {(d["params"]["initiator"], d["params"]["responder"]): d for d in documents}
    assert set(by_direction) == {(0, 1), (1, 0)}
    for (initiator, responder), document in by_direction.items():
        threads = document["placement"]["threads"]
        assert [t["cpus_allowed"] for t in threads] == [str(initiator), str(responder)]
        derived = document["derived"]
        # every round trip of every session (calibration included) was answered in order
        assert derived["round_trips_answered"] == derived["round_trips_sent"] > 0
        assert derived["sequence_checked"] is True and derived["verified"] is True
        assert derived["line_alignment_bytes"] == 128 and derived["interleaved"] is True
        assert len(document["samples"]["latency_ns"]) == 15
        assert min(document["samples"]["latency_ns"]) > 0

    store = Store(cli.db)
    run_id = store.runs()[-1]["id"]
    matrix = core_matrix(store.results(run_id))
    assert matrix is not None and matrix.cpus == [0, 1] and list(matrix.pairs) == [(0, 1)]
    # both directions, sample by sample (whether they are alike is the machine's: a hardware
    # effect that the findings judge; the synthetic matrices below check that judgement)
    assert len(matrix.directed[0, 1].samples) == len(matrix.directed[1, 0].samples) == 15
    # one level: the two CPUs of this machine form one group, which hwloc's objects explain
    (level,) = groups_found(matrix, store.run(run_id)["topology"])
    assert level.groups == [[0, 1]] and level.matches

    html = write_report(RunData.load(store, run_id), tmp_path / "report.html").read_text()
    section = re.search(r'<section id="core-to-core">(.*?)</section>', html, re.S)
    assert section and "<svg" in section.group(1) and "hwloc" in section.group(1)
    shown = cli("show", str(run_id))
    assert shown.code == 0


def test_a_skipped_sequence_number_fails_the_check():
    done = subprocess.run(
        [str(executable("pa-cpu-core-to-core")), "cpus=0,1", "samples=1", "min_sample_time=0"],
        capture_output=True,
        text=True,
        env={"PERFATLAS_CORE_TO_CORE_SKIP": "1", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 3
    assert "a number was skipped" in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["cpus=0"], "cpus=0 names one CPU; core-to-core latency needs two"),
        (["cpus=0,4095"], "cpu 4095 does not exist"),
        (["pairs=some"], "pairs='some' is not one of all, first"),
    ],
)
def test_bad_input_is_one_sentence_and_status_2(cli, words, message):
    done = cli("measure", "cpu.core_to_core", *words)
    assert done.code == 2 and message in done.err and done.err.count("\n") == 1


@pytest.mark.parametrize(
    ("words", "message"),
    [(["cpus=0"], "needs two"), (["cpus=0,4095"], "4095"), (["cpus=0,0"], "twice")],
)
def test_the_native_program_refuses_alike(words, message):
    done = subprocess.run(
        [str(executable("pa-cpu-core-to-core")), *words], capture_output=True, text=True
    )
    assert done.returncode == 2 and message in done.stderr and not done.stdout


def test_one_cpu_is_not_measurable_here():
    machine = Machine.detect()
    one = Machine(dict(machine.topology, pus=machine.topology["pus"][:1]))
    benchmark = get("cpu.core_to_core")
    params = benchmark.resolve({}, one)
    (document,) = benchmark.run(params, one)
    assert document["not_measurable"].startswith(NEEDS_TWO)


def test_first_measures_the_first_cpu_against_the_others(tmp_path, read_json):
    out = tmp_path / "first.json"
    done = subprocess.run(
        [str(executable("pa-cpu-core-to-core")), "cpus=1,0", "pairs=first", "directions=one",
         "samples=2", "min_sample_time=0", f"json={out}"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (document,) = read_json(out)
    assert (document["params"]["initiator"], document["params"]["responder"]) == (1, 0)
    assert document["derived"]["pairs"] == 1 and document["derived"]["interleaved"] is False


# -- groups from synthetic matrices on real topologies ---------------------------------------------
def _partitions(topology: dict) -> list[tuple[list[str], list[list[int]]]]:
    """hwloc's distinct sharing partitions of the PUs, finest first, each with its objects."""
    pus = topology["pus"]
    found: dict[tuple, list[str]] = {}
    for key, name in OBJECTS:
        if key is not None and all(pu.get(key, -1) < 0 for pu in pus):
            continue
        groups: dict[object, list[int]] = {}
        for pu in pus:
            owner = 0 if key is None else pu[key]
            groups.setdefault(owner if owner >= 0 else ("alone", pu["os_index"]), []).append(
                pu["os_index"]
            )
        found.setdefault(tuple(sorted(tuple(g) for g in groups.values())), []).append(name)
    return sorted(((names, [list(g) for g in p]) for p, names in found.items()),
                  key=lambda item: -len(item[1]))  # fmt: skip


def _synthetic(topology: dict, seed: int, samples: int = 5) -> CoreMatrix:
    """Both directions of every pair, latency 8 ns x 2^k for the finest shared partition k,
    each sample with 6 % lognormal noise."""
    partitions = _partitions(topology)
    cpus = [pu["os_index"] for pu in topology["pus"]]
    group = [{cpu: i for i, g in enumerate(p) for cpu in g} for _, p in partitions]
    rng = np.random.default_rng(seed)
    directed = {}
    for i, a in enumerate(cpus):
        for b in cpus[i + 1 :]:
            k = next(k for k, g in enumerate(group) if g[a] == g[b])
            for pair in ((a, b), (b, a)):
                values = list(8.0 * 2**k * rng.lognormal(0.0, 0.06, samples))
                s = summarize(values)
                directed[pair] = Result(
                    0, 1, "cpu.core_to_core", {"initiator": pair[0], "responder": pair[1]},
                    "latency_ns", "ns", values, samples, s.median, s.ci_lo, s.ci_hi, s.min,
                    s.max, None, [], {},
                )  # fmt: skip
    return CoreMatrix(directed)


# machines whose hwloc objects nest (a NUMA node inside a package or the reverse, never across)
NESTED = [
    "16em64t-4s2c2t.xml",  # 4 sockets x 2 cores x 2 threads, an L3 per socket
    "24em64t-2n6c2t-pci.xml",  # 2 sockets x 6 cores x 2 threads, a NUMA node each
    "96em64t-4n4d3ca2co-pci.xml",  # 4 NUMA nodes x 4 dies x 3 L3 x 2 cores sharing an L2
    "16amd64-4distances.xml",  # 8 packages of 2 cores, a NUMA node each, no L3
    "nvidiaDGX2.xml",
]


@pytest.mark.parametrize("name", NESTED)
def test_groups_recovered_from_a_matrix_generated_from_the_topology(name, monkeypatch):
    monkeypatch.setenv("HWLOC_XMLFILE", str(ZOO_DIR / name))
    monkeypatch.setenv("HWLOC_THISSYSTEM", "0")
    topology = Machine.detect().topology
    expected = _partitions(topology)
    matrix = _synthetic(topology, seed=len(name))
    levels = groups_found(matrix, topology)
    # the matrix holds every partition but the finest (PUs alone: no pair has latency there)
    expected = [(names, groups) for names, groups in expected if len(groups) < len(matrix.cpus)]
    assert [level.groups for level in levels] == [sorted(map(sorted, g)) for _, g in expected]
    assert [level.hwloc for level in levels] == [names for names, _ in expected]
    assert all(level.matches and level.agreement == 1.0 for level in levels)
    order = display_order(matrix.cpus, levels)
    for level in levels:  # every group is a contiguous block of the heatmap
        for group in level.groups:
            at = sorted(order.index(cpu) for cpu in group)
            assert at == list(range(at[0], at[0] + len(group)))
    assert not matrix.asymmetric()


def test_the_sign_test_finds_a_direction_slower_in_every_sample():
    slow, fast = [50.0 + i for i in range(15)], [40.0 + i for i in range(15)]
    assert sign_test(slow, fast) < 1e-4 < sign_test(slow, slow[::-1])
    assert sign_test([1.0] * 5, [1.0] * 5) == 1.0


def test_a_level_hwloc_does_not_explain_is_named_unmatched(monkeypatch):
    monkeypatch.setenv("HWLOC_XMLFILE", str(ZOO_DIR / "16em64t-4s2c2t.xml"))
    monkeypatch.setenv("HWLOC_THISSYSTEM", "0")
    topology = Machine.detect().topology
    matrix = _synthetic(topology, seed=3)
    # PU 0 and one of another socket made as close as SMT siblings
    far = next(pu["os_index"] for pu in topology["pus"] if pu["package"] != 0)
    for pair in ((0, far), (far, 0)):
        r = matrix.directed[pair]
        matrix.directed[pair] = Result(**{**r.__dict__, "samples": [8.0] * 5, "median": 8.0})
    matrix = CoreMatrix(matrix.directed)
    levels = groups_found(matrix, topology)
    assert not levels[0].matches and levels[0].name.startswith("unmatched (nearest: ")
    assert 0.9 < levels[0].agreement < 1.0


def test_a_star_matrix_checks_the_first_cpus_groups(monkeypatch):
    """pairs=first: only CPU 0's row; each level's group of CPU 0 is checked against hwloc."""
    monkeypatch.setenv("HWLOC_XMLFILE", str(ZOO_DIR / "24em64t-2n6c2t-pci.xml"))
    monkeypatch.setenv("HWLOC_THISSYSTEM", "0")
    topology = Machine.detect().topology
    full = _synthetic(topology, seed=5)
    star = CoreMatrix({p: r for p, r in full.directed.items() if 0 in p})
    levels = groups_found(star, topology)
    assert [level.hwloc for level in levels] == [
        ["core (SMT siblings)", "L2"],
        ["L3", "NUMA node", "package"],
        ["machine"],
    ]
    assert [len(next(g for g in level.groups if 0 in g)) for level in levels] == [2, 12, 24]
