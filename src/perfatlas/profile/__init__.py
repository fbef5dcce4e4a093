"""perfatlas profile: run a program under libperfatlas-ipm.so, read and check what it wrote
(docs/profile.md), store it, and draw it (profile/section_profile.py).

documents         load and validate perfatlas.ipm/1 and perfatlas.ipm-rank/1 documents
partial           the partial profile built from rank files when ipm-profile.json is absent
command           the argv and environment that run a command under the library
profile_warnings  what is doubtful about a profile, as perfatlas.warning records
storage           a profile as a run of the store, with its headline figures as results
session           the whole `perfatlas profile` command: prepare, run, import, report
"""
