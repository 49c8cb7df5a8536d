// PageRank pull iteration (see kernels/algorithms/pagerank/__init__.py).
//
// Rows are taken by groups of `group` lanes (a power of two, 4..32, chosen by mean in-degree);
// a warp walks its rows in lock step so that the group reductions' shuffles are never divergent.
// Besides x_next, each row writes the next y = x_next / W and adds to two block sums: the L1
// change and the dangling mass of x_next; thread 0 of a block adds them to sums[0], sums[1].
// Rows of more than `heavy` in-arcs (R-MAT hubs: 10^5 of them in one row) are skipped by
// pagerank_pull and taken by pagerank_pull_heavy, in segments of a block each: walked by one
// lane group they made every iteration wait for the longest row.

constexpr int WARP = 32;
constexpr int MAX_WARPS = 32;

// The block's sums of (err, dangling) added to sums[0], sums[1]: one atomic each per block.
__device__ __forceinline__ void add_block_sums(double err, double dangling, double* sums) {
    __shared__ double block_err[MAX_WARPS];
    __shared__ double block_dangling[MAX_WARPS];
    const int lane = threadIdx.x % WARP;
    const int warp = threadIdx.x / WARP;
    for (int offset = WARP / 2; offset > 0; offset /= 2) {
        err += __shfl_down_sync(0xffffffffu, err, offset);
        dangling += __shfl_down_sync(0xffffffffu, dangling, offset);
    }
    if (lane == 0) {
        block_err[warp] = err;
        block_dangling[warp] = dangling;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double e = 0.0, g = 0.0;
        for (int w = 0; w < (int)(blockDim.x / WARP); ++w) {
            e += block_err[w];
            g += block_dangling[w];
        }
        atomicAdd(&sums[0], e);
        atomicAdd(&sums[1], g);
    }
}

extern "C" __global__ void pagerank_pull(
    const long long* __restrict__ in_indptr, const int* __restrict__ in_indices,
    const double* __restrict__ in_weights, const double* __restrict__ y,
    const double* __restrict__ p, const double* __restrict__ d,
    const double* __restrict__ inv_out, const double* __restrict__ x,
    double alpha, double dangling_mass, int n, int group, long long heavy,
    double* __restrict__ x_next, double* __restrict__ y_next, double* __restrict__ sums)
{
    const int lane = threadIdx.x % WARP;
    const int warp = threadIdx.x / WARP;
    const int rows_per_warp = WARP / group;
    const int sub = lane % group;
    const long long warps = (long long)gridDim.x * (blockDim.x / WARP);
    double err = 0.0, dangling = 0.0;
    for (long long base = ((long long)blockIdx.x * (blockDim.x / WARP) + warp) * rows_per_warp;
         base < n; base += warps * rows_per_warp) {
        const long long v = base + lane / group;
        double s = 0.0;
        const bool mine = v < n && in_indptr[v + 1] - in_indptr[v] <= heavy;
        if (mine) {
            const long long end = in_indptr[v + 1];
            if (in_weights != nullptr) {
                for (long long j = in_indptr[v] + sub; j < end; j += group)
                    s += y[in_indices[j]] * in_weights[j];
            } else {
#pragma unroll 4
                for (long long j = in_indptr[v] + sub; j < end; j += group)
                    s += y[in_indices[j]];
            }
        }
        for (int offset = group / 2; offset > 0; offset /= 2)
            s += __shfl_down_sync(0xffffffffu, s, offset, group);
        if (mine && sub == 0) {
            const double value = alpha * (s + dangling_mass * d[v]) + (1.0 - alpha) * p[v];
            x_next[v] = value;
            y_next[v] = value * inv_out[v];
            err += fabs(value - x[v]);
            if (inv_out[v] == 0.0) dangling += value;
        }
    }
    add_block_sums(err, dangling, sums);
}

// The rows of `rows` (those over `heavy` in-arcs) in segments of `segment` in-arcs, a block
// each: segment s of row rows[h] is piece s - first[h]. A block per whole row made the longest
// hub (10^6 in-arcs on rmat24: thousands of dependent gathers per thread) the tail of every
// iteration. Each block leaves its partial sum; the last of a row to finish (counted in done[h],
// reset by it for the next iteration) adds the row's partials in order, so the sum does not
// depend on which block finished when, and applies the row update.
extern "C" __global__ void pagerank_pull_heavy(
    const long long* __restrict__ in_indptr, const int* __restrict__ in_indices,
    const double* __restrict__ in_weights, const double* __restrict__ y,
    const double* __restrict__ p, const double* __restrict__ d,
    const double* __restrict__ inv_out, const double* __restrict__ x,
    double alpha, double dangling_mass, const int* __restrict__ rows,
    const int* __restrict__ segment_row, const int* __restrict__ first, long long segment,
    double* partial, unsigned* done, double* __restrict__ x_next, double* __restrict__ y_next,
    double* __restrict__ sums)
{
    __shared__ double warp_sums[MAX_WARPS];
    const int h = segment_row[blockIdx.x];
    const int v = rows[h];
    const long long row_start = in_indptr[v], row_end = in_indptr[v + 1];
    const long long start = row_start + (blockIdx.x - first[h]) * segment;
    const long long end = min(start + segment, row_end);
    double s = 0.0;
    if (in_weights != nullptr) {
        for (long long j = start + threadIdx.x; j < end; j += blockDim.x)
            s += y[in_indices[j]] * in_weights[j];
    } else {
#pragma unroll 4
        for (long long j = start + threadIdx.x; j < end; j += blockDim.x)
            s += y[in_indices[j]];
    }
    for (int offset = WARP / 2; offset > 0; offset /= 2)
        s += __shfl_down_sync(0xffffffffu, s, offset);
    if (threadIdx.x % WARP == 0) warp_sums[threadIdx.x / WARP] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        double total = 0.0;
        for (int w = 0; w < (int)(blockDim.x / WARP); ++w) total += warp_sums[w];
        partial[blockIdx.x] = total;
        __threadfence();
        const unsigned pieces = (unsigned)((row_end - row_start + segment - 1) / segment);
        if (atomicAdd(&done[h], 1u) == pieces - 1) {
            done[h] = 0;
            __threadfence();
            total = 0.0;
            for (unsigned k = 0; k < pieces; ++k) total += __ldcg(&partial[first[h] + k]);
            const double value = alpha * (total + dangling_mass * d[v]) + (1.0 - alpha) * p[v];
            x_next[v] = value;
            y_next[v] = value * inv_out[v];
            atomicAdd(&sums[0], fabs(value - x[v]));
            if (inv_out[v] == 0.0) atomicAdd(&sums[1], value);
        }
    }
}
