"""Local and remote DRAM accesses from hardware counters (native/common/numa_counters.c) and the
remote-access fraction built on them (perfatlas.machine.placement.remote_fraction).

This machine is a VM without a PMU: the documents must say that nothing was counted and why, in
the exact sentence shapes of numa_counters.c. The counted path is checked with synthetic figures;
the event table is checked for consistency, and every row of it through the executables with a
cpuinfo file of that CPU (PERFATLAS_CPUINFO)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from perfatlas.launch.isa import architecture, cpuinfo_architecture, emulated, first_processor
from perfatlas.launch.native import executable
from perfatlas.machine.placement import Placement, obtained, remote_fraction
from perfatlas.machine.topology import Machine

SOURCE = Path(__file__).resolve().parents[1] / "native" / "common" / "numa_counters.c"
TABLE_COVERS = "Intel Xeon from Haswell-EP to Emerald Rapids and AMD Zen 2 to Zen 5"
# Every sentence explain_refusal (numa_counters.c) writes when perf_event_open refuses an event:
# the event it tried is what a test checks; errno and PAPI's own reason (any text: PAPI's messages
# differ between versions and CPUs, e.g. "PAPI_set_opt(PAPI_INHERIT): Event does not exist") vary.
_EVENT = r"([\w.]+)"  # the only capturing group of each sentence
_PAPI = r"(?:; PAPI: .+)?"
REFUSED = re.compile(
    "|".join(
        (
            rf"no hardware counters on this machine \(perf_event_open\({_EVENT}\): "
            rf"(?:ENOENT|ENODEV|EOPNOTSUPP){_PAPI}\)",
            rf"perf_event_open\({_EVENT}\) is not permitted \((?:EACCES|EPERM){_PAPI}\) although "
            r"perf_event_paranoid=\S+ allows it: a container's seccomp profile or a security "
            r"module blocks it",
            rf"perf_event_paranoid=\S+ forbids counting this process's events \(perf_event_open"
            rf"\({_EVENT}\): (?:EACCES|EPERM){_PAPI}\); set /proc/sys/kernel/perf_event_paranoid "
            r"to 2 or lower",
            rf"perf_event_open\({_EVENT}\) failed \(E[A-Z0-9]+: [^;]+{_PAPI}\)",
        )
    )
)


def refused_event(reason: str) -> str | None:
    """The event named by one of explain_refusal's sentences, or None if `reason` is not one."""
    match = REFUSED.fullmatch(reason)
    return next(event for event in match.groups() if event) if match else None


# numa_counters.c's ARM_NO_PAIR, after the CPU's name
ARM_NO_PAIR_TEXT = (
    "its PMU counts accesses served by another socket (REMOTE_ACCESS, event 0x31) and last-level "
    "cache misses (LL_CACHE_MISS_RD, 0x37) but no event counts local DRAM accesses or tells DRAM "
    "from a remote cache, so local and remote DRAM accesses are not counted"
)
NOT_STARTED = (
    "not counted: this benchmark does not start the NUMA access counters (pa_numa_counters_start)"
)


# -- the event table, read from the C source ------------------------------------------------------
EVENT = (
    r'\{"(?P<name>[\w.]+)",\s*(?:"(?P<pfm>[\w:]+)"|NULL),'
    r"\s*0x(?P<event>[0-9a-f]+),\s*0x(?P<umask>[0-9a-f]+)\}"
)
ROW = re.compile(
    r'\{"(?P<vendor>GenuineIntel|AuthenticAMD)", (?P<family>\w+), (?P<first>\w+), (?P<last>\w+), '
    r'"(?P<cpu>[^"]+)", &(?P<pair>\w+)\}'
)


def event_pairs() -> dict[str, dict[str, dict]]:
    """{pair name: {"local": event, "remote": event}} from the `event_pair` definitions."""
    text = SOURCE.read_text()
    pairs = {}
    for name, body in re.findall(r"static const event_pair (\w+) = \{(.*?)\n\};", text, re.S):
        pairs[name] = {}
        for side in ("local", "remote"):
            match = re.search(rf"\.{side} = {EVENT}", body)
            pairs[name][side] = match.groupdict() if match else None
    return pairs


def table_rows() -> list[dict]:
    text = SOURCE.read_text()
    table = text[text.index("static const cpu_events table[]") :]
    table = table[: table.index("};")]
    rows = [m.groupdict() for m in ROW.finditer(table)]
    for row in rows:
        for key in ("family", "first", "last"):
            row[key] = int(row[key], 0)
    return rows


def test_every_cpu_of_the_table_has_a_local_and_a_remote_event_of_one_kind():
    pairs, rows = event_pairs(), table_rows()
    assert len(rows) == 13 and {row["pair"] for row in rows} == set(pairs)
    for name, pair in pairs.items():
        local, remote = pair["local"], pair["remote"]
        assert local and remote, f"{name} lacks its local or remote event"
        assert local["name"] != remote["name"] and local["umask"] != remote["umask"]
        assert local["event"] == remote["event"]  # two umasks of one event, counted alike
        assert (local["pfm"] is None) == (remote["pfm"] is None)  # PAPI for both or neither
        if local["pfm"]:  # libpfm4's names: one event, two umasks
            assert local["pfm"].split(":")[0] == remote["pfm"].split(":")[0]
            assert local["pfm"] != remote["pfm"]
    for row in rows:
        assert row["first"] <= row["last"] <= 0xFF
    for a in rows:  # one CPU, one row
        for b in rows:
            if a is not b and (a["vendor"], a["family"]) == (b["vendor"], b["family"]):
                assert a["last"] < b["first"] or b["last"] < a["first"], (a["cpu"], b["cpu"])


def test_every_refusal_sentence_names_its_event_whatever_papi_says():
    event = "MEM_LOAD_L3_MISS_RETIRED.LOCAL_DRAM"
    honest = [  # as written on an Intel Xeon VM (AVX-512, PAPI 7), on this VM, and by the others
        f"no hardware counters on this machine (perf_event_open({event}): ENOENT; PAPI: "
        "PAPI_set_opt(PAPI_INHERIT): Event does not exist)",
        f"no hardware counters on this machine (perf_event_open({event}): ENODEV)",
        f"no hardware counters on this machine (perf_event_open({event}): EOPNOTSUPP; PAPI: "
        "perf_event component disabled (Insufficient permissions (paranoid=3)))",
        f"perf_event_open({event}) is not permitted (EPERM) although perf_event_paranoid=2 "
        "allows it: a container's seccomp profile or a security module blocks it",
        f"perf_event_paranoid=3 forbids counting this process's events (perf_event_open({event}): "
        "EACCES; PAPI: PAPI_start: Permission level does not permit operation); set "
        "/proc/sys/kernel/perf_event_paranoid to 2 or lower",
        f"perf_event_open({event}) failed (EINVAL: Invalid argument)",
    ]
    assert [refused_event(reason) for reason in honest] == [event] * len(honest)
    for other in (
        NOT_STARTED,
        f"no hardware counters on this machine (perf_event_open({event}): EACCES)",
        "reading the counters failed (EIO)",
    ):
        assert refused_event(other) is None, other


# -- the documents here ----------------------------------------------------------------------------
def accesses(name: str, *words: str, cpuinfo: Path | None = None) -> dict:
    env = None if cpuinfo is None else dict(os.environ, PERFATLAS_CPUINFO=str(cpuinfo))
    done = subprocess.run(
        [str(executable(name)), *words], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    if isinstance(document, list):
        document = document[0]
    return document["execution"]["numa_accesses"]


def bandwidth(cpuinfo: Path | None = None) -> dict:
    return accesses(
        "pa-mem-bandwidth", "bytes=64KiB", "samples=1", "min_sample_time=1ms", cpuinfo=cpuinfo
    )


def has_pmu() -> bool:
    """A core PMU perf_event can use: "cpu", or "cpu_core"/"cpu_atom" on hybrid Intel CPUs."""
    devices = Path("/sys/bus/event_source/devices")
    return any((devices / name).exists() for name in ("cpu", "cpu_core", "cpu_atom"))


def this_cpu_row() -> dict | None:
    fields = first_processor(Path("/proc/cpuinfo").read_text())
    if "vendor_id" not in fields:  # an Arm CPU: the table has no pair for it
        return None
    vendor, family, model = fields["vendor_id"], int(fields["cpu family"]), int(fields["model"])
    for row in table_rows():
        same = (row["vendor"], row["family"]) == (vendor, family)
        if same and row["first"] <= model <= row["last"]:
            return row
    return None


def cpuinfo_file(tmp_path: Path, vendor: str, family: int, model: int) -> Path:
    path = tmp_path / f"cpuinfo-{vendor}-{family}-{model}"
    path.write_text(
        f"processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\n"
        "model name\t: a CPU of the table\n\nprocessor\t: 1\nvendor_id\t: Other\n"
    )
    return path


def test_the_documents_say_whether_the_counters_counted_and_never_invent_a_number():
    row = this_cpu_row()
    for got in (
        bandwidth(),
        accesses("pa-mem-latency", "bytes=16KiB", "samples=1", "min_sample_time=1ms"),
    ):
        if got.get("available"):  # a machine with counters (not this VM)
            assert got["local"] >= 0 and got["remote"] >= 0
            assert re.match(r"(perf_event|PAPI [\d.]+): \S+, \S+ \(.+\)", got["source"])
            continue
        assert set(got) == {"available", "reason"} and got["available"] is False
        if emulated():  # qemu-user: the host's /proc/cpuinfo, the host's counters
            assert got["reason"] == (
                "/proc/cpuinfo describes an x86-64 CPU but this program is aarch64: it runs under "
                "emulation (qemu-user), where the hardware counters are not this program's"
            )
        elif cpuinfo_architecture(Path("/proc/cpuinfo").read_text()) == "aarch64":
            assert got["reason"].endswith(ARM_NO_PAIR_TEXT)
        elif row is None:
            assert got["reason"].startswith("no local and remote DRAM access events are known")
        elif not has_pmu():  # a VM without a virtual PMU, like this one
            event = refused_event(got["reason"])
            assert event, got["reason"]
            assert event == event_pairs()[row["pair"]]["local"]["name"]


def test_every_row_of_the_table_is_chosen_for_its_cpu(tmp_path):
    if has_pmu():
        pytest.skip("this machine has a PMU: another CPU's raw events could open on it")
    pairs = event_pairs()
    for row in table_rows():
        for model in sorted({row["first"], row["last"]}):
            got = bandwidth(cpuinfo_file(tmp_path, row["vendor"], row["family"], model))
            event = refused_event(got["reason"])
            assert event, (row["cpu"], got["reason"])
            assert event == pairs[row["pair"]]["local"]["name"], row["cpu"]


def test_a_cpu_outside_the_table_and_an_unreadable_cpuinfo_are_said_exactly(tmp_path):
    got = bandwidth(cpuinfo_file(tmp_path, "AuthenticAMD", 0x15, 2))  # Bulldozer: not covered
    assert got == {
        "available": False,
        "reason": "no local and remote DRAM access events are known for this CPU (AuthenticAMD "
        "family 0x15 model 0x2): the table in native/common/numa_counters.c covers " + TABLE_COVERS,
    }
    got = bandwidth(cpuinfo_file(tmp_path, "GenuineIntel", 6, 0x9E))  # a desktop: not covered
    assert "(GenuineIntel family 0x6 model 0x9e)" in got["reason"]
    missing = tmp_path / "missing" / "cpuinfo"
    fields = (
        "CPU implementer and CPU part"
        if architecture() == "aarch64"
        else "vendor_id, cpu family and model"
    )
    assert bandwidth(missing) == {
        "available": False,
        "reason": f"cannot read the CPU's {fields} from {missing}",
    }


@pytest.mark.parametrize(
    ("fixture", "cpu"),
    [
        ("neoverse-v2.txt", "Arm Neoverse V2 (implementer 0x41, part 0xd4f)"),
        ("neoverse-n1.txt", "Arm Neoverse N1 (implementer 0x41, part 0xd0c)"),
    ],
)
def test_an_arm_core_is_named_and_says_why_it_has_no_dram_pair(fixture, cpu):
    got = bandwidth(Path(__file__).parent / "data" / "cpuinfo" / fixture)
    assert got == {"available": False, "reason": f"{cpu}: {ARM_NO_PAIR_TEXT}"}


def test_a_benchmark_that_does_not_start_the_counters_says_so():
    got = accesses("pa-noise", "duration=10ms")
    assert got == {"available": False, "reason": NOT_STARTED}


def test_rank_zero_of_an_mpi_run_writes_its_counts_or_the_reason():
    launcher = shutil.which("mpirun")
    if launcher is None:
        pytest.skip("no mpirun")
    argv = [launcher, "--allow-run-as-root", "--oversubscribe", "-np", "2"]
    argv += [str(executable("pa-spsolve")), "solver=mumps", "problem=laplace2d", "n=8"]
    done = subprocess.run(
        [*argv, "repeat=1", "warmup=0"], capture_output=True, text=True, timeout=120
    )
    if "solver=mumps is not available" in done.stderr:
        pytest.skip("pa-spsolve was built without MUMPS")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["derived"]["processes"] == 2
    got = document["execution"]["numa_accesses"]  # rank 0's process
    if emulated():
        assert got["reason"].endswith("where the hardware counters are not this program's")
    elif not has_pmu() and this_cpu_row():
        assert refused_event(got["reason"]), got["reason"]
    else:
        assert got.get("available") or got["reason"] != NOT_STARTED


# -- the remote fraction ---------------------------------------------------------------------------
TWO_NODES = Machine(
    topology={
        "pus": [
            {"os_index": i, "core": i, "package": i // 2, "numa_node": i // 2} for i in range(4)
        ],
        "numa_nodes": [
            {"os_index": 0, "memory_bytes": 2**30, "cpus": "0-1"},
            {"os_index": 1, "memory_bytes": 2**30, "cpus": "2-3"},
        ],
    }
)
THREADS = [{"cpu": 0, "cpus_allowed": "0"}, {"cpu": 2, "cpus_allowed": "2"}]
SHARES = {0: 0.75, 1: 0.25}
NODE_OF = {0: 0, 1: 0, 2: 1, 3: 1}
SOURCE_TEXT = (
    "perf_event: MEM_LOAD_L3_MISS_RETIRED.LOCAL_DRAM, MEM_LOAD_L3_MISS_RETIRED.REMOTE_DRAM "
    "(Intel Ice Lake-SP)"
)


def test_counted_accesses_give_the_measured_fraction():
    counted = {"available": True, "local": 300, "remote": 100, "source": SOURCE_TEXT}
    assert remote_fraction(THREADS, SHARES, NODE_OF, counted) == {
        "remote_fraction": 0.25,
        "remote_fraction_method": f"measured: hardware counters ({SOURCE_TEXT})",
    }
    # the counts win over the placement estimate (0.5 here), and need no page placement
    assert remote_fraction([], {}, NODE_OF, counted)["remote_fraction"] == 0.25
    none = remote_fraction(THREADS, SHARES, NODE_OF, dict(counted, local=0, remote=0))
    assert none == {
        "remote_fraction": None,
        "remote_fraction_method": f"measured: hardware counters ({SOURCE_TEXT}) counted no DRAM "
        "access, so there is no fraction",
    }


def test_without_counts_the_estimate_is_unchanged_and_says_why_counters_were_not_used():
    why = "no hardware counters on this machine (perf_event_open(x): ENOENT)"
    got = remote_fraction(THREADS, SHARES, NODE_OF, {"available": False, "reason": why})
    # thread on node 0 reaches 1 - 0.75 remote, thread on node 1 reaches 1 - 0.25: mean 0.5
    assert got == {
        "remote_fraction": 0.5,
        "remote_fraction_method": "estimated from page placement against thread placement, "
        f"every thread reads every page alike (hardware counters not used: {why})",
    }
    older = remote_fraction(THREADS, SHARES, NODE_OF)  # a document from before the counters
    assert older["remote_fraction"] == 0.5
    assert older["remote_fraction_method"].endswith(
        "(hardware counters not used: the document carries no hardware counts)"
    )
    assert remote_fraction([], {}, NODE_OF, {"available": False, "reason": why}) == {
        "remote_fraction": None,
        "remote_fraction_method": f"no page placement read back; hardware counters: {why}",
    }


def test_obtained_reads_the_counts_of_the_execution_block():
    document = {
        "execution": {
            "threads": THREADS,
            "migrations": 0,
            "bytes_on_node": {"0": 3 * 4096, "1": 4096},
            "numa_accesses": {"available": True, "local": 1, "remote": 3, "source": SOURCE_TEXT},
        }
    }
    got = obtained(document, Placement("close", "local"), TWO_NODES)
    assert got["pages_on_node"] == SHARES and got["remote_fraction"] == 0.75
    assert got["remote_fraction_method"].startswith("measured: hardware counters (perf_event: ")
    del document["execution"]["numa_accesses"]
    # first touch: thread 0 reads node 0's pages (its half of the work, all local), thread 2 has
    # only a quarter of the pages on its node: a quarter of all accesses go remote
    assert obtained(document, Placement("close", "local"), TWO_NODES)["remote_fraction"] == 0.25
    # bound or interleaved pages are spread alike for every thread: 1 - 0.75 and 1 - 0.25
    assert obtained(document, Placement("close", "interleave"), TWO_NODES)["remote_fraction"] == 0.5


def test_first_touch_counts_each_thread_on_its_own_pages():
    # two threads on two nodes, pages half on each: none remote (uniform access would say half)
    even = remote_fraction(THREADS, {0: 0.5, 1: 0.5}, NODE_OF, first_touch=True)
    assert even["remote_fraction"] == 0.0
    assert "first touch: each thread reads pages it touched" in even["remote_fraction_method"]
    # the two-thread method: the owner on node 0 touched every page, the other thread reads them
    assert remote_fraction(THREADS, {0: 1.0}, NODE_OF, first_touch=True)["remote_fraction"] == 0.5
    # one thread: every page off its node is remote, whatever the model
    one = [THREADS[0]]
    assert remote_fraction(one, SHARES, NODE_OF, first_touch=True)["remote_fraction"] == 0.25


def test_a_real_document_here_gives_the_estimate_with_the_documents_reason():
    done = subprocess.run(
        [str(executable("pa-mem-bandwidth")), "bytes=64KiB", "samples=1", "min_sample_time=1ms"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    document = json.loads(done.stdout)
    counts = document["execution"]["numa_accesses"]
    if counts.get("available"):
        pytest.skip("this machine counts DRAM accesses")
    machine = Machine.detect()
    got = obtained(document, Placement("close", "local"), machine)
    if len(machine.numa_nodes) == 1:
        assert got["remote_fraction"] == 0.0  # one node: every page is local
    assert got["remote_fraction_method"] == (
        "estimated from page placement against thread placement, first touch: each thread reads "
        f"pages it touched (hardware counters not used: {counts['reason']})"
    )
