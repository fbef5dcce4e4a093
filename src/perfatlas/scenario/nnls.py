"""Non-negative least squares: min ||A x - b||_2 subject to x >= 0, by the active-set method of
Lawson and Hanson (Solving Least Squares Problems, 1974, chapter 23, algorithm NNLS).

The solution it returns is made basic (at most rank(A) entries non-zero), so a mix solved against
four rows (three rates and the time) uses at most four kernel variants.
"""

from __future__ import annotations

import numpy as np


def nnls(a: np.ndarray, b: np.ndarray, max_iterations: int | None = None) -> np.ndarray:
    m, n = a.shape
    x = np.zeros(n)
    passive = np.zeros(n, dtype=bool)  # the set P of the method; the rest is Z (held at 0)
    tolerance = 10 * np.finfo(float).eps * np.linalg.norm(a, 1) * max(m, n)
    limit = max_iterations or 3 * n
    gradient = a.T @ (b - a @ x)  # w = A^T (b - A x): the negative gradient
    for _ in range(limit):
        free = ~passive & (gradient > tolerance)
        if not free.any():
            break
        passive[int(np.argmax(np.where(free, gradient, -np.inf)))] = True
        while True:  # the inner loop: least squares on P, stepping back to keep x >= 0
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if (z[passive] > tolerance).all():
                break
            negative = passive & (z <= tolerance)
            gap = x[negative] - z[negative]
            step = np.min(np.where(gap > 0, x[negative] / np.where(gap > 0, gap, 1.0), 0.0))
            x = x + step * (z - x)
            passive &= x > tolerance
            x[~passive] = 0.0
        x = z
        gradient = a.T @ (b - a @ x)
    return basic(a, x)


def basic(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The same A x with at most rank(A) non-zero entries (Caratheodory's reduction): while the
    columns in use are dependent, move x along a null vector of them until an entry reaches 0."""
    x = x.copy()
    while True:
        support = np.flatnonzero(x > 0)
        columns = a[:, support]
        if len(support) <= np.linalg.matrix_rank(columns):
            return x
        null = np.linalg.svd(columns)[2][-1]  # columns @ null = 0
        if not (null > 0).any():
            null = -null
        ratios = np.where(null > 0, x[support] / np.where(null > 0, null, 1.0), np.inf)
        first = int(np.argmin(ratios))  # the entry that reaches 0 first
        x[support] -= ratios[first] * null
        x[support[first]] = 0.0
        x[x < 0] = 0.0
