"""app.madbench: the MADbench proxy of CMB power-spectrum estimation (Borrill, Carter, Oliker,
Skinner, "Integrated performance monitoring of a cosmology application on leading HEC
platforms", ICPP 2005), the application proxy of out-of-core dense linear algebra.

One Newton-Raphson iteration of MADCAP's maximum-likelihood angular power spectrum of a map of
`npix` pixels in `nbin` bins, on np = q^2 MPI ranks with ScaLAPACK (native/app/madbench/),
in four phases, each an MPI_Pcontrol region: dSdC (the bins' signal-covariance derivatives from
Legendre polynomials, written to disk), invD (read them, accumulate the covariance D, Cholesky
inverse), W (read them again, W_b = D^-1 dS/dC_b by pdgemm, optionally by `ngang` gangs on
sub-grids, written to disk), dLdC (read the W_b: likelihood gradient, Fisher matrix, spectrum
correction). Samples per repetition: every phase's time, flop rate and percentage of np times
rank 0's DGEMM rate, and the whole pipeline's time. `perfatlas profile` splits each phase into
computation, MPI, I/O and load imbalance.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from perfatlas.benchmarks.benchmark import register
from perfatlas.benchmarks.time_model import app_seconds
from perfatlas.comm.mpi import MpiBenchmark, np_param
from perfatlas.common.errors import UserError
from perfatlas.common.units import format_size
from perfatlas.machine.topology import Machine

DENSE_FLOPS_PER_S = 10e9  # ScaLAPACK on a few cores (Benchmark.estimate)

PHASES = ("dSdC", "invD", "W", "dLdC")


def gang_shape(processes: int) -> tuple[int, int]:
    """The most nearly square rows x cols = processes, rows <= cols (as pipeline.c)."""
    rows = max(r for r in range(1, math.isqrt(processes) + 1) if processes % r == 0)
    return rows, processes // rows


def memory_per_rank(params: dict[str, Any]) -> float:
    """Bytes each rank holds (madbench.c, memory_definition)."""
    share = params["npix"] ** 2 / params["np"] * 8
    gangs = 3 * params["ngang"] if params["ngang"] > 1 else 0
    return (6 + params["nbin"] + gangs) * share


@register
class AppMadbench(MpiBenchmark):
    name = "app.madbench"
    summary = "MADbench CMB power spectrum: out-of-core ScaLAPACK pipeline dSdC, invD, W, dLdC"
    executable = "pa-madbench"
    built_with = ("MPI", "ScaLAPACK")
    metrics = {
        **{f"{phase}_s": "s" for phase in PHASES},
        **{f"{phase}_io_wait_s": "s" for phase in PHASES},
        "total_s": "s",
        "dgemm_flops_per_s": "flop/s",
        **{f"{phase}_flops_per_s": "flop/s" for phase in PHASES},
        **{f"{phase}_percent_of_dgemm": "%" for phase in PHASES},
    }
    min_np: ClassVar[int] = 1
    needs: ClassVar[str] = "it needs one rank"
    adds = (
        replace(
            np_param(default=1),
            help="MPI ranks, a perfect square (mpirun -np); 'all': the largest square of this "
            "host's PUs",
        ),
    )

    def all_ranks(self, machine: Machine) -> int:
        """np=all: the largest square number of ranks this host's PUs hold."""
        return max(1, math.isqrt(len(machine.pus)) ** 2)

    def resolve(self, raw: dict[str, Any], machine: Machine) -> dict[str, Any]:
        params = super().resolve(raw, machine)
        if params.get("dir") is not None:  # the ranks may start elsewhere
            path = Path(params["dir"]).expanduser().resolve()
            if not path.is_dir():
                raise UserError(f"{self.name}: dir={params['dir']} is not a folder")
            params["dir"] = str(path)
        return params

    def check(self, params: dict[str, Any], machine: Machine) -> None:
        super().check(params, machine)
        np_, ngang, nbin = params["np"], params["ngang"], params["nbin"]
        npix, bsize = params["npix"], params["bsize"]
        q = math.isqrt(np_)
        if q * q != np_:
            raise UserError(
                f"{self.name}: np={np_} is not a perfect square: MADbench's process grid is "
                "square (np = 1, 4, 9, 16, ...)"
            )
        if np_ % ngang:
            raise UserError(
                f"{self.name}: ngang={ngang} does not divide np={np_}: every gang has np/ngang "
                "ranks"
            )
        if nbin % ngang:
            raise UserError(
                f"{self.name}: ngang={ngang} does not divide nbin={nbin}: every gang takes "
                "nbin/ngang bins"
            )
        rows, cols = gang_shape(np_ // ngang)
        gang_wider = ngang > 1 and cols > q
        widest = cols if gang_wider else q
        if npix < bsize * widest:
            shape = f"{rows}x{cols} gang" if gang_wider else f"{q}x{q} process"
            raise UserError(
                f"{self.name}: npix={npix} is below bsize x {widest} = {bsize * widest}: every "
                f"row and column of the {shape} grid must hold at least one block"
            )
        needed = memory_per_rank(params) * np_
        if needed > machine.memory_bytes * 0.8:
            raise UserError(
                f"{self.name}: npix={npix} and nbin={nbin} need {format_size(int(needed))} of "
                f"memory on {np_} ranks, more than 80 % of this machine's "
                f"{format_size(machine.memory_bytes)}: use fewer pixels or bins, or more hosts"
            )

    def native_args(self, params: dict[str, Any], machine: Machine) -> list[str]:
        return [
            f"{key}={value}" for key, value in params.items() if key != "np" and value is not None
        ]

    def label(self, params: dict[str, Any]) -> str:
        shown = [f"{key}={params.get(key)}" for key in ("npix", "nbin", "np", "ngang", "io")]
        return " ".join(shown)

    def estimate(self, params: dict[str, Any], machine: Machine) -> float:
        """Its W step: nbin matrix products of order npix (2 nbin npix^3 flops) at
        DENSE_FLOPS_PER_S, per repetition."""
        npix, nbin = int(params.get("npix") or 1024), int(params.get("nbin") or 16)
        return app_seconds(params, 2 * nbin * npix**3 / DENSE_FLOPS_PER_S)
