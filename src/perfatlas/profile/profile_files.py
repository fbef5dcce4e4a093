"""The profile files perfatlas-ipm leaves in a folder (docs/profile.md): ipm-profile.json when
rank 0 wrote it, else the partial view of the rank files (partial); either way with what only
the rank files hold: the call sites (call_sites), the messages by link class and the time in
point-to-point calls by rank (link_traffic), and the one-sided transfers and their time
(one_sided_traffic)."""

from __future__ import annotations

from pathlib import Path

from perfatlas.common.errors import UserError
from perfatlas.profile.call_sites import call_sites
from perfatlas.profile.documents import PROFILE_FILE, RANK_PATTERN, load_profile, load_rank
from perfatlas.profile.link_traffic import link_traffic, pair_traffic, point_to_point
from perfatlas.profile.one_sided_traffic import one_sided
from perfatlas.profile.partial import has_kinds, partial_profile
from perfatlas.profile.rank_placement import rank_places

# What only the rank files give a profile (call_sites, link_traffic); a complete profile whose
# rank files are gone lacks them but call_sites' reason.
FROM_RANK_FILES = ("call_sites", "link_traffic", "point_to_point", "pair_traffic", "one_sided")


def read_folder(
    folder: Path, command: list[str], topology: dict | None = None, here: str | None = None
) -> dict | None:
    """The profile perfatlas-ipm left in `folder`; None when it wrote nothing there. The ranks
    are placed with `topology` (pa-topology's document of the host `here`) to class the links
    of their messages. A complete profile keeps its figures when its rank files are gone or
    unreadable: it then lacks call sites and link traffic, and says why ("call_sites":
    {"missing": ...})."""
    files = sorted(folder.glob(RANK_PATTERN))
    if (folder / PROFILE_FILE).exists():
        document = load_profile(folder / PROFILE_FILE)
        try:
            ranks = [load_rank(path) for path in files]
            one_run(files, ranks)
        except UserError as error:
            document["call_sites"] = {"missing": str(error)}
            return document
    elif not files:
        return None
    else:
        ranks = [load_rank(path) for path in files]
        one_run(files, ranks)
        document = partial_profile(ranks, command)
    sites = call_sites(ranks)
    if sites is not None:
        document["call_sites"] = sites
    if has_kinds(ranks):
        places = rank_places(document, topology, here)
        document["link_traffic"] = link_traffic(ranks, document, places)
        document["point_to_point"] = point_to_point(ranks, document)
        document["pair_traffic"] = pair_traffic(ranks, places)
        document["one_sided"] = one_sided(ranks, document, places)
    return document


def one_run(files: list[Path], ranks: list[dict]) -> None:
    """Rank files of one run: each rank once, all of the same size; else one sentence."""
    first: dict[int, Path] = {}
    for path, rank in zip(files, ranks):
        if rank["size"] != ranks[0]["size"]:
            raise UserError(
                f"{path} is a rank of {rank['size']} ranks, {files[0]} of {ranks[0]['size']}: "
                "the rank files are not of one run"
            )
        if rank["rank"] in first:
            raise UserError(
                f"{first[rank['rank']]} and {path} are both rank {rank['rank']}: the rank files "
                "are not of one run"
            )
        first[rank["rank"]] = path


def read_path(path: Path) -> dict:
    """A profile file (ipm-profile.json or a --json copy), or the profile of a folder."""
    if not path.is_dir():
        return load_profile(path)
    document = read_folder(path, [])
    if document is None:
        raise UserError(f"{path} holds no perfatlas-ipm profile (no {PROFILE_FILE}, no rank files)")
    return document
