"""A size series streams: the native launch writes each point's document as soon as it is
measured, perfatlas stores it then (docs/contract.md, Series), and a launch that dies part-way
keeps the points before it."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from perfatlas.benchmarks import get
from perfatlas.common.units import parse_size_series
from perfatlas.launch.document_stream import DocumentStream
from perfatlas.launch.launchers import Launch, get_launcher
from perfatlas.launch.native import executable, run_launch
from perfatlas.machine.topology import Machine
from perfatlas.plan.planned import Planned
from perfatlas.run.executor import get_executor
from perfatlas.run.runner import Runner
from perfatlas.run.series_points import SeriesPoints
from perfatlas.store.database import Store

FAST = ["samples=3", "min_sample_time=1ms"]
FAST_RAW = {"samples": "3", "min_sample_time": "1ms"}
SLOW_SERIES = "4KiB..64MiB/2"  # 29 points of at least 20 x 20 ms each: seconds to kill it in


def _stored(db: Path) -> tuple[str, int]:
    with sqlite3.connect(db) as connection:
        status = connection.execute("SELECT status FROM runs").fetchone()[0]
        return status, connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]


def _count(db: Path) -> int:
    try:
        with sqlite3.connect(db) as connection:
            return connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def _state(pid: int) -> str:
    """R, S, Z...: the process state in /proc (Z: it has exited, not yet waited for)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _parent_and_name(process: Path) -> tuple[int, str] | None:
    """The parent pid and the command name (at most 15 characters) of a process, from
    /proc/PID/stat, which a zombie keeps (its cmdline reads empty); None: it is gone."""
    try:
        head, tail = process.joinpath("stat").read_text().rsplit(")", 1)
        return int(tail.split()[1]), head.split("(", 1)[1]
    except (OSError, IndexError, ValueError):
        return None


def _native_child(pid: int, name: str) -> int:
    """The one child of process `pid` that runs the native executable `name`, running or exited
    and not yet waited for (a zombie: the last document can arrive after the exit). Found by
    the parent pid and command name of every process (/proc/PID/stat): a zombie's cmdline is
    empty, and /proc/PID/task/TID/children is documented as unreliable unless the children are
    stopped."""
    command = executable(name).name[:15]  # the kernel's TASK_COMM_LEN - 1
    seen = {p.name: _parent_and_name(p) for p in Path("/proc").iterdir() if p.name.isdigit()}
    (child,) = [int(number) for number, found in seen.items() if found == (pid, command)]
    return child


def test_the_documents_of_a_native_series_reach_the_reader_while_it_runs():
    """Each point is flushed as it completes: the first arrives while the process still runs."""
    seen = []

    def arrived(document: dict) -> None:
        child = _native_child(os.getpid(), "pa-mem-latency")
        seen.append((document["params"]["bytes"], _state(child)))

    sizes = [4096, 64 * 2**20]
    launch = Launch(
        "local",
        [str(executable("pa-mem-latency")), "bytes=4096,64MiB", "samples=3"],
        env={},
    )
    documents = run_launch(launch, "pa-mem-latency", get_launcher("local"), arrived)
    assert [d["params"]["bytes"] for d in documents] == sizes
    assert [size for size, _ in seen] == sizes
    assert seen[0][1] != "Z"  # the 64 MiB point was still to be measured


def test_the_stream_cuts_real_native_output_into_the_documents_json_loads_gives(tmp_path):
    out = tmp_path / "series.json"
    subprocess.run(
        [str(executable("pa-mem-latency")), "bytes=4KiB,8KiB,16KiB", "cpus=0", f"json={out}"]
        + FAST,
        check=True,
    )
    text = out.read_text()
    whole = json.loads(text)  # the file is still one valid JSON list
    assert isinstance(whole, list) and len(whole) == 3
    for piece in (1, 7, 4096, len(text)):
        stream = DocumentStream()
        found = []
        for start in range(0, len(text), piece):
            found += stream.feed(text[start : start + piece])
        assert found == whole
    single = DocumentStream()  # one document, no list: nothing until the output ends
    assert single.feed(json.dumps(whole[0])) == []
    assert single.is_list is False


def test_a_series_killed_part_way_keeps_its_earlier_points_and_names_the_point(tmp_path):
    db = tmp_path / "p.db"
    process = subprocess.Popen(
        [sys.executable, "-m", "perfatlas", "--db", str(db), "measure", "mem.latency"]
        + [f"bytes={SLOW_SERIES}", "samples=20", "min_sample_time=20ms"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while _count(db) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    assert process.poll() is None, process.stderr.read()
    os.kill(_native_child(process.pid, "pa-mem-latency"), signal.SIGKILL)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("perfatlas: mem.latency stopped at point ")
    assert "killed by SIGKILL" in lines[0]
    status, kept = _stored(db)
    points = len(parse_size_series(SLOW_SERIES))
    assert status == "failed" and 2 <= kept < points
    assert f"point {kept + 1} of {points} " in lines[0]
    assert f"the {kept} results before it are stored" in lines[0]


def test_sigterm_to_a_measure_of_a_series_keeps_its_points_and_json_stays_valid(tmp_path):
    """perfatlas measure --json FILE: a finished series writes one valid list of its points;
    an interrupted one keeps its stored points and leaves no half-written list."""
    db, out = tmp_path / "p.db", tmp_path / "series.json"
    done = subprocess.run(
        [sys.executable, "-m", "perfatlas", "--db", str(db), "measure", "mem.latency"]
        + ["bytes=4KiB,8KiB,16KiB", *FAST, "--json", str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    written = json.loads(out.read_text())
    assert [d["params"]["bytes"] for d in written] == [4096, 8192, 16384]
    assert _stored(db) == ("complete", 3)

    db2, out2 = tmp_path / "q.db", tmp_path / "interrupted.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "perfatlas", "--db", str(db2), "measure", "mem.latency"]
        + [f"bytes={SLOW_SERIES}", "samples=20", "min_sample_time=20ms", "--json", str(out2)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while _count(db2) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    assert process.poll() is None, process.stderr.read().decode()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 130
    status, kept = _stored(db2)
    assert status == "interrupted" and 2 <= kept < len(parse_size_series(SLOW_SERIES))
    assert out2.read_text() == ""  # created before measuring (unwritable: said at once), no list


def test_repeat_pools_each_point_of_a_series_over_every_launch(cli):
    result = cli("measure", "mem.latency", "bytes=4KiB,8KiB", *FAST, "--repeat", "3")
    assert result.code == 0, result.err
    with sqlite3.connect(cli.db) as connection:
        rows = connection.execute("SELECT document FROM results ORDER BY id").fetchall()
    documents = [json.loads(row[0]) for row in rows]
    assert [d["params"]["bytes"] for d in documents] == [4096, 8192]
    for document in documents:
        assert document["derived"]["launches"] == 3
        assert len(document["samples"]["latency_ns"]) == 9


def test_each_point_of_every_launch_advances_the_progress_once_as_it_is_stored(tmp_path):
    machine = Machine.detect()
    benchmark = get("mem.latency")
    params = benchmark.resolve({"bytes": "4KiB,8KiB,16KiB", **FAST_RAW}, machine)
    runner = Runner(Store(tmp_path / "p.db"), machine)
    advanced = []
    with runner.run(None, ["test"]):
        into = runner._into
        stored = get_executor("local")._measure(
            into, Planned(benchmark, params), 2, advanced.append
        )
    assert advanced == [1] * 6  # three points, twice: one step each
    assert [d["derived"]["launches"] for d in stored] == [2, 2, 2]
    assert len(into.store.results(into.run_id)) == 3


def test_a_launch_that_stops_inside_a_point_of_two_documents_names_that_point(tmp_path):
    """The two-thread method writes two documents per point: one of a point's two is no whole
    point, both are."""
    machine = Machine.detect()
    benchmark = get("mem.latency")
    params = benchmark.resolve({"bytes": "4KiB,8KiB,16KiB", "cpus": "0,1", **FAST_RAW}, machine)
    documents = benchmark.run(params, machine)
    assert len(documents) == 6
    points = SeriesPoints(benchmark, params)
    assert points.failed_at() == 0
    assert [points.arrived(d) for d in documents[:3]] == [0, 0, 1]
    assert points.failed_at() == 1 and points.label(1) == "point 2 of 3 (bytes=8 KiB)"
    points.arrived(documents[3])
    assert points.failed_at() == 2


@pytest.mark.parametrize(
    "text",
    [
        '[{"a": 1},\n {"b": [1, 2]}]\n',
        '{"a": 1}',
        "[ ]\n",
        '[{"a": 1}, {"b": 2}',  # cut off before the closing bracket
        '[{"a": 1}]x',  # extra data
        '[{"a": 1} {"b": 2}]',  # the comma between elements missing
        '[{"a": 1},]',  # a trailing comma
        '[{"a": 1}, {"b":',  # an element cut off
        "",
    ],
)
def test_the_stream_accepts_and_refuses_exactly_what_json_loads_does(text):
    for piece in (1, 3, len(text) or 1):
        stream = DocumentStream()
        found = [
            e
            for start in range(0, len(text), piece)
            for e in stream.feed(text[start : start + piece])
        ]
        try:
            expected = json.loads(text)
        except json.JSONDecodeError:
            with pytest.raises(json.JSONDecodeError):
                stream.finish()
            continue
        rest = stream.finish()
        assert (found + rest if stream.is_list else rest) == expected
