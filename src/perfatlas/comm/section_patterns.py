"""MPI patterns: distance from rank 0, hotspot (k senders to one receiver), complement pairs,
and the anomalies among them, as the run's findings state them (perfatlas.comm.findings_comm:
stored with the run, so its report shows the conclusions drawn when it was measured)."""

from __future__ import annotations

import numpy as np

from perfatlas.comm.analysis_comm import MIN_RELATIVE_DEVIATION, ROBUST_Z_LIMIT
from perfatlas.comm.findings_comm import (
    ANOMALY_HEADER,
    anomalies_sentence,
    anomaly_rows,
    clean_sentence,
    not_judged_sentence,
    suspect_sentence,
)
from perfatlas.comm.series_comm import link, pair_hosts, placement_details
from perfatlas.common.units import format_number, format_size
from perfatlas.findings.compute import run_findings
from perfatlas.findings.model import Finding, of_kind
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Details, Figure, Note, Table
from perfatlas.report.cells import few_samples_note, value_with_ci
from perfatlas.report.report_sections import section
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

GB = 1e9
METRICS = {"latency_ns": ("latency (µs)", 1e-3), "bandwidth_Bps": ("bandwidth (GB/s)", 1 / GB)}
LINK_COLOR = {"intra-node": plots.COLORS[0], "inter-node": plots.COLORS[1]}
ANOMALY_COLOR = "#d62728"


def _subject(result: Result) -> str:
    if result.benchmark == "comm.distance":
        return f"rank {result.params['peer']}"
    a, b = result.params["pair"]
    return f"{a}↔{b}"


def _pair(result: Result) -> tuple[int, int]:
    if result.benchmark == "comm.distance":
        return 0, int(result.params["peer"])
    a, b = result.params["pair"]
    return int(a), int(b)


def _points_figure(name: str, data: RunData, benchmark: str, flagged: set[int], title: str) -> str:
    """One panel per metric: a point with its 95 % CI per rank or pair; anomalies in red."""
    metrics = [m for m in METRICS if data.measured(benchmark, m)]
    with plots.figure(name, 1, len(metrics), width=5.0 * len(metrics) + 0.5, height=3.4) as (
        fig,
        axes,
    ):
        for ax, metric in zip(axes[0], metrics):
            label, scale = METRICS[metric]
            results = sorted(data.measured(benchmark, metric), key=lambda r: _pair(r))
            x = np.arange(len(results))
            for i, r in enumerate(results):
                bad = r.id in flagged
                color = ANOMALY_COLOR if bad else LINK_COLOR.get(link(r), plots.COLORS[2])
                ax.errorbar(
                    [i],
                    [r.median * scale],
                    yerr=[
                        [max(0.0, (r.median - r.ci_lo) * scale)],
                        [max(0.0, (r.ci_hi - r.median) * scale)],
                    ],
                    color=color,
                    marker="X" if bad else "o",
                    markersize=7 if bad else 4.5,
                    capsize=3,
                )
                if bad:
                    ax.annotate(
                        "anomaly",
                        (i, r.median * scale),
                        textcoords="offset points",
                        xytext=(6, 4),
                        color=ANOMALY_COLOR,
                        fontsize=7.5,
                    )
            ax.set_xticks(x, [_subject(r) for r in results], rotation=45 if len(results) > 8 else 0)
            ax.set_yscale("log")
            plots.plain_log_y(ax, label)
            ax.set_title(f"{title}: {label.split(' ')[0]}", loc="left")
        handles = [
            plots.line_handle(color, "", name_)
            for name_, color in (*LINK_COLOR.items(), ("anomaly", ANOMALY_COLOR))
        ]
        fig.legend(
            handles=handles, loc="lower center", ncol=3, frameon=False, bbox_to_anchor=(0.5, -0.08)
        )
        fig.tight_layout()
        return plots.to_svg(fig)


def _hotspot_figure(data: RunData) -> str:
    per_sender = sorted(
        data.measured("comm.hotspot", "bandwidth_per_sender_Bps"), key=lambda r: r.params["senders"]
    )
    aggregate = sorted(
        data.measured("comm.hotspot", "aggregate_bandwidth_Bps"), key=lambda r: r.params["senders"]
    )
    with plots.figure("comm-hotspot", height=3.4, width=9.5) as (fig, axes):
        ax = axes[0, 0]
        k = np.array([r.params["senders"] for r in per_sender], dtype=float)
        ranges = [_sender_medians(r) for r in per_sender]
        ax.fill_between(
            k,
            [min(v) / GB for v in ranges],
            [max(v) / GB for v in ranges],
            color=plots.COLORS[0],
            alpha=0.15,
            lw=0,
            label="slowest .. fastest sender",
        )
        plots.draw_error_bars(
            ax,
            [
                _curve("per sender (all senders' samples)", per_sender, plots.COLORS[0]),
                _curve("aggregate at the receiver", aggregate, plots.COLORS[3]),
            ],
        )
        ax.set_xticks(k)
        ax.set_xlabel("senders k")
        plots.plain_log_y(ax, "bandwidth (GB/s)")
        ax.set_title(
            f"hotspot: k ranks send {format_size(per_sender[0].params['bytes'])} messages to rank 0",
            loc="left",
        )
        ax.legend(frameon=False)
        return plots.to_svg(fig)


def _curve(label: str, results: list[Result], color):
    from perfatlas.report.series import Curve

    return Curve(
        label,
        np.array([r.params["senders"] for r in results], dtype=float),
        np.array([r.median for r in results]) / GB,
        np.array([r.ci_lo for r in results]) / GB,
        np.array([r.ci_hi for r in results]) / GB,
        color=color,
    )


def _sender_medians(result: Result) -> list[float]:
    senders = (result.document.get("derived") or {}).get("sender_ranks") or [0]
    per = max(1, len(result.samples) // len(senders))
    return [
        float(np.median(result.samples[i : i + per])) for i in range(0, len(result.samples), per)
    ]


def _hotspot_rows(data: RunData) -> list[list[str]]:
    rows = []
    aggregate = {
        r.params["senders"]: r for r in data.measured("comm.hotspot", "aggregate_bandwidth_Bps")
    }
    for r in sorted(
        data.measured("comm.hotspot", "bandwidth_per_sender_Bps"), key=lambda r: r.params["senders"]
    ):
        medians = _sender_medians(r)
        agg = aggregate.get(r.params["senders"])
        rows.append(
            [
                str(r.params["senders"]),
                value_with_ci(r, 1 / GB, "GB/s"),
                f"{format_number(min(medians) / GB)} .. {format_number(max(medians) / GB)} GB/s",
                value_with_ci(agg, 1 / GB, "GB/s") if agg else "-",
                ", ".join(
                    dict.fromkeys((r.document.get("derived") or {}).get("sender_links") or [])
                ),
            ]
        )
    return rows


RULE = (
    f"A figure (its median, with the 95 % interval of its own samples) is an anomaly when all "
    f"three hold: its logarithm deviates from the median of the other figures' logarithms by "
    f"more than {ROBUST_Z_LIMIT} robust standard deviations of those (1.4826 × their median "
    f"absolute deviation: the modified z-score of Iglewicz and Hoaglin, leave-one-out); its "
    f"interval does not overlap that of the median of the other figures' samples pooled; and it "
    f"differs from the others' median by more than {MIN_RELATIVE_DEVIATION:.0%}. A group where a "
    "figure passes, or too spread to tell, is measured again, and a figure is reported only when "
    "both its measurements pass against the others, each at the better of its two (else it is "
    "withdrawn). "
    "Groups hold comparable figures only: same benchmark, metric, message size and np, and the "
    "same link class (intra-node figures are never compared with inter-node ones); groups of "
    "fewer than 3 are not judged. A host whose every figure is worse, while the group also holds "
    "figures without it, is named as the likely cause: its link. Every row, count and verdict "
    "here is one of the run's findings (comm.anomaly, comm.withdrawn, comm.suspect_host, "
    "comm.no_anomaly, comm.not_judged)."
)


def anomaly_blocks(found: list[Finding]) -> list[Block]:
    """The anomalies, suspect hosts and groups not judged, as the run's findings state them."""
    blocks: list[Block] = []
    header = list(ANOMALY_HEADER)
    anomalies = of_kind(found, "comm.anomaly")
    if anomalies:
        worse = any(f.severity == "warning" for f in anomalies)
        blocks.append(Note(anomalies_sentence(anomalies), "bad" if worse else "warning"))
        blocks += [Note(suspect_sentence(s), "bad") for s in of_kind(found, "comm.suspect_host")]
        blocks.append(Table(header, anomaly_rows(anomalies), numeric=(1, 2, 3), caption=RULE))
    for clean in of_kind(found, "comm.no_anomaly"):
        blocks.append(Note(f"{clean_sentence(clean)} {RULE}"))
    if withdrawn := of_kind(found, "comm.withdrawn"):
        blocks.append(
            Details(
                f"{len(withdrawn)} figure(s) withdrawn: the re-measurement did not confirm",
                [Table(header, anomaly_rows(withdrawn), numeric=(1, 2, 3))],
            )
        )
    if unjudged := of_kind(found, "comm.not_judged"):
        blocks.append(Note(not_judged_sentence(unjudged)))
    return blocks


@section("comm-patterns", "MPI patterns: distance, hotspot, complement", order=51)
def patterns_section(data: RunData) -> list[Block]:
    names = ("comm.distance", "comm.hotspot", "comm.complement")
    results = [r for name in names for r in data.measured(name)]
    if not results:
        return []
    found = run_findings(data)
    flagged = set(found.of_results("comm.anomaly"))  # the points drawn as anomalies
    blocks: list[Block] = [note] if (note := few_samples_note(results)) else []
    if data.measured("comm.distance"):
        first = data.measured("comm.distance")[0]
        blocks.append(
            Figure(
                _points_figure(
                    "comm-distance", data, "comm.distance", flagged, "distance from rank 0"
                ),
                f"Rank 0 to every other rank, one pair at a time while the others sleep: latency "
                f"of {format_size(first.params['latency_bytes'])} messages and bandwidth of "
                f"{format_size(first.params['bandwidth_bytes'])} messages, median and 95 % CI. "
                "Colour: the link class from the ranks' host names; red crosses: anomalies.",
            )
        )
    if data.measured("comm.hotspot"):
        blocks.append(
            Figure(
                _hotspot_figure(data),
                "k senders stream to rank 0 at once: bandwidth per sender (all senders' samples, "
                "median and 95 % CI; the band spans the slowest to the fastest sender's median) "
                "and the aggregate rank 0 takes in. Fair sharing of one receiver gives per-sender "
                "bandwidth ≈ aggregate / k.",
            )
        )
        blocks.append(
            Table(
                ["k", "per sender [95 % CI]", "sender medians", "aggregate [95 % CI]", "links"],
                _hotspot_rows(data),
                numeric=(0, 1, 2, 3),
            )
        )
    if data.measured("comm.complement"):
        first = data.measured("comm.complement")[0]
        blocks.append(
            Figure(
                _points_figure(
                    "comm-complement", data, "comm.complement", flagged, "complement pairs"
                ),
                f"Every rank i with rank np-1-i, all pairs at once (np={first.params['np']}): "
                f"latency of {format_size(first.params['latency_bytes'])} and bandwidth of "
                f"{format_size(first.params['bandwidth_bytes'])} messages per pair; red crosses: "
                "anomalies.",
            )
        )
        rows = [
            [
                _subject(r),
                pair_hosts(r, _pair(r)),
                link(r),
                r.metric,
                value_with_ci(r, *_unit(r.metric)),
            ]
            for r in sorted(data.measured("comm.complement"), key=lambda r: (_pair(r), r.metric))
        ]
        blocks.append(
            Details(
                "Complement figures per pair",
                [
                    Table(
                        ["pair", "hosts", "link", "metric", "median [95 % CI]"], rows, numeric=(4,)
                    )
                ],
            )
        )
    blocks += anomaly_blocks(found.findings)
    if placement := placement_details(results):
        blocks.append(placement)
    return blocks


def _unit(metric: str) -> tuple[float, str]:
    return (1 / GB, "GB/s") if metric.endswith("_Bps") else (1e-3, "µs")
