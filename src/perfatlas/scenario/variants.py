"""Kernel variants as synthesis sees them: what one pass takes (seconds) and does (bytes named,
bytes stored, flops), and what one program line costs besides its passes (setup: allocation and
first touch; check and free), read from the parbench base data of this machine.

For each variant the newest measurement among the complete `parbench-base` runs of this machine
fingerprint is taken: building missing base data (perfatlas.scenario.ensure_base) adds a run with
only the variants that were missing, so no single run need hold them all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from perfatlas.parbench.base_data import SUITE, base_table
from perfatlas.store.database import Store

# Line overhead before a dedicated run has measured it: allocation, first touch, check and free
# were measured at 0.2-2.5 ns per byte of working set here (25 MB: triad 16 ms, fft 18 ms,
# pointer chase 62 ms); the estimate takes 1 ns/byte plus 0.1 ms. A dedicated run replaces it.
OVERHEAD_S_PER_BYTE = 1e-9
OVERHEAD_S_FIXED = 1e-4


@dataclass(frozen=True)
class Variant:
    kernel: str
    bytes: int  # working set over all threads
    stride: int
    threads: int
    pass_s: float  # one pass over every thread's share
    bytes_per_pass: float  # bytes the kernel names (loads + stores), all threads
    store_bytes_per_pass: float
    flops_per_pass: float
    overhead_s: float  # setup + check + free of one program line

    @property
    def key(self) -> tuple[str, int, int, int]:
        return (self.kernel, self.bytes, self.stride, self.threads)

    @property
    def transfer_rate(self) -> float:
        """Bytes named per second (byte/s)."""
        return self.bytes_per_pass / self.pass_s

    @property
    def flop_rate(self) -> float:
        return self.flops_per_pass / self.pass_s

    @property
    def store_rate(self) -> float:
        return self.store_bytes_per_pass / self.pass_s

    @property
    def label(self) -> str:
        stride = f" stride={self.stride}" if self.stride != 1 else ""
        return f"{self.kernel} {self.bytes / 1e6:.4g}MB{stride} x{self.threads}"

    def measured(self, pass_s: float, overhead_s: float) -> Variant:
        """The same variant with a pass time and line overhead measured in a program run."""
        return replace(self, pass_s=pass_s, overhead_s=overhead_s)


def estimated_overhead(n_bytes: int) -> float:
    return OVERHEAD_S_FIXED + OVERHEAD_S_PER_BYTE * n_bytes


def from_base_row(row: dict) -> Variant | None:
    """A base-data row (perfatlas.parbench.base_data.base_table) as a variant; None without a runtime."""
    runtime = row.get("runtime_s")
    if not runtime or runtime <= 0:
        return None
    named = (row.get("bandwidth_Bps") or 0.0) * runtime
    return Variant(
        kernel=row["kernel"],
        bytes=int(row["bytes"]),
        stride=int(row["stride"]),
        threads=int(row["threads"]),
        pass_s=runtime,
        bytes_per_pass=named,
        store_bytes_per_pass=named * (row.get("write_fraction") or 0.0),
        flops_per_pass=(row.get("flops_per_s") or 0.0) * runtime,
        overhead_s=estimated_overhead(int(row["bytes"])),
    )


def base_runs(store: Store, fingerprint: str) -> list[int]:
    """Complete parbench-base runs of this machine, newest first."""
    return [
        run["id"]
        for run in reversed(store.runs())
        if run["suite"] == SUITE
        and run["status"] == "complete"
        and run["fingerprint"] == fingerprint
    ]


def stored_variants(store: Store, fingerprint: str) -> dict[tuple, Variant]:
    """Every variant measured on this machine, its newest measurement winning."""
    found: dict[tuple, Variant] = {}
    for run_id in base_runs(store, fingerprint):
        for row in base_table(store.results(run_id, "parbench.kernel")):
            variant = from_base_row(row)
            if variant is not None:
                found.setdefault(variant.key, variant)
    return found
