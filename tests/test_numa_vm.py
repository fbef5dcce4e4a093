"""Every NUMA path of perfatlas end to end, on 2 and 4 NUMA nodes: inside a numa-vm guest (QEMU,
a kernel with N nodes and sockets) one Python process runs tests/numa_vm_guest.py, and these tests
check what it wrote: node=K, node=remote, node=interleave, the two-thread method across sockets,
perfatlas sweep --mempolicy local,interleave,node:K (by the benchmark itself and by numactl), the
bytes per node of the "execution" block, mem.loaded_latency's chased and injected buffers on node 1, the remote-fraction estimate, and mem.numa_matrix with
its report. Placement and read-back only: never timings (the guest's nodes are one host memory
under emulation).

The native code is built for the guest (x86-64-v3, no AVX-512) in build/numa-vm, as the Makefile's
test-mpich target builds build/mpich."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hwloc_memattrs import lstopo_memattrs

from perfatlas.export.hwloc_export import write_calibrated_topology
from perfatlas.launch.contract import validate
from perfatlas.mem.analysis_numa import numa_matrices, summary_line
from perfatlas.report import write_report
from perfatlas.store.database import Store
from perfatlas.store.run_data import RunData

REPO = Path(__file__).resolve().parents[1]
NUMA_VM = Path(__file__).resolve().parents[2] / "shared" / "tools" / "numa-vm"
BUILD = REPO / "build" / "numa-vm"
TARGETS = [
    "pa-topology",
    "pa-hwloc-export",
    "pa-mem-latency",
    "pa-mem-bandwidth",
    "pa-mem-loaded-latency",
    "pa-mem-numa-matrix",
    "pa-parbench",
]
MiB = 2**20


def _skip_unless(condition: bool, why: str) -> None:
    if not condition:
        pytest.skip(why)


@pytest.fixture(scope="module")
def guest_build() -> Path:
    """The executables the guest runs, built with portable flags (once; ninja keeps them)."""
    _skip_unless(NUMA_VM.is_file(), f"{NUMA_VM} is absent: no NUMA guest to test in")
    _skip_unless(os.geteuid() == 0, "numa-vm setup installs QEMU with apt-get: needs root")
    setup = subprocess.run([str(NUMA_VM), "setup"], capture_output=True, text=True, timeout=900)
    _skip_unless(setup.returncode == 0, f"QEMU cannot be installed here: {setup.stderr[-300:]}")
    _skip_unless(bool(shutil.which("cmake") and shutil.which("ninja")), "cmake and ninja needed")
    configure = ["cmake", "-S", str(REPO), "-B", str(BUILD), "-G", "Ninja"]
    subprocess.run(
        [*configure, "-DPERFATLAS_ARCH_FLAGS=-march=x86-64-v3"], check=True, capture_output=True
    )
    subprocess.run(["cmake", "--build", str(BUILD), "--target", *TARGETS], check=True,
                   capture_output=True)  # fmt: skip
    return BUILD / "bin"


def _run_guest(folder: Path, bin_dir: Path, nodes: int, cpus: int) -> dict:
    """Boot a guest with `nodes` nodes of `cpus` CPUs, run the guest script in `folder`."""
    env = dict(os.environ, PERFATLAS_BIN_DIR=str(bin_dir), PERFATLAS_DB=str(folder / "numa.db"))
    done = subprocess.run(
        [str(NUMA_VM), "run", "--nodes", str(nodes), "--cpus", str(cpus), "--mem", "512", "--",
         sys.executable, str(REPO / "tests" / "numa_vm_guest.py")],
        cwd=folder, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return json.loads((folder / "numa-vm.json").read_text())


@pytest.fixture(scope="module", params=[(2, 2), (4, 1)], ids=["2-nodes", "4-nodes"])
def guest(request, guest_build, tmp_path_factory) -> tuple[dict, Path]:
    nodes, cpus = request.param
    folder = tmp_path_factory.mktemp(f"numa-vm-{nodes}")
    return _run_guest(folder, guest_build, nodes, cpus), folder


def _node_of(found: dict) -> dict[int, int]:
    return {pu["os_index"]: pu["numa_node"] for pu in found["topology"]["pus"]}


def _documents(found: dict, name: str) -> list[dict]:
    assert found[name]["rc"] == 0, name
    documents = found[name]["documents"]
    assert documents and all(not d.get("not_measurable") for d in documents), documents
    return documents


def _nearest_other(found: dict, node: int) -> int:
    nodes = [n["os_index"] for n in found["topology"]["numa_nodes"]]
    row = found["topology"]["numa_distances"][nodes.index(node)]
    return min((n for n in nodes if n != node), key=lambda n: (row[nodes.index(n)], n))


def test_the_guest_has_the_nodes_asked(guest):
    found, _ = guest
    topology = found["topology"]
    nodes = [n["os_index"] for n in topology["numa_nodes"]]
    assert nodes == list(range(len(nodes))) and len(nodes) in (2, 4)
    assert len(topology["numa_distances"]) == len(nodes)
    assert topology["packages"] == len(nodes)  # numa-vm: one socket per node


def test_node_k_binds_the_buffer_there_and_the_process_data_follows(guest):
    found, _ = guest
    for name in (k for k in found if k.startswith("bind_")):
        node = int(name.removeprefix("bind_"))
        (document,) = _documents(found, name)
        placement, execution = document["placement"], document["execution"]
        assert placement["mempolicy_applied"] == f"bind {node}"
        assert placement["pages_on_node"] == {str(node): 1.0}
        on_node = {int(k): v for k, v in execution["bytes_on_node"].items()}
        assert on_node[node] >= 8 * MiB  # the whole buffer, read back from numa_maps
        assert max(on_node, key=on_node.get) == node


def test_remote_is_the_nearest_other_node_of_the_measuring_cpu(guest):
    found, _ = guest
    node_of = _node_of(found)
    for name in (k for k in found if k.startswith("remote_from_")):
        (document,) = _documents(found, name)
        cpu = document["params"]["cpus"][0]
        remote = _nearest_other(found, node_of[cpu])
        assert node_of[cpu] == int(name.removeprefix("remote_from_"))
        assert document["params"]["node"] == remote
        assert document["placement"]["pages_on_node"] == {str(remote): 1.0}
    if len(found["topology"]["numa_nodes"]) == 4:  # numa-vm: nodes 2k and 2k+1 are nearest
        assert found["remote_from_3"]["documents"][0]["params"]["node"] == 2


def test_remote_is_remote_to_every_thread_of_a_team(guest):
    found, _ = guest
    node_of = _node_of(found)
    (document,) = found["remote_team"]["documents"]
    if len(found["topology"]["numa_nodes"]) == 2:  # both nodes hold a thread
        assert document["not_measurable"] == (
            "remote NUMA is not measurable with these cpus: each of the 2 NUMA nodes holds one "
            "of the threads"
        )
        return
    cpus = document["params"]["cpus"]
    assert [node_of[c] for c in cpus] == [0, 1]
    # node 1, nearest to node 0, holds the second thread: the next nearest is 2 (32, as 3)
    assert document["params"]["node"] == 2
    assert document["placement"]["pages_on_node"] == {"2": 1.0}


def test_loaded_latency_places_the_chase_and_the_injectors_on_node_1(guest):
    """node=1 inject_node=1 from CPU 0 (node 0): both buffers read back on node 1, every point
    of the delay series a valid document whose checks passed."""
    found, _ = guest
    node_of = _node_of(found)
    documents = _documents(found, "loaded_node_1")
    assert [d["params"]["delay"] for d in documents] == [0, 2000]
    for document in documents:
        validate(document, "mem.loaded_latency")
        params, placement = document["params"], document["placement"]
        assert (params["cpu"], params["node"], params["inject_node"]) == (0, 1, "1")
        assert node_of[0] == 0 and [t["cpus_allowed"] for t in placement["threads"]][0] == "0"
        for placed in (placement, document["inject_placement"]):
            assert placed["mempolicy_applied"] == "bind 1"
            assert placed["pages_on_node"] == {"1": 1.0}
        assert document["derived"]["verified"]  # the chase's and the injectors' checks
        on_node = {int(k): v for k, v in document["execution"]["bytes_on_node"].items()}
        assert on_node[1] >= 2 * MiB  # the chased and the injected MiB, from numa_maps


def test_interleave_spreads_pages_evenly_over_every_node(guest):
    found, _ = guest
    nodes = len(found["topology"]["numa_nodes"])
    (document,) = _documents(found, "interleave")
    placement = document["placement"]
    assert placement["mempolicy_applied"] == "interleave " + ",".join(map(str, range(nodes)))
    shares = placement["pages_on_node"]
    assert set(shares) == {str(n) for n in range(nodes)}
    assert all(abs(share - 1 / nodes) < 0.02 for share in shares.values())
    on_node = document["execution"]["bytes_on_node"]
    assert all(on_node[str(n)] >= 0.9 * 8 * MiB / nodes for n in range(nodes))


def test_the_two_thread_method_measures_one_buffer_from_both_sockets(guest):
    found, _ = guest
    node_of = _node_of(found)
    first, second = _documents(found, "two_thread")
    owner, other = first["params"]["cpus"]
    assert node_of[owner] != node_of[other]
    assert (first["params"]["cpu"], second["params"]["cpu"]) == (owner, other)
    assert first["params"]["owner"] == second["params"]["owner"] == owner
    for document in (first, second):
        placement = document["placement"]
        assert placement["pages_on_node"] == {str(node_of[owner]): 1.0}  # the owner's first touch
        assert [t["cpus_allowed"] for t in placement["threads"]] == [str(owner), str(other)]


def test_a_sweep_over_memory_policies_obtains_and_estimates_them(guest):
    found, _ = guest
    nodes = len(found["topology"]["numa_nodes"])
    last = nodes - 1
    node_of = _node_of(found)
    launches = found["sweep_bandwidth"]["launches"]
    assert {launch["params"]["mempolicy"] for launch in launches} == {
        "local",
        "interleave",
        f"node:{last}",
    }
    for launch in launches:
        got = launch["sweep"]["obtained"]
        policy, cpus = launch["params"]["mempolicy"], got["cpus"]
        shares = {int(k): v for k, v in got["pages_on_node"].items()}
        assert got["remote_fraction_method"].startswith(("estimated", "measured"))
        if policy == f"node:{last}":
            assert shares[last] > 0.9
            # threads on node 0 read it all remotely, a thread on the last node locally
            expected = sum(node_of[c] != last for c in cpus) / len(cpus)
            assert abs(got["remote_fraction"] - expected) < 0.1
        elif policy == "interleave":
            assert all(abs(shares.get(n, 0) - 1 / nodes) < 0.1 for n in range(nodes))
            assert abs(got["remote_fraction"] - (1 - 1 / nodes)) < 0.1
        else:  # first touch: each thread's slice on its own node, spread threads on two sockets
            assert len({node_of[c] for c in cpus}) == len(cpus)
            assert sum(shares.get(node_of[c], 0) for c in cpus) > 0.9
            assert got["remote_fraction"] < 0.1
    points = found["sweep_bandwidth"]["points"]
    assert {(p["mempolicy"], p["threads"]) for p in points} == {
        (policy, threads)
        for policy in ("local", "interleave", f"node:{last}")
        for threads in (1, 2)
    }


def test_a_benchmark_without_node_is_placed_by_numactl(guest):
    found, _ = guest
    last = len(found["topology"]["numa_nodes"]) - 1
    for launch in found["sweep_numactl"]["launches"]:
        assert f"numactl --membind={last} " in launch["launch"]["command"]
        shares = launch["sweep"]["obtained"]["pages_on_node"]
        assert shares[str(last)] > 0.9


def test_the_numa_matrix_binds_every_cell_and_pins_every_row(guest):
    found, folder = guest
    nodes = [n["os_index"] for n in found["topology"]["numa_nodes"]]
    distances = found["topology"]["numa_distances"]
    node_of = _node_of(found)
    documents = _documents(found, "matrix")
    cells = {(d["params"]["cpu_node"], d["params"]["mem_node"], d["params"]["measure"]): d
             for d in documents}  # fmt: skip
    assert set(cells) == {(c, m, k) for c in nodes for m in nodes for k in ("latency", "bandwidth")}
    for (cpu_node, mem_node, measure), document in cells.items():
        placement = document["placement"]
        assert placement["mempolicy_applied"] == f"bind {mem_node}"
        assert placement["pages_on_node"] == {str(mem_node): 1.0}
        threads = placement["threads"]
        cores = sum(1 for n in node_of.values() if n == cpu_node)  # one PU per core in numa-vm
        assert len(threads) == (1 if measure == "latency" else cores)
        assert all(node_of[int(t["cpus_allowed"])] == cpu_node for t in threads)
        assert document["derived"]["distance"] == distances[cpu_node][mem_node]
        metric = "latency_ns" if measure == "latency" else "bandwidth_Bps"
        assert len(document["samples"][metric]) == 3

    # the host's analysis and report of what the guest stored
    store = Store(folder / "numa.db")
    run_id = found["matrix"]["run"]
    matrices = numa_matrices(store.results(run_id))
    assert [m.metric for m in matrices] == ["latency_ns", "bandwidth_Bps"]
    for matrix in matrices:
        assert matrix.cpu_nodes == matrix.mem_nodes == nodes
        assert len(matrix.penalties()) == len(nodes) * (len(nodes) - 1)
        assert matrix.distances[(0, 1)] == distances[0][1]
    assert summary_line(matrices).startswith(f"NUMA matrix, {len(nodes)} CPU x {len(nodes)} memory")
    html = write_report(RunData.load(store, run_id), folder / "report.html").read_text()
    assert 'id="numa-matrix"' in html and html.count("penalty vs local") == 1


@pytest.mark.skipif(not shutil.which("lstopo"), reason="lstopo (hwloc) is not installed")
def test_the_calibrated_topology_has_a_value_per_cpu_node_and_memory_node(guest, tmp_path):
    """perfatlas export --format hwloc of the guest's mem.numa_matrix run, on the host from the
    hwloc XML the guest stored: Latency and ReadBandwidth from every CPU node's measuring PUs to
    every memory node, each the cell's median in hwloc's unit, as hwloc reads the file back."""
    found, folder = guest
    nodes = [n["os_index"] for n in found["topology"]["numa_nodes"]]
    store = Store(folder / "numa.db")
    run_id = found["matrix"]["run"]
    assert store.topology_xml(run_id)  # the guest's own, not the host's
    xml = tmp_path / "machine.xml"
    write_calibrated_topology(store, RunData.load(store, run_id), xml)
    read_back = lstopo_memattrs(xml)
    node_of = _node_of(found)
    seen = set()
    for r in store.results(run_id):
        attribute = {"latency_ns": "Latency", "bandwidth_Bps": "ReadBandwidth"}[r.metric]
        pus = tuple(sorted(t["cpu_requested"] for t in r.document["placement"]["threads"]))
        assert {node_of[pu] for pu in pus} == {r.params["cpu_node"]}
        scale = 1 if attribute == "Latency" else MiB
        assert read_back[(attribute, pus, r.params["mem_node"])] == round(r.median / scale)
        seen.add((attribute, r.params["cpu_node"], r.params["mem_node"]))
    pairs = {(c, m) for c in nodes for m in nodes}
    assert seen == {(a, c, m) for a in ("Latency", "ReadBandwidth") for c, m in pairs}
