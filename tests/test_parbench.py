"""PARbench kernel catalog and runner (native/parbench, perfatlas.parbench): every kernel's
numerical check at a tiny size, a planted wrong result caught, declared counts against exact
iteration counts, program mode's timeline, one-sentence errors, and the store through the CLI."""

from __future__ import annotations

import json
import math
import os
import subprocess

import pytest

from perfatlas.launch.native import executable
from perfatlas.machine.topology import Machine
from perfatlas.parbench.base_data import Options, plan, volumes
from perfatlas.store.database import Store

TINY = 50_000  # bytes: every kernel fits, each pass takes microseconds
FAST = ["samples=2", "min_sample_time=100us"]


def isqrt_of(value: int) -> int:
    return math.isqrt(value)


def largest(fits) -> int:
    """The largest m >= 0 with fits(m)."""
    m = 0
    while fits(m + 1):
        m += 1
    return m


def power_of_two(fits, smallest: int) -> int:
    n = smallest
    while fits(2 * n):
        n *= 2
    return n


def vector(bytes_: int, arrays: int) -> int:
    return bytes_ // (8 * arrays) // 32 * 32


def matmul_order(bytes_: int) -> int:
    return largest(lambda m: 24 * m * m <= bytes_) // 16 * 16


# Per kernel, written from the method independently of kernels.def: (load bytes, store bytes,
# flops) per iteration, and (shape n, iterations of one pass) for `b` bytes at stride 1.
EXACT = {
    "copy": ((8, 8, 0), lambda b: (vector(b, 2),) * 2),
    "scale": ((8, 8, 1), lambda b: (vector(b, 2),) * 2),
    "add": ((16, 8, 1), lambda b: (vector(b, 3),) * 2),
    "triad": ((16, 8, 2), lambda b: (vector(b, 3),) * 2),
    "dot": ((16, 0, 2), lambda b: (vector(b, 2),) * 2),
    "daxpy": ((16, 8, 2), lambda b: (vector(b, 2),) * 2),
    "sum": ((8, 0, 1), lambda b: (vector(b, 1),) * 2),
    "reduction": ((8, 0, 4), lambda b: (vector(b, 1),) * 2),
    "prefix_sum": ((8, 8, 1), lambda b: (vector(b, 2),) * 2),
    "stencil1d": ((24, 8, 5), lambda b: (b // 16, b // 16 - 2)),
    "stencil2d": ((40, 8, 6), lambda b: (isqrt_of(b // 16), (isqrt_of(b // 16) - 2) ** 2)),
    "stencil3d": ((56, 8, 8), lambda b: (n := largest(lambda m: 16 * m**3 <= b), (n - 2) ** 3)),
    "jacobi2d": ((40, 8, 5), lambda b: (isqrt_of(b // 24), (isqrt_of(b // 24) - 2) ** 2)),
    "gauss_seidel2d": ((40, 8, 5), lambda b: (isqrt_of(b // 16), (isqrt_of(b // 16) - 2) ** 2)),
    "dgemv": ((16, 0, 2), lambda b: (m := largest(lambda m: 8 * m * m + 16 * m <= b), m * m)),
    "dgemv_t": ((16, 0, 2), lambda b: (m := largest(lambda m: 8 * m * m + 16 * m <= b), m * m)),
    "dgemm_naive": ((16, 0, 2), lambda b: (matmul_order(b), 16 * matmul_order(b) ** 2)),
    "dgemm_blocked": ((16, 8, 2), lambda b: (matmul_order(b), 16 * matmul_order(b) ** 2)),
    "lu_step": ((16, 8, 2), lambda b: (m := isqrt_of(b // 16), (m - 1) ** 2)),
    "spmv": ((20, 0, 2), lambda b: ((b - 4) // 116, 8 * ((b - 4) // 116))),
    "transpose": ((8, 8, 0), lambda b: (isqrt_of(b // 16), isqrt_of(b // 16) ** 2)),
    "transpose_blocked": ((8, 8, 0), lambda b: (isqrt_of(b // 16), isqrt_of(b // 16) ** 2)),
    "column_sum": ((8, 0, 1), lambda b: (isqrt_of(b // 8), isqrt_of(b // 8) ** 2)),
    "gather": ((12, 8, 0), lambda b: (b // 20,) * 2),
    "scatter": ((12, 8, 0), lambda b: (b // 20,) * 2),
    "random_access": ((8, 8, 0), lambda b: (power_of_two(lambda n: 8 * n <= b, 32),) * 2),
    "pointer_chase": ((8, 0, 0), lambda b: (b // 8, min(b // 8, 16384))),
    "histogram": ((8, 4, 0), lambda b: ((b - 16384) // 4,) * 2),
    "sort": ((8, 8, 0), lambda b: (b // 24, b // 24 * math.ceil(math.log2(b // 24)))),
    "fft": (
        (48, 32, 10),
        lambda b: (n := power_of_two(lambda n: 40 * n <= b, 4), n // 2 * int(math.log2(n))),
    ),
    "polynomial": ((8, 8, 32), lambda b: (b // 16,) * 2),
    "divide_sqrt": ((8, 8, 3), lambda b: (b // 16,) * 2),
    "int_hash": ((8, 8, 0), lambda b: (b // 16,) * 2),
    "branchy": ((8, 0, 0), lambda b: (b // 8,) * 2),
}
STRIDED = {"copy", "scale", "add", "triad", "dot", "daxpy", "sum", "reduction"}


def parbench(*words: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(executable("pa-parbench")), *words],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def measured(*words: str) -> dict:
    done = parbench("mode=kernel", *FAST, *words)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def sentence(done: subprocess.CompletedProcess, status: int = 2) -> str:
    """The one line a failure writes (program name first), after checking the exit status."""
    assert done.returncode == status, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pa-parbench: "), done.stderr
    assert done.stdout == ""
    return lines[0]


@pytest.fixture(scope="module")
def catalog() -> list[dict]:
    done = parbench("mode=list")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# -- the catalog ------------------------------------------------------------------------------


def test_catalog_has_every_behaviour_and_consistent_counts(catalog):
    assert len(catalog) >= 28
    assert {k["name"] for k in catalog} == set(EXACT)  # a new kernel needs its exact counts here
    assert {k["class"] for k in catalog} >= {
        "stream",
        "stencil",
        "dense",
        "sparse",
        "traversal",
        "irregular",
        "scan",
        "sort",
        "spectral",
        "compute",
    }
    for k in catalog:
        loads, stores, flops = EXACT[k["name"]][0]
        assert (k["load_bytes_per_iteration"], k["store_bytes_per_iteration"]) == (loads, stores)
        assert k["flops_per_iteration"] == flops
        assert k["bytes_per_iteration"] == loads + stores
        assert k["write_fraction"] == pytest.approx(stores / (loads + stores))
        assert k["strided"] == (k["name"] in STRIDED)
        assert k["description"] and k["iteration"]


# -- every kernel: its check passes, its counts are exact, a wrong result is caught -------------


@pytest.mark.parametrize("name", sorted(EXACT))
def test_kernel_verifies_and_counts_exactly(name):
    doc = measured(f"kernel={name}", f"bytes={TINY}")
    (loads, stores, flops), shape = EXACT[name]
    n, iterations = shape(TINY)
    derived = doc["derived"]
    assert doc["schema"] == "perfatlas.result/1" and doc["benchmark"] == "parbench.kernel"
    assert derived["verified"] is True
    assert derived["shape_n"] == n
    assert derived["iterations_per_pass"] == iterations
    assert derived["load_bytes_per_pass"] == loads * iterations
    assert derived["store_bytes_per_pass"] == stores * iterations
    assert derived["bytes_per_pass"] == (loads + stores) * iterations
    assert derived["flops_per_pass"] == flops * iterations
    assert ("flops_per_s" in doc["samples"]) == (flops > 0)
    assert len(doc["samples"]["runtime_s"]) == 2 and all(t > 0 for t in doc["samples"]["runtime_s"])
    for runtime, bandwidth in zip(doc["samples"]["runtime_s"], doc["samples"]["bandwidth_Bps"]):
        assert bandwidth == pytest.approx(derived["bytes_per_pass"] / runtime)
    assert derived["hardware_counters"]  # what counted, or "no hardware counters: why"


def test_triad_at_n_elements_moves_24n_bytes_and_2n_flops():
    doc = measured("kernel=triad", "bytes=2.5MB")
    n = 2_500_000 // 24 // 32 * 32
    assert doc["params"]["bytes"] == 2_500_000  # MB is SI
    assert doc["derived"]["bytes_per_pass"] == 24 * n
    assert doc["derived"]["flops_per_pass"] == 2 * n
    assert doc["derived"]["write_fraction"] == pytest.approx(1 / 3)


@pytest.mark.parametrize("name", sorted(STRIDED))
@pytest.mark.parametrize("stride", [2, 32])
def test_strided_kernels_visit_every_sth_element(name, stride):
    doc = measured(f"kernel={name}", f"bytes={TINY}", f"stride={stride}")
    n, _ = EXACT[name][1](TINY)
    assert doc["derived"]["iterations_per_pass"] == n // stride
    assert doc["derived"]["verified"] is True


def test_two_threads_each_run_their_share():
    doc = measured("kernel=dgemm_blocked", "bytes=200000", "threads=2", "cpus=0,1")
    m = matmul_order(100_000)
    assert doc["derived"]["shape_n"] == m
    assert doc["derived"]["iterations_per_pass"] == 2 * 16 * m * m
    assert [t["cpu_requested"] for t in doc["placement"]["threads"]] == [0, 1]


@pytest.mark.parametrize("name", sorted(EXACT))
def test_a_wrong_result_is_caught(name):
    done = parbench(
        "mode=kernel",
        *FAST,
        f"kernel={name}",
        f"bytes={TINY}",
        env={"PERFATLAS_PARBENCH_CORRUPT": "1"},
    )
    assert f"thread 0: kernel {name} failed its check: " in sentence(done, status=3)


# -- program mode -------------------------------------------------------------------------------


def test_program_runs_its_invocations_in_order(tmp_path):
    program = tmp_path / "prog.txt"
    program.write_text(
        "# a three-line program\n"
        "kernel=triad bytes=240kB stride=1 threads=1 repeat=37\n"
        "\n"
        "kernel=pointer_chase bytes=2.5MB repeat=3   # latency-bound\n"
        "kernel=dgemm_blocked bytes=240kB threads=2 repeat=2\n"
    )
    done = parbench("mode=program", f"file={program}", "cpus=0,1")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["benchmark"] == "parbench.program"
    runs = doc["derived"]["invocations"]
    assert [(r["line"], r["kernel"], r["repeat"], r["threads"]) for r in runs] == [
        (2, "triad", 37, 1),
        (4, "pointer_chase", 3, 1),
        (5, "dgemm_blocked", 2, 2),
    ]
    assert runs[0]["iterations"] == 37 * vector(240_000, 3)
    assert runs[0]["bytes_moved"] == 24 * runs[0]["iterations"]
    assert runs[1]["iterations"] == 3 * 16384
    assert runs[2]["iterations"] == 2 * 2 * 16 * matmul_order(120_000) ** 2
    times = [t for r in runs for t in (r["setup_start_s"], r["start_s"], r["end_s"])]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert doc["samples"]["invocation_s"] == pytest.approx(
        [r["end_s"] - r["start_s"] for r in runs]
    )
    assert all(r["verified"] for r in runs)


@pytest.mark.parametrize(
    "text, says",
    [
        ("kernel=triad\nkernel=triad foo=1\n", "prog.txt line 2: unknown parameter 'foo'"),
        ("# c\n\nkernel=nope\n", "prog.txt line 3: kernel 'nope' is not in the catalog"),
        ("kernel=triad bytes\n", "prog.txt line 1: 'bytes' is not a key=value word"),
        ("kernel=dgemv stride=2\n", "prog.txt line 1: stride=2 does not apply to kernel dgemv"),
        ("kernel=triad stride=3\n", "prog.txt line 1: stride=3 is not one of 1, 2, 4, 8, 16, 32"),
        ("kernel=triad threads=3\n", "prog.txt line 1: threads=3 needs 3 PUs but cpus= names 2"),
        ("bytes=1MB\n", "prog.txt line 1: the line names no kernel"),
        ("kernel=triad json=x\n", "prog.txt line 1: unknown parameter 'json'"),
        ("kernel=histogram bytes=1kB\n", "prog.txt line 1: 1000 bytes per thread are too few"),
        ("# only a comment\n", "prog.txt holds no invocations"),
    ],
)
def test_bad_program_names_the_line(tmp_path, text, says):
    program = tmp_path / "prog.txt"
    program.write_text(text)
    done = parbench("mode=program", f"file={program}", "cpus=0,1")
    assert says in sentence(done)


def test_missing_program_file_is_one_sentence(tmp_path):
    done = parbench("mode=program", f"file={tmp_path / 'none.txt'}")
    assert "cannot read the program file" in sentence(done)


@pytest.mark.parametrize(
    "words, says",
    [
        (["kernel=nope"], "kernel 'nope' is not one of copy, scale"),
        (["stride=3"], "stride=3 is not one of 1, 2, 4, 8, 16, 32"),
        (["kernel=sort", "stride=4"], "stride=4 does not apply to kernel sort"),
        (["threads=2", "cpus=0"], "threads=2 needs 2 PUs but cpus=0 names 1"),
        (["kernel=dgemm_naive", "bytes=1000"], "too few for kernel dgemm_naive"),
        (["bytes=2.5XB"], "bytes=2.5XB is not a size"),
        (["mode=run"], "mode 'run' is not one of kernel, program, list"),
    ],
)
def test_bad_arguments_are_one_sentence(words, says):
    assert says in sentence(parbench(*words))


# -- through perfatlas -------------------------------------------------------------------------


def test_measure_stores_a_kernel_variant(cli, tmp_path):
    out = tmp_path / "triad.json"
    result = cli(
        "measure",
        "parbench.kernel",
        "kernel=triad",
        "bytes=2.5MB",
        "samples=3",
        "min_sample_time=1ms",
        "--json",
        str(out),
    )
    assert result.code == 0, result.err
    doc = json.loads(out.read_text())
    assert doc["params"]["bytes"] == 2_500_000 and doc["launch"]["launcher"] == "local"
    store = Store(cli.db)
    metrics = {r.metric: r for r in store.results(store.resolve_run("last"))}
    assert set(metrics) == {"runtime_s", "bandwidth_Bps", "flops_per_s"}
    assert metrics["runtime_s"].n == 3 and metrics["bandwidth_Bps"].unit == "byte/s"


@pytest.mark.parametrize(
    "words, says",
    [
        (["kernel=nope"], "kernel 'nope' is not in the parbench catalog"),
        (["kernel=sort", "stride=2"], "stride=2 does not apply to kernel sort"),
        (["stride=5"], "stride=5 is not one of 1, 2, 4, 8, 16, 32"),
    ],
)
def test_measure_rejects_bad_parameters(cli, words, says):
    result = cli("measure", "parbench.kernel", *words)
    assert result.code == 2 and says in result.err


def test_base_quick_stores_every_variant_with_efficiency(cli):
    result = cli(
        "parbench", "base", "--quick", "--kernels", "triad,pointer_chase,sort", "--threads", "1,2"
    )
    assert result.code == 0, result.err
    store = Store(cli.db)
    run_id = store.resolve_run("last")
    assert store.run(run_id)["suite"] == "parbench-base"
    results = store.results(run_id, "parbench.kernel")
    variants = {(r.params["kernel"], r.params["bytes"], r.params["threads"]) for r in results}
    assert variants == {(k, 240_000, t) for k in ("triad", "pointer_chase", "sort") for t in (1, 2)}
    efficiency = [r for r in results if r.metric == "parallel_efficiency"]
    assert sorted(r.params["kernel"] for r in efficiency) == ["pointer_chase", "sort", "triad"]
    assert all(r.params["threads"] == 2 and r.n == 3 and r.median > 0 for r in efficiency)
    assert "6 kernel variants stored" in result.out


def test_base_plan_spans_kernels_volumes_strides_threads():
    machine = Machine(
        topology={
            "pus": [{"os_index": i, "core": i, "package": 0, "numa_node": 0} for i in range(4)],
            "numa_nodes": [{"os_index": 0, "memory_bytes": 2**34, "cpus": "0-3"}],
            "caches": [
                {"level": 1, "type": "data", "size_bytes": 32768},
                {"level": 2, "type": "unified", "size_bytes": 2**20},
                {"level": 3, "type": "unified", "size_bytes": 2**24},
            ],
        }
    )
    sizes = volumes(machine, quick=False)
    assert sizes == sorted(
        {240_000, 2_500_000, 25_000_000, 16384, 65536, 2**19, 2**21, 2**23, 2**25}
    )
    variants = plan(machine, Options(threads=[1, 4], kernels="triad,sort"))
    assert len(variants) == (6 + 1) * len(sizes) * 2  # triad: 6 strides; sort: 1
    assert variants[0]["threads"] == "1" and variants[1]["threads"] == "4"
    assert variants[1]["cpus"] == "0-3"
