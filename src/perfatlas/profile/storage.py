"""A profile in the store: a run (suite "profile") holding the profile document, and its headline
figures as ordinary results (benchmark "ipm.profile"), so that `show`, `export` and `compare` see
them like any other figure. The run is written in one transaction: all of it or nothing."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from perfatlas.machine.topology import Machine, software_versions
from perfatlas.profile.analysis_profile import comm_fraction
from perfatlas.profile.profile_warnings import profile_warnings
from perfatlas.store.database import Store

BENCHMARK = "ipm.profile"


def headline(document: dict) -> dict | None:
    """The program's wallclock (the slowest rank's) and the share of all ranks' time spent in
    MPI (mpi_s + lbst_s over wall_s, IPM's %comm: analysis_profile.comm_fraction), one value
    each; None when the profile lacks per-rank times (a partial profile from rank files that
    carry none) or when they make no share (a wallclock of 1e-300 s: the document's numbers are
    only checked to be finite)."""
    in_mpi = comm_fraction(document)
    if in_mpi is None:
        return None
    wall = document["wallclock_s"]
    return {
        "schema": "perfatlas.result/1",
        "benchmark": BENCHMARK,
        "params": {"command": shlex.join(document["command"]), "tasks": document["tasks"]},
        "samples": {"wallclock_s": [wall["max"]], "comm_fraction": [in_mpi]},
        "units": {"wallclock_s": "s", "comm_fraction": ""},
        "derived": {"partial": document["partial"]},
    }


@dataclass(frozen=True)
class MachineRecord:
    """What a profile run stores of the machine, read once as the program starts (the context
    of a run is that of its start, as perfatlas run records it) and shared by the jobs it spawns."""

    fingerprint: str
    topology: dict
    context: dict
    software: dict
    topology_xml: str | None

    @classmethod
    def of(cls, machine: Machine) -> MachineRecord:
        return cls(
            machine.fingerprint,
            machine.topology,
            machine.context(),
            software_versions(),
            machine.hwloc_xml(),
        )


def store_profile(
    store: Store,
    machine: MachineRecord,
    argv: list[str],
    command: list[str],
    document: dict,
    status: str,
    suite: str = "profile",
) -> int:
    """A new run holding `document`, ended with `status`; returns its id. `suite` names what
    the run is ("profile: spawned by run N" for a job the program spawned)."""
    with store.transaction():
        run_id = store.start_run(
            fingerprint=machine.fingerprint,
            topology=machine.topology,
            context=machine.context,
            suite=suite,
            argv=argv,
            software=machine.software,
            topology_xml=machine.topology_xml,
        )
        store.add_profile(run_id, command, document)
        if figures := headline(document):
            store.add_document(run_id, figures, profile_warnings(document))
        store.finish_run(run_id, status)
    return run_id
