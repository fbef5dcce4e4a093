"""The CPU the native code runs on: its name, its extensions and what a SIGILL means.

What a SIGILL means: the native code was built for a CPU with extensions this one lacks. Shared
by the local launch path (perfatlas.launch.native), the MPI launchers' failure sentences
(perfatlas.launch.launchers), the parameter tables' reader (perfatlas.launch.native_params) and doctor.

x86-64 and aarch64 describe a CPU differently in /proc/cpuinfo: x86 by "model name" and "flags",
aarch64 by "CPU implementer" and "CPU part" (MIDR_EL1's fields) and "Features" (the kernel's
HWCAP and HWCAP2 bits by name). Under qemu-user emulation the file is the host's: an aarch64
program then reads an x86-64 CPU's cpuinfo, which `emulated` detects.
"""

from __future__ import annotations

import platform
import signal
from pathlib import Path

# The level a build for every CPU of the architecture names (make install PERFATLAS_ARCH=...,
# docs/portability.md and docs/arm64.md): what runs on any node of a cluster of several CPU types.
PORTABLE_LEVEL = {"x86_64": "x86-64-v2", "aarch64": "armv8-a"}
# The wide vector extensions, by architecture: what doctor names of a build.
WIDE_VECTORS = {"x86_64": ("avx", "amx"), "aarch64": ("sve",)}
WIDE_VECTOR_NAMES = {"x86_64": "AVX or AMX", "aarch64": "SVE"}


def architecture(machine: str | None = None) -> str:
    """The architecture by the name /proc/cpuinfo and the Makefile's tables use."""
    name = machine or platform.machine()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(name.lower(), name)


def read_cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""


def first_processor(cpuinfo: str) -> dict[str, str]:
    """The fields of the first processor listed (the blank line closes a block)."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    return fields


def cpuinfo_architecture(cpuinfo: str) -> str | None:
    """Which architecture's CPU the text describes: x86_64, aarch64, or None (unknown)."""
    fields = first_processor(cpuinfo)
    if "vendor_id" in fields or "flags" in fields:
        return "x86_64"
    if "CPU implementer" in fields or "Features" in fields:
        return "aarch64"
    return None


def cpu_features(cpuinfo: str) -> set[str]:
    """The extensions the kernel reports: x86 "flags" (CPUID), aarch64 "Features" (HWCAPs)."""
    fields = first_processor(cpuinfo)
    return set((fields.get("flags") or fields.get("Features") or "").split())


def cpu_model(cpuinfo: str | None = None) -> str:
    """The CPU's name: x86 "model name" (what the native ISA check names too); aarch64 the
    MIDR_EL1 fields, which native/common/cpu_arm.c turns into a name such as Arm Neoverse V2."""
    fields = first_processor(read_cpuinfo() if cpuinfo is None else cpuinfo)
    if fields.get("model name"):
        return fields["model name"]
    implementer, part = fields.get("CPU implementer"), fields.get("CPU part")
    if implementer and part:
        try:
            return f"Arm CPU (implementer 0x{int(implementer, 16):02x}, part 0x{int(part, 16):03x})"
        except ValueError:
            pass
    return "unknown model"


def emulated(cpuinfo: str | None = None, machine: str | None = None) -> str | None:
    """Why this process runs emulated (qemu-user: an aarch64 program reading an x86-64 host's
    /proc/cpuinfo), or None. Timings there are the emulator's, and NUMA policy and hardware
    counters are not this machine's: they are reported not measurable."""
    text = read_cpuinfo() if cpuinfo is None else cpuinfo
    described, running = cpuinfo_architecture(text), architecture(machine)
    if described and described != running:
        return (
            f"this {running} program reads an {described} CPU's /proc/cpuinfo: it runs under "
            "emulation (qemu-user), so timings are the emulator's"
        )
    return None


def rebuild_hint(number: int, local: bool = True) -> str:
    """For SIGILL: what it means and what to do; empty for other signals.

    Every executable checks at start that the CPU has the extensions it was compiled for
    (native/common/isa_guard.c) and otherwise says which are missing and exits with status 2;
    a SIGILL that still happens is an instruction outside that check (a library built for
    another CPU, or an extension the check does not know)."""
    if number != signal.SIGILL:
        return ""
    cpu = f"this CPU ({cpu_model()})" if local else "the CPU of its host"
    level = PORTABLE_LEVEL.get(architecture(), PORTABLE_LEVEL["x86_64"])
    return (
        f": it ran an instruction {cpu} does not have, so perfatlas was built for another CPU; "
        "rebuild it for this one (make install on such a machine, or once for every node type "
        f"with make install PERFATLAS_ARCH={level}, docs/portability.md)"
    )
