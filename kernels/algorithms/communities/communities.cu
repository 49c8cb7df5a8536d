// Louvain / Leiden kernels (kernels/algorithms/communities): colouring, colour-class local
// moving, refinement moves and component labels. Compiled with --fmad=false so that every gain
// is the same IEEE expression as on the CPU (Numba), hence the same decisions.
//
// Weights are 64-bit fixed-point integers, so every sum (community totals, row accumulators) is
// exact whatever the order of the atomics.

typedef long long i64;
typedef unsigned long long u64;

__device__ __forceinline__ unsigned mix32(unsigned x) {
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
    return x;
}

#define FULL_MASK 0xffffffffu

// Jones-Plassmann rounds in place, a warp per pending node (hubs' rows split over its lanes): an
// uncoloured node whose higher-priority neighbours all have a colour takes the smallest colour
// none of them has. Its lower-priority neighbours wait for it, so whenever it is coloured its
// coloured neighbours are exactly the higher-priority ones and their colours are final: the
// result is the greedy colouring in descending (mix32(i ^ salt), i) order, as the CPU computes
// it, however the rounds interleave. Colours written by other blocks are read past L1 (__ldcg);
// a stale -1 only makes a node wait a round longer.
extern "C" __global__ void cm_colour(const int* __restrict__ pending, int count,
                                     const i64* __restrict__ indptr,
                                     const int* __restrict__ indices, unsigned salt,
                                     int* __restrict__ colour) {
    const long long p = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (p >= count) return;  // the same for the warp's 32 lanes
    const int i = pending[p];
    if (__ldcg(&colour[i]) >= 0) return;
    const unsigned pi = mix32((unsigned)i ^ salt);
    const i64 lo = indptr[i], hi = indptr[i + 1];
    for (i64 base = lo; base < hi; base += 32) {  // warp-wide steps: stop at the first waiter
        const i64 j = base + lane;
        bool waiting = false;
        if (j < hi) {
            const int v = indices[j];
            if (v != i && __ldcg(&colour[v]) < 0) {
                const unsigned pv = mix32((unsigned)v ^ salt);
                waiting = pv > pi || (pv == pi && v > i);
            }
        }
        if (__any_sync(FULL_MASK, waiting)) return;
    }
    for (int first = 0;; first += 64) {
        u64 used = 0;
        for (i64 j = lo + lane; j < hi; j += 32) {
            const int c = __ldcg(&colour[indices[j]]) - first;
            if (c >= 0 && c < 64) used |= 1ULL << c;
        }
        for (int offset = 16; offset > 0; offset >>= 1)
            used |= __shfl_xor_sync(FULL_MASK, used, offset);
        if (used != ~0ULL) {
            if (lane == 0) colour[i] = first + __ffsll((long long)~used) - 1;
            return;
        }
    }
}

// The greedy colouring of the last `count` uncoloured nodes, taken one after another in
// descending priority (`nodes` is sorted so), by one block: the nodes that Jones-Plassmann rounds
// leave for last are the hubs of the dense core, a chain of them per round, each round rescanning
// their long rows. A node's higher-priority neighbours are coloured before it either way, so the
// colours are the same. The block marks its neighbours' colours in a shared bitmap, a window of
// TAIL_WINDOW colours at a time.
constexpr int TAIL_WINDOW = 4096;

extern "C" __global__ void cm_colour_tail(const int* __restrict__ nodes, int count,
                                          const i64* __restrict__ indptr,
                                          const int* __restrict__ indices,
                                          int* __restrict__ colour) {
    __shared__ unsigned used[TAIL_WINDOW / 32];
    __shared__ int found;
    for (int p = 0; p < count; ++p) {
        const int i = nodes[p];
        const i64 lo = indptr[i], hi = indptr[i + 1];
        for (int first = 0;; first += TAIL_WINDOW) {
            for (int x = threadIdx.x; x < TAIL_WINDOW / 32; x += blockDim.x) used[x] = 0;
            __syncthreads();
            for (i64 j = lo + threadIdx.x; j < hi; j += blockDim.x) {
                const int c = __ldcg(&colour[indices[j]]) - first;
                if (c >= 0 && c < TAIL_WINDOW) atomicOr(&used[c >> 5], 1u << (c & 31));
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                found = -1;
                for (int x = 0; x < TAIL_WINDOW / 32; ++x) {
                    if (used[x] != ~0u) {
                        found = first + 32 * x + __ffs((int)~used[x]) - 1;
                        break;
                    }
                }
                if (found >= 0) colour[i] = found;
            }
            __syncthreads();
            if (found >= 0) break;
        }
        __syncthreads();  // `found` is read by all before thread 0 resets it for the next node
    }
}

__device__ __forceinline__ int slot_of(int c, i64 slots) {
    return (int)(((unsigned)c * 2654435761U) % (unsigned long long)slots);
}

// Best move of each node of one colour class. A node's weight to each neighbouring community is
// accumulated in a hash table in its own part of the scratch (2 slots per arc), filled by its
// group of threads with atomics (integer sums: exact in any order) and read back past L1
// (__ldcg: other threads' plain loads may have cached lines of it before the atomics).
// Candidates are scored per arc and reduced over the group with a total order (higher gain, then
// smaller community id), so the choice is the CPU's whatever the table's layout or the threads'
// order. The group is a warp (cm_decide) or, for hubs, a whole block (cm_decide_hub): a hub's
// row walked by one warp made every colour class wait for it.
// refine: only nodes alone in their community move, only towards neighbours of the same part.

struct Move {
    const i64* indptr; const int* indices; const i64* w; const int* comm; const i64* k;
    const i64* sigma; const int* size; const int* part; int refine; double res; double m2;
    int* keys; i64* vals;
};

// The kernels' common arguments, and the struct the device functions take them in.
#define MOVE_ARGS                                                                           \
    const i64 *__restrict__ indptr, const int *__restrict__ indices, const i64 *__restrict__ w, \
    const int *__restrict__ comm, const i64 *__restrict__ k, const i64 *__restrict__ sigma,  \
    const int *__restrict__ size, const int *__restrict__ part, int refine, double res,      \
    double m2, int *__restrict__ keys, i64 *__restrict__ vals
#define MOVE_STRUCT {indptr, indices, w, comm, k, sigma, size, part, refine, res, m2, keys, vals}

__device__ __forceinline__ bool better(double score, int c, double best, int best_c) {
    return c >= 0 && (best_c < 0 || score > best || (score == best && c < best_c));
}

__device__ __forceinline__ bool skipped(const Move& m, int i, int v) {
    return v == i || (m.refine && m.part[v] != m.part[i]);
}

// Fill node i's table; threads `start`, `start + stride`, ... of its group. The caller syncs
// the group between the two halves (clearing, then adding).
__device__ __forceinline__ void clear_table(const Move& m, i64 lo, i64 hi, int start,
                                            int stride) {
    for (i64 s = start; s < 2 * (hi - lo); s += stride) {
        m.keys[2 * lo + s] = -1;
        m.vals[2 * lo + s] = 0;
    }
}

__device__ __forceinline__ void add_arcs(const Move& m, int i, i64 lo, i64 hi, int start,
                                         int stride) {
    const i64 slots = 2 * (hi - lo);
    int* K = m.keys + 2 * lo;
    i64* V = m.vals + 2 * lo;
    for (i64 j = lo + start; j < hi; j += stride) {
        const int v = m.indices[j];
        if (skipped(m, i, v)) continue;
        const int c = m.comm[v];
        int s = slot_of(c, slots);
        while (true) {
            const int seen = atomicCAS(&K[s], -1, c);
            if (seen == -1 || seen == c) break;
            s = (s + 1 == slots) ? 0 : s + 1;
        }
        atomicAdd((u64*)&V[s], (u64)m.w[j]);
    }
}

// After the table is full: the thread's best candidate (best_c -1: none) and the gain of staying.
__device__ __forceinline__ double score_arcs(const Move& m, int i, i64 lo, i64 hi, int start,
                                             int stride, double& best, int& best_c) {
    const i64 slots = 2 * (hi - lo);
    const int* K = m.keys + 2 * lo;
    const i64* V = m.vals + 2 * lo;
    const int a = m.comm[i];
    i64 kia = 0;
    {
        int s = slot_of(a, slots);
        int key;
        while ((key = __ldcg(&K[s])) != a && key != -1) s = (s + 1 == slots) ? 0 : s + 1;
        if (key == a) kia = __ldcg(&V[s]);
    }
    const double kd = (double)m.k[i];
    best = 0.0;
    best_c = -1;
    for (i64 j = lo + start; j < hi; j += stride) {
        const int v = m.indices[j];
        if (skipped(m, i, v)) continue;
        const int c = m.comm[v];
        if (c == a) continue;
        int s = slot_of(c, slots);
        while (__ldcg(&K[s]) != c) s = (s + 1 == slots) ? 0 : s + 1;
        const double score = (double)__ldcg(&V[s]) - m.res * (kd * (double)m.sigma[c]) / m.m2;
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

// Whether node i (at class position p) looks for a move; lane/thread 0 writes the default.
__device__ __forceinline__ bool may_move(const Move& m, int i, long long p, int* target,
                                         bool first) {
    const int a = m.comm[i];
    if (first) target[p] = a;
    return !(m.refine && m.size[a] != 1) && m.indptr[i + 1] > m.indptr[i];
}

extern "C" __global__ void cm_decide(const int* __restrict__ order, int count, MOVE_ARGS,
                                     int* __restrict__ target) {
    const Move m = MOVE_STRUCT;
    const long long p = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (p >= count) return;  // whole warps: p is the same for all 32 lanes
    const int i = order[p];
    if (!may_move(m, i, p, target, lane == 0)) return;
    const i64 lo = m.indptr[i], hi = m.indptr[i + 1];
    clear_table(m, lo, hi, lane, 32);
    __syncwarp();
    add_arcs(m, i, lo, hi, lane, 32);
    __syncwarp();
    double best;
    int best_c;
    const double stay = score_arcs(m, i, lo, hi, lane, 32, best, best_c);
    warp_best(best, best_c);
    if (lane == 0 && best_c >= 0 && best > stay) target[p] = best_c;
}

constexpr int HUB_THREADS = 1024;

// A block per hub (class positions 0..count-1 of `order`): the same decision as cm_decide.
extern "C" __global__ void __launch_bounds__(HUB_THREADS) cm_decide_hub(
    const int* __restrict__ order, MOVE_ARGS, int* __restrict__ target) {
    const Move m = MOVE_STRUCT;
    __shared__ double block_best[HUB_THREADS / 32];
    __shared__ int block_c[HUB_THREADS / 32];
    const long long p = blockIdx.x;
    const int i = order[p];
    if (!may_move(m, i, p, target, threadIdx.x == 0)) return;  // the same for the block
    const i64 lo = m.indptr[i], hi = m.indptr[i + 1];
    clear_table(m, lo, hi, threadIdx.x, blockDim.x);
    __syncthreads();
    add_arcs(m, i, lo, hi, threadIdx.x, blockDim.x);
    __syncthreads();
    double best;
    int best_c;
    const double stay = score_arcs(m, i, lo, hi, threadIdx.x, blockDim.x, best, best_c);
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
        if (best_c >= 0 && best > stay) target[p] = best_c;
    }
}

// Apply one colour class's moves: community totals and sizes by exact integer atomics.
extern "C" __global__ void cm_apply(const int* __restrict__ order, int count,
                                    const int* __restrict__ target, int* __restrict__ comm,
                                    const i64* __restrict__ k, i64* __restrict__ sigma,
                                    int* __restrict__ size, u64* __restrict__ moved) {
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= count) return;
    const int i = order[p];
    const int a = comm[i], t = target[p];
    if (a == t) return;
    atomicAdd((u64*)&sigma[a], (u64)(-k[i]));
    atomicAdd((u64*)&sigma[t], (u64)k[i]);
    atomicSub(&size[a], 1);
    atomicAdd(&size[t], 1);
    comm[i] = t;
    atomicAdd(moved, 1ULL);
}

// Component labels inside communities: each node takes the smallest label among itself and its
// neighbours of the same community, then follows its label once; repeated until nothing changes,
// the label is the smallest node id of the component.
extern "C" __global__ void cm_components(const i64* __restrict__ indptr,
                                         const int* __restrict__ indices, int n,
                                         const int* __restrict__ comm, int* __restrict__ label,
                                         int* __restrict__ changed) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int best = label[i];
    for (i64 j = indptr[i]; j < indptr[i + 1]; ++j) {
        const int v = indices[j];
        if (comm[v] == comm[i]) best = min(best, label[v]);
    }
    best = min(best, label[best]);
    if (best < label[i]) {
        atomicMin(&label[i], best);
        *changed = 1;
    }
}
