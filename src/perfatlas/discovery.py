"""Finding what registers itself: every module named `<kind>_*` in a package of perfatlas (one
package per domain: memory/, noise/, comm/, apps/, ...) is imported once, and its decorators fill
the registry. No list to keep by hand (docs/architecture.md, Layout of a domain package).

  bench_*    benchmarks      (@register, perfatlas.benchmarks.base)
  section_*  report sections (@section, perfatlas.report.registry)
  summary_*  terminal tables (@summary_table, perfatlas.summary_tables)
  findings_* findings of a run (@finding_source, perfatlas.findings.registry)
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
