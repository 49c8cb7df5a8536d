// Brandes betweenness for a batch of sources at once (kernels/algorithms/betweenness).
//
// State is row-major [batch][n]: dist (int32, -1 unreached), sigma (shortest-path counts, float64)
// and delta (dependencies, float64). Each level of the BFS is two launches over every (source,
// node) entry: discovery pushes from the level-d nodes, then the level-(d+1) nodes pull their
// path counts. The backward sweep pulls each node's dependency from its successors in CSR order,
// the same sum in the same order as the CPU's.

extern "C" __global__ void bc_discover(const long long* __restrict__ indptr,
                                       const int* __restrict__ indices, int n, long long cells,
                                       int* __restrict__ dist, int level,
                                       int* __restrict__ grew) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= cells || dist[idx] != level) return;
    const long long row = idx - idx % n;
    const int v = (int)(idx - row);
    bool any = false;
    for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
        const long long w = row + indices[j];
        if (dist[w] < 0) {
            dist[w] = level + 1;  // every writer writes the same value
            any = true;
        }
    }
    if (any) *grew = 1;
}

extern "C" __global__ void bc_sigma(const long long* __restrict__ indptr,
                                    const int* __restrict__ indices, int n, long long cells,
                                    const int* __restrict__ dist, double* __restrict__ sigma,
                                    int level) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= cells || dist[idx] != level) return;
    const long long row = idx - idx % n;
    const int w = (int)(idx - row);
    double total = 0.0;
    for (long long j = indptr[w]; j < indptr[w + 1]; ++j) {
        const long long v = row + indices[j];
        if (dist[v] == level - 1) total += sigma[v];
    }
    sigma[idx] = total;
}

extern "C" __global__ void bc_delta(const long long* __restrict__ indptr,
                                    const int* __restrict__ indices, int n, long long cells,
                                    const int* __restrict__ dist,
                                    const double* __restrict__ sigma,
                                    double* __restrict__ delta, int level) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= cells || dist[idx] != level) return;
    const long long row = idx - idx % n;
    const int v = (int)(idx - row);
    const double sv = sigma[idx];
    double total = 0.0;
    for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
        const long long w = row + indices[j];
        if (dist[w] == level + 1) total += (sv / sigma[w]) * (1.0 + delta[w]);
    }
    delta[idx] = total;
}

// bc[v] += contributions of the batch's sources, summed over the batch in source order.
extern "C" __global__ void bc_accumulate(int n, int batch, const int* __restrict__ sources,
                                         const int* __restrict__ dist,
                                         const double* __restrict__ delta,
                                         const long long* __restrict__ reached, int endpoints,
                                         double* __restrict__ bc) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    double total = 0.0;
    for (int b = 0; b < batch; ++b) {
        const long long idx = (long long)b * n + v;
        if (dist[idx] < 0) continue;
        if (v == sources[b]) {
            if (endpoints) total += (double)(reached[b] - 1);
        } else {
            total += endpoints ? delta[idx] + 1.0 : delta[idx];
        }
    }
    bc[v] += total;
}
