"""Loaded latency: one core's dependent-load latency against the bandwidth the other cores
inject, per read/write mix, with the idle latency and the saturation point (as the run's
memory.loaded_latency findings state it)."""

from __future__ import annotations

import numpy as np

from perfatlas.common.units import format_value
from perfatlas.findings.compute import run_findings
from perfatlas.mem.analysis_loaded_latency import (
    BENCHMARK,
    SATURATION_RATIO,
    LoadedCurve,
    loaded_curves,
)
from perfatlas.mem.findings_memory import saturation_text
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Figure, Table
from perfatlas.report.cells import context_table, few_samples_note
from perfatlas.report.report_sections import section
from perfatlas.report.series import Curve, Series
from perfatlas.store.run_data import RunData

GB = 1e9


def _figure(curves: list[LoadedCurve]) -> str:
    with plots.figure("loaded-latency", 1, 1, width=6.4, height=4.2) as (fig, axes):
        ax = axes[0][0]
        for i, c in enumerate(curves):
            color = plots.COLORS[i % len(plots.COLORS)]
            bandwidth = np.array([p.bandwidth.median for p in c.points]) / GB
            latency = [p.latency for p in c.points]
            plots.draw_error_bars(
                ax,
                [
                    Curve(
                        c.label,
                        bandwidth,
                        np.array([r.median for r in latency]),
                        np.array([r.ci_lo for r in latency]),
                        np.array([r.ci_hi for r in latency]),
                        color=color,
                    )
                ],
            )
            low = np.array([p.bandwidth.ci_lo for p in c.points]) / GB
            high = np.array([p.bandwidth.ci_hi for p in c.points]) / GB
            ax.hlines([r.median for r in latency], low, high, color=color, linewidth=0.8)
            ax.axhline(c.idle.median, color=color, linewidth=0.8, linestyle=":")
            ax.axhline(SATURATION_RATIO * c.idle.median, color=color, linewidth=0.8, ls="--")
        ax.set_xlabel("injected bandwidth, measured (GB/s)")
        ax.set_ylabel("latency per dependent load (ns), 95 % CI")
        ax.legend(frameon=False)
        fig.tight_layout()
        return plots.to_svg(fig)


def _rows(curves: list[LoadedCurve]) -> list[list[str]]:
    rows = []
    for c in curves:
        for p in c.points:
            r, b, s = p.latency, p.bandwidth, p.slowdown
            rows.append(
                [
                    c.mix,
                    str(p.delay_ns),
                    f"{format_value(b.median, 'byte/s')} [{b.ci_lo / GB:.3g}, {b.ci_hi / GB:.3g}]",
                    f"{format_value(r.median, 'ns')} [{r.ci_lo:.4g}, {r.ci_hi:.4g}]",
                    f"{s.median:.3f} [{s.ci_lo:.3f}, {s.ci_hi:.3f}]",
                ]
            )
    return rows


@section("loaded-latency", "Loaded latency (mem.loaded_latency)", order=34)
def loaded_latency_section(data: RunData) -> list[Block]:
    curves = loaded_curves(data)
    if not curves:
        return []
    results = data.measured(BENCHMARK)
    note = few_samples_note(results)
    found = run_findings(data)
    return [
        *([note] if note else []),
        Figure(
            _figure(curves),
            "Latency of dependent loads on one core (a random chain far beyond the last-level "
            "cache) against the bandwidth the injector threads on the other cores achieved over "
            "the same samples, one point per injection delay; vertical bars: 95 % CI of the "
            "latency, horizontal: of the bandwidth. Dotted: the idle latency (injectors spinning, "
            f"samples interleaved with the loaded ones); dashed: {SATURATION_RATIO:g}x idle.",
        ),
        Table(
            ["mix", "idle latency [95 % CI]", "saturation (as found)"],
            [
                [
                    c.label,
                    f"{format_value(c.idle.median, 'ns')} [{c.idle.ci_lo:.4g}, {c.idle.ci_hi:.4g}]",
                    saturation_text(found, c),
                ]
                for c in curves
            ],
            caption=f"Saturation: the first point, by increasing bandwidth, whose loaded / idle "
            f"latency ratio is at least {SATURATION_RATIO:g} at the lower end of its 95 % "
            "bootstrap interval.",
        ),
        Table(
            ["mix", "delay (ns)", "injected [GB/s CI]", "latency [ns CI]", "loaded / idle [CI]"],
            _rows(curves),
            numeric=(1, 2, 3, 4),
        ),
        context_table([Series(("all points",), "all points", results)]),
    ]
