// pCND*: greedy critical node detection, one CUDA block per start (driven by kernels/cnd_gpu.py).
// Graph: CSR with long long offsets and int neighbours. Each block owns its slice of the work
// arrays (MIS state, component ids, component sizes, marks) and keeps the best removed set it has
// found across the waves of starts it runs. The answer equals kernels/cnd_cpu.py's cnd_star for
// every seed: same hashed MIS, same scores (exact 64-bit integers), smallest node on ties.

#define GOLDEN 0x9E3779B97F4A7C15ULL
#define BIG_SCORE 0x7fffffffffffffffLL
#define BIG_NODE 0x7fffffff
#define SEEN 16  // distinct neighbour components a thread remembers before it rescans its row

__device__ __forceinline__ unsigned long long mix(unsigned long long x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

__device__ __forceinline__ long long pairs(long long s) { return s * (s - 1) / 2; }

// Lexicographic (score, node) minimum over the block; every thread gets the result.
__device__ void block_argmin(long long& score, int& node, long long* s_score, int* s_node) {
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int off = 16; off > 0; off >>= 1) {
        const long long os = __shfl_down_sync(0xffffffffu, score, off);
        const int on = __shfl_down_sync(0xffffffffu, node, off);
        if (os < score || (os == score && on < node)) { score = os; node = on; }
    }
    if (lane == 0) { s_score[warp] = score; s_node[warp] = node; }
    __syncthreads();
    if (warp == 0) {
        const unsigned warps = blockDim.x >> 5;
        score = lane < warps ? s_score[lane] : BIG_SCORE;
        node = lane < warps ? s_node[lane] : BIG_NODE;
        for (int off = 16; off > 0; off >>= 1) {
            const long long os = __shfl_down_sync(0xffffffffu, score, off);
            const int on = __shfl_down_sync(0xffffffffu, node, off);
            if (os < score || (os == score && on < node)) { score = os; node = on; }
        }
        if (lane == 0) { s_score[0] = score; s_node[0] = node; }
    }
    __syncthreads();
    score = s_score[0];
    node = s_node[0];
    __syncthreads();
}

// Pairs joined if forbidden node x came back: C(1 + sum s_c, 2) - sum C(s_c, 2) over the distinct
// components c next to x (the paper's score_with_node, minus the unchanged total).
__device__ long long join_cost(const long long* __restrict__ indptr,
                               const int* __restrict__ indices, const int* comp,
                               const long long* sizes, int x) {
    int seen[SEEN];
    int count = 0;
    long long joined = 0, lost = 0;
    const long long begin = indptr[x], end = indptr[x + 1];
    for (long long j = begin; j < end; ++j) {
        const int c = comp[indices[j]];
        if (c == 0) continue;
        bool dup = false;
        for (int t = 0; t < count && !dup; ++t) dup = seen[t] == c;
        if (!dup && count == SEEN) {  // past the remembered ones: look back along the row
            for (long long i = begin; i < j && !dup; ++i) dup = comp[indices[i]] == c;
        }
        if (dup) continue;
        if (count < SEEN) seen[count++] = c;
        joined += sizes[c];
        lost += pairs(sizes[c]);
    }
    return pairs(joined + 1) - lost;
}

extern "C" __global__ void cnd_multistart(
    const long long* __restrict__ indptr, const int* __restrict__ indices, int n, int k,
    unsigned long long first_seed, int first_start, int starts,
    unsigned char* state_all, int* comp_all, long long* sizes_all, int* mark_all,
    unsigned char* best_removed_all, long long* best_obj, int* best_start) {
    __shared__ long long s_score[32];
    __shared__ int s_node[32];
    __shared__ long long s_grown;
    const int start = first_start + blockIdx.x;
    if (start >= starts) return;
    unsigned char* state = state_all + (size_t)blockIdx.x * n;
    int* comp = comp_all + (size_t)blockIdx.x * n;
    long long* sizes = sizes_all + (size_t)blockIdx.x * (n + 1);
    int* mark = mark_all + (size_t)blockIdx.x * (n + 1);
    unsigned char* best_removed = best_removed_all + (size_t)blockIdx.x * n;
    const unsigned long long base = mix((first_seed + (unsigned long long)start) ^ GOLDEN);

    // MIS in rounds: a node joins once every lower-priority neighbour is out, and leaves when a
    // neighbour is in; this is the set the CPU takes greedily in priority order.
    for (int v = threadIdx.x; v < n; v += blockDim.x) state[v] = 0;
    for (int v = threadIdx.x; v <= n; v += blockDim.x) { mark[v] = 0; sizes[v] = 0; }
    __syncthreads();
    int undecided = 1;
    while (undecided) {
        for (int v = threadIdx.x; v < n; v += blockDim.x) {
            if (state[v] != 0) continue;
            for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
                if (state[indices[j]] == 1) { state[v] = 2; break; }
            }
        }
        __syncthreads();
        int left = 0;
        for (int v = threadIdx.x; v < n; v += blockDim.x) {
            if (state[v] != 0) continue;
            const unsigned long long pv = mix(base + (unsigned long long)v);
            bool join = true;
            for (long long j = indptr[v]; j < indptr[v + 1] && join; ++j) {
                const int u = indices[j];
                join = state[u] == 2 || mix(base + (unsigned long long)u) > pv;
            }
            if (join) state[v] = 1; else left = 1;
        }
        undecided = __syncthreads_or(left);
    }
    int forbidden = 0;
    for (int v = threadIdx.x; v < n; v += blockDim.x) {
        const bool in = state[v] == 1;
        comp[v] = in ? v + 1 : 0;
        if (in) sizes[v + 1] = 1;
        forbidden += !in;
    }
    for (int off = 16; off > 0; off >>= 1) {
        forbidden += __shfl_down_sync(0xffffffffu, forbidden, off);
    }
    if ((threadIdx.x & 31) == 0) s_node[threadIdx.x >> 5] = forbidden;
    __syncthreads();
    if (threadIdx.x == 0) {
        int total_forbidden = 0;
        for (unsigned w = 0; w < (blockDim.x >> 5); ++w) total_forbidden += s_node[w];
        // Trivial case: too few forbidden; the highest-id MIS nodes go too (objective stays 0).
        for (int v = n - 1; v >= 0 && total_forbidden < k; --v) {
            if (comp[v] != 0) { sizes[comp[v]] = 0; comp[v] = 0; ++total_forbidden; }
        }
        s_node[0] = total_forbidden;
    }
    __syncthreads();
    forbidden = s_node[0];
    __syncthreads();

    long long total = 0;
    int stamp = 0;
    while (forbidden > k) {
        long long score = BIG_SCORE;
        int node = BIG_NODE;
        for (int x = threadIdx.x; x < n; x += blockDim.x) {
            if (comp[x] != 0) continue;
            const long long s = total + join_cost(indptr, indices, comp, sizes, x);
            if (s < score) { score = s; node = x; }  // x ascends: ties keep the smallest
        }
        block_argmin(score, node, s_score, s_node);
        ++stamp;
        if (threadIdx.x == 0) s_grown = 1;
        __syncthreads();
        for (long long j = indptr[node] + threadIdx.x; j < indptr[node + 1]; j += blockDim.x) {
            const int c = comp[indices[j]];
            if (c != 0 && atomicExch(&mark[c], stamp) != stamp) {
                atomicAdd(reinterpret_cast<unsigned long long*>(&s_grown),
                          (unsigned long long)sizes[c]);
            }
        }
        __syncthreads();
        // node + 1 was never a component id (node was forbidden until now): no stale mark.
        for (int v = threadIdx.x; v < n; v += blockDim.x) {
            const int c = comp[v];
            if (c != 0 && mark[c] == stamp) comp[v] = node + 1;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            comp[node] = node + 1;
            sizes[node + 1] = s_grown;
        }
        total = score;
        --forbidden;
        __syncthreads();
    }
    if (total < best_obj[blockIdx.x] ||
        (total == best_obj[blockIdx.x] && start < best_start[blockIdx.x])) {
        for (int v = threadIdx.x; v < n; v += blockDim.x) best_removed[v] = comp[v] == 0;
        __syncthreads();
        if (threadIdx.x == 0) { best_obj[blockIdx.x] = total; best_start[blockIdx.x] = start; }
    }
}
