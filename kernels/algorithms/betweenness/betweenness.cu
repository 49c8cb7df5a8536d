// Brandes betweenness with positive weights for a batch of sources at once
// (kernels/algorithms/betweenness; hop counts take hops.cu).
//
// State is node-major [n][batch] (entry v * batch + s for node v and the batch's source s):
// level (int32, -1 unreached), sigma (shortest-path counts, float64), delta (dependencies,
// float64) and, with weights, dist (float64, +inf unreached) and mark (int32: the relaxation
// round that last lowered dist). The lanes of a warp hold the sources of one node (or of a few),
// so they walk the same row, and the entries of a neighbour w are adjacent.
//
// Each step has two kernels: a thread per entry whose row holds at most `hub` arcs, and (the
// `_hub` kernels) a block per entry of a longer row, its threads taking every blockDim.x-th arc:
// walked by one thread, an R-MAT hub's row (10^5 arcs) held every level it was active on
// (rmat20, k=256: 14 ms per such launch at 6% occupancy, ~1.1 s in all).
//
// The distances come first (bc_relax, a Bellman-Ford
// fixpoint), an arc is tight when dist[u] < dist[v] and dist[u] + w == dist[v] exactly (the rule
// of the CPU's `_tight`), and level is the most tight arcs on a path from the source (bc_discover
// with an atomic maximum), so every tight arc climbs at least one level. Then sigma is pulled over
// the in-rows level by level and delta over the out-rows in reverse: the same sums as the CPU's,
// in CSR order except on hub rows (per thread, then a fixed tree over the block: deterministic).

constexpr int WARP = 32;

__device__ __forceinline__ bool tight(const double* __restrict__ dist,
                                      const double* __restrict__ weight, long long j,
                                      long long from, long long to) {
    const double du = dist[from], dv = dist[to];
    return du < dv && du + weight[j] == dv;
}

// The entry a thread works on and the arcs of its row it takes (j = start, start + step, ...
// below end). HUB: a block per entry of the rows in `hubs` (block b: hubs[b / batch], source
// b % batch); else a thread per entry, skipping rows over `hub` arcs. `ok` false: nothing to do.
struct Walk {
    long long idx, s, start, end;
    int v, step;
    bool ok;
};

template <bool HUB>
__device__ __forceinline__ Walk walk_of(const long long* __restrict__ ptr,
                                        const int* __restrict__ hubs, int batch, long long cells,
                                        long long hub) {
    Walk w{};
    if (HUB) {
        const long long h = blockIdx.x / batch;
        w.s = blockIdx.x - h * batch;
        w.v = hubs[h];
        w.idx = (long long)w.v * batch + w.s;
        w.start = ptr[w.v] + threadIdx.x;
        w.step = blockDim.x;
        w.ok = true;
    } else {
        w.idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
        if (w.idx >= cells) return w;
        w.v = (int)(w.idx / batch);
        w.s = w.idx - (long long)w.v * batch;
        w.start = ptr[w.v];
        w.step = 1;
        w.ok = ptr[w.v + 1] - w.start <= hub;
    }
    w.end = ptr[w.v + 1];
    return w;
}

// Sum of the block's `value`s in a fixed order (warps by shuffles, then warp 0 in warp order),
// valid in thread 0.
__device__ __forceinline__ double block_sum(double value) {
    __shared__ double warp_sums[WARP];
    for (int offset = WARP / 2; offset > 0; offset /= 2)
        value += __shfl_down_sync(0xffffffffu, value, offset);
    if (threadIdx.x % WARP == 0) warp_sums[threadIdx.x / WARP] = value;
    __syncthreads();
    double total = 0.0;
    if (threadIdx.x == 0)
        for (int w = 0; w < (int)(blockDim.x / WARP); ++w) total += warp_sums[w];
    return total;
}

// One relaxation round over the entries whose distance dropped in the previous round. Distances
// are non-negative, so their bit patterns order like their values: atomicMin on the bits is an
// atomic minimum. An entry lowered again during the round is marked for the next one, so the
// fixpoint (the smallest left-to-right float64 sum over paths, as Dijkstra's) is reached.
template <bool HUB>
__device__ __forceinline__ void relax(const long long* __restrict__ indptr,
                                      const int* __restrict__ indices,
                                      const double* __restrict__ weight,
                                      const int* __restrict__ hubs, long long hub, int batch,
                                      long long cells, double* dist, int* mark, int round,
                                      int* __restrict__ changed) {
    const Walk w = walk_of<HUB>(indptr, hubs, batch, cells, hub);
    if (!w.ok || mark[w.idx] != round - 1) return;
    const double dv = dist[w.idx];
    bool any = false;
    for (long long j = w.start; j < w.end; j += w.step) {
        const long long to = (long long)indices[j] * batch + w.s;
        const double nd = dv + weight[j];
        if (nd < dist[to]) {
            const unsigned long long bits = (unsigned long long)__double_as_longlong(nd);
            const unsigned long long old =
                atomicMin(reinterpret_cast<unsigned long long*>(&dist[to]), bits);
            if (bits < old) {
                mark[to] = round;
                any = true;
            }
        }
    }
    if (any) *changed = 1;
}

// The entries at `depth` push depth + 1 along their tight out-arcs (the maximum).
template <bool HUB>
__device__ __forceinline__ void discover(const long long* __restrict__ indptr,
                                         const int* __restrict__ indices,
                                         const double* __restrict__ weight,
                                         const double* __restrict__ dist,
                                         const int* __restrict__ hubs, long long hub,
                                         int batch, long long cells, int* level,
                                         int depth, int* __restrict__ grew) {
    const Walk w = walk_of<HUB>(indptr, hubs, batch, cells, hub);
    if (!w.ok || level[w.idx] != depth) return;
    bool any = false;
    for (long long j = w.start; j < w.end; j += w.step) {
        const long long to = (long long)indices[j] * batch + w.s;
        if (tight(dist, weight, j, w.idx, to)) {
            atomicMax(&level[to], depth + 1);
            any = true;
        }
    }
    if (any) *grew = 1;
}

// Path counts of the entries at `depth`, pulled over the in-rows (their tight predecessors are
// all on lower levels, so final).
template <bool HUB>
__device__ __forceinline__ void pull_sigma(const long long* __restrict__ in_indptr,
                                           const int* __restrict__ in_indices,
                                           const double* __restrict__ in_weight,
                                           const double* __restrict__ dist,
                                           const int* __restrict__ hubs, long long hub,
                                           int batch, long long cells,
                                           const int* __restrict__ level,
                                           double* __restrict__ sigma, int depth) {
    const Walk w = walk_of<HUB>(in_indptr, hubs, batch, cells, hub);
    if (!w.ok || level[w.idx] != depth) return;
    double total = 0.0;
    for (long long j = w.start; j < w.end; j += w.step) {
        const long long from = (long long)in_indices[j] * batch + w.s;
        if (tight(dist, in_weight, j, from, w.idx)) total += sigma[from];
    }
    if (HUB) total = block_sum(total);
    if (!HUB || threadIdx.x == 0) sigma[w.idx] = total;
}

// Dependencies of the entries at `depth`, pulled from their tight successors over the out-rows.
template <bool HUB>
__device__ __forceinline__ void pull_delta(const long long* __restrict__ indptr,
                                           const int* __restrict__ indices,
                                           const double* __restrict__ weight,
                                           const double* __restrict__ dist,
                                           const int* __restrict__ hubs, long long hub,
                                           int batch, long long cells,
                                           const int* __restrict__ level,
                                           const double* __restrict__ sigma,
                                           double* __restrict__ delta, int depth) {
    const Walk w = walk_of<HUB>(indptr, hubs, batch, cells, hub);
    if (!w.ok || level[w.idx] != depth) return;
    const double sv = sigma[w.idx];
    double total = 0.0;
    for (long long j = w.start; j < w.end; j += w.step) {
        const long long to = (long long)indices[j] * batch + w.s;
        if (tight(dist, weight, j, w.idx, to))
            total += (sv / sigma[to]) * (1.0 + delta[to]);
    }
    if (HUB) total = block_sum(total);
    if (!HUB || threadIdx.x == 0) delta[w.idx] = total;
}

// The kernels: each step's thread-per-entry form and its block-per-hub-entry form.
#define RELAX_ARGS                                                                             \
    const long long *__restrict__ indptr, const int *__restrict__ indices,                     \
        const double *__restrict__ weight, const int *__restrict__ hubs, long long hub,        \
        int batch, long long cells, double *dist, int *mark, int round, int *__restrict__ changed
#define DISCOVER_ARGS                                                                          \
    const long long *__restrict__ indptr, const int *__restrict__ indices,                     \
        const double *__restrict__ weight, const double *__restrict__ dist,                    \
        const int *__restrict__ hubs, long long hub, int batch, long long cells, \
        int *level, int depth, int *__restrict__ grew
#define SIGMA_ARGS                                                                             \
    const long long *__restrict__ in_indptr, const int *__restrict__ in_indices,               \
        const double *__restrict__ in_weight, const double *__restrict__ dist,                 \
        const int *__restrict__ hubs, long long hub, int batch, long long cells, \
        const int *__restrict__ level, double *__restrict__ sigma, int depth
#define DELTA_ARGS                                                                             \
    const long long *__restrict__ indptr, const int *__restrict__ indices,                     \
        const double *__restrict__ weight, const double *__restrict__ dist,                    \
        const int *__restrict__ hubs, long long hub, int batch, long long cells, \
        const int *__restrict__ level, const double *__restrict__ sigma,                       \
        double *__restrict__ delta, int depth

extern "C" __global__ void bc_relax(RELAX_ARGS) {
    relax<false>(indptr, indices, weight, hubs, hub, batch, cells, dist, mark, round, changed);
}
extern "C" __global__ void bc_relax_hub(RELAX_ARGS) {
    relax<true>(indptr, indices, weight, hubs, hub, batch, cells, dist, mark, round, changed);
}
extern "C" __global__ void bc_discover(DISCOVER_ARGS) {
    discover<false>(indptr, indices, weight, dist, hubs, hub, batch, cells, level,
                    depth, grew);
}
extern "C" __global__ void bc_discover_hub(DISCOVER_ARGS) {
    discover<true>(indptr, indices, weight, dist, hubs, hub, batch, cells, level,
                   depth, grew);
}
extern "C" __global__ void bc_sigma(SIGMA_ARGS) {
    pull_sigma<false>(in_indptr, in_indices, in_weight, dist, hubs, hub, batch, cells,
                      level, sigma, depth);
}
extern "C" __global__ void bc_sigma_hub(SIGMA_ARGS) {
    pull_sigma<true>(in_indptr, in_indices, in_weight, dist, hubs, hub, batch, cells,
                     level, sigma, depth);
}
extern "C" __global__ void bc_delta(DELTA_ARGS) {
    pull_delta<false>(indptr, indices, weight, dist, hubs, hub, batch, cells, level,
                      sigma, delta, depth);
}
extern "C" __global__ void bc_delta_hub(DELTA_ARGS) {
    pull_delta<true>(indptr, indices, weight, dist, hubs, hub, batch, cells, level,
                     sigma, delta, depth);
}

// bc[v] += contributions of the batch's sources, summed over the batch in source order.
extern "C" __global__ void bc_accumulate(int n, int batch, const int* __restrict__ sources,
                                         const int* __restrict__ level,
                                         const double* __restrict__ delta,
                                         const long long* __restrict__ reached, int endpoints,
                                         double* __restrict__ bc) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    double total = 0.0;
    for (int b = 0; b < batch; ++b) {
        const long long idx = (long long)v * batch + b;
        if (level[idx] < 0) continue;
        if (v == sources[b]) {
            if (endpoints) total += (double)(reached[b] - 1);
        } else {
            total += endpoints ? delta[idx] + 1.0 : delta[idx];
        }
    }
    bc[v] += total;
}
