"""The roofline in the terminal summary: the peaks, the memory bandwidth and ridge point at 1
thread and at all, then each proxy point against its bound (perfatlas.cpu.analysis_roofline)."""

from __future__ import annotations

from rich.table import Table

from perfatlas.common.units import format_number
from perfatlas.cpu.analysis_roofline import BANDWIDTH, MEMORY, PEAKFLOPS, PROXIES, PROXY_PRECISION
from perfatlas.cpu.section_roofline import estimate_text, points_rows, run_roofline, scopes
from perfatlas.store.run_data import RunData
from perfatlas.terminal.run_views import titled_table
from perfatlas.terminal.summary_registry import summary_table


# A run with cpu.peakflops and no mem.bandwidth has no roofline to print: the table is built for
# runs that measured a bandwidth series or a proxy (and says what else is missing).
@summary_table("roofline", 38, (PEAKFLOPS, BANDWIDTH, *PROXIES))
def roofline_table(data: RunData) -> Table | None:
    roof = run_roofline(data)
    if not roof.compute and not roof.points:
        return None
    table = titled_table("roofline", "ceiling or point", "threads / cores", "figure", right=(1,))
    if roof.missing:
        table.add_row(f"[yellow]{roof.missing}[/]", "", "")
    for compute, bandwidth in scopes(roof):
        peak = roof.peak(PROXY_PRECISION, compute)
        memory = roof.ceiling(MEMORY, bandwidth)
        if peak is not None:
            table.add_row(
                f"peak {peak.precision} ({peak.isa})",
                str(compute),
                estimate_text(peak.rate, "GFLOP/s"),
            )
        if memory is not None:
            table.add_row("memory bandwidth", str(bandwidth), estimate_text(memory.rate, "GB/s"))
        ridge = roof.ridge(PROXY_PRECISION, compute, MEMORY, bandwidth_threads=bandwidth)
        if ridge is not None:
            table.add_row(
                "ridge point (double, memory)", str(compute), f"{format_number(ridge)} flop/B"
            )
    for label, cores, intensity, measured, _, percent, limited in points_rows(roof):
        text = f"{measured} at {intensity} flop/B"
        if percent != "-":
            text += f": {percent} of the {limited} bound"
        table.add_row(label, cores, text)
    return table
