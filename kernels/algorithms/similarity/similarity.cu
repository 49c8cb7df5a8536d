// Jaccard coefficients (kernels/algorithms/similarity): the common neighbours of each pair,
// then the same IEEE division of two integer counts as on the CPU.
//
// Given pairs: a thread per pair intersects the two sorted rows (intersect::thread_lists) unless
// both hold over `limit` entries; those (hub pairs, whose merge would hold one thread for 10^5
// steps) are queued and a warp takes each (intersect::warp_lists).
//
// Every edge: the common neighbours of an edge's two ends are the triangles through it, and
// counting them per arc of the degree-ordered DAG (support_arcs) reads each out-list a few
// times instead of merging two full rows per edge (on rmat20 4.4e9 list entries instead of
// 7.0e10: sum of squared degrees). A triangle {a < b < c} (ranks) is found once, from arc
// a -> b, as c in both a's row after b and b's row; it adds 1 to the support of a -> b, a -> c
// and b -> c. jaccard_edges then looks each edge's arc up in its DAG row.

#include "intersect.cuh"

// LIMIT (list entries a thread takes) and RATIO (see intersect::warp_lists) come from gpu.py.

__device__ __forceinline__ double coefficient(long long common, long long du, long long dv) {
    const long long both = du + dv - common;
    return both == 0 ? 0.0 : (double)common / (double)both;
}

extern "C" __global__ void jaccard_pairs(const long long* __restrict__ indptr,
                                         const int* __restrict__ indices,
                                         const int* __restrict__ us, const int* __restrict__ vs,
                                         long long pairs, double* __restrict__ out,
                                         long long* __restrict__ heavy,
                                         unsigned long long* heavy_size) {
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= pairs) return;
    const int u = us[p], v = vs[p];
    const long long a = indptr[u], a_end = indptr[u + 1];
    const long long b = indptr[v], b_end = indptr[v + 1];
    if (min(a_end - a, b_end - b) > LIMIT) {
        heavy[atomicAdd(heavy_size, 1ull)] = p;
        return;
    }
    long long common = 0;
    intersect::thread_lists(indices, a, a_end, b, b_end,
                            [&](long long, long long) { ++common; });
    out[p] = coefficient(common, a_end - a, b_end - b);
}

// The queued pairs of jaccard_pairs, a warp each.
extern "C" __global__ void jaccard_pairs_heavy(const long long* __restrict__ indptr,
                                               const int* __restrict__ indices,
                                               const int* __restrict__ us,
                                               const int* __restrict__ vs,
                                               const long long* __restrict__ heavy,
                                               const unsigned long long* __restrict__ heavy_size,
                                               double* __restrict__ out) {
    const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
    const long long size = (long long)*heavy_size;
    for (long long h = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; h < size;
         h += warps) {
        const long long p = heavy[h];
        const int u = us[p], v = vs[p];
        const long long a = indptr[u], a_end = indptr[u + 1];
        const long long b = indptr[v], b_end = indptr[v + 1];
        unsigned common = 0;
        intersect::warp_lists(indices, a, a_end, b, b_end, RATIO,
                              [&](long long, long long) { ++common; });
        common = intersect::warp_sum(common);
        if ((threadIdx.x & 31) == 0) out[p] = coefficient(common, a_end - a, b_end - b);
    }
}

// The triangles of DAG arc e (a -> b): support of the three arcs of each.
template <bool WARP>
__device__ __forceinline__ void arc_support(const long long* __restrict__ dptr,
                                            const int* __restrict__ dadj, long long e, int a,
                                            unsigned* support) {
    const int b = dadj[e];
    unsigned found = 0;
    auto on_match = [&](long long i, long long j) {  // i: slot of a -> c, j: of b -> c
        atomicAdd(&support[i], 1u);
        atomicAdd(&support[j], 1u);
        ++found;
    };
    if (WARP) {
        intersect::warp_lists(dadj, e + 1, dptr[a + 1], dptr[b], dptr[b + 1], RATIO, on_match);
        found = intersect::warp_sum(found);
        if ((threadIdx.x & 31) != 0) found = 0;
    } else {
        intersect::thread_lists(dadj, e + 1, dptr[a + 1], dptr[b], dptr[b + 1], on_match);
    }
    if (found) atomicAdd(&support[e], found);
}

// A thread per DAG arc; arcs whose two lists both hold over LIMIT entries are queued.
extern "C" __global__ void support_arcs(const long long* __restrict__ dptr,
                                        const int* __restrict__ dadj,
                                        const int* __restrict__ tail, long long arcs,
                                        unsigned* support, long long* __restrict__ heavy,
                                        unsigned long long* heavy_size) {
    const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= arcs) return;
    const int a = tail[e], b = dadj[e];
    if (min(dptr[a + 1] - e - 1, dptr[b + 1] - dptr[b]) > LIMIT) {
        heavy[atomicAdd(heavy_size, 1ull)] = e;
        return;
    }
    arc_support<false>(dptr, dadj, e, a, support);
}

// The queued arcs of support_arcs, a warp each.
extern "C" __global__ void support_arcs_heavy(const long long* __restrict__ dptr,
                                              const int* __restrict__ dadj,
                                              const int* __restrict__ tail,
                                              const long long* __restrict__ heavy,
                                              const unsigned long long* __restrict__ heavy_size,
                                              unsigned* support) {
    const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
    const long long size = (long long)*heavy_size;
    for (long long h = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; h < size;
         h += warps) {
        const long long e = heavy[h];
        arc_support<true>(dptr, dadj, e, tail[e], support);
    }
}

// The coefficient of each edge (us[p], vs[p]) from the support of its DAG arc (found by a
// binary search of the higher rank in the lower's row, which holds it).
extern "C" __global__ void jaccard_edges(const long long* __restrict__ indptr,
                                         const int* __restrict__ us, const int* __restrict__ vs,
                                         const long long* __restrict__ rank,
                                         const long long* __restrict__ dptr,
                                         const int* __restrict__ dadj,
                                         const unsigned* __restrict__ support, long long pairs,
                                         double* __restrict__ out) {
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= pairs) return;
    const int u = us[p], v = vs[p];
    const long long ru = rank[u], rv = rank[v];
    const long long low = min(ru, rv);
    const int high = (int)max(ru, rv);
    long long l = dptr[low], h = dptr[low + 1];
    while (l < h) {
        const long long mid = (l + h) >> 1;
        if (dadj[mid] < high) l = mid + 1; else h = mid;
    }
    out[p] = coefficient(support[l], indptr[u + 1] - indptr[u], indptr[v + 1] - indptr[v]);
}
