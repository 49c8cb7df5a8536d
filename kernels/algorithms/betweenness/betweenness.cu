// Brandes betweenness for a batch of sources at once (kernels/algorithms/betweenness).
//
// State is row-major [batch][n]: level (int32, -1 unreached), sigma (shortest-path counts,
// float64), delta (dependencies, float64) and, with weights, dist (float64, +inf unreached) and
// mark (int32: the relaxation round that last lowered dist). One thread per (source, node) entry.
//
// Without weights (`weighted` 0) level is the BFS level and an arc u -> v is tight when
// level[u] == level[v] - 1. With weights the distances come first (bc_relax, a Bellman-Ford
// fixpoint), an arc is tight when dist[u] < dist[v] and dist[u] + w == dist[v] exactly (the rule
// of the CPU's `_tight`), and level is the most tight arcs on a path from the source (bc_discover
// with an atomic maximum), so every tight arc climbs at least one level. Then sigma is pulled over
// the in-rows level by level and delta over the out-rows in reverse: the same sums in the same
// CSR order as the CPU's.

__device__ __forceinline__ bool tight(int weighted, const int* __restrict__ level,
                                      const double* __restrict__ dist,
                                      const double* __restrict__ weight, long long j,
                                      long long from, long long to) {
    if (!weighted) return level[from] == level[to] - 1;
    const double du = dist[from], dv = dist[to];
    return du < dv && du + weight[j] == dv;
}

// One relaxation round over the entries whose distance dropped in the previous round. Distances
// are non-negative, so their bit patterns order like their values: atomicMin on the bits is an
// atomic minimum. An entry lowered again during the round is marked for the next one, so the
// fixpoint (the smallest left-to-right float64 sum over paths, as Dijkstra's) is reached.
extern "C" __global__ void bc_relax(const long long* __restrict__ indptr,
                                    const int* __restrict__ indices,
                                    const double* __restrict__ weight, int n, long long cells,
                                    double* dist, int* mark, int round, int* __restrict__ changed) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= cells || mark[idx] != round - 1) return;
    const long long row = idx - idx % n;
    const int v = (int)(idx - row);
    const double dv = dist[idx];
    bool any = false;
    for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
        const long long w = row + indices[j];
        const double nd = dv + weight[j];
        if (nd < dist[w]) {
            const unsigned long long bits = (unsigned long long)__double_as_longlong(nd);
            const unsigned long long old =
                atomicMin(reinterpret_cast<unsigned long long*>(&dist[w]), bits);
            if (bits < old) {
                mark[w] = round;
                any = true;
            }
        }
    }
    if (any) *changed = 1;
}

// The entries at `depth` push depth + 1 along their tight out-arcs: first discovery without
// weights (every writer writes the same value), the maximum with weights.
extern "C" __global__ void bc_discover(const long long* __restrict__ indptr,
                                       const int* __restrict__ indices,
                                       const double* __restrict__ weight,
                                       const double* __restrict__ dist, int weighted, int n,
                                       long long cells, int* level, int depth,
                                       int* __restrict__ grew) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= cells || level[idx] != depth) return;
    const long long row = idx - idx % n;
    const int v = (int)(idx - row);
    bool any = false;
    for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
        const long long w = row + indices[j];
        if (!weighted) {
            if (level[w] < 0) {
                level[w] = depth + 1;
                any = true;
            }
        } else if (tight(1, level, dist, weight, j, idx, w)) {
            atomicMax(&level[w], depth + 1);
            any = true;
        }
    }
    if (any) *grew = 1;
}

// Path counts of the entries at `depth`, pulled over the in-rows (their tight predecessors are
// all on lower levels, so final).
extern "C" __global__ void bc_sigma(const long long* __restrict__ in_indptr,
                                    const int* __restrict__ in_indices,
                                    const double* __restrict__ in_weight,
                                    const double* __restrict__ dist, int weighted, int n,
                                    long long cells, const int* __restrict__ level,
                                    double* __restrict__ sigma, int depth) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= cells || level[idx] != depth) return;
    const long long row = idx - idx % n;
    const int w = (int)(idx - row);
    double total = 0.0;
    for (long long j = in_indptr[w]; j < in_indptr[w + 1]; ++j) {
        const long long v = row + in_indices[j];
        if (tight(weighted, level, dist, in_weight, j, v, idx)) total += sigma[v];
    }
    sigma[idx] = total;
}

// Dependencies of the entries at `depth`, pulled from their tight successors over the out-rows.
extern "C" __global__ void bc_delta(const long long* __restrict__ indptr,
                                    const int* __restrict__ indices,
                                    const double* __restrict__ weight,
                                    const double* __restrict__ dist, int weighted, int n,
                                    long long cells, const int* __restrict__ level,
                                    const double* __restrict__ sigma,
                                    double* __restrict__ delta, int depth) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= cells || level[idx] != depth) return;
    const long long row = idx - idx % n;
    const int v = (int)(idx - row);
    const double sv = sigma[idx];
    double total = 0.0;
    for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
        const long long w = row + indices[j];
        if (tight(weighted, level, dist, weight, j, idx, w)) {
            total += (sv / sigma[w]) * (1.0 + delta[w]);
        }
    }
    delta[idx] = total;
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
        const long long idx = (long long)b * n + v;
        if (level[idx] < 0) continue;
        if (v == sources[b]) {
            if (endpoints) total += (double)(reached[b] - 1);
        } else {
            total += endpoints ? delta[idx] + 1.0 : delta[idx];
        }
    }
    bc[v] += total;
}
