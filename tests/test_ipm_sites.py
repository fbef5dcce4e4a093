"""Call sites (docs/profile.md, Call sites): programs written for these tests (tests/data/sites)
call MPI from known lines, marked "site: NAME", of an executable and of a shared library it links,
built with -O2 -g, PIE and not, in C, C++ and Fortran (`use mpi`, `use mpi_f08`), compiled with the
wrappers of the MPI the launcher runs (Open MPI; MPICH under `make test-mpich`). With
address-space randomization on, every site's call, count, bytes, function, file and line must be
exact; threads keep their sites apart; a stripped library and a binary gone after the run give
offsets with the reason."""

from __future__ import annotations

import ctypes
import json
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
from test_ipm import mpirun_command, run_path_profiled
from test_profile_show import profile_run as perfatlas_profile
from test_profile_show import shown

from perfatlas.launch.launchers import detect_flavour
from perfatlas.profile.analysis_profile import call_sites
from perfatlas.profile.profile_files import FROM_RANK_FILES, read_folder

SOURCES = Path(__file__).resolve().parent / "data" / "sites"
MARK = re.compile(r"site: ([a-z][a-z0-9-]*)")


def marks(name: str) -> dict[str, list[int]]:
    """Marker -> the lines of tests/data/sites/`name` that carry it."""
    found = defaultdict(list)
    for number, text in enumerate((SOURCES / name).read_text().splitlines(), start=1):
        if match := MARK.search(text):
            found[match.group(1)].append(number)
    return found


def compiler(language: str) -> str:
    """The wrapper of the launcher's MPI for `language` (cc, cxx, f90), else skip."""
    family = detect_flavour(mpirun_command()[0]).family
    wrapper = shutil.which(f"mpi{language}.{family}") or (
        shutil.which(f"mpi{language}") if family == "openmpi" else None
    )
    if wrapper is None:
        pytest.skip(f"no mpi{language} wrapper for {family}")
    return wrapper


def compile_(language: str, *args: str | Path) -> None:
    done = subprocess.run(
        [compiler(language), "-O2", "-g", *map(str, args)], capture_output=True, text=True
    )
    if done.returncode != 0 and language == "f90" and "mpi_f08" in done.stderr:
        pytest.skip("this MPI has no mpi_f08 module")
    assert done.returncode == 0, done.stderr


def build_c(folder: Path, pie: bool) -> Path:
    """sites_main.c linked with libsites.so (sites_lib.c), both in `folder`."""
    folder.mkdir(exist_ok=True)
    compile_("cc", "-shared", "-fPIC", SOURCES / "sites_lib.c", "-o", folder / "libsites.so")
    program = folder / "sites"
    flags = ["-fPIE", "-pie"] if pie else ["-fno-pie", "-no-pie"]
    compile_("cc", *flags, f"-I{SOURCES}", SOURCES / "sites_main.c", "-o", program,
             f"-L{folder}", "-lsites", f"-Wl,-rpath,{folder}")  # fmt: skip
    return program


def profile_run(program: Path, folder: Path, env: dict[str, str] | None = None) -> dict:
    """The program on 2 ranks under the profiler; the profile read as `perfatlas profile` does."""
    folder.mkdir()
    done = run_path_profiled(folder, program, env=env)
    assert done.returncode == 0, done.stderr + done.stdout
    document = read_folder(folder, [str(program)])
    assert document is not None
    return document


def sites_by_line(document: dict) -> dict[tuple, tuple]:
    """(call, source file, line) -> (count, bytes, ranks, function) of each site."""
    found = {}
    for row in document["call_sites"]["sites"]:
        frame = row["frames"][0]
        assert frame["file"] is not None, frame
        key = (row["call"], Path(frame["file"]).name, frame["line"])
        assert key not in found, key
        found[key] = (row["count"], row["bytes"], row["ranks"], frame["function"])
    return found


def c_expected() -> dict[tuple, tuple]:
    """What sites_main.c and sites_lib.c do on 2 ranks, summed over them."""
    main, lib = marks("sites_main.c"), marks("sites_lib.c")
    send, receive = lib["lib-barrier"]
    return {
        ("MPI_Comm_rank", "sites_main.c", main["main-rank"][0]): (2, 0, 2, "main"),
        ("MPI_Allreduce", "sites_main.c", main["main-sum-1"][0]): (6, 6 * 8, 2, "main"),
        ("MPI_Allreduce", "sites_main.c", main["main-sum-2"][0]): (10, 10 * 16, 2, "main"),
        ("MPI_Send", "sites_lib.c", lib["lib-send"][0]): (6, 6 * 32, 1, "sites_lib_send"),
        ("MPI_Recv", "sites_lib.c", lib["lib-recv"][0]): (6, 6 * 32, 1, "sites_lib_receive"),
        ("MPI_Barrier", "sites_lib.c", send): (1, 0, 1, "sites_lib_send"),
        ("MPI_Barrier", "sites_lib.c", receive): (1, 0, 1, "sites_lib_receive"),
        ("MPI_Barrier", "sites_main.c", main["main-barrier"][0]): (2, 0, 2, "main"),
    }


def executable_bases(folder: Path, program: Path) -> set[int]:
    """The load biases of `program` in the two ranks' processes."""
    bases = set()
    for rank in (0, 1):
        document = json.loads((folder / f"ipm-rank-{rank}.json").read_text())
        bases |= {o["base"] for o in document["objects"] if o["path"] == str(program.resolve())}
    return bases


@pytest.mark.parametrize("pie", [True, False], ids=["pie", "no-pie"])
def test_c_sites_in_the_executable_and_a_library_are_exact(tmp_path, pie):
    program = build_c(tmp_path / "build", pie)
    document = profile_run(program, tmp_path / "run")
    assert sites_by_line(document) == c_expected()
    assert document["call_sites"]["callstack"] == 1
    bases = executable_bases(tmp_path / "run", program)
    randomized = Path("/proc/sys/kernel/randomize_va_space").read_text().strip() != "0"
    if pie and randomized:  # each rank's executable elsewhere, its sites one site all the same
        assert len(bases) == 2, bases
    if not pie:
        assert bases == {0}


def libunwind_loads() -> bool:
    try:
        ctypes.CDLL("libunwind.so.8")
    except OSError:
        return False
    return True


@pytest.mark.parametrize("unwinder", ["", "backtrace"], ids=["default", "backtrace"])
def test_a_deeper_stack_names_the_callers(tmp_path, unwinder):
    """The same callers whichever unwinder: libunwind's where it loads (the default; the
    Makefile installs it), else glibc's backtrace(3), which PERFATLAS_IPM_UNWINDER=backtrace
    picks."""
    program = build_c(tmp_path / "build", pie=True)
    env = {"PERFATLAS_IPM_CALLSTACK": "2", "PERFATLAS_IPM_UNWINDER": unwinder}
    document = profile_run(program, tmp_path / "run", env)
    assert document["call_sites"]["callstack"] == 2
    expected = unwinder or ("libunwind" if libunwind_loads() else "backtrace")
    assert document["call_sites"]["unwinder"] == expected
    calls_lib = marks("sites_main.c")["main-calls-lib"]
    rows = {row["call"]: row for row in document["call_sites"]["sites"]}
    for call, index in (("MPI_Send", 0), ("MPI_Recv", 1)):
        site, caller = rows[call]["frames"]
        assert (Path(site["file"]).name, site["line"]) == ("sites_lib.c", marks("sites_lib.c")[
            "lib-send" if call == "MPI_Send" else "lib-recv"][0])  # fmt: skip
        assert (Path(caller["file"]).name, caller["line"], caller["function"]) == (
            "sites_main.c",
            calls_lib[index],
            "main",
        )
    assert len(rows["MPI_Send"]["frames"]) == 2
    # The same counts as at depth 1: the callers split no site of this program.
    assert sites_by_line(document) == c_expected()


def test_sites_off_leave_the_profile_without_them(tmp_path):
    program = build_c(tmp_path / "build", pie=True)
    document = profile_run(program, tmp_path / "run", {"PERFATLAS_IPM_CALLSTACK": "0"})
    assert "call_sites" not in document
    assert call_sites(document).missing.startswith("no call sites")
    assert {call["call"] for call in document["calls"]} >= {"MPI_Send", "MPI_Recv"}


def test_a_bad_callstack_setting_says_so_and_keeps_one_frame(tmp_path):
    program = build_c(tmp_path / "build", pie=True)
    (tmp_path / "run").mkdir()
    done = run_path_profiled(tmp_path / "run", program, env={"PERFATLAS_IPM_CALLSTACK": "deep"})
    assert done.returncode == 0, done.stderr
    assert "PERFATLAS_IPM_CALLSTACK=deep is not a number of frames from 0 to 8" in done.stderr
    assert sites_by_line(read_folder(tmp_path / "run", [])) == c_expected()


def test_a_bad_unwinder_setting_says_so_and_unwinds_all_the_same(tmp_path):
    program = build_c(tmp_path / "build", pie=True)
    (tmp_path / "run").mkdir()
    env = {"PERFATLAS_IPM_CALLSTACK": "2", "PERFATLAS_IPM_UNWINDER": "gdb"}
    done = run_path_profiled(tmp_path / "run", program, env=env)
    assert done.returncode == 0, done.stderr
    assert "PERFATLAS_IPM_UNWINDER=gdb is neither libunwind nor backtrace" in done.stderr
    document = read_folder(tmp_path / "run", [])
    assert document["call_sites"]["unwinder"] == ("libunwind" if libunwind_loads() else "backtrace")
    assert sites_by_line(document) == c_expected()


def test_cxx_sites_name_the_template_demangled(tmp_path):
    (tmp_path / "build").mkdir()
    program = tmp_path / "build" / "sites-cxx"
    compile_("cxx", SOURCES / "sites_cxx.cpp", "-o", program)
    found = sites_by_line(profile_run(program, tmp_path / "run"))
    lines = marks("sites_cxx.cpp")
    bcast = ("MPI_Bcast", "sites_cxx.cpp", lines["cxx-bcast"][0])
    assert set(found) == {bcast, ("MPI_Barrier", "sites_cxx.cpp", lines["cxx-barrier"][0])}
    assert found[bcast][:3] == (8, 8 * 24, 2)
    assert found[bcast][3].startswith("void halo::broadcast<double>(double*, int, int)")


@pytest.mark.parametrize("source", ["sites_mpi.f90", "sites_f08.f90"])
def test_fortran_sites_are_the_fortran_programs_lines(tmp_path, source):
    """Under Open MPI through the library's own entry points, under MPICH through its binding
    (libmpichfort, unwound past) or the library's mpi_f08 entry points."""
    (tmp_path / "build").mkdir()
    program = tmp_path / "build" / Path(source).stem
    compile_("f90", SOURCES / source, "-o", program, f"-J{tmp_path / 'build'}")
    found = sites_by_line(profile_run(program, tmp_path / "run"))
    lines = marks(source)
    assert {key: value[:3] for key, value in found.items()} == {
        ("MPI_Comm_rank", source, lines["f-rank"][0]): (2, 0, 2),
        ("MPI_Allreduce", source, lines["f-sum"][0]): (6, 6 * 8, 2),
        ("MPI_Barrier", source, lines["f-barrier"][0]): (2, 0, 2),
    }


def test_threads_keep_their_sites_apart(tmp_path):
    (tmp_path / "build").mkdir()
    program = tmp_path / "build" / "sites-threads"
    compile_("cc", SOURCES / "sites_threads.c", "-o", program, "-pthread")
    found = sites_by_line(profile_run(program, tmp_path / "run"))
    lines = marks("sites_threads.c")
    assert {key: value[:3] for key, value in found.items()} == {
        ("MPI_Sendrecv", "sites_threads.c", lines["thread-1"][0]): (600, 600 * 4, 2),
        ("MPI_Sendrecv", "sites_threads.c", lines["thread-2"][0]): (1000, 1000 * 4, 2),
    }


def test_stripped_and_vanished_binaries_give_offsets_with_the_reason(tmp_path):
    program = build_c(tmp_path / "build", pie=True)
    whole = profile_run(program, tmp_path / "whole")
    subprocess.run(["strip", "--strip-all", str(tmp_path / "build" / "libsites.so")], check=True)
    stripped = profile_run(program, tmp_path / "stripped")

    def library_frames(document: dict) -> dict[tuple, dict]:
        return {
            (row["call"], row["frames"][0]["function"]): row["frames"][0]
            for row in document["call_sites"]["sites"]
            if row["frames"][0]["object"].endswith("libsites.so")
        }

    before, after = library_frames(whole), library_frames(stripped)
    assert set(before) == set(after) and len(before) == 4
    for key, frame in after.items():  # its functions from the dynamic symbol table
        assert frame["offset"] == before[key]["offset"]  # strip moves no code
        assert frame["file"] is None and frame["line"] is None and frame["reason"]
        assert f"libsites.so+{frame['offset']:#x}" in frame["label"]
    # The executable gone after the run: its sites are offsets with the reason, the rest stays.
    path = str(program.resolve())
    program.unlink()
    gone = read_folder(tmp_path / "whole", [])
    mains = [r for r in gone["call_sites"]["sites"] if r["frames"][0]["object"] == path]
    assert len(mains) == 4
    for row in mains:
        assert row["frames"][0]["file"] is None
        assert "cannot read" in row["frames"][0]["reason"]
    assert gone["calls"] == whole["calls"]


def test_show_the_report_and_json_list_the_call_sites(cli, tmp_path):
    """`perfatlas profile` of the C program: `show` prints the top call sites with their source
    lines, `show --json` has them under profile.sites, the report's table has them too."""
    program = build_c(tmp_path / "build", pie=True)
    run = perfatlas_profile(tmp_path, mpirun_command(), str(program))
    main, lib = marks("sites_main.c"), marks("sites_lib.c")
    text = shown(cli, run).out
    assert "top call sites by time" in text
    sum_2 = f"main (sites_main.c:{main['main-sum-2'][0]})"
    send = f"sites_lib_send (sites_lib.c:{lib['lib-send'][0]})"
    assert sum_2 in text and send in text
    assert "| MPI_Allreduce(two, sum, 2, MPI_DOUBLE, MPI_SUM" in text
    sites = json.loads(shown(cli, run, "--json").out)["profile"]["sites"]
    rows = {(row["site"], row["call"]): row for row in sites["sites"]}
    assert (rows[(sum_2, "MPI_Allreduce")]["count"], rows[(send, "MPI_Send")]["ranks"]) == (10, 1)
    assert sites["callstack"] == 1 and sites["missing"] is None
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Top call sites by time" in html and send in html
    assert "MPI_Send(buffer, 4, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD);" in html


def test_a_garbled_rank_file_costs_the_sites_only(tmp_path):
    """A complete profile keeps every figure when a rank file cannot be read; it says why it has
    no call sites, and the views say it too."""
    program = build_c(tmp_path / "build", pie=True)
    whole = profile_run(program, tmp_path / "run")
    path = tmp_path / "run" / "ipm-rank-1.json"
    rank = json.loads(path.read_text())
    rank["objects"][0]["segments"] = [[5]]
    path.write_text(json.dumps(rank))
    document = read_folder(tmp_path / "run", [str(program)])
    assert document["call_sites"] == {
        "missing": f"{path} is not a usable perfatlas-ipm rank file: objects[0].segments[0] is "
        "not [start, end]"
    }
    left = {k: v for k, v in whole.items() if k not in FROM_RANK_FILES}
    assert {k: v for k, v in document.items() if k != "call_sites"} == left
    assert call_sites(document).missing == document["call_sites"]["missing"]
