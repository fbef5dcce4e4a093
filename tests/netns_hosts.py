"""What the multi-host tests share (test_comm_cluster.py, test_slurm.py, test_smi.py): whether test
hosts can be made here, their bring-up, and the lock that keeps two runs from tearing down each other's hosts (pa1..paN are
global network namespaces)."""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK = Path("/tmp/perfatlas-netns-cluster.lock")


def hosts_unavailable(tool: Path) -> str | None:
    """Why `tool` cannot make hosts here, or None (tried for real, not guessed)."""
    if not tool.is_file():
        return f"{tool} is not here"
    if os.geteuid() != 0:
        return "network namespaces need root"
    probe = subprocess.run(["ip", "netns", "add", "pa-probe"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"network namespaces cannot be created here: {probe.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", "pa-probe"], capture_output=True)
    return None


@contextmanager
def hosts_lock() -> Iterator[None]:
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def remove_stray_links() -> None:
    """Host ends of veth pairs that outlived their namespace (a run that was killed, or a host
    whose link the kernel had not released yet)."""
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    for name in re.findall(r"^\d+: (pa\d+-b)@", links, re.MULTILINE):
        subprocess.run(["ip", "link", "del", name], capture_output=True)


def hosts_up(tool: Path, count: int, folder: Path, timeout: float = 120) -> None:
    """`tool up count folder`, under hosts_lock(). The kernel releases a removed namespace's
    links asynchronously, so an `up` right after another module's `down` can find one still
    there ("RTNETLINK answers: File exists"): then the leftovers are removed and `up` tried once
    more. Any other failure is the test's."""
    for attempt in (1, 2):
        remove_stray_links()
        up = subprocess.run(
            [str(tool), "up", str(count), str(folder)], capture_output=True, text=True,
            timeout=timeout,
        )  # fmt: skip
        if up.returncode == 0 or attempt == 2 or "File exists" not in up.stderr:
            break
        subprocess.run([str(tool), "down", str(folder)], capture_output=True, timeout=timeout)
        time.sleep(1)
    assert up.returncode == 0, up.stderr


def pair_spanning_args(mpirun_args: list[str], folder: Path, hosts: int) -> list[str]:
    """The mpirun arguments of a scan whose every step is rank 0 and one peer (comm.distance),
    rank r on host pa(r+1): rank 0 bound to cpu 0 of this machine and the others to cpu 1 (an
    Open MPI rankfile), so that every measured pair spans two cores, as it does on real hosts.
    Unbound (--bind-to none), the scheduler may stack both ranks of a pair on one core, where each
    message waits for the other's time slice: latencies of ~1 ms that outlast a re-measurement.
    The ranks outside the pair sleep (pa_comm_join), so sharing cpu 1 costs little. Needs two
    CPUs."""
    rankfile = folder / "rankfile-pairs"
    rankfile.write_text(
        "".join(f"rank {r}=pa{r + 1} slot={min(r, 1)}\n" for r in range(hosts)), encoding="utf-8"
    )
    unbound = [word for word in mpirun_args if word not in ("--bind-to", "none")]
    return [*unbound, "--rankfile", str(rankfile)]
