"""A hostile user against the command line (issue 35): each case is refused in one sentence on
stderr ("perfatlas: ..."), exit status 2, and leaves what is stored as it was
(docs/safety/store-and-values.md)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from bad_input import database_dump
from test_store_safety import sum_document

from perfatlas.launch.native import executable
from perfatlas.store.database import Store


def _stored_runs(path: Path, runs: int = 1) -> None:
    store = Store(path)
    for number in range(runs):
        run = store.start_run(
            fingerprint="f", topology={}, context={}, suite="t", argv=["x"], software={}
        )
        store.add_document(run, sum_document(float(number)), [])
        store.finish_run(run, "complete")
    store.close()


def _sentence(done) -> str:
    """The one line a refusal prints, checked to be one line and exit status 2."""
    assert done.code == 2, (done.code, done.err[-800:])
    lines = done.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("perfatlas: "), done.err[-800:]
    assert "Traceback" not in done.err and "usage:" not in done.err
    return lines[0]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- 1. another application's SQLite file -------------------------------------------------------
@pytest.mark.parametrize(
    "words",
    [
        ["measure", "example.sum", "samples=3"],
        ["baseline", "set", "nightly", "1"],
        ["run", "SUITE"],
    ],
    ids=["measure", "baseline-set", "run"],
)
def test_another_applications_database_is_refused_and_left_byte_for_byte(cli, tmp_path, words):
    other = tmp_path / "contacts.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE contacts (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        db.execute("INSERT INTO contacts VALUES (1, 'Ada')")
    db.close()
    suite = tmp_path / "one.toml"
    suite.write_text('[[step]]\nbenchmark = "example.sum"\nsamples = 3\n')
    before = _digest(other)
    words = [str(suite) if w == "SUITE" else w for w in words]
    sentence = _sentence(cli(*words, db_path=other))
    assert sentence == (
        f"perfatlas: database {other} is not a perfatlas database (it holds the tables contacts, "
        "notes): perfatlas writes nothing to it; give a new file or a perfatlas database with --db"
    )
    assert _digest(other) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["contacts.db", "one.toml"]


# -- 2. a baseline whose run is gone ----------------------------------------------------------------
def test_baseline_list_lists_the_others_and_names_the_baseline_whose_run_is_gone(cli, tmp_path):
    db = tmp_path / "p.db"
    _stored_runs(db, runs=3)
    store = Store(db)
    for name, run in (("first", 1), ("gone", 2), ("third", 3)):
        store.set_baseline(name, run)
    store.close()
    with sqlite3.connect(db) as raw:  # deleted by hand: nothing in perfatlas deletes a run
        for table, key in (("results", "run_id"), ("findings", "run_id"), ("runs", "id")):
            raw.execute(f"DELETE FROM {table} WHERE {key} = 2")
    raw.close()
    before = database_dump(db)
    why = (
        f"baseline gone names run 2, which is not in {db}: 'perfatlas baseline set gone RUN' "
        "names another run, 'perfatlas baseline rm gone' forgets it"
    )
    listed = cli("baseline", "list", db_path=db)
    assert listed.code == 0 and listed.err == f"perfatlas: warning: {why}\n", listed.err
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in listed.out.splitlines()]
    rows = {row[0]: row[1:] for row in cells if row}
    assert rows["first"][0] == "1" and rows["third"][0] == "3", listed.out
    assert rows["gone"] == ["2", "-", "-", "missing"], listed.out
    assert _sentence(cli("check", "3", "--against", "gone", db_path=db)) == f"perfatlas: {why}"
    assert database_dump(db) == before


# -- 3. a disk that fills before the first document is stored -----------------------------------
def test_a_full_disk_before_anything_is_stored_says_nothing_was(cli, tmp_path, monkeypatch):
    """SQLite's own SQLITE_FULL: the database may not grow past the pages it has once the run
    is opened (PRAGMA max_page_count), and 300 samples do not fit in the free room of a page."""
    db = tmp_path / "p.db"
    _stored_runs(db)
    before = database_dump(db)
    start_run = Store.start_run

    def start_run_then_fill(self, **kwargs):
        run = start_run(self, **kwargs)
        pages = self.db.execute("PRAGMA page_count").fetchone()[0]
        self.db.execute(f"PRAGMA max_page_count = {pages}")
        return run

    monkeypatch.setattr(Store, "start_run", start_run_then_fill)
    done = cli("measure", "example.sum", "samples=300", "--repeat", "3", db_path=db)
    assert _sentence(done) == (
        f"perfatlas: example.sum stopped after 1 document(s) in launch 1 of 3: cannot write to "
        f"database {db}: the disk is full (sqlite: database or disk is full); none of it is "
        "stored, and run 2 holds no result"
    )
    assert set(before) <= set(database_dump(db))  # run 1 as it was
    assert Store(db, read_only=True).result_count(2) == 0


# -- 4. SQLite's check text over several lines ----------------------------------------------------
def _damaged(path: Path) -> Path:
    """A real database with a page in the middle of its results overwritten: quick_check's
    complaint is '*** in database main ***' and a line naming the page."""
    store = Store(path)
    run = store.start_run(
        fingerprint="f", topology={}, context={}, suite="t", argv=["x"], software={}
    )
    for i in range(400):
        store.add_document(run, sum_document(float(i)), [])
    store.finish_run(run, "complete")
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size, pages = (
        store.db.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_size", "page_count")
    )
    store.close()
    with path.open("r+b") as file:
        file.seek(page_size * (pages // 2))
        file.write(b"\xa5" * page_size)
    return path


def test_the_checks_lines_are_folded_into_one_line_warning_and_one_sentence(cli, tmp_path):
    db = _damaged(tmp_path / "damaged.db")
    before = _digest(db)
    shown = cli("show", "1", db_path=db)
    assert shown.code == 0
    warnings = shown.err.splitlines()
    assert all(line.startswith("perfatlas: warning: ") for line in warnings), shown.err
    check = f"perfatlas: warning: database {db} is damaged (quick_check: *** in database main ***; "
    (folded,) = [line for line in warnings if line.startswith(check)]
    assert folded.endswith("): reading what is readable") and "Page " in folded, folded
    sentence = _sentence(cli("measure", "example.sum", "samples=3", db_path=db))
    assert sentence.startswith(
        f"perfatlas: database {db} is damaged (quick_check: *** in database main ***; Page "
    ), sentence
    assert "\\n" not in sentence and "perfatlas writes nothing to it" in sentence
    assert _digest(db) == before


# -- 5. option values that begin with '-' -----------------------------------------------------------
@pytest.mark.parametrize(
    "words, says",
    [
        (
            ["check", "2", "--against", "1", "--tolerance", "-5%"],
            "perfatlas: --tolerance '-5%' is not a tolerance: give a percentage from 0 to below "
            "100 (e.g. 5%) or a fraction (e.g. 0.05)",
        ),
        (
            ["compare", "1", "2", "--expect", "-1e3"],
            "perfatlas: --expect -1000 must be a positive ratio (e.g. 1.333)",
        ),
        (
            ["run", "quick", "--plan", "--threads", "-1-3"],
            "perfatlas: --threads '-1-3' is not a CPU list: write e.g. 0, 0,1 or 0-3",
        ),
        (  # argparse's own refusal is one sentence too
            ["measure", "example.sum", "--repeat", "-1e3"],
            "perfatlas: measure: argument --repeat: invalid int value: '-1e3' (see 'perfatlas "
            "measure --help')",
        ),
    ],
    ids=["tolerance", "expect", "threads", "argparse"],
)
def test_an_option_value_beginning_with_a_dash_reaches_its_check(cli, tmp_path, words, says):
    db = tmp_path / "p.db"
    _stored_runs(db, runs=2)
    before = database_dump(db)
    assert _sentence(cli(*words, db_path=db)) == says
    assert database_dump(db) == before


def test_the_words_of_a_profiled_command_and_option_words_stay_as_given():
    from perfatlas.cli.entry import _join_option_values, build_parser

    parser = build_parser()
    for words in (
        ["profile", "./app", "--json", "-v"],
        ["profile", "--out", "o", "--", "./app", "--json", "-v"],
        ["measure", "example.sum", "--json", "--repeat", "3"],
    ):
        assert _join_option_values(words, parser) == words
    assert _join_option_values(["--db", "-x.db", "show"], parser) == ["--db=-x.db", "show"]


# -- 6. run ids from 10^18 upward -------------------------------------------------------------------
TOP = 2**63 - 1  # SQLite's largest integer


@pytest.mark.parametrize(
    "ref, says",
    [
        (str(10**18), "run 1000000000000000000 is not in {db}; 'perfatlas show' lists the runs"),
        (str(TOP), f"run {TOP} is not in {{db}}; 'perfatlas show' lists the runs"),
        (str(TOP + 1), f"run {TOP + 1} is out of range: run ids are 1 to {TOP}"),
        ("9" * 5000, f"run {'9' * 20}... (5000 digits) is out of range: run ids are 1 to {TOP}"),
    ],
    ids=["1e18", "2^63-1", "2^63", "5000-digits"],
)
@pytest.mark.parametrize(
    "words",
    [
        ["show", "ID"],
        ["export", "ID"],
        ["check", "1", "--against", "ID"],
        ["baseline", "set", "n", "ID"],
    ],
    ids=["show", "export", "check", "baseline-set"],
)
def test_a_run_id_beyond_the_stored_ones_is_no_such_run_or_out_of_range(
    cli, tmp_path, ref, says, words
):
    db = tmp_path / "p.db"
    _stored_runs(db)
    before = database_dump(db)
    sentence = _sentence(cli(*[ref if w == "ID" else w for w in words], db_path=db))
    assert sentence.startswith(f"perfatlas: {says.format(db=db)}"), sentence
    assert database_dump(db) == before


# -- 7. and 8. output files: a write that fails names the file; an empty name is refused ---------
OUTPUTS = {
    "junit": (["check", "2", "--against", "1", "--junit"], "the JUnit XML (--junit)"),
    "export": (["export", "1", "-o"], "the export"),
    "report": (["report", "1", "-o"], "the report"),
    "compare": (["compare", "1", "2", "--report"], "the report"),
    "measure": (["measure", "example.sum", "samples=3", "--json"], "the result documents (--json)"),
}


@pytest.mark.parametrize("output", ["junit", "export", "report", "compare"])
def test_a_write_that_fails_names_the_file(cli, tmp_path, output):
    db = tmp_path / "p.db"
    _stored_runs(db, runs=2)
    before = database_dump(db)
    words, what = OUTPUTS[output]
    sentence = _sentence(cli(*words, "/dev/full", db_path=db))
    assert sentence == f"perfatlas: cannot write {what} to /dev/full: No space left on device"
    assert database_dump(db) == before


@pytest.mark.parametrize("output", sorted(OUTPUTS))
def test_an_empty_output_file_name_is_refused_not_ignored(cli, tmp_path, monkeypatch, output):
    db = tmp_path / "p.db"
    _stored_runs(db, runs=2)
    before = database_dump(db)
    monkeypatch.chdir(tmp_path)  # where a default file name would land
    words, what = OUTPUTS[output]
    sentence = _sentence(cli(*words, "", db_path=db))
    assert sentence == f"perfatlas: cannot write {what} to '': the file name is empty; give one"
    assert database_dump(db) == before
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("p.db")] == []


# -- 9. unknown top-level keys of a suite ---------------------------------------------------------
@pytest.mark.parametrize(
    "top, key",
    [
        ("bogus = 1\n", "'bogus'"),
        ('samples = "3"\n', "'samples'"),  # meant for the step
        ('[[steps]]\nbenchmark = "example.sum"\n', "'steps'"),  # misspelt
        ('"a\\nb" = 1\n', "'a\\nb'"),
    ],
    ids=["bogus", "step-key", "steps", "newline"],
)
def test_an_unknown_top_level_key_of_a_suite_is_refused(cli, tmp_path, top, key):
    suite = tmp_path / "s.toml"
    suite.write_text(f'description = "x"\n{top}\n[[step]]\nbenchmark = "example.sum"\n')
    db = tmp_path / "p.db"
    for words in (["run", str(suite), "--plan"], ["run", str(suite)]):
        sentence = _sentence(cli(*words, db_path=db))
        assert sentence == (
            f"perfatlas: suite {suite} has no key {key}; it takes description and [[step]] tables"
        )
    assert not db.exists()


# -- 10. an OpenMP team that the limits do not allow ------------------------------------------------
def _address_space_limit(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))

    return apply


@pytest.mark.parametrize(
    "program, words",
    [
        ("pa-hydro", ["threads=4096"]),
        ("pa-spmv", ["threads=4096", "problem=laplace2d", "n=100"]),
        ("pa-spsolve", ["threads=4096", "problem=laplace2d", "n=100"]),
        ("pa-parbench", ["threads=4096", "bind=none", "bytes=1GiB"]),
    ],
)
def test_threads_beyond_the_address_space_are_one_sentence_and_status_2(tmp_path, program, words):
    """4096 threads of 64 MiB of stack each (OMP_STACKSIZE) under a 4 GB address-space limit
    (prlimit --as): libgomp's 'Thread creation failed' and status 1 before."""
    done = subprocess.run(
        [str(executable(program)), *words, f"json={tmp_path / 'out.json'}"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OMP_STACKSIZE": "64M"},
        preexec_fn=_address_space_limit(4 * 10**9),
    )
    assert done.returncode == 2, (done.returncode, done.stderr[-800:])
    (line,) = done.stderr.strip().splitlines()
    assert re.fullmatch(
        f"{program}: cannot start 4096 OpenMP threads: thread [0-9]+ could not be created "
        r"\(Resource temporarily unavailable\), each with 67 MB of stack; ask for fewer threads, "
        r"a smaller OMP_STACKSIZE, or a higher limit \(ulimit -v, ulimit -u\)",
        line,
    ), line
    assert not (tmp_path / "out.json").exists() or not (tmp_path / "out.json").read_text()


# -- 11. FIFOs named by the user or the environment ---------------------------------------------
def _readers_of(fifo: Path) -> list[int]:
    """Processes whose environment names the FIFO (a pa-topology blocked on HWLOC_XMLFILE)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if str(fifo).encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return found


def _release(fifo: Path) -> None:
    """Open the FIFO for writing and close it: a reader blocked on it (the old code) sees EOF."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:  # no reader: nothing waits
        pass


@pytest.mark.parametrize(
    "variable, words, says",
    [
        (
            "HWLOC_XMLFILE",
            ["perfatlas", "topo"],
            "perfatlas: pa-topology: HWLOC_XMLFILE {fifo} is not a regular file (a FIFO); give an "
            "hwloc XML file (lstopo topology.xml)",
        ),
        (
            "HWLOC_XMLFILE",
            ["perfatlas", "run", "--plan"],
            "perfatlas: pa-topology: HWLOC_XMLFILE {fifo} is not a regular file (a FIFO); give an "
            "hwloc XML file (lstopo topology.xml)",
        ),
        (
            "PERFATLAS_HOSTFILE",
            ["perfatlas", "measure", "example.sum", "samples=3"],
            "perfatlas: hostfile {fifo} is not a regular file (a FIFO): give a text file of host "
            "names",
        ),
        (
            None,
            ["pa-parbench", "mode=program", "file={fifo}"],
            "pa-parbench: the program file {fifo} is not a regular file (a FIFO); give a program "
            "written by perfatlas",
        ),
        (
            None,
            ["pa-hwloc-export", "values={fifo}", "xml={out}"],
            "pa-hwloc-export: the values file {fifo} is not a regular file (a FIFO); give the "
            "values file perfatlas writes",
        ),
    ],
    ids=["topo", "run-plan", "hostfile", "parbench-program", "hwloc-export-values"],
)
def test_a_fifo_is_refused_not_waited_on(tmp_path, variable, words, says):
    fifo = tmp_path / "named.fifo"
    os.mkfifo(fifo)
    db = tmp_path / "p.db"
    _stored_runs(db)
    before = _digest(db)
    fill = {"fifo": str(fifo), "out": str(tmp_path / "out.xml")}
    argv = [w.format(**fill) for w in words]
    if argv[0] == "perfatlas":
        argv = [sys.executable, "-m", "perfatlas", "--db", str(db), *argv[1:]]
    else:
        argv[0] = str(executable(argv[0]))
    env = {**os.environ, **({variable: str(fifo)} if variable else {})}
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    finally:
        _release(fifo)
    assert done.returncode == 2, (done.returncode, done.stderr[-800:])
    assert done.stderr.strip().splitlines() == [says.format(**fill)]
    assert _digest(db) == before and not (tmp_path / "out.xml").exists()
    assert _readers_of(fifo) == []


def test_a_fifo_named_as_the_cpu_description_is_said_not_waited_on(tmp_path):
    """PERFATLAS_CPUINFO (another machine's /proc/cpuinfo, to check the counters' table): the
    counters are not available, and why; the measurement itself is made."""
    fifo = tmp_path / "cpuinfo.fifo"
    os.mkfifo(fifo)
    argv = [str(executable("pa-mem-latency")), "bytes=16KiB", "samples=3"]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PERFATLAS_CPUINFO": str(fifo)},
        )
    finally:
        _release(fifo)
    assert done.returncode == 0, done.stderr[-800:]
    assert json.loads(done.stdout)["execution"]["numa_accesses"] == {
        "available": False,
        "reason": f"the CPU description {fifo} is not a regular file (a FIFO); give a copy of a "
        "/proc/cpuinfo",
    }


def test_a_fifo_as_slurm_conf_is_refused_before_a_slurm_command_reads_it(tmp_path, monkeypatch):
    from perfatlas.cluster import slurm

    fifo = tmp_path / "slurm.fifo"
    os.mkfifo(fifo)
    monkeypatch.setenv("SLURM_CONF", str(fifo))
    assert slurm._config_problem() == (
        f"SLURM_CONF names {fifo}, which is not a regular file (a FIFO)",
        0.0,
    )
