"""app.spsolve: per matrix, the phases of the solve (reorder, symbolic, numeric, solve) stacked per
solver, ordering, ranks and threads, and the facts of every factorization
(perfatlas.app.analysis_spsolve)."""

from __future__ import annotations

from perfatlas.app import analysis_spsolve
from perfatlas.app.analysis_points import Point, points
from perfatlas.app.proxy_figures import phase_bars_svg, scaled_with_ci, seconds_with_ci
from perfatlas.common.units import format_size
from perfatlas.report.blocks import Block, Figure, Table
from perfatlas.report.cells import few_samples_note
from perfatlas.report.report_sections import section
from perfatlas.store.run_data import RunData


def _by_matrix(found: list[Point]) -> dict[str, list[Point]]:
    groups: dict[str, list[Point]] = {}
    for p in found:
        groups.setdefault(analysis_spsolve.matrix_name(p.params), []).append(p)
    return groups


PHASES_DEFINED = (
    "reorder: the fill-reducing ordering, computed once for both solvers; symbolic: the solver's "
    "analysis with that ordering; numeric: the factorization A = L L^T; solve: the two triangular "
    "solves (MUMPS: each phase from a barrier to the slowest rank)."
)


def _phase_figure(matrix: str, members: list[Point], index: int) -> list[Block]:
    stacks = [(p, analysis_spsolve.phases(p)) for p in members]
    stacks = [(p, s) for p, s in stacks if s is not None]
    if not stacks:
        return []
    labels = [analysis_spsolve.configuration(p.params) for p, _ in stacks]
    svg = phase_bars_svg(f"spsolve{index}", matrix, labels, [s for _, s in stacks])
    names = list(dict.fromkeys(ph.name for _, s in stacks for ph in s.phases))
    rows = []
    for label, (_, stack) in zip(labels, stacks):
        by_name = {ph.name: ph.result for ph in stack.phases}
        total = stack.total
        rows.append(
            [
                label,
                *(seconds_with_ci(by_name.get(name)) for name in names),
                seconds_with_ci(total),
            ]
        )
    return [
        Figure(
            svg,
            f"{matrix}: time of each phase of one solve, per configuration (bars: the phases' "
            "medians stacked; black: the median of the per-repetition totals with its 95 % "
            "interval). " + (PHASES_DEFINED if index == 0 else ""),
        ),
        Table(
            ["configuration", *names, "total"],
            rows,
            caption=f"{matrix}: medians with their 95 % intervals per repetition.",
            numeric=tuple(range(1, len(names) + 2)),
        ),
    ]


def _facts_table(found: list[Point]) -> Table:
    rows = []
    for p in found:
        f = analysis_spsolve.facts(p)
        rows.append(
            [
                f.matrix,
                f.configuration,
                str(f.n),
                str(f.nnz_A),
                f"{f.nnz_L:.0f}",
                f"{f.fill:.3g}",
                f"{f.flops:.3g}",
                scaled_with_ci(f.rate, 1e9, ""),
                "-" if f.memory_bytes is None else format_size(f.memory_bytes),
                f"{f.residual:.2g}",
                f"{f.solver}; {f.ordering}",
            ]
        )
    return Table(
        [
            "matrix",
            "configuration",
            "n",
            "nnz(A)",
            "nnz(L)",
            "fill",
            "flops",
            "GFlop/s [95 % CI]",
            "memory",
            "residual",
            "solver, ordering",
        ],
        rows,
        caption="The factorizations: n, nnz(A) (both triangles, the diagonal once), nnz(L) and "
        "the factorization flops by the solver's own count (CHOLMOD Common->lnz and ->fl; MUMPS "
        "INFOG(29), which counts the dense triangles of the fronts, and RINFOG(3)), fill = "
        "nnz(L) / nnz of A's lower triangle, the numeric factorization's rate (flops / numeric "
        "time), the solver's memory (CHOLMOD's peak; MUMPS INFOG(22), whole MB, '-' below 1 MB) "
        "and the largest relative residual ||b - A x|| / ||b|| of the repetitions, computed "
        "from the assembled matrix.",
        numeric=(2, 3, 4, 5, 6, 7, 8, 9),
    )


@section("app-spsolve", "Sparse direct solve (app.spsolve)", order=60)
def build(data: RunData) -> list[Block] | None:
    found = points(data.results, analysis_spsolve.BENCHMARK)
    if not found:
        return None
    note = few_samples_note(data.measured(analysis_spsolve.BENCHMARK, "numeric_s"))
    blocks: list[Block] = [note] if note else []
    for index, (matrix, members) in enumerate(_by_matrix(found).items()):
        blocks += _phase_figure(matrix, members, index)
    blocks.append(_facts_table(found))
    return blocks
