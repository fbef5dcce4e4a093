"""What the MPI benchmarks (comm.*) share: the np parameter, the mpirun launcher, a clear
sentence when MPI is missing, and short labels.

The native executables (native/comm/) declare their key=value parameters (read with --params);
`np`, added here, goes to the launcher; each document they write carries `np` (MPI_Comm_size) and the
placement every rank reported (placement.ranks).
"""

from __future__ import annotations

import shutil
from typing import Any, ClassVar

from perfatlas.benchmarks.benchmark import Benchmark, DocumentSink, Param
from perfatlas.common.errors import UserError
from perfatlas.common.units import format_size
from perfatlas.launch.launchers import MPI_MISSING, LaunchOptions
from perfatlas.launch.native import bin_dir
from perfatlas.machine.placement import Placement
from perfatlas.machine.topology import Machine

RANKS_PER_PU_WITHOUT_HOSTS = 8  # beyond this on one host, np is surely a typo


def np_param(default: int = 2) -> Param:
    return Param(
        "np",
        _parse_np,
        default,
        "MPI ranks (mpirun -np); 'all': one per PU of this host (at least 2)",
        minimum=1,
        maximum=100000,
    )


def _parse_np(text: str) -> int | str:
    if text == "all":
        return "all"
    try:
        return int(text)
    except ValueError:
        raise UserError(f"np='{text}' is not a whole number (or 'all')") from None


SIZE_KEYS = {
    "bytes",
    "min_bytes",
    "max_bytes",
    "latency_bytes",
    "bandwidth_bytes",
    "window_bytes",
    "receive_bytes",
}
HIDDEN_KEYS = {"warmup", "samples", "min_sample_time", "time_limit"}


class MpiBenchmark(Benchmark):
    """A benchmark of MPI ranks started by the mpirun launcher."""

    launcher = "mpirun"
    built_with: ClassVar[tuple[str, ...]] = ("MPI",)
    min_np: ClassVar[int] = 2
    needs: ClassVar[str] = "it needs two ranks"  # why min_np, for the error sentence
    # keys the short label shows; the sweep keys only where a document has no `bytes` of its own
    label_keys: ClassVar[tuple[str, ...]] = ("np",)
    sweep_keys: ClassVar[tuple[str, ...]] = ()
    fixed_args: ClassVar[tuple[str, ...]] = ()  # words the executable always gets (op=barrier)
    adds: ClassVar[tuple[Param, ...]] = (np_param(),)  # the launcher's, not the executable's

    @classmethod
    def build_params(cls) -> tuple[Param, ...]:
        if not (bin_dir() / cls.executable).is_file():
            raise UserError(
                f"{MPI_MISSING}: perfatlas was built without MPI, so {cls.executable} does not "
                "exist; install them and rebuild with 'make install'"
            )
        return super().build_params()

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        raw = dict(raw)
        if raw.get("np") == "all":
            raw["np"] = str(self.all_ranks(machine))
        params = super().resolve(raw, machine)
        if params.get("np") == "all":
            params["np"] = self.all_ranks(machine)
        return params

    def all_ranks(self, machine: Machine) -> int:
        """np=all: one rank per PU of this host, but at least what the benchmark needs."""
        return max(self.min_np, len(machine.pus))

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        np_ = params["np"] if params["np"] != "all" else len(machine.pus)
        if np_ < self.min_np:
            raise UserError(
                f"{self.name}: np={np_} is too few: {self.needs} (launch with np={self.min_np} "
                "or more)"
            )

    def check_launch(
        self, params: dict[str, Any], machine: Machine, options: LaunchOptions
    ) -> None:
        if self.absent() is not None:  # parameters as given, stored as not measurable
            return
        np_ = params["np"]
        names_hosts = options.hostfile or any(
            word in ("--hostfile", "-hostfile", "--host", "-H", "-f", "--machinefile")
            for word in options.mpirun_args
        )
        limit = RANKS_PER_PU_WITHOUT_HOSTS * len(machine.pus)
        if not names_hosts and np_ > limit:
            raise UserError(
                f"{self.name}: np={np_} would put {np_ / len(machine.pus):.0f} ranks on each of "
                f"this host's {len(machine.pus)} PUs; give a hostfile (--hostfile, or hosts in "
                "--mpirun-args) or fewer ranks"
            )

    def native_args(self, params: dict[str, Any], machine: Machine) -> list[str]:
        words = [f"{key}={value}" for key, value in params.items() if key != "np"]
        return [*self.fixed_args, *words]

    def run(
        self,
        params: dict[str, Any],
        machine: Machine,
        options: LaunchOptions | None = None,
        placement: Placement | None = None,
        on_document: DocumentSink | None = None,
    ) -> list[dict]:
        if self.unmeasurable(params, machine) is None:  # else stored as such (Benchmark.run)
            if shutil.which("mpirun") is None:
                raise UserError(f"{MPI_MISSING}: no mpirun on PATH")
            if not (bin_dir() / self.executable).is_file():
                raise UserError(
                    f"{MPI_MISSING}: perfatlas was built without MPI, so {self.executable} "
                    "does not exist; install them and rebuild with 'make install'"
                )
        return super().run(params, machine, options, placement, on_document)

    def label(self, params: dict[str, Any]) -> str:
        shown = []
        for key in self.label_keys:
            if key not in params or params[key] is None:
                continue
            if key in self.sweep_keys and "bytes" in params and key != "bytes":
                continue
            value = params[key]
            if key in SIZE_KEYS:
                value = format_size(value)
            elif key == "pair":
                value = "↔".join(str(r) for r in value)
            shown.append(f"{key}={value}")
        return " ".join(shown)
