"""Thread binding and memory policy of a launch (`perfatlas sweep --bind --mempolicy`).

A placement is applied in one of two ways, chosen per benchmark:
- a benchmark that places its own threads or memory (parameters `cpus`, `node`) is given the PUs
  and the node through those parameters, so that it applies and verifies them itself;
- any other benchmark (OpenMP and OpenBLAS threads it does not pin: app.spsolve ...) is launched
  under the OpenMP runtime's binding (OMP_PROC_BIND, OMP_PLACES) and numactl's memory policy.
Either way what was obtained is read back from the process at the end of its run (the document's
"execution" block, native/common/execution.c), never assumed from what was asked.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfatlas.common.errors import UserError
from perfatlas.common.units import parse_cpu_list
from perfatlas.launch.launchers import Launch
from perfatlas.machine.cpu_order import close_order, spread_order
from perfatlas.machine.topology import Machine

BINDS = ("none", "close", "spread")
MEMPOLICIES = ("local", "interleave", "node:K")

# OpenMP 4.0 binding: `close` packs threads onto neighbouring cores, `spread` spreads them as far
# apart as the places allow; `false` leaves them to the OS scheduler.
_OPENMP = {
    "none": {"OMP_PROC_BIND": "false"},
    "close": {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"},
    "spread": {"OMP_PROC_BIND": "spread", "OMP_PLACES": "cores"},
}


def parse_bind(text: str) -> str:
    if text not in BINDS:
        raise UserError(f"--bind '{text}' is not one of {', '.join(BINDS)}")
    return text


def parse_mempolicy(text: str, machine: Machine) -> str:
    """local, interleave or node:K (K a NUMA node of this machine)."""
    if text in ("local", "interleave"):
        return text
    kind, _, node = text.partition(":")
    if kind != "node" or not (node.isascii() and node.isdigit()):
        raise UserError(f"--mempolicy '{text}' is not local, interleave or node:K (e.g. node:0)")
    if int(node) not in machine.numa_nodes:
        raise UserError(
            f"--mempolicy {text}: NUMA node {node} does not exist; this machine has node(s) "
            f"{', '.join(map(str, machine.numa_nodes))}"
        )
    return text


@dataclass(frozen=True)
class Placement:
    bind: str  # none | close | spread
    mempolicy: str  # local | interleave | node:K

    @property
    def label(self) -> str:
        return f"bind={self.bind} mem={self.mempolicy}"

    def numactl_words(self) -> list[str]:
        if self.mempolicy == "local":
            return ["--localalloc"]
        if self.mempolicy == "interleave":
            return ["--interleave=all"]
        return [f"--membind={self.mempolicy.partition(':')[2]}"]

    def node_param(self) -> str:
        """The same policy as a memory benchmark's `node` parameter."""
        return self.mempolicy.partition(":")[2] if ":" in self.mempolicy else self.mempolicy

    def params_for(
        self, benchmark: Any, raw: dict[str, Any], threads: int, machine: Machine
    ) -> dict[str, Any]:
        """The benchmark's own parameters that carry this placement (`cpus`, `node`)."""
        names = {p.name for p in benchmark.params}
        raw = dict(raw, threads=str(threads))
        if "cpus" in names:
            if self.bind == "none":
                raise UserError(
                    f"{benchmark.name} pins every thread itself (cpus=): --bind none does not "
                    "apply to it; sweep --bind close,spread"
                )
            raw["cpus"] = ",".join(map(str, pus_in_order(machine, self.bind)[:threads]))
        if "node" in names:
            raw["node"] = self.node_param()
        return raw

    def wrap(
        self,
        launch: Launch,
        executable: Path,
        benchmark: Any,
        params: dict[str, Any],
        machine: Machine,
    ) -> None:
        """Bind through the OpenMP runtime and place memory through numactl, unless the benchmark
        does either itself (params_for); MPI ranks get mpirun's binding to match."""
        names = {p.name for p in benchmark.params}
        if "cpus" not in names:
            launch.env.update(_OPENMP[self.bind])
            launch.notes.append(f"thread binding by the OpenMP runtime: {_OPENMP[self.bind]}")
            if launch.launcher == "mpirun":
                self._bind_ranks(launch, executable, params, machine)
        if "node" not in names:
            numactl = shutil.which("numactl")
            if numactl is None:
                raise UserError("--mempolicy needs numactl: install numactl")
            at = launch.argv.index(str(executable))
            launch.argv[at:at] = [numactl, *self.numactl_words()]
            launch.notes.append(f"memory policy by numactl {' '.join(self.numactl_words())}")

    def _bind_ranks(
        self, launch: Launch, executable: Path, params: dict[str, Any], machine: Machine
    ) -> None:
        """Unbound threads want unbound ranks; bound threads of a rank want cores of their own
        (Open MPI binds each rank to one core by default, where its threads would all pile up).
        The launcher's own choice for the threads of a rank gives way to this one."""
        launch.drop_default_binding()
        at = launch.argv.index(str(executable))
        threads, ranks = int(params.get("threads") or 1), int(params.get("np") or 1)
        cores = int(machine.topology.get("cores") or len(machine.pus))
        if self.bind == "none":
            launch.argv[at:at] = ["--bind-to", "none"]
            launch.notes.append("--bind none: ranks not bound by mpirun either")
        elif threads > 1 and "Open MPI" in (launch.mpi or ""):
            if ranks * threads <= cores:
                launch.argv[at:at] = ["--map-by", f"slot:PE={threads}", "--bind-to", "core"]
                launch.notes.append(f"each rank bound to {threads} cores of its own")
            else:
                launch.notes.append(
                    f"{ranks} ranks x {threads} threads exceed the {cores} cores: ranks are "
                    "bound as mpirun decides"
                )


def pus_in_order(machine: Machine, bind: str) -> list[int]:
    """PUs in the order threads take them (perfatlas.machine.cpu_order): `close` takes neighbouring
    cores, one PU each, before any SMT sibling; `spread` one PU per NUMA node, package and core
    in turn, SMT siblings last."""
    return (close_order if bind == "close" else spread_order)(machine.topology)


# -- what was obtained ---------------------------------------------------------------------------
def obtained(document: dict, placement: Placement, machine: Machine) -> dict[str, Any]:
    """Binding, migrations, page placement and the remote-access fraction (counted or estimated)
    of one launch, read from its "execution" block (native/common/execution.c)."""
    execution = document.get("execution") or {}
    threads = execution.get("threads") or []
    node_of = {pu["os_index"]: pu["numa_node"] for pu in machine.topology["pus"]}
    everywhere = set(machine.pus)
    pinned = [t for t in threads if len(parse_cpu_list(t["cpus_allowed"] or "0")) == 1]
    placed = (
        "unpinned (the OS decides)"
        if not pinned
        else f"{len(pinned)} of {len(threads)} threads pinned to one PU"
    )
    if placement.bind != "none" and not pinned:
        placed += f"; {placement.bind} binding was asked but not applied"
    if placement.bind == "none" and any(
        set(parse_cpu_list(t["cpus_allowed"])) != everywhere for t in threads
    ):
        placed += "; some threads were restricted by the launcher or cgroup"
    on_node = {int(k): v for k, v in (execution.get("bytes_on_node") or {}).items()}
    total = sum(on_node.values())
    shares = {node: b / total for node, b in on_node.items()} if total else {}
    return {
        "binding": placed,
        "binding_applied": placement.bind == "none" or bool(pinned),
        "cpus": [t["cpu"] for t in threads],
        "migrations": execution.get("migrations"),
        "pages_on_node": shares,
        **remote_fraction(
            threads,
            shares,
            node_of,
            execution.get("numa_accesses"),
            first_touch=placement.mempolicy == "local",
        ),
    }


def remote_fraction(
    threads: list[dict],
    shares: dict[int, float],
    node_of: dict[int, int],
    accesses: dict[str, Any] | None = None,
    first_touch: bool = False,
) -> dict[str, Any]:
    """Fraction of memory accesses that go to another NUMA node, and how it was obtained.

    Where the document carries hardware counts ("numa_accesses", native/common/numa_counters.c)
    it is measured: remote / (local + remote) DRAM accesses of the process. Otherwise it is
    estimated from the share of pages on each node, and the method names the reason the counters
    were not used. Under a policy that places pages whatever thread touches them (bind,
    interleave), every thread's data is spread like the whole: a thread on node n reaches remote
    memory with probability 1 - share(n), and the estimate is the mean over threads. Under first
    touch (`first_touch`, the local policy) pages sit where the thread that uses them touched
    them (the OpenMP first-touch idiom, every perfatlas kernel): each thread does an equal part
    of the accesses, locally as far as its node's pages allow, so the local fraction is
    sum over nodes of min(share(n), threads on n / threads) (a uniform estimate would call half of
    the accesses of two threads on two nodes remote where none are)."""
    accesses = accesses or {}
    if "local" in accesses and "remote" in accesses:
        counted = accesses["local"] + accesses["remote"]
        source = accesses.get("source", "hardware counters")
        if counted == 0:
            return {
                "remote_fraction": None,
                "remote_fraction_method": f"measured: hardware counters ({source}) counted no "
                "DRAM access, so there is no fraction",
            }
        return {
            "remote_fraction": accesses["remote"] / counted,
            "remote_fraction_method": f"measured: hardware counters ({source})",
        }
    why = accesses.get("reason") or "the document carries no hardware counts"
    if not shares or not threads:
        return {
            "remote_fraction": None,
            "remote_fraction_method": f"no page placement read back; hardware counters: {why}",
        }
    if first_touch:
        on_node: dict[int, int] = {}
        for t in threads:
            on_node[node_of.get(t["cpu"], -1)] = on_node.get(node_of.get(t["cpu"], -1), 0) + 1
        local = sum(min(shares.get(n, 0.0), count / len(threads)) for n, count in on_node.items())
        model = "first touch: each thread reads pages it touched"
    else:
        mine = [shares.get(node_of.get(t["cpu"], -1), 0.0) for t in threads]
        local = sum(mine) / len(mine)
        model = "every thread reads every page alike"
    return {
        "remote_fraction": max(0.0, 1.0 - local),
        "remote_fraction_method": f"estimated from page placement against thread placement, "
        f"{model} (hardware counters not used: {why})",
    }
