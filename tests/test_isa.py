"""The CPU as Python sees it (perfatlas.launch.isa): x86-64 and aarch64 /proc/cpuinfo, the extensions
(x86 flags, aarch64 HWCAP names), emulation, and the rebuild hints per architecture. Fixtures:
tests/data/cpuinfo/ (Arm servers), and synthetic x86 text."""

from __future__ import annotations

import signal
from pathlib import Path
from types import SimpleNamespace

import pytest

from perfatlas.cli import doctor
from perfatlas.launch import isa

CPUINFO = Path(__file__).parent / "data" / "cpuinfo"
GRACE = (CPUINFO / "neoverse-v2.txt").read_text()
GRAVITON2 = (CPUINFO / "neoverse-n1.txt").read_text()
EPYC = (
    "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n"
    "model name\t: AMD EPYC 7B13\nflags\t\t: fpu sse2 avx avx2 fma hypervisor\n\n"
    "processor\t: 1\nmodel name\t: another\n"
)


def test_each_architecture_is_told_from_its_cpuinfo():
    assert isa.cpuinfo_architecture(GRACE) == "aarch64"
    assert isa.cpuinfo_architecture(GRAVITON2) == "aarch64"
    assert isa.cpuinfo_architecture(EPYC) == "x86_64"
    assert isa.cpuinfo_architecture("") is None
    assert isa.architecture("arm64") == "aarch64" and isa.architecture("AMD64") == "x86_64"


def test_the_model_is_the_first_processors():
    assert isa.cpu_model(EPYC) == "AMD EPYC 7B13"
    assert isa.cpu_model(GRACE) == "Arm CPU (implementer 0x41, part 0xd4f)"
    assert isa.cpu_model(GRAVITON2) == "Arm CPU (implementer 0x41, part 0xd0c)"
    assert isa.cpu_model("processor : 0\nCPU implementer : junk\nCPU part : 0xd0c\n") == (
        "unknown model"
    )
    assert isa.cpu_model("") == "unknown model"


def test_the_extensions_are_the_first_processors_flags_or_hwcaps():
    grace = isa.cpu_features(GRACE)
    assert {"sve", "sve2", "asimddp", "atomics", "i8mm", "bf16"} <= grace
    assert "sve" not in isa.cpu_features(GRAVITON2)  # NEON only: the SVE kernels cannot run
    assert "asimd" in isa.cpu_features(GRAVITON2)
    assert {"avx2", "fma"} <= isa.cpu_features(EPYC) and "sve" not in isa.cpu_features(EPYC)


@pytest.mark.parametrize(
    ("cpuinfo", "machine", "elsewhere"),
    [
        (EPYC, "aarch64", True),  # qemu-user: the host's cpuinfo
        (GRACE, "x86_64", True),
        (GRACE, "aarch64", False),
        (EPYC, "x86_64", False),
        ("", "aarch64", False),  # nothing to tell from: not claimed
    ],
)
def test_emulation_is_an_architecture_that_differs_from_the_cpuinfos(cpuinfo, machine, elsewhere):
    why = isa.emulated(cpuinfo, machine)
    assert (why is not None) == elsewhere
    if why:
        assert why.startswith(f"this {isa.architecture(machine)} program reads an ")
        assert "emulation (qemu-user)" in why


@pytest.mark.parametrize(("machine", "level"), [("x86_64", "x86-64-v2"), ("aarch64", "armv8-a")])
def test_a_sigill_names_the_portable_level_of_the_architecture(monkeypatch, machine, level):
    monkeypatch.setattr(isa.platform, "machine", lambda: machine)
    hint = isa.rebuild_hint(signal.SIGILL)
    assert f"make install PERFATLAS_ARCH={level}," in hint
    assert hint.startswith(": it ran an instruction this CPU (")
    assert "the CPU of its host" in isa.rebuild_hint(signal.SIGILL, local=False)
    assert isa.rebuild_hint(signal.SIGSEGV) == ""


def test_doctor_says_when_this_program_runs_emulated(monkeypatch):
    monkeypatch.setattr(isa.platform, "machine", lambda: "aarch64")
    monkeypatch.setattr(doctor, "_read", lambda path: EPYC)
    check = doctor.virtualization()
    assert check.status == doctor.LIMITED
    assert "emulation (qemu-user)" in check.detail and "not measurable" in check.detail
    monkeypatch.setattr(doctor, "_read", lambda path: GRACE)
    assert doctor.virtualization().detail == "bare metal"


@pytest.mark.parametrize(
    ("machine", "isa_names", "uses", "level"),
    [
        ("aarch64", ["atomics", "sve", "sve2"], "may use sve, sve2", "armv8-a"),
        ("aarch64", ["atomics", "asimddp"], "no SVE", "armv8-a"),
        ("x86_64", ["sse3", "avx", "avx2"], "may use avx, avx2", "x86-64-v2"),
    ],
)
def test_doctor_names_the_wide_vectors_and_the_portable_level(
    monkeypatch, machine, isa_names, uses, level
):
    monkeypatch.setattr(isa.platform, "machine", lambda: machine)
    build = {"arch": "native (x)", "cflags": "-O3", "compiler": "GNU 12", "isa": isa_names}
    check = doctor.native_build(SimpleNamespace(topology={"build": build}))
    assert check.status == doctor.OK
    assert f": {uses}; this CPU has all {len(isa_names)} extensions" in check.detail
    assert f"PERFATLAS_ARCH={level}," in check.detail
