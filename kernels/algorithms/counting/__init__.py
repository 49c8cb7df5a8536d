"""Exact counting: connected induced k-subgraphs, k-cliques and k-independent sets, CPU and GPU.

After Chatterjee, Radhakrishnan & Antonio, *Counting Problems on Graphs: GPU Storage and Parallel
Computing Techniques* (IPDPSW 2012), who test every k-combination inside windows of BFS levels on
graphs of at most ~500 nodes. We count the same three quantities exactly without testing
combinations, so that graphs of millions of edges are in reach:

* ``count_connected_subgraphs``: ESU (Wernicke 2006). Every connected k-set is enumerated once,
  from its smallest vertex ``r``: a search node is a set S with the list L of S's neighbours above
  ``r`` in discovery order; its children add one of L's not-yet-passed entries. The work is split
  into items, the search nodes at the depth where there are enough of them for the GPU (the
  host searches the levels above); the GPU runs one thread per item. Nodes of size k - 1 add
  their number of children without visiting them.
* ``count_cliques``: kClist-style (Danisch et al. 2018). Orient every edge upwards in an order:
  on the CPU a degeneracy (smallest-last) order, so each vertex keeps at most degeneracy-many
  out-neighbours; on the GPU a (degree, id) order, built on the device with a sort and scans
  (out-degrees below sqrt(2m); the peeling of a degeneracy order is sequential host work that
  took longer than the whole GPU search). Per root, a bitmap of the out-neighbourhood's
  adjacency, then a depth-first search where the candidates of a node are the AND of its
  parent's candidates and the chosen vertex's row. The GPU runs a warp per work item, each lane
  owning words of the bitmaps; an item is a root or, for roots with many candidates, one of its
  search nodes up to three levels down, cut on the device one level per round (the cutting
  kernels count the nodes above), so one giant clique does not leave a single warp with all the
  work.
* ``count_independent_sets``, two regimes (``method``):

  - ``local`` (k <= 4, any graph, the default there): inclusion-exclusion over the edge sets
    inside a k-set, ``i_k = sum over F ⊆ E, |V(F)| <= k of (-1)^|F| C(n - |V(F)|, k - |V(F)|)``,
    grouped by the shape of F: ``i_2 = C(n,2) - m``, ``i_3 = C(n,3) - m(n-2) + P2 - T`` and
    ``i_4 = C(n,4) - m C(n-2,2) + P2 (n-3) + (C(m,2) - P2) - T (n-3) - S3 - P4 + C4 + paw
    - diamond + K4``, with ``P2 = sum C(d,2)`` (2-paths), ``S3 = sum C(d,3)`` (3-stars),
    ``P4 = sum over edges (d_u-1)(d_v-1) - 3T`` (3-paths), ``paw = sum t_v (d_v - 2)``,
    ``diamond = sum over edges C(t_e, 2)``, T and K4 from the clique search and 4-cycles counted
    once from their highest-ranked vertex. O(m * degeneracy), no complement is built.
  - ``enumerate`` (any k, graphs of at most 1,024 nodes, the default for k > 4): the clique search
    on the complement (oriented by id, as out-lists). Its time grows with the number of
    independent sets of size below k, so the estimate refuses what would not finish.

Counts are Python integers, exact at any size: CPU totals are two-word accumulators per size, GPU
totals 128-bit (64-bit per-thread partials flushed before they would wrap).

``k_max=true`` returns every size 1..k in ``counts`` (the connected and clique searches produce
them anyway; for independent sets the empty set is not included). Estimates take the heaviest 32
and 64 random roots (edge items for connected sets), size each one's search tree with Knuth's
random-path estimator (unbiased, heavy-tailed) and extrapolate, held between bounds that grow
with what is counted (at least the search of a clique found greedily, at most the subsets of the
roots' out-neighbours), plus the orientation and bitmap work, at rates measured on the H100
machine; jobs over ``GRAPHGPU_MAX_JOB_SECONDS`` are refused before they are queued (422
``job_too_long``, the estimate in the error).

Modules: :mod:`~graphgpu.kernels.algorithms.counting.params` (the models),
:mod:`~graphgpu.kernels.algorithms.counting.estimate` (the estimates and the warm-up),
:mod:`~graphgpu.kernels.algorithms.counting.driver` (the runs, written once for both backends),
:mod:`~graphgpu.kernels.algorithms.counting.cliques` and
:mod:`~graphgpu.kernels.algorithms.counting.esu` (the host searches: the CPU's counts, the GPU's
work items, the estimates), :mod:`~graphgpu.kernels.algorithms.counting.cpu` and
:mod:`~graphgpu.kernels.algorithms.counting.gpu` (the entry points, ``counting.cu``); the
orderings are :mod:`graphgpu.kernels.algorithms.common.dag`.
"""

from __future__ import annotations

from graphgpu.kernels.algorithms.counting import cpu, estimate, gpu
from graphgpu.kernels.algorithms.counting.params import (
    CountParams,
    CountSummary,
    IndependentParams,
)
from graphgpu.kernels.core.registry import Algorithm, register_algorithm

# The three share their result model and are symmetrised; each names its parameters, backends
# and estimate.
COUNT_CONNECTED_SUBGRAPHS = register_algorithm(Algorithm(
    name="count_connected_subgraphs", params_model=CountParams, result_model=CountSummary,
    cpu=cpu.connected_cpu, gpu=gpu.connected_gpu, estimate=estimate.estimate_connected,
    directed="symmetrise",
    summary="Exact number of vertex sets of size k inducing a connected subgraph (ESU; k_max: "
            "every size up to k)."))
COUNT_CLIQUES = register_algorithm(Algorithm(
    name="count_cliques", params_model=CountParams, result_model=CountSummary,
    cpu=cpu.cliques_cpu, gpu=gpu.cliques_gpu, estimate=estimate.estimate_cliques,
    warm_up=estimate.warm_up_cliques, warm_up_parts=estimate.WARM_UP_PARTS,
    warm_up_split=("gpu",), directed="symmetrise",
    summary="Exact number of k-cliques (degeneracy-ordered DAG, bitmap search; k_max: every size "
            "up to k)."))
COUNT_INDEPENDENT_SETS = register_algorithm(Algorithm(
    name="count_independent_sets", params_model=IndependentParams, result_model=CountSummary,
    cpu=cpu.independent_cpu, gpu=gpu.independent_gpu, estimate=estimate.estimate_independent,
    directed="symmetrise",
    summary="Exact number of independent sets of size k (local counts for k <= 4 on any graph, "
            "enumeration on graphs of <= 1,024 nodes)."))
