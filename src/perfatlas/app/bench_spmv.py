"""app.spmv: irregular sparse matrix-vector products with remote access, after the SCI-cluster
study of SpMV on distributed shared memory: remote read (y = A x) and remote write (y = A^T x),
element-wise remote access against replication, the fraction f of nonzeros that touch a remote
element and the reuse r of each distinct remote element, and the efficiency models
E1 = t_l / (t_l + f t_r) (element-wise) and E2 = t_l / (t_l + f t_r / r) (replication) checked
against measured efficiency.

The rows are partitioned across `np` MPI ranks in contiguous blocks. The matrix comes from a
Matrix Market file (`matrix=`) or is a generated 5- or 7-point Laplacian mesh or app.spsolve's Q1
elasticity stiffness matrix (`problem=`), which `permute=random` renumbers at random to make access irregular. The node-level CSR kernel runs
with `threads` OpenMP threads per rank; its roofline compares with `bandwidth`, which perfatlas
fills from a stored mem.bandwidth triad result of this machine when the user gives none.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from perfatlas.app.sparse_matrix import (
    PROBLEM_REFINED,
    check_threads,
    matrix_label,
    resolve_matrix,
)
from perfatlas.benchmarks.benchmark import DocumentSink, register
from perfatlas.benchmarks.time_model import CALIBRATION_SAMPLES, samples
from perfatlas.comm.mpi import MpiBenchmark, np_param
from perfatlas.common.errors import UserError
from perfatlas.launch.launchers import LaunchOptions
from perfatlas.machine.placement import Placement
from perfatlas.machine.topology import Machine
from perfatlas.store.database import Store

POINTS = 8  # measurements of one launch (Benchmark.estimate)

PROBLEMS = ("laplace2d", "laplace3d", "elasticity3d")
VARIANTS = ("read_element", "read_replicate", "read_shared", "write_element", "write_combine")
BASELINES = ("local", "local_transposed")
KERNELS = ("csr_unroll", "csr_simd", "sell", "bcsr")  # optional node-level kernels (kernels=)


def names_parser(what: str, names: tuple[str, ...]):
    """The parser of a list of `names`: 'all', 'none' or comma-separated names, kept as written
    (the executable parses it too)."""

    def parse(text: str) -> str:
        if text not in ("all", "none"):
            for word in text.split(","):
                if word not in names:
                    raise UserError(
                        f"app.spmv: {what} '{word}' is not one of {', '.join(names)} "
                        "(or all, or none)"
                    )
        return text

    return parse


parse_variants = names_parser("variant", VARIANTS)
parse_kernels = names_parser("kernel", KERNELS)


def problem_rows(problem: str, n: int) -> int:
    """The order of a generated problem (native/app/spsolve/problems.h)."""
    if problem == "elasticity3d":
        return 3 * n * (n + 1) ** 2
    return n ** (2 if problem == "laplace2d" else 3)


def parse_bandwidth(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UserError(f"bandwidth='{text}' is not a number of byte/s") from None


def stored_triad(store: Store, machine: Machine, threads: int) -> tuple[float, str] | None:
    """The memory bandwidth to compare the CSR kernel with: this machine's stored mem.bandwidth
    triad result at the largest working set (DRAM, not a cache), preferring the thread count
    closest to `threads` (all threads of all ranks), then the latest. Returns (byte/s, source)."""
    rows = store.db.execute(
        "SELECT results.id, results.run_id, results.params, results.median FROM results "
        "JOIN runs ON runs.id = results.run_id WHERE results.benchmark = 'mem.bandwidth' "
        "AND results.metric = 'bandwidth_Bps' AND results.median IS NOT NULL "
        "AND results.not_measurable IS NULL AND runs.fingerprint = ?",
        (machine.fingerprint,),
    ).fetchall()
    candidates = []
    for result_id, run_id, text, median in rows:
        params = json.loads(text)
        if params.get("op") != "triad" or params.get("store", "normal") != "normal":
            continue
        used = params.get("threads") or len(params.get("cpus") or []) or 1
        key = (params.get("bytes", 0), -abs(used - threads), result_id)
        candidates.append((key, float(median), result_id, run_id, params.get("bytes"), used))
    if not candidates:
        return None
    _, median, result_id, run_id, size, used = max(candidates)
    return median, (
        f"stored mem.bandwidth result {result_id} of run {run_id}: median triad bandwidth at "
        f"bytes={size}, threads={used}"
    )


@register
class AppSpmv(MpiBenchmark):
    name = "app.spmv"
    summary = (
        "irregular SpMV with remote access: element-wise vs replicated one-sided reads (A x) and "
        "writes (A^T x), f, r, efficiency models, CSR roofline"
    )
    executable = "pa-spmv"
    min_np = 1
    needs = "it needs one rank"
    adds = (replace(np_param(default=2), after="vectors"),)
    refines = {
        "problem": {**PROBLEM_REFINED, "choices": PROBLEMS},
        "variants": {"parse": parse_variants},
        "kernels": {"parse": parse_kernels},
        "bandwidth": {  # None: a stored mem.bandwidth triad (with_stored)
            "parse": parse_bandwidth,
            "default": None,
            "help": "memory bandwidth (byte/s) of the roofline; default: a stored mem.bandwidth "
            "triad",
        },
    }
    metrics = {
        "csr_flops_per_s": "flop/s",
        **{f"{name}_s": "s" for name in (*BASELINES, *KERNELS, *VARIANTS)},
        "get_latency_ns": "ns",
        "accumulate_latency_ns": "ns",
    }

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        params = super().resolve(raw, machine)
        resolve_matrix(self.name, params, PROBLEMS)
        return params

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        super().check(params, machine)
        check_threads(self.name, params["threads"], machine)
        if params["problem"] is not None and params["np"] != "all":
            rows = problem_rows(params["problem"], params["n"])
            if params["np"] > rows:
                raise UserError(
                    f"{self.name}: np={params['np']} exceeds the {rows} rows of {params['problem']}"
                    f" n={params['n']}: every rank needs a block of at least one row"
                )

    def with_stored(self, params: dict[str, Any], store: Store, machine: Machine) -> dict[str, Any]:
        """bandwidth= from a stored mem.bandwidth triad result, when the user gave none."""
        if params.get("bandwidth") is not None:
            return {**params, "bandwidth_source": "given (bandwidth=)"}
        found = stored_triad(store, machine, params["threads"] * params["np"])
        if found is None:
            return params
        return {**params, "bandwidth": found[0], "bandwidth_source": found[1]}

    def native_args(self, params: dict[str, Any], machine: Machine) -> list[str]:
        skip = ("np", "bandwidth_source")
        return [f"{k}={v}" for k, v in params.items() if k not in skip and v is not None]

    def run(
        self,
        params: dict[str, Any],
        machine: Machine,
        options: LaunchOptions | None = None,
        placement: Placement | None = None,
        on_document: DocumentSink | None = None,
    ) -> list[dict]:
        source = params.get("bandwidth_source")

        def with_source(document: dict) -> None:  # before the document is stored
            roofline = (document.get("derived") or {}).get("roofline")
            if roofline is not None and source:
                roofline["bandwidth_source"] = source
            if on_document is not None:
                on_document(document)

        return super().run(params, machine, options, placement, with_source)

    def label(self, params: dict[str, Any]) -> str:
        shown = [matrix_label(params)]
        if params.get("permute") == "random":
            shown.append(f"permute=random seed={params.get('seed')}")
        shown += [f"np={params.get('np')}", f"threads={params.get('threads')}"]
        if params.get("variants") != "all":
            shown.append(f"variants={params.get('variants')}")
        if params.get("kernels") not in (None, "none"):
            shown.append(f"kernels={params.get('kernels')}")
        return " ".join(shown)

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """Reads and writes, element-wise and replicated, and the kernels: POINTS measurements of
        samples and calibration, each capped by time_limit."""
        per_point = (samples(params, 11) + CALIBRATION_SAMPLES) * float(
            params.get("min_sample_time") or 0.01
        )
        return POINTS * min(per_point, float(params.get("time_limit") or per_point))
