"""One module per report section; each registers itself with @section (report/registry.py)."""
