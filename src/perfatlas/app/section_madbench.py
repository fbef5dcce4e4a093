"""app.madbench: per problem, the four phases (dSdC, invD, W, dLdC) stacked per configuration
(np, gangs, I/O), each phase's percentage of the measured DGEMM rate, the bytes every phase reads
and writes, and the correctness checks (perfatlas.app.analysis_madbench)."""

from __future__ import annotations

import numpy as np

from perfatlas.app import analysis_madbench
from perfatlas.app.analysis_points import Point, points
from perfatlas.app.proxy_figures import phase_bars_svg, scaled_with_ci, seconds_with_ci
from perfatlas.common.units import format_number, format_size
from perfatlas.common.warning import Kind
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Details, Figure, Note, Table
from perfatlas.report.cells import few_samples_note
from perfatlas.report.report_sections import section
from perfatlas.store.run_data import RunData


def _by_problem(found: list[Point]) -> dict[str, list[Point]]:
    groups: dict[str, list[Point]] = {}
    for p in found:
        groups.setdefault(analysis_madbench.problem(p.params), []).append(p)
    return groups


def _phase_figure(problem: str, members: list[Point], index: int) -> Figure | None:
    stacks = [(p, analysis_madbench.phases(p)) for p in members]
    stacks = [(p, s) for p, s in stacks if s is not None]
    if not stacks:
        return None
    labels = [analysis_madbench.configuration(p.params) for p, _ in stacks]
    svg = phase_bars_svg(f"madbench-phases{index}", problem, labels, [s for _, s in stacks])
    return Figure(
        svg,
        f"{problem}: time of each phase of one Newton-Raphson iteration per configuration, from "
        "a barrier to the slowest rank (bars: the phases' medians stacked; black: the median of "
        "the per-repetition totals with its 95 % interval). dSdC: the bins' signal derivatives, "
        "written; invD: read, D accumulated, Cholesky inverse; W: read again, W_b = D^-1 dS/dC_b "
        "(pdgemm), written; dLdC: read the W_b, gradient, Fisher matrix and correction.",
    )


def _percent_figure(members: list[Point], index: int) -> Figure | None:
    """Grouped bars: per phase, one bar per configuration, its %DGEMM median with the 95 % CI."""
    rows = [(p, analysis_madbench.phase_figures(p)) for p in members]
    rows = [(p, f) for p, f in rows if any(x.percent_of_dgemm for x in f)]
    if not rows:
        return None
    width = 0.8 / len(rows)
    with plots.figure(f"madbench-peak{index}", width=8.5, height=2.8) as (fig, axes):
        ax = axes[0, 0]
        for k, (p, figures) in enumerate(rows):
            shown = [x for x in figures if x.percent_of_dgemm is not None]
            positions = [
                analysis_madbench.PHASES.index(x.name) + (k - (len(rows) - 1) / 2) * width
                for x in shown
            ]
            medians = np.array([x.percent_of_dgemm.median for x in shown])
            errors = np.array(
                [
                    [x.percent_of_dgemm.median - x.percent_of_dgemm.ci_lo for x in shown],
                    [x.percent_of_dgemm.ci_hi - x.percent_of_dgemm.median for x in shown],
                ]
            )
            ax.bar(
                positions,
                medians,
                width=width * 0.95,
                color=plots.COLORS[k % len(plots.COLORS)],
                label=analysis_madbench.configuration(p.params),
            )
            ax.errorbar(
                positions,
                medians,
                yerr=np.clip(errors, 0, None),
                fmt="none",
                ecolor="0.2",
                capsize=3,
            )
        ax.set_xticks(range(len(analysis_madbench.PHASES)), analysis_madbench.PHASES)
        ax.grid(axis="x", visible=False)
        ax.set_ylabel("% of np x one rank's DGEMM rate")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        fig.tight_layout()
        svg = plots.to_svg(fig)
    return Figure(
        svg,
        "Each phase's flop rate as a percentage of np times rank 0's cblas_dgemm rate, measured "
        "alone before each repetition on a matrix of one rank's local rows (median and 95 % "
        "interval of the repetitions). With more ranks than cores the reference overstates the "
        "peak. dSdC and dLdC are not DGEMM-shaped work: their low percentages are expected.",
    )


def _phase_table(found: list[Point]) -> Table:
    rows = []
    for p in found:
        dgemm = p.metrics.get("dgemm_flops_per_s")
        for x in analysis_madbench.phase_figures(p):
            rows.append(
                [
                    analysis_madbench.problem(p.params),
                    analysis_madbench.configuration(p.params),
                    x.name,
                    seconds_with_ci(x.time),
                    seconds_with_ci(x.io_wait) if x.io_wait else "-",
                    f"{x.flops:.4g}",
                    scaled_with_ci(x.rate, 1e9, ""),
                    scaled_with_ci(x.percent_of_dgemm, 1.0, ""),
                    scaled_with_ci(dgemm, 1e9, ""),
                    format_size(x.bytes_read) if x.bytes_read else "0",
                    format_size(x.bytes_written) if x.bytes_written else "0",
                ]
            )
    return Table(
        [
            "problem",
            "configuration",
            "phase",
            "time [95 % CI]",
            "of it waiting on I/O [95 % CI]",
            "flops",
            "GFlop/s [95 % CI]",
            "% of DGEMM [95 % CI]",
            "rank 0 DGEMM GFlop/s",
            "bytes read",
            "bytes written",
        ],
        rows,
        caption="Per phase: time, the part of it the slowest-waiting rank spent blocked on its "
        "file reads and writes, the flop count from the document's formulas, the rate, its "
        "share of np x rank 0's DGEMM rate (that rate: the next column), and the bytes "
        "read and written per repetition by all ranks together (the out-of-core traffic: "
        "nbin matrices of npix^2 doubles per pass).",
        numeric=(3, 4, 5, 6, 7, 8, 9, 10),
    )


def _vector(values: list[float]) -> str:
    return ", ".join(format_number(v, 4) for v in values)


def _correctness(found: list[Point]) -> list[Block]:
    rows, details = [], []
    for p in found:
        c = analysis_madbench.correctness(p)
        rows.append(
            [
                analysis_madbench.problem(p.params),
                analysis_madbench.configuration(p.params),
                f"{c.inverse_error:.2g}",
                f"{c.trace_identity_error:.2g}",
                f"{c.likelihood_identity_error:.2g}",
                "passed" if c.passed else "FAILED",
                format_number(c.invD_trace, 6),
                format_number(c.invD_checksum, 6),
            ]
        )
        details.append(
            [
                analysis_madbench.problem(p.params),
                analysis_madbench.configuration(p.params),
                _vector(c.trace_W),
                _vector(c.dLdC),
                _vector(c.spectrum_correction),
            ]
        )
    return [
        Table(
            [
                "problem",
                "configuration",
                "D^-1 (D d) = d",
                "trace identity",
                "likelihood identity",
                f"all below {analysis_madbench.CHECK_LIMIT:g}",
                "tr D^-1",
                "sum of D^-1",
            ],
            rows,
            caption="Correctness, checked in every run (else it fails): max|D^-1 (D d) - d| / "
            "max|d|; |sum_b C_b tr W_b + noise tr D^-1 - npix| / npix; the likelihood identity "
            "sum_b C_b dL/dC_b = 1/2 (d^T z - noise z^T z - npix + noise tr D^-1), z = D^-1 d, "
            "relative. The same sky (seed) gives the same tr D^-1 and sum of D^-1 on any "
            "number of ranks.",
            numeric=(2, 3, 4, 6, 7),
        ),
        Details(
            "The estimated spectrum per bin: tr W_b, dL/dC_b and the correction F^-1 dL/dC",
            [Table(["problem", "configuration", "tr W_b", "dL/dC_b", "correction"], details)],
        ),
    ]


@section("app-madbench", "CMB power spectrum out of core (app.madbench)", order=62)
def build(data: RunData) -> list[Block] | None:
    found = points(data.results, analysis_madbench.BENCHMARK)
    if not found:
        return None
    note = few_samples_note(data.measured(analysis_madbench.BENCHMARK, "total_s"))
    blocks: list[Block] = [note] if note else []
    for index, (problem, members) in enumerate(_by_problem(found).items()):
        blocks += [f for f in (_phase_figure(problem, members, index),) if f]
        blocks += [f for f in (_percent_figure(members, index),) if f]
    blocks.append(_phase_table(found))
    blocks += _correctness(found)
    shared = [
        analysis_madbench.configuration(p.params)
        for p in found
        if any(w.kind is Kind.OVERSUBSCRIBED for r in p.metrics.values() for w in r.warnings)
    ]
    if shared:
        blocks.append(
            Note(
                f"{', '.join(dict.fromkeys(shared))}: more ranks than this host has PUs. Their "
                "phases include waiting for a rank that holds a shared core, not only "
                "computation, communication and I/O (perfatlas profile splits them).",
                "warning",
            )
        )
    return blocks
