import pytest

from perfatlas.common.errors import UserError
from perfatlas.plan.suite import expand, load, size_sweep, suite_names


class FakeMachine:
    pus = [0, 1, 2, 3]


def test_size_sweep_is_geometric_with_the_asked_density():
    assert size_sweep({"from": "4KiB", "to": "64KiB", "per_doubling": 1}) == [
        4096,
        8192,
        16384,
        32768,
        65536,
    ]
    four = size_sweep({"from": "4KiB", "to": "8KiB", "per_doubling": 4})
    assert len(four) == 5 and four[0] == 4096 and four[-1] == 8192
    with pytest.raises(UserError):
        size_sweep({"from": "8KiB", "to": "4KiB"})


def test_expansion_is_the_product_of_the_lists_and_threads_all_means_every_pu():
    suite = {
        "step": [
            {
                "benchmark": "mem.bandwidth",
                "op": ["copy", "triad"],
                "bytes": ["1MiB", "2MiB"],
                "threads": [1, "all", 4],
            }
        ]
    }
    measurements = expand(suite, FakeMachine(), series=False)
    assert len(measurements) == 2 * 2 * 2  # 'all' == 4 is measured once
    assert {m.raw["threads"] for m in measurements} == {1, 4}
    series = expand(suite, FakeMachine())  # the sizes of one op and thread count: one launch
    assert len(series) == 2 * 2
    assert all(m.raw["bytes"] == ["1MiB", "2MiB"] for m in series)


def test_threads_option_overrides_the_suite():
    suite = {"step": [{"benchmark": "mem.bandwidth", "threads": [1]}, {"benchmark": "mem.latency"}]}
    measurements = expand(suite, FakeMachine(), threads=[2, 3])
    assert [m.raw.get("threads") for m in measurements] == [2, 3, None]


def test_shipped_suites_load_and_name_known_benchmarks():
    assert {"quick", "full"} <= set(suite_names())
    for name in suite_names():
        for step in load(name)["step"]:
            from perfatlas.benchmarks import get

            get(step["benchmark"])


def test_a_suite_file_that_is_not_toml_is_one_sentence(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[step]\nbenchmark=")
    with pytest.raises(UserError, match="not valid TOML"):
        load(str(bad))


def test_sweeps_can_end_at_a_multiple_of_the_last_level_cache():
    class Machine(FakeMachine):
        last_level_cache_bytes = sizing_llc_bytes = 32 * 2**20  # not probed: hwloc's

    sizes = size_sweep({"from": "32MiB", "to": "4xLLC"}, Machine())
    assert sizes == [32 * 2**20, 64 * 2**20, 128 * 2**20]
    with pytest.raises(UserError, match="multiple of the LLC"):
        size_sweep({"from": "1MiB", "to": "fourxLLC"}, Machine())


@pytest.mark.parametrize("name", ["quick", "apps"])
def test_the_quick_and_apps_suites_expand_and_resolve_on_this_machine(name):
    """Every step of the suites that run the application proxies expands and its parameters
    resolve here, as `perfatlas run` does before the first measurement."""
    from perfatlas.machine.topology import Machine

    machine = Machine.detect()
    measurements = expand(load(name), machine)
    for m in measurements:
        m.benchmark.resolve(m.raw, machine)
    proxies = {m.benchmark.name for m in measurements if m.benchmark.name.startswith("app.")}
    assert proxies == {"app.spsolve", "app.madbench", "app.spmv", "app.sweep", "app.hydro"}
    sweeps = [m.raw for m in measurements if m.benchmark.name == "app.sweep"]
    assert min(r["np"] for r in sweeps) == 1  # the reference of the measured efficiency
    hydros = [m.raw for m in measurements if m.benchmark.name == "app.hydro"]
    assert 1 in [r["np"] for r in hydros]  # the model's per-cell time
