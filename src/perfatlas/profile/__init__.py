"""perfatlas.profile: `perfatlas profile`: a program run under libperfatlas-ipm.so, the documents
the library writes read and checked (docs/profile.md), a partial profile built from rank files
where the whole one is missing, the profile stored as a run (headline results under benchmark
ipm.profile) and joined with this machine's comm and noise atlas, its figures (computed once
for the report's section, `perfatlas show` and `show --json`), its report section and its
terminal view, and its call sites' return addresses resolved to functions and source lines
(symbols/). It may import every layer below the domains, and the domains comm (the comm atlas)
and noise (the BSP model).

  analysis_profile.py  a stored profile's figures: the banner's, calls and call sites by time,
                       regions, the heaviest communicating pairs (section, terminal and JSON)
  atlas_gaps.py        what the join lacks of the comm atlas, measured after the program
  atlas_join.py        the profile against the machine's comm atlas: predicted and measured
                       time per region and collective, verdicts with their evidence
  call_sites.py        the rank files' call sites as one table: (object, offset) frames, resolved
  command.py           the argv and environment that run a command under libperfatlas-ipm.so
  documents.py         loading and checking perfatlas.ipm/1 and perfatlas.ipm-rank/1 documents
  findings_profile.py  findings: each joined row as profile.against_machine
  figure_text.py       seconds, fractions and region names as every view writes them
  link_traffic.py      the rank files' messages by link class and point-to-point time by rank
  noise_cadence.py     the BSP noise model of the program's superstep, from the noise atlas
  one_sided_traffic.py the rank files' one-sided transfers and their time by region
  placement_args.py    the launchers' words (rankfile, --map-by, machinefile, srun) for a what-if
  placement_whatif.py  a rank order for the fastest links and its predicted saving
  partial.py           the partial profile of rank files without ipm-profile.json
  profile_files.py     a folder's profile: ipm-profile.json or the partial one, with call sites
  profile_warnings.py  what is doubtful about a profile, as warning records
  rank_placement.py    each rank's place (CPU, core group, package, NUMA node), pairs' link class
  section_against_machine.py
                       section: the profile against this machine's comm atlas
  section_profile.py   section: time per region and rank, calls, traffic, message sizes
  session.py           the whole `perfatlas profile` command: prepare, run, import, report
  storage.py           a profile stored as a run, its headline figures as results
  views_profile.py     the profile in the terminal (`perfatlas show RUN` of a profile run)
  symbols/             call sites resolved after the run: return addresses -> function,
                       file:line and inlined calls, from each rank's loaded objects and DWARF
"""
