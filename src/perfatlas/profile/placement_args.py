"""The launcher arguments that apply a what-if order (placement_whatif), each launcher in its own
words:
- Open MPI: a rankfile, `rank R=HOST slot=CPUS` a line (CPUS the rank's slot's CPUs as the
  kernel listed them, OS indices: --mca rmaps_rank_file_physical 1); where the order is hosts
  round-robin or in blocks, `--map-by node` or `--map-by slot` says the same of the hosts;
- MPICH (hydra): a machinefile, `host:count` a line for each run of consecutive ranks on one
  host (hydra fills the lines in order), and `-bind-to user:` each rank's CPUs in its host's
  local order (`0+1` a rank's two CPUs), where that list is the same on every host (hydra binds
  by local rank, one list for all hosts); on one host the binding alone;
- Slurm: `srun --distribution=arbitrary` with SLURM_HOSTFILE, a host a line in rank order
  (cyclic or block where the order is one of those).
Each rank keeps the CPUs of the slot it moves to."""

from __future__ import annotations

from dataclasses import dataclass

from perfatlas.comm.curve_interpolation import HIGH, LOW, MEDIAN
from perfatlas.common.units import parse_cpu_list
from perfatlas.profile.figure_text import seconds
from perfatlas.profile.placement_whatif import WhatIf

RANKFILE = "placement.rankfile"  # written beside the profile's files
SLURM_HOSTFILE = "placement.hosts"
MACHINEFILE = "placement.machinefile"


@dataclass(frozen=True)
class LaunchWords:
    launcher: str  # "Open MPI", "MPICH", "Slurm"
    words: str  # what to add to the launch command
    file: str | None = None  # the file the words name, written with `text`
    text: str | None = None


def _pattern(hosts: list[str]) -> str | None:
    """ "cyclic" where rank r is on the (r mod H)-th host, "block" where each host's ranks are
    consecutive, in the hosts' order of first appearance, as many on each; else None."""
    names = list(dict.fromkeys(hosts))
    if len(hosts) % len(names):
        return None
    per = len(hosts) // len(names)
    if hosts == [names[r % len(names)] for r in range(len(hosts))]:
        return "cyclic"
    if hosts == [names[r // per] for r in range(len(hosts))]:
        return "block"
    return None


def _hydra(hosts: list[str], cpus: list[str | None], folder: str) -> LaunchWords | None:
    """MPICH's words for the order (the module's docstring); None where they say nothing."""
    binding = None
    if all(cpus):
        local: dict[str, list[str]] = {}
        for host, listed in zip(hosts, cpus):
            local.setdefault(host, []).append("+".join(map(str, parse_cpu_list(listed or ""))))
        if len({tuple(order) for order in local.values()}) == 1:
            binding = f"-bind-to user:{','.join(next(iter(local.values())))}"
    if len(set(hosts)) == 1:
        return LaunchWords("MPICH", binding) if binding else None
    runs: list[list] = []
    for host in hosts:
        if runs and runs[-1][0] == host:
            runs[-1][1] += 1
        else:
            runs.append([host, 1])
    words = f"-f {folder}/{MACHINEFILE}" + (f" {binding}" if binding else "")
    return LaunchWords("MPICH", words, MACHINEFILE, "".join(f"{h}:{n}\n" for h, n in runs))


def launch_words(whatif: WhatIf, folder: str = ".") -> list[LaunchWords]:
    """How each launcher applies the order; [] where there is none."""
    if not whatif.order:
        return []
    hosts = [host or "" for host in whatif.hosts]
    found = []
    pattern = _pattern(hosts) if len(set(hosts)) > 1 else None
    if pattern is not None:
        mapped = {"cyclic": "node", "block": "slot"}[pattern]
        found.append(LaunchWords("Open MPI", f"--map-by {mapped} (the hosts only)"))
    if all(whatif.cpus):
        rankfile = "".join(
            f"rank {rank}={host} slot={cpus}\n"
            for rank, (host, cpus) in enumerate(zip(hosts, whatif.cpus))
        )
        found.append(
            LaunchWords(
                "Open MPI",
                f"--rankfile {folder}/{RANKFILE} --mca rmaps_rank_file_physical 1",
                RANKFILE,
                rankfile,
            )
        )
    hydra = _hydra(hosts, whatif.cpus, folder)
    if hydra is not None:
        found.append(hydra)
    if len(set(hosts)) > 1:
        if pattern is not None:
            found.append(LaunchWords("Slurm", f"srun --distribution={pattern}"))
        found.append(
            LaunchWords(
                "Slurm",
                f"SLURM_HOSTFILE={folder}/{SLURM_HOSTFILE} srun --distribution=arbitrary",
                SLURM_HOSTFILE,
                "".join(f"{host}\n" for host in hosts),
            )
        )
    return found


def whatif_text(whatif: WhatIf) -> str:
    """The what-if as a sentence, as the views write it."""
    if not whatif.order:
        return f"What-if placement: none suggested, {whatif.reason}."
    now, then = whatif.current_s, whatif.suggested_s
    share = 100 * whatif.saving_s / now[MEDIAN] if now[MEDIAN] > 0 else 0.0
    return (
        f"What-if placement, a model: moving {whatif.moved} of {len(whatif.order)} ranks puts the "
        f"heaviest pairs on the fastest links; the atlas predicts the matrix's point-to-point "
        f"time at {_interval(now)} as placed and {_interval(then)} so, saving "
        f"{seconds(whatif.saving_s)} ({share:.0f} %). Rank r to the place of rank order[r]: "
        f"{whatif.order}."
    )


def _interval(figures: list[float]) -> str:
    return f"{seconds(figures[MEDIAN])} [{seconds(figures[LOW])}, {seconds(figures[HIGH])}]"
