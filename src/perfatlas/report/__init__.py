"""perfatlas.report: the HTML report framework: one self-contained file (inline CSS and SVG, no
URL) drawn from RunData. Sections register with @section in section_*.py modules of the domains
and of this package (the run-wide ones); a section with nothing to show is left out. It may
import every layer up to perfatlas.run, and no domain. This __init__ holds the renderer:
render_report, write_report, write_comparison_report, write_profile_report.

  blocks.py                what a section is made of: figures, tables, facts, notes, HTML, details
  cells.py                 value cells with intervals and the series-context table
  plots.py                 the shared plot look: working-set axes, CI bands, inline SVG
  report_sections.py       @section: the section registry and its order bands
  section_findings.py      section: every finding of the run as one table
  section_machine.py       section: machine summary and run context
  section_topology.py      section: the hwloc topology, with an lstopo-like drawing
  section_unmeasurable.py  section: what this machine cannot measure, and why
  section_warnings.py      section: every warning of every result, grouped by kind
  series.py                results grouped into series for drawing, and their placement context
  templates/               report.html.j2 and report.css: the page and its style
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path

import jinja2

from perfatlas import __version__
from perfatlas.common.text_file import write_text_file
from perfatlas.report.blocks import Block
from perfatlas.report.report_sections import all_sections
from perfatlas.store.run_data import RunData

__all__ = [
    "prepare",
    "write_report",
    "write_profile_report",
    "write_comparison_report",
    "render_report",
]


@dataclass(frozen=True)
class RenderedSection:
    name: str
    title: str
    blocks: list[Block]


def _template_text(name: str) -> str:
    return (resources.files("perfatlas.report") / "templates" / name).read_text(encoding="utf-8")


def _environment() -> jinja2.Environment:
    loader = jinja2.FunctionLoader(_template_text)
    return jinja2.Environment(
        loader=loader,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


@cache
def _page() -> jinja2.Template:
    """The page template, compiled once per process."""
    return _environment().get_template("report.html.j2")


def prepare() -> None:
    """What every report needs whatever its run, done ahead of the first: the sections imported
    (their domains' analyses and matplotlib with them), the page template compiled and a first
    figure drawn."""
    from perfatlas.report import plots  # matplotlib: only where a report is drawn

    all_sections()
    _page()
    plots.warm_up()


def render_report(data: RunData, store_path: str = "", only: Collection[str] = ()) -> str:
    """The report of `data`: every section with something to show (only those named in `only`)."""
    sections = []
    for spec in all_sections():
        if only and spec.name not in only:
            continue
        blocks = spec.build(data)
        if blocks:
            sections.append(RenderedSection(spec.name, spec.title, blocks))
    return _page().render(
        run=data.run,
        sections=sections,
        css=_template_text("report.css"),
        version=__version__,
        written=datetime.now(UTC).isoformat(timespec="seconds"),
        store=store_path,
    )


def write_report(data: RunData, path: str | Path) -> Path:
    """Write the report of the run `data` holds to `path` (one HTML file) and return the path."""
    return _write(render_report(data, data.source), Path(path))


def write_comparison_report(data: RunData, path: str | Path) -> Path:
    """The comparison of run B (`data`) against run A (`data.comparison`: perfatlas compare
    --report)."""
    return _write(render_report(data, data.source, only=("comparison",)), Path(path))


def write_profile_report(document: dict, source: Path, path: str | Path) -> Path:
    """The profile section alone for a perfatlas-ipm profile read from `source`, not stored."""
    started = document.get("started_unix")
    when = datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds") if started else "?"
    run = {
        "id": source.name,
        "host": ", ".join(document.get("hosts") or []) or "?",
        "suite": "profile",
        "started": when,
        "finished": "-",
        "status": "complete",
        "fingerprint": "-",
        "topology": {},
        "context": {},
        "argv": document["command"],
    }
    profile = {"id": None, "command": document["command"], "partial": document["partial"]}
    data = RunData(run, [], [{**profile, "document": document}])
    only = ("profile", "profile-against-machine")
    return _write(render_report(data, str(source), only=only), Path(path))


def _write(html: str, path: Path) -> Path:
    write_text_file(path, html, "the report")
    return path
