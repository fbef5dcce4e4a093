"""The test bed of the slow-link benches (slow_link_trials.py, slow_link_states.py): four test
hosts on this machine (../shared/tools/netns-cluster, network namespaces, needs root), held under
the tests' lock, with rank r on host pa(r+1) and, unless unbound, rank 0 bound to cpu 0 and the
others to cpu 1, so that every pair of a distance scan spans the two CPUs
(tests/netns_hosts.py, pair_spanning_args)."""

from __future__ import annotations

import fcntl
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "shared" / "tools" / "netns-cluster"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from netns_hosts import LOCK, pair_spanning_args  # noqa: E402  (the tests' lock and placement)

HOSTS = 4


@contextmanager
def test_bed(unbound: bool = False) -> Iterator[tuple[Path, list[str]]]:
    """(a scratch folder, the mpirun arguments) of the four hosts, taken down on exit."""
    with LOCK.open("w") as lock, tempfile.TemporaryDirectory() as tmp:
        fcntl.flock(lock, fcntl.LOCK_EX)
        folder = Path(tmp)
        up = subprocess.run(
            [str(TOOL), "up", str(HOSTS), str(folder / "cluster")],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if up.returncode != 0:
            raise SystemExit(f"netns-cluster up failed: {up.stderr.strip()}")
        try:
            given = shlex.split((folder / "cluster" / "mpirun-args").read_text())
            if unbound:
                yield folder, [*given, "--map-by", "node"]
            else:
                yield folder, pair_spanning_args(given, folder, HOSTS)
        finally:
            subprocess.run([str(TOOL), "down", str(folder / "cluster")], timeout=120)
