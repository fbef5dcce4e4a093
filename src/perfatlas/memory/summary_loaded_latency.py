"""The loaded-latency part of the terminal summary: per mix, the idle latency, the heaviest
injection measured and where the latency doubled."""

from __future__ import annotations

from rich.table import Table

from perfatlas.memory.analysis_loaded_latency import BENCHMARK, SATURATION_RATIO, loaded_curves
from perfatlas.report.common import number
from perfatlas.report.data import RunData
from perfatlas.summary_tables import summary_table
from perfatlas.views import titled_table

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
        f"{SATURATION_RATIO:g}x idle at (GB/s)",
        right=(1, 2, 3, 4, 5),
    )
    for c in curves:
        peak, s = c.peak, c.saturation
        table.add_row(
            c.label,
            f"{number(c.idle.median)} [dim][{number(c.idle.ci_lo)}, {number(c.idle.ci_hi)}][/]",
            number(peak.bandwidth.median / GB),
            f"{number(peak.latency.median)} [dim][{number(peak.latency.ci_lo)}, "
            f"{number(peak.latency.ci_hi)}][/]",
            f"{peak.slowdown.median:.2f} [dim][{peak.slowdown.ci_lo:.2f}, "
            f"{peak.slowdown.ci_hi:.2f}][/]",
            number(s.bandwidth.median / GB) if s else "not reached",
        )
    return table
