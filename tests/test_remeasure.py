"""Re-measurement of tripped figures (perfatlas.run.remeasure_anomalies): on by default for the commands that
measure through the runner (run, measure, sweep), off with --no-remeasure, and the run says
which in its context."""

from __future__ import annotations

import pytest
from test_comm import FAST

import perfatlas.benchmarks.benchmark
import perfatlas.run.remeasure_anomalies
import perfatlas.run.runner
from perfatlas.common.errors import UserError
from perfatlas.report import render_report
from perfatlas.store.database import Store
from perfatlas.store.run_data import RunData

SUITE = """
description = "one cheap step"

[[step]]
benchmark = "example.sum"
bytes = "64KiB"
samples = 3
"""


@pytest.fixture
def built(monkeypatch) -> list[bool]:
    """The `remeasure` of every Runner the command builds; each stops at its check, before a
    run is opened (nothing is measured)."""
    seen: list[bool] = []

    class Recorded(perfatlas.run.runner.Runner):
        def check(self, measurements):
            seen.append(self.remeasure)
            raise UserError("stopped by the test")

    monkeypatch.setattr(perfatlas.run.runner, "Runner", Recorded)
    return seen


@pytest.mark.parametrize(
    "command",
    [
        ["run", "{suite}"],
        ["measure", "example.sum", "bytes=64KiB"],
        ["sweep", "mem.bandwidth", "op=read", "bytes=64KiB", "--threads", "1"],
    ],
)
def test_the_commands_build_the_runner_with_remeasurement_unless_told_not_to(
    cli, tmp_path, built, command
):
    suite = tmp_path / "one.toml"
    suite.write_text(SUITE)
    words = [w.format(suite=suite) for w in command]
    for extra, expected in (([], True), (["--no-remeasure"], False)):
        said = cli(*words, *extra)
        assert said.code == 2 and "stopped by the test" in said.err
        assert built.pop() is expected


def test_no_remeasure_launches_a_tripped_pattern_once_and_the_run_says_so(cli, monkeypatch):
    """Every comm.distance figure made to trip the rule: by default its measurement launches
    twice (the second stored as its re-measurement); with --no-remeasure once, and the run's
    context records that re-measurement was off."""
    monkeypatch.setattr(perfatlas.run.remeasure_anomalies, "tripped", lambda results: results)
    launches: list[str] = []
    prepare = perfatlas.benchmarks.benchmark.prepare_launch

    def counted(benchmark, *args, **kwargs):
        launches.append(benchmark.name)
        return prepare(benchmark, *args, **kwargs)

    monkeypatch.setattr(perfatlas.benchmarks.benchmark, "prepare_launch", counted)
    measure = ["measure", "comm.distance", "np=3", "bandwidth_bytes=16KiB", *FAST]
    for extra, count, remeasure in (([], 2, True), (["--no-remeasure"], 1, False)):
        launches.clear()
        said = cli(*measure, *extra)
        assert said.code == 0, said.err
        assert launches == ["comm.distance"] * count
        store = Store(cli.db, read_only=True)
        run_id = store.resolve_run("last")
        again = [d for d in store.result_documents(run_id) if d.get("remeasure")]
        assert bool(again) is remeasure
        assert store.run(run_id)["context"]["remeasure"] is remeasure
        machine = render_report(RunData.load(store, run_id), only=("machine",))
        assert ("were not measured again" in machine) is not remeasure
