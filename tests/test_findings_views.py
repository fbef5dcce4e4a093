"""The terminal's views that state a conclusion read it from the run's stored findings, as the
report's sections do (docs/guide/findings.md): the MPI anomaly table of the summary, the node
table and the interference matrix. Each test stores a run of synthetic documents with its
findings, alters or removes a stored finding, and checks that the terminal says what the stored
finding says (not what the analysis would conclude again from the results), and that the terminal
and the report say the same for the same run."""

from __future__ import annotations

import html as html_text
import io

import pytest
from rich.console import Console
from test_findings_sections import (
    alter,
    distance,
    matrix,
    n1_slow_instead_of_n3,
    section,
    slow_node_run,
    stored_run,
    to_rank_2,
)

from perfatlas.cluster import views_nodes as cluster_views
from perfatlas.comm.summary_comm import anomaly_table
from perfatlas.scenario import views_scenario as scenario_views
from perfatlas.store.run_data import RunData


def _wide() -> tuple[Console, io.StringIO]:
    """A console wide enough that no cell wraps, writing into a buffer."""
    buffer = io.StringIO()
    return Console(file=buffer, width=1000, color_system=None), buffer


def _flat(text: str) -> str:
    return " ".join(text.split())


def anomaly_text(store, run_id: int) -> str:
    """The summary's MPI anomaly table of the run, as the terminal prints it ('' for none)."""
    table = anomaly_table(RunData.load(store, run_id))
    if table is None:
        return ""
    console, buffer = _wide()
    console.print(table)
    return _flat(buffer.getvalue())


def printed(monkeypatch, module, show) -> str:
    """What a view of `module` prints on its console."""
    console, buffer = _wide()
    monkeypatch.setattr(module, "console", console)
    show()
    return _flat(buffer.getvalue())


def report_text(store, run_id: int, name: str) -> str:
    """A report section's text, markup unescaped, whitespace flattened."""
    return _flat(html_text.unescape(section(store, run_id, name)))


# -- MPI anomalies --------------------------------------------------------------------------------
def slow_rank_run(path):
    """Rank 0 to ranks 1-5, each on its own host; rank 4's link is slow."""
    return stored_run(path, [distance(p, 9000.0 if p == 4 else 2000.0) for p in range(1, 6)])


def test_the_anomaly_table_shows_the_stored_anomalies_not_its_own(tmp_path):
    """Rank 4's link is slow: the stored findings and the table say so; once the stored anomaly
    names rank 2 with another verdict (and the suspect host is gone), the table follows, although
    the analysis of the same results would still flag rank 4."""
    store, run_id = slow_rank_run(tmp_path)
    ids = {r.params["peer"]: r.id for r in store.results(run_id)}
    shown = anomaly_text(store, run_id)
    assert "1 anomalous figure(s) (1 worse than their group) among 5 figures in 1 group(s)" in shown
    assert "rank 4 in comm.distance latency_ns" in shown and "Suspect link" in shown

    alter(store, run_id, "comm.anomaly", lambda finding: to_rank_2(finding, ids[2]))
    alter(store, run_id, "comm.suspect_host", lambda finding: None)
    shown = anomaly_text(store, run_id)
    assert "among 99 figures" in shown and "planted verdict" in shown
    assert "rank 2 in comm.distance" in shown and "rank 4 in" not in shown
    assert "Suspect link" not in shown


def test_without_its_stored_anomaly_findings_the_table_shows_none(tmp_path):
    """The stored findings are the whole verdict: removed, the table has nothing to say, even
    though the results still hold rank 4's slow link."""
    store, run_id = slow_rank_run(tmp_path)
    for kind in ("comm.anomaly", "comm.suspect_host"):
        alter(store, run_id, kind, lambda finding: None)
    assert anomaly_text(store, run_id) == ""


def test_the_anomaly_table_and_the_report_say_the_same(tmp_path):
    store, run_id = slow_rank_run(tmp_path)
    alter(store, run_id, "comm.anomaly", lambda f: {**f, "verdict": "planted: the same verdict"})
    terminal, report = anomaly_text(store, run_id), report_text(store, run_id, "comm-patterns")
    for said in (
        "1 anomalous figure(s) (1 worse than their group) among 5 figures in 1 group(s).",
        "Suspect link: every figure involving host h4 is worse (host h4 in comm.distance",
        "planted: the same verdict",
        "not re-measured",
    ):
        assert said in terminal and said in report, said


@pytest.mark.parametrize("judged", [False, True])
def test_groups_not_judged_and_clean_groups_read_as_stored(tmp_path, judged):
    """np = 3: a group of two the rule does not judge; np = 6 without a slow link: no anomaly.
    The table says each as its stored finding does, and as the report does."""
    if judged:
        documents, kind = [distance(p, 2000.0) for p in range(1, 6)], "comm.no_anomaly"
    else:
        documents, kind = [distance(p, 2000.0, np_=3) for p in (1, 2)], "comm.not_judged"
    store, run_id = stored_run(tmp_path, documents)
    alter(store, run_id, kind, lambda finding: {**finding, "verdict": "planted word"})
    terminal, report = anomaly_text(store, run_id), report_text(store, run_id, "comm-patterns")
    said = "Planted word among 5 figures" if judged else "2 figure(s): planted word."
    assert said in terminal and said in report
    assert "not judged: fewer than" not in terminal and "No anomaly" not in terminal


# -- nodes ----------------------------------------------------------------------------------------
def nodes_text(monkeypatch, store, run_id: int) -> str:
    return printed(
        monkeypatch, cluster_views, lambda: cluster_views.print_nodes(RunData.load(store, run_id))
    )


def test_the_node_table_shows_the_stored_verdicts(tmp_path, monkeypatch):
    """n3 reads at half the others' bandwidth: flagged in the stored findings and the terminal;
    once its stored finding is made typical and n1's slow, the terminal names n1 alone."""
    store, run_id = slow_node_run(tmp_path)
    shown = nodes_text(monkeypatch, store, run_id)
    assert "Nodes that differ from the others: n3 in mem.bandwidth" in shown
    assert "SLOWER: -50 % vs the other nodes (not re-measured)" in shown

    alter(store, run_id, "cluster.node_slowdown", n1_slow_instead_of_n3)
    shown = nodes_text(monkeypatch, store, run_id)
    assert "Nodes that differ from the others: n1 in mem.bandwidth" in shown
    assert "n3 in mem.bandwidth" not in shown
    assert "planted: SLOWER" in shown and "planted: like the others" in shown
    assert "-50 % vs the other nodes" not in shown
    assert shown.count("Nodes that differ") == 1
    said = "Nodes that differ from the others: n1 in mem.bandwidth"
    assert said in report_text(store, run_id, "nodes")


def test_a_node_without_its_stored_finding_is_not_listed(tmp_path, monkeypatch):
    store, run_id = slow_node_run(tmp_path)
    alter(
        store,
        run_id,
        "cluster.node_slowdown",
        lambda f: None if f["details"]["host"] == "n3" else f,
    )
    shown = nodes_text(monkeypatch, store, run_id)
    assert " n1 " in shown and " n3 " not in shown and "differ" not in shown
    assert "No asymmetry between nodes in 1 group(s) of figures." in shown
    alter(store, run_id, "cluster.node_slowdown", lambda f: None)
    assert nodes_text(monkeypatch, store, run_id) == ""


def test_the_node_table_and_the_report_say_the_same(tmp_path, monkeypatch):
    store, run_id = slow_node_run(tmp_path)
    terminal, report = nodes_text(monkeypatch, store, run_id), report_text(store, run_id, "nodes")
    for finding in store.findings(run_id)["findings"]:
        if finding["kind"] == "cluster.node_slowdown":
            assert finding["verdict"] in terminal and finding["verdict"] in report
            slowdown = f"{finding['value']:.3f} [{finding['interval']['low']:.3f}, "
            assert slowdown in terminal and slowdown in report
    said = "Nodes that differ from the others: n3 in mem.bandwidth"
    assert said in terminal and said in report


# -- the interference matrix ----------------------------------------------------------------------
def matrix_text(monkeypatch, store, run_id: int) -> str:
    return printed(
        monkeypatch,
        scenario_views,
        lambda: scenario_views.print_matrix(RunData.load(store, run_id)),
    )


def test_the_terminal_matrix_shows_the_stored_cells(tmp_path, monkeypatch):
    verdicts = [["slower", "no measurable interference"], ["faster", "measurable, under 10%"]]
    store, run_id = stored_run(tmp_path, [], (matrix(verdicts),))
    assert "0.82 [0.80, 0.85] faster" in matrix_text(monkeypatch, store, run_id)

    def planted(finding: dict) -> dict:
        corner = (finding["details"]["row"], finding["details"]["column"]) == (1, 0)
        return {**finding, "verdict": "planted cell verdict"} if corner else finding

    alter(store, run_id, "scenario.interference", planted)
    shown = matrix_text(monkeypatch, store, run_id)
    assert "0.82 [0.80, 0.85] planted cell verdict" in shown and "faster" not in shown
    assert "1.50 [1.40, 1.60] slower" in shown  # the other cells as stored
    alter(
        store, run_id, "scenario.interference", lambda f: None if "planted" in f["verdict"] else f
    )
    assert "0.82" not in matrix_text(monkeypatch, store, run_id)  # no finding: '-'


def test_the_terminal_matrix_and_the_report_say_the_same(tmp_path, monkeypatch):
    verdicts = [["slower", "no measurable interference"], ["faster", "measurable, under 10%"]]
    store, run_id = stored_run(tmp_path, [], (matrix(verdicts),))
    alter(store, run_id, "scenario.interference", lambda f: {**f, "verdict": f"said {f['value']}"})
    terminal, report = (
        matrix_text(monkeypatch, store, run_id),
        report_text(store, run_id, "scenario"),
    )
    for cell in (
        "1.50 [1.40, 1.60] said 1.5",
        "1.00 [0.95, 1.05] said 1.0",
        "0.82 [0.80, 0.85] said 0.82",
        "1.03 [1.01, 1.06] said 1.03",
    ):
        assert cell in terminal and cell in report, cell
