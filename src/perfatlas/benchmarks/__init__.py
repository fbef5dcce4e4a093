"""The benchmark registry: importing this package imports every module in it (pkgutil), and each
benchmark module registers its classes with @register; no list to keep by hand."""

import importlib
import pkgutil

from perfatlas.benchmarks.base import Benchmark, all_benchmarks, get, register  # noqa: F401

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
