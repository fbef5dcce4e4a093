"""One result model, read once per command (perfatlas.store.run_data.RunData): after `run` and
`measure` the findings, the terminal's tables and the report share the one read-back the runner
made when the run completed; `show`, `report`, `export` and `compare` read each run once."""

from __future__ import annotations

import pytest
from test_plan import TINY

from perfatlas.store.database import Store


@pytest.fixture
def reads(monkeypatch) -> list[int]:
    """The run ids whose results are read back from the store (Store.results), in order."""
    seen: list[int] = []
    original = Store.results

    def counted(self, run_id, *args, **kwargs):
        seen.append(run_id)
        return original(self, run_id, *args, **kwargs)

    monkeypatch.setattr(Store, "results", counted)
    return seen


def test_a_run_reads_its_results_back_once(cli, tmp_path, reads):
    suite = tmp_path / "small.toml"
    suite.write_text(TINY)  # memory levels, noise, and a sweep step
    said = cli("run", str(suite), "--out", str(tmp_path / "out"), "--llc", "hwloc")
    assert said.code == 0, said.err
    assert len(list((tmp_path / "out").glob("run-*.html"))) == 1
    assert "findings" in said.out  # the summary's findings line, from the same read-back
    assert reads == [1]


def test_measure_reads_its_results_back_once(cli, reads):
    said = cli("measure", "example.sum", "bytes=64KiB", "samples=3")
    assert said.code == 0, said.err
    assert reads == [1]


def test_each_reading_command_reads_a_run_once(cli, tmp_path, reads):
    assert cli("measure", "example.sum", "bytes=64KiB", "samples=3").code == 0
    assert cli("measure", "example.sum", "bytes=64KiB", "samples=3").code == 0
    reads.clear()
    for command in (
        ("show", "1"),
        ("show", "1", "--json"),
        ("report", "1", "-o", str(tmp_path / "r.html")),
        ("export", "1"),
        ("export", "1", "--format", "findings-csv"),
    ):
        said = cli(*command)
        assert said.code == 0, (command, said.err)
        assert reads == [1], command
        reads.clear()
    said = cli("compare", "1", "2", "--report", str(tmp_path / "c.html"))
    assert said.code == 0, said.err
    assert sorted(reads) == [1, 2]
