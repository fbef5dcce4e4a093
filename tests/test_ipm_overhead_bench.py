"""bench/ipm_overhead.py's harness without launching anything: the configurations alternated in a
round (no profiler, perfatlas at each call-stack depth, the peers found), a peer not found
skipped with one line, a peer's stdout lines left out of the loops, paired medians."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import ipm_overhead  # noqa: E402  (bench/ is scripts, not a package)


def arguments(*words: str):
    sys_argv = sys.argv
    sys.argv = ["ipm_overhead.py", *words]
    try:
        return ipm_overhead.parse_args()
    finally:
        sys.argv = sys_argv


def test_loop_lines_are_kept_and_a_peers_messages_left_out():
    out = "mpiP: Found MPIP environment variable [-f /tmp/x]\nproc_null 20.5\nproc_null 21.5\n"
    out += "mpiP: Storing mpiP output in [/tmp/x/a.mpiP].\npingpong 700\nunknown 3\n"
    out += "timer 25.5\n"
    assert ipm_overhead.loop_medians(out) == {"proc_null": 21.0, "pingpong": 700.0, "timer": 25.5}


def test_the_goal_is_20_ns_or_the_timers_floor_where_larger():
    runs = {"timer": {"no profiler": [25.0, 26.0], "perfatlas": [27.0]}}
    assert ipm_overhead.goal_ns(runs) == 26.0
    assert ipm_overhead.goal_ns({"timer": {"no profiler": [12.0, 14.0]}}) == 20.0


def test_paired_medians_take_each_rounds_difference():
    value, lo, hi = ipm_overhead.paired_difference([10, 30, 50], [9, 28, 47])
    assert value == 2.0
    assert 1.0 <= lo <= value <= hi <= 3.0


def test_callstack_depths_are_checked():
    assert ipm_overhead.depths("8,0,1,4") == [0, 1, 4, 8]
    with pytest.raises(Exception, match="from 0 to 8"):
        ipm_overhead.depths("9")


def test_unwinders_are_checked():
    assert ipm_overhead.unwinders("backtrace,libunwind,backtrace") == ["backtrace", "libunwind"]
    with pytest.raises(Exception, match="libunwind, backtrace"):
        ipm_overhead.unwinders("gdb")


def test_each_depth_and_each_peer_found_is_a_configuration(tmp_path, monkeypatch, capsys):
    peers = tmp_path / "peers"
    (peers / "openmpi" / "ipm").mkdir(parents=True)
    (peers / "openmpi" / "ipm" / "libipm.so").write_text("")
    monkeypatch.setenv(ipm_overhead.PEERS_ENV, str(peers))
    monkeypatch.setattr(ipm_overhead, "library", lambda: tmp_path / "libperfatlas-ipm.so")
    made = ipm_overhead.configurations(arguments("--callstack", "0,1,8"), "openmpi", tmp_path)
    assert [c.label for c in made] == [
        "no profiler",
        "perfatlas's build, PERFATLAS_IPM_CALLSTACK=0",
        "perfatlas's build, PERFATLAS_IPM_CALLSTACK=1",
        "perfatlas's build, PERFATLAS_IPM_CALLSTACK=8, PERFATLAS_IPM_UNWINDER=libunwind",
        "perfatlas's build, PERFATLAS_IPM_CALLSTACK=8, PERFATLAS_IPM_UNWINDER=backtrace",
        "IPM",
    ]
    assert [c.in_apps for c in made] == [True, False, True, False, False, False]
    assert made[4].settings == {
        "PERFATLAS_IPM_CALLSTACK": "8",
        "PERFATLAS_IPM_UNWINDER": "backtrace",
    }
    assert (made[2].unwinder, made[3].unwinder) == ("", "libunwind")
    assert made[5].settings == {"IPM_REPORT": "none", "IPM_LOGDIR": str(tmp_path)}
    said = capsys.readouterr().out.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("mpiP: skipped, no ")
    assert "bench/build_peers.sh mpip SOURCE" in said[0]


def test_no_peers_leaves_them_out(tmp_path, monkeypatch):
    monkeypatch.setattr(ipm_overhead, "library", lambda: tmp_path / "libperfatlas-ipm.so")
    made = ipm_overhead.configurations(
        arguments("--no-peers", "--callstack", "1"), "mpich", tmp_path
    )
    assert [c.label for c in made] == [
        "no profiler",
        "perfatlas's build, PERFATLAS_IPM_CALLSTACK=1",
    ]


def test_mpip_samples_fewer_calls(tmp_path, monkeypatch):
    lib = tmp_path / "libmpiP.so"
    lib.write_text("")
    monkeypatch.setattr(ipm_overhead, "library", lambda: tmp_path / "libperfatlas-ipm.so")
    monkeypatch.setenv(ipm_overhead.PEERS_ENV, str(tmp_path / "none"))
    args = arguments("--mpip-library", str(lib), "--mpip-calls", "500", "--callstack", "1")
    made = ipm_overhead.configurations(args, "openmpi", tmp_path)
    assert (made[-1].label, made[-1].calls, made[-1].settings) == (
        "mpiP",
        500,
        {"MPIP": f"-f {tmp_path}"},
    )


def test_a_frame_is_priced_over_the_whole_depth_and_step_by_step():
    assert ipm_overhead.frame_pairs([0, 1, 4, 8]) == [(1, 8), (1, 4), (4, 8)]
    assert ipm_overhead.frame_pairs([1, 8]) == [(1, 8)]
    assert ipm_overhead.frame_pairs([0, 1]) == []
    assert ipm_overhead.frame_pairs([0, 4, 8]) == []
