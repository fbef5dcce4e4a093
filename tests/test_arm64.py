"""perfatlas on aarch64 (docs/arm64.md): the generic timer, the SVE loops of the memory kernels
and their refusal on a CPU without SVE, and the ISA check of an Arm build. Runs where the
installed build is aarch64 (an Arm machine, or `make test-arm64`'s emulated tree); skipped on
x86-64, whose checks are tests/test_portable.py's.

A CPU without SVE is had for real under qemu-user: QEMU_CPU=cortex-a72 makes the emulator a
NEON-only core (on Arm hardware the variable does nothing, and those checks skip)."""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess

import pytest
from native_build import build

from perfatlas.isa import architecture
from perfatlas.native import executable, run_json

pytestmark = pytest.mark.skipif(
    architecture() != "aarch64", reason="an aarch64 build (x86-64: test_portable.py)"
)
AT_HWCAP, HWCAP_SVE = 16, 1 << 22  # <sys/auxv.h>, arch/arm64/include/uapi/asm/hwcap.h
KERNEL = ["bytes=48KiB", "samples=2", "min_sample_time=1ms"]


def has_sve() -> bool:
    getauxval = ctypes.CDLL(None).getauxval
    getauxval.restype = ctypes.c_ulong
    return bool(getauxval(AT_HWCAP) & HWCAP_SVE)


def bandwidth(*words: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(executable("pa-mem-bandwidth")), *KERNEL, *words],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, **(env or {})),
    )


def test_the_timer_is_the_generic_timer_calibrated_against_its_stated_rate():
    timer = run_json("pa-topology", [])["timer"]
    assert timer["source"] == "cntvct_el0 (generic timer)" and timer["tsc_hz"] is None
    assert timer["cntfrq_hz"] > 0 and timer["resolution_ns"] > 0
    # calibrated over 40 ms against CLOCK_MONOTONIC_RAW: the rate cntfrq_el0 states
    assert timer["counter_hz"] == pytest.approx(timer["cntfrq_hz"], rel=0.02)


@pytest.mark.parametrize("op", ["read", "write", "rmw", "copy", "scale", "add", "triad"])
def test_the_sve_loops_declare_and_check_what_the_portable_ones_do(op):
    if not has_sve():
        pytest.skip("this CPU has no SVE (its refusal is the next test's)")
    sve, portable = (
        json.loads(bandwidth(f"op={op}", f"vector={v}").stdout) for v in ("sve", "auto")
    )
    assert sve["params"]["vector"] == "sve" and "not_measurable" not in sve
    for key in ("bytes_per_iteration", "flops_per_iteration", "elements", "verified"):
        assert sve["derived"][key] == portable["derived"][key], key
    assert sve["derived"]["verified"] is True


def test_on_a_cpu_without_sve_the_sve_loops_are_not_measurable_with_the_reason():
    done = bandwidth("op=triad", "vector=sve", env={"QEMU_CPU": "cortex-a72"})
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    if "not_measurable" not in document:
        pytest.skip("this CPU has SVE and runs natively (QEMU_CPU cannot take it away)")
    assert document["not_measurable"] == (
        "op=triad vector=sve cannot run here: this CPU lacks SVE (the kernel does not set "
        "HWCAP_SVE): a NEON-only core such as a Neoverse N1 or Cortex-A72"
    )
    assert "samples" not in document and "derived" not in document


def test_vector_sve_refuses_what_has_no_sve_loop():
    for words, sentence in (
        (("op=memcpy", "vector=sve"), "vector=sve does not apply to op memcpy: SVE loops exist"),
        (("op=triad", "vector=sve", "store=nt"), "vector=sve has ordinary stores only"),
    ):
        done = bandwidth(*words)
        assert done.returncode == 2 and sentence in done.stderr, done.stderr


def test_non_temporal_stores_write_what_the_ordinary_ones_do():
    """stnp, the store pair that bypasses the caches, in every streaming kernel."""
    for op in ("write", "rmw", "copy", "scale", "add", "triad"):
        done = bandwidth(f"op={op}", "store=nt")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["derived"]["verified"] is True, op


def test_a_build_for_sve_refuses_on_a_neon_only_cpu_and_names_it(tmp_path):
    """The ISA check of an aarch64 build: its extensions (ACLE macros) against the HWCAPs."""
    folder = build(tmp_path, "-DPERFATLAS_ARCH=armv8.2-a+sve", targets=("pa-topology",))
    program = str(folder / "pa-topology")
    document = json.loads(subprocess.run([program], capture_output=True, check=True).stdout)
    assert document["build"]["arch"] == "armv8.2-a+sve"
    assert {"sve", "atomics", "crc32"} <= set(document["build"]["isa"])
    done = subprocess.run(
        [program], capture_output=True, text=True, env=dict(os.environ, QEMU_CPU="cortex-a72")
    )
    if done.returncode == 0:
        pytest.skip("this CPU has SVE and runs natively (QEMU_CPU cannot take it away)")
    assert done.returncode == 2 and not done.stdout
    assert re.fullmatch(
        r"pa-topology: this CPU \(Arm Cortex-A72 \(implementer 0x41, part 0xd08\)\) lacks "
        r"[\w, ]*\bsve\b[\w, ]*, which this build of perfatlas was compiled for "
        r"\(-march=armv8\.2-a\+sve\); rebuild perfatlas on this machine \(make install\) or once "
        r"for every node type \(make install PERFATLAS_ARCH=armv8-a, the level this CPU has\)\n",
        done.stderr,
    ), done.stderr
