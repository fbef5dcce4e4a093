"""Every perfatlas subcommand (discovered from the argument parser) given bad input: exit status
2, one line on stderr, no traceback, no hang, and nothing stored changed."""

from __future__ import annotations

import argparse
import os

import pytest
from bad_input import bounded, database_dump

from perfatlas.cli.entry import build_parser, main
from perfatlas.store.database import Store

MISSING = "/nonexistent-perfatlas-folder"
HUGE_CPUS = "0-100000000"


def subcommands() -> list[str]:
    parser = build_parser()
    (choices,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(choices.choices)


def bad_inputs(files: dict[str, str]) -> dict[str, list[list[str]]]:
    """A few bad inputs of every command; `files` are hostile files (fifo, latin1, deep, ...)."""
    fifo, latin1, deep, steps = files["fifo"], files["latin1"], files["deep"], files["steps"]
    return {
        "run": [
            [fifo, "--plan"],
            [latin1, "--plan"],
            [deep, "--plan"],
            [steps, "--plan"],
            ["quick", "--plan", "--threads", HUGE_CPUS],
            ["quick", "--plan", "--threads", "0"],
            ["quick", "--plan", "--repeat", "1000000000"],
            ["quick", "--plan", "--llc", "1e999"],
            ["quick", "--plan", "--np", "1e999"],
            ["quick", "--repeat", "0"],
        ],
        "measure": [
            ["example.sum", "bytes=1e999"],
            ["example.sum", "bytes=nan"],
            ["example.sum", "bytes=9" + "9" * 400],
            ["example.sum", "samples=1e999"],
            ["mem.latency", f"cpus={HUGE_CPUS}"],
            ["example.sum", "--json", f"{MISSING}/x.json"],
            ["example.sum", "--repeat", "1000000000"],
            ["example.sum", "--db", fifo],
            ["example.sum", "--db", files["folder"]],
            ["example.sum", "--db", files["garbage"]],
        ],
        "sweep": [
            ["example.sum", "--plan", "--threads", HUGE_CPUS],
            ["example.sum", "--plan", "bytes=inf"],
            ["example.sum", "--plan", "--repeat", "0"],
            ["example.sum", "--plan", "--repeat", "1000000000"],
            ["example.sum", "--plan", "--mempolicy", "node:²"],
        ],
        "list": [["extra"]],
        "show": [["²"], ["9" * 30], ["--db", fifo], ["--db", files["garbage"]], ["--db", MISSING]],
        "report": [["²"], ["9" * 30], ["1", "-o", f"{MISSING}/r.html"], ["--profile", fifo]],
        "profile": [
            ["--json", f"{MISSING}/p.json", "--", "true"],
            ["--out", fifo, "--", "true"],
        ],
        "compare": [
            ["1", "1", "--expect", "inf"],
            ["1", "1", "--expect", "nan"],
            ["1", "9" * 30],
            ["1", "1", "--report", f"{MISSING}/c.html"],
        ],
        "check": [
            ["1", "--against", "9" * 30],
            ["1", "--against", "²"],
            ["²", "--against", "1"],
            ["1", "--against", "1", "--tolerance", "inf"],
            ["1", "--against", "1", "--metrics", "²"],
            ["1", "--against", "1", "--junit", f"{MISSING}/j.xml"],
            ["1", "--against", "1", "--junit", fifo],
        ],
        "baseline": [
            ["set", "²", "1"],
            ["set", "x" * 100, "1"],
            ["set", "nightly", "9" * 30],
            ["rm", "nightly"],
            ["list", "extra"],
        ],
        "export": [["1", "-o", f"{MISSING}/x.json"], ["9" * 30], ["²"], ["1", "-o", fifo]],
        "topo": [["--bogus"]],
        "doctor": [["--bogus"]],
        "parbench": [
            ["base", "--cpus", HUGE_CPUS],
            ["base", "--threads", "1e999"],
            ["base", "--threads", HUGE_CPUS],
        ],
        "scenario": [
            ["run", fifo],
            ["run", latin1],
            ["run", deep],
            ["run", "overload", "--scale", "inf"],
            ["run", "overload", "--scale", "1e-300"],
            ["matrix", "--bytes", "1e999"],
            ["matrix", "--duration", "inf"],
            ["matrix", "--cpus", HUGE_CPUS],
            ["matrix", "--json", f"{MISSING}/m.json"],
        ],
    }


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("hostile")
    os.mkfifo(folder / "fifo.toml")
    (folder / "latin1.toml").write_bytes("description = 'caf\xe9'".encode("latin-1"))
    (folder / "deep.toml").write_text("x = " + "[" * 5000 + "]" * 5000)
    (folder / "steps.toml").write_text("step = 5")
    (folder / "garbage.db").write_bytes(b"not a database" * 100)
    (folder / "folder").mkdir()
    db = folder / "perfatlas.db"
    store = Store(db)
    run = store.start_run(
        fingerprint="f", topology={}, context={}, suite="t", argv=["x"], software={}
    )
    store.add_document(
        run,
        {
            "schema": "perfatlas.result/1",
            "benchmark": "example.sum",
            "params": {"bytes": 65536},
            "samples": {"seconds": [1.0, 2.0, 3.0]},
            "units": {"seconds": "s"},
        },
        [],
    )
    store.finish_run(run, "complete")
    store.close()
    files = {name: str(folder / f"{name}.toml") for name in ("fifo", "latin1", "deep", "steps")}
    return {
        **files,
        "garbage": str(folder / "garbage.db"),
        "folder": str(folder / "folder"),
        "db": str(db),
    }


def test_every_subcommand_has_bad_inputs(hostile):
    assert sorted(bad_inputs(hostile)) == subcommands()


def _cases() -> list[tuple[str, int]]:
    fake = {k: k for k in ("fifo", "latin1", "deep", "steps", "garbage", "folder")}
    return [(name, i) for name, cases in bad_inputs(fake).items() for i in range(len(cases))]


@pytest.mark.parametrize("command, index", _cases())
def test_bad_input_is_exit_2_and_one_line(hostile, capsys, monkeypatch, tmp_path, command, index):
    words = bad_inputs(hostile)[command][index]
    db = hostile["db"]
    before = database_dump(db)
    monkeypatch.chdir(tmp_path)  # what a refused command might write stays here
    try:
        with bounded():
            code = main([command, "--db", db, *words])
    except SystemExit as exit_:  # argparse
        code = exit_.code
    err = capsys.readouterr().err
    lines = err.splitlines()
    said = [line for line in lines if line.startswith("perfatlas") and "warning:" not in line]
    assert code == 2, f"{command} {words}: exit {code}: {err[-500:]}"
    assert "Traceback" not in err and len(said) == 1 and lines[-1] == said[0], err
    assert database_dump(db) == before
