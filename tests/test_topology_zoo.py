"""Every decision taken from the topology, on 12 machines perfatlas does not run on.

hwloc loads each machine from tests/data/topologies/ (HWLOC_XMLFILE, HWLOC_THISSYSTEM=0): 9 real
machines from hwloc's test corpus and 3 derived ones (a CXL memory-only node, HBM beside a
memory-side cache, GPU memory as NUMA nodes). What cannot happen on them (binding, measuring)
is not tried; what is decided from the topology is: the topology document, doctor, the plans of
every shipped suite, the PU orders of close and spread, the remote node, the report's section.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from conftest import ZOO_DIR

from perfatlas.launch.isa import cpu_model
from perfatlas.machine.cpu_order import close_order, cores, spread_order
from perfatlas.machine.topology import Machine
from perfatlas.plan.suite import suite_names
from perfatlas.report import write_report
from perfatlas.store.database import Store
from perfatlas.store.run_data import RunData

ZOO = sorted(path.name for path in ZOO_DIR.glob("*.xml"))


def hwloc_count(name: str, kind: str) -> int:
    """hwloc's own count of objects of one type in a zoo machine (lstopo, not perfatlas)."""
    env = {"HWLOC_XMLFILE": str(ZOO_DIR / name), "HWLOC_THISSYSTEM": "0", "PATH": "/usr/bin"}
    out = subprocess.run(
        ["lstopo-no-graphics", "--only", kind], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return len(out.stdout.splitlines())


def test_the_zoo_is_all_there():
    assert len(ZOO) == 12
    assert (ZOO_DIR / "README.md").is_file()


@pytest.mark.parametrize("name", ZOO)
def test_topo_describes_the_machine_as_hwloc_counts_it(name, on, cli):
    machine = on(name)
    assert not machine.this_system
    assert len(machine.pus) == hwloc_count(name, "pu")
    assert len(machine.numa_nodes) == hwloc_count(name, "numanode")
    result = cli("topo")
    assert result.code == 0 and "Traceback" not in result.err
    assert "not this system" in result.out
    document = json.loads(cli("topo", "--json").out)
    assert document["this_system"] is False
    assert document["cpu_model"] != cpu_model()  # never this machine's /proc/cpuinfo
    local = {pu["numa_node"] for pu in document["pus"]}
    for node in document["numa_nodes"]:  # memory-only: no PU's local node, and the reverse
        assert node["memory_only"] == (node["os_index"] not in local)


@pytest.mark.parametrize("name", ZOO)
def test_doctor_runs_and_names_the_topology_source(name, on, cli):
    machine = on(name)
    result = cli("doctor")
    assert result.code == 0 and result.err == ""
    text = " ".join(result.out.split())
    assert "HWLOC_XMLFILE" in text
    for node in machine.memory_only_nodes:
        assert f"memory-only node {node['os_index']}" in text


@pytest.mark.parametrize("name", ZOO)
def test_every_shipped_suite_plans_within_the_machine(name, on, cli, tmp_path):
    machine = on(name)
    pus, nodes = set(machine.pus), set(machine.numa_nodes)
    node_of = {pu["os_index"]: pu["numa_node"] for pu in machine.topology["pus"]}
    # nodes of memory that is not the PUs' own, by hwloc's subtype or an empty cpuset
    memory_only = {
        n["os_index"]
        for n in machine.topology["numa_nodes"]
        if n.get("subtype") in ("HBM", "GPUMemory", "CXL-DRAM") or not n["cpus"]
    }
    for suite in suite_names():
        result = cli("run", suite, "--plan", "--json")
        assert result.code == 0, f"{suite} on {name}: {result.err}"
        plan = json.loads(result.out)
        assert plan["launches"] and plan["estimated_seconds"] > 0
        for launch in plan["launches"]:
            cpus = launch["cpu_list"] or []
            assert set(cpus) <= pus
            assert not {node_of[c] for c in cpus} & memory_only  # no thread on them
            node = re.match(r"node (\d+)", launch["memory"])
            if node:
                assert int(node.group(1)) in nodes
            sizes = launch["bytes"] or []  # one size, or a series measured in one launch
            for size in sizes if isinstance(sizes, list) else [sizes]:
                assert size <= 0.8 * machine.memory_bytes
    assert not cli.db.exists()  # a plan opens no database


def test_a_plan_that_does_not_fit_is_refused_naming_the_step(on, cli, tmp_path):
    on("16em64t-4s2c2t.xml")  # 16 PUs, one NUMA node
    suite = tmp_path / "big.toml"
    suite.write_text(
        '[[step]]\nbenchmark = "mem.latency"\nbytes = "16KiB"\n\n'
        '[[step]]\nbenchmark = "mem.bandwidth"\nthreads = [4, 32]\n'
    )
    result = cli("run", str(suite), "--plan")
    assert result.code == 2 and result.out == ""
    assert result.err.count("\n") == 1
    assert "step 2 (mem.bandwidth)" in result.err and "threads=32 exceeds the 16 PUs" in result.err
    suite.write_text('[[step]]\nbenchmark = "mem.latency"\nnode = "3"\n')
    assert "NUMA node 3 does not exist" in cli("run", str(suite), "--plan").err
    # within pa-mem-latency's own bound (128 GiB), beyond this machine's memory
    suite.write_text('[[step]]\nbenchmark = "mem.latency"\nbytes = "100GiB"\n')
    result = cli("run", str(suite))  # refused before the run opens the database
    assert result.code == 2 and "does not fit" in result.err and not cli.db.exists()
    result = cli("sweep", "mem.bandwidth", "--threads", "4,32", "--plan")
    assert result.code == 2 and "threads=32 exceeds the 16 PUs" in result.err


@pytest.mark.parametrize("name", ZOO)
def test_close_and_spread_take_every_core_before_any_smt_sibling(name, on):
    machine = on(name)
    groups = cores(machine.topology)
    core_of = {pu["os_index"]: i for i, group in enumerate(groups) for pu in group}
    for order in (close_order(machine.topology), spread_order(machine.topology)):
        assert sorted(order) == sorted(machine.pus)
        first = order[: len(groups)]
        assert len({core_of[cpu] for cpu in first}) == len(groups)
    close = close_order(machine.topology)  # neighbouring cores: hwloc's order of cores
    assert [core_of[cpu] for cpu in close[: len(groups)]] == list(range(len(groups)))


def test_spread_uses_every_package_and_node_first(on):
    def covered(machine: Machine, key: str, threads: int) -> int:
        found = {pu["os_index"]: pu[key] for pu in machine.topology["pus"]}
        return len({found[cpu] for cpu in spread_order(machine.topology)[:threads]})

    four_sockets = on("16em64t-4s2c2t.xml")
    assert covered(four_sockets, "package", 4) == 4
    sixteen_sockets_in_four_nodes = on("96em64t-4n4d3ca2co-pci.xml")
    assert covered(sixteen_sockets_in_four_nodes, "numa_node", 4) == 4
    assert covered(sixteen_sockets_in_four_nodes, "package", 16) == 16
    twenty_four_nodes = on("192em64t-24n8c2t.xml")
    assert covered(twenty_four_nodes, "numa_node", 24) == 24


def test_a_sweep_plan_shows_the_pus_of_each_binding(on, cli):
    on("16em64t-4s2c2t.xml")  # PUs 0-3 on packages 0-3; core 0 = PUs 0 and 8 (SMT)
    result = cli(
        "sweep", "mem.bandwidth", "--threads", "4", "--bind", "close,spread", "--repeat", "1",
        "--plan", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    cpus = {launch["placement"]: launch["cpus"] for launch in json.loads(result.out)["launches"]}
    assert cpus == {"bind=close mem=local": "0-1,4-5", "bind=spread mem=local": "0-3"}


def test_the_remote_node_is_the_nearest_node_with_pus(on):
    machine = on("192em64t-24n8c2t.xml")
    assert machine.remote_node(0) == 1  # distance 50; every other node is 65 or 79
    assert machine.remote_node(32) == 5
    cxl = on("24em64t-2n6c2t-cxl.xml")
    assert [n["subtype"] for n in cxl.memory_only_nodes] == ["CXL-DRAM"]
    assert cxl.remote_node(0) == 1 and cxl.remote_node(1) == 0
    hbm = on("24em64t-2n6c2t-memcache-hbm.xml")
    assert hbm.remote_node(1) == 0  # HBM node 2 is nearer (13) but holds no PU
    gpu = on("24em64t-2n6c2t-gpu-numa.xml")
    assert gpu.remote_node(0) == 1
    assert gpu.memory_bytes < 40 * 2**30  # the GPUs' 64 GiB are not host memory
    assert {pu["numa_node"] for pu in gpu.topology["pus"]} == {0, 1}  # not GPU nodes 2, 3
    assert on("16em64t-4s2c2t.xml").remote_node(0) is None  # one node
    assert on("8intel64-4n2t-memattrs.xml").remote_node(0) == 1  # no distances: hwloc order


def test_a_remote_step_plans_the_chosen_node(on, cli, tmp_path):
    on("24em64t-2n6c2t-memcache-hbm.xml")
    suite = tmp_path / "remote.toml"
    suite.write_text(
        '[[step]]\nbenchmark = "mem.latency"\nnode = "remote"\ncpus = "1"\nbytes = "64MiB"\n'
    )
    launch = json.loads(cli("run", str(suite), "--plan", "--json").out)["launches"][0]
    assert launch["memory"] == "node 0 (remote)"


def test_memory_only_nodes_memory_side_caches_and_kinds_are_described(on):
    hbm = on("24em64t-2n6c2t-memcache-hbm.xml")
    nodes = {n["os_index"]: n for n in hbm.topology["numa_nodes"]}
    assert nodes[0]["memory_side_cache"]["size_bytes"] == 16 * 2**30
    assert nodes[2]["subtype"] == "HBM" and nodes[2]["memory_only"]
    package_1 = [pu for pu in hbm.topology["pus"] if pu["package"] == 1]
    assert {pu["numa_node"] for pu in package_1} == {1}  # DRAM is local, not HBM
    restricted = on("16amd64-8n2c-cpusets.xml")  # nodes 4 and 5 have no allowed PU
    assert {n["os_index"] for n in restricted.memory_only_nodes} == {4, 5}
    kinds = on("fakecpukinds.xml").topology["cpu_kinds"]
    assert [k["efficiency"] for k in kinds] == [0, 1, 2] and kinds[2]["core_type"] == "IntelCore"


def test_the_default_noise_quantum_fits_384_pus(on, cli):
    on("192em64t-24n8c2t.xml")
    plan = json.loads(cli("run", "full", "--plan", "--json").out)
    noise = [launch for launch in plan["launches"] if launch["benchmark"] == "noise"]
    assert "quantum=384us" in noise[0]["parameters"]  # 10 s x 384 PUs in 10 million samples


@pytest.mark.parametrize("name", ZOO)
def test_the_report_draws_the_topology_of_a_zoo_run(name, on, tmp_path):
    machine = on(name)
    store = Store(tmp_path / "zoo.db")
    run_id = store.start_run(
        fingerprint=machine.fingerprint,
        topology=machine.topology,
        context=machine.context(),
        suite=None,
        argv=["perfatlas"],
        software={},
    )
    store.finish_run(run_id, "complete")
    html = write_report(RunData.load(store, run_id), tmp_path / "zoo.html").read_text()
    section = re.search(r'<section id="topology">(.*?)</section>', html, re.S).group(1)
    assert "not the machine that ran this" in section
    for node in machine.topology["numa_nodes"]:
        assert f"<td>{node['os_index']}</td>" in section.replace(' class="num"', "")
    if len(machine.topology.get("cpu_kinds") or []) > 1:
        assert "CPU kinds" in section
    for node in machine.memory_only_nodes:
        assert (node.get("subtype") or "memory only") in section


def test_a_topology_hwloc_cannot_load_is_one_sentence(monkeypatch, cli, tmp_path):
    garbage = tmp_path / "garbage.xml"
    garbage.write_text("this is not hwloc XML\n")
    monkeypatch.setenv("HWLOC_XMLFILE", str(garbage))
    for args in (("topo",), ("doctor",), ("run", "quick", "--plan")):
        result = cli(*args)
        assert result.code == 2, args
        assert result.err.count("\n") == 1 and "HWLOC_XMLFILE" in result.err
        assert "Traceback" not in result.err
