"""Nothing compiles after ready: the first job or upload after start-up takes what the next
one takes.

* A GPU worker's warm-up compiles what jobs on graphs of any size run: after it, the same
  algorithms on graphs of other sizes, undirected and directed, add nothing to CuPy's kernel
  cache (GPU; a fresh process and cache, so that every kernel is compiled here). Before, CuPy's
  reductions compiled per length class on the first job of a 300-node graph (3.4-3.6 s).
* The upload path's warm-up runs the relabelling's table, which the first upload with gaps in
  its ids needs (it loaded it instead: 34 MB/s, 5.4x the second upload, H100 host).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from graphgpu.kernels.core import csr
from graphgpu.kernels.core.device import gpu_available

#: Algorithms whose jobs ran CuPy reductions compiled per length class (CUB block sizes): a
#: worker warmed up on its two graphs compiled again on a 300- or 3,000-node graph's first job.
ALGORITHMS = ("bfs", "connected_components", "strongly_connected_components", "pagerank",
              "louvain", "leiden", "count_cliques", "apsp", "clustering")
#: Graphs of the sizes where CuPy's CUB reductions take block sizes of 64, 128, 256 and 512
#: threads (and where the warm-up's 64-node ring takes none).
SIZES = (200, 300, 1_000, 3_000, 20_000)

SCRIPT = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    from graphgpu.kernels.core.graph import build_graph
    from graphgpu.kernels.core.registry import algorithms, graph_view
    from graphgpu.kernels.generators import generate
    from graphgpu.workers.warmup import run_examples, warm_up

    cache = Path(os.environ["CUPY_CACHE_DIR"])
    names = tuple(sys.argv[1].split(","))

    def files():
        return sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file())

    warm_up("gpu", names)
    warmed = files()
    added = {}
    for n in map(int, sys.argv[2].split(",")):
        edges = generate("barabasi_albert", {"n": n, "m": 3, "seed": 1})
        for directed in (False, True):
            graph, _ = build_graph(edges.src, edges.dst, directed=directed)
            for name in names:
                algorithm = algorithms()[name]
                if directed and algorithm.directed == "refuse":
                    continue
                run_examples(algorithm, graph_view(algorithm, graph)[0], "gpu", skewed=True)
                new = sorted(set(files()) - set(warmed))
                if new:
                    added[f"{name} n={n} directed={directed}"] = len(new)
                    warmed = files()
    print(json.dumps({"warmed": len(warmed), "added": added}))
""")


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_jobs_on_new_graph_sizes_compile_nothing_after_warm_up(tmp_path: Path) -> None:
    env = {**os.environ, "CUPY_CACHE_DIR": str(tmp_path / "cupy")}
    done = subprocess.run([sys.executable, "-c", SCRIPT, ",".join(ALGORITHMS),
                           ",".join(map(str, SIZES))], env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["warmed"] > 0  # the warm-up compiled into this cache
    assert report["added"] == {}


def test_the_upload_warm_up_runs_both_relabellings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The upload path's warm-up graph has a missing id, so that the table's code is loaded
    before a first upload with gaps (an upload of ids 0..n-1 only checks them)."""
    from graphgpu.kernels.core.io import formats

    calls: list[bool] = []
    relabel = csr.dense_relabel

    def watched(lo: np.ndarray, hi: np.ndarray, extra: np.ndarray, top: int) -> tuple:
        result = relabel(lo, hi, extra, top)
        calls.append(result[1] is lo)  # True: every id present, the ids came back
        return result

    monkeypatch.setattr(csr, "dense_relabel", watched)
    formats.warm_up_upload_path()
    assert calls == [False]
