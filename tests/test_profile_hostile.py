"""Malformed profile documents and rank folders (docs/safety/profiles.md): each is one sentence
and exit status 2, never a traceback, and nothing stored changes. Named cases first, then
Hypothesis: arbitrary mutations of a valid document or rank file give a usable profile or one
UserError, and a view built from rank files that load is itself a valid profile."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import os
import signal
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from test_profile import aborted_ranks, count, profile_document, start, write

from perfatlas.common.errors import UserError
from perfatlas.profile.analysis_profile import profile_figures
from perfatlas.profile.documents import check_profile, load_profile
from perfatlas.profile.profile_files import read_folder
from perfatlas.profile.profile_warnings import profile_warnings
from perfatlas.profile.section_profile import _calls_rows, _facts
from perfatlas.profile.session import ending
from perfatlas.profile.storage import headline
from perfatlas.profile.views_profile import print_profile
from perfatlas.store.database import Store


def rank_files() -> list[dict]:
    """aborted_ranks() with record kinds: the partial view then has a matrix and LBST."""
    ranks = aborted_ranks()
    kinds = {"MPI_Send": "send", "MPI_Recv": "recv", "MPI_Barrier": "coll"}
    for rank in ranks:
        for record in rank["records"]:
            record["kind"] = kinds.get(record["call"], "io")
    return ranks


def changed(document: dict, change) -> dict:
    document = copy.deepcopy(document)
    change(document)
    return document


def rank_changed(rank: int, change) -> list[dict]:
    ranks = rank_files()
    change(ranks[rank])
    return ranks


def set_peer(peer):
    return lambda rank: rank["records"][0].update(peer=peer)


def cycle(document: dict) -> None:
    document["regions"][1]["parent"] = 1


# Files given to `report --profile`: (content, the sentence after "{path} ").
PROFILE_CASES = {
    "deep JSON": ("[" * 100_000 + "]" * 100_000, "is nested too deeply to be a"),
    "huge number": (
        json.dumps(profile_document()).replace("1795000000.5", "1e999"),
        "started_unix inf is not a finite number",
    ),
    "5,000-digit integer": (
        json.dumps(profile_document()).replace('"tasks": 2', '"tasks": ' + "9" * 5000),
        "is not a usable JSON document: Exceeds the limit",
    ),
    "NaN": (
        json.dumps(changed(profile_document(), lambda d: d["wallclock_s"].update(sum=math.nan))),
        "wallclock_s.sum nan is not a finite number",
    ),
    "parent cycle": (
        changed(profile_document(), cycle),
        "regions[1] (id 1) is its own ancestor: the parents form a cycle",
    ),
    "missing id": (
        changed(profile_document(), lambda d: d["regions"][1].pop("id")),
        "the field regions[1].id is missing",
    ),
    "no whole program": (
        changed(profile_document(), lambda d: d["regions"][0].update(parent=1)),
        "regions has 0 regions without a parent, not 1 (the whole program)",
    ),
    "wrong type": (
        changed(profile_document(), lambda d: d.update(regions="solve")),
        "regions is a string, not a list",
    ),
    "negative count": (
        changed(profile_document(), lambda d: d["calls"][0].update(count=-1)),
        "calls[0].count -1 is out of range",
    ),
    "bucket out of range": (
        changed(profile_document(), lambda d: d["histogram"][0].update(bucket=10**6)),
        "histogram[0].bucket 1000000 is out of range",
    ),
    "date out of range": (
        changed(profile_document(), lambda d: d.update(started_unix=1e300)),
        "started_unix 1e+300 is out of range",
    ),
    "rank out of range": (
        changed(profile_document(), lambda d: d["ranks"][1].update(rank=2)),
        "ranks[1].rank 2 is not a rank of 2 tasks",
    ),
    "lone surrogate": (
        json.dumps(profile_document()).replace('"./app"', '"\\ud800"'),
        "command[0] is not valid Unicode text",
    ),
    "truncated": (json.dumps(profile_document())[:500], "is not valid JSON"),
}


@pytest.mark.parametrize("case", PROFILE_CASES)
def test_a_malformed_profile_is_one_sentence(cli, tmp_path, case):
    content, sentence = PROFILE_CASES[case]
    path = write(tmp_path / "ipm-profile.json", content)
    result = cli("report", "--profile", str(path), "-o", str(tmp_path / "p.html"))
    assert result.code == 2 and result.err.count("\n") == 1, result.err
    assert result.err.startswith(f"perfatlas: {path} ") and sentence in result.err
    assert not (tmp_path / "p.html").exists()


def test_a_file_that_is_not_utf8_is_one_sentence(cli, tmp_path):
    path = tmp_path / "ipm-profile.json"
    data = json.dumps(profile_document()).replace("./app", "\xff").encode("latin-1")
    path.write_bytes(data)
    result = cli("report", "--profile", str(path))
    assert (result.code, result.err) == (
        2,
        f"perfatlas: profile document {path} is not UTF-8 text (byte 0xff at offset "
        f"{data.index(0xFF)}): "
        "save it as UTF-8\n",
    )


def test_a_fifo_is_refused_not_waited_on(cli, tmp_path):
    os.mkfifo(tmp_path / "ipm-rank-0.json")
    result = cli("report", "--profile", str(tmp_path))
    assert (result.code, result.err) == (
        2,
        f"perfatlas: profile document {tmp_path}/ipm-rank-0.json is not a regular file (a "
        "FIFO): give a text file\n",
    )


def test_a_profile_of_more_tasks_than_the_matrix_keeps_loads(tmp_path):
    """The library writes "matrix": null above 1024 tasks: that is a usable profile."""
    document = changed(profile_document(), lambda d: d.update(matrix=None, tasks=2048))
    assert load_profile(write(tmp_path / "p.json", document)) == document


# Rank folders, imported by `perfatlas profile` from the files a stand-in program leaves.
FOLDER_CASES = {
    "peer -1": (rank_changed(0, set_peer(-1)), "{0} is not a usable", "records[0].peer -1 is"),
    "peer out of range": (
        rank_changed(0, set_peer(2)),
        "{0} is not a usable",
        "records[0].peer 2 is not a rank of size 2",
    ),
    "rank out of range": (
        rank_changed(1, lambda r: r.update(rank=2)),
        "{1} is not a usable",
        "rank 2 is not a rank of size 2",
    ),
    "missing region": (
        rank_changed(0, lambda r: r["records"][0].update(region=9)),
        "{0} is not a usable",
        "records[0].region 9 is not the id of a region",
    ),
    "missing parent": (
        rank_changed(1, lambda r: r["regions"][1].update(parent=7)),
        "{1} is not a usable",
        "regions[1].parent 7 is not the id of a region",
    ),
    "parent cycle": (rank_changed(1, cycle), "{1} is not a usable", "form a cycle"),
    "duplicate rank": (
        rank_changed(1, lambda r: r.update(rank=0)),
        "{0} and {1} are both rank 0",
        "are not of one run",
    ),
    "sizes differ": (
        rank_changed(1, lambda r: r.update(size=3)),
        "{1} is a rank of 3 ranks, {0} of 2",
        "not of one run",
    ),
}


def stand_in(tmp_path: Path, ranks: list[dict], then: str = "exit 0") -> Path:
    """A program that leaves these rank files where the library would, then `then`."""
    folder = tmp_path / "ranks"
    folder.mkdir()
    for i, document in enumerate(ranks):
        write(folder / f"ipm-rank-{i}.json", document)
    program = tmp_path / "app"
    program.write_text(f'#!/bin/sh\ncp {folder}/*.json "$PERFATLAS_IPM_DIR"\n{then}\n')
    program.chmod(0o755)
    return program


@pytest.fixture
def one_profile(cli) -> bytes:
    """A database holding one stored profile, which a refused import must leave as it is."""
    store = Store(cli.db)
    run_id = start(store)
    store.add_profile(run_id, ["./app"], profile_document())
    store.finish_run(run_id, "complete")
    store.close()
    return cli.db.read_bytes()


@pytest.mark.parametrize("case", FOLDER_CASES)
def test_a_malformed_rank_folder_is_one_sentence_and_stores_nothing(
    cli, one_profile, tmp_path, case
):
    ranks, start_, end = FOLDER_CASES[case]
    out = tmp_path / "out"
    result = cli("profile", "--out", str(out), "--", str(stand_in(tmp_path, ranks)))
    files = [out / f"ipm-rank-{i}.json" for i in range(len(ranks))]
    assert result.code == 2 and result.err.count("\n") == 1, result.err
    assert result.err.startswith(f"perfatlas: {start_.format(*files)}") and end in result.err
    assert cli.db.read_bytes() == one_profile


def test_gaps_in_a_huge_program_are_named_as_ranges_without_listing_them(tmp_path):
    ranks = rank_files()
    for rank, number in zip(ranks, (0, 5)):
        rank.update(size=2**31 - 1, rank=number)
        rank["records"] = [r for r in rank["records"] if r["peer"] is None]
    for rank in ranks:
        write(tmp_path / f"ipm-rank-{rank['rank']}.json", rank)
    view = read_folder(tmp_path, [])
    assert view["partial_reason"] == (
        f"MPI_Abort on rank 5; no rank file from ranks 1-4, 6-{2**31 - 2} of {2**31 - 1}"
    )
    assert view["matrix"] is None  # above the 1024 tasks the library keeps a matrix for
    check_profile(view, tmp_path)


def test_a_program_killed_by_a_real_time_signal_is_named(cli, tmp_path):
    number = signal.SIGRTMIN + 2
    assert ending("./app", -number) == "./app was killed by SIGRTMIN+2"
    assert ending("./app", -signal.SIGSEGV) == "./app was killed by SIGSEGV"
    program = stand_in(tmp_path, rank_files(), f"kill -{int(number)} $$")
    result = cli("profile", "--out", str(tmp_path / "out"), "--", str(program))
    assert (result.code, result.err) == (
        2,
        f"perfatlas: {program} was killed by SIGRTMIN+2; its profile is stored as run 1\n",
    )


# -- Hypothesis ------------------------------------------------------------------------------------
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=4,
)


@st.composite
def mutated(draw, document: dict) -> dict:
    """`document` with one to three changes somewhere inside: a field dropped or replaced by any
    JSON value, a list item repeated, a parent set to a region's own id."""
    document = copy.deepcopy(document)
    for _ in range(draw(st.integers(1, 3))):
        container, key = document, None
        while True:
            keys = list(container) if isinstance(container, dict) else range(len(container))
            if not keys:
                break
            key = draw(st.sampled_from(sorted(keys, key=str)))
            inner = container[key]
            if not isinstance(inner, dict | list) or not inner or draw(st.booleans()):
                break
            container = inner
        if key is None:
            continue
        action = draw(st.sampled_from(["drop", "replace", "repeat", "own parent"]))
        if action == "drop" and isinstance(container, dict):
            del container[key]
        elif action == "repeat" and isinstance(container, list):
            container.append(copy.deepcopy(container[key]))
        elif action == "own parent" and isinstance(container, dict) and "id" in container:
            container["parent"] = container["id"]
        else:
            container[key] = draw(JSON)
    return document


def drawn(document: dict) -> None:
    """What the views read: the headline, the warnings, the figures (the facts, the calls table
    and the terminal's tables drawn from them, and their JSON)."""
    headline(document)
    profile_warnings(document)
    figures = profile_figures({"id": 1, "document": document})
    _facts(document, figures)
    _calls_rows(figures.calls)
    with contextlib.redirect_stdout(io.StringIO()):
        print_profile(figures)
    json.dumps(figures.document(), allow_nan=False)


@given(mutated(profile_document()))
def test_any_mutated_profile_loads_or_is_one_sentence(tmp_path_factory, document):
    path = tmp_path_factory.mktemp("p") / "ipm-profile.json"
    path.write_text(json.dumps(document))
    try:
        loaded = load_profile(path)
    except UserError as error:
        assert "\n" not in str(error) and str(error).startswith(str(path))
        event("refused")
        return
    event("loaded")
    drawn(loaded)


@st.composite
def mutated_folder(draw) -> list[dict]:
    ranks = rank_files()
    which = draw(st.integers(0, len(ranks) - 1))
    ranks[which] = draw(mutated(ranks[which]))
    return ranks


@given(mutated_folder())
def test_any_mutated_rank_folder_makes_a_valid_view_or_is_one_sentence(tmp_path_factory, ranks):
    folder = tmp_path_factory.mktemp("ranks")
    for i, document in enumerate(ranks):
        (folder / f"ipm-rank-{i}.json").write_text(json.dumps(document))
    try:
        view = read_folder(folder, ["./app"])
    except UserError as error:
        assert "\n" not in str(error) and str(folder) in str(error)
        event("refused")
        return
    event("loaded")
    drawn(check_profile(view, folder))  # the view it builds is a profile the views can read
    check_profile(json.loads(json.dumps(view)), folder)  # and so is a --json copy of it


@settings(max_examples=10)
@given(mutated_folder())
def test_a_refused_import_stores_nothing(cli, tmp_path_factory, ranks):
    """perfatlas profile of a stand-in leaving mutated rank files: stored, or one sentence and
    the database byte for byte as it was."""
    tmp = tmp_path_factory.mktemp("import")
    db = tmp / "perfatlas.db"
    Store(db).close()
    before = db.read_bytes()
    result = cli("profile", "--out", str(tmp / "out"), "--", str(stand_in(tmp, ranks)), db_path=db)
    if result.code == 0:
        assert count(db, "profiles") == 1
    else:
        assert result.code == 2 and result.err.count("\n") == 1, result.err
        assert db.read_bytes() == before


def extreme(document: dict) -> None:
    """Every figure at the edge of what the loader accepts."""
    document["wallclock_s"] = {"sum": 1e-300, "min": 0.0, "max": 1e20, "avg": -1e20}
    document["regions"][0]["mpi_s"]["sum"] = 1e20
    document["regions"][1]["calc_s"] = {"sum": -1e20, "min": -1e20, "max": 0.0, "avg": -1e20}
    document["calls"][0].update(count=2**64 - 1, bytes=2**64 - 1)
    document["histogram"][0].update(bucket=64, count=2**64 - 1)
    document["histogram"][1].update(bucket=0)
    document["matrix"]["bytes"] = [[1e20, 0], [0, -1e20]]
    document["ranks"][0].update(wall_s=1e20, calc_s=-1e20)
    document["started_unix"] = 1e11


def test_a_profile_at_the_edge_of_every_range_is_drawn_and_stored(cli, tmp_path):
    path = write(tmp_path / "ipm-profile.json", changed(profile_document(), extreme))
    assert headline(load_profile(path)) is None  # no share of MPI in a wallclock of 1e-300 s
    result = cli("report", "--profile", str(path), "-o", str(tmp_path / "p.html"))
    assert result.code == 0, result.err
    assert "18446744073709551615" in (tmp_path / "p.html").read_text()  # the count, exactly


def test_optional_fields_given_as_null_are_drawn_as_unknown():
    document = profile_document()
    document.update(timer={"source": None, "resolution_ns": None}, mpi_library=None)
    document["hardware_counters"] = {"available": True, "source": None}
    document = check_profile(document, Path("p.json"))
    facts = dict(_facts(document, profile_figures({"id": 1, "document": document})).items)
    assert facts["timer"] == "?" and facts["hardware counters"] == "available"
