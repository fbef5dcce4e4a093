"""What the multi-host tests share (test_comm_cluster.py, test_slurm.py): whether test hosts can be
made here, and the lock that keeps two runs from tearing down each other's hosts (pa1..paN are
global network namespaces)."""

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
