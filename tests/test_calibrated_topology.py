"""perfatlas export RUN --format hwloc: the run's topology with its measured memory latency and
bandwidth as hwloc memory attributes, read back by hwloc itself (`lstopo --memattrs` on the file
through HWLOC_XMLFILE) and held against the stored medians; and its bad input."""

from __future__ import annotations

import contextlib
import io
import shutil
import sqlite3
import subprocess
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from hwloc_memattrs import lstopo_memattrs

from perfatlas.cli.entry import main
from perfatlas.export.hwloc_export import memory_figures
from perfatlas.launch.native import bin_dir, executable
from perfatlas.machine.topology import Machine
from perfatlas.store.database import Store
from perfatlas.store.result import Result
from perfatlas.store.schema import SCHEMA_VERSION

MiB = 2**20
SUITE = """
description = "a short memory run for the calibrated topology"

[[step]]  # a cache-level size and a memory-level one: only the latter is memory's latency
benchmark = "mem.latency"
bytes = [65536, {memory}]
samples = 3
min_sample_time = "2ms"

[[step]]
benchmark = "mem.bandwidth"
op = ["triad", "read", "write"]
bytes = {memory}
samples = 3
min_sample_time = "2ms"

[[step]]
benchmark = "mem.numa_matrix"
samples = 3
min_sample_time = "2ms"
"""
BANDWIDTH = {"triad": "Bandwidth", "read": "ReadBandwidth", "write": "WriteBandwidth"}
MATRIX = {"latency_ns": "Latency", "bandwidth_Bps": "ReadBandwidth"}


def perfatlas(*words: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(words))
        except SystemExit as exit_:
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> tuple[Path, int]:
    """A short mem.latency + mem.bandwidth + mem.numa_matrix run through the CLI, at 4x hwloc's
    last-level cache: memory's working set on any machine."""
    folder = tmp_path_factory.mktemp("calibrated")
    memory = 4 * Machine.detect().last_level_cache_bytes
    (folder / "suite.toml").write_text(SUITE.format(memory=memory))
    db = folder / "perfatlas.db"
    code, _, err = perfatlas(
        "--db", str(db), "run", str(folder / "suite.toml"), "--llc", "hwloc", "--out", str(folder)
    )
    assert code == 0, err
    return db, Store(db).runs()[-1]["id"]


def cpus_of(result) -> tuple[int, ...]:
    threads = result.document["placement"]["threads"]
    return tuple(sorted(t["cpu_requested"] for t in threads))


def expected_values(db: Path, run_id: int) -> dict[tuple, int]:
    """(attribute, PUs, NUMA node) -> value in hwloc's unit, straight from the stored medians:
    the matrix's cells, then mem.latency's and mem.bandwidth's largest working sets over them."""
    store = Store(db)
    results = [r for r in store.results(run_id) if r.samples]
    node_of = {pu["os_index"]: pu["numa_node"] for pu in store.run(run_id)["topology"]["pus"]}
    values = {}
    for r in results:
        if r.benchmark == "mem.numa_matrix":
            scale = 1 if r.metric == "latency_ns" else MiB
            key = (MATRIX[r.metric], cpus_of(r), r.params["mem_node"])
            values[key] = round(r.median / scale)
    latency = max(
        (r for r in results if r.benchmark == "mem.latency"), key=lambda r: r.params["bytes"]
    )
    values[("Latency", cpus_of(latency), node_of[cpus_of(latency)[0]])] = round(latency.median)
    for r in results:
        if r.benchmark == "mem.bandwidth":
            key = (BANDWIDTH[r.params["op"]], cpus_of(r), node_of[cpus_of(r)[0]])
            values[key] = round(r.median / MiB)
    return values


@pytest.mark.skipif(not shutil.which("lstopo"), reason="lstopo (hwloc) is not installed")
def test_hwloc_reads_back_the_stored_medians_in_its_units(measured, tmp_path):
    db, run_id = measured
    xml = tmp_path / "machine.xml"
    code, out, err = perfatlas(
        "--db", str(db), "export", str(run_id), "--format", "hwloc", "-o", str(xml)
    )
    assert code == 0, err
    expected = expected_values(db, run_id)
    assert {attribute for attribute, _, _ in expected} == {
        "Latency",
        "Bandwidth",
        "ReadBandwidth",
        "WriteBandwidth",
    }
    read_back = lstopo_memattrs(xml)
    assert {key: read_back.get(key) for key in expected} == expected
    assert f"{len(expected)} measured memory attribute value(s) of run {run_id}" in out

    # where every value came from, beside it: on the root and on the target NUMA nodes
    root = ElementTree.parse(xml).getroot().find("object")
    infos = {i.get("name"): i.get("value") for i in root.findall("info")}
    assert infos["PerfatlasRun"] == str(run_id)
    measured_infos = [
        info.get("value")
        for node in root.iter("object")
        if node.get("type") == "NUMANode"
        for info in node.findall("info")
        if info.get("name") == "PerfatlasMeasured"
    ]
    assert sorted(v.split(" ")[0] for v in measured_infos) == sorted(
        f"{attribute}={value}" for (attribute, _, _), value in expected.items()
    )


def test_without_output_the_xml_goes_to_standard_output(measured):
    db, run_id = measured
    code, out, _ = perfatlas("--db", str(db), "export", str(run_id), "--format", "hwloc")
    assert code == 0 and out.startswith("<?xml") and '<memattr name="Latency"' in out


def test_a_run_without_latency_or_bandwidth_is_one_sentence(tmp_path):
    db = tmp_path / "p.db"
    assert perfatlas("--db", str(db), "measure", "example.sum", "bytes=64KiB")[0] == 0
    code, _, err = perfatlas(
        "--db", str(db), "export", "last", "--format", "hwloc", "-o", str(tmp_path / "m.xml")
    )
    assert code == 2 and "measure mem.latency" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m.xml").exists()


def test_an_unknown_run_or_a_missing_folder_is_one_sentence(measured, tmp_path):
    db, run_id = measured
    code, _, err = perfatlas(
        "--db", str(db), "export", "999", "--format", "hwloc", "-o", str(tmp_path / "m.xml")
    )
    assert code == 2 and "run 999 is not in" in err
    missing = tmp_path / "missing" / "m.xml"
    code, _, err = perfatlas(
        "--db", str(db), "export", str(run_id), "--format", "hwloc", "-o", str(missing)
    )
    assert code == 2 and "does not exist" in err and not missing.parent.exists()


def test_a_run_stored_before_the_xml_was_kept_uses_this_machine_only_if_it_is_the_same(
    measured, tmp_path
):
    """A version-4 database (no topology_xml column) is upgraded; its runs export with this
    machine's topology where the fingerprint matches, and are refused where it does not."""
    db = tmp_path / "old.db"
    with sqlite3.connect(measured[0]) as source, sqlite3.connect(db) as copy:
        source.backup(copy)  # the WAL's pages too
    run_id = measured[1]
    with sqlite3.connect(db) as old:
        old.execute("ALTER TABLE runs DROP COLUMN topology_xml")
        old.execute("UPDATE schema_version SET version = 4")
    store = Store(db)
    assert store.db.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    assert store.topology_xml(run_id) is None
    store.close()
    xml = tmp_path / "m.xml"
    code, _, err = perfatlas(
        "--db", str(db), "export", str(run_id), "--format", "hwloc", "-o", str(xml)
    )
    assert code == 0 and "using this machine's" in err and xml.read_text().startswith("<?xml")
    with sqlite3.connect(db) as old:
        old.execute("UPDATE runs SET fingerprint = 'another machine' WHERE id = ?", (run_id,))
    code, _, err = perfatlas(
        "--db", str(db), "export", str(run_id), "--format", "hwloc", "-o", str(xml)
    )
    assert code == 2 and "not the machine it measured" in err


@pytest.mark.parametrize(
    "line, complaint",
    [
        ("value\tNoSuchAttribute\t0\t0\t1", "no memory attribute"),
        ("value\tLatency\t0\t4096\t1", "NUMA node '4096'"),
        ("value\tLatency\tcpus\t0\t1", "not a CPU list"),
        ("value\tLatency\t0\t0\t-5", "not an unsigned integer"),
        ("info\troot\tonly three", "neither a 'value' line"),
        ("info\troot\tPerfatlasRun\t" + "x" * 5000, "longer than 4094 characters"),
    ],
)
def test_pa_hwloc_export_refuses_a_bad_values_line_in_one_sentence(tmp_path, line, complaint):
    (tmp_path / "values.tsv").write_text(line + "\n")
    done = subprocess.run(
        [
            str(executable("pa-hwloc-export")),
            f"values={tmp_path / 'values.tsv'}",
            f"xml={tmp_path / 'm.xml'}",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and complaint in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "m.xml").exists()


def test_a_build_without_pa_hwloc_export_still_measures_and_stores_no_xml(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    for program in bin_dir().iterdir():
        if program.name != "pa-hwloc-export":
            (folder / program.name).symlink_to(program)
    monkeypatch.setenv("PERFATLAS_BIN_DIR", str(folder))
    db = tmp_path / "p.db"
    assert perfatlas("--db", str(db), "measure", "example.sum", "bytes=64KiB")[0] == 0
    store = Store(db)
    assert store.topology_xml(store.runs()[-1]["id"]) is None


# -- which result gives which value, on a two-node machine described by hand ----------------------
TWO_NODES = {
    "topology": {
        "pus": [{"os_index": 0, "numa_node": 0}, {"os_index": 1, "numa_node": 1}],
        "caches": [{"level": 3, "type": "unified", "size_bytes": 32 * MiB}],
    },
    "context": {"llc": {"used": "probe", "effective_bytes": 4 * MiB}},
}


def result(benchmark: str, metric: str, median: float, params: dict, pages=None, threads=(0,)):
    placement = {
        "threads": [{"thread": t, "cpu_requested": c} for t, c in enumerate(threads)],
        "pages_on_node": pages,
    }
    return Result(
        len(params), 1, benchmark, params, metric, "", [median], 1, median, None, None, median,
        median, None, [], {"placement": placement},
    )  # fmt: skip


def test_values_follow_the_memory_and_the_measuring_pus():
    local = {"bytes": 64 * MiB, "cpus": [0], "cpu": 0, "owner": 0, "node": "local"}
    figures = memory_figures(
        TWO_NODES,
        [
            # cache-sized against hwloc's L3 (2x 32 MiB), though 16x the probed 4 MiB: left out
            result("mem.latency", "latency_ns", 40.0, {**local, "bytes": 16 * MiB}, {"0": 1.0}),
            result("mem.latency", "latency_ns", 90.4, local, {"0": 1.0}),
            # the two-thread method: PU 1 reads PU 0's memory, on node 0
            result("mem.latency", "latency_ns", 140.6, {**local, "cpus": [0, 1], "cpu": 1}),
            # memory that did not stay on the node asked for: no target
            result("mem.latency", "latency_ns", 120.0, {**local, "cpu": 0, "node": 1}, {"1": 0.6}),
            result(
                "mem.bandwidth", "bandwidth_Bps", 10 * 2**30, {"bytes": 64 * MiB, "op": "triad"}
            ),
            result("mem.bandwidth", "bandwidth_Bps", 5 * 2**30, {"bytes": 64 * MiB, "op": "copy"}),
            # the matrix: its (PU 0, node 0) latency is mem.latency's already
            result("mem.numa_matrix", "latency_ns", 70.0, {"cpu_node": 0, "mem_node": 0}),
            result("mem.numa_matrix", "latency_ns", 150.2, {"cpu_node": 0, "mem_node": 1}),
        ],
    )
    assert [(f.attribute, f.initiator, f.target, f.value) for f in figures] == [
        ("Bandwidth", (0,), 0, 10 * 1024),
        ("Latency", (0,), 0, 90),
        ("Latency", (0,), 1, 150),
        ("Latency", (1,), 0, 141),
    ]
