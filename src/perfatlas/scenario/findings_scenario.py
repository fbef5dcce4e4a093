"""Findings of the interference scenarios: each job's runtime extension in a scenario, and each
cell of an interference matrix (perfatlas.scenario.accounting, perfatlas.scenario.matrix); and the
cells read back as the report's matrix table and the terminal's both write them."""

from __future__ import annotations

from typing import Any

from perfatlas.findings.compute import RunFindings
from perfatlas.findings.finding_sources import Better, finding_source
from perfatlas.findings.model import Finding, Interval, Sources, interval_of, of_kind
from perfatlas.scenario.cell_verdicts import cell_verdict
from perfatlas.store.run_data import RunData

EXTENSION_METHOD = "wall time beside the other jobs / the same program's dedicated (alone) time"
MATRIX_METHOD = (
    "middle of three identical lines timed, the row's kernel on the first CPU, together / alone"
)


def cell_interval(matrix: dict, i: int, j: int) -> dict[str, Any]:
    """A matrix cell's interval where the matrix stores one (slowdown_ci: [[low, high]] per cell),
    else why it has none."""
    stored = matrix.get("slowdown_ci")
    if stored and stored[i][j] is not None:
        return interval_of(*stored[i][j])
    return {"interval_reason": "one alone and one together measurement per cell: no interval"}


def _cell_verdict(matrix: dict, i: int, j: int, value: float, bounds: Interval | None) -> str:
    """The matrix's own verdict of a cell (perfatlas.scenario.cell_verdicts); a matrix
    stored before cells had intervals gets the point ratio's direction."""
    if matrix.get("verdicts"):
        return str(matrix["verdicts"][i][j])
    if bounds is not None:
        return cell_verdict(value, bounds.low, bounds.high)
    return f"{value:.2f}x {'slower' if value >= 1 else 'faster'} together (one measurement)"


def _matrix(matrix: dict) -> list[Finding]:
    found = []
    classes = matrix["classes"]
    for i, row in enumerate(classes):
        for j, column in enumerate(classes):
            value = float(matrix["slowdown"][i][j])
            interval = cell_interval(matrix, i, j)
            verdict = _cell_verdict(matrix, i, j, value, interval.get("interval"))
            severity = "notice" if "slower" in verdict else "info"
            found.append(
                Finding(
                    kind="scenario.interference",
                    subject=f"{row} ({matrix['kernels'][row]}) beside {column} "
                    f"({matrix['kernels'][column]}), {matrix['bytes'] / 1e6:.4g} MB, "
                    f"CPUs {matrix['cpu_list']}",
                    value=value,
                    unit="ratio together / alone",
                    method=matrix.get("method") or MATRIX_METHOD,
                    sources=Sources(scenarios=(int(matrix["id"]),)),
                    verdict=verdict,
                    severity=severity,
                    details={"row": i, "column": j},  # the cell, for the report's table
                    **interval,
                )
            )
    return found


def _scenario(scenario: dict) -> list[Finding]:
    found = []
    for job in scenario["jobs"]:
        if job.get("extension") is None:
            continue
        found.append(
            Finding(
                kind="scenario.extension",
                subject=f"scenario {scenario['name']}, job {job['job']}",
                value=float(job["extension"]),
                unit="ratio wall / dedicated",
                method=EXTENSION_METHOD,
                sources=Sources(scenarios=(int(scenario["id"]),)),
                interval_reason="one run beside the others against one dedicated run",
                verdict=f"{job['extension']:.2f}x its dedicated runtime",
                severity="notice" if job["extension"] > 1.1 else "info",
                details={"wall_s": job.get("wall_s"), "dedicated_s": job.get("dedicated_s")},
            )
        )
    return found


@finding_source(
    "scenarios",
    75,
    {
        "scenario.extension": Better.LOWER,
        "scenario.interference": Better.LOWER,
    },
)
def scenario_findings(data: RunData) -> list[Finding]:
    found = []
    for scenario in data.scenarios:
        found += _matrix(scenario) if scenario["kind"] == "matrix" else _scenario(scenario)
    return found


# -- read back: the matrix cells as the report's matrix table and the terminal's both show them ----
def _cell_findings(found: RunFindings, matrix: dict) -> dict[tuple[int, int], Finding]:
    """The matrix's scenario.interference findings by cell (row, column); findings stored
    before they named their cell are in the row order _matrix writes them."""
    n = len(matrix["classes"])
    cells = [
        f
        for f in of_kind(found.findings, "scenario.interference")
        if f.sources.scenarios == (matrix["id"],)
    ]
    return {
        (f.details.get("row", k // n), f.details.get("column", k % n)): f
        for k, f in enumerate(cells)
    }


def _cell(finding: Finding | None) -> str:
    """A cell as its finding states it, '1.32 [1.20, 1.41] slower' ('-' without a finding)."""
    if finding is None or finding.value is None:
        return "-"
    bounds = (
        ""
        if finding.interval is None
        else (f" [{finding.interval.low:.2f}, {finding.interval.high:.2f}]")
    )
    return f"{finding.value:.2f}{bounds} {finding.verdict or ''}"


def cell_rows(matrix: dict, found: RunFindings) -> list[list[str]]:
    """A row per class: 'class (kernel)', then each cell as its finding states it."""
    classes = matrix["classes"]
    by_cell = _cell_findings(found, matrix)
    return [
        [
            f"{row} ({matrix['kernels'][row]})",
            *(_cell(by_cell.get((i, j))) for j in range(len(classes))),
        ]
        for i, row in enumerate(classes)
    ]
