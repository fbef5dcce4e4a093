"""What is doubtful about a perfatlas-ipm profile (docs/profile.md), as perfatlas.common.warning records:
a partial profile, a full record table, MPI_Pcontrol region errors, regions nested too deep. Stored with the profile's
headline results and drawn by the report's profile section."""

from __future__ import annotations

from perfatlas.common.warning import Kind, WarningRecord

MAX_DEPTH = 16  # PA_IPM_MAX_DEPTH (native/ipm/table.h): the region levels a thread keeps


def profile_warnings(document: dict) -> list[WarningRecord]:
    found = []
    if document["partial"]:
        found.append(
            WarningRecord(
                Kind.PARTIAL_PROFILE,
                f"Partial profile: {document.get('partial_reason') or 'the program did not finish'}"
                ". It is built from the rank files the library wrote: calls, message sizes and "
                "per-rank figures are summed over the ranks that wrote one, and the communication "
                "matrix and load imbalance (LBST) are not estimated, so waiting in collectives "
                "counts as MPI",
                "let the program reach MPI_Finalize for a complete profile",
            )
        )
    overflow = document.get("overflow") or {}
    if overflow.get("count"):
        found.append(
            WarningRecord(
                Kind.RECORD_TABLE_FULL,
                f"The record table was full on {overflow.get('ranks', '?')} rank(s): "
                f"{overflow['count']} events were folded into one overflow record (counted, not "
                "attributed to a call)",
                "fewer regions, or the library built with a larger table, attribute them",
            )
        )
    errors = {k: v for k, v in (document.get("region_errors") or {}).items() if v}
    if too_deep := errors.pop("too_deep", 0):
        found.append(
            WarningRecord(
                Kind.REGION_ERRORS,
                f"{too_deep} MPI_Pcontrol(1, ...) nested deeper than {MAX_DEPTH} open regions "
                "(summed over the ranks): those regions are not kept, their calls and time count "
                f"in the region {MAX_DEPTH} levels deep",
                f"nest regions at most {MAX_DEPTH} deep",
            )
        )
    if errors:
        listed = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in errors.items())
        found.append(
            WarningRecord(
                Kind.REGION_ERRORS,
                f"Region errors (MPI_Pcontrol): {listed}",
                "pair each MPI_Pcontrol(1, name) with an MPI_Pcontrol(-1, name), innermost first",
            )
        )
    return found
