"""What the multi-host tests share (test_comm_cluster.py, test_slurm.py): whether test hosts can be
made here, the lock that keeps two runs from tearing down each other's hosts (pa1..paN are
global network namespaces), and a rankfile that gives every pair of a scan the same CPUs."""

from __future__ import annotations

import fcntl
import os
import subprocess
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


def scan_rankfile(folder: Path, hosts: int) -> list[str]:
    """Open MPI arguments placing rank r on host pa(r+1), rank 0 on CPU 0 and every other rank on
    CPU 1, in place of --map-by node and --bind-to none. The test hosts share this machine's CPUs:
    unbound, the two ranks of a measured pair sometimes share one CPU, and that pair's latency
    reads ~40 % above the others' (comm.distance np=4: 6.6 against 9.4 us, a placement, not a
    link). Rank 0 is in every pair of the distance scan and the other ranks sleep while not
    measured, so with this file every pair is one rank on each of two CPUs."""
    path = folder / "scan-rankfile"
    path.write_text("".join(f"rank {r}=pa{r + 1} slot={min(r, 1)}\n" for r in range(hosts)))
    return ["--rankfile", str(path)]
