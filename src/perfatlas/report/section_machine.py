"""Machine summary and run context: what a reader needs to trust or reproduce the figures."""

from __future__ import annotations

import shlex

from markupsafe import Markup

from perfatlas.common.units import format_size
from perfatlas.report.blocks import Block, Facts, Note
from perfatlas.report.report_sections import section
from perfatlas.store.run_data import RunData


def _shape(topology: dict) -> str:
    nodes = topology.get("numa_nodes") or []
    memory = sum(n.get("memory_bytes") or 0 for n in nodes)
    return (
        f"{topology.get('packages', '?')} package(s), {topology.get('cores', '?')} cores, "
        f"{len(topology.get('pus') or [])} PUs, {len(nodes)} NUMA node(s), "
        f"{format_size(memory)} memory"
    )


def _timer(data: RunData) -> str:
    timer = data.document_block("timer")
    if not timer:
        return "no result document in this run"
    text = timer.get("source", "?")
    if timer.get("resolution_ns") is not None:
        text += f", resolution {timer['resolution_ns']:.3g} ns"
    if timer.get("tsc_hz"):
        text += f", TSC {timer['tsc_hz'] / 1e9:.4g} GHz"
    if timer.get("counter_hz"):  # aarch64: cntvct_el0's calibrated and stated (cntfrq_el0) rates
        text += f", counter {timer['counter_hz'] / 1e6:.4g} MHz"
        if timer.get("cntfrq_hz"):
            text += f" (cntfrq_el0 says {timer['cntfrq_hz'] / 1e6:.4g} MHz)"
    return text


def _build(data: RunData) -> str:
    build = data.document_block("build")
    if not build:
        return "unknown (no result document in this run)"
    text = f"{build.get('compiler', '?')}, flags {build.get('cflags', '?')}"
    if build.get("arch"):  # documents from before it was recorded have no arch
        text += f", built for {build['arch']}"
    return text


def _environment(context: dict) -> str | Markup:
    env = context.get("environment") or {}
    if not env:
        return "no OMP_*, OPENBLAS_*, MKL_*, MPI or PERFATLAS_* variable set"
    return Markup("<br>").join(Markup("<code>{}={}</code>").format(k, v) for k, v in env.items())


def _llc(context: dict) -> str:
    """hwloc's last-level cache, the effective one the probe found, and which one sized the run
    (perfatlas.mem.cache_probe)."""
    llc = context.get("llc")
    if not llc:
        return "not recorded (a run from before the probe existed)"
    effective = llc.get("effective_bytes")
    chosen = "the effective one" if llc.get("used") == "probe" else "hwloc's"
    return (
        f"hwloc {format_size(llc['hwloc_bytes'])}, effective "
        f"{format_size(effective) if effective else 'not measured'}; sizes relative to the LLC "
        f"used {chosen} ({llc.get('why', '')})"
    )


def _remeasurement(context: dict) -> list[tuple[str, str]]:
    """Said where re-measurement was off (perfatlas.run.remeasure_anomalies): the run's anomalies and node
    verdicts then rest on one measurement."""
    if context.get("remeasure") is not False:
        return []
    return [("re-measurement", "off: figures that passed the anomaly rule were not measured again")]


@section("machine", "Machine and run context", order=10)
def machine_section(data: RunData) -> list[Block]:
    run, context = data.run, data.run.get("context") or {}
    measured = sum(1 for r in data.results if r.samples)
    warned = sum(len(r.warnings) for r in data.results)
    facts = [
        ("host", run.get("host", "?")),
        ("CPU", context.get("cpu_model") or run["topology"].get("cpu_model") or "?"),
        ("shape", _shape(run["topology"])),
        ("last-level cache", _llc(context)),
        ("kernel", context.get("kernel", "?")),
        ("frequency governor", context.get("governor", "?")),
        ("transparent huge pages", context.get("thp") or "unknown"),
        ("2 MiB huge pages reserved", context.get("hugepages_2MiB") or "unknown"),
        ("clock source", context.get("clocksource") or "unknown"),
        ("benchmark timer", _timer(data)),
        ("compiler and flags", _build(data)),
        ("MPI", context.get("mpi") or "no mpirun found"),
        ("CPUs allowed to perfatlas", context.get("cpus_allowed", "?")),
        ("environment", _environment(context)),
        ("machine fingerprint", run.get("fingerprint", "?")),
        ("run", f"{run['id']}: {run['status']}, {run['started']} → {run.get('finished') or '-'}"),
        ("suite", run.get("suite") or "none (perfatlas measure)"),
        *_remeasurement(context),
        ("command", Markup("<code>{}</code>").format(shlex.join(run.get("argv") or []))),
        ("software", ", ".join(f"{k} {v}" for k, v in (run.get("software") or {}).items())),
        (
            "results",
            f"{measured} measured, {len(data.unmeasurable)} not measurable here, {warned} warnings",
        ),
    ]
    blocks: list[Block] = [Facts(facts)]
    if "no cpufreq" in str(context.get("governor", "")):
        blocks.append(
            Note(
                "The OS exposes no frequency control here (typical of a VM): clock "
                "frequency and turbo are whatever the host gives, so figures may drift "
                "between runs; compare runs with ratios and their intervals.",
                "warning",
            )
        )
    return blocks
