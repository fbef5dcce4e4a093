"""The HTML report of a run: ONE self-contained file (inline CSS, inline SVG plots, no URL).

Sections are registered by the section_*.py modules of the domain packages and of report/ (one
module each, see registry.py); a section with nothing to show in this run is left out, so a
`perfatlas measure` run gives a short report.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import jinja2

from perfatlas import __version__
from perfatlas.report.blocks import Block
from perfatlas.report.data import Comparison, RunData
from perfatlas.report.registry import all_sections
from perfatlas.store import Store
from perfatlas.text_file import write_text_file

__all__ = ["write_report", "write_profile_report", "write_comparison_report", "render_report"]


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


def render_report(data: RunData, store_path: str = "", only: Collection[str] = ()) -> str:
    """The report of `data`: every section with something to show (only those named in `only`)."""
    sections = []
    for spec in all_sections():
        if only and spec.name not in only:
            continue
        blocks = spec.build(data)
        if blocks:
            sections.append(RenderedSection(spec.name, spec.title, blocks))
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            run=data.run,
            sections=sections,
            css=_template_text("report.css"),
            version=__version__,
            written=datetime.now(UTC).isoformat(timespec="seconds"),
            store=store_path,
        )
    )


def write_report(store: Store, run_id: int, path: str | Path) -> Path:
    """Write the report of run `run_id` to `path` (one HTML file) and return the path."""
    return _write(render_report(RunData.load(store, run_id), str(store.path)), Path(path))


def write_comparison_report(
    store: Store, run_a: int, run_b: int, expect: float | None, path: str | Path
) -> Path:
    """The comparison of run B against run A (perfatlas compare --report)."""
    data = RunData.load(store, run_b)
    data.comparison = Comparison(store.run(run_a), store.results(run_a), expect)
    return _write(render_report(data, str(store.path), only=("comparison",)), Path(path))


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
    return _write(render_report(data, str(source), only=("profile",)), Path(path))


def _write(html: str, path: Path) -> Path:
    write_text_file(path, html, "the report")
    return path
