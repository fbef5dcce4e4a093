"""A weighted graph cut into parts of given sizes, the least edge weight across them: METIS's
multilevel recursive bisection (Karypis & Kumar, SIAM J. Sci. Comput. 20(1), 1998), called in
libmetis (Debian's libmetis5, 32-bit idx_t and real_t) through ctypes.

METIS balances the parts to within a tolerance; ranks fill slots, so the parts here must be
exactly the sizes asked: what METIS leaves over a part's size is moved, one vertex at a time,
to a part under its size where that vertex costs the least cut weight."""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

from perfatlas.common.errors import UserError

METIS_OK = 1
METIS_NOPTIONS = 40
METIS_OPTION_SEED = 8  # enum moptions_et in metis.h
METIS_OPTION_UFACTOR = 16
SEED = 1  # the same graph, the same parts
UFACTOR = 1  # the tolerated imbalance, in thousandths: as tight as METIS goes


@cache
def _metis() -> ctypes.CDLL:
    name = ctypes.util.find_library("metis")
    if name is None:
        raise UserError("libmetis is not installed (Debian: apt install libmetis5)")
    return ctypes.CDLL(name)


def _array(kind: type, values: list) -> ctypes.Array:
    return (kind * max(len(values), 1))(*values)


def _metis_parts(count: int, edges: dict[tuple[int, int], int], sizes: list[int]) -> list[int]:
    """METIS_PartGraphRecursive's part of each vertex, the parts' target weights `sizes`."""
    xadj, adjncy, adjwgt = [0], [], []
    for vertex in _neighbours(count, edges):
        for other, weight in vertex:
            adjncy.append(other)
            adjwgt.append(weight)
        xadj.append(len(adjncy))
    idx, real = ctypes.c_int32, ctypes.c_float
    options = _array(idx, [0] * METIS_NOPTIONS)
    metis = _metis()
    metis.METIS_SetDefaultOptions(options)
    options[METIS_OPTION_SEED] = SEED
    options[METIS_OPTION_UFACTOR] = UFACTOR
    part = _array(idx, [0] * count)
    objective = idx(0)
    status = metis.METIS_PartGraphRecursive(
        ctypes.byref(idx(count)), ctypes.byref(idx(1)), _array(idx, xadj),
        _array(idx, adjncy), None, None, _array(idx, adjwgt), ctypes.byref(idx(len(sizes))),
        _array(real, [size / count for size in sizes]), None, options, ctypes.byref(objective),
        part,
    )  # fmt: skip
    if status != METIS_OK:
        raise RuntimeError(f"METIS_PartGraphRecursive returned {status}")
    return list(part[:count])


def _neighbours(count: int, edges: dict[tuple[int, int], int]) -> list[list[tuple[int, int]]]:
    """Each vertex's (neighbour, weight), sorted."""
    found: list[list[tuple[int, int]]] = [[] for _ in range(count)]
    for (a, b), weight in edges.items():
        found[a].append((b, weight))
        found[b].append((a, weight))
    return [sorted(vertex) for vertex in found]


def _weight_to(vertex: list[tuple[int, int]], part: int, parts: list[int]) -> int:
    """The weight between a vertex (its neighbours) and the vertices of `part`."""
    return sum(weight for other, weight in vertex if parts[other] == part)


def partition(count: int, edges: dict[tuple[int, int], int], sizes: list[int]) -> list[int]:
    """The part (0 .. len(sizes) - 1) of each of `count` vertices, part k holding exactly
    sizes[k] of them, cutting little weight of `edges` ({(a, b): weight >= 1}, a < b)."""
    if sum(sizes) != count or min(sizes, default=0) < 0:
        raise ValueError(f"parts of sizes {sizes} do not hold {count} vertices")
    if len(sizes) == 1:
        return [0] * count
    if edges and count > len(sizes):
        parts = _metis_parts(count, edges, sizes)
    else:  # nothing to weigh, or a vertex a part: in order, part by part
        parts = [k for k, size in enumerate(sizes) for _ in range(size)]
    neighbours = _neighbours(count, edges)
    held = [parts.count(k) for k in range(len(sizes))]
    for k in range(len(sizes)):
        while held[k] > sizes[k]:
            short = [j for j in range(len(sizes)) if held[j] < sizes[j]]
            moves = [
                (_weight_to(neighbours[v], k, parts) - _weight_to(neighbours[v], j, parts), v, j)
                for v in range(count)
                if parts[v] == k
                for j in short
            ]
            _, vertex, to = min(moves)
            parts[vertex] = to
            held[k] -= 1
            held[to] += 1
    return parts
