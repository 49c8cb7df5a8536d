// Louvain / Leiden kernels (kernels/algorithms/communities): synchronous local moving (decide,
// then apply), refinement moves and component labels. Compiled with --fmad=false so that every gain
// is the same IEEE expression as on the CPU (Numba), hence the same decisions.
//
// Weights are 64-bit fixed-point integers, so every sum (community totals, row accumulators) is
// exact whatever the order of the atomics.
#include "union_find.cuh"

typedef long long i64;
typedef unsigned long long u64;

__device__ __forceinline__ unsigned mix32(unsigned x) {
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
    return x;
}

#define FULL_MASK 0xffffffffu

__device__ __forceinline__ int slot_of(int c, i64 slots) {
    return (int)(((unsigned)c * 2654435761U) % (unsigned long long)slots);
}

// Best move of each node of the sweep, from the state at the sweep's start. A node's weight to each neighbouring community is
// accumulated in a hash table in its own part of the scratch (2 slots per arc), filled by its
// group of threads with atomics (integer sums: exact in any order) and read back past L1
// (__ldcg: other threads' plain loads may have cached lines of it before the atomics).
// Candidates are scored per arc and reduced over the group with a total order (higher gain, then
// smaller community id), so the choice is the CPU's whatever the table's layout or the threads'
// order. The group is a warp (cm_decide) or, for hubs, a whole block (cm_decide_hub): a hub's
// row walked by one warp made the whole sweep wait for it.
// refine: only nodes alone in their community move, only towards neighbours of the same part.

struct Move {
    const i64* indptr; const int* indices; const i64* w; const int* comm; const i64* k;
    const i64* sigma; const int* size; const int* part; int refine; double res; double m2;
    int* keys; i64* vals; const char* active; unsigned salt; unsigned sweep; char* later;
};

// The kernels' common arguments, and the struct the device functions take them in.
#define MOVE_ARGS                                                                           \
    const i64 *__restrict__ indptr, const int *__restrict__ indices, const i64 *__restrict__ w, \
    const int *__restrict__ comm, const i64 *__restrict__ k, const i64 *__restrict__ sigma,  \
    const int *__restrict__ size, const int *__restrict__ part, int refine, double res,      \
    double m2, int *__restrict__ keys, i64 *__restrict__ vals,                              \
    const char *__restrict__ active, unsigned salt, unsigned sweep, char *__restrict__ later
#define MOVE_STRUCT {indptr, indices, w, comm, k, sigma, size, part, refine, res, m2, keys, vals, \
                     active, salt, sweep, later}

__device__ __forceinline__ bool better(double score, int c, double best, int best_c) {
    return c >= 0 && (best_c < 0 || score > best || (score == best && c < best_c));
}

// Whether node i is on the moving half of this sweep (`_mover` in cpu.py): nodes of the other
// half keep their community, so fewer neighbours trade places back and forth.
__device__ __forceinline__ bool mover(const Move& m, int i) {
    return (mix32((unsigned)i ^ m.salt ^ (m.sweep * 0x9E3779B9U)) & 1U) == 0;
}

// Refinement: a node may join only a sub-community that some neighbour of it stays in, so that
// sub-communities stay connected; a singleton on the moving half may leave its own.
__device__ __forceinline__ bool skipped(const Move& m, int i, int v) {
    return v == i || (m.refine && (m.part[v] != m.part[i] || (
        m.active[v] && mover(m, v) && m.size[m.comm[v]] == 1)));
}

// Node i's hash table: 2 slots per arc, in the block's shared memory (rows of at most
// SMALL_ARCS arcs) or in the scratch (from 2 * indptr[i]). Global slots are read back past L1
// (__ldcg), shared ones plainly.
struct Table {
    int* K; i64* V; i64 slots;
};

template <bool SHARED> __device__ __forceinline__ int key_at(const Table& t, int s) {
    return SHARED ? t.K[s] : __ldcg(&t.K[s]);
}

template <bool SHARED> __device__ __forceinline__ i64 val_at(const Table& t, int s) {
    return SHARED ? t.V[s] : __ldcg(&t.V[s]);
}

// Fill node i's table; threads `start`, `start + stride`, ... of its group. The caller syncs
// the group between the two halves (clearing, then adding).
__device__ __forceinline__ void clear_table(const Table& t, int start, int stride) {
    for (i64 s = start; s < t.slots; s += stride) {
        t.K[s] = -1;
        t.V[s] = 0;
    }
}

__device__ __forceinline__ void add_arcs(const Move& m, int i, i64 lo, i64 hi, const Table& t,
                                         int start, int stride) {
    for (i64 j = lo + start; j < hi; j += stride) {
        const int v = m.indices[j];
        if (skipped(m, i, v)) continue;
        const int c = m.comm[v];
        int s = slot_of(c, t.slots);
        while (true) {
            const int seen = atomicCAS(&t.K[s], -1, c);
            if (seen == -1 || seen == c) break;
            s = (s + 1 == t.slots) ? 0 : s + 1;
        }
        atomicAdd((u64*)&t.V[s], (u64)m.w[j]);
    }
}

// After the table is full: the thread's best candidate (best_c -1: none) and the gain of staying.
template <bool SHARED>
__device__ __forceinline__ double score_arcs(const Move& m, int i, i64 lo, i64 hi,
                                             const Table& t, int start, int stride,
                                             double& best, int& best_c) {
    const int a = m.comm[i];
    i64 kia = 0;
    {
        int s = slot_of(a, t.slots);
        int key;
        while ((key = key_at<SHARED>(t, s)) != a && key != -1) s = (s + 1 == t.slots) ? 0 : s + 1;
        if (key == a) kia = val_at<SHARED>(t, s);
    }
    const double kd = (double)m.k[i];
    best = 0.0;
    best_c = -1;
    for (i64 j = lo + start; j < hi; j += stride) {
        const int v = m.indices[j];
        if (skipped(m, i, v)) continue;
        const int c = m.comm[v];
        if (c == a) continue;
        int s = slot_of(c, t.slots);
        while (key_at<SHARED>(t, s) != c) s = (s + 1 == t.slots) ? 0 : s + 1;
        const double score =
            (double)val_at<SHARED>(t, s) - m.res * (kd * (double)m.sigma[c]) / m.m2;
        if (better(score, c, best, best_c)) {
            best = score;
            best_c = c;
        }
    }
    return (double)kia - m.res * (kd * (double)(m.sigma[a] - m.k[i])) / m.m2;
}

__device__ __forceinline__ void warp_best(double& best, int& best_c) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        const double other = __shfl_down_sync(FULL_MASK, best, offset);
        const int other_c = __shfl_down_sync(FULL_MASK, best_c, offset);
        if (better(other, other_c, best, best_c)) {
            best = other;
            best_c = other_c;
        }
    }
}

// Whether node i looks for a move; lane/thread 0 writes the default (stay) and, for a node of
// the resting half, wakes it for the next sweep.
__device__ __forceinline__ bool may_move(const Move& m, int i, int* target, bool first) {
    const int a = m.comm[i];
    if (first) target[i] = a;
    if (m.indptr[i + 1] == m.indptr[i]) return false;
    if (!mover(m, i)) {
        if (first) m.later[i] = 1;
        return false;
    }
    return !(m.refine && m.size[a] != 1);
}

// The move, if it beats staying. Two singletons join only towards the smaller id (Lu et al.
// 2015), so that two of them never each join the other.
__device__ __forceinline__ void choose(const Move& m, int i, double stay, double best, int best_c,
                                       int* target) {
    const int a = m.comm[i];
    if (best_c >= 0 && best > stay &&
        !(!m.refine && m.size[a] == 1 && m.size[best_c] == 1 && best_c > a))
        target[i] = best_c;
}

// Threads of cm_decide's blocks (THREADS in gpu.py) and the longest row whose table is kept in
// shared memory (most rows of R-MAT and SNAP graphs: no scratch traffic, no global atomics).
constexpr int DECIDE_THREADS = 256;
constexpr int SMALL_ARCS = 64;

extern "C" __global__ void __launch_bounds__(DECIDE_THREADS) cm_decide(
    const int* __restrict__ nodes, int count, MOVE_ARGS, int* __restrict__ target) {
    const Move m = MOVE_STRUCT;
    __shared__ int small_keys[DECIDE_THREADS / 32][2 * SMALL_ARCS];
    __shared__ i64 small_vals[DECIDE_THREADS / 32][2 * SMALL_ARCS];
    const long long p = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (p >= count) return;  // whole warps: p is the same for all 32 lanes
    const int i = nodes[p];
    if (!may_move(m, i, target, lane == 0)) return;
    const i64 lo = m.indptr[i], hi = m.indptr[i + 1];
    const bool small = hi - lo <= SMALL_ARCS;
    const Table t = small ? Table{small_keys[warp], small_vals[warp], 2 * (hi - lo)}
                          : Table{m.keys + 2 * lo, m.vals + 2 * lo, 2 * (hi - lo)};
    clear_table(t, lane, 32);
    __syncwarp();
    add_arcs(m, i, lo, hi, t, lane, 32);
    __syncwarp();
    double best;
    int best_c;
    const double stay = small ? score_arcs<true>(m, i, lo, hi, t, lane, 32, best, best_c)
                              : score_arcs<false>(m, i, lo, hi, t, lane, 32, best, best_c);
    warp_best(best, best_c);
    if (lane == 0) choose(m, i, stay, best, best_c, target);
}

constexpr int HUB_THREADS = 1024;

// A block per hub (nodes[blockIdx.x]): the same decision as cm_decide.
extern "C" __global__ void __launch_bounds__(HUB_THREADS) cm_decide_hub(
    const int* __restrict__ nodes, MOVE_ARGS, int* __restrict__ target) {
    const Move m = MOVE_STRUCT;
    __shared__ double block_best[HUB_THREADS / 32];
    __shared__ int block_c[HUB_THREADS / 32];
    const int i = nodes[blockIdx.x];
    if (!m.active[i] || !may_move(m, i, target, threadIdx.x == 0)) return;  // block-uniform
    const i64 lo = m.indptr[i], hi = m.indptr[i + 1];
    const Table t{m.keys + 2 * lo, m.vals + 2 * lo, 2 * (hi - lo)};
    clear_table(t, threadIdx.x, blockDim.x);
    __syncthreads();
    add_arcs(m, i, lo, hi, t, threadIdx.x, blockDim.x);
    __syncthreads();
    double best;
    int best_c;
    const double stay =
        score_arcs<false>(m, i, lo, hi, t, threadIdx.x, blockDim.x, best, best_c);
    warp_best(best, best_c);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        block_best[warp] = best;
        block_c[warp] = best_c;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int x = 1; x < (int)(blockDim.x >> 5); ++x) {
            if (better(block_best[x], block_c[x], best, best_c)) {
                best = block_best[x];
                best_c = block_c[x];
            }
        }
        choose(m, i, stay, best, best_c, target);
    }
}

// Apply the sweep's moves, a warp per awake node: community totals and sizes by exact integer
// atomics; the mover and its neighbours are woken for the next sweep.
extern "C" __global__ void cm_apply(const int* __restrict__ nodes, int count,
                                    const i64* __restrict__ indptr,
                                    const int* __restrict__ indices,
                                    const char* __restrict__ active,
                                    const int* __restrict__ target, int* __restrict__ comm,
                                    const i64* __restrict__ k, i64* __restrict__ sigma,
                                    int* __restrict__ size, char* __restrict__ later,
                                    u64* __restrict__ moved) {
    const long long p = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (p >= count) return;
    const int i = nodes[p];
    if (!active[i]) return;  // a sleeping hub: its target is stale
    const int a = comm[i], t = target[i];
    if (a == t) return;
    __syncwarp();  // every lane has read comm[i] before lane 0 changes it
    if (lane == 0) {
        atomicAdd((u64*)&sigma[a], (u64)(-k[i]));
        atomicAdd((u64*)&sigma[t], (u64)k[i]);
        atomicSub(&size[a], 1);
        atomicAdd(&size[t], 1);
        comm[i] = t;
        later[i] = 1;
        atomicAdd(moved, 1ULL);
    }
    for (i64 j = indptr[i] + lane; j < indptr[i + 1]; j += 32) later[indices[j]] = 1;
}

// The next sweep's awake nodes of the warp list (later[i] set, rows of at most hub_degree arcs),
// appended with one atomic per warp. Their order varies from run to run, which no result
// depends on: a decision reads only the sweep's starting state, apply's sums are exact integer
// atomics and its marks are idempotent. The count goes to counter (the host reads it with the
// sweep's moves: one sync a sweep).
extern "C" __global__ void cm_awake(const i64* __restrict__ indptr, int n, int hub_degree,
                                    const char* __restrict__ later, int* __restrict__ out,
                                    u64* __restrict__ counter) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool take = i < n && later[i] && indptr[i + 1] - indptr[i] <= hub_degree;
    const unsigned mask = __ballot_sync(FULL_MASK, take);
    if (!mask) return;
    const int lane = threadIdx.x & 31, leader = __ffs(mask) - 1;
    u64 base = 0;
    if (lane == leader) base = atomicAdd(counter, (u64)__popc(mask));
    base = __shfl_sync(FULL_MASK, base, leader);
    if (take) out[base + __popc(mask & ((1u << lane) - 1))] = i;
}

// Each community's modularity term, internal / arcs - res * (degree / arcs)^2, the IEEE
// operations NumPy does on the CPU (no FMA: --fmad=false), so that the host's sum of the terms
// is the CPU backend's value; one array of doubles comes back instead of two of counts.
extern "C" __global__ void cm_modularity_terms(const i64* __restrict__ internal,
                                               const i64* __restrict__ degree, int count,
                                               double arcs, double res,
                                               double* __restrict__ out) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= count) return;
    const double d = (double)degree[c] / arcs;
    out[c] = (double)internal[c] / arcs - res * (d * d);
}

// Component labels inside communities by union-find (union_find.cuh): each tree's root is the
// smallest node of its component, whatever the order of the hooks.
// A thread per arc (r, v) with r > v inside one community: their sets joined.
extern "C" __global__ void cm_link(const int* __restrict__ rows, const int* __restrict__ indices,
                                   long long arcs, const int* __restrict__ comm,
                                   int* __restrict__ parent) {
    const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= arcs) return;
    const int r = rows[j], v = indices[j];
    if (r <= v || comm[r] != comm[v]) return;
    uf_unite<L2Parents>(parent, r, v);
}

// After all hooks: each node's label is its root. The walk only reads (root_of's path halving
// could write an inner ancestor over a label another thread had just set to the root).
extern "C" __global__ void cm_flatten(int n, int* __restrict__ parent) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int root = __ldcg(&parent[i]), next;
    while (root > (next = __ldcg(&parent[root]))) root = next;
    parent[i] = root;
}

// The row of each arc, a warp per row (the aggregation's and the modularity's pairs).
extern "C" __global__ void cm_rows(const i64* __restrict__ indptr, int n, int* __restrict__ rows) {
    const long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (i >= n) return;
    for (i64 j = indptr[i] + (threadIdx.x & 31); j < indptr[i + 1]; j += 32) rows[j] = (int)i;
}

// Aggregation, a thread per arc (r, v): the weight goes to the entry group[v] of group[r]'s hash
// table (two slots per arc of the group's members, from 2 * start[group]); the thread that claims
// an empty slot counts a distinct pair of groups.
extern "C" __global__ void cm_aggregate(const int* __restrict__ rows,
                                        const int* __restrict__ indices,
                                        const i64* __restrict__ w, long long arcs,
                                        const int* __restrict__ group,
                                        const i64* __restrict__ start, int* __restrict__ keys,
                                        i64* __restrict__ vals, u64* __restrict__ distinct) {
    const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= arcs) return;
    const int c = group[rows[j]], d = group[indices[j]];
    const i64 slots = 2 * (start[c + 1] - start[c]);
    int* K = keys + 2 * start[c];
    i64* V = vals + 2 * start[c];
    int s = slot_of(d, slots);
    while (true) {
        const int seen = atomicCAS(&K[s], -1, d);
        if (seen == -1) atomicAdd(&distinct[c], 1ULL);
        if (seen == -1 || seen == d) break;
        s = (s + 1 == slots) ? 0 : s + 1;
    }
    atomicAdd((u64*)&V[s], (u64)w[j]);
}

// The modularity's counts, a warp per node: its arcs to its own community and all its arcs,
// added to its community's totals by lane 0 (two atomics per node, not per arc).
extern "C" __global__ void cm_community_arcs(const i64* __restrict__ indptr,
                                             const int* __restrict__ indices, int n,
                                             const int* __restrict__ comm,
                                             u64* __restrict__ internal,
                                             u64* __restrict__ degree) {
    const long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (i >= n) return;
    const int c = comm[i];
    const i64 lo = indptr[i], hi = indptr[i + 1];
    u64 inside = 0;
    for (i64 j = lo + lane; j < hi; j += 32) inside += comm[indices[j]] == c;
    for (int offset = 16; offset > 0; offset >>= 1)
        inside += __shfl_xor_sync(FULL_MASK, inside, offset);
    if (lane == 0 && hi > lo) {
        atomicAdd(&internal[c], inside);
        atomicAdd(&degree[c], (u64)(hi - lo));
    }
}
