"""example.sum, the template benchmark: measured through the CLI, its parameters read from the
native table (pa-example-sum --params), bad input refused in one sentence."""

from __future__ import annotations

import json
import subprocess

import pytest

from perfatlas.benchmarks import get
from perfatlas.launch.native import executable
from perfatlas.store.database import Store


def native_rows() -> dict[str, dict]:
    proc = subprocess.run(
        [str(executable("pa-example-sum")), "--params"], capture_output=True, text=True, check=True
    )
    table = json.loads(proc.stdout)
    assert table["schema"] == "perfatlas.params/1" and table["program"] == "pa-example-sum"
    return {row["name"]: row for row in table["params"]}


def test_parameters_come_from_the_native_table():
    rows = native_rows()
    params = {p.name: p for p in get("example.sum").params}
    assert list(params) == list(rows) == ["bytes", "cpu", "samples", "min_sample_time"]
    for name, row in rows.items():
        assert params[name].help == row["help"]
        assert (params[name].minimum, params[name].maximum) == (row["min"], row["max"])
    assert params["bytes"].default == 2**20 and rows["bytes"]["default"] == "1MiB"
    assert params["samples"].default == 9 and params["min_sample_time"].default == 0.02


def test_measure_stores_a_checked_sum(cli, tmp_path):
    out = tmp_path / "sum.json"
    result = cli(
        "measure",
        "example.sum",
        "bytes=64KiB",
        "samples=3",
        "min_sample_time=1ms",
        "--json",
        str(out),
    )
    assert result.code == 0, result.err
    doc = json.loads(out.read_text())
    assert doc["benchmark"] == "example.sum" and doc["params"]["bytes"] == 65536
    n = 65536 // 8
    assert doc["derived"]["sum"] == (n // 1024) * 1023 * 1024 / 2  # the closed form
    store = Store(cli.db)
    [stored] = store.results(store.resolve_run("last"))
    assert stored.metric == "bandwidth_Bps" and stored.unit == "byte/s" and stored.n == 3
    assert stored.median > 0 and stored.params["cpu"] == 0


@pytest.mark.parametrize(
    "words, says",
    [
        (["bytes=1KiB"], "example.sum: bytes=1KiB is below the minimum 4 KiB"),
        (["samples=0"], "example.sum: samples=0 is below the minimum 1"),
        (["cpu=4096"], "4096"),
        (["width=3"], "example.sum has no parameter 'width'"),
    ],
)
def test_bad_parameters_are_one_sentence(cli, words, says):
    result = cli("measure", "example.sum", *words)
    assert result.code == 2 and says in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_native_bounds_hold_without_python(tmp_path):
    proc = subprocess.run(
        [str(executable("pa-example-sum")), "samples=2000000"], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "samples=2000000 is out of range" in proc.stderr
