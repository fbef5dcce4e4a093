"""A run's findings: computed from its stored results by every registered source, or read back as
stored with the run.

Every analysis is a pure function of the stored raw samples (bootstraps are seeded), so the same
results give the same findings: a run stored before findings were (schema version 5 and older),
or imported from a compute node, has them recomputed when it is shown, exported or reported
(`origin: recomputed`), and nothing is written back by a read.
"""

from __future__ import annotations

from dataclasses import dataclass

from perfatlas import __version__
from perfatlas.findings.finding_sources import all_sources
from perfatlas.findings.model import Finding
from perfatlas.store.database import Store
from perfatlas.store.result import Result
from perfatlas.store.run_data import RunData

SCHEMA = "perfatlas.findings/1"


def compute_findings(data: RunData) -> list[Finding]:
    """Every source's findings about the run, in source order."""
    found: list[Finding] = []
    for source in all_sources():
        made = source.build(data)
        for finding in made:
            if finding.kind not in source.kinds:
                raise ValueError(
                    f"finding source '{source.name}' made a finding of kind '{finding.kind}', "
                    "which it does not declare (finding_source kinds)"
                )
        found += made
    return found


@dataclass(frozen=True)
class RunFindings:
    run_id: int
    origin: str  # stored (computed when the run ended) or recomputed (now, from its results)
    computed_by: str  # the perfatlas version that computed them
    findings: list[Finding]

    def of_results(self, kind: str) -> dict[int, Finding]:
        """The findings of one kind by the first result they come from (a PU's noise slowdown
        by its result's id)."""
        return {
            f.sources.results[0]: f for f in self.findings if f.kind == kind and f.sources.results
        }

    def of_result(self, kind: str, result: Result | None) -> Finding | None:
        """The finding of one kind that comes first from `result` (a peak bandwidth, a ping-pong
        headline figure); None without the result or the finding."""
        return None if result is None else self.of_results(kind).get(result.id)

    def of_sources(self, kind: str) -> dict[tuple[int, ...], Finding]:
        """The findings of one kind by all the results they come from (a contention ratio by its
        alone and loaded results, as from_results orders them)."""
        return {f.sources.results: f for f in self.findings if f.kind == kind}

    def document(self) -> dict:
        """The perfatlas.findings/1 document (findings.schema.json)."""
        return {
            "schema": SCHEMA,
            "run_id": self.run_id,
            "origin": self.origin,
            "computed_by": self.computed_by,
            "findings": [f.as_dict() for f in self.findings],
        }


def store_findings(store: Store, data: RunData) -> RunFindings:
    """Compute the run's findings and store them with it (replacing any stored before); `data`
    keeps them, as read back from the store."""
    run_id = int(data.run["id"])
    found = RunFindings(run_id, "stored", f"perfatlas {__version__}", compute_findings(data))
    store.set_findings(run_id, found.document())
    data.stored_findings = found.document()
    data.memo["findings"] = found
    return found


def run_findings(data: RunData) -> RunFindings:
    """The findings stored with the run, or, where it has none, recomputed from its results;
    once per RunData (the report's sections that state a conclusion take it from here)."""
    if "findings" not in data.memo:
        data.memo["findings"] = _run_findings(data)
    return data.memo["findings"]


def _run_findings(data: RunData) -> RunFindings:
    run_id = int(data.run["id"])
    stored = data.stored_findings
    if stored is not None:
        return RunFindings(
            run_id,
            "stored",
            str(stored.get("computed_by", "?")),
            [Finding.from_dict(f) for f in stored.get("findings", [])],
        )
    return RunFindings(run_id, "recomputed", f"perfatlas {__version__}", compute_findings(data))
