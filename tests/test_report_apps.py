"""The report sections of the application proxies (app.spsolve, app.madbench, app.spmv,
app.sweep) after small real measurements through the CLI: each section is present with its
figures, and its figures are the documents' and the stored samples' (exact where they can be);
the analysis (perfatlas.app) with exact numbers; a proxy that cannot run in this build
is "not measurable here", not a failed suite."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from native_build import partial_bin

from perfatlas.app import analysis_spmv as spmv_analysis
from perfatlas.app import analysis_sweep as sweep_analysis
from perfatlas.app.analysis_points import Point, phase_stack, points
from perfatlas.app.proxy_figures import seconds_with_ci
from perfatlas.common.stats import ratio, summarize
from perfatlas.common.units import format_number, format_size
from perfatlas.launch.native import bin_dir
from perfatlas.store.database import Store
from perfatlas.store.result import Result


# -- helpers --------------------------------------------------------------------------------------
class Tables(HTMLParser):
    """Every table of an HTML fragment: its header cells and rows of cell texts."""

    def __init__(self):
        super().__init__()
        self.tables: list[dict] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"columns": [], "rows": []})
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None and self.tables:
            table = self.tables[-1]
            if table["columns"]:
                table["rows"].append(self._row)
            else:  # the first row is the header
                table["columns"] = self._row
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def tables(html: str) -> list[dict]:
    parser = Tables()
    parser.feed(html)
    return parser.tables


def table_with(html: str, column: str) -> list[dict[str, str]]:
    """The rows (column -> text) of the first table that has `column`."""
    for table in tables(html):
        if column in table["columns"]:
            return [dict(zip(table["columns"], row)) for row in table["rows"]]
    raise AssertionError(f"no table with a column '{column}'")


def section_html(html: str, name: str) -> str:
    match = re.search(rf'<section id="{name}">(.*?)</section>', html, re.S)
    assert match, f"section {name} missing"
    return match.group(1)


def run_suite(cli, tmp_path: Path, text: str) -> tuple[str, list[Result]]:
    """`perfatlas run` of a suite file; returns the report it wrote and the stored results."""
    suite, out = tmp_path / "suite.toml", tmp_path / "out"
    suite.write_text(text)
    done = cli("run", str(suite), "--out", str(out))
    assert done.code == 0, done.err
    store = Store(cli.db)
    run_id = store.resolve_run("last")
    return (out / f"run-{run_id}.html").read_text(), store.results(run_id)


def by_metric(results: list[Result], benchmark: str, **params) -> dict[str, Result]:
    found = {
        r.metric: r
        for r in results
        if r.benchmark == benchmark and all(r.params.get(k) == v for k, v in params.items())
    }
    assert found, f"no {benchmark} result with {params}"
    return found


def madbench_built() -> bool:
    return (bin_dir() / "pa-madbench").is_file()


# -- app.spsolve ----------------------------------------------------------------------------------
SPSOLVE = """
[[step]]
benchmark = "app.spsolve"
problem = "laplace2d"
n = 12
solver = "cholmod"
ordering = ["amd", "metis"]
repeat = 3

[[step]]
benchmark = "app.spsolve"
problem = "elasticity3d"
n = 3
solver = "cholmod"
repeat = 3
"""


def test_spsolve_section_stacks_the_phases_and_states_the_documents_facts(cli, tmp_path):
    html, results = run_suite(cli, tmp_path, SPSOLVE)
    section = section_html(html, "app-spsolve")
    assert section.count("<svg") == 2  # one phase figure per matrix
    assert "laplace2d n=12" in section and "elasticity3d n=3" in section
    facts = table_with(section, "nnz(A)")
    assert len(facts) == 3
    for row in facts:
        ordering = row["configuration"].split()[1]
        problem = row["matrix"].split()[0]
        metrics = by_metric(results, "app.spsolve", problem=problem, ordering=ordering)
        derived = metrics["numeric_s"].document["derived"]
        assert row["n"] == str(derived["n"])
        assert row["nnz(A)"] == str(derived["nnz_A"])
        assert row["nnz(L)"] == f"{derived['nnz_L']:.0f}"
        assert row["fill"] == f"{derived['fill_ratio']:.3g}"
        assert row["residual"] == f"{derived['residual']:.2g}"
    assert {r["nnz(A)"] for r in facts if r["matrix"] == "laplace2d n=12"} == {"672"}  # 5n^2 - 4n
    phases = table_with(section, "numeric")
    amd = by_metric(results, "app.spsolve", problem="laplace2d", ordering="amd")
    row = next(r for r in phases if r["configuration"] == "cholmod amd threads=1")
    assert row["numeric"] == seconds_with_ci(amd["numeric_s"])
    # the whisker: the per-repetition sums of the four phases
    phases = ("reorder_s", "symbolic_s", "numeric_s", "solve_s")
    assert row["total"] == seconds_with_ci(summarize(np.sum([amd[m].samples for m in phases], 0)))


# -- app.madbench ---------------------------------------------------------------------------------
MADBENCH = """
[[step]]
benchmark = "app.madbench"
npix = 128
nbin = 4
np = [1, 4]
repeat = 3
"""


def test_madbench_section_shows_phases_peak_bytes_and_checks(cli, tmp_path):
    if not madbench_built():
        pytest.skip("pa-madbench is not built (ScaLAPACK and Open MPI); see the next test")
    html, results = run_suite(cli, tmp_path, MADBENCH)
    section = section_html(html, "app-madbench")
    assert section.count("<svg") == 2  # stacked phases, % of DGEMM
    rows = table_with(section, "bytes read")
    assert len(rows) == 8  # 4 phases x 2 configurations
    for row in rows:
        np_ = int(row["configuration"].split()[0].split("=")[1])
        derived = by_metric(results, "app.madbench", np=np_)["W_s"].document["derived"]
        phase = row["phase"]
        read, written = derived["bytes_read"][phase], derived["bytes_written"][phase]
        assert row["bytes read"] == (format_size(read) if read else "0")
        assert row["bytes written"] == (format_size(written) if written else "0")
        assert row["flops"] == f"{derived['flops'][phase]:.4g}"
        waited = by_metric(results, "app.madbench", np=np_)[f"{phase}_io_wait_s"]
        assert row["of it waiting on I/O [95 % CI]"] == seconds_with_ci(waited)
    # the W phase reads the nbin dS/dC_b and writes the nbin W_b: 4 x 128^2 doubles each
    w = next(r for r in rows if r["phase"] == "W")
    assert w["bytes read"] == w["bytes written"] == format_size(4 * 128 * 128 * 8)
    checks = table_with(section, "tr D^-1")
    assert [c["all below 1e-08"] for c in checks] == ["passed", "passed"]
    # the same sky on 1 and on 4 ranks: the same tr D^-1 and sum of D^-1, to 6 digits
    assert checks[0]["tr D^-1"] == checks[1]["tr D^-1"]
    assert checks[0]["sum of D^-1"] == checks[1]["sum of D^-1"]
    one = by_metric(results, "app.madbench", np=1)["W_s"].document["derived"]
    assert checks[0]["tr D^-1"] == format_number(one["invD_trace"], 6)
    assert "oversubscribed" not in section or "more ranks than this host has PUs" in section


def test_a_build_without_madbench_stores_not_measurable_and_the_suite_goes_on(
    cli, tmp_path, monkeypatch
):
    """A build without ScaLAPACK (or an MPICH build): the madbench step is 'not built here' with
    the reason, the next step still runs."""
    partial = partial_bin(tmp_path / "bin", {"ScaLAPACK": ("pa-madbench",)})
    monkeypatch.setenv("PERFATLAS_BIN_DIR", str(partial))
    html, results = run_suite(
        cli,
        tmp_path,
        MADBENCH.replace("np = [1, 4]", "np = 1")
        + '[[step]]\nbenchmark = "app.sweep"\nit = 4\njt = 4\nkt = 4\nmk = 2\nrepeat = 2\n',
    )
    madbench = [r for r in results if r.benchmark == "app.madbench"]
    assert madbench and all(r.not_measurable for r in madbench)
    assert madbench[0].not_measurable == (
        "not built here: ScaLAPACK: ScaLAPACK was not found at build time"
    )
    assert any(r.benchmark == "app.sweep" and r.samples for r in results)
    assert '<section id="app-madbench">' not in html
    assert "not built here: ScaLAPACK" in section_html(html, "not-measurable")


def test_spsolve_without_mumps_is_not_built_here_and_cholmod_still_runs(monkeypatch, tmp_path):
    """A build without MUMPS (no libmumps-dev, or an MPICH build): solver=mumps is stored as not
    built here, with the reason the build recorded; CHOLMOD solves as before."""
    from perfatlas.benchmarks import get
    from perfatlas.machine.topology import Machine

    monkeypatch.setenv("PERFATLAS_BIN_DIR", str(partial_bin(tmp_path / "bin", {"MUMPS": ()})))
    spsolve = get("app.spsolve")
    machine = Machine.detect()
    mumps = spsolve.resolved({"problem": "laplace2d", "n": "8", "solver": "mumps"}, machine)
    [document] = spsolve.run(mumps, machine)
    assert document["not_measurable"] == "not built here: MUMPS: MUMPS was not found at build time"
    assert set(document["units"]) == set(spsolve.metrics)
    cholmod = spsolve.resolved({"problem": "laplace2d", "n": "8"}, machine)
    [solved] = spsolve.run(cholmod, machine)
    assert "not_measurable" not in solved and solved["samples"]["numeric_s"]


# -- app.spmv -------------------------------------------------------------------------------------
SPMV = """
[[step]]  # a stored triad: the roofline's bandwidth
benchmark = "mem.bandwidth"
op = "triad"
bytes = "1MiB"
samples = 3
min_sample_time = "1ms"

[[step]]
benchmark = "app.spmv"
problem = "laplace2d"
n = 30
np = 2
samples = 5
time_limit = "0.5s"
"""


def test_spmv_section_puts_models_against_measurements_and_the_roofline(cli, tmp_path):
    html, results = run_suite(cli, tmp_path, SPMV)
    section = section_html(html, "app-spmv")
    assert section.count("<svg") == 2  # efficiency scatter, roofline
    metrics = by_metric(results, "app.spmv")
    derived = metrics["local_s"].document["derived"]
    rows = table_with(section, "predicted")
    assert [r["variant"].split()[0] for r in rows] == [
        "read_element",
        "read_replicate",
        "read_shared",
        "write_element",
        "write_combine",
    ]
    for row in rows:
        name = row["variant"].split()[0]
        variant = derived["variants"][name]
        baseline = metrics[f"{variant['baseline']}_s"]
        measured = np.median(baseline.samples) / np.median(metrics[f"{name}_s"].samples)
        assert row["measured [95 % CI]"].startswith(f"{format_number(measured)} [")
        assert row["measured (document)"] == format_number(variant["measured_efficiency"])
        expected = variant["predicted_efficiency"]
        assert row["predicted"] == ("-" if expected is None else format_number(expected))
        assert row["f"] == format_number(derived["f"]) and row["r"] == format_number(derived["r"])
    # laplace2d n=30 in two blocks of 15 grid rows: each rank reads one grid row of the other
    assert derived["f"] == pytest.approx(60 / 4380)
    # the bound: 2 nnz flops over the bytes of the model, times the stored triad bandwidth
    roof = table_with(section, "bound GFlop/s")[0]
    line = derived["roofline"]
    triad = by_metric(results, "mem.bandwidth")["bandwidth_Bps"].median
    assert (
        line["bandwidth_Bps"] == triad and "stored mem.bandwidth result" in line["bandwidth_source"]
    )
    low, high = (2 * derived["nnz"] / line[k] * triad / 1e9 for k in ("bytes_max", "bytes_min"))
    assert roof["bound GFlop/s"] == f"{format_number(low)} .. {format_number(high)}"
    assert low == pytest.approx(line["bound_min_flops_per_s"] / 1e9, rel=1e-12)
    nonzero = (line["bytes_min"] / derived["nnz"], line["bytes_max"] / derived["nnz"])
    assert (
        roof["bytes per nonzero"] == f"{format_number(nonzero[0])} .. {format_number(nonzero[1])}"
    )
    assert "8 B value + 4 B column index per nonzero" in section  # the model, stated


def test_spmv_without_a_stored_bandwidth_says_it_is_missing(cli, tmp_path):
    done = cli(
        "measure", "app.spmv", "problem=laplace2d", "n=20", "np=2", "permute=random",
        "samples=3", "time_limit=0.3s", "variants=read_element",
    )  # fmt: skip
    assert done.code == 0, done.err
    path = tmp_path / "r.html"
    assert cli("report", "last", "-o", str(path)).code == 0
    section = section_html(path.read_text(), "app-spmv")
    assert "Bandwidth missing for laplace2d n=20 permuted (seed 1)" in section
    assert "perfatlas measure mem.bandwidth op=triad" in section
    assert section.count("<svg") == 1  # the efficiency scatter, no roofline


# -- app.sweep ------------------------------------------------------------------------------------
SWEEP = """
[[step]]
benchmark = "app.sweep"
it = 6
jt = 6
kt = 6
mk = 3
np = [1, 2]
repeat = 5
"""


def test_sweep_section_measures_weak_scaling_efficiency_from_the_stored_grind_times(cli, tmp_path):
    html, results = run_suite(cli, tmp_path, SWEEP)
    section = section_html(html, "app-sweep")
    assert section.count("<svg") == 1
    one = by_metric(results, "app.sweep", np=1)["grind_time_ns"]
    two = by_metric(results, "app.sweep", np=2)["grind_time_ns"]
    rows = {r["np"]: r for r in table_with(section, "measured efficiency [95 % CI]")}
    # E(2) = g(1) / g(2) on the stored medians
    expected = np.median(one.samples) / np.median(two.samples)
    assert rows["2"]["measured efficiency [95 % CI]"].startswith(f"{format_number(expected)} [")
    assert rows["1"]["measured efficiency [95 % CI]"] == "1 [1, 1]"
    # 2 x 1 ranks, Nb = (6/3)(6/3) = 4 blocks per octant: 8 Nb / (8 Nb + 2) steps
    assert rows["2"]["px x py"] == "2 x 1" and rows["2"]["global grid"] == "12 x 6 x 6"
    assert rows["2"]["model efficiency"] == f"{format_number(32 / 34)} (34 steps)"
    balance = {r["np"]: r for r in table_with(section, "physical imbalance")}
    derived = two.document["derived"]
    assert balance["2"]["imbalance"] == f"{derived['balance']['relative_imbalance']:.2g}"
    assert float(balance["2"]["imbalance"]) < 1e-12
    assert "E(np) = T(1) / T(np) = g(1) / g(np)" in section


# -- the sections together, rendered ---------------------------------------------------------------
TOGETHER = """
[[step]]
benchmark = "app.spsolve"
problem = "laplace2d"
n = 8
repeat = 3

[[step]]
benchmark = "app.spmv"
problem = "laplace2d"
n = 12
np = 2
samples = 3
time_limit = "0.2s"

[[step]]
benchmark = "app.madbench"
npix = 64
nbin = 2
repeat = 2

[[step]]
benchmark = "app.sweep"
it = 4
jt = 4
kt = 4
mk = 2
repeat = 2
"""


def test_the_four_sections_come_in_order_and_render_in_chromium(cli, tmp_path, render_html):
    html, _ = run_suite(cli, tmp_path, TOGETHER)
    expected = ["app-spsolve", "app-spmv", "app-madbench", "app-sweep"]
    if not madbench_built():  # then it is listed as not measurable
        expected.remove("app-madbench")
    assert re.findall(r'<section id="(app-[a-z]+)">', html) == expected
    [path] = (tmp_path / "out").glob("run-*.html")
    dom = render_html(path, "--dump-dom", "--virtual-time-budget=2000")
    for name in expected:
        assert section_html(dom, name).count("<svg") >= 1, name


# -- the analysis, exact numbers ------------------------------------------------------------------
def result(metric: str, samples: list[float], params: dict, document: dict | None = None) -> Result:
    values = sorted(samples)
    return Result(
        id=0, run_id=1, benchmark=params.get("benchmark", "app.sweep"), params=params,
        metric=metric, unit="s", samples=samples, n=len(samples),
        median=float(np.median(values)), ci_lo=values[0], ci_hi=values[-1],
        min=values[0], max=values[-1], not_measurable=None, warnings=[],
        document=document or {},
    )  # fmt: skip


def test_phase_stack_totals_are_per_repetition_sums():
    params = {"benchmark": "app.spsolve", "solver": "cholmod"}
    point = Point(
        params,
        {
            "reorder_s": result("reorder_s", [1.0, 2.0, 9.0], params),
            "numeric_s": result("numeric_s", [10.0, 5.0, 1.0], params),
        },
    )
    stack = phase_stack(point, [("reorder", "reorder_s"), ("symbolic", "symbolic_s"),
                                ("numeric", "numeric_s")])  # fmt: skip
    assert [p.name for p in stack.phases] == ["reorder", "numeric"]  # symbolic not measured
    # repetitions: 11, 7, 10 -> median 10 (not 2 + 5 = 7, the sum of the medians)
    assert stack.total.median == 10.0 and stack.total.min == 7.0 and stack.total.max == 11.0
    uneven = Point(params, {"reorder_s": result("reorder_s", [1.0, 2.0], params),
                            "numeric_s": result("numeric_s", [1.0], params)})  # fmt: skip
    assert phase_stack(uneven, [("reorder", "reorder_s"), ("numeric", "numeric_s")]).total is None


def sweep_results(np_: int, grind: list[float], **extra) -> list[Result]:
    params = {"it": 8, "jt": 8, "kt": 8, "mmo": 6, "mk": 4, "mmi": 3, "np": np_, "repeat": 5,
              "px": 0, "py": 0, "reference_grind_ns": 0.0, **extra}  # fmt: skip
    document = {"derived": {"px": np_, "py": 1, "model_efficiency": 32 / (32 + 2 * (np_ - 1))}}
    return [result("grind_time_ns", grind, params, document)]


def test_weak_scaling_efficiency_is_the_ratio_of_grind_times_to_np_1():
    results = (
        sweep_results(1, [4.0, 5.0, 6.0])
        + sweep_results(2, [8.0, 10.0, 12.0], repeat=3)  # repeat does not change the work
        + sweep_results(2, [5.0, 5.0, 5.0], it=16)  # another subgrid: no np = 1 reference
    )
    series = sweep_analysis.weak_scaling(results)
    assert len(series) == 2
    first, other = series
    assert [p.np for p in first.points] == [1, 2]
    assert first.points[0].measured.median == 1.0
    assert first.points[1].measured.median == 0.5  # g(1) / g(2) = 5 / 10
    expected = ratio([4.0, 5.0, 6.0], [8.0, 10.0, 12.0])
    assert first.points[1].measured == expected
    assert first.points[1].model_efficiency == 32 / 34
    assert other.reference is None and other.points[0].measured is None
    assert "16x8x8/rank S6" in other.label


def test_spmv_measured_efficiency_and_roofline_bound_are_exact():
    params = {"benchmark": "app.spmv", "problem": "laplace2d", "n": 4, "np": 2, "threads": 1}
    document = {
        "derived": {
            "nnz": 100,
            "f": 0.25,
            "r": 2.0,
            "t_r": {"get": {"median_ns": [40.0, 60.0]}},
            "variants": {
                "local": {"operation": "y = A x", "per_rank": {"ns_per_nonzero": [1.0, 2.0]}},
                "read_element": {
                    "operation": "y = A x",
                    "model": "E1",
                    "t_r": "get",
                    "baseline": "local",
                    "predicted_efficiency": 0.1,
                    "measured_efficiency": 0.2,
                },
            },  # fmt: skip
            "roofline": {"bytes_min": 1000.0, "bytes_max": 2000.0, "bandwidth_Bps": 1e10},
        }
    }
    point = Point(
        params,
        {
            "local_s": result("local_s", [1.0, 2.0, 3.0], params, document),
            "read_element_s": result("read_element_s", [8.0, 8.0, 8.0], params, document),
            "csr_flops_per_s": result("csr_flops_per_s", [1e9, 2e9, 3e9], params, document),
        },
    )
    [variant] = spmv_analysis.variants(point)
    assert variant.measured.median == 0.25 and variant.predicted == 0.1
    assert variant.t_l_ns == [1.0, 2.0] and variant.t_r_ns == [40.0, 60.0]
    roof = spmv_analysis.roofline(point)
    assert roof.bytes_per_nonzero == (10.0, 20.0)
    assert roof.intensity == (0.1, 0.2)  # 200 flops over 2000 and 1000 bytes
    assert roof.bound == (1e9, 2e9)
    assert roof.fraction_of_bound == (1.0, 2.0)  # median 2e9 flop/s
    assert points([*point.metrics.values()], "app.spmv")[0].params == params


def test_without_np_1_the_sweep_section_shows_the_documents_efficiency_and_says_why():
    from perfatlas.app.section_sweep import build
    from perfatlas.report.blocks import Note, Table
    from perfatlas.store.run_data import RunData

    results = sweep_results(2, [8.0, 10.0, 12.0], reference_grind_ns=5.0)
    params = results[0].params
    results.append(result("parallel_efficiency", [0.4, 0.5, 0.6], params, results[0].document))
    blocks = build(RunData(run={}, launches=results))
    [table] = [b for b in blocks if isinstance(b, Table) and "np" in b.columns][:1]
    row = dict(zip(table.columns, table.rows[0]))
    assert row["measured efficiency [95 % CI]"].startswith("0.5 [0.4, 0.6]")
    assert "reference_grind_ns=5" in row["measured efficiency [95 % CI]"]
    assert any(isinstance(b, Note) and "No np = 1 result of 8x8x8/rank" in b.text for b in blocks)
