"""perfatlas show of a profile: the run of `perfatlas profile` printed as its profile (the
banner's figures, the top calls, the regions, the heaviest communicating pairs) and written
with `--json` under "profile", from the figures the report's section draws; real MPI programs
with known calls (pa-ipm-exact on 2 ranks, pa-ipm-hostile on 4) make the profiles. A run
without a profile shows as it always did."""

from __future__ import annotations

import contextlib
import io
import json
import shlex
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest
from mpi_helpers import mpirun
from test_ipm import expected, mpirun_command
from test_ipm_hostile import NAMES
from test_profile import aborted_ranks, profile_document, start

from perfatlas.cli.entry import main
from perfatlas.common.units import format_size
from perfatlas.launch.native import bin_dir
from perfatlas.profile import views_profile
from perfatlas.profile.analysis_profile import percent, seconds
from perfatlas.profile.partial import partial_profile
from perfatlas.store.database import Store


@dataclass(frozen=True)
class ProfiledRun:
    db: Path
    command: list[str]  # the program, as the profile names it


def profile_run(folder: Path, launcher: list[str], *program: str) -> ProfiledRun:
    """`perfatlas profile -- LAUNCHER PROGRAM` into a database of its own: run 1."""
    db = folder / "perfatlas.db"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(
            ["--db", str(db), "profile", "--out", str(folder / "out"), "--", *launcher, *program]
        )
    assert code == 0, err.getvalue()
    assert out.getvalue().startswith(f"stored as run 1 in {db}")
    return ProfiledRun(db, list(program))


@pytest.fixture(scope="module")
def exact(tmp_path_factory) -> ProfiledRun:
    """pa-ipm-exact on 2 ranks (its calls: tests/test_ipm.py's expected())."""
    folder = tmp_path_factory.mktemp("exact")
    return profile_run(folder, mpirun_command(), str(bin_dir() / "pa-ipm-exact"), str(folder))


@pytest.fixture(scope="module")
def names(tmp_path_factory) -> ProfiledRun:
    """pa-ipm-hostile names on 4 ranks: regions of hostile names, MPI_Barrier only."""
    folder = tmp_path_factory.mktemp("names")
    return profile_run(folder, mpirun(4), str(bin_dir() / "pa-ipm-hostile"), "names")


def table(out: str, title: str) -> list[list[str]]:
    """The body rows of the table printed under `title`, each a list of its cells."""
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.rstrip() == title)
    rows = []
    for line in lines[at + 1 :]:
        if line.startswith("└"):
            return rows
        if line.startswith("│"):
            rows.append([cell.strip() for cell in line.strip().strip("│").split("│")])
    raise AssertionError(f"the table {title!r} does not end")


def label(path: str) -> str:
    """A region path of tests/test_ipm.py as the views label it."""
    return path.replace("/", " > ") or "(whole program)"


def exact_calls() -> dict[tuple[str, str], tuple[int, int]]:
    """(region label, call) -> (count, bytes) that pa-ipm-exact makes, over its 2 ranks."""
    calls: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for rank in (0, 1):
        for call, path, size, _peer, events in expected(rank):
            calls[(label(path), call)][0] += events
            calls[(label(path), call)][1] += size * events
    return {key: (count, size) for key, (count, size) in calls.items()}


# What pa-ipm-exact sends (exact.c): rank 0 -> 1, 3 x 800 B in phase1, 64 B (MPI_Isend), 4 B
# (MPI_Sendrecv), 24 B (wild); rank 1 -> 0, 64 B, 4 B, 5 B (split), 12 B (wild).
EXACT_PAIRS = [(0, 1, 2492, 6), (1, 0, 85, 4)]


def shown(cli, run: ProfiledRun, *args: str):
    said = cli("show", "1", *args, db_path=run.db)
    assert said.code == 0, said.err
    return said


# -- the terminal -----------------------------------------------------------------------------------
def test_show_prints_the_banner_figures_of_the_profile(cli, exact):
    out = shown(cli, exact).out
    document = json.loads(shown(cli, exact, "--json").out)
    program = document["profile"]["overview"]
    facts = dict(table(out, "profile 1 (perfatlas-ipm)"))
    assert facts["command"] == shlex.join(exact.command)
    assert facts["ranks"] == f"2 on 1 host(s) {program['hosts'][0]}"
    assert facts["profile"] == "complete (every rank reached MPI_Finalize)"
    wall = program["wallclock_s"]
    assert facts["wallclock"].startswith(f"{seconds(wall['max'])} (the slowest rank")
    # % in MPI is the stored headline, IPM's %comm: (MPI + LBST) over all ranks' wallclock.
    (comm,) = [r["median"] for r in document["results"] if r["metric"] == "comm_fraction"]
    assert program["comm_fraction"] == pytest.approx(comm)
    assert facts["in MPI"].startswith(f"{percent(comm)} of all ranks' wallclock (MPI ")
    # The generic results come first, as before.
    assert out.index("comm_fraction") < out.index("profile 1 (perfatlas-ipm)")


def test_show_prints_every_call_with_the_counts_and_bytes_the_program_made(cli, exact, monkeypatch):
    monkeypatch.setattr(views_profile, "TOP_CALLS", 100)  # all 35, not the first 20
    rows = table(shown(cli, exact).out, "top calls by time")
    printed = {(row[1], row[0]): (row[2], row[3]) for row in rows}
    assert len(rows) == len(printed) == 35
    assert printed == {
        key: (str(count), format_size(size)) for key, (count, size) in exact_calls().items()
    }
    assert printed[("phase1", "MPI_Send")] == ("3", format_size(2400))
    assert printed[("outer > inner", "MPI_Reduce")] == ("4", "128 B")


def test_show_prints_the_top_20_calls_in_the_order_of_the_json(cli, exact):
    rows = table(shown(cli, exact).out, "top calls by time, 20 of 35")
    calls = json.loads(shown(cli, exact, "--json").out)["profile"]["calls"]
    assert [row[:4] for row in rows] == [
        [c["call"], c["region_label"], str(c["count"]), format_size(c["bytes"])] for c in calls[:20]
    ]
    for row, call in zip(rows, calls):
        mpi = percent(call["of_mpi"]) if call["category"] == "mpi" else f"({call['category']})"
        assert row[5:] == [
            mpi,
            percent(call["of_wall"]),
            f"{seconds(call['time_s']['min'])} .. {seconds(call['time_s']['max'])}",
        ]


def test_show_prints_the_regions_with_their_wall_and_mpi_time(cli, exact):
    rows = table(shown(cli, exact).out, "regions")
    regions = json.loads(shown(cli, exact, "--json").out)["profile"]["regions"]
    assert [row[0] for row in rows] == [
        "(whole program)",
        "phase1",
        "outer",
        "outer > inner",
        "split",
        "inner",
        "wild",
        "io",
    ]
    for row, region in zip(rows, regions, strict=True):
        mpi = f"{seconds(region['average_s']['mpi_s'])} ({percent(region['shares']['mpi_s'])})"
        assert row[1:4] == ["2", seconds(region["wall_s"]["avg"]), mpi]


def test_show_prints_the_heaviest_communicating_pairs(cli, exact):
    out = shown(cli, exact).out
    rows = table(out, "heaviest communicating pairs, of 2.517 KiB in 10 messages")
    assert [row[:3] for row in rows] == [
        [f"{s} -> {r}", format_size(size), str(messages)] for s, r, size, messages in EXACT_PAIRS
    ]
    assert format_size(2492) == "2.434 KiB" and 2492 + 85 == 2577  # 2.517 KiB


def test_show_prints_a_profile_of_4_ranks_with_hostile_region_names(cli, names):
    out = shown(cli, names).out
    assert dict(table(out, "profile 1 (perfatlas-ipm)"))["ranks"].startswith("4 on 1 host(s)")
    calls = {row[1]: row[2] for row in table(out, "top calls by time") if row[0] == "MPI_Barrier"}
    labels = {name: name.replace("\t", "\\x09") or '""' for name in NAMES}
    labels["b"] = "a > b"
    assert calls == {labels[name]: str(4 * count) for name, count in NAMES.items()}
    regions = {row[0]: row[1] for row in table(out, "regions")}
    assert regions == {"(whole program)": "4", "a": "4"} | {labels[n]: "4" for n in NAMES}
    assert "no point-to-point or one-sided message was sent" in out  # barriers only


# -- the JSON ---------------------------------------------------------------------------------------
def test_show_json_adds_the_profile_figures_and_keeps_every_key(cli, exact):
    document = json.loads(shown(cli, exact, "--json").out)
    assert list(document) == ["run", "results", "findings", "profile"]
    assert document["run"]["suite"] == "profile"
    assert {r["metric"] for r in document["results"]} == {"wallclock_s", "comm_fraction"}
    profile = document["profile"]
    assert list(profile) == [
        "id",
        "overview",
        "calls",
        "sites",
        "regions",
        "traffic",
        "placement",
        "against",
        "whatif",
        "whatif_launch",
    ]
    program = profile["overview"]
    assert (program["tasks"], program["partial"], program["command"]) == (2, False, exact.command)
    calls = {(c["region_label"], c["call"]): (c["count"], c["bytes"]) for c in profile["calls"]}
    assert calls == exact_calls()
    times = [c["time_s"]["sum"] for c in profile["calls"]]
    assert times == sorted(times, reverse=True)
    assert sum(c["of_mpi"] for c in profile["calls"] if c["category"] == "mpi") == pytest.approx(1)
    assert [r["label"] for r in profile["regions"]][:3] == ["(whole program)", "phase1", "outer"]
    traffic = profile["traffic"]
    assert (traffic["bytes"], traffic["messages"], traffic["silent"]) == (2577, 10, False)
    pairs = [(p["sender"], p["receiver"], p["bytes"], p["messages"]) for p in traffic["pairs"]]
    assert pairs == EXACT_PAIRS


def test_show_of_a_profile_reads_the_run_once(cli, exact, monkeypatch):
    reads: list[str] = []
    for name in ("results", "profiles"):
        original = getattr(Store, name)

        def counted(self, run_id, *args, _name=name, _original=original, **kwargs):
            reads.append(_name)
            return _original(self, run_id, *args, **kwargs)

        monkeypatch.setattr(Store, name, counted)
    for args in ((), ("--json",)):
        shown(cli, exact, *args)
        assert reads == ["results", "profiles"], args
        reads.clear()


# -- profiles stored by hand: partial, hostile markup; runs without a profile ----------------------
def stored(cli, document: dict) -> None:
    store = Store(cli.db)
    run_id = start(store)
    store.add_profile(run_id, document["command"], document)
    store.finish_run(run_id, "complete")
    store.close()


def test_a_partial_profile_says_so_and_that_it_has_no_matrix(cli):
    stored(cli, partial_profile(aborted_ranks(), ["./app"]))  # records without kinds: no matrix
    said = cli("show", "1")
    assert said.code == 0, said.err
    facts = dict(table(said.out, "profile 1 (perfatlas-ipm)"))
    assert facts["profile"] == "partial: MPI_Abort on rank 1"
    assert "no communication matrix: more ranks than the library keeps one for" in said.out
    # No headline result carries its warnings (it was stored without one): the view says them.
    assert said.out.count("warning ipm.profile: Partial profile: MPI_Abort on rank 1.") == 1
    document = json.loads(cli("show", "1", "--json").out)["profile"]
    assert document["overview"]["partial_reason"] == "MPI_Abort on rank 1"
    assert document["traffic"] is None


def test_names_are_printed_as_given_not_as_terminal_markup(cli):
    document = profile_document()
    document["regions"][1]["name"] = "[bold red]solve[/]"
    document["calls"][0]["call"] = "MPI_[i]Allreduce"
    stored(cli, document)
    said = cli("show", "1")
    assert said.code == 0, said.err
    rows = table(said.out, "top calls by time")
    assert rows[0][:2] == ["MPI_[i]Allreduce", "[bold red]solve[/]"]
    assert [row[0] for row in table(said.out, "regions")] == [
        "(whole program)",
        "[bold red]solve[/]",
    ]


def test_a_run_without_a_profile_shows_as_before(cli, monkeypatch):
    store = Store(cli.db)
    run_id = store.start_run(
        fingerprint="f", topology={}, context={}, suite="tiny", argv=["perfatlas"], software={}
    )
    store.add_document(
        run_id,
        {
            "schema": "perfatlas.result/1",
            "benchmark": "mem.latency",
            "params": {"bytes": 4096},
            "samples": {"latency_ns": [1.0, 2.0, 3.0, 2.0, 2.0, 2.0]},
            "units": {"latency_ns": "ns"},
        },
        [],
    )
    store.finish_run(run_id, "complete")
    store.close()

    def refused(*args, **kwargs):
        raise AssertionError("a run without a profile drew one")

    monkeypatch.setattr(views_profile, "print_profiles", refused)
    monkeypatch.setattr(views_profile, "profile_document", refused)
    said = cli("show", "1")
    assert said.code == 0, said.err
    assert "mem.latency" in said.out and "perfatlas-ipm" not in said.out
    document = json.loads(cli("show", "1", "--json").out)
    assert list(document) == ["run", "results", "findings"]
