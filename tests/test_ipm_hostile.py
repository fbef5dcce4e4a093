"""perfatlas-ipm under programs that once made it write a wrong profile (docs/safety/profiles.md):
pa-ipm-hostile (native/ipm/tests/hostile.c) under mpirun with the library preloaded. A forked
child writes no profile file; region names are kept exactly; nesting deeper than the region stack
and a full region table are counted, never turned into phantom regions or false mismatched pops."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mpi_helpers import mpirun

from perfatlas.launch.isa import emulated
from perfatlas.launch.launchers import detect_flavour
from perfatlas.launch.native import executable
from perfatlas.profile.command import library, profiled
from perfatlas.profile.profile_files import read_folder
from perfatlas.profile.profile_warnings import profile_warnings
from perfatlas.profile.session import still_running
from perfatlas.report import write_profile_report
from perfatlas.store.database import Store

MAX_DEPTH = 16  # PA_IPM_MAX_DEPTH: the levels of a region stack the library keeps
MAX_REGIONS = 64  # PA_IPM_MAX_REGIONS: region 0 and 63 named ones
NAMES = {
    "a/b": 1,
    "b": 2,
    "<script>": 3,
    "back\\slash": 4,
    'say "hi"\there': 5,
    "é" * 31: 6,  # 40 x "é" (80 bytes) cut to the whole characters that fit in 63 bytes
    "</script>": 7,
    "": 8,
}


def run_hostile(folder: Path, np_: int, *args: str) -> tuple[list[dict], dict]:
    """pa-ipm-hostile ARGS on np_ ranks, profiled into folder: the rank documents and the
    profile; the program must succeed."""
    command = profiled([*mpirun(np_), str(executable("pa-ipm-hostile")), *args], folder, library())
    done = subprocess.run(
        command.argv,
        env={**os.environ, **command.env, "OMPI_MCA_mpi_warn_on_fork": "0"},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    ranks = [json.loads((folder / f"ipm-rank-{r}.json").read_text()) for r in range(np_)]
    return ranks, json.loads((folder / "ipm-profile.json").read_text())


def barriers(document: dict, region_id: int) -> int:
    return sum(
        c["count"]
        for c in document["calls"]
        if c["region"] == region_id and c["call"] == "MPI_Barrier"
    )


def test_a_child_that_outlives_mpi_finalize_writes_no_profile_file(tmp_path):
    ranks, profile = run_hostile(tmp_path, 2, "fork")
    for rank in ranks:
        assert rank["partial"] is False, "the child rewrote its parent's rank file"
        assert rank["pid"] == profile["ranks"][rank["rank"]]["pid"]


def named_regions(document: dict) -> dict[tuple[str, str], dict]:
    """(parent's name, name) -> region, for the regions of a profile."""
    by_id = {region["id"]: region for region in document["regions"]}
    return {
        ("" if r["parent"] in (None, 0) else by_id[r["parent"]]["name"], r["name"]): r
        for r in document["regions"]
        if r["parent"] is not None
    }


@pytest.mark.parametrize("view", ["profile", "partial view of the rank files"])
def test_region_names_are_kept_exactly(tmp_path, view):
    ranks, document = run_hostile(tmp_path, 2, "names")
    for rank in ranks:
        assert sorted(r["name"] for r in rank["regions"]) == sorted(["", "a", *NAMES])
    if view != "profile":
        (tmp_path / "ipm-profile.json").unlink()
        document = read_folder(tmp_path, [])
    regions = named_regions(document)
    assert set(regions) == {("", "a"), ("a", "b")} | {("", n) for n in NAMES if n != "b"}
    for (parent, name), region in regions.items():
        if name != "a":
            assert barriers(document, region["id"]) == 2 * NAMES[name], (parent, name)
    assert (regions[("", "a/b")]["path"], regions[("a", "b")]["path"]) == ("a\\/b", "a/b")
    assert regions[("", "")]["path"] == "\\e"  # not "", the whole program's
    assert len({region["path"] for region in document["regions"]}) == len(document["regions"])
    html = write_profile_report(document, tmp_path, tmp_path / "p.html").read_text()
    assert "&lt;script&gt;" in html and "&lt;/script&gt;" in html
    assert "<script" not in html and "</script" not in html  # the report itself has no script


@pytest.mark.parametrize("np_, depth", [(4, 100), (2, MAX_DEPTH + 1)])
def test_nesting_deeper_than_the_stack_is_counted_not_misattributed(tmp_path, np_, depth):
    ranks, profile = run_hostile(tmp_path, np_, "deep", str(depth))
    overflowed = depth - MAX_DEPTH
    for rank in ranks:
        assert [r["name"] for r in rank["regions"]] == [""] + [
            f"level{level}" for level in range(1, MAX_DEPTH + 1)
        ]
        assert rank["region_errors"] == {
            "regions_full": 0,
            "unbalanced_pops": 0,
            "mismatched_pops": 0,
            "too_deep": overflowed,
        }
    assert profile["region_errors"]["too_deep"] == np_ * overflowed
    assert profile["region_errors"]["mismatched_pops"] == 0
    innermost = next(r for r in profile["regions"] if r["name"] == f"level{MAX_DEPTH}")
    assert barriers(profile, innermost["id"]) == np_ and innermost["entries"] == np_
    assert barriers(profile, 0) == np_  # the one after every region is left
    texts = [w.text for w in profile_warnings(profile)]
    assert any(f"{np_ * overflowed} MPI_Pcontrol(1, ...) nested deeper than" in t for t in texts)


def test_a_full_region_table_counts_its_regions_in_the_enclosing_one(tmp_path):
    many = MAX_REGIONS + 6
    ranks, profile = run_hostile(tmp_path, 2, "many", str(many))
    full = many + 1 - (MAX_REGIONS - 1)  # "outer" takes one slot
    for rank in ranks:
        errors = rank["region_errors"]
        assert (errors["regions_full"], errors["mismatched_pops"]) == (full, 0)
        outer = next(r for r in rank["regions"] if r["name"] == "outer")
        assert outer["entries"] == 1  # left once: the regions that found no slot are not it
    outer = next(r for r in profile["regions"] if r["name"] == "outer")
    assert barriers(profile, outer["id"]) == 2 * full and outer["entries"] == 2


@pytest.mark.skipif(
    bool(emulated()), reason="qemu-user has no process_vm_readv: the name probe trusts the pointer"
)
def test_mpi_pcontrol_without_a_name_is_the_standards_level_and_changes_no_region(tmp_path):
    """Levels 0 and 2, and levels 1 and -1 with NULL, an unmapped address, bytes that are not
    UTF-8 and 2 KiB without a NUL: no crash (the unmapped one was a SIGSEGV), no region, no
    pop counted; the 10 barriers after them stay in the whole program's, the named region
    after them is kept."""
    ranks, profile = run_hostile(tmp_path, 2, "levels")
    for rank in ranks:
        assert [r["name"] for r in rank["regions"]] == ["", "named"]
        assert rank["region_errors"]["unbalanced_pops"] == 0
        assert rank["region_errors"]["mismatched_pops"] == 0
    named = next(r for r in profile["regions"] if r["name"] == "named")
    assert barriers(profile, 0) == 2 * 10 and barriers(profile, named["id"]) == 2 * 2


def test_a_stopped_profile_run_passes_sigterm_on_and_stores_what_the_ranks_wrote(tmp_path):
    """SIGTERM to `perfatlas profile` (a batch system's time limit): it passes the signal to
    the launcher and waits; each rank writes its document, flagged partial; the run is stored
    as interrupted, perfatlas says so in one sentence with status 2, and no rank outlives it."""
    db, out = tmp_path / "p.db", tmp_path / "out"
    argv = [*mpirun(2), str(executable("pa-ipm-hostile")), "linger"]
    command = [sys.executable, "-m", "perfatlas", "--db", str(db), "profile", "--out", str(out)]
    # Open MPI kills a rank 1 s after passing it SIGTERM (odls_base_sigkill_timeout); on a loaded
    # machine a rank may not have been scheduled to write its file by then. The grace is the
    # launcher's, not the profiler's: 10 s here, so that the test checks what each rank writes.
    grace = {"OMPI_MCA_odls_base_sigkill_timeout": "10"}
    process = subprocess.Popen(
        [*command, "--", *argv],
        env={**os.environ, **grace},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # so that the signal reaches perfatlas alone, as sbatch's may
    )
    try:
        for line in process.stdout:  # the ranks are in their loop of barriers
            if line.strip() == "lingering":
                break
        process.send_signal(signal.SIGTERM)
        rest, err = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 2, err
    [sentence] = err.strip().splitlines()[-1:]
    assert sentence.startswith("perfatlas: perfatlas was stopped by SIGTERM and passed it on: ")
    assert sentence.endswith("; its profile is stored as run 1"), sentence
    store = Store(db)
    assert store.run(1)["status"] == "interrupted"
    ranks = [json.loads(path.read_text()) for path in sorted(out.glob("ipm-rank-*.json"))]
    # MPICH's hydra kills the other ranks once one has ended, even one still writing its file
    hydra = detect_flavour(shutil.which(argv[0]) or argv[0]).family == "mpich"
    assert [r["rank"] for r in ranks] == [0, 1] or (hydra and len(ranks) == 1)
    assert {r["reason"] for r in ranks} == {"terminated by SIGTERM"}
    assert all(r["partial"] for r in ranks)
    for rank in ranks:  # no rank outlives perfatlas (a zombie has ended)
        assert not still_running(rank["pid"]), rank["pid"]


def test_a_spawned_job_writes_beside_its_parent_and_is_stored_as_its_own_run(cli, tmp_path):
    """pa-ipm-hostile spawn: 2 ranks spawn one process of the same program. The child job used to
    write its ipm-rank-0.json and ipm-profile.json over its parent's, and perfatlas stored the
    1-task child as the run; now the child writes in spawned-HOST-PID/ and is stored beside."""
    out = tmp_path / "out"
    argv = [*mpirun(2), str(executable("pa-ipm-hostile")), "spawn"]
    alone = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if alone.returncode != 0:  # Debian's MPICH 4.0: "Error in spawn call", profiler or not
        pytest.skip(f"this MPI cannot spawn here: {(alone.stderr + alone.stdout).strip()[-200:]}")
    result = cli("profile", "--out", str(out), "--", *argv)
    assert result.code == 0, result.err
    store = Store(cli.db)
    parent, child = store.profiles(1)[0]["document"], store.profiles(2)[0]["document"]
    assert (parent["tasks"], child["tasks"]) == (2, 1)
    assert barriers(parent, 0) == 2 * 2 and barriers(child, 0) == 3
    assert store.run(2)["suite"] == "profile: spawned by run 1"
    [job] = out.glob("spawned-*")
    assert sorted(p.name for p in job.iterdir()) == ["ipm-profile.json", "ipm-rank-0.json"]
    assert json.loads((out / "ipm-profile.json").read_text())["tasks"] == 2
    assert f"spawned job stored as run 2; its profile files in {job}" in result.out
