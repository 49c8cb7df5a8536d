// Critical node detection: ruin-and-regrow rounds on the GPU, a chain of rounds per CUDA block
// (driven by kernels/algorithms/critical_nodes/gpu_ruin.py). Each block keeps its best k-set (all
// start from the same one); a round deletes d more nodes of the large components (drawn by degree
// from the launch's pool), finds the components of the kept nodes (a union-find over the arcs,
// hooked with atomics), then returns the cheapest deleted node (smallest join cost, smallest node
// on ties) until k are deleted, as ruin.py's rounds do on the host, and keeps the set if better.
#include "critical_nodes.cuh"
#include "union_find.cuh"

#define DELETED (-1)

// Root of kept node v, without a write (the regrowth hooks by size, so a root may sit under a
// larger one there). Parents only move towards a root while threads hook, so a find that
// races a hook still ends at a root.
__device__ __forceinline__ int root_of(const int* parent, int v) {
    int p = parent[v];
    while (p != v) {
        v = p;
        p = parent[v];
    }
    return v;
}

#define WARP_SEEN 128  // distinct neighbouring components a warp remembers per candidate

// Pairs joined if deleted node x came back (as join_cost), by one warp: lanes take 32 of x's
// arcs at a time; a component is counted by the first lane that meets it in a batch
// (__match_any_sync) unless an earlier batch met it (``seen``, the warp's shared list; past
// WARP_SEEN, the lane looks back along the row). A hub next to many components (ca-CondMat's
// deleted nodes have up to 279 arcs) took one thread a row scan per component.
__device__ long long warp_join_cost(const long long* __restrict__ indptr,
                                    const int* __restrict__ indices, const int* parent,
                                    const int* csize, int x, int* seen, int big, bool& touches) {
    const int lane = threadIdx.x & 31;
    const long long begin = indptr[x], end = indptr[x + 1];
    long long joined = 0, lost = 0;
    int listed = 0;
    touches = false;
    for (long long base = begin; base < end; base += 32) {
        const long long j = base + lane;
        int c = -1;  // -1: no component to count here (none, deleted or a single node)
        long long size = 0;
        if (j < end) {
            const int u = indices[j];
            if (parent[u] != DELETED) {
                const int r = root_of(parent, u);
                size = csize[r + 1];
                if (size == 1) joined += 1;  // u alone, once in the row: counted by its lane
                else c = r;
            }
        }
        touches |= __any_sync(0xffffffffu, c == big);
        const unsigned same = __match_any_sync(0xffffffffu, c);
        bool fresh = c >= 0 && (__ffs(same) - 1) == lane;
        for (int t = 0; fresh && t < min(listed, WARP_SEEN); ++t) fresh = seen[t] != c;
        if (fresh && listed > WARP_SEEN) {  // the list is full: look back along the row
            for (long long i = begin; i < base && fresh; ++i) {
                const int w = indices[i];
                fresh = parent[w] == DELETED || root_of(parent, w) != c;
            }
        }
        const unsigned added = __ballot_sync(0xffffffffu, fresh);
        if (fresh) {
            const int at = listed + __popc(added & ((1u << lane) - 1));
            if (at < WARP_SEEN) seen[at] = c;
            joined += size;
            lost += pairs(size);
        }
        listed += __popc(added);
        __syncwarp();
    }
    for (int off = 16; off > 0; off >>= 1) {
        joined += __shfl_xor_sync(0xffffffffu, joined, off);
        lost += __shfl_xor_sync(0xffffffffu, lost, off);
    }
    return pairs(joined + 1) - lost;
}

// One round from the block's best set ``best``: its objective, its k nodes in cand[0, k). ``key``
// holds each candidate's cost as a lower bound (CND*'s lazy greedy, as greedy.py's regrow): 2 b + t
// for a candidate whose bound is b plus, where t = 1, the size of the largest component ``big``
// at the start, which it touched when its cost was computed (a candidate that joins the giant alone
// keeps an exact key while the giant grows). The cheapest key is recomputed; it is taken once its
// key is exact, else its key is set and the next cheapest tried. (A cost may also fall, when two
// of a candidate's neighbouring components join: its key then passes it, unlike the host's.)
template <class Parents>
__device__ long long ruin_round(const long long* __restrict__ indptr,
                                const int* __restrict__ indices, int n, int k, const int* best,
                                const int* __restrict__ pool, const long long* __restrict__ cum,
                                int pool_size, int lo, int hi, unsigned long long& rng,
                                int* parent, int* csize, int* cand, int* s_seen,
                                long long* key) {
    __shared__ long long s_score[32];
    __shared__ int s_node[32];
    __shared__ int s_count, s_place;
    __shared__ long long s_exact;
    __shared__ bool s_touches;
    __shared__ long long s_sum[32];
    for (int v = threadIdx.x; v < n; v += blockDim.x) parent[v] = v;
    __syncthreads();
    for (int i = threadIdx.x; i < k; i += blockDim.x) {
        parent[best[i]] = DELETED;
        cand[i] = best[i];
    }
    __syncthreads();
    if (threadIdx.x == 0) {  // the ruin: d more nodes of the pool, drawn by degree
        const long long weight = cum[pool_size - 1];
        const int want = lo + (int)(mix(rng += GOLDEN) % (unsigned long long)(hi - lo + 1));
        int count = k;
        for (int tries = 0; tries < 4 * want && count < k + want; ++tries) {
            const long long r = (long long)(mix(rng += GOLDEN) % (unsigned long long)weight);
            int left = 0, right = pool_size - 1;  // the first cum above r
            while (left < right) {
                const int mid = (left + right) >> 1;
                if (cum[mid] > r) right = mid; else left = mid + 1;
            }
            const int v = pool[left];
            if (parent[v] != DELETED) {
                parent[v] = DELETED;
                cand[count++] = v;
            }
        }
        s_count = count;
    }
    __syncthreads();
    // Components of the kept nodes: each arc once (v < u), hooked.
    for (int v = threadIdx.x; v < n; v += blockDim.x) {
        if (parent[v] == DELETED) continue;
        for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
            const int u = indices[j];
            if (u > v && Parents::load(&parent[u]) != DELETED) uf_unite<Parents>(parent, v, u);
        }
    }
    __syncthreads();
    for (int v = threadIdx.x; v <= n; v += blockDim.x) csize[v] = 0;
    __syncthreads();
    for (int v = threadIdx.x; v < n; v += blockDim.x) {
        if (parent[v] == DELETED) continue;
        const int r = root_of(parent, v);
        parent[v] = r;
        atomicAdd(&csize[r + 1], 1);
    }
    __syncthreads();
    // The largest component's root, then every candidate's key (a warp a candidate).
    long long score = BIG_SCORE;
    int node = BIG_NODE;
    for (int v = threadIdx.x; v < n; v += blockDim.x) {
        if (parent[v] == v && -(long long)csize[v + 1] < score) { score = -csize[v + 1]; node = v; }
    }
    block_argmin(score, node, s_score, s_node);
    const int big = node;
    int count = s_count;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    int* seen = s_seen + warp * WARP_SEEN;
    for (int i = warp; i < count; i += warps) {
        bool touches;
        const long long cost = warp_join_cost(indptr, indices, parent, csize, cand[i], seen, big,
                                              touches);
        if (lane == 0) key[i] = touches ? 2 * (cost - csize[big + 1]) + 1 : 2 * cost;
    }
    __syncthreads();
    // The regrowth: the cheapest deleted node back, until k are deleted.
    while (count > k) {
        while (true) {
            const long long giant = csize[big + 1];
            score = BIG_SCORE;
            node = BIG_NODE;
            for (int i = threadIdx.x; i < count; i += blockDim.x) {
                const long long bound = (key[i] >> 1) + ((key[i] & 1) ? giant : 0);
                if (bound < score || (bound == score && cand[i] < node)) {
                    score = bound;
                    node = cand[i];
                }
            }
            block_argmin(score, node, s_score, s_node);
            for (int i = threadIdx.x; i < count; i += blockDim.x) {
                if (cand[i] == node) s_place = i;
            }
            if (warp == 0) {
                bool touches;
                const long long exact = warp_join_cost(indptr, indices, parent, csize, node,
                                                       seen, big, touches);
                if (lane == 0) { s_exact = exact; s_touches = touches; }
            }
            __syncthreads();
            if (s_exact <= score) break;  // exact (or fallen): the cheapest
            if (threadIdx.x == 0) {
                key[s_place] = s_touches ? 2 * (s_exact - giant) + 1 : 2 * s_exact;
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            int rx = node;
            parent[node] = node;
            csize[node + 1] = 1;
            for (long long j = indptr[node]; j < indptr[node + 1]; ++j) {
                const int u = indices[j];
                if (parent[u] == DELETED) continue;
                const int r = root_of(parent, u);
                if (r == rx) continue;
                if (csize[r + 1] > csize[rx + 1]) {  // by size: the trees stay shallow
                    parent[rx] = r;
                    csize[r + 1] += csize[rx + 1];
                    rx = r;
                } else {
                    parent[r] = rx;
                    csize[rx + 1] += csize[r + 1];
                }
            }
            cand[s_place] = cand[count - 1];
            key[s_place] = key[count - 1];
        }
        --count;
        __syncthreads();
    }
    // The round's objective: the pairs of every component.
    long long total = 0;
    for (int v = threadIdx.x; v < n; v += blockDim.x) {
        if (parent[v] == v) total += pairs(csize[v + 1]);
    }
    for (int off = 16; off > 0; off >>= 1) total += __shfl_down_sync(0xffffffffu, total, off);
    if ((threadIdx.x & 31) == 0) s_sum[threadIdx.x >> 5] = total;
    __syncthreads();
    total = 0;
    for (int w = 0; w < (int)(blockDim.x >> 5); ++w) total += s_sum[w];
    __syncthreads();
    return total;
}

// ``rounds`` rounds of one block's chain, each from the block's best set (``sets``,
// ``objectives``), kept when better; ``restart``: every block's best is ``start`` first. The
// parents, sizes, deleted candidates and their keys are in shared memory
// (:func:`cnd_ruin_rounds`) or in the block's slice of a global scratch
// (:func:`cnd_ruin_rounds_global`); a round is a chain of dependent loads (finds, costs).
template <class Parents>
__device__ void ruin_chain(const long long* __restrict__ indptr, const int* __restrict__ indices,
                           int n, int k, const int* __restrict__ start, long long start_objective,
                           int restart, const int* __restrict__ pool,
                           const long long* __restrict__ cum, int pool_size, int lo, int hi,
                           unsigned long long seed, int rounds, long long* objectives, int* sets,
                           long long* key, int* parent, int* csize, int* cand, int* seen) {
    const int b = blockIdx.x;
    int* best = sets + (size_t)b * k;
    if (restart) {
        for (int i = threadIdx.x; i < k; i += blockDim.x) best[i] = start[i];
        if (threadIdx.x == 0) objectives[b] = start_objective;
        __syncthreads();
    }
    unsigned long long rng = mix(seed ^ ((unsigned long long)b * GOLDEN));  // same in all threads
    for (int round = 0; round < rounds; ++round) {
        const long long objective = ruin_round<Parents>(indptr, indices, n, k, best, pool, cum,
                                                        pool_size, lo, hi, rng, parent, csize,
                                                        cand, seen, key);
        if (objective < objectives[b]) {
            for (int i = threadIdx.x; i < k; i += blockDim.x) best[i] = cand[i];
            __syncthreads();
            if (threadIdx.x == 0) objectives[b] = objective;
        }
        __syncthreads();
    }
}

#define RUIN_ARGS                                                                              \
    const long long* __restrict__ indptr, const int* __restrict__ indices, int n, int k,        \
        const int* __restrict__ start, long long start_objective, int restart,                 \
        const int* __restrict__ pool, const long long* __restrict__ cum, int pool_size, int lo, \
        int hi, unsigned long long seed, int rounds, long long* objectives, int* sets
#define RUIN_PASS                                                                              \
    indptr, indices, n, k, start, start_objective, restart, pool, cum, pool_size, lo, hi, seed, \
        rounds, objectives, sets

// A chain's state in shared memory (dynamic: 8 n + 4 + 12 (k + hi) + 4 WARP_SEEN warps bytes).
extern "C" __global__ void cnd_ruin_rounds(RUIN_ARGS) {
    extern __shared__ long long shared[];
    long long* key = shared;  // by candidate
    int* parent = (int*)(key + k + hi);
    int* csize = parent + n;  // by root + 1
    int* cand = csize + n + 1;
    int* seen = cand + k + hi;  // WARP_SEEN a warp
    ruin_chain<SharedParents>(RUIN_PASS, key, parent, csize, cand, seen);
}

// A chain's state in its block's ``stride`` bytes of ``scratch`` (graphs whose state does not
// fit in shared memory), the warps' lists of components seen in shared memory.
extern "C" __global__ void cnd_ruin_rounds_global(RUIN_ARGS, unsigned char* scratch,
                                                  long long stride) {
    __shared__ int seen[WARP_SEEN * 32];  // 32 warps: blocks of up to 1,024 threads
    long long* key = (long long*)(scratch + blockIdx.x * stride);
    int* parent = (int*)(key + k + hi);
    int* csize = parent + n;
    int* cand = csize + n + 1;
    ruin_chain<L2Parents>(RUIN_PASS, key, parent, csize, cand, seen);
}
