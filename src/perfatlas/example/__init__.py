"""perfatlas.example: the template benchmark example.sum (docs/adding-a-benchmark.md), the
smallest domain package: one bench_*.py module whose parameters are declared in
native/example/sum.c's table. It may import every layer below the domains and no other domain.

  bench_example_sum.py  example.sum: one pinned thread sums an array, checked exactly
"""
