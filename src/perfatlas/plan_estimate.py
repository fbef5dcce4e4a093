"""Estimated wall time of one launch: a simple model per benchmark family (perfatlas run --plan).

Every launch costs a fixed start-up (fork, exec, loading the hwloc topology, writing and
validating the JSON, storing it): LAUNCH_S, measured on the two-core development VM over the
quick suite's launches; an mpirun launch adds MPI start-up (MPI_Init of every rank), MPI_START_S.
On top of that, per benchmark:
- sampled benchmarks (mem.*, parbench.kernel): points x (samples + 1 warm-up) x the time of one
  sample, which is min_sample_time or one pass over the working set where that is longer, plus
  the set-up of the buffer (allocation, first touch, building a pointer chain);
- noise: its duration;
- cpu.core_to_core: per pair (n(n-1)/2 of n CPUs, n-1 with pairs=first) and direction the
  samples, and the calibration (three sessions per growth step: about CORE_TO_CORE_CALIBRATION
  samples), of min_sample_time;
- comm.*: per measured point (a message size, a pair, a process count) the samples and
  calibration (about 4 more samples) of min_sample_time, capped by time_limit (native/comm/comm.c
  cuts the samples to fit time_limit), and the warm-up (warmup_time);
- app.*: (repetitions + 1) x (a fixed part + the problem's work: unknowns or cells x 5 us for
  sparse solves and sweeps, 2 nbin npix^3 flops at 10 Gflop/s for MADbench); app.spmv like comm;
- a size series (bytes=A,B,...) is one launch: the start-up once, the points' bodies summed;
- a launch the benchmark declares not measurable here (remote NUMA on one node) costs LAUNCH_S.
The model is deliberately simple: it is meant to say "2 minutes" or "3 hours", not "131 s".
"""

from __future__ import annotations

import math
from typing import Any

from perfatlas.machine import Machine

LAUNCH_S = 0.35  # per launch, measured here (see the module docstring)
MPI_START_S = 0.6  # mpirun + MPI_Init of a few ranks on one host, measured here
SETUP_BYTES_PER_S = 1e9  # allocating, first-touching and linking a buffer
DRAM_LOAD_S = 100e-9  # one dependent load beyond the last-level cache
CACHE_LOAD_S = 2e-9  # one dependent load within the caches
STREAM_BYTES_PER_S = 10e9  # one pass of a bandwidth kernel
APP_REPETITION_S = 0.05  # the fixed part of one repetition of an application proxy
APP_SECONDS_PER_UNKNOWN = 5e-6  # app.spsolve, app.sweep: per unknown or cell and repetition
APP_HYDRO_SECONDS_PER_CELL_CYCLE = 1e-6  # app.hydro: measured 0.6 us on the development VM
DENSE_FLOPS_PER_S = 10e9  # app.madbench: ScaLAPACK on a few cores
APP_SPMV_POINTS = 8  # app.spmv: reads and writes, element-wise and replicated, and the kernels
CALIBRATION_SAMPLES = 4  # comm: warm-up and batch calibration, in samples
CORE_TO_CORE_CALIBRATION = 6  # cpu.core_to_core: a pair's calibration, in samples


def launch_seconds(name: str, params: dict[str, Any], machine: Machine, mpi: bool) -> float:
    """The estimated wall time of one launch of benchmark `name` with resolved `params`."""
    from perfatlas.benchmarks import get
    from perfatlas.benchmarks.base import series_points

    benchmark = get(name)
    if benchmark.unmeasurable(params, machine):  # answered without running the executable
        return LAUNCH_S
    family = name.split(".")[0]
    measure = {
        "mem": _memory,
        "parbench": _memory,
        "noise": lambda n, p, m: float(p.get("duration") or 0),
        "cpu": _cpu,
        "comm": _comm,
        "app": _app,
    }.get(family, _memory)
    # a size series is one launch that measures every point in turn (docs/sizing.md)
    body = sum(measure(name, point, machine) for point in series_points(params, benchmark))
    return LAUNCH_S + (MPI_START_S if mpi else 0.0) + body


def _samples(params: dict[str, Any], default: int = 9) -> int:
    return int(params.get("samples") or default)


def _memory(name: str, params: dict[str, Any], machine: Machine) -> float:
    size = int(params.get("bytes") or 0)
    llc = machine.last_level_cache_bytes
    if name == "mem.latency":
        per_load = CACHE_LOAD_S if size <= llc else DRAM_LOAD_S
        one_pass = size / 64 * per_load
        points = len(params.get("cpus") or [0])
    else:
        one_pass = size / STREAM_BYTES_PER_S
        points = 3 if name == "mem.contention" else 1  # none, read, write interleaved
    load = int(params.get("load_bytes") or 0)  # mem.contention: a full load pass per sample
    setup = (size + load) / SETUP_BYTES_PER_S
    sample = max(float(params.get("min_sample_time") or 0.02), one_pass) + load / STREAM_BYTES_PER_S
    return setup + points * (_samples(params) + 1) * sample


def _cpu(name: str, params: dict[str, Any], machine: Machine) -> float:
    if name != "cpu.core_to_core":
        return _memory(name, params, machine)
    n = len(params.get("cpus") or machine.pus)
    pairs = n - 1 if params.get("pairs") == "first" else n * (n - 1) // 2
    directions = 1 if params.get("directions") == "one" else 2
    sample = float(params.get("min_sample_time") or 2e-4)
    return pairs * (directions * _samples(params, 15) + CORE_TO_CORE_CALIBRATION) * sample


def _comm_points(name: str, params: dict[str, Any]) -> int:
    """How many measurements one launch makes (native/comm/*.c: one document each)."""
    ranks = int(params.get("np") or 2)

    def doublings(low: int, high: int) -> int:
        return int(math.log2(max(high, 1) / max(low, 1))) + 1 if high >= max(low, 1) else 0

    def process_counts() -> int:  # every P in 2..np up to 16, else powers of two and np
        return ranks - 1 if ranks <= 16 else int(math.log2(ranks)) + 1

    if name == "comm.pingpong":
        low, high = int(params.get("min_bytes") or 0), int(params.get("max_bytes") or 4 << 20)
        return (1 if low == 0 else 0) + doublings(max(low, 1), high)
    if name == "comm.distance":
        return 2 * (ranks - 1)  # a latency and a bandwidth measurement per peer
    if name == "comm.hotspot":
        return int(params.get("max_senders") or 0) or ranks - 1
    if name == "comm.complement":
        return 2
    if name == "comm.allreduce":
        low, high = int(params.get("min_bytes") or 8), int(params.get("max_bytes") or 8)
        return process_counts() * doublings(low, high)
    if name == "comm.barrier":
        return process_counts()
    if name == "comm.rma":  # 4 cases x get/put x 3 types x k = 1, 2, 4 .. max_count
        return 4 * 2 * 3 * doublings(1, int(params.get("max_count") or 64))
    return 1


def _comm(name: str, params: dict[str, Any], machine: Machine) -> float:
    per_point = (_samples(params, 11) + CALIBRATION_SAMPLES) * float(
        params.get("min_sample_time") or 0.001
    )
    limit = float(params.get("time_limit") or per_point)
    warm = min(float(params.get("warmup_time") or 0.01), 0.1 * limit)  # native/comm/comm.c
    return _comm_points(name, params) * (min(per_point, limit) + warm)


def _app(name: str, params: dict[str, Any], machine: Machine) -> float:
    """Repetitions (the untimed first one included) x (a fixed part + the problem's work)."""
    if name == "app.spmv":
        samples = _samples(params, 11) + CALIBRATION_SAMPLES
        per_point = samples * float(params.get("min_sample_time") or 0.01)
        return APP_SPMV_POINTS * min(per_point, float(params.get("time_limit") or per_point))
    return (int(params.get("repeat") or 1) + 1) * (APP_REPETITION_S + _app_work(name, params))


def _app_work(name: str, params: dict[str, Any]) -> float:
    """Seconds of work of one repetition beyond the fixed part, by the problem's size: sparse
    solves and sweeps linear in unknowns or cells, hydro in cells and cycles; MADbench's W step, nbin matrix products of
    order npix (2 nbin npix^3 flops)."""
    if name == "app.madbench":
        npix, nbin = int(params.get("npix") or 1024), int(params.get("nbin") or 16)
        return 2 * nbin * npix**3 / DENSE_FLOPS_PER_S
    if name == "app.hydro":  # per cell and cycle; the implicit solver about three times more
        per_cell = APP_HYDRO_SECONDS_PER_CELL_CYCLE * (3 if params.get("solver") == "cg" else 1)
        cycles = int(params.get("cycles") or 10)
        return int(params.get("cells_per_pe") or 13500) * cycles * per_cell
    if name == "app.sweep":
        cells = (
            int(params.get("it") or 20) * int(params.get("jt") or 20) * int(params.get("kt") or 20)
        )
        return cells * APP_SECONDS_PER_UNKNOWN
    n = int(params.get("n") or 32)
    unknowns = {"laplace2d": n**2, "laplace3d": n**3, "elasticity3d": 3 * (n + 1) ** 3}
    return unknowns.get(str(params.get("problem")), n**3) * APP_SECONDS_PER_UNKNOWN
