"""The HTML report and the terminal summary of a real (small) run, rendered in headless Chromium."""

import re
from html.parser import HTMLParser
from importlib import resources

import pytest

from perfatlas.machine.topology import Machine
from perfatlas.report import write_report
from perfatlas.store.database import Store
from perfatlas.store.run_data import RunData
from perfatlas.terminal.run_summary import print_summary

SECTIONS = {
    "machine": "Machine and run context",
    "findings": "Findings",
    "topology": "Topology (hwloc)",
    "memory-latency": "Memory latency",
    "memory-bandwidth": "Memory bandwidth",
    "contention": "Memory contention",
    "noise": "OS noise",
    "warnings": "Warnings",
}


def one_numa_node() -> bool:
    return len(Machine.detect().numa_nodes) == 1


def expected_sections() -> dict[str, str]:
    """The tiny suite asks for remote memory: on one NUMA node it is 'not measurable here'."""
    sections = dict(SECTIONS)
    warnings = sections.pop("warnings")
    if one_numa_node():
        sections["not-measurable"] = "Not measurable here"
    return {**sections, "warnings": warnings}


class Outline(HTMLParser):
    """Section ids, h2 titles and svg count of an HTML document."""

    def __init__(self):
        super().__init__()
        self.sections, self.headings, self.svgs, self._in_h2 = [], [], 0, False

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            self.sections.append(dict(attrs).get("id"))
        self._in_h2 = tag == "h2"
        self.svgs += tag == "svg"

    def handle_data(self, data):
        if self._in_h2 and data.strip():
            self.headings.append(data.strip())
            self._in_h2 = False


def outline(html: str) -> Outline:
    parser = Outline()
    parser.feed(html)
    return parser


def section_html(html: str, name: str) -> str:
    match = re.search(rf'<section id="{name}">(.*?)</section>', html, re.S)
    assert match, f"section {name} missing"
    return match.group(1)


def test_the_report_has_every_section_with_data_in_order(small_run):
    html = small_run.report.read_text()
    found = outline(html)
    assert found.sections == list(expected_sections())
    assert found.headings == list(expected_sections().values())
    assert found.svgs >= 4  # latency, two-thread latency, bandwidth panels, contention


def test_the_report_is_one_self_contained_file(small_run):
    html = small_run.report.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", html)
    assert "<script" not in html and "<link" not in html and "<img" not in html
    assert "<style>" in html and ":root" in html  # CSS inline


def test_each_figure_carries_units_spread_and_context(small_run):
    html = small_run.report.read_text()
    latency = section_html(html, "memory-latency")
    assert "ns per load" in latency and "95 % CI" in latency
    assert "bound to cpu 0 (read back)" in latency and "pages on node" in latency
    assert "KiB pages" in latency and "samples/point" in latency
    assert "memory of cpu 0" in latency  # the two-thread method: both CPUs on cpu 0's memory
    assert "hwloc" in latency and "capacity estimate" in latency
    bandwidth = section_html(html, "memory-bandwidth")
    assert "GB/s" in bandwidth and "Write-allocate traffic is not counted" in bandwidth
    all_threads = len(Machine.detect().pus)
    assert "non-temporal" in bandwidth and "1 thread," in bandwidth
    assert f"{all_threads} threads," in bandwidth
    contention = section_html(html, "contention")
    assert "bootstrap" in contention and "other core streams reads" in contention
    assert "other core streams writes" in contention


def test_machine_context_names_timer_build_and_status(small_run):
    machine = section_html(small_run.report.read_text(), "machine")
    for label in (
        "kernel",
        "frequency governor",
        "transparent huge pages",
        "clock source",
        "benchmark timer",
        "resolution",
        "compiler and flags",
        "MPI",
        "environment",
        "machine fingerprint",
        "complete",
    ):
        assert label in machine, label


def test_unmeasurable_results_and_warnings_are_listed_with_their_result(small_run):
    html = small_run.report.read_text()
    if one_numa_node():
        unmeasurable = section_html(html, "not-measurable")
        assert "node=remote" in unmeasurable and "not measurable here" in unmeasurable
    warnings = section_html(html, "warnings")
    assert "only 3 samples" in warnings and "mem.latency" in warnings  # samples=3 in the suite


def test_chromium_renders_the_sections_and_the_plots(small_run, render_html, tmp_path):
    dom = render_html(small_run.report, "--dump-dom", "--virtual-time-budget=2000")
    found = outline(dom)
    assert found.headings == list(expected_sections().values())
    assert found.svgs >= 4
    screenshot = tmp_path / "report.png"
    render_html(small_run.report, f"--screenshot={screenshot}", "--window-size=1400,3000")
    assert (
        screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 50_000
    )


def test_a_measure_run_gets_a_short_report_without_empty_sections(cli, tmp_path):
    assert (
        cli(
            "measure", "mem.bandwidth", "op=copy", "bytes=64KiB", "samples=3", "min_sample_time=1ms"
        ).code
        == 0
    )
    path = tmp_path / "one.html"
    result = cli("report", "last", "-o", str(path))
    assert result.code == 0, result.err
    found = outline(path.read_text())
    expected = ["machine", "findings", "topology", "memory-bandwidth", "warnings"]
    assert found.sections == expected  # findings: the peak bandwidth


def test_an_interrupted_run_is_marked_at_the_top(cli, tmp_path):
    assert (
        cli("measure", "mem.latency", "bytes=64KiB", "samples=3", "min_sample_time=1ms").code == 0
    )
    store = Store(cli.db)
    run_id = store.resolve_run("last")
    store.finish_run(run_id, "interrupted")
    html = write_report(RunData.load(store, run_id), tmp_path / "r.html").read_text()
    header = html.split("<main>")[0]
    assert "This run is interrupted" in header and "status-interrupted" in header


def test_a_report_to_an_unwritable_place_is_one_sentence(cli, tmp_path):
    assert (
        cli("measure", "mem.latency", "bytes=64KiB", "samples=3", "min_sample_time=1ms").code == 0
    )
    result = cli("report", "last", "-o", str(tmp_path / "missing" / "r.html"))
    assert result.code == 2 and "cannot write the report" in result.err


def test_the_summary_shows_levels_peaks_contention_and_what_went_wrong(small_run, capsys):
    print_summary(RunData.load(Store(small_run.db), small_run.run_id))
    out = capsys.readouterr().out
    for text in (
        "memory levels",
        "peak bandwidth, GB/s",
        "1 thread",
        "contention: loaded / alone",
        "other core reads",
        "warning(s)",
        "finding(s)",
    ):
        assert text in out, text
    if one_numa_node():
        assert "not measurable here" in out
    assert "memory levels" in small_run.stdout  # `perfatlas run` printed it too


def test_topo_prints_packages_numa_nodes_and_caches(cli):
    result = cli("topo")
    assert result.code == 0, result.err
    for text in ("package(s)", "NUMA nodes", "caches", "L1", "PUs", "huge page sizes"):
        assert text in result.out, text


def test_the_templates_ship_with_the_package():
    templates = resources.files("perfatlas.report") / "templates"
    assert (templates / "report.html.j2").is_file() and (templates / "report.css").is_file()


@pytest.mark.parametrize("name", list(SECTIONS))
def test_every_expected_section_is_registered(name):
    from perfatlas.report.report_sections import all_sections

    assert name in {s.name for s in all_sections()}


def test_a_run_without_results_still_reports_the_machine(tmp_path, capsys):
    machine = Machine.detect()
    store = Store(tmp_path / "empty.db")
    run_id = store.start_run(
        fingerprint=machine.fingerprint,
        topology=machine.topology,
        context=machine.context(),
        suite="quick",
        argv=["perfatlas", "run"],
        software={},
    )
    store.finish_run(run_id, "interrupted")
    html = write_report(RunData.load(store, run_id), tmp_path / "r.html").read_text()
    assert outline(html).sections == ["machine", "topology"]
    assert "no result document in this run" in html and "This run is interrupted" in html
    print_summary(RunData.load(store, run_id))
    assert "interrupted" in capsys.readouterr().out
