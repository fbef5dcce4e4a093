"""The kernel catalog, read from the native runner (`pa-parbench mode=list`): the table in
native/parbench/kernels.def is the only place a kernel's bytes and flops are stated."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from perfatlas.common.errors import UserError
from perfatlas.launch.native import run_json

STRIDES = (1, 2, 4, 8, 16, 32)


@dataclass(frozen=True)
class Kernel:
    """One kernel: counts per iteration (the innermost statement, likwid-bench convention)."""

    name: str
    class_name: str
    iteration: str
    load_bytes: int
    store_bytes: int
    flops: int
    strided: bool
    description: str

    @property
    def bytes_per_iteration(self) -> int:
        return self.load_bytes + self.store_bytes

    @property
    def write_fraction(self) -> float:
        """Stored bytes over all bytes the kernel names."""
        return self.store_bytes / self.bytes_per_iteration if self.bytes_per_iteration else 0.0

    @property
    def strides(self) -> tuple[int, ...]:
        return STRIDES if self.strided else (1,)


@cache
def catalog() -> tuple[Kernel, ...]:
    """Every kernel, in the order of kernels.def."""
    return tuple(
        Kernel(
            name=entry["name"],
            class_name=entry["class"],
            iteration=entry["iteration"],
            load_bytes=entry["load_bytes_per_iteration"],
            store_bytes=entry["store_bytes_per_iteration"],
            flops=entry["flops_per_iteration"],
            strided=entry["strided"],
            description=entry["description"],
        )
        for entry in run_json("pa-parbench", ["mode=list"])
    )


def kernel(name: str) -> Kernel:
    for entry in catalog():
        if entry.name == name:
            return entry
    raise UserError(
        f"kernel '{name}' is not in the parbench catalog; 'perfatlas list' shows its "
        f"{len(catalog())} kernels"
    )


def kernels(names: str | None) -> list[Kernel]:
    """'triad,dot' -> those kernels (checked); None -> the whole catalog."""
    if not names:
        return list(catalog())
    return [kernel(name.strip()) for name in names.split(",") if name.strip()]
