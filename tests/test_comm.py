"""The MPI benchmarks (native/comm) run for real under mpirun, np = 2 and np = 4 (oversubscribed on
a small machine): document shape, one result per size, placement read back per rank, exact byte
counts, patterns, collectives, verified one-sided access, the report and the summary."""

from __future__ import annotations

import contextlib
import io
import json
import re
import socket
import sqlite3

import pytest

from perfatlas.cli.entry import main
from perfatlas.common.units import parse_cpu_list
from perfatlas.launch.launchers import detect_flavour
from perfatlas.machine.topology import Machine
from perfatlas.store.database import Store

FAST = ["samples=3", "min_sample_time=200us", "time_limit=300ms", "warmup=3"]

# np = 4 patterns, collectives and RMA in one small suite: one `perfatlas run`, shared by tests.
SUITE = """
description = "the MPI benchmarks at np = 4, small"

[[step]]
benchmark = "comm.distance"
np = 4
bandwidth_bytes = "16KiB"
{fast}

[[step]]
benchmark = "comm.hotspot"
np = 4
bytes = "16KiB"
window = 4
{fast}

[[step]]
benchmark = "comm.complement"
np = 4
bandwidth_bytes = "16KiB"
{fast}

[[step]]
benchmark = "comm.allreduce"
np = 4
max_bytes = 32
{fast}

[[step]]
benchmark = "comm.barrier"
np = 4
{fast}

[[step]]
benchmark = "comm.rma"
np = 4
max_count = 2
{fast}
"""


def fast_toml() -> str:
    return "\n".join(
        f'{k} = "{v}"' if not v.isdigit() else f"{k} = {v}"
        for k, v in (word.split("=") for word in FAST)
    )


@pytest.fixture(scope="module")
def pingpong(tmp_path_factory) -> list[dict]:
    """comm.pingpong np=2, 0 B .. 1 KiB, through `perfatlas measure --json`."""
    folder = tmp_path_factory.mktemp("pingpong")
    out = folder / "pp.json"
    code = main(
        ["--db", str(folder / "p.db"), "measure", "comm.pingpong", "np=2", "max_bytes=1KiB"]
        + FAST
        + ["--json", str(out)]
    )
    assert code == 0
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def np4(tmp_path_factory):
    """`perfatlas run` of SUITE: (documents by benchmark, stdout, report html, db)."""
    folder = tmp_path_factory.mktemp("np4")
    suite, db, out = folder / "comm.toml", folder / "p.db", folder / "out"
    suite.write_text(SUITE.format(fast=fast_toml()))
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["--db", str(db), "run", str(suite), "--out", str(out)])
    assert code == 0, stderr.getvalue()
    store = Store(db)
    run_id = store.resolve_run("last")
    documents: dict[str, list[dict]] = {}
    for document in store.result_documents(run_id):
        if not document.get("remeasure"):  # a pattern's figures measured again (oversubscribed)
            documents.setdefault(document["benchmark"], []).append(document)
    (report,) = out.glob("run-*.html")
    return documents, stdout.getvalue(), report.read_text(), db


def check_placement(document: dict, np_: int) -> None:
    ranks = document["placement"]["ranks"]
    assert [r["rank"] for r in ranks] == list(range(np_))
    pus = set(Machine.detect().pus)
    assert len({r["pid"] for r in ranks}) == np_  # np distinct processes
    for r in ranks:
        assert r["host"] == socket.gethostname()  # read back from the rank, not assumed
        allowed = parse_cpu_list(r["cpus_allowed"])
        assert set(allowed) <= pus and r["cpu"] in allowed
        assert re.fullmatch(r"[0-9a-f-]{36}", r["boot_id"])
    assert document["placement"]["hosts"] == 1
    assert document["placement"]["link"] in ("intra-node", None)


# -- ping-pong, np = 2 ----------------------------------------------------------------------------
def test_pingpong_writes_one_result_per_message_size(pingpong):
    assert [d["params"]["bytes"] for d in pingpong] == [0] + [2**i for i in range(11)]
    for d in pingpong:
        assert d["schema"] == "perfatlas.result/1" and d["benchmark"] == "comm.pingpong"
        assert d["params"]["np"] == 2 and d["params"]["direction"] == "uni"
        assert d["units"]["latency_ns"] == "ns"
        assert len(d["samples"]["latency_ns"]) == d["derived"]["latency"]["samples_taken"]
        assert d["derived"]["verified"] is True
        check_placement(d, 2)
        assert d["placement"]["link"] == "intra-node" and d["placement"]["involved"] == [0, 1]
    assert "bandwidth_Bps" not in pingpong[0]["samples"]  # no bandwidth of empty messages
    assert all("bandwidth_Bps" in d["samples"] for d in pingpong[1:])


def test_pingpong_byte_counts_and_samples_are_exact(pingpong):
    for d in pingpong:
        n, latency = d["params"]["bytes"], d["derived"]["latency"]
        assert latency["bytes_per_iteration"] == 2 * n  # there and back
        count = len(d["samples"]["latency_ns"])
        for value, seconds in zip(d["samples"]["latency_ns"], d["sample_seconds"][:count]):
            # one-way latency: half the round trip, per iteration of the batch
            assert value == pytest.approx(seconds * 1e9 / (2 * latency["iterations_per_sample"]))
        if n == 0:
            continue
        bandwidth = d["derived"]["bandwidth"]
        assert bandwidth["window"] == 64 and bandwidth["bytes_per_iteration"] == 64 * n
        for value, seconds in zip(d["samples"]["bandwidth_Bps"], d["sample_seconds"][count:]):
            expected = 64 * n * bandwidth["iterations_per_sample"] / seconds
            assert value == pytest.approx(expected)


def test_pingpong_keeps_every_iteration_in_a_histogram(pingpong):
    for d in pingpong:
        h = d["derived"]["latency"]["iteration_histogram"]
        taken = d["derived"]["latency"]
        # a pass of its own after the samples: a quarter of their iterations, at least one batch
        quarter = taken["iterations_per_sample"] * taken["samples_taken"] // 4
        assert h["iterations"] == max(quarter, taken["iterations_per_sample"])
        assert sum(h["counts"]) == h["iterations"] and h["min_ns"] <= h["max_ns"]


def test_pingpong_records_the_launch(pingpong):
    launch = pingpong[0]["launch"]
    assert launch["launcher"] == "mpirun"
    assert " -np 2 " in launch["command"] or " -n 2 " in launch["command"]  # Open MPI or hydra
    assert "pa-comm-pingpong" in launch["command"] and "max_bytes=1024" in launch["command"]
    assert launch["mpi"]


def test_the_warm_up_lasts_warmup_time_and_says_how_many_iterations_it_ran(
    cli, tmp_path, read_json
):
    """At least `warmup` iterations and at least warmup_time: a 30 ms warm-up of barriers (tens
    of us each) runs far more than one; with warmup_time=0, exactly `warmup`."""
    ran = {}
    for warmup_time in ("0", "30ms"):
        out = tmp_path / f"barrier-{warmup_time}.json"
        result = cli(
            "measure", "comm.barrier", "np=2", "warmup=1", f"warmup_time={warmup_time}",
            "samples=3", "min_sample_time=200us", "time_limit=1s", "--json", str(out),
        )  # fmt: skip
        assert result.code == 0, result.err
        ran[warmup_time] = read_json(out)["derived"]["warmup_iterations"]  # one document: P = 2
    assert ran["0"] == 1
    assert ran["30ms"] > 30  # barriers of 2 ranks take well under 1 ms


def test_bidirectional_counts_both_directions(cli, tmp_path, read_json):
    out = tmp_path / "bi.json"
    result = cli(
        "measure", "comm.pingpong", "np=2", "direction=bi", "min_bytes=4KiB", "max_bytes=4KiB",
        "window=8", *FAST, "--json", str(out),
    )  # fmt: skip
    assert result.code == 0, result.err
    d = read_json(out)
    assert d["params"]["bytes"] == 4096 and d["derived"]["direction"] == "bi"
    assert d["derived"]["bandwidth"]["bytes_per_iteration"] == 2 * 8 * 4096
    assert d["derived"]["latency"]["bytes_per_iteration"] == 2 * 4096


def launch_flavour(launch: dict) -> str:
    return detect_flavour(launch["command"].split()[0]).family


# -- np = 4: patterns, collectives, one-sided -----------------------------------------------------
def test_np4_launches_oversubscribed_and_says_so(np4):
    documents, *_ = np4
    for docs in documents.values():
        check_placement(docs[0], 4)
    launch = documents["comm.distance"][0]["launch"]
    if Machine.detect().topology["cores"] < 4 and launch_flavour(launch) == "openmpi":
        assert "--oversubscribe" in launch["command"]  # hydra oversubscribes without asking
        assert any("--oversubscribe" in note for note in launch["notes"])


def test_distance_measures_rank_0_to_every_rank(np4):
    docs = np4[0]["comm.distance"]
    assert [d["params"]["peer"] for d in docs] == [1, 2, 3]
    for d in docs:
        assert d["placement"]["involved"] == [0, d["params"]["peer"]]
        assert d["derived"]["bandwidth"]["message_bytes"] == 16384
        assert d["derived"]["latency"]["message_bytes"] == 8


def test_hotspot_has_k_senders_per_result(np4):
    docs = np4[0]["comm.hotspot"]
    assert [d["params"]["senders"] for d in docs] == [1, 2, 3]
    for d in docs:
        k, derived = d["params"]["senders"], d["derived"]
        assert derived["sender_ranks"] == list(range(1, k + 1))
        assert len(d["samples"]["bandwidth_per_sender_Bps"]) == k * derived["samples_taken"]
        assert derived["bytes_per_iteration"] == k * 4 * 16384
        assert d["placement"]["involved"] == list(range(k + 1))


def test_complement_pairs_rank_i_with_np_minus_1_minus_i(np4):
    docs = np4[0]["comm.complement"]
    assert [d["params"]["pair"] for d in docs] == [[0, 3], [1, 2]]
    assert all(d["derived"]["concurrent_pairs"] == 2 for d in docs)


def test_collectives_cover_every_process_count_with_every_rank(np4):
    allreduce = np4[0]["comm.allreduce"]
    assert sorted((d["params"]["processes"], d["params"]["bytes"]) for d in allreduce) == [
        (p, b) for p in (2, 3, 4) for b in (8, 16, 32)
    ]
    for d in allreduce + np4[0]["comm.barrier"]:
        p, derived = d["params"]["processes"], d["derived"]
        assert len(d["samples"]["latency_ns"]) == p * derived["samples_per_rank"]
        assert d["placement"]["involved"] == list(range(p)) and derived["verified"]
    assert [d["derived"]["elements"] for d in allreduce if d["params"]["processes"] == 2] == [
        1,
        2,
        4,
    ]


def test_rma_fetches_and_puts_the_known_values(np4):
    docs = np4[0]["comm.rma"]
    measured = {
        (d["params"]["case"], d["params"]["op"], d["params"]["type"], d["params"]["count"]): d
        for d in docs
        if "samples" in d
    }
    for case in ("one", "two_same_node", "each_side"):
        for op in ("get", "put"):
            for type_ in ("char", "int", "double"):
                for count in (1, 2):
                    d = measured[(case, op, type_, count)]
                    assert d["derived"]["verified"] is True
                    assert d["params"]["bytes"] == count * d["derived"]["element_bytes"]
    # get: element 0 of rank 0's doubles is 0.25; put: accessor 1 writes -(1000 + 0.25)
    get = measured[("one", "get", "double", 1)]["derived"]["check"]
    put = measured[("one", "put", "double", 1)]["derived"]["check"]
    assert get == {"element": 0, "expected": 0.25, "found": 0.25}
    assert put == {"element": 0, "expected": -1000.25, "found": -1000.25}
    assert measured[("two_same_node", "get", "int", 1)]["derived"]["accessors"] == [1, 2]
    assert measured[("shared_memory", "load_store", "double", 1)]["derived"]["verified"]


def test_oversubscribed_ranks_are_warned_about(np4):
    """Each barrier document counts the ranks it involves (the others slept through it)."""
    *_, db = np4
    pus = len(Machine.detect().pus)
    rows = sqlite3.connect(db).execute(
        "SELECT document, warnings FROM results WHERE benchmark='comm.barrier'"
    )
    seen = set()
    for document, warnings in rows:
        involved = len(json.loads(document)["placement"]["involved"])
        seen.add(involved)
        over = [w for w in json.loads(warnings) if w["kind"] == "oversubscribed"]
        if involved > pus:
            assert over and f"{involved} ranks" in over[0]["message"], (involved, over)
        else:
            assert not over, (involved, over)
    assert 4 in seen


def test_report_and_summary_show_the_communication_atlas(np4):
    _, stdout, html, _ = np4
    for section in ("comm-patterns", "comm-collectives", "comm-rma"):
        match = re.search(rf'<section id="{section}">(.*?)</section>', html, re.S)
        assert match and "<svg" in match.group(1), section
    assert "Rank placement as the ranks reported it" in html
    assert "MPI_Get + flush" in html and "anomal" in html.lower()
    for text in ("MPI collectives", "MPI one-sided latency of one double", "MPI anomalies"):
        assert text in stdout, text


def test_pingpong_report_section(cli, tmp_path):
    assert cli("measure", "comm.pingpong", "np=2", "max_bytes=64", *FAST).code == 0
    path = tmp_path / "r.html"
    assert cli("report", "last", "-o", str(path)).code == 0
    html = path.read_text()
    section = re.search(r'<section id="comm-pointtopoint">(.*?)</section>', html, re.S).group(1)
    assert section.count("<svg") >= 2 and "intra-node" in section and "peak bandwidth" in section


def test_an_rma_case_this_placement_cannot_do_is_one_not_measurable_result(cli, tmp_path):
    out = tmp_path / "rma.json"
    result = cli("measure", "comm.rma", "np=2", "max_count=1", *FAST, "--json", str(out))
    assert result.code == 0, result.err
    docs = json.loads(out.read_text())
    missing = [d for d in docs if "not_measurable" in d]
    assert [(d["params"]["case"], d["params"]["op"]) for d in missing] == [
        ("two_same_node", "get"),
        ("two_same_node", "put"),
    ]
    assert "np of 3 or more" in missing[0]["not_measurable"]
    measured = {(d["params"]["case"], d["params"]["op"]) for d in docs if "samples" in d}
    assert measured == {
        ("one", "get"), ("one", "put"), ("each_side", "get"), ("each_side", "put"),
        ("shared_memory", "load_store"),
    }  # fmt: skip
    assert "not measurable here" in result.out
