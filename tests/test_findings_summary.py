"""The terminal summary's tables that state a conclusion read it from the run's stored findings
(docs/guide/findings.md), as the report's sections showing the same verdict do: the collectives'
growth, the contention ratios and their mark, loaded latency, the NUMA penalty, core-to-core
levels, peak flops, the memory levels' latencies, peak bandwidth, the ping-pong headline and the
noise table's detours, strongest line and BSP cost at scale. Each test stores a run of synthetic
documents with its findings, alters or removes a stored finding, and checks that the terminal
(and the report, where it shows the same verdict) says what the stored finding says, not what
the analysis would conclude again from the results."""

from __future__ import annotations

import re

import numpy as np
from rich.table import Table
from test_findings_sections import alter, samples, stored_run
from test_findings_views import _flat, _wide, report_text

from perfatlas.comm.summary_comm import collectives_table, pingpong_table
from perfatlas.cpu.summary_core_to_core import core_to_core_table
from perfatlas.cpu.summary_peakflops import peakflops_table
from perfatlas.mem.summary_loaded_latency import loaded_latency_table
from perfatlas.mem.summary_memory import bandwidth_table, contention_table, levels_table
from perfatlas.mem.summary_numa import numa_line
from perfatlas.noise.summary_noise import noise_table
from perfatlas.store.run_data import RunData


def terminal(build, store, run_id: int) -> str:
    """A summary table (or line) of the run as the terminal prints it ('' for none)."""
    shown = build(RunData.load(store, run_id))
    if shown is None:
        return ""
    if isinstance(shown, Table):
        shown.box = None  # cells apart by spaces alone
    console, buffer = _wide()
    console.print(shown)
    return _flat(buffer.getvalue())


def planted(value: float, low: float, high: float, **changes):
    """A change for alter(): the finding's value and interval replaced, other fields changed."""

    def change(finding: dict) -> dict:
        interval = {"low": low, "high": high, "confidence": 0.95}
        return {**finding, "value": value, "interval": interval, **changes}

    return change


def cites(result_id: int, change):
    """A change for alter() applied to the findings that cite `result_id` alone."""
    return lambda f: change(f) if result_id in f["sources"]["results"] else f


def document(benchmark: str, params: dict, metrics: dict[str, list[float]], **fields) -> dict:
    return {
        "schema": "perfatlas.result/1",
        "benchmark": benchmark,
        "params": params,
        "samples": metrics,
        "units": {m: "byte/s" if m.endswith("Bps") else "ns" for m in metrics},
        **fields,
    }


# -- collectives ----------------------------------------------------------------------------------
def test_the_collectives_growth_is_the_stored_verdict(tmp_path):
    """latency = 1 + 3 log2 P us: logarithmic, as stored; a planted verdict replaces it in the
    terminal and the report's growth table; without its finding the line has no verdict."""
    store, run_id = stored_run(
        tmp_path,
        [
            document(
                "comm.allreduce",
                {"np": 32, "processes": p, "bytes": 8},
                {"latency_ns": samples(1000 + 3000 * np.log2(p), p)},
            )
            for p in (2, 4, 8, 16, 32)
        ],
    )
    assert "logarithmic: " in terminal(collectives_table, store, run_id)
    alter(store, run_id, "comm.collective_growth", lambda f: {**f, "verdict": "planted: linear"})
    shown, report = (
        terminal(collectives_table, store, run_id),
        report_text(store, run_id, "comm-collectives"),
    )
    assert "planted: linear" in shown and "logarithmic" not in shown
    assert "planted: linear" in report
    alter(store, run_id, "comm.collective_growth", lambda f: None)
    shown = terminal(collectives_table, store, run_id)
    assert "planted" not in shown and "logarithmic" not in shown and "2: " in shown


# -- memory contention ----------------------------------------------------------------------------
def contention_run(path):
    """The measured core's latency alone 100 ns, 150 ns while the other core reads, 80 ns while
    it writes."""
    params = {"measure": "latency", "bytes": 16384, "cpu": 0, "load_cpu": 1, "load_bytes": 1 << 21}
    return stored_run(
        path,
        [
            document("mem.contention", {**params, "load": load}, {"latency_ns": samples(m, seed)})
            for seed, (load, m) in enumerate((("none", 100.0), ("read", 150.0), ("write", 80.0)))
        ],
    )


def contention_cells(store, run_id: int) -> dict[str, str]:
    """The contention table's cells (with their rich markup) by the load's column."""
    table = contention_table(RunData.load(store, run_id))
    return {c.header: next(iter(c.cells)) for c in table.columns[2:]}


def test_the_contention_ratios_and_their_mark_are_the_stored_ones(tmp_path):
    """Reads slow the chase 1.5x: marked; writes speed it up 1.25x: not marked. Once the stored
    findings say the opposite, the terminal marks the write column alone, with the stored ratio
    and interval, and the report shows the same ratio and verdict."""
    store, run_id = contention_run(tmp_path)
    ids = {r.params["load"]: r.id for r in store.results(run_id)}
    cells = contention_cells(store, run_id)
    assert cells["other core reads"].startswith("[red]1.50")
    assert cells["other core writes"].startswith("0.80")
    assert "1.25x faster with the load" in report_text(store, run_id, "contention")

    slower = planted(2.0, 1.9, 2.1, verdict="planted: 2x slower", severity="notice")
    alter(store, run_id, "memory.contention", cites(ids["write"], slower))
    alter(
        store, run_id, "memory.contention", cites(ids["read"], lambda f: {**f, "severity": "info"})
    )
    cells = contention_cells(store, run_id)
    assert cells["other core writes"] == "[red]2.000 [dim][1.900, 2.100][/][/]"
    assert not cells["other core reads"].startswith("[red]")
    report = report_text(store, run_id, "contention")
    assert "2.000 [1.900, 2.100]" in report and "planted: 2x slower" in report

    alter(store, run_id, "memory.contention", cites(ids["write"], lambda f: None))
    assert contention_cells(store, run_id)["other core writes"] == "-"


# -- loaded latency -------------------------------------------------------------------------------
def test_loaded_latency_states_the_stored_ratio_and_saturation(tmp_path):
    """Idle 100 ns, 400 ns at 25 GB/s: 4x, doubled there; planted, the terminal and the report's
    saturation follow the stored finding."""
    store, run_id = stored_run(
        tmp_path,
        [
            document(
                "mem.loaded_latency",
                {"delay": delay, "mix": "read", "cpu": 0, "injectors": [1]},
                {
                    "latency_ns": samples(loaded, delay + 1),
                    "idle_latency_ns": samples(100.0, delay + 2),
                    "injected_Bps": samples(injected, delay + 3),
                },
            )
            for delay, (loaded, injected) in {
                800: (110, 5e9),
                400: (150, 1e10),
                0: (400, 2.5e10),
            }.items()
        ],
    )
    shown = terminal(loaded_latency_table, store, run_id)
    assert "4.00 [3.9" in shown and "latency doubled from 24.9 GB/s injected" in shown

    alter(store, run_id, "memory.loaded_latency", planted(9.0, 8.5, 9.5, verdict="planted: never"))
    shown = terminal(loaded_latency_table, store, run_id)
    assert "9.00 [8.50, 9.50] planted: never" in shown and "doubled" not in shown
    assert "planted: never" in report_text(store, run_id, "loaded-latency")


# -- NUMA -----------------------------------------------------------------------------------------
def numa_run(path):
    """Two nodes: remote latency 1.5x local from node 0, 1.2x from node 1."""
    latency = {(0, 0): 100.0, (0, 1): 150.0, (1, 0): 120.0, (1, 1): 100.0}
    return stored_run(
        path,
        [
            document(
                "mem.numa_matrix",
                {"cpu_node": c, "mem_node": m, "measure": "latency", "page": 4096},
                {"latency_ns": samples(v, 10 * c + m)},
                derived={"distance": 10 if c == m else 21},
            )
            for (c, m), v in latency.items()
        ],
    )


def test_the_numa_line_names_the_stored_worst_penalty(tmp_path):
    store, run_id = numa_run(tmp_path)
    cell = {(r.params["cpu_node"], r.params["mem_node"]): r.id for r in store.results(run_id)}
    shown = terminal(numa_line, store, run_id)
    assert "worst remote 1.50x [" in shown and "(cpu node 0 -> memory node 1)" in shown

    alter(store, run_id, "memory.numa_penalty", cites(cell[1, 0], planted(3.0, 2.9, 3.1)))
    shown = terminal(numa_line, store, run_id)
    assert "worst remote 3.00x [2.90x, 3.10x] (cpu node 1 -> memory node 0)" in shown
    assert "3.000 [2.900, 3.100]" in report_text(store, run_id, "numa-matrix")

    alter(store, run_id, "memory.numa_penalty", lambda f: None)
    shown = terminal(numa_line, store, run_id)
    assert "latency local 100 ns" in shown and "worst remote" not in shown


# -- core-to-core ---------------------------------------------------------------------------------
def test_the_core_to_core_levels_are_the_stored_ones(tmp_path, monkeypatch):
    """A matrix generated from a 4-socket, 2-core, 2-thread topology (test_core_to_core): three
    levels that match hwloc, as stored; a planted level is shown by the terminal and the report."""
    from test_core_to_core import ZOO_DIR, _synthetic

    from perfatlas.machine.topology import Machine

    monkeypatch.setenv("HWLOC_XMLFILE", str(ZOO_DIR / "16em64t-4s2c2t.xml"))
    monkeypatch.setenv("HWLOC_THISSYSTEM", "0")
    topology = Machine.detect().topology
    documents = [
        document("cpu.core_to_core", r.params, {"latency_ns": r.samples})
        for r in _synthetic(topology, seed=3).directed.values()
    ]
    store, run_id = stored_run(tmp_path, documents, topology=topology)
    shown = terminal(core_to_core_table, store, run_id)
    assert shown.count("matches hwloc") == 3

    def level_1(finding: dict) -> dict:
        if not finding["subject"].startswith("level 1:"):
            return finding
        details = {**finding["details"], "low_ns": 1.5, "high_ns": 2.5, "groups": "planted"}
        return {**finding, "verdict": "planted: no object", "details": details}

    alter(store, run_id, "cpu.core_to_core_level", level_1)
    assert "1 1.5 .. 2.5 ns 8 planted planted: no object" in terminal(
        core_to_core_table, store, run_id
    )
    report = report_text(store, run_id, "core-to-core")
    assert "1.5 .. 2.5 ns" in report and "planted: no object" in report
    assert report.count("matches hwloc") == 2


# -- peak flops -----------------------------------------------------------------------------------
def test_peak_flops_are_the_stored_figures(tmp_path):
    """32 Gflop/s on one thread at a nominal 2 GHz with 4 lanes: 16 flop per cycle, 2 vector
    operations; planted, the 1-thread figure and the per-core columns follow the finding."""
    derived = {
        "operations": "fma",
        "lanes": 4,
        "nominal_clock_hz": 2e9,
        "nominal_clock_source": "x",
    }
    store, run_id = stored_run(
        tmp_path,
        [
            document(
                "cpu.peakflops",
                {"precision": "double", "isa": "avx2", "threads": t},
                {"flop_rate": samples(32e9 * t, t)},
                derived={**derived, "threads": t},
            )
            for t in (1, 2)
        ],
    )
    one = next(r.id for r in store.results(run_id) if r.params["threads"] == 1)
    shown = terminal(peakflops_table, store, run_id)
    assert re.search(r"fma 4 3\d\.\d \[[^]]+\] 6\d\.\d \[[^]]+\] 16 2\b", shown)

    details = {"lanes": 4, "flop_per_cycle": 40.0}
    alter(store, run_id, "cpu.peakflops", cites(one, planted(80.5, 79.5, 81.5, details=details)))
    shown = terminal(peakflops_table, store, run_id)
    assert re.search(r"80\.5 \[79\.5, 81\.5\] 6\d\.\d \[[^]]+\] 40 5\b", shown)
    assert "80.5 [79.5, 81.5]" in report_text(store, run_id, "peakflops")


# -- noise: the BSP cost at scale -----------------------------------------------------------------
def noise_run(tmp_path):
    """A stored FWQ run on CPU 0: quanta of 10 us, every 10th 5 us longer."""
    quanta = np.full(20_000, 10_000.0)
    quanta[::10] += 5_000.0
    return stored_run(
        tmp_path,
        [
            document(
                "noise",
                {"method": "fwq", "cpus": [0], "cpu": 0, "duration": 0.2, "quantum": 1e-5},
                {"quantum_ns": list(quanta)},
                timer={"resolution_ns": 20.0},
            )
        ],
    )


def test_the_noise_table_states_the_stored_bsp_cost_at_scale(tmp_path):
    """FWQ quanta of 10 us, every 10th 5 us longer; the stored BSP findings are what the table's
    BSP columns show, a lower bound marked; without them, '-'."""
    store, run_id = noise_run(tmp_path)

    def at_1_ms(finding: dict) -> dict:
        if finding["details"]["granularity_ns"] != 1e6:
            return finding
        details = {**finding["details"], "lower_bound": True}
        return {**finding, "value": 777.0, "details": details}

    alter(store, run_id, "noise.bsp_slowdown", at_1_ms)
    assert "≥ 777 %" in terminal(noise_table, store, run_id)
    alter(store, run_id, "noise.bsp_slowdown", lambda f: None)
    shown = terminal(noise_table, store, run_id)
    assert "777" not in shown and shown.endswith("- -")


# -- memory levels and peak bandwidth -------------------------------------------------------------
def memory_run(path):
    """Latency 1 ns up to 32 KiB, 4 ns up to 1 MiB, 80 ns beyond (L1, L2, memory); triad peaks
    at 60 GB/s on 256 KiB."""
    from test_findings import TOPOLOGY

    sizes = [4096 * 2**k for k in range(13)]  # 4 KiB .. 16 MiB
    latency = [
        document(
            "mem.latency",
            {"bytes": s, "chain": "page", "cpus": [0]},
            {"latency_ns": samples(1.0 if s <= 32768 else 4.0 if s <= 1 << 20 else 80.0, k)},
        )
        for k, s in enumerate(sizes)
    ]
    bandwidth = [
        document(
            "mem.bandwidth",
            {"op": "triad", "bytes": s, "threads": 1},
            {"bandwidth_Bps": samples(v, k)},
        )
        for k, (s, v) in enumerate([(16384, 40e9), (262144, 60e9), (1 << 26, 12e9)])
    ]
    return stored_run(path, latency + bandwidth, topology=TOPOLOGY)


def test_the_memory_levels_latencies_are_the_stored_ones(tmp_path):
    """L2 at 4 ns, as stored; planted, its row states the stored latency and capacity; without
    its finding, '-' (the plateau found on the curve stays)."""
    store, run_id = memory_run(tmp_path)
    assert " L2 4 ns 64 KiB – 1 MiB " in terminal(levels_table, store, run_id)

    def l2(change):
        return lambda f: change(f) if f["subject"].startswith("L2 ") else f

    alter(store, run_id, "memory.level", l2(planted(7.25, 7.0, 7.5)))
    assert " L2 7.25 ns 64 KiB – 1 MiB " in terminal(levels_table, store, run_id)
    capacity = {"capacity_bytes": 3 << 20}
    alter(
        store, run_id, "memory.level", l2(lambda f: {**f, "details": {**f["details"], **capacity}})
    )
    assert re.search(r" L2 7\.25 ns 64 KiB – 1 MiB +3 MiB ", terminal(levels_table, store, run_id))
    alter(store, run_id, "memory.level", l2(lambda f: None))
    shown = terminal(levels_table, store, run_id)
    assert re.search(r" L2 - 64 KiB – 1 MiB +- ", shown) and " L1 1 ns " in shown


def test_the_peak_bandwidth_is_the_stored_figure(tmp_path):
    store, run_id = memory_run(tmp_path)
    bandwidth = {r.params["bytes"]: r.id for r in store.results(run_id) if "op" in r.params}
    peak = bandwidth[262144]
    assert re.search(
        r"triad normal 60\.\d \[[56]\d\.\d, 60\.\d\]", terminal(bandwidth_table, store, run_id)
    )

    alter(store, run_id, "memory.peak_bandwidth", cites(peak, planted(70.5, 70.25, 70.75)))
    assert re.search(
        r"triad normal 70\.5 \[70\.2, 70\.8\]", terminal(bandwidth_table, store, run_id)
    )
    alter(store, run_id, "memory.peak_bandwidth", lambda f: None)
    assert re.search(r"triad normal -$", terminal(bandwidth_table, store, run_id))


# -- ping-pong ------------------------------------------------------------------------------------
def test_the_pingpong_headline_is_the_stored_figures(tmp_path):
    """2 us at 8 B; 9.53 GB/s at 1 MiB, half of it from 64 KiB on: as stored; planted latency,
    bandwidth and n½ are what the headline states."""
    latency = {8: 2000.0, 1024: 2500.0, 65536: 9000.0, 1 << 20: 110_000.0}
    store, run_id = stored_run(
        tmp_path,
        [
            document(
                "comm.pingpong",
                {"np": 2, "peer": 1, "direction": "uni", "bytes": b},
                {"latency_ns": samples(ns, b), "bandwidth_Bps": samples(b / ns * 1e9, b + 1)},
                placement={"link": "intra-node"},
            )
            for b, ns in latency.items()
        ],
    )
    smallest = next(r.id for r in store.results(run_id) if r.metric == "latency_ns")
    shown = terminal(pingpong_table, store, run_id)
    assert re.search(r"8 B: [12]\.\d+ µs \[[^]]+\] 9\.5\d GB/s \[[^]]+\] 1 MiB 64 KiB$", shown)

    alter(store, run_id, "comm.pingpong_latency", cites(smallest, planted(3.5, 3.25, 3.75)))
    details = {"half_peak_bytes": 4096}
    alter(store, run_id, "comm.pingpong_bandwidth", planted(12.5, 12.25, 12.75, details=details))
    shown = terminal(pingpong_table, store, run_id)
    assert shown.endswith("8 B: 3.5 µs [3.25, 3.75] 12.5 GB/s [12.2, 12.8] 1 MiB 4 KiB")
    alter(store, run_id, "comm.pingpong_latency", lambda f: None)
    assert "µs" not in terminal(pingpong_table, store, run_id)


# -- noise: the detours and the strongest line ----------------------------------------------------
def test_the_noise_table_states_the_stored_detours_and_strongest_line(tmp_path):
    """FWQ quanta of 10 us, every 10th 5 us longer: 5 us lost at p99 and at most, a line at
    1 / 105 us holding all of it; planted, the p99, largest and strongest-line columns state the
    stored slowdown finding's figures."""
    store, run_id = noise_run(tmp_path)
    assert " 5 us 5 us 9524 Hz (100 %) " in terminal(noise_table, store, run_id)

    def planted_detours(finding: dict) -> dict:
        figures = {
            "p99_lost_ns": 1234.0,
            "largest_lost_ns": 98_700.0,
            "top_line_hz": 777.0,
            "top_line_share": 0.42,
        }
        return {**finding, "details": {**finding["details"], **figures}}

    alter(store, run_id, "noise.slowdown", planted_detours)
    assert " 1.23 us 98.7 us 777 Hz (42 %) " in terminal(noise_table, store, run_id)
    alter(store, run_id, "noise.slowdown", lambda f: None)
    assert " - - - - " in terminal(noise_table, store, run_id)
