"""The loaded-latency part of the terminal summary: per mix, the idle latency, the heaviest
injection measured, and the latency's ratio there and where it doubled as the run's findings
state them."""

from __future__ import annotations

from rich.table import Table

from perfatlas.common.units import format_number
from perfatlas.findings.compute import run_findings
from perfatlas.findings.render import figure_text
from perfatlas.mem.analysis_loaded_latency import BENCHMARK, loaded_curves
from perfatlas.mem.findings_memory import loaded_latency_of, saturation_text
from perfatlas.store.run_data import RunData
from perfatlas.terminal.run_views import titled_table
from perfatlas.terminal.summary_registry import summary_table

GB = 1e9


@summary_table("loaded latency", 32, (BENCHMARK,))
def loaded_latency_table(data: RunData) -> Table | None:
    curves = loaded_curves(data)
    if not curves:
        return None
    table = titled_table(
        "loaded latency: latency vs injected bandwidth [95 % CI]",
        "curve",
        "idle (ns)",
        "peak injected (GB/s)",
        "latency there (ns)",
        "loaded / idle",
        "saturation",
        right=(1, 2, 3, 4),
    )
    found = run_findings(data)
    for c in curves:
        peak = c.peak
        ratio = figure_text(loaded_latency_of(found, c), lambda v: f"{v:.2f}", dim=True)
        table.add_row(
            c.label,
            f"{format_number(c.idle.median)} [dim][{format_number(c.idle.ci_lo)}, {format_number(c.idle.ci_hi)}][/]",
            format_number(peak.bandwidth.median / GB),
            f"{format_number(peak.latency.median)} [dim][{format_number(peak.latency.ci_lo)}, "
            f"{format_number(peak.latency.ci_hi)}][/]",
            ratio,
            saturation_text(found, c),
        )
    return table
