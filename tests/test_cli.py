"""The command line: measuring, storing, showing, exporting, and bad input."""

import csv
import io
import json
import sqlite3

import pytest

FAST = ["samples=3", "min_sample_time=1ms"]


def count_results(db) -> int:
    return sqlite3.connect(db).execute("SELECT COUNT(*) FROM results").fetchone()[0]


def test_measure_stores_the_result_and_writes_the_contract_document(cli, tmp_path, read_json):
    out = tmp_path / "r.json"
    result = cli("measure", "mem.latency", "bytes=64KiB", *FAST, "--json", str(out))
    assert result.code == 0, result.err
    doc = read_json(out)
    assert doc["schema"] == "perfatlas.result/1" and doc["benchmark"] == "mem.latency"
    assert doc["params"]["bytes"] == 65536 and len(doc["samples"]["latency_ns"]) == 3
    assert count_results(cli.db) == 1
    shown = cli("show", "last")
    assert shown.code == 0 and "mem.latency" in shown.out and "complete" in shown.out


def test_remote_numa_on_a_one_node_machine_is_stored_as_not_measurable(cli, read_json, tmp_path):
    from perfatlas.machine.topology import Machine

    if len(Machine.detect().numa_nodes) > 1:
        pytest.skip("this machine has a remote NUMA node")
    out = tmp_path / "r.json"
    result = cli("measure", "mem.latency", "node=remote", "bytes=1MiB", *FAST, "--json", str(out))
    assert result.code == 0
    assert "not measurable here" in read_json(out)["not_measurable"]
    assert "not measurable here" in result.out


def test_repeat_pools_the_samples_of_independent_launches(cli, tmp_path, read_json):
    out = tmp_path / "r.json"
    result = cli(
        "measure",
        "mem.bandwidth",
        "op=copy",
        "bytes=64KiB",
        *FAST,
        "--repeat",
        "2",
        "--json",
        str(out),
    )
    assert result.code == 0, result.err
    doc = read_json(out)
    assert len(doc["samples"]["bandwidth_Bps"]) == 6 and doc["derived"]["launches"] == 2


@pytest.mark.parametrize(
    "args, message",
    [
        (["measure", "mem.nothing"], "unknown benchmark 'mem.nothing'"),
        (["measure", "mem.latency", "colour=blue"], "has no parameter 'colour'"),
        (["measure", "mem.latency", "bytes"], "not a key=value parameter"),
        (["measure", "mem.latency", "bytes=64GiB"], "does not fit"),
        (["measure", "mem.latency", "bytes=1KiB"], "below the minimum"),
        (["measure", "mem.latency", "chain=zigzag"], "not one of page, random"),
        (["measure", "mem.bandwidth", "threads=4096"], "exceeds the"),
        (["measure", "mem.latency", "cpus=999"], "cpu 999 does not exist"),
        (["measure", "mem.latency", "node=7"], "NUMA node 7 does not exist"),
        (["measure", "mem.bandwidth", "op=read", "store=nt", *FAST], "read"),
        (["measure", "mem.bandwidth", "op=spin", *FAST], "spin"),
        (["run", "nosuchsuite"], "unknown suite 'nosuchsuite'"),
        (["show", "17"], "run 17 is not in"),
        (["compare", "1", "2"], "no runs|not in"),
    ],
)
def test_bad_input_is_one_sentence_and_loses_nothing(cli, args, message):
    assert cli("measure", "mem.latency", "bytes=64KiB", *FAST).code == 0
    before = count_results(cli.db)
    result = cli(*args)
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("perfatlas: "), result.err
    assert __import__("re").search(message, lines[0]), lines[0]
    assert count_results(cli.db) == before


def test_an_unwritable_database_fails_before_measuring(cli, tmp_path):
    result = cli("measure", "mem.latency", *FAST, db_path=tmp_path / "no" / "such" / "dir.db")
    assert result.code == 2 and "cannot use database" in result.err


def test_export_json_and_csv_carry_every_sample(cli, tmp_path):
    assert cli("measure", "mem.bandwidth", "op=triad", "bytes=96KiB", *FAST).code == 0
    exported = cli("export", "last", "--format", "json")
    data = json.loads(exported.out)
    (result,) = data["results"]
    assert data["run"]["status"] == "complete" and len(result["samples"]) == 3
    rows = list(csv.DictReader(io.StringIO(cli("export", "last", "--format", "csv").out)))
    assert len(rows) == 1 and rows[0]["metric"] == "bandwidth_Bps"
    assert [float(s) for s in rows[0]["samples"].split()] == result["samples"]


def test_compare_reports_ratios_for_matching_results(cli):
    for _ in range(2):
        assert (
            cli("measure", "mem.latency", "bytes=64KiB", "samples=7", "min_sample_time=1ms").code
            == 0
        )
    result = cli("compare", "1", "2")
    assert result.code == 0 and "ratio" in result.out and "mem.latency" in result.out


def test_list_names_suites_benchmarks_parameters_and_kernels(cli):
    result = cli("list")
    assert result.code == 0
    for word in (
        "quick",
        "mem.latency",
        "mem.bandwidth",
        "mem.contention",
        "chain",
        "triad",
        "min_sample_time",
    ):
        assert word in result.out


def test_topo_and_doctor_describe_this_machine(cli):
    topo = cli("topo", "--json")
    assert topo.code == 0 and json.loads(topo.out)["schema"] == "perfatlas.topology/1"
    doctor = cli("doctor")
    assert doctor.code == 0
    for check in ("NUMA", "hardware counters", "huge pages", "timer", "MPI"):
        assert check in doctor.out


def test_a_crashing_native_executable_is_one_sentence(cli, tmp_path, monkeypatch):
    """A kernel killed by a signal: one sentence naming it; earlier results stay stored."""
    from perfatlas.launch.native import bin_dir

    assert cli("measure", "mem.latency", "bytes=64KiB", *FAST).code == 0
    fake = tmp_path / "bin"
    fake.mkdir()
    for exe in bin_dir().iterdir():
        (fake / exe.name).symlink_to(exe)
    (fake / "pa-mem-latency").unlink()
    real = bin_dir() / "pa-mem-latency"  # its parameters still answered (--params)
    (fake / "pa-mem-latency").write_text(
        f'#!/bin/sh\n[ "$1" = --params ] && exec {real} --params\nkill -SEGV $$\n'
    )
    (fake / "pa-mem-latency").chmod(0o755)
    monkeypatch.setenv("PERFATLAS_BIN_DIR", str(fake))
    result = cli("measure", "mem.latency", "bytes=64KiB", *FAST)
    assert result.code == 2
    assert "pa-mem-latency was killed by SIGSEGV" in result.err
    assert count_results(cli.db) == 1


def test_db_may_come_before_or_after_the_command(cli, tmp_path):
    """`perfatlas --db A measure ...` and `perfatlas measure ... --db B` (as `make run` writes it)."""
    before, after = tmp_path / "before.db", tmp_path / "after.db"
    assert cli("measure", "mem.latency", "bytes=64KiB", *FAST, db_path=before).code == 0
    assert cli("measure", "mem.latency", "bytes=64KiB", *FAST, "--db", str(after)).code == 0
    assert count_results(before) == 1 and count_results(after) == 1
    assert cli("show", "--db", str(after), "last").code == 0
