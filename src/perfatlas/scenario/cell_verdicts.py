"""The verdict of an interference-matrix cell (the rule in perfatlas.scenario.matrix's docstring),
apart from the code that measures the matrix: the findings, which every report computes, read it
without importing the runner and its progress bar (bench/profile_postprocess.py)."""

from __future__ import annotations

from perfatlas.common.anomaly import MIN_EFFECT

NO_INTERFERENCE = "no measurable interference"
UNDER_MIN_EFFECT = f"measurable, under {MIN_EFFECT:.0%}"


def cell_verdict(slowdown: float, ci_lo: float, ci_hi: float) -> str:
    """A cell's verdict from its slowdown and interval."""
    if ci_lo <= 1.0 <= ci_hi:
        return NO_INTERFERENCE
    if abs(slowdown - 1.0) <= MIN_EFFECT:
        return UNDER_MIN_EFFECT
    return "slower" if ci_lo > 1.0 else "faster"
