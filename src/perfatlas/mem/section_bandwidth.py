"""Memory bandwidth: one small panel per operation, lines per thread count and store kind."""

from __future__ import annotations

import math

from perfatlas.common.units import format_size
from perfatlas.mem.series_memory import bandwidth_peaks, bandwidth_series, line_label
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Details, Figure, Note, Table
from perfatlas.report.cells import context_table, few_samples_note, value_with_ci
from perfatlas.report.report_sections import section
from perfatlas.report.series import Series
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

GB = 1e9  # SI (docs/architecture.md, Units): GB/s = 10^9 byte/s
PANEL_COLUMNS = 3


def _style(key: tuple, line_keys: list[tuple]) -> dict:
    index = line_keys.index(key[1:])
    return {"color": plots.COLORS[index % 10], "linestyle": "--" if key[2] == "nt" else "-"}


def _panels(series: list[Series], data: RunData) -> str:
    ops = list(dict.fromkeys(s.key[0] for s in series))
    line_keys = list(dict.fromkeys(s.key[1:] for s in series))
    columns = min(PANEL_COLUMNS, len(ops))
    rows = math.ceil(len(ops) / columns)
    sizes = [size for s in series for size in s.sizes]
    with plots.figure(
        "bandwidth",
        rows,
        columns,
        width=3.5 * columns + 0.4,
        height=2.6 * rows + 0.8,
        sharex=True,
        sharey=True,
    ) as (fig, axes):
        for ax in axes.flat[len(ops) :]:
            ax.set_visible(False)
        for ax, op in zip(axes.flat, ops):
            mine = [s for s in series if s.key[0] == op]
            plots.draw_curves(
                ax, [s.curve(1 / GB, line_label(s.key), **_style(s.key, line_keys)) for s in mine]
            )
            plots.size_axis(ax, sizes, label="", max_ticks=6)
            ax.set_yscale("log")
            plots.mark_caches(ax, data.caches, label=ax is axes.flat[0])
            ax.set_title(op, loc="left", fontweight="bold")
        for ax in axes[:, 0]:
            plots.plain_log_y(ax, "GB/s")
        for ax in axes[-1, :]:
            ax.set_xlabel("working set (all arrays)")
        for ax in axes.flat:
            ax.tick_params(axis="x", labelbottom=True)
        handles = [
            plots.line_handle(
                plots.COLORS[i % 10], "--" if key[1] == "nt" else "-", line_label(("",) + key)
            )
            for i, key in enumerate(line_keys)
        ]
        fig.legend(
            handles=handles,
            loc="lower center",
            ncol=min(4, len(handles)),
            frameon=False,
            bbox_to_anchor=(0.5, -0.02 - 0.02 * math.ceil(len(handles) / 4)),
        )
        fig.tight_layout()
        return plots.to_svg(fig)


def _peak_table(series: list[Series]) -> Table:
    threads, rows = bandwidth_peaks(series)

    def cell(result: Result | None) -> str:
        if result is None:
            return "-"
        return f"{value_with_ci(result, 1 / GB, 'GB/s')} at {format_size(result.params['bytes'])}"

    columns = ["op", "stores"]
    columns += [f"peak, {t} thread{'s' * (t > 1)}" for t in threads]
    columns += [f"largest working set, {t} thread{'s' * (t > 1)}" for t in threads]
    body = [
        [row.op, row.variant]
        + [cell(row.peak.get(t)) for t in threads]
        + [cell(row.largest.get(t)) for t in threads]
        for row in rows
    ]
    return Table(
        columns,
        body,
        numeric=tuple(range(2, len(columns))),
        caption="Peak bandwidth (the best working set, usually in L1) and the bandwidth "
        "at the largest working set measured (memory, when it exceeds the "
        "caches): median [95 % CI] in GB/s.",
    )


def _write_allocate_note(results: list[Result]) -> Note:
    counted = {(r.document.get("derived") or {}).get("write_allocate_counted") for r in results}
    if counted == {False}:
        return Note(
            "Write-allocate traffic is not counted: bandwidth is the bytes each kernel "
            "names (its loads plus its stores) per second. A normal store to a line not "
            "in cache first reads that line, so real memory traffic of write, copy, "
            "scale, add and triad is higher than shown (copy: 3/2 of it); non-temporal "
            "stores avoid that read."
        )
    if counted == {True}:
        return Note("Write-allocate traffic is counted in these bandwidth figures.")
    return Note(
        "The results do not say whether write-allocate traffic is counted "
        "(derived.write_allocate_counted is missing or mixed).",
        "warning",
    )


def _by_line(series: list[Series]) -> list[Series]:
    """One context row per line style (thread count, stores ...), pooled over the operations."""
    pooled: dict[tuple, list[Result]] = {}
    for s in series:
        pooled.setdefault(s.key[1:], []).extend(s.results)
    return [Series(key, line_label(("",) + key), results) for key, results in pooled.items()]


def _data_table(series: list[Series]) -> Table:
    rows = [
        [s.label, format_size(r.params["bytes"]), value_with_ci(r, 1 / GB, "GB/s"), str(r.n)]
        for s in series
        for r in s.results
    ]
    return Table(["series", "working set", "median [95 % CI]", "n"], rows, numeric=(1, 2, 3))


@section("memory-bandwidth", "Memory bandwidth", order=31)
def bandwidth_section(data: RunData) -> list[Block]:
    results = data.measured("mem.bandwidth", "bandwidth_Bps")
    if not results:
        return []
    series = bandwidth_series(data)
    note = few_samples_note(results)
    return [
        _write_allocate_note(results),
        *([note] if note else []),
        Figure(
            _panels(series, data),
            "Sustained bandwidth per operation (GB/s = 10^9 byte/s, log scale) vs the working "
            "set of all its arrays: median with 95 % CI band; dashed lines use non-temporal "
            "stores. Grey bars: hwloc's cache sizes per instance; with several threads each "
            "thread holds 1/threads of the working set, so per-core caches fill later.",
        ),
        _peak_table(series),
        context_table(_by_line(series)),
        Details("All bandwidth figures", [_data_table(series)]),
    ]
