"""perfatlas.export: a run written out for other tools: JSON or CSV with every raw sample and the
findings (perfatlas export), and a calibrated hwloc topology carrying the measured memory
latency and bandwidth as memory attributes. It may import every lower layer, the domains
included (the hwloc export uses perfatlas.mem's memory test), and is independent of
perfatlas.regression.

  hwloc_export.py  the run's hwloc topology with measured latency, bandwidth as memattrs
  run_export.py    a run with every raw sample: JSON (with findings) or CSV
"""
