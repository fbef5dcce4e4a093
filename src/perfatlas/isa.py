"""What a SIGILL means: the native code was built for a CPU with extensions this one lacks.

Shared by the local launch path (perfatlas.native), the MPI launchers' failure sentences
(perfatlas.launchers) and the parameter tables' reader (perfatlas.native_params).
"""

from __future__ import annotations

import signal
from pathlib import Path


def cpu_model() -> str:
    """/proc/cpuinfo's first model name (what the native ISA check names too)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                return value.strip()
    except OSError:
        pass
    return "unknown model"


def rebuild_hint(number: int, local: bool = True) -> str:
    """For SIGILL: what it means and what to do; empty for other signals.

    Every executable checks at start that the CPU has the extensions it was compiled for
    (native/common/isa_guard.c) and otherwise says which are missing and exits with status 2;
    a SIGILL that still happens is an instruction outside that check (a library built for
    another CPU, or an extension the check does not know)."""
    if number != signal.SIGILL:
        return ""
    cpu = f"this CPU ({cpu_model()})" if local else "the CPU of its host"
    return (
        f": it ran an instruction {cpu} does not have, so perfatlas was built for another CPU; "
        "rebuild it for this one (make install on such a machine, or once for every node type "
        "with make install PERFATLAS_ARCH=x86-64-v2, docs/portability.md)"
    )
