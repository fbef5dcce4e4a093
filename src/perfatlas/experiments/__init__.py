"""Experiments over runs: parameter sweeps (perfatlas sweep) and comparisons of two runs.

sweep                what a sweep runs (threads x binding x memory policy) and stores
analysis_sweep       speedup, efficiency and variability of its points
analysis_comparison  run B against run A (perfatlas compare)
section_sweep, section_comparison   their report sections
"""
