"""What a benchmark's time estimate is made of (Benchmark.estimate; perfatlas run --plan).

Each benchmark estimates one point of its measurement (a working set, a message size range, a
problem) from its resolved parameters; perfatlas.plan.time_estimate adds the launch's start-up
and sums a size series. The shapes the families share:
- sampled benchmarks (mem.*, parbench.kernel, cpu.peakflops, example.sum): points x (samples + 1
  warm-up) x the time of one sample, which is min_sample_time or one pass over the working set
  where that is longer, plus the set-up of the buffer (allocation, first touch, a pointer chain);
- comm.* and app.spmv: per measured point (a message size, a pair, a process count) the samples
  and calibration (about CALIBRATION_SAMPLES more) of min_sample_time, capped by time_limit
  (native/comm/comm.c cuts the samples to fit it), and the warm-up (warmup_time);
- app.*: (repetitions + 1) x (a fixed part + the problem's work).
The constants were measured on the two-core development VM over the quick suite's launches. The
model is deliberately simple: it is meant to say "2 minutes" or "3 hours", not "131 s".
"""

from __future__ import annotations

import math
from typing import Any

SETUP_BYTES_PER_S = 1e9  # allocating, first-touching and linking a buffer
DRAM_LOAD_S = 100e-9  # one dependent load beyond the last-level cache
CACHE_LOAD_S = 2e-9  # one dependent load within the caches
STREAM_BYTES_PER_S = 10e9  # one pass of a bandwidth kernel
APP_REPETITION_S = 0.05  # the fixed part of one repetition of an application proxy
APP_SECONDS_PER_UNKNOWN = 5e-6  # app.spsolve, app.sweep: per unknown or cell and repetition
CALIBRATION_SAMPLES = 4  # comm: warm-up and batch calibration, in samples


def samples(params: dict[str, Any], default: int = 9) -> int:
    return int(params.get("samples") or default)


def sampled_seconds(
    params: dict[str, Any], one_pass: float | None = None, points: int = 1
) -> float:
    """Buffer set-up, then `points` x (samples + 1) samples of min_sample_time or `one_pass`
    (default: one streaming pass over `bytes`), each adding a pass over `load_bytes` (the load
    of mem.contention)."""
    size = int(params.get("bytes") or 0)
    load = int(params.get("load_bytes") or 0)
    one_pass = size / STREAM_BYTES_PER_S if one_pass is None else one_pass
    setup = (size + load) / SETUP_BYTES_PER_S
    sample = max(float(params.get("min_sample_time") or 0.02), one_pass) + load / STREAM_BYTES_PER_S
    return setup + points * (samples(params) + 1) * sample


def doublings(low: int, high: int) -> int:
    """Sizes low, 2 low, 4 low, ... up to high."""
    return int(math.log2(max(high, 1) / max(low, 1))) + 1 if high >= max(low, 1) else 0


def process_counts(ranks: int) -> int:
    """The process counts a collective is measured at: every P in 2..np up to 16, else powers
    of two and np."""
    return ranks - 1 if ranks <= 16 else int(math.log2(ranks)) + 1


def comm_seconds(params: dict[str, Any], points: int) -> float:
    """`points` measurements of samples and calibration, each capped by time_limit, and their
    warm-ups."""
    per_point = (samples(params, 11) + CALIBRATION_SAMPLES) * float(
        params.get("min_sample_time") or 0.001
    )
    limit = float(params.get("time_limit") or per_point)
    warm = min(float(params.get("warmup_time") or 0.01), 0.1 * limit)  # native/comm/comm.c
    return points * (min(per_point, limit) + warm)


def app_seconds(params: dict[str, Any], work: float) -> float:
    """Repetitions (the untimed first one included) x (a fixed part + `work` seconds)."""
    return (int(params.get("repeat") or 1) + 1) * (APP_REPETITION_S + work)
