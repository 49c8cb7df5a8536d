"""What a ``triangles`` or ``clustering`` job does on either backend: clustering, the results.

The functions take the array module (NumPy or CuPy) so that :mod:`.cpu` and :mod:`.gpu` share
them.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from graphgpu.kernels.core import reductions
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

__all__ = ["clustering", "clustering_result", "cube_rooted", "exact_mean", "fagiolo", "mean_limbs",
           "result", "row_chunks", "weight_scale"]


def clustering(xp: Any, triangles: Any, degrees: Any) -> Any:
    """Local clustering from per-node triangles and degrees (NetworkX's definition)."""
    pairs = (degrees * (degrees - 1)).astype(xp.int64)
    return xp.where(pairs > 0, (2 * triangles).astype(xp.float64)
                    / xp.maximum(pairs, 1).astype(xp.float64), 0.0)


def result(xp: Any, triangles: Any, local: Any, degrees: Any,
           sums: Any = None) -> AlgorithmResult:
    """The ``triangles`` result from per-node counts, clustering and degrees (arrays of ``xp``,
    left where they are); the summary's sums are taken there too, read back in one transfer.
    ``sums``: those sums where the caller took them already (an array: the counts, the
    ``d (d - 1)``, the :func:`mean_limbs` of ``local``)."""
    if sums is None:
        pairs = (degrees.astype(xp.int64) * (degrees - 1)).sum()
        sums = xp.stack([triangles.sum(), pairs, *mean_limbs(xp, local)])
    sums = [int(x) for x in sums.tolist()]
    sums[1] //= 2  # triads: pairs of neighbours
    total = sums[0] // 3
    summary = {"triangles": total,
               "transitivity": 3 * total / sums[1] if total else 0.0,
               "average_clustering": exact_mean(sums[2:], int(local.shape[0]))}
    return AlgorithmResult(summary=summary,
                           node_values={"triangles": triangles, "clustering": local})


#: Bits of the fixed-point limbs of :func:`mean_limbs`, and their number: clustering values are
#: 0 or at least 2 / (d (d - 1)) > 2^-62, so their last bit is worth at least 2^-114 > 2^-128.
LIMB_BITS, LIMBS = 32, 4


def mean_limbs(xp: Any, values: Any) -> list[Any]:
    """Sums (int64 scalars of ``xp``) of the 32-bit limbs of ``values`` in [0, 1] written as
    ``sum_k limb_k 2^(-32 (k + 1))``: exact (each limb is at most 2^32, so n < 2^31 of them sum
    in int64), hence the same whatever the order of the additions, on either backend."""
    rest, sums = values.astype(xp.float64), []
    for _ in range(LIMBS):
        scaled = rest * float(1 << LIMB_BITS)  # exact: a power of two
        limb = xp.floor(scaled)
        rest = scaled - limb  # exact: same binade or below
        sums.append(limb.astype(xp.int64).sum())
    return sums


def exact_mean(limb_sums: list[int], n: int) -> float:
    """The mean of the values whose :func:`mean_limbs` are ``limb_sums``, correctly rounded
    (0.0 when ``n`` is 0)."""
    if not n:
        return 0.0
    total = 0
    for limb in limb_sums:
        total = (total << LIMB_BITS) + limb
    return float(Fraction(total, n << (LIMB_BITS * LIMBS)))


def cube_rooted(xp: Any, weights: Any, arcs: int, scale: float) -> Any:
    """Arc values of the ``clustering`` algorithm: ``cbrt(w / scale)`` (NetworkX's geometric
    mean takes the cube root of a product of three of them), or 1 for every arc."""
    if weights is None:
        return xp.ones(arcs, dtype=xp.float64)
    return xp.cbrt(weights / scale)


def row_chunks(wedges: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Row ranges whose wedges (``wedges[i]``: two-step paths from row ``i``, which bound that
    row of the sparse product) add up to about ``budget`` each; a heavier row is a range alone."""
    cum = np.cumsum(wedges)
    chunks, start, done = [], 0, 0.0
    while start < wedges.shape[0]:
        end = max(int(np.searchsorted(cum, done + budget, side="right")), start + 1)
        chunks.append((start, end))
        start, done = end, float(cum[end - 1])
    return chunks


def fagiolo(xp: Any, sparse: Any, n: int, out_csr: tuple[Any, Any, Any],
            in_csr: tuple[Any, Any, Any] | None, scale: float, budget: int,
            progress: ProgressFn) -> tuple[Any, Any]:
    """Per node ``diag(S^3)`` and its denominator, for NetworkX's clustering of every kind.

    ``S`` is the arc-value matrix ``C`` (:func:`cube_rooted`; ``scale`` = 0: unweighted) of an
    undirected graph, or ``C + C^T`` of a directed one. ``diag(S^3)[i] = sum_j S_ij (S^2)_ij``:
    the row sums of ``(S[R] @ S) * S[R]`` over chunks of rows ``R`` (:func:`row_chunks`), so the
    sparse product holds ``budget`` entries at most (but for a single heavy row). The
    clustering is ``diag / pairs`` with ``pairs`` = ``d (d - 1)`` undirected, ``2 (dt (dt - 1)
    - 2 db)`` directed (``dt``: in + out degree, ``db``: reciprocated arcs); as NetworkX
    computes them, so that unweighted counts (exact integers in float64) give its values.

    Parameters
    ----------
    xp, sparse : module
        NumPy and ``scipy.sparse``, or CuPy and ``cupyx.scipy.sparse``.
    n : int
    out_csr, in_csr : tuple of arrays
        ``(indptr, indices, weights)`` of the arcs (weights None: unweighted) and, for a
        directed graph, of its in-arcs (None: undirected).
    scale : float
        The largest weight (weights are divided by it), or 0 for unweighted.
    budget : int
        Wedges per chunk of rows.
    progress : ProgressFn

    Returns
    -------
    diag, pairs : arrays of float64 (on ``xp``)
    """
    def canonical(m: Any) -> Any:
        # On the device, columns strictly increasing within each row (sorted, no duplicates)
        # are checked here and the matrix said so: CuPy's products otherwise check it
        # themselves by a reduction compiled per length class (2.7 s on the first job of a new
        # size, H100). SciPy's own check compiles nothing. (Entry p is in order after p - 1 or
        # starts a row; no boolean masks, whose scans compile per length class as well.)
        if xp is np:
            return m
        indices, nnz = m.indices, int(m.indices.shape[0])
        in_order = xp.empty(nnz + 1, dtype=bool)
        in_order[1:nnz] = indices[1:] > indices[:-1]
        in_order[m.indptr] = True
        if reductions.all_true(in_order):
            m.has_canonical_format = True
        return m  # else left to the library to sort

    def matrix(csr: tuple[Any, Any, Any], ones: bool) -> Any:
        indptr, indices, weights = csr
        values = cube_rooted(xp, None if ones or not scale else weights,
                             int(indices.shape[0]), scale)
        return canonical(sparse.csr_matrix((values, indices, indptr), shape=(n, n)))

    s = matrix(out_csr, False)
    pattern = matrix(out_csr, True) if scale else s
    degree = xp.diff(out_csr[0]).astype(xp.float64)
    pairs = degree * (degree - 1)
    if in_csr is not None:
        s = canonical(s + matrix(in_csr, False))
        pattern = canonical(pattern + matrix(in_csr, True)) if scale else s
        total = degree + xp.diff(in_csr[0])
        reciprocal = total - xp.diff(pattern.indptr)  # neighbours both ways count twice in total
        pairs = 2 * (total * (total - 1) - 2 * reciprocal)
    # Wedges from each row (a bound on its product's entries; pattern values 2 overcount).
    wedges = pattern @ xp.diff(pattern.indptr).astype(xp.float64)
    diag = xp.zeros(n, dtype=xp.float64)
    chunks = row_chunks(wedges.get() if xp is not np else wedges, budget)
    for done, (start, end) in enumerate(chunks):
        block = canonical(s[start:end])
        if block.nnz:
            wedge_values = canonical(canonical(block @ s).multiply(block))
            diag[start:end] = xp.asarray(wedge_values.sum(axis=1)).ravel()
        progress(0.1 + 0.9 * (done + 1) / len(chunks), "clustering: sparse products")
    return diag, pairs


def weight_scale(graph: Graph, weighted: bool) -> float:
    """The largest weight, by which NetworkX divides every weight; 0 for an unweighted run.

    Raises
    ------
    InvalidInput
        The largest weight is 0 (NetworkX would divide by it).
    """
    if not weighted or graph.weights is None or graph.weights.size == 0:
        return 0.0
    scale = float(graph.weights.max())
    if scale == 0:
        raise InvalidInput("weighted clustering divides the weights by the largest, which is 0",
                           field="weighted")
    return scale


def clustering_result(diag: np.ndarray, pairs: np.ndarray, scale: float) -> AlgorithmResult:
    """The ``clustering`` result from :func:`fagiolo`'s arrays (on the host): the
    clustering is one division of each node's diagonal by its pairs, 0 where either is."""
    local = np.where((diag != 0) & (pairs > 0), diag / np.maximum(pairs, 1), 0.0)
    summary = {"average_clustering": float(local.mean()) if local.size else 0.0,
               "max_weight": scale or None}
    return AlgorithmResult(summary=summary,
                           node_values={"triangles": diag / 2, "clustering": local})
