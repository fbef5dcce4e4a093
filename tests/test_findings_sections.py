"""The report's sections that state a conclusion draw it from the run's findings
(perfatlas.findings, docs/guide/findings.md): the MPI patterns' anomalies and suspect hosts, the
nodes' verdicts and the interference matrix's cells. Each test stores a run of synthetic
documents with its findings, alters a stored finding, and checks that the report says what the
stored finding says, not what the analysis would conclude again from the results."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import numpy as np
from test_comm_analysis import ranks
from test_findings import SCHEMA

from perfatlas.comm import section_patterns
from perfatlas.findings.compute import store_findings
from perfatlas.report import render_report
from perfatlas.store.database import Store
from perfatlas.store.run_data import RunData

HOSTS = [f"h{i}" for i in range(6)]


def stored_run(
    path: Path, documents: list[dict], matrices: tuple[dict, ...] = (), topology: dict | None = None
) -> tuple[Store, int]:
    """A complete run of these documents (and interference matrices) on `topology`, its findings
    stored with it as `perfatlas run` stores them."""
    store = Store(path / "perfatlas.db")
    run_id = store.start_run(
        fingerprint="test", topology=topology or {}, context={}, suite=None, argv=[], software={}
    )
    for document in documents:
        store.add_document(run_id, document, [])
    for matrix in matrices:
        store.add_scenario(run_id, "matrix", "interference matrix", matrix, [])
    store.finish_run(run_id, "complete")
    store_findings(store, RunData.load(store, run_id))
    jsonschema.Draft202012Validator(SCHEMA).validate(store.findings(run_id))
    return store, run_id


def alter(store: Store, run_id: int, kind: str, change) -> None:
    """Rewrite the run's stored findings of one kind: change(finding dict) -> dict or None
    (dropped)."""
    document = store.findings(run_id)
    kept = []
    for finding in document["findings"]:
        changed = change(finding) if finding["kind"] == kind else finding
        if changed is not None:
            kept.append(changed)
    store.set_findings(run_id, {**document, "findings": kept})


def section(store: Store, run_id: int, name: str) -> str:
    return render_report(RunData.load(store, run_id), only=(name,))


def samples(median: float, seed: int, n: int = 9) -> list[float]:
    return list(median * (1 + 0.005 * np.random.default_rng(seed).standard_normal(n)))


# -- MPI patterns ---------------------------------------------------------------------------------
def distance(peer: int, median_ns: float, np_: int = 6) -> dict:
    """Rank 0 to `peer`, each rank on its own host."""
    return {
        "schema": "perfatlas.result/1",
        "benchmark": "comm.distance",
        "params": {"np": np_, "peer": peer, "latency_bytes": 8, "bandwidth_bytes": 65536},
        "samples": {"latency_ns": samples(median_ns, peer)},
        "units": {"latency_ns": "ns"},
        "placement": {"ranks": ranks(HOSTS[:np_]), "link": "inter-node", "involved": [0, peer]},
    }


def to_rank_2(finding: dict, result_id: int) -> dict:
    """The stored anomaly of rank 4 rewritten to name rank 2 (its result `result_id`), with a
    planted verdict and a planted count of figures checked."""
    finding["subject"] = finding["subject"].replace("rank 4", "rank 2")
    finding["sources"]["results"] = [result_id]
    finding["verdict"] = "planted verdict"
    finding["details"]["figures_checked"] = 99
    return finding


def test_the_patterns_section_shows_the_stored_anomalies_not_its_own(tmp_path, monkeypatch):
    """Rank 4's link is slow: the stored findings say so and the section follows them; once the
    stored anomaly names rank 2 instead (and the suspect host is gone), the section flags rank
    2's point, lists rank 2 with the stored verdict and names no suspect, although the analysis
    of the same results would still say rank 4."""
    store, run_id = stored_run(
        tmp_path, [distance(p, 9000.0 if p == 4 else 2000.0) for p in range(1, 6)]
    )
    ids = {r.params["peer"]: r.id for r in store.results(run_id)}
    flagged: list[set[int]] = []
    drawn = section_patterns._points_figure

    def recorded(name, data, benchmark, marked, title):
        flagged.append(set(marked))
        return drawn(name, data, benchmark, marked, title)

    monkeypatch.setattr(section_patterns, "_points_figure", recorded)
    html = section(store, run_id, "comm-patterns")
    assert flagged == [{ids[4]}]
    assert "1 anomalous figure(s) (1 worse than their group) among 5 figures in 1 group(s)" in html
    assert "rank 4 in comm.distance latency_ns" in html and "Suspect link" in html

    alter(store, run_id, "comm.anomaly", lambda finding: to_rank_2(finding, ids[2]))
    alter(store, run_id, "comm.suspect_host", lambda finding: None)
    flagged.clear()
    html = section(store, run_id, "comm-patterns")
    assert flagged == [{ids[2]}]
    assert "among 99 figures" in html and "planted verdict" in html
    assert "rank 2 in comm.distance" in html and "rank 4 in" not in html
    assert "Suspect link" not in html


def test_groups_too_small_to_judge_are_findings_and_the_section_says_them(tmp_path):
    """np = 3: two peers, a group the rule does not judge; the finding says so and the section
    shows it as stored."""
    store, run_id = stored_run(tmp_path, [distance(p, 2000.0, np_=3) for p in (1, 2)])
    (unjudged,) = [f for f in store.findings(run_id)["findings"] if f["kind"] == "comm.not_judged"]
    assert unjudged["value"] == 2 and unjudged["verdict"].startswith("not judged")
    assert sorted(unjudged["sources"]["results"]) == sorted(r.id for r in store.results(run_id))
    html = section(store, run_id, "comm-patterns")
    assert "2 figure(s): not judged: fewer than 3 comparable figures" in html

    def planted(finding: dict) -> dict:
        return {**finding, "verdict": "planted: not judged"}

    alter(store, run_id, "comm.not_judged", planted)
    assert "2 figure(s): planted: not judged" in section(store, run_id, "comm-patterns")


# -- nodes ----------------------------------------------------------------------------------------
def bandwidth_on(host: str, median: float, seed: int) -> dict:
    return {
        "schema": "perfatlas.result/1",
        "benchmark": "mem.bandwidth",
        "params": {"op": "read", "bytes": 1 << 28, "threads": 1, "host": host},
        "samples": {"bandwidth_Bps": samples(median, seed)},
        "units": {"bandwidth_Bps": "byte/s"},
    }


def slow_node_run(path: Path) -> tuple[Store, int]:
    """Four nodes, n3 reading at half the others' bandwidth."""
    return stored_run(
        path, [bandwidth_on(f"n{i}", 5e9 if i == 3 else 10e9, i) for i in range(1, 5)]
    )


def n1_slow_instead_of_n3(finding: dict) -> dict:
    """A change for alter(): n3's stored node finding made typical and n1's slow, planted."""
    host = finding["details"]["host"]
    if host == "n3":
        return {**finding, "verdict": "planted: like the others", "severity": "info"}
    if host == "n1":
        return {**finding, "verdict": "planted: SLOWER", "severity": "warning"}
    return finding


def test_the_nodes_section_shows_the_stored_verdicts(tmp_path):
    """n3 reads at half the others' bandwidth: flagged in the stored findings and the section;
    once its stored finding is made typical and n1's slow, the section names n1 alone."""
    store, run_id = slow_node_run(tmp_path)
    html = section(store, run_id, "nodes")
    assert "Nodes that differ from the others: n3 in mem.bandwidth" in html
    assert "SLOWER: -50 % vs the other nodes (not re-measured)" in html
    assert "10 GB/s [" in html  # a node's own figure with its interval, from the finding

    alter(store, run_id, "cluster.node_slowdown", n1_slow_instead_of_n3)
    html = section(store, run_id, "nodes")
    assert "Nodes that differ from the others: n1 in mem.bandwidth" in html
    assert "n3 in mem.bandwidth" not in html
    assert "planted: SLOWER" in html and "planted: like the others" in html
    assert "-50 % vs the other nodes" not in html


# -- the interference matrix ----------------------------------------------------------------------
def matrix(verdicts: list[list[str]]) -> dict:
    """A 2 x 2 interference matrix as `perfatlas scenario matrix` stores it."""
    return {
        "classes": ["stream", "compute"],
        "kernels": {"stream": "triad", "compute": "dgemm"},
        "bytes": 240_000,
        "cpu_list": "0,1",
        "rounds": 5,
        "alone_s": {"stream": 0.1, "compute": 0.2},
        "slowdown": [[1.5, 1.0], [0.82, 1.03]],
        "slowdown_ci": [[[1.4, 1.6], [0.95, 1.05]], [[0.8, 0.85], [1.01, 1.06]]],
        "verdicts": verdicts,
    }


def test_the_matrix_cells_show_the_stored_verdicts(tmp_path):
    verdicts = [["slower", "no measurable interference"], ["faster", "measurable, under 10%"]]
    store, run_id = stored_run(tmp_path, [], (matrix(verdicts),))
    cells = [f for f in store.findings(run_id)["findings"] if f["kind"] == "scenario.interference"]
    assert [(f["details"]["row"], f["details"]["column"]) for f in cells] == [
        (0, 0), (0, 1), (1, 0), (1, 1),
    ]  # fmt: skip
    assert "0.82 [0.80, 0.85] faster" in section(store, run_id, "scenario")

    def planted(finding: dict) -> dict:
        corner = (finding["details"]["row"], finding["details"]["column"]) == (1, 0)
        return {**finding, "verdict": "planted cell verdict"} if corner else finding

    alter(store, run_id, "scenario.interference", planted)
    html = section(store, run_id, "scenario")
    assert "0.82 [0.80, 0.85] planted cell verdict" in html and "faster" not in html
    assert "1.50 [1.40, 1.60] slower" in html  # the other cells as stored


def test_cells_of_findings_stored_before_they_named_their_cell_are_read_in_row_order(tmp_path):
    store, run_id = stored_run(tmp_path, [], (matrix([["a", "b"], ["c", "d"]]),))
    alter(store, run_id, "scenario.interference", lambda f: {**f, "details": {}})
    html = section(store, run_id, "scenario")
    for cell in ("1.50 [1.40, 1.60] a", "1.00 [0.95, 1.05] b", "0.82 [0.80, 0.85] c"):
        assert cell in html
