"""The what-if placement of a profile (docs/profile.md, What-if placement): METIS's parts of
exactly the slots' sizes, the order that puts the heavy pairs on the fast link and its
predicted saving, why there is none, the launchers' words; the links between hosts it and the
pairs' join are predicted with (perfatlas.comm.host_links). Documents made here; the order run
for real on several hosts is tests/test_profile_cluster.py's."""

from __future__ import annotations

import pytest

from perfatlas.comm.comm_atlas import CommAtlas, message_ns
from perfatlas.comm.host_links import HostLink, host_ns, pair_ns, slow_hosts
from perfatlas.machine.graph_partition import partition
from perfatlas.profile.atlas_gaps import host_launch
from perfatlas.profile.atlas_join import atlas_join
from perfatlas.profile.command import program_index
from perfatlas.profile.placement_args import launch_words, whatif_text
from perfatlas.profile.placement_whatif import WhatIf, placement_whatif
from perfatlas.profile.rank_placement import RankPlace

MiB = 2**20
FAST = [[1, 300, 250, 350], [MiB, 300e3, 280e3, 320e3]]  # one-way ns: a host's shared memory
SLOW = [[1, 30e3, 25e3, 35e3], [MiB, 40e6, 38e6, 42e6]]  # a network: 100x the latency
ATLAS = CommAtlas("f", pingpong={"same core group": FAST, "across hosts": SLOW})


def places(hosts: list[str]) -> list[RankPlace]:
    return [RankPlace(r, h, "0-1", r % 2, 0, 0, 0, "this host") for r, h in enumerate(hosts)]


def paired(tasks: int, heavy: int = MiB) -> dict:
    """pa-ipm-character pairs: `heavy` bytes both ways with rank (r + P/2) % P and 8 with r ^ 1,
    10 messages each way."""
    sent = [[0] * tasks for _ in range(tasks)]
    messages = [[0] * tasks for _ in range(tasks)]
    for r in range(tasks):
        for peer, size in (((r + tasks // 2) % tasks, heavy), (r ^ 1, 8)):
            sent[r][peer] += 10 * size
            messages[r][peer] += 10
    return {
        "tasks": tasks,
        "atlas": ATLAS.document,
        "matrix": {"bytes": sent, "messages": messages},
    }


# -- METIS ---------------------------------------------------------------------------------------
def test_parts_hold_exactly_their_sizes_and_keep_heavy_edges_inside():
    heavy, light = 1000, 1
    parts = partition(4, {(0, 2): heavy, (1, 3): heavy, (0, 1): light, (2, 3): light}, [2, 2])
    assert parts[0] == parts[2] != parts[1] == parts[3]
    parts = partition(5, {(0, 1): 5, (2, 3): 5}, [2, 2, 1])
    assert sorted(parts.count(k) for k in range(3)) == [1, 2, 2]
    assert parts[0] == parts[1] and parts[2] == parts[3]


def test_parts_of_sizes_that_do_not_hold_the_vertices_are_refused():
    with pytest.raises(ValueError, match="do not hold 4 vertices"):
        partition(4, {(0, 1): 1}, [2, 1])


# -- the order -----------------------------------------------------------------------------------
def test_heavy_pairs_across_hosts_are_moved_onto_one_host_each():
    whatif = placement_whatif(paired(4), places(["pa1", "pa1", "pa2", "pa2"]))
    assert whatif.hosts == ["pa1", "pa2", "pa1", "pa2"] and whatif.order == [0, 2, 1, 3]
    assert whatif.moved == 2
    heavy = 10 * message_ns(SLOW, MiB) * 1e-9  # one direction of one heavy pair, placed so
    light = 10 * message_ns(SLOW, 8) * 1e-9
    # placed: 2 pairs x 2 directions of heavy messages across, the light ones at home
    assert whatif.current_s[0] == pytest.approx(4 * heavy + 4 * 10 * message_ns(FAST, 8) * 1e-9)
    assert whatif.suggested_s[0] == pytest.approx(4 * light + 4 * 10 * message_ns(FAST, MiB) * 1e-9)
    low, median, high = whatif.current_s[1], whatif.current_s[0], whatif.current_s[2]
    assert low < median < high
    assert "moving 2 of 4 ranks" in whatif_text(whatif) and "saving" in whatif_text(whatif)


def test_an_order_already_on_the_fastest_links_gets_no_suggestion():
    whatif = placement_whatif(paired(4), places(["pa1", "pa2", "pa1", "pa2"]))
    assert not whatif.order and "no order found saves 5 %" in whatif.reason
    assert whatif_text(whatif).startswith("What-if placement: none suggested")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda d: d.pop("atlas"), "no comm atlas"),
        (lambda d: d.update(matrix=None), "no communication matrix"),
        (lambda d: d.update(atlas=CommAtlas("f", pingpong={"same core group": FAST}).document),
         "the atlas has no ping-pong curve on across hosts"),
        (lambda d: d["matrix"].update(messages=[[0] * 4] * 4), "no point-to-point or one-sided messages"),
    ],
)  # fmt: skip
def test_what_the_what_if_lacks_is_named(change, reason):
    document = paired(4)
    change(document)
    whatif = placement_whatif(document, places(["pa1", "pa1", "pa2", "pa2"]))
    assert not whatif.order and reason in whatif.reason


def test_ranks_in_one_place_whose_link_the_atlas_lacks_get_no_order():
    """No swap or cut is costed where every rank has one place: the lack shows in the totals."""
    document = paired(2)
    document["atlas"] = CommAtlas("f", pingpong={"across hosts": SLOW}).document
    one_place = [RankPlace(r, "pa1", "0-1", 0, 0, 0, 0, "this host") for r in range(2)]
    whatif = placement_whatif(document, one_place)
    assert (
        not whatif.order and "the atlas has no ping-pong curve on same core group" in whatif.reason
    )


def test_ranks_whose_hosts_are_unknown_get_no_order():
    unknown = [RankPlace(r, None, None, None, None, None, None, "none") for r in range(4)]
    assert "places are not known" in placement_whatif(paired(4), unknown).reason


def test_a_shuffled_ring_is_cut_into_hosts_of_neighbours():
    """A ring exchange whose ranks are numbered at random over 4 hosts of 4: the best order
    cuts the ring 4 times (each host a run of neighbours), the placed one nearly every edge."""
    tasks, order = 16, [3, 11, 6, 14, 0, 9, 12, 5, 15, 2, 8, 13, 1, 10, 4, 7]
    sent = [[0] * tasks for _ in range(tasks)]
    messages = [[0] * tasks for _ in range(tasks)]
    for i in range(tasks):
        a, b = order[i], order[(i + 1) % tasks]
        sent[a][b] = sent[b][a] = MiB
        messages[a][b] = messages[b][a] = 1
    document = {
        "tasks": tasks,
        "atlas": ATLAS.document,
        "matrix": {"bytes": sent, "messages": messages},
    }
    whatif = placement_whatif(document, places([f"h{r // 4}" for r in range(tasks)]))
    cut = sum(whatif.hosts[order[i]] != whatif.hosts[order[(i + 1) % tasks]] for i in range(tasks))
    assert cut == 4
    across = 2 * message_ns(SLOW, MiB) * 1e-9
    assert whatif.suggested_s[0] == pytest.approx(
        4 * across + 12 * 2 * message_ns(FAST, MiB) * 1e-9
    )


# -- the launchers' words ------------------------------------------------------------------------
def test_a_round_robin_order_is_map_by_node_and_every_order_a_rankfile():
    whatif = placement_whatif(paired(4), places(["pa1", "pa1", "pa2", "pa2"]))
    words = {w.words: w for w in launch_words(whatif, "/p")}
    assert "--map-by node (the hosts only)" in words and "srun --distribution=cyclic" in words
    rankfile = words["--rankfile /p/placement.rankfile --mca rmaps_rank_file_physical 1"]
    assert rankfile.text == (
        "rank 0=pa1 slot=0-1\nrank 1=pa2 slot=0-1\nrank 2=pa1 slot=0-1\nrank 3=pa2 slot=0-1\n"
    )
    hosts = words["SLURM_HOSTFILE=/p/placement.hosts srun --distribution=arbitrary"]
    assert hosts.text == "pa1\npa2\npa1\npa2\n"
    # hydra: a line per run of consecutive ranks on a host; one binding list for every host
    machinefile = words["-f /p/placement.machinefile -bind-to user:0+1,0+1"]
    assert (machinefile.launcher, machinefile.text) == ("MPICH", "pa1:1\npa2:1\npa1:1\npa2:1\n")


def test_hydra_binds_ranks_of_one_host_and_lists_runs_of_hosts():
    one_host = WhatIf(order=[1, 0], hosts=["h", "h"], cpus=["1", "0"], current_s=[1.0] * 3,
                      suggested_s=[0.5] * 3, moved=2)  # fmt: skip
    [hydra] = [w for w in launch_words(one_host) if w.launcher == "MPICH"]
    assert (hydra.words, hydra.file) == ("-bind-to user:1,0", None)
    # hosts whose local CPU orders differ: the machinefile alone, blocks as host:count
    blocks = WhatIf(order=[0, 1, 2, 3], hosts=["a", "a", "b", "b"], cpus=["0", "1", "1", "0"],
                    current_s=[1.0] * 3, suggested_s=[0.5] * 3, moved=2)  # fmt: skip
    [hydra] = [w for w in launch_words(blocks, "/p") if w.launcher == "MPICH"]
    assert (hydra.words, hydra.text) == ("-f /p/placement.machinefile", "a:2\nb:2\n")


def test_an_order_of_no_pattern_has_no_map_by():
    """Heavy pairs 0-3 and 1-2 placed on hosts A A B B: the order A B B A, neither round-robin
    nor blocks, is a rankfile's or a Slurm host list's alone."""
    sent = [[0] * 4 for _ in range(4)]
    for a, b in ((0, 3), (1, 2)):
        sent[a][b] = sent[b][a] = 10 * MiB
    messages = [[10 if size else 0 for size in row] for row in sent]
    document = {
        "tasks": 4,
        "atlas": ATLAS.document,
        "matrix": {"bytes": sent, "messages": messages},
    }
    whatif = placement_whatif(document, places(["A", "A", "B", "B"]))
    assert whatif.hosts == ["A", "B", "B", "A"]
    words = [w.words for w in launch_words(whatif)]
    assert not any("--map-by" in w or "cyclic" in w or "block" in w for w in words), words
    assert any("--rankfile" in w for w in words) and any("arbitrary" in w for w in words)


# -- links between hosts -------------------------------------------------------------------------
LINKS = [  # a distance scan from h1: h3's link throttled to a fortieth
    HostLink(("h1", "h2"), [[8, 20e3, 19e3, 21e3], [65536, 60e3, 58e3, 62e3]], "comm.distance"),
    HostLink(("h1", "h3"), [[8, 21e3, 20e3, 22e3], [65536, 2.4e6, 2.3e6, 2.5e6]], "comm.distance"),
    HostLink(("h1", "h4"), [[8, 20e3, 19e3, 21e3], [65536, 61e3, 59e3, 63e3]], "comm.distance"),
]


def test_a_pair_never_measured_together_is_as_slow_as_its_slower_host():
    assert pair_ns(LINKS, "h3", "h1", 65536) == pytest.approx(2.4e6)  # measured
    assert pair_ns(LINKS, "h2", "h3", 65536) == pytest.approx(2.4e6)  # h3's link
    assert pair_ns(LINKS, "h2", "h4", 65536) == pytest.approx(61e3)  # h4's, the slower
    assert host_ns(LINKS, "h1", 65536) == pytest.approx(60e3)  # its fastest pair
    assert pair_ns(LINKS, "h2", "h9", 8) is None


def test_a_slow_host_is_named_only_where_its_link_is_slower_at_that_size():
    assert slow_hosts(LINKS, ["h2", "h3"], MiB) == ["h3"]
    assert slow_hosts(LINKS, ["h2", "h3"], 8) == []  # the throttle leaves the latency be
    assert slow_hosts(LINKS[:1], ["h1", "h2"], MiB) == []  # one pair: which end is slow?


def test_the_pairs_join_names_the_pairs_that_cross_a_slow_host():
    atlas = CommAtlas("f", pingpong={"across hosts": SLOW}, host_links=LINKS)
    document = {
        "atlas": atlas.document, "tasks": 4, "calls": [], "regions": [], "point_to_point": [],
        "ranks": [{"rank": r, "host": h} for r, h in enumerate(["h1", "h2", "h3", "h4"])],
        "pair_traffic": [
            {"sender": s, "receiver": r, "link": "across hosts", "messages": 10,
             "bytes": 10 * MiB, "time_s": t}
            for s, r, t in ((0, 2, 0.4), (2, 0, 0.4), (1, 3, 0.01), (3, 1, 0.01))
        ],
    }  # fmt: skip
    pairs = {(p.sender, p.receiver): p for p in atlas_join(document).pairs}
    assert pairs[(0, 2)].slow_hosts == pairs[(2, 0)].slow_hosts == ["h3"]
    assert pairs[(1, 3)].slow_hosts == pairs[(3, 1)].slow_hosts == []
    # the link's bandwidth: h1 - h3's as measured, extrapolated at its time per byte
    assert pairs[(0, 2)].link_Bps == pytest.approx(65536 / 2.4e-3)
    assert pairs[(1, 3)].link_Bps == pytest.approx(65536 / 61e-6)  # h4's link, the slower


# -- the program's hosts, through its launcher (--atlas auto) ------------------------------------
def test_the_program_s_launcher_words_reach_its_hosts_less_its_placing_options(tmp_path):
    agent = tmp_path / "rsh-agent"  # an executable option value is not the program
    agent.write_text("#!/bin/sh\n")
    agent.chmod(0o755)
    command = ["mpirun", "--hostfile", "/h", "--mca", "plm_rsh_agent", str(agent), "-np", "4",
               "--map-by=slot", "--bind-to", "none", "-x", "A=1", "/bin/true", "-np", "9"]  # fmt: skip
    assert program_index(command[1:]) == 12
    words = host_launch(command, ["pa1", "pa3", "pa1"])
    assert words == ("--hostfile", "/h", "--mca", "plm_rsh_agent", str(agent), "--bind-to", "none",
                     "-x", "A=1", "--host", "pa1:2,pa3:1", "--map-by", "node")  # fmt: skip
    assert host_launch(["/bin/true", "-np", "2"], ["a", "b"]) is None  # no launcher
