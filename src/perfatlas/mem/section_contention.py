"""Contention: one core's latency and bandwidth while another core streams reads or writes."""

from __future__ import annotations

import numpy as np

from perfatlas.common.units import format_size, format_value
from perfatlas.findings.compute import RunFindings, run_findings
from perfatlas.mem.findings_memory import contention_of, ratio_text
from perfatlas.mem.series_memory import ContentionRatio, contention_ratios
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Figure, Table
from perfatlas.report.cells import context_table, few_samples_note
from perfatlas.report.report_sections import section
from perfatlas.report.series import Curve, Series
from perfatlas.store.run_data import RunData

MEASURES = {
    "latency_ns": "latency: loaded / alone (higher is worse)",
    "bandwidth_Bps": "bandwidth: loaded / alone (lower is worse)",
}
LOAD_STYLE = {"read": (plots.COLORS[0], "o"), "write": (plots.COLORS[3], "s")}


def _curve(ratios: list[ContentionRatio], load: str) -> Curve:
    color, marker = LOAD_STYLE.get(load, (plots.COLORS[2], "^"))
    return Curve(
        f"other core streams {load}s",
        np.array([c.bytes for c in ratios], dtype=float),
        np.array([c.ratio.median for c in ratios]),
        np.array([c.ratio.ci_lo for c in ratios]),
        np.array([c.ratio.ci_hi for c in ratios]),
        color=color,
        marker=marker,
    )


def _figure(ratios: list[ContentionRatio]) -> str:
    metrics = [m for m in MEASURES if any(c.metric == m for c in ratios)]
    with plots.figure(
        "contention", 1, len(metrics), width=4.9 * len(metrics) + 0.4, height=3.6
    ) as (fig, axes):
        for ax, metric in zip(axes[0], metrics):
            mine = [c for c in ratios if c.metric == metric]
            loads = list(dict.fromkeys(c.load for c in mine))
            plots.draw_error_bars(
                ax, [_curve([c for c in mine if c.load == load], load) for load in loads]
            )
            ax.axhline(1.0, color="0.3", linewidth=0.9, linestyle=":")
            plots.size_axis(ax, [c.bytes for c in mine], label="working set of the measured core")
            ax.set_ylabel("ratio of medians, 95 % bootstrap CI")
            ax.set_title(MEASURES[metric], loc="left")
            ax.legend(frameon=False)
        fig.tight_layout()
        return plots.to_svg(fig)


def _rows(ratios: list[ContentionRatio], found: RunFindings) -> list[list[str]]:
    """A row per pair: the medians alone and loaded, and the ratio and its verdict as the run's
    memory.contention findings state them."""
    rows = []
    for c in ratios:
        finding = contention_of(found, c)
        rows.append(
            [
                c.measure,
                format_size(c.bytes),
                c.load,
                format_value(c.alone.median, c.alone.unit),
                format_value(c.loaded.median, c.loaded.unit),
                ratio_text(finding),
                "-" if finding is None else finding.verdict or "-",
            ]
        )
    return rows


@section("contention", "Memory contention", order=32)
def contention_section(data: RunData) -> list[Block]:
    ratios = contention_ratios(data)
    if not ratios:
        return []
    first = ratios[0].alone.params
    context = Series(("all rounds",), "all rounds", data.measured("mem.contention"))
    note = few_samples_note(context.results)
    return [
        *([note] if note else []),
        Figure(
            _figure(ratios),
            f"The measured core (cpu {first.get('cpu', '?')}) alone versus while cpu "
            f"{first.get('load_cpu', '?')} streams a {format_size(first.get('load_bytes', 0))} "
            "buffer (reads, or writes). Rounds alone and loaded are interleaved so drift "
            "cancels; the ratio of medians has a percentile-bootstrap 95 % CI from the raw "
            "samples. Dotted line: no effect.",
        ),
        Table(
            [
                "measure",
                "working set",
                "load",
                "alone (median)",
                "loaded (median)",
                "loaded / alone [95 % CI]",
                "verdict",
            ],
            _rows(ratios, run_findings(data)),
            numeric=(1, 3, 4, 5),
        ),
        context_table([context]),
    ]
