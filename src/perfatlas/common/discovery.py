"""Finding what registers itself: every module named `<kind>_*` in a package of perfatlas (one
package per domain: mem/, noise/, comm/, app/, ...) is imported once, and its decorators fill
the registry. No list to keep by hand (docs/architecture.md, Layout of a domain package).

  bench_*     benchmarks        (@register, perfatlas.benchmarks.benchmark)
  section_*   report sections   (@section, perfatlas.report.report_sections)
  summary_*   terminal tables   (@summary_table, perfatlas.terminal.summary_registry)
  findings_*  findings of a run (@finding_source, perfatlas.findings.finding_sources), and the
              anomaly judges (@judges_figures, perfatlas.run.remeasure_anomalies)
  executor_*  executors         (@register_executor, perfatlas.run.executor)
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from functools import cache

import perfatlas


@cache
def import_modules(kind: str) -> tuple[str, ...]:
    """Import every module `<kind>_*` of perfatlas's packages; return their names, sorted."""
    names = []
    for package in pkgutil.iter_modules(perfatlas.__path__):
        if not package.ispkg:
            continue
        path = [os.path.join(folder, package.name) for folder in perfatlas.__path__]
        for module in pkgutil.iter_modules(path, f"{perfatlas.__name__}.{package.name}."):
            if not module.ispkg and module.name.rpartition(".")[2].startswith(f"{kind}_"):
                names.append(module.name)  # found on disk: packages without one stay unimported
    for name in sorted(names):
        importlib.import_module(name)
    return tuple(sorted(names))
