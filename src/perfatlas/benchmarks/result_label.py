"""A result's parameters as its benchmark describes them (Benchmark.label), for tables and plots."""

from __future__ import annotations

import json

from perfatlas.store.result import Result


def params_label(result: Result) -> str:
    """The benchmark's own short description of a parameter set (and a sweep's policy)."""
    from perfatlas.benchmarks import get

    try:
        label = get(result.benchmark).label(result.params)
    except Exception:  # a benchmark this version does not know: show the raw parameters
        return json.dumps(result.params, sort_keys=True)
    if "sweep" in result.document and "bind=" not in label:
        label += f" bind={result.params['bind']} mem={result.params['mempolicy']}"
    return label
