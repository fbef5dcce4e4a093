"""PARbench scenarios (perfatlas.scenario): synthesis hits its target on made-up base data,
scenario files with errors are rejected with the line at fault, impossible targets are one
sentence, a short real scenario's accounting adds up, the interference matrix, the report."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess

import pytest

from perfatlas.common.errors import UserError
from perfatlas.launch.native import executable
from perfatlas.machine.topology import Machine
from perfatlas.scenario.cell_verdicts import NO_INTERFERENCE, UNDER_MIN_EFFECT
from perfatlas.scenario.locate import Locator
from perfatlas.scenario.matrix import NOT_JUDGED, _document
from perfatlas.scenario.scenario import parse
from perfatlas.scenario.side_by_side import INTERVAL_S
from perfatlas.scenario.synthesis import (
    TOLERANCE,
    Target,
    check_reachable,
    misses,
    synthesize,
)
from perfatlas.scenario.variants import Variant
from perfatlas.store.database import Store
from perfatlas.store.schema import SCHEMA_VERSION

# -- synthesis on made-up base data ------------------------------------------------------------


def made_up_variants(n: int = 40, seed: int = 3) -> list[Variant]:
    """Variants with invented pass times and rates: streaming, compute-heavy, write-heavy."""
    rng = random.Random(seed)
    variants = []
    for k in range(n):
        pass_s = rng.uniform(1e-4, 2e-3)
        named = rng.uniform(1e9, 20e9) * pass_s
        variants.append(
            Variant(
                kernel=f"k{k}",
                bytes=240_000,
                stride=1,
                threads=1,
                pass_s=pass_s,
                bytes_per_pass=named,
                store_bytes_per_pass=named * rng.choice([0.0, 1 / 3, 0.5, 0.25]),
                flops_per_pass=named / 8 * rng.choice([0.0, 0.1, 1.0, 4.0]),
                overhead_s=1e-4,
            )
        )
    return variants


def mix_rates(program) -> dict[str, float]:
    """The rates of the chosen mix, recomputed here from the lines and the variants."""
    seconds = program.startup_s + sum(
        line.variant.overhead_s + line.repeat * line.variant.pass_s for line in program.lines
    )
    named = sum(line.repeat * line.variant.bytes_per_pass for line in program.lines)
    stored = sum(line.repeat * line.variant.store_bytes_per_pass for line in program.lines)
    flops = sum(line.repeat * line.variant.flops_per_pass for line in program.lines)
    return {
        "runtime_s": seconds,
        "transfer_rate": named / seconds,
        "flop_rate": flops / seconds,
        "write_fraction": stored / named,
    }


@pytest.mark.parametrize(
    "target",
    [
        Target(8e9, 1e9, 0.3),
        Target(transfer_rate=3e9),
        Target(transfer_rate=12e9, write_fraction=0.2),
        Target(flop_rate=2e9),
    ],
)
def test_synthesis_hits_the_target_mix(target):
    program = synthesize(
        runtime_s=3.0, threads=1, candidates=made_up_variants(), target=target, seed=1
    )
    reached = mix_rates(program)
    assert reached["runtime_s"] == pytest.approx(3.0, rel=0.01)
    for name in ("transfer_rate", "flop_rate", "write_fraction"):
        asked = getattr(target, name)
        if asked is not None:
            assert reached[name] == pytest.approx(asked, rel=TOLERANCE), name
    assert all(abs(miss) <= TOLERANCE for miss in misses(program).values())
    per_slice: dict[int, int] = {}
    for line in program.lines:
        assert line.repeat >= 1
        per_slice[line.slice] = per_slice.get(line.slice, 0) + 1
    assert max(per_slice.values()) <= 4  # a basic NNLS solution: at most one variant per row
    assert 3.0 / 0.2 <= len(program.slices) <= 3.0 / 0.05 + 1  # slices of 50-200 ms
    kernels_used = {line.variant.kernel for line in program.lines}
    assert len(kernels_used) > 4  # pools drawn per slice: variety over the program


def test_synthesis_varies_around_the_average_and_is_deterministic():
    made_up = made_up_variants()
    one = synthesize(runtime_s=2.0, threads=1, candidates=made_up, target=Target(6e9), seed=4)
    again = synthesize(runtime_s=2.0, threads=1, candidates=made_up, target=Target(6e9), seed=4)
    other = synthesize(runtime_s=2.0, threads=1, candidates=made_up, target=Target(6e9), seed=5)
    assert one.text("t") == again.text("t") and one.text("t") != other.text("t")
    factors = [s.factor for s in one.slices]
    assert min(factors) < 0.95 and max(factors) > 1.05  # +-20 % variation by default
    weighted = sum(s.factor * s.duration_s for s in one.slices) / sum(
        s.duration_s for s in one.slices
    )
    assert weighted == pytest.approx(1.0)


def test_explicit_mix_keeps_its_time_shares():
    made_up = made_up_variants(4)
    program = synthesize(
        runtime_s=2.0,
        threads=1,
        candidates=made_up[:2],
        mix=[(made_up[0], 3.0), (made_up[1], 1.0)],
        seed=1,
    )
    busy = {v.kernel: 0.0 for v in made_up[:2]}
    for line in program.lines:
        busy[line.variant.kernel] += line.repeat * line.variant.pass_s
    assert busy["k0"] / (busy["k0"] + busy["k1"]) == pytest.approx(0.75, abs=0.01)
    assert mix_rates(program)["runtime_s"] == pytest.approx(2.0, rel=0.01)


@pytest.mark.parametrize(
    "target, says",
    [
        (Target(transfer_rate=1e12), "transfer rate 1 TB/s is above the"),
        (Target(flop_rate=1e13), "flop rate 10 Tflop/s is above the"),
        (Target(write_fraction=0.9), "write fraction 0.9 is above the 0.5"),
    ],
)
def test_a_rate_above_the_base_data_names_the_limit(target, says):
    with pytest.raises(UserError, match=says) as caught:
        check_reachable(target, made_up_variants(), 1, "job 'x'")
    assert "that the base data shows this machine can do with 1 thread(s)" in str(caught.value)


def test_rates_that_cannot_be_reached_together_are_one_sentence():
    slow_compute = Variant("compute", 240_000, 1, 1, 1e-3, 1e5, 0.0, 1e7, 1e-4)  # 0.1 GB/s
    fast_stream = Variant("stream", 240_000, 1, 1, 1e-3, 1e7, 0.0, 0.0, 1e-4)  # 10 GB/s
    with pytest.raises(UserError, match="no mix of the base data's 1-thread variants reaches"):
        synthesize(
            runtime_s=1.0,
            threads=1,
            candidates=[slow_compute, fast_stream],
            target=Target(transfer_rate=9e9, flop_rate=9e9),
        )


# -- scenario files --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def machine() -> Machine:
    return Machine.detect()


GOOD = """\
name = "t"
cpus = "0-1"
[[job]]
name = "a"
count = "N+1"
runtime = "1s"
target = { transfer_rate = "40%", write_fraction = 0.25 }
[[job]]
name = "b"
threads = "N"
runtime = "1s"
start = "0.2s"
nice = 3
bind = "0-1"
mix = [{ kernel = "triad", bytes = "240kB", share = 2 }, { kernel = "dot", bytes = "2xLLC" }]
"""


def test_a_good_scenario_parses(machine):
    scenario = parse(GOOD, "t.toml", machine)
    a, b = scenario.jobs
    assert scenario.cpus == (0, 1) and scenario.instances == 4
    assert (a.count, a.threads, a.transfer_rate.value, a.transfer_rate.relative) == (
        3,
        1,
        0.4,
        True,
    )
    assert (b.threads, b.start_s, b.nice, b.bind) == (2, 0.2, 3, (0, 1))
    assert [(p.kernel, p.bytes, p.share) for p in b.mix] == [
        ("triad", 240_000, 2.0),
        ("dot", 2 * machine.last_level_cache_bytes, 1.0),
    ]
    assert parse(GOOD, "t.toml", machine, scale=0.5).jobs[1].start_s == pytest.approx(0.1)


@pytest.mark.parametrize(
    "line, replace, says",
    [
        (6, 'runtime = "1s', "line 6: not valid TOML"),
        (5, 'colour = "red"', "line 5: unknown key 'colour' in job 1"),
        (
            10,
            "threads = 3",
            "line 10: job 'b': threads = 3 is more than the 2 CPUs of the subset 0-1",
        ),
        (5, 'count = "M+1"', "line 5: count = 'M+1' is not a number or an expression of N"),
        (
            7,
            'target = { transfer_rate = "fast" }',
            "line 7: transfer_rate = 'fast' is not a rate",
        ),
        (7, 'target = { flops = "1Gflop/s" }', "line 7: unknown key 'flops' in the target of"),
        (14, 'bind = "0-5"', "line 14: job 'b': bind names cpu 2, outside the subset 0-1"),
        (
            15,
            'mix = [{ kernel = "triad" }, { kernel = "nope" }]',
            "line 15: job 'b': kernel 'nope' is not in the parbench catalog",
        ),
        (13, "nice = 40", "line 13: job 'b': nice = 40 is outside -20 .. 19"),
        (2, 'cpus = "0-7"', "line 2: cpus = '0-7': cpu 2 does not exist"),
        (6, 'start = "1s"', "line 3: job 'a' has no runtime"),
    ],
)
def test_a_scenario_with_an_error_names_the_line(machine, line, replace, says):
    lines = GOOD.splitlines()
    lines[line - 1] = replace
    with pytest.raises(UserError) as caught:
        parse("\n".join(lines) + "\n", "t.toml", machine)
    assert str(caught.value).startswith("scenario t.toml line ")
    assert says in str(caught.value)


def test_locator_finds_keys_of_tables_inline_tables_and_arrays():
    text = (
        "[[job]]\nname = 'a'\n[[job]]\ntarget = { a = 1,\n  b = 2 }\n"
        "mix = [\n  { kernel = 'x' },\n  { kernel = 'y' },\n]\n[job.extra]\nz = 1\n"
    )
    where = Locator(text)
    assert where.line(("job", 0, "name")) == 2
    assert where.line(("job", 1, "target", "b")) == 5
    assert where.line(("job", 1, "mix", 1, "kernel")) == 8
    assert where.line(("job", 1, "extra", "z")) == 11
    assert where.line(("job", 1, "missing")) == 3  # the nearest enclosing table


# -- the native runner unpinned ---------------------------------------------------------------


def test_program_mode_bind_none_leaves_threads_to_the_os(tmp_path):
    program = tmp_path / "p.txt"
    program.write_text("kernel=triad bytes=240kB threads=2 repeat=3\n")
    done = subprocess.run(
        [str(executable("pa-parbench")), "mode=program", f"file={program}", "bind=none"],
        capture_output=True,
        text=True,
        preexec_fn=lambda: os.sched_setaffinity(0, {1}),
    )
    assert done.returncode == 0, done.stderr
    threads = json.loads(done.stdout)["placement"]["threads"]
    assert [(t["cpu_requested"], t["cpus_allowed"]) for t in threads] == [(-1, "1"), (-1, "1")]


# -- through the CLI, real processes ----------------------------------------------------------

# The stream job asks for a write fraction alone: dot's 0 and polynomial's 0.5 come from the
# kernels' declared bytes, so it is reachable on every machine. Whether a transfer rate such as
# "50%" is reachable together with it depends on the machine's relative kernel rates (the
# synthesis tests above cover rates on made-up base data).
SHORT = """\
name = "short"
cpus = "0-1"
[[job]]
name = "stream"
count = 2
runtime = "1s"
kernels = ["triad", "dot", "polynomial"]
bytes = ["240kB"]
target = { write_fraction = 0.2 }
[[job]]
name = "omp"
threads = 2
runtime = "1s"
start = "0.2s"
mix = [{ kernel = "polynomial", bytes = "240kB" }, { kernel = "dot", bytes = "240kB" }]
"""


def test_short_scenario_runs_and_its_accounting_adds_up(cli, tmp_path, render_html):
    path = tmp_path / "short.toml"
    path.write_text(SHORT)
    out = tmp_path / "out"
    result = cli(
        "scenario", "run", str(path), "--json", str(tmp_path / "s.json"), "--out", str(out)
    )
    assert result.code == 0, result.err
    saved = json.loads((tmp_path / "s.json").read_text())
    jobs = saved["jobs"]
    assert sorted(j["job"] for j in jobs) == ["omp", "stream#1", "stream#2"]
    for job in jobs:
        account = job["accounting"]
        assert account["ok"], account
        assert account["accounted_s"] == pytest.approx(
            job["wall_s"] * job["threads"], abs=account["allowed_s"]
        )
        assert job["user_s"] > 0 and job["waiting_s"] >= 0 and job["dedicated_s"] > 0.5
        assert job["extension"] == pytest.approx(job["wall_s"] / job["dedicated_s"])
        samples = len(job["timeline"])
        times = [point[0] for point in job["timeline"]]
        # one sample per round of the schedule, the first and the last. Round k starts no
        # earlier than k intervals after the scenario's origin (a late round is caught up, never
        # run ahead), so a job sampled until time t has at most t / interval + 1 rounds + 2.
        assert 0.5 * job["wall_s"] / INTERVAL_S <= samples <= times[-1] / INTERVAL_S + 3
        assert times == sorted(times) and job["start_s"] < times[0] <= job["end_s"] + 0.05
        assert job["threads_seen"] == job["threads"]
    omp = next(j for j in jobs if j["job"] == "omp")
    # a job starts at its offset, never before it (how late is up to the machine's load)
    assert omp["start_s"] >= 0.2 and all(j["start_s"] >= 0 for j in jobs)
    summary = saved["summary"]
    assert summary["cpus"] == 2 and summary["jobs"] == 3
    assert summary["user_s"] == pytest.approx(sum(j["user_s"] for j in jobs))
    assert summary["idle_s"] == pytest.approx(
        max(0.0, summary["available_s"] - summary["user_s"] - summary["system_s"])
    )
    store = Store(cli.db)
    run_id = store.resolve_run("last")
    (stored,) = store.scenarios(run_id)
    assert stored["kind"] == "scenario" and len(stored["jobs"]) == 3
    assert {r.metric for r in store.results(run_id)} >= {"wall_s", "runtime_extension"}
    base = [r for r in store.runs() if r["suite"] == "parbench-base"]
    assert len(base) == 1  # built once, for the 3 kernels x 1 size x 2 thread counts
    report = out / f"run-{run_id}.html"
    html = report.read_text()
    section = html[html.index('id="scenario"') :]
    assert "Per-job timeline" in section and section.count("<svg") >= 2
    dom = render_html(report, "--dump-dom")
    assert 'id="scenario"' in dom


def test_impossible_targets_are_one_sentence_with_exit_2(cli, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(
        SHORT.replace("{ write_fraction", '{ transfer_rate = "1000GB/s", write_fraction')
    )
    result = cli("scenario", "run", str(path), "--out", str(tmp_path / "out"))
    assert result.code == 2
    (line,) = result.err.strip().splitlines()[-1:]
    assert line.startswith("perfatlas: job 'stream': transfer rate 1 TB/s is above the ")
    assert "that the base data shows this machine can do with 1 thread(s)" in line
    path.write_text(SHORT.replace("threads = 2", "threads = 3"))
    result = cli("scenario", "run", str(path))
    assert result.code == 2
    assert "line 12: job 'omp': threads = 3 is more than the 2 CPUs of the subset 0-1" in result.err


@pytest.mark.parametrize("trial", [1, 2])
def test_private_cache_kernels_on_separate_cores_show_no_measurable_interference(
    cli, tmp_path, trial
):
    """240 kB working sets stay in each core's private caches: in every trial no cell (alone and
    together interleaved over rounds) reads "slower" or "faster"; cells whose kernels waited for
    their CPUs (other processes) are not judged, by the tool itself."""
    out = tmp_path / "out"
    result = cli(
        "scenario", "matrix", "--classes", "stream,compute", "--bytes", "240kB",
        "--duration", "0.1s", "--rounds", "6", "--json", str(tmp_path / "m.json"),
        "--out", str(out),
    )  # fmt: skip
    assert result.code == 0, result.err
    matrix = json.loads((tmp_path / "m.json").read_text())
    assert matrix["classes"] == ["stream", "compute"] and matrix["rounds"] == 6
    assert matrix["kernels"] == {"stream": "triad", "compute": "polynomial"}
    assert len(matrix["slowdown"]) == 2 and all(len(row) == 2 for row in matrix["slowdown"])
    assert len(matrix["together_s"]) == 3  # stream-stream, stream-compute, compute-compute
    assert [len(t) for _, _, t, _ in matrix["together_samples_s"]] == [6, 6, 6]
    # alone on each CPU: first CPU as a pair's row, second as its column
    alone = {k: [len(cpu) for cpu in v] for k, v in matrix["alone_samples_s"].items()}
    assert alone == {"stream": [12, 6], "compute": [6, 12]}
    for i, row in enumerate(matrix["slowdown"]):
        for j, value in enumerate(row):
            lo, hi = matrix["slowdown_ci"][i][j]
            assert lo <= value <= hi, (i, j, lo, value, hi)
    if trial == 1:
        bad = cli("scenario", "matrix", "--classes", "stream,nope")
        assert bad.code == 2 and "kernel class 'nope' is not in the catalog" in bad.err
        few = cli("scenario", "matrix", "--classes", "stream", "--rounds", "1")
        assert few.code == 2 and "--rounds 1 must be from 2 to 100" in few.err
    assert all(0.0 <= w <= 1.0 for row in matrix["waited_share"] for w in row)
    verdicts = [v for row in matrix["verdicts"] for v in row]
    judged = [v for v in verdicts if not v.startswith(NOT_JUDGED)]
    if not judged:  # the tool said so itself: other processes held the CPUs in every cell
        pytest.skip(verdicts[0])
    quiet = {NO_INTERFERENCE, UNDER_MIN_EFFECT}
    assert set(judged) <= quiet, (matrix["slowdown_ci"], matrix["waited_share"])
    if NO_INTERFERENCE in judged:
        assert NO_INTERFERENCE in result.out
        html = next(out.glob("run-*.html")).read_text()
        assert "Interference matrix" in html and NO_INTERFERENCE in html


def test_a_cell_whose_kernels_waited_for_their_cpus_is_not_judged():
    """Kernels alone on their CPUs that waited for them measured other processes: their cells
    say so instead of a verdict; the undisturbed cells are judged."""
    fast, slow = [1.0, 1.01, 0.99, 1.0, 1.02], [2.0, 2.02, 1.98, 2.0, 2.04]
    alone = {"stream": [fast, fast], "compute": [fast, fast]}
    together = {
        ("stream", "stream"): (fast, fast),
        ("stream", "compute"): (slow, slow),
        ("compute", "compute"): (slow, slow),
    }
    waited = {("stream", ""): 0.01, ("compute", ""): 0.0, ("compute", "compute"): 0.3}
    kernels = {"stream": "triad", "compute": "polynomial"}
    matrix = _document(["stream", "compute"], kernels, alone, together, waited)
    assert matrix["waited_share"] == [[0.01, 0.01], [0.01, 0.3]]
    assert matrix["verdicts"][0][0] == NO_INTERFERENCE
    assert matrix["verdicts"][0][1] == matrix["verdicts"][1][0] == "slower"
    assert matrix["verdicts"][1][1] == (
        "not judged: its kernels waited up to 30% of their time for their CPUs "
        "(other processes ran there, perfatlas's own monitor among them)"
    )
    assert matrix["slowdown"][1][1] == pytest.approx(2.0, rel=0.02)  # measured, not judged


def test_schema_3_migration_adds_the_scenario_tables(tmp_path):
    path = tmp_path / "old.db"
    Store(path).close()
    db = sqlite3.connect(path)
    db.executescript("DROP TABLE scenario_jobs; DROP TABLE scenarios;")
    db.execute("UPDATE schema_version SET version = 2")
    db.commit()
    db.close()
    store = Store(path)
    run_id = store.start_run(
        fingerprint="f", topology={}, context={}, suite="s", argv=[], software={}
    )
    store.add_scenario(
        run_id,
        "scenario",
        "x",
        {"summary": {}},
        [
            {
                "job": "a",
                "threads": 1,
                "start_s": 0.0,
                "end_s": 1.0,
                "wall_s": 1.0,
                "user_s": 1.0,
                "system_s": 0.0,
                "waiting_s": 0.0,
            }
        ],
    )
    (found,) = store.scenarios(run_id)
    assert found["name"] == "x" and found["jobs"][0]["job"] == "a"
    assert store.db.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
