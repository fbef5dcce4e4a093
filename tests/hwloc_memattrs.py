"""What hwloc reads from an XML topology's memory attributes: `lstopo -p --memattrs` on the file
(HWLOC_XMLFILE), parsed; for the tests of perfatlas export --format hwloc."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path


def pus_of(cpuset: str) -> tuple[int, ...]:
    """hwloc's printed cpuset (0x00000003, or 0x...,0x... for more than 32 PUs) as PUs."""
    mask = int(cpuset.replace("0x", "").replace(",", ""), 16)
    return tuple(i for i in range(mask.bit_length()) if mask >> i & 1)


def lstopo_memattrs(xml: Path) -> dict[tuple, int]:
    """What hwloc reads from the file: `lstopo -p --memattrs` with HWLOC_XMLFILE set."""
    shown = subprocess.run(
        [shutil.which("lstopo") or "lstopo", "-p", "--memattrs"],
        env=dict(os.environ, HWLOC_XMLFILE=str(xml)),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    values, attribute = {}, None
    for line in shown.splitlines():
        if found := re.match(r"Memory attribute #\d+ name `(\w+)'", line):
            attribute = found.group(1)
        elif found := re.match(r"\s+NUMANode P#(\d+) = (\d+) from cpuset (\S+)", line):
            node, value, cpuset = found.groups()
            values[(attribute, pus_of(cpuset), int(node))] = int(value)
    return values
