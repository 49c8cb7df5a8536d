// pCND*: greedy critical node detection, one CUDA block per start (driven by kernels/algorithms/critical_nodes/gpu.py).
// Graph: CSR with long long offsets and int neighbours. Each block owns its slice of the work
// arrays (MIS state, component ids, component sizes, marks) and keeps the best removed set it has
// found across the waves of starts it runs. The answer equals greedy.py's cnd_star for
// every seed: same hashed MIS, same scores (exact 64-bit integers), smallest node on ties.

#include "critical_nodes.cuh"

// Rescore the candidates in work[0, count): one warp each, lanes over the row; a per-warp mark
// array (stamped with the warp's own tags) counts each neighbouring component once. The cost of
// restoring x is alpha[x] * sizes[big] + beta[x]: with A the sizes of x's other neighbouring
// components, joining big too adds pairs(G + A + 1) - pairs(G) = G (A + 1) + pairs(A + 1), so
// big's growth changes no alpha or beta (its neighbours are not rescored as it grows).
__device__ void rescore(const long long* __restrict__ indptr, const int* __restrict__ indices,
                        const int* comp, const long long* sizes, const int* work, int count,
                        int big, int* wmark, unsigned& tag, long long* alpha, long long* beta) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    for (int i = warp; i < count; i += warps) {
        const int x = work[i];
        const int t = (int)(++tag);
        long long joined = 0, lost = 0;
        bool next_to_big = false;
        for (long long j = indptr[x] + lane; j < indptr[x + 1]; j += 32) {
            const int c = comp[indices[j]];
            if (c == big) { next_to_big = c != 0; continue; }
            if (c != 0 && atomicExch(&wmark[c], t) != t) {
                joined += sizes[c];
                lost += pairs(sizes[c]);
            }
        }
        for (int off = 16; off > 0; off >>= 1) {
            joined += __shfl_xor_sync(0xffffffffu, joined, off);
            lost += __shfl_xor_sync(0xffffffffu, lost, off);
        }
        next_to_big = __any_sync(0xffffffffu, next_to_big);
        if (lane == 0) {
            alpha[x] = next_to_big ? joined + 1 : 0;
            beta[x] = pairs(joined + 1) - lost;
        }
    }
}

extern "C" __global__ void cnd_multistart(
    const long long* __restrict__ indptr, const int* __restrict__ indices, int n, int k,
    unsigned long long first_seed, int first_start, int starts,
    unsigned char* state_all, int* comp_all, long long* sizes_all, int* mark_all,
    int* wmark_all, long long* alpha_all, long long* beta_all, int* work_all, int* dirty_all,
    unsigned char* best_removed_all, long long* best_obj, int* best_start) {
    __shared__ long long s_score[32];
    __shared__ int s_node[32];
    __shared__ long long s_grown;
    __shared__ int s_count, s_big;
    const int start = first_start + blockIdx.x;
    if (start >= starts) return;
    const int warps = blockDim.x >> 5;
    unsigned char* state = state_all + (size_t)blockIdx.x * n;
    int* comp = comp_all + (size_t)blockIdx.x * n;
    long long* sizes = sizes_all + (size_t)blockIdx.x * (n + 1);
    int* mark = mark_all + (size_t)blockIdx.x * (n + 1);  // by component id
    int* dirty = dirty_all + (size_t)blockIdx.x * n;  // by node
    int* wmark = wmark_all + ((size_t)blockIdx.x * warps + (threadIdx.x >> 5)) * (n + 1);
    long long* alpha = alpha_all + (size_t)blockIdx.x * n;
    long long* beta = beta_all + (size_t)blockIdx.x * n;
    int* work = work_all + (size_t)blockIdx.x * n;
    unsigned char* best_removed = best_removed_all + (size_t)blockIdx.x * n;
    const unsigned long long base = mix((first_seed + (unsigned long long)start) ^ GOLDEN);

    // MIS in rounds: a node joins once every lower-priority neighbour is out, and leaves when a
    // neighbour is in; this is the set the CPU takes greedily in priority order.
    for (int v = threadIdx.x; v < n; v += blockDim.x) { state[v] = 0; dirty[v] = 0; }
    for (int v = threadIdx.x; v <= n; v += blockDim.x) { mark[v] = 0; sizes[v] = 0; }
    for (int v = threadIdx.x & 31; v <= n; v += 32) wmark[v] = 0;
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
        for (int w = 0; w < warps; ++w) total_forbidden += s_node[w];
        // Trivial case: too few forbidden; the highest-id MIS nodes go too (objective stays 0).
        for (int v = n - 1; v >= 0 && total_forbidden < k; --v) {
            if (comp[v] != 0) { sizes[comp[v]] = 0; comp[v] = 0; ++total_forbidden; }
        }
        s_node[0] = total_forbidden;
        s_count = 0;
        s_big = 0;
    }
    __syncthreads();
    forbidden = s_node[0];
    unsigned tag = 0;
    if (forbidden > k) {  // every candidate's cost once; afterwards only those that change
        for (int v = threadIdx.x; v < n; v += blockDim.x) {
            if (comp[v] == 0) work[atomicAdd(&s_count, 1)] = v;
        }
        __syncthreads();
        rescore(indptr, indices, comp, sizes, work, s_count, 0, wmark, tag, alpha, beta);
    }
    __syncthreads();

    long long total = 0;
    int stamp = 0, big = 0;  // big: the component whose size the costs take as a variable
    while (forbidden > k) {
        const long long G = sizes[big];  // sizes[0] stays 0: no big yet
        long long score = BIG_SCORE;
        int node = BIG_NODE;
        for (int x = threadIdx.x; x < n; x += blockDim.x) {
            if (comp[x] != 0) continue;
            const long long s = alpha[x] * G + beta[x];
            if (s < score) { score = s; node = x; }  // x ascends: ties keep the smallest
        }
        block_argmin(score, node, s_score, s_node);
        ++stamp;
        if (threadIdx.x == 0) { s_grown = 1; s_count = 0; }
        __syncthreads();
        for (long long j = indptr[node] + threadIdx.x; j < indptr[node + 1]; j += blockDim.x) {
            const int c = comp[indices[j]];
            if (c != 0 && atomicExch(&mark[c], stamp) != stamp) {
                atomicAdd(reinterpret_cast<unsigned long long*>(&s_grown),
                          (unsigned long long)sizes[c]);
            }
        }
        __syncthreads();
        // node and the marked components become one: big keeps its id, else the new id
        // node + 1 (never an id before: node was forbidden). The forbidden neighbours of node
        // and of the members of the marked components other than big have new alpha and beta;
        // those next to big alone keep theirs (its growth is in G).
        const int keep = (big != 0 && mark[big] == stamp) ? big : node + 1;
        for (int v = threadIdx.x; v < n; v += blockDim.x) {
            const int c = comp[v];
            // big's members need nothing (big keeps its id), and are most nodes late on.
            if (v != node && (c == 0 || c == big || mark[c] != stamp)) continue;
            for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
                const int w = indices[j];  // only comp[w] == 0 is read: relabels keep it
                if (w != node && comp[w] == 0 && atomicExch(&dirty[w], stamp) != stamp) {
                    work[atomicAdd(&s_count, 1)] = w;
                }
            }
            comp[v] = keep;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            // A merged component twice the size of big becomes big (every cost rescored: a
            // logarithmic number of times).
            if (keep != big && s_grown > 2 * sizes[big]) { s_big = keep; s_count = -1; }
            sizes[keep] = s_grown;
        }
        __syncthreads();
        if (s_count < 0) {
            big = s_big;
            __syncthreads();
            if (threadIdx.x == 0) s_count = 0;
            __syncthreads();
            for (int v = threadIdx.x; v < n; v += blockDim.x) {
                if (comp[v] == 0) work[atomicAdd(&s_count, 1)] = v;
            }
            __syncthreads();
        }
        rescore(indptr, indices, comp, sizes, work, s_count, big, wmark, tag, alpha, beta);
        total += score;
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
