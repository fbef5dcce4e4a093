"""The noise part of the terminal summary: slowdown, detours and the BSP model per PU (the
slowdown, the detours, the strongest line and the BSP cost at scale as the run's findings state
them)."""

from __future__ import annotations

from rich.table import Table

from perfatlas.findings.compute import run_findings
from perfatlas.noise.analysis_noise import GRANULARITIES_NS, PROCESSES
from perfatlas.noise.findings_noise import bsp_cells, detour_cells, slowdown_text
from perfatlas.noise.series_noise import noise_measurements
from perfatlas.store.run_data import RunData
from perfatlas.terminal.run_views import titled_table
from perfatlas.terminal.summary_registry import summary_table


@summary_table("noise", 40, ("noise",))
def noise_table(data: RunData) -> Table | None:
    measurements = noise_measurements(data)
    if not measurements:
        return None
    found = run_findings(data)
    slowdowns = found.of_results("noise.slowdown")  # the slowdown as found
    widest = max(PROCESSES)
    table = titled_table(
        f"OS noise (BSP: expected slowdown of supersteps of g on P={widest:.0e} processes)",
        "measurement",
        "PU",
        "slowdown [95 % CI]",
        "p99 lost",
        "largest",
        "strongest line (share)",
        *[f"BSP {g / 1e6:g} ms" for g in GRANULARITIES_NS],
        right=(2, 3, 4, 6, 7),
    )
    for m in measurements:
        at_scale = bsp_cells(found, m)
        for i, core in enumerate(m.cores):
            slowdown = slowdowns.get(core.result.id)
            table.add_row(
                m.label if i == 0 else "",
                str(core.cpu),
                slowdown_text(slowdown, dim=True),
                *detour_cells(slowdown),
                *(at_scale if i == 0 else [""] * len(at_scale)),
            )
    return table
