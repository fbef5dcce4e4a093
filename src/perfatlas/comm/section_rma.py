"""MPI one-sided (RMA): get, put and shared-memory load/store latency per case, type and k."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator

from perfatlas.comm.series_comm import CASE_TITLES, placement_details, rma_results, rma_unmeasurable
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Details, Figure, Note, Table
from perfatlas.report.cells import few_samples_note, value_with_ci
from perfatlas.report.report_sections import section
from perfatlas.report.series import Curve
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

OPS = {"get": "MPI_Get + flush", "put": "MPI_Put + flush", "load_store": "shared-memory store/load"}
TYPE_STYLE = {"double": "-", "int": "--", "char": ":"}


def _figure(results: list[Result]) -> str:
    ops = [op for op in OPS if any(r.params["op"] == op for r in results)]
    cases = list(dict.fromkeys(r.params["case"] for r in results))
    with plots.figure(
        "comm-rma", 1, len(ops), width=3.8 * len(ops) + 0.6, height=3.4, sharey=True
    ) as (fig, axes):
        for ax, op in zip(axes[0], ops):
            curves = []
            for case in cases:
                for type_, style in TYPE_STYLE.items():
                    mine = sorted(
                        (
                            r
                            for r in results
                            if r.params["op"] == op
                            and r.params["case"] == case
                            and r.params["type"] == type_
                        ),
                        key=lambda r: r.params["count"],
                    )
                    if not mine:
                        continue
                    curves.append(
                        Curve(
                            f"{CASE_TITLES.get(case, case)}, {type_}",
                            np.array([r.params["count"] for r in mine], dtype=float),
                            np.array([r.median for r in mine]),
                            np.array([r.ci_lo for r in mine]),
                            np.array([r.ci_hi for r in mine]),
                            color=plots.COLORS[cases.index(case) % 10],
                            linestyle=style,
                        )
                    )
            plots.draw_curves(ax, curves)
            ax.set_xscale("log", base=2)
            largest = max(r.params["count"] for r in results)
            step = max(1, math.ceil(math.log2(max(largest, 2)) / 6))  # 7 labels at most
            ax.xaxis.set_major_locator(LogLocator(base=2**step))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.set_xlabel("elements per access k")
            ax.set_title(OPS[op], loc="left")
        plots.plain_log_y(axes[0, 0], "latency (ns)")
        handles = [
            plots.line_handle(plots.COLORS[i % 10], "-", CASE_TITLES.get(c, c))
            for i, c in enumerate(cases)
        ]
        handles += [plots.line_handle("0.3", style, t) for t, style in TYPE_STYLE.items()]
        fig.legend(
            handles=handles, loc="lower center", ncol=4, frameon=False, bbox_to_anchor=(0.5, -0.14)
        )
        fig.tight_layout()
        return plots.to_svg(fig)


def _single_double(results: list[Result]) -> Table:
    cases = list(dict.fromkeys(r.params["case"] for r in results))
    rows = []
    for op in OPS:
        cells = []
        for case in cases:
            hit = [
                r
                for r in results
                if r.params["op"] == op
                and r.params["case"] == case
                and r.params["type"] == "double"
                and r.params["count"] == 1
            ]
            cells.append(value_with_ci(hit[0], 1.0, "ns") if hit else "-")
        if any(c != "-" for c in cells):
            rows.append([OPS[op], *cells])
    return Table(
        ["one double", *[CASE_TITLES.get(c, c) for c in cases]],
        rows,
        numeric=tuple(range(1, len(cases) + 1)),
        caption="Latency of one double: median [95 % CI]. Get and put include "
        "MPI_Win_flush (the data are at the origin, or complete at the target); "
        "load/store is half the round trip of a store and a flag answered alike.",
    )


def _all_rows(results: list[Result]) -> list[list[str]]:
    return [
        [
            CASE_TITLES.get(r.params["case"], r.params["case"]),
            r.params["op"],
            r.params["type"],
            str(r.params["count"]),
            str(r.params["bytes"]),
            value_with_ci(r, 1.0, "ns"),
            f"{r.min:.3g} ns",
            str(r.n),
            "yes" if (r.document.get("derived") or {}).get("verified") else "no",
        ]
        for r in sorted(
            results,
            key=lambda r: (r.params["case"], r.params["op"], r.params["type"], r.params["count"]),
        )
    ]


@section("comm-rma", "MPI one-sided access (RMA)", order=53)
def rma_section(data: RunData) -> list[Block]:
    results = rma_results(data)
    missing = rma_unmeasurable(data)
    if not results and not missing:
        return []
    blocks: list[Block] = [note] if (note := few_samples_note(results)) else []
    if results:
        blocks.append(_single_double(results))
        blocks.append(
            Figure(
                _figure(results),
                "Latency per access vs elements per access (k = 1, 2, 4 ...), per case; solid "
                "double, dashed int, dotted char. Passive target (MPI_Win_lock_all), one operation "
                "and MPI_Win_flush per iteration; every fetched or put element is checked.",
            )
        )
    for case, why in missing.items():
        blocks.append(Note(f"{CASE_TITLES.get(case, case)}: not measurable here: {why}", "warning"))
    if results:
        blocks.append(
            Details(
                "All RMA figures",
                [
                    Table(
                        [
                            "case",
                            "op",
                            "type",
                            "k",
                            "bytes",
                            "median [95 % CI]",
                            "fastest sample",
                            "n",
                            "verified",
                        ],
                        _all_rows(results),
                        numeric=(3, 4, 5, 6, 7),
                    )
                ],
            )
        )
    if placement := placement_details(results):
        blocks.append(placement)
    return blocks
