"""mem.numa_matrix on this machine (a 1x1 matrix on one node), its bad input, and the analysis of
a matrix with memory-only and CPU-only nodes (tests/test_numa_vm.py runs it on 2 and 4 nodes)."""

from __future__ import annotations

import re
import subprocess

import pytest

from perfatlas.launch.isa import emulated
from perfatlas.launch.native import executable
from perfatlas.machine.topology import Machine
from perfatlas.mem.analysis_numa import numa_matrices, summary_line
from perfatlas.report import write_report
from perfatlas.store.database import Store
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

TINY = ["latency_bytes=1MiB", "bandwidth_bytes=2MiB", "samples=3", "min_sample_time=1ms"]


def test_one_launch_measures_every_cpu_node_against_every_memory_node(cli, tmp_path, read_json):
    done = cli("measure", "mem.numa_matrix", *TINY, "--json", str(tmp_path / "m.json"))
    assert done.code == 0, done.err
    documents = read_json(tmp_path / "m.json")
    documents = documents if isinstance(documents, list) else [documents]
    machine = Machine.detect()
    node_of = {pu["os_index"]: pu["numa_node"] for pu in machine.topology["pus"]}
    with_pus = set(node_of.values())
    cells = {(d["params"]["cpu_node"], d["params"]["mem_node"], d["params"]["measure"]): d
             for d in documents}  # fmt: skip
    assert set(cells) == {
        (c, m, k) for c in with_pus for m in machine.numa_nodes for k in ("latency", "bandwidth")
    }
    for (cpu_node, mem_node, measure), document in cells.items():
        assert "not_measurable" not in document, document["not_measurable"]
        if emulated():  # qemu-user has no mbind or move_pages: nothing is bound or read back
            assert document["placement"]["pages_on_node"] is None
        else:
            assert document["placement"]["pages_on_node"] == {str(mem_node): 1.0}
            assert document["placement"]["mempolicy_applied"] == f"bind {mem_node}"
        pinned = [int(t["cpus_allowed"]) for t in document["placement"]["threads"]]
        assert {node_of[cpu] for cpu in pinned} == {cpu_node}  # the row's PUs, one each
        metric = "latency_ns" if measure == "latency" else "bandwidth_Bps"
        assert len(document["samples"][metric]) == 3 and min(document["samples"][metric]) > 0
        if measure == "bandwidth":
            assert document["derived"]["verified"] is True

    store = Store(cli.db)
    run_id = store.runs()[-1]["id"]
    html = write_report(RunData.load(store, run_id), tmp_path / "report.html").read_text()
    section = re.search(r'<section id="numa-matrix">(.*?)</section>', html, re.S)
    assert section and "<svg" in section.group(1) and "CPU node" in section.group(1)
    assert summary_line(numa_matrices(store.results(run_id))).startswith(
        f"NUMA matrix, {len(with_pus)} CPU x {len(machine.numa_nodes)} memory node(s): "
        "latency local "
    )
    shown = cli("show", str(run_id))
    assert shown.code == 0


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["threads=4097"], "threads=4097 is out of range"),
        (["page=8KiB"], "page"),
        (["latency_bytes=1KiB"], "latency_bytes"),
    ],
)
def test_bad_input_is_one_sentence_and_status_2(words, message):
    done = subprocess.run(
        [str(executable("pa-mem-numa-matrix")), *words], capture_output=True, text=True
    )
    assert done.returncode == 2 and message in done.stderr
    assert done.stderr.count("\n") == 1 and not done.stdout


def test_more_threads_than_a_node_has_is_refused_before_measuring(cli):
    too_many = len(Machine.detect().pus) + 1
    done = cli("measure", "mem.numa_matrix", f"threads={too_many}", *TINY)
    assert done.code == 2
    assert f"threads={too_many} exceeds the" in done.err and done.err.count("\n") == 1


def _result(cpu_node: int, mem_node: int, metric: str, samples: list[float], distance: int):
    measure = "latency" if metric == "latency_ns" else "bandwidth"
    params = {"cpu_node": cpu_node, "mem_node": mem_node, "measure": measure, "page": 4096}
    median = sorted(samples)[len(samples) // 2]
    return Result(
        0, 1, "mem.numa_matrix", params, metric, "ns" if measure == "latency" else "byte/s",
        samples, len(samples), median, min(samples), max(samples), min(samples), max(samples),
        None, [], {"derived": {"distance": distance}},
    )  # fmt: skip


def test_penalties_against_the_local_node_and_memory_only_columns():
    # nodes 0 and 1 have CPUs and memory, node 2 memory only (a CXL expander), node 3 CPUs only
    distance = {(0, 0): 10, (0, 1): 21, (0, 2): 40, (1, 0): 21, (1, 1): 10, (1, 2): 40,
                (3, 0): 30, (3, 1): 20, (3, 2): 50}  # fmt: skip
    latency = {(0, 0): 100, (0, 1): 150, (0, 2): 300, (1, 0): 160, (1, 1): 100, (1, 2): 310,
               (3, 0): 210, (3, 1): 140, (3, 2): 400}  # fmt: skip
    results = [
        _result(c, m, "latency_ns", [v * f for f in (0.99, 1.0, 1.01, 1.0, 1.0)], distance[c, m])
        for (c, m), v in latency.items()
    ] + [
        _result(c, m, "bandwidth_Bps", [2e10 / (latency[c, m] / 100)] * 5, distance[c, m])
        for c, m in latency
    ]
    latency_matrix, bandwidth_matrix = numa_matrices(results)
    assert latency_matrix.cpu_nodes == [0, 1, 3] and latency_matrix.mem_nodes == [0, 1, 2]
    assert latency_matrix.medians().shape == (3, 3)
    # node 3 has no memory: its reference is the nearest node by distance, node 1
    assert latency_matrix.reference(3) == 1
    penalties = {(p.cpu_node, p.mem_node): p for p in latency_matrix.penalties()}
    assert set(penalties) == {(0, 1), (0, 2), (1, 0), (1, 2), (3, 0), (3, 2)}
    assert penalties[0, 1].factor.median == pytest.approx(1.5)
    assert penalties[3, 2].factor.median == pytest.approx(400 / 140)
    # bandwidth: local / remote, so that > 1 is worse here too
    worst = bandwidth_matrix.worst()
    assert (worst.cpu_node, worst.mem_node) == (1, 2) and worst.factor.median == pytest.approx(3.1)
    line = summary_line([latency_matrix, bandwidth_matrix])
    assert line.startswith("NUMA matrix, 3 CPU x 3 memory node(s): latency local 100 ns")
    assert "worst remote 3.10x" in line and "(cpu node 1 -> memory node 2)" in line
