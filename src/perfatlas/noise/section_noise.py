"""OS noise: per-PU slowdown, the detour distribution, the spectrum, and the cost at scale (BSP)."""

from __future__ import annotations

import math

import numpy as np

from perfatlas.common.units import format_number
from perfatlas.findings.compute import run_findings
from perfatlas.noise import analysis_noise as analysis
from perfatlas.noise.findings_noise import slowdown_text
from perfatlas.noise.series_noise import CoreNoise, NoiseMeasurement, noise_measurements
from perfatlas.report import plots
from perfatlas.report.blocks import Block, Details, Figure, Note, Table
from perfatlas.report.report_sections import section
from perfatlas.store.run_data import RunData

PANEL_COLUMNS = 3
TRACE_BLOCK_S = 0.01  # the trace shows the lost share of every 10 ms
TOP_LINES = 3  # lines per PU in the main table
MAX_DRAWN = 8  # PUs drawn as lines in one panel
LINE_COLUMNS = [
    "measurement",
    "PU",
    "line",
    "amplitude (of the lost-time fraction)",
    "share of the lost time",
    "multiple of",
    "band power / variance",
]


def _percent(fraction: float | None, digits: int = 3) -> str:
    return "-" if fraction is None else f"{format_number(100 * fraction, digits)} %"


def _us(ns: float) -> str:
    return f"{format_number(ns / 1e3)} us"


def _hz(frequency: float) -> str:
    return f"{frequency:.1f} Hz" if frequency < 100 else f"{frequency:.0f} Hz"


def _undisturbed(core: CoreNoise) -> str:
    if core.series.method == "ftq":
        most = max(core.result.samples)
        return f"{most:.0f} units per {_us(core.series.quantum_ns)}"
    return _us(core.series.quantum_ns)


def _context(measurements: list[NoiseMeasurement]) -> Table:
    rows = []
    for m in measurements:
        derived = m.cores[0].result.document.get("derived") or {}
        timer = m.timer
        rows.append(
            [
                m.label,
                {
                    "fwq": "fixed work quantum: duration of every quantum",
                    "ftq": "fixed time quantum: work done in every interval",
                }.get(m.method, m.method),
                f"{m.quantum_s * 1e6:g} us",
                ", ".join(f"cpu {c.cpu}: {_undisturbed(c)}" for c in m.cores),
                m.binding,
                f"{timer.get('source', '?')}, resolution {timer.get('resolution_ns', 0):.3g} ns, "
                f"a read costs {derived.get('timer_read_ns', 0):.3g} ns",
                ", ".join(str(len(c.result.samples)) for c in m.cores),
            ]
        )
    return Table(
        [
            "measurement",
            "method",
            "quantum asked",
            "undisturbed (t_min, or the most work per interval)",
            "binding (read back)",
            "timer",
            "samples per PU",
        ],
        rows,
        caption="Context of each noise measurement. Every PU ran one pinned thread, all at the "
        "same time; the work is a dependent chain of integer multiply-adds (no memory "
        "traffic), checked after the run.",
    )


def _drawn(m: NoiseMeasurement) -> list[CoreNoise]:
    """The PUs drawn as lines: all, or the MAX_DRAWN with the largest slowdown (in PU order)."""
    if len(m.cores) <= MAX_DRAWN:
        return m.cores
    worst = sorted(m.cores, key=lambda c: -c.slowdown.median)[:MAX_DRAWN]
    return [c for c in m.cores if c in worst]


def _drawn_note(measurements: list[NoiseMeasurement]) -> str:
    many = [m for m in measurements if len(m.cores) > MAX_DRAWN]
    if not many:
        return ""
    return (
        f" Where more than {MAX_DRAWN} PUs measured at once, the {MAX_DRAWN} with the largest "
        "slowdown are drawn; the tables list every PU."
    )


def _colors(measurements: list[NoiseMeasurement]) -> dict[int, tuple]:
    return {id(m): plots.COLORS[i % 10] for i, m in enumerate(measurements)}


def _slowdown_figure(measurements: list[NoiseMeasurement]) -> str:
    cores = [(m, c) for m in measurements for c in m.cores]
    colors = _colors(measurements)
    with plots.figure("noise-slowdown", width=9.5, height=3.0) as (fig, axes):
        ax = axes[0, 0]
        plots.draw_bars(
            ax,
            [f"cpu {c.cpu}" for _, c in cores],
            [100 * c.slowdown.median for _, c in cores],
            [100 * c.slowdown.ci_lo for _, c in cores],
            [100 * c.slowdown.ci_hi for _, c in cores],
            [colors[id(m)] for m, _ in cores],
        )
        ax.set_ylabel("slowdown (%)")
        ax.set_title("time lost to noise / undisturbed time, per PU", loc="left")
        handles = [plots.line_handle(colors[id(m)], "-", m.label) for m in measurements]
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)
        return plots.to_svg(fig)


def _panels(count: int, name: str, height: float):
    """Small multiples, PANEL_COLUMNS to a row, the full width of the report."""
    columns = min(PANEL_COLUMNS, count)
    rows = math.ceil(count / columns)
    return plots.figure(name, rows, columns, width=9.5, height=height * rows + 0.4)


def _histogram_figure(measurements: list[NoiseMeasurement]) -> str:
    with _panels(len(measurements), "noise-detours", 3.0) as (fig, axes):
        for ax in axes.flat[len(measurements) :]:
            ax.set_visible(False)
        for ax, m in zip(axes.flat, measurements):
            for i, core in enumerate(_drawn(m)):
                found = core.detours
                ax.stairs(
                    np.maximum(found.counts, 0.8),
                    found.edges_ns / 1e3,
                    color=plots.COLORS[i % 10],
                    linewidth=1.3,
                    label=f"cpu {core.cpu}",
                    baseline=0.8,
                )
                ax.axvline(found.largest_ns / 1e3, color=plots.COLORS[i % 10], linestyle=":")
            plots.plain_log_x(ax, "time lost in one sample (us)")
            ax.set_yscale("log")
            ax.set_ylim(bottom=0.8)
            ax.set_ylabel("samples")
            ax.set_title(m.label, loc="left", fontsize=8.5)
            ax.legend(frameon=False)
        fig.tight_layout()
        return plots.to_svg(fig)


def _psd_at(spectrum: analysis.Spectrum, line: analysis.Line) -> float:
    k = int(round(line.frequency_hz / spectrum.resolution_hz))
    return float(spectrum.psd[max(0, k - 1) : k + 2].max())


def _name_lines(ax, m: NoiseMeasurement, most: int = 6) -> None:
    """Name the lines that hold the most lost time (each frequency once, over all PUs)."""
    found = [
        (line.share or 0.0, line, core.spectrum)
        for core in _drawn(m)
        if core.spectrum
        for line in core.spectrum.lines
    ]
    named: list[float] = []
    for _, line, spectrum in sorted(found, key=lambda item: -item[0]):
        if len(named) == most or any(abs(line.frequency_hz - f) < 0.03 * f for f in named):
            continue
        named.append(line.frequency_hz)
        ax.annotate(
            _hz(line.frequency_hz),
            (line.frequency_hz, _psd_at(spectrum, line) * 1.7),
            textcoords="offset points",
            xytext=(0, 6 + 9 * (len(named) % 2)),
            ha="center",
            fontsize=7,
            color="0.2",
            arrowprops={"arrowstyle": "-", "color": "0.6", "lw": 0.5},
        )


def _spectrum_figure(measurements: list[NoiseMeasurement]) -> str:
    shown = [m for m in measurements if any(c.spectrum for c in m.cores)]
    with plots.figure("noise-spectrum", len(shown), 1, width=9.5, height=3.4 * len(shown)) as (
        fig,
        axes,
    ):
        for ax, m in zip(axes[:, 0], shown):
            for i, core in enumerate(_drawn(m)):
                spectrum = core.spectrum
                if spectrum is None:
                    continue
                color = plots.COLORS[i % 10]
                keep = spectrum.frequency_hz > 0
                ax.plot(
                    spectrum.frequency_hz[keep],
                    spectrum.psd[keep],
                    color=color,
                    linewidth=0.8,
                    alpha=0.85,
                    label=f"cpu {core.cpu}",
                )
                for line in spectrum.lines:
                    ax.plot(
                        line.frequency_hz, _psd_at(spectrum, line) * 1.7, "v", color=color, ms=4.5
                    )
            _name_lines(ax, m)
            first = next(c.spectrum for c in m.cores if c.spectrum)
            nyquist = first.rate_hz / 2
            ax.axvspan(
                first.line_limit_hz,
                nyquist,
                color="0.5",
                alpha=0.1,
                lw=0,
                label="no lines looked for (over 1/8 of the quantum rate)",
            )
            plots.plain_log_x(ax, "frequency (Hz)")
            ax.set_xlim(first.resolution_hz, nyquist)
            ax.set_yscale("log")
            ax.set_ylabel("PSD of the lost-time fraction (1/Hz)")
            ax.set_title(m.label, loc="left")
            ax.legend(frameon=False, loc="lower left")
        fig.tight_layout()
        return plots.to_svg(fig)


def _bsp_figure(measurements: list[NoiseMeasurement]) -> str:
    colors = _colors(measurements)
    styles = {1e6: "-", 10e6: "--"}
    with plots.figure("noise-bsp", width=7.5, height=3.8) as (fig, axes):
        ax = axes[0, 0]
        for m in measurements:
            for curve in m.bsp:
                known = curve.processes <= max(1, curve.independent_windows)
                style = styles.get(curve.granularity_ns, ":")
                label = f"g = {curve.granularity_ns / 1e6:g} ms, {m.label}"
                ax.plot(
                    curve.processes[known],
                    100 * curve.slowdown[known],
                    style,
                    marker="o",
                    ms=3.5,
                    color=colors[id(m)],
                    label=label,
                )
                beyond = np.flatnonzero(~known)
                if beyond.size:
                    tail = np.r_[beyond[0] - 1, beyond] if beyond[0] > 0 else beyond
                    ax.plot(
                        curve.processes[tail],
                        100 * curve.slowdown[tail],
                        ":",
                        marker="o",
                        mfc="white",
                        ms=3.5,
                        color=colors[id(m)],
                    )
        plots.plain_log_x(ax, "processes P")
        plots.plain_log_y(ax, "expected slowdown E[max of P] / g (%)")
        ax.set_title("bulk-synchronous supersteps of granularity g on P processes", loc="left")
        plots.legend_below(ax, ncol=1)
        return plots.to_svg(fig)


def _trace_figure(measurements: list[NoiseMeasurement]) -> str:
    with plots.figure(
        "noise-trace", len(measurements), 1, width=9.5, height=2.2 * len(measurements) + 0.3
    ) as (
        fig,
        axes,
    ):
        for ax, m in zip(axes[:, 0], measurements):
            for i, core in enumerate(_drawn(m)):
                x, step = analysis.lost_fraction(core.series)
                per_block = max(1, int(TRACE_BLOCK_S * 1e9 / step))
                blocks = len(x) // per_block
                if blocks < 1:
                    continue
                lost = x[: blocks * per_block].reshape(blocks, per_block).mean(axis=1)
                times = (np.arange(blocks) + 0.5) * per_block * step * 1e-9
                ax.plot(
                    times, 100 * lost, color=plots.COLORS[i % 10], lw=0.8, label=f"cpu {core.cpu}"
                )
            ax.set_ylabel("time lost (%)")
            ax.set_title(m.label, loc="left", fontsize=8.5)
            ax.legend(frameon=False, loc="upper right")
        axes[-1, 0].set_xlabel("time since the start (s)")
        fig.tight_layout()
        return plots.to_svg(fig)


def _core_rows(measurements: list[NoiseMeasurement], data: RunData) -> list[list[str]]:
    """A row per PU; its slowdown as the run's noise.slowdown finding states it."""
    slowdowns = run_findings(data).of_results("noise.slowdown")
    rows = []
    for m in measurements:
        for core in m.cores:
            found = core.detours
            rows.append(
                [
                    m.label,
                    f"cpu {core.cpu}",
                    slowdown_text(slowdowns.get(core.result.id)),
                    *[_us(found.percentiles_ns[p]) for p in analysis.PERCENTILES],
                    _us(found.largest_ns),
                    _percent(found.tail_share, 2),
                    str(found.samples),
                ]
            )
    return rows


def _line_rows(measurements: list[NoiseMeasurement], most: int | None = None) -> list[list[str]]:
    """The lines of every PU, strongest first; with `most`, the `most` with the largest share."""
    rows = []
    for m in measurements:
        for core in m.cores:
            lines = core.spectrum.lines if core.spectrum else []
            if most is not None:
                ranked = sorted(lines, key=lambda line: -(line.share or 0.0))[:most]
                lines = [line for line in lines if line in ranked]
            for line in lines:
                rows.append(
                    [
                        m.label,
                        f"cpu {core.cpu}",
                        _hz(line.frequency_hz),
                        _percent(line.amplitude),
                        _percent(line.share, 2),
                        f"{line.order} × {_hz(line.fundamental_hz)}" if line.fundamental_hz else "",
                        _percent(line.power_share, 2),
                    ]
                )
    return rows


def _bsp_rows(measurements: list[NoiseMeasurement]) -> list[list[str]]:
    rows = []
    for m in measurements:
        for curve in m.bsp:
            cells = []
            for p, value in zip(curve.processes, curve.slowdown):
                mark = "" if p <= curve.independent_windows else " *"
                cells.append(_percent(value) + mark)
            rows.append(
                [
                    m.label,
                    f"{curve.granularity_ns / 1e6:g} ms",
                    *cells,
                    f"{curve.windows} ({curve.independent_windows})",
                ]
            )
    return rows


def _missing_granularities(measurements: list[NoiseMeasurement]) -> Note | None:
    missing = [
        f"g = {g / 1e6:g} ms for {m.label}"
        for m in measurements
        for g in analysis.GRANULARITIES_NS
        if all(curve.granularity_ns != g for curve in m.bsp)
    ]
    if not missing:
        return None
    return Note(
        "No BSP estimate for " + "; ".join(missing) + ": the series holds no window of that "
        "much work (or its quantum is longer than g). Measure for longer (duration=) or with a "
        "smaller quantum=.",
        "warning",
    )


@section("noise", "OS noise", order=40)
def noise_section(data: RunData) -> list[Block]:
    measurements = noise_measurements(data)
    if not measurements:
        return []
    granularities = " and ".join(f"{g / 1e6:g} ms" for g in analysis.GRANULARITIES_NS)
    processes = [f"{p:g}" for p in analysis.PROCESSES]
    blocks: list[Block] = [
        _context(measurements),
        Figure(
            _slowdown_figure(measurements),
            "Slowdown of each PU: the time its work lost to detours over the time the same work "
            "takes undisturbed (FWQ: sum of (t_i - t_min) over n t_min; FTQ: the work missing "
            "from each interval against the most any interval did). Error bars: 95 % "
            "moving-block bootstrap interval over 50 stretches of the run.",
        ),
        Table(
            [
                "measurement",
                "PU",
                "slowdown [95 % CI]",
                *[f"p{p:g} lost" for p in analysis.PERCENTILES],
                "largest",
                "share of lost time in the worst 1 %",
                "samples",
            ],
            _core_rows(measurements, data),
            numeric=(2, 3, 4, 5, 6, 7, 8, 9),
            caption="Time each sample (FWQ quantum or FTQ interval) lost: percentiles over all "
            "samples, the largest detour, and how much of all lost time the worst 1 % of the "
            "samples hold.",
        ),
        Figure(
            _histogram_figure(measurements),
            "Distribution of the time lost per sample (log-spaced bins from the timer "
            "resolution up; log counts). Dotted vertical line: the largest detour. A narrow body "
            "near the left is the machine's jitter; a separate hump or a long tail to the right "
            "is interrupts, preemption or the hypervisor." + _drawn_note(measurements),
        ),
        Figure(
            _trace_figure(measurements),
            f"Share of time lost in every {TRACE_BLOCK_S * 1e3:g} ms of the run, per PU: bursts "
            "and whether the PUs were disturbed together." + _drawn_note(measurements),
        ),
    ]
    if any(c.spectrum for m in measurements for c in m.cores):
        blocks += [
            Figure(
                _spectrum_figure(measurements),
                "Power spectral density (Welch: Hann window, 50 % overlap) of the lost-time "
                "fraction, resampled on a uniform grid at the quantum rate. Triangles: the lines "
                "found (at least 10x the running median of the PSD). Lines are looked for up to "
                "1/8 of the quantum rate: above, a quantum spans too much of a period to place a "
                "detour in it." + _drawn_note(measurements),
            ),
            Table(
                LINE_COLUMNS,
                _line_rows(measurements, TOP_LINES),
                numeric=(2, 3, 4, 6),
                caption=f"The {TOP_LINES} lines of each PU that hold the most lost time, strongest "
                "first (all lines below). Amplitude: of a sinusoid with the "
                "line's band power. Share: the lost time that recurs with the line's period, by "
                "epoch folding (mean profile over one period minus its median) over all lost "
                "time. A pattern that recurs every 1/f also recurs at every multiple of that "
                "period, so shares overlap: a pulse train at f0 shows the same share at f0 and "
                "at its harmonics k × f0.",
            ),
            Details(
                "All lines found (at most 8 per PU)",
                [Table(LINE_COLUMNS, _line_rows(measurements), numeric=(2, 3, 4, 6))],
            ),
        ]
    blocks += [
        Figure(
            _bsp_figure(measurements),
            "Expected slowdown of a bulk-synchronous application: P processes compute for g, "
            "then synchronize, so a superstep takes g + the largest time any process lost in its "
            "g. With each process drawing independently from the noise measured here (every "
            "window of g of work in the series, pooled over the PUs, empirical CDF F): "
            "E[max of P] = ∫ (1 − F(x)^P) dx; slowdown = E[max of P] / g (Petrini et al. SC03; "
            "Tsafrir et al. ICS05; Hoefler et al. SC10). Open markers on dotted lines: P beyond "
            "the independent windows measured, where the figure is bounded by the largest "
            "window seen (a lower bound).",
        ),
        Table(
            ["measurement", "g", *[f"P = {p}" for p in processes], "windows (independent)"],
            _bsp_rows(measurements),
            numeric=tuple(range(2, 3 + len(processes))),
            caption=f"Expected BSP slowdown for g = {granularities}. * : P exceeds the "
            "independent windows measured; a longer run sees rarer, larger detours.",
        ),
    ]
    note = _missing_granularities(measurements)
    if note:
        blocks.append(note)
    if any(c.series.duration_ns < 1e9 for m in measurements for c in m.cores):
        blocks.append(
            Note(
                "Some series are shorter than 1 s: rare detours are likely missed and the "
                "spectrum is coarse; measure with duration=10s or more.",
                "warning",
            )
        )
    blocks.append(
        Details(
            "How the noise figures are computed",
            [
                Note(
                    "FWQ repeats the same work back to back; every quantum's duration is kept "
                    "(the series is a time series: quantum i ends at the sum of the first i+1 "
                    "durations). The undisturbed time is the shortest quantum. FTQ counts the "
                    "work units finished in each interval of a fixed grid. The lost-time "
                    "fraction is put on a uniform grid at the quantum rate, each detour spread "
                    "over the quantum it stretched, before the spectrum is taken. Everything is "
                    "computed from the stored raw samples (perfatlas.noise.analysis_noise)."
                )
            ],
        )
    )
    return blocks
