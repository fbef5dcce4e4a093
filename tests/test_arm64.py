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
import shutil
import subprocess
from pathlib import Path

import pytest

from perfatlas.launch import isa
from perfatlas.launch.isa import architecture
from perfatlas.launch.native import bin_dir, executable, run_json

pytestmark = pytest.mark.skipif(
    architecture() != "aarch64", reason="an aarch64 build (x86-64: test_portable.py)"
)
ROOT = Path(__file__).resolve().parents[1]
AT_HWCAP, HWCAP_SVE = 16, 1 << 22  # <sys/auxv.h>, arch/arm64/include/uapi/asm/hwcap.h
EM_AARCH64 = 183  # <elf.h>: e_machine, the 2 bytes at offset 18 of an ELF header
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


def test_the_installed_programs_and_the_profiler_are_aarch64_code():
    """What the tests run is the aarch64 build (make test-arm64 cross-compiles it on x86-64)."""
    machines = {}
    for path in bin_dir().iterdir():
        header = path.read_bytes()[:20]
        if header[:4] == b"\x7fELF":
            machines[path.name] = int.from_bytes(header[18:20], "little")
    assert "pa-topology" in machines and "libperfatlas-ipm.so" in machines, sorted(machines)
    assert {name for name, machine in machines.items() if machine != EM_AARCH64} == set()


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


def guarded_program(folder: Path, march: str) -> Path:
    """A program with the ISA check of every executable: isa_built.c under -march=`march`,
    isa_guard.c and cpu_arm.c for the armv8-a baseline (as native/common/CMakeLists.txt builds
    them; gcc directly, since a CMake configure under emulation takes minutes)."""
    common = ROOT / "native" / "common"
    main = folder / "main.c"
    main.write_text('#include <stdio.h>\nint main(void) { puts("ran"); return 0; }\n')
    program = folder / "pa-guarded"
    objects = []
    for source, flags in (
        (common / "isa_built.c", [f"-march={march}"]),
        (common / "isa_guard.c", ["-march=armv8-a", f'-DPERFATLAS_BUILT_FOR="-march={march}"']),
        (common / "cpu_arm.c", ["-march=armv8-a"]),
        (main, ["-march=armv8-a"]),
    ):
        objects.append(folder / f"{source.stem}.o")
        compile_ = ["gcc", "-O2", *flags, f"-I{common}", "-c", str(source), "-o", str(objects[-1])]
        subprocess.run(compile_, check=True, capture_output=True, timeout=300)
    subprocess.run(["gcc", *map(str, objects), "-o", str(program)], check=True, timeout=300)
    return program


def test_a_build_for_sve_refuses_on_a_neon_only_cpu_and_names_it(tmp_path):
    """The ISA check of an aarch64 build: its extensions (ACLE macros) against the HWCAPs."""
    if not shutil.which("gcc"):
        pytest.skip("gcc is needed to build the checked program")
    program = str(guarded_program(tmp_path, "armv8.2-a+sve"))
    if has_sve():  # this CPU (or the emulator's default one) has what the build may use
        assert subprocess.run([program], capture_output=True, text=True).stdout == "ran\n"
    done = subprocess.run(
        [program], capture_output=True, text=True, env=dict(os.environ, QEMU_CPU="cortex-a72")
    )
    if done.returncode == 0:
        pytest.skip("this CPU has SVE and runs natively (QEMU_CPU cannot take it away)")
    assert done.returncode == 2 and not done.stdout
    assert re.fullmatch(
        r"pa-guarded: this CPU \(Arm Cortex-A72 \(implementer 0x41, part 0xd08\)\) lacks "
        r"[\w, ]*\bsve\b[\w, ]*, which this build of perfatlas was compiled for "
        r"\(-march=armv8\.2-a\+sve\); rebuild perfatlas on this machine \(make install\) or once "
        r"for every node type \(make install PERFATLAS_ARCH=armv8-a, the level this CPU has\)\n",
        done.stderr,
    ), done.stderr


def test_the_installed_build_checks_only_extensions_this_cpu_has():
    """What the guard compares, and what doctor and the report name: the build's extensions."""
    build_block = run_json("pa-topology", [])["build"]
    assert build_block["cflags"].startswith("-O3 -mcpu=") or "-march=" in build_block["cflags"]
    features = isa.cpu_features(isa.read_cpuinfo())
    if isa.emulated() is None:  # the host's cpuinfo under emulation says nothing of this CPU
        assert set(build_block["isa"]) <= features
