"""One module per area of the terminal summary; each registers its tables with @summary_table
(perfatlas.summary_tables), naming the benchmarks they show."""
