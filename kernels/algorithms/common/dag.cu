// Out-lists of the (degree, id) orientation in place of the CSR (see dag.py,
// device_degree_out_lists): the out-list of v is the filter of v's CSR row by "u is above v"
// (degree, then id), written at the row's own offsets, so neither a sort nor a scan is needed.

// u is above v in the (degree, id) order.
__device__ __forceinline__ bool above(int u, int du, int v, int dv) {
    return du > dv || (du == dv && u > v);
}

// Keep the entries [j0, j1) of v's row that are above v, a warp 32 at a time; `at` (in every
// lane) where the next kept entry goes, or -1: claim each warp's places with one atomic on
// od[v] (rows split between warps). Returns the entries kept.
__device__ __forceinline__ int filter_row(const int* __restrict__ indices,
                                          const int* __restrict__ deg, int v, long long j0,
                                          long long j1, int* __restrict__ row_out, int at,
                                          int* od) {
    const int lane = threadIdx.x & 31, dv = deg[v];
    int kept = 0;
    for (long long j = j0; j < j1; j += 32) {
        int u = 0;
        bool up = false;
        if (j + lane < j1) {
            u = indices[j + lane];
            up = above(u, deg[u], v, dv);
        }
        const unsigned mask = __ballot_sync(0xffffffffu, up);
        if (!mask) continue;
        int base = at;
        if (at < 0) {
            if (lane == 0) base = atomicAdd(&od[v], __popc(mask));
            base = __shfl_sync(0xffffffffu, base, 0);
        } else {
            at += __popc(mask);
        }
        if (up) row_out[base + __popc(mask & ((1u << lane) - 1))] = u;
        kept += __popc(mask);
    }
    return kept;
}

// A warp per row of at most `long_row` entries (kept entries in CSR order, od[v] their count).
extern "C" __global__ void out_lists_rows(const long long* __restrict__ indptr,
                                          const int* __restrict__ indices,
                                          const int* __restrict__ deg, int n, long long long_row,
                                          int* __restrict__ out, int* od) {
    const int warps = gridDim.x * (blockDim.x >> 5);
    for (int v = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; v < n; v += warps) {
        const long long j0 = indptr[v], j1 = indptr[v + 1];
        if (j1 - j0 > long_row) continue;
        const int kept = filter_row(indices, deg, v, j0, j1, out + j0, 0, od);
        if ((threadIdx.x & 31) == 0) od[v] = kept;
    }
}

// A warp per piece of `long_row` entries of a longer row (item k: row rows[k], piece
// pieces[k]); places claimed by atomics on od[v], which starts at 0.
extern "C" __global__ void out_lists_long(const long long* __restrict__ indptr,
                                          const int* __restrict__ indices,
                                          const int* __restrict__ deg,
                                          const long long* __restrict__ rows,
                                          const long long* __restrict__ pieces, int items,
                                          long long long_row, int* __restrict__ out, int* od) {
    const int warps = gridDim.x * (blockDim.x >> 5);
    for (int k = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; k < items; k += warps) {
        const int v = (int)rows[k];
        const long long j0 = indptr[v] + pieces[k] * long_row;
        filter_row(indices, deg, v, j0, min(indptr[v + 1], j0 + long_row), out + indptr[v], -1,
                   od);
    }
}
