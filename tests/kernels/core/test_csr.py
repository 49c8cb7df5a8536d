"""The parallel bucket CSR of build_graph against a brute-force oracle (Python sets/dicts)."""

from __future__ import annotations

import numpy as np
import pytest

from graphgpu.kernels.core import csr
from graphgpu.kernels.core.graph import build_graph


def oracle(src: list[int], dst: list[int], weights: list[float] | None
           ) -> dict[int, dict[int, float]]:
    """Each node's neighbours with the smallest weight of the edges between them."""
    rows: dict[int, dict[int, float]] = {}
    for k, (a, b) in enumerate(zip(src, dst, strict=True)):
        if a == b:
            continue
        w = 1.0 if weights is None else weights[k]
        for x, y in ((a, b), (b, a)):
            row = rows.setdefault(x, {})
            row[y] = min(row.get(y, w), w)
    return rows


@pytest.mark.parametrize("threads", [1, 2, 3, 16])
@pytest.mark.parametrize("seed", range(12))
def test_build_graph_rows_match_the_oracle(seed: int, threads: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 4000))
    top = int(rng.integers(2, 3000)) * (10**9 if seed % 4 == 3 else 1)  # sparse ids: sort path
    src, dst = rng.integers(0, top, m), rng.integers(0, top, m)
    src[: m // 3] = rng.integers(0, 4, m // 3)  # hubs: low ids in many edges, repeats
    weights = rng.integers(0, 7, m).astype(float) if seed % 2 else None
    monkeypatch.setattr(csr, "THREADS", threads)
    monkeypatch.setattr(csr, "_MIN_SHARE", 1)  # small graphs shared out too
    graph, report = build_graph(src, dst, weights)
    expected = oracle(src.tolist(), dst.tolist(), None if weights is None else weights.tolist())
    ids = graph.node_ids.tolist()
    assert ids == sorted(set(src.tolist()) | set(dst.tolist()))
    for i, node in enumerate(ids):
        lo, hi = graph.indptr[i], graph.indptr[i + 1]
        neighbours = [ids[j] for j in graph.indices[lo:hi]]
        assert neighbours == sorted(expected.get(node, {}))  # ascending, each once
        if weights is not None:
            assert graph.weights[lo:hi].tolist() == [expected[node][x] for x in neighbours]
    distinct = sum(len(row) for row in expected.values()) // 2
    assert graph.m == distinct and graph.indices.dtype == np.int32
    assert report.self_loops_dropped == int((src == dst).sum())
    assert report.duplicates_merged == m - report.self_loops_dropped - distinct


def test_buckets_of_one_row_and_a_node_without_edges() -> None:
    # n below the bucket count: one row a bucket; node 3 only a self-loop (no row entries).
    indptr, indices, weights = csr.undirected_csr(
        np.array([0, 1, 2, 0], np.int64), np.array([1, 2, 0, 1], np.int64),
        np.array([3.0, 1.0, 2.0, 0.5]), 4, np.dtype(np.int32), np.dtype(np.int64))
    assert indptr.tolist() == [0, 2, 4, 6, 6]
    assert indices.tolist() == [1, 2, 0, 2, 0, 1]
    assert weights.tolist() == [0.5, 2.0, 0.5, 1.0, 2.0, 1.0]


@pytest.mark.parametrize("m", [1, 7, 200_000])
def test_edge_ends_match_numpy(m: int) -> None:
    """The ids' extremes and self-loops of one pass equal NumPy's, negative ids included, on
    one thread's share and on several."""
    rng = np.random.default_rng(m)
    src = rng.integers(-5, 1_000, m)
    dst = rng.integers(-3, 1_200, m)
    dst[::11] = src[::11]
    assert csr.edge_ends(src, dst) == (int(src.min()), int(src.max()), int(dst.min()),
                                       int(dst.max()), int((src == dst).sum()))


def test_dense_relabel_of_every_id_gives_the_ids_back() -> None:
    """Every id up to the top present: the ranks are the ids (the arrays themselves); with a
    gap, the table's ranks, which map back to the ids."""
    rng = np.random.default_rng(5)
    lo, hi = rng.integers(0, 50, 400), rng.integers(0, 50, 400)
    extra = np.arange(50)
    ids, lo_i, hi_i = csr.dense_relabel(lo, hi, extra, 49)
    assert ids.tolist() == list(range(50)) and lo_i is lo and hi_i is hi
    lo, hi = np.where(lo == 17, 16, lo), np.where(hi == 17, 16, hi)
    ids, lo_i, hi_i = csr.dense_relabel(lo, hi, np.delete(extra, 17), 49)
    assert 17 not in ids and ids.size == 49
    assert np.array_equal(ids[lo_i], lo) and np.array_equal(ids[hi_i], hi)

