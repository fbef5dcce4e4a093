"""Regression checks (perfatlas check, perfatlas baseline): a run's figures held against a
baseline run's, figure by figure with their intervals (docs/guide/regression-checks.md)."""
