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

// One Jones-Plassmann round: an uncoloured node whose higher-priority neighbours all have a colour
// (in the previous round's array) takes the smallest colour none of them has. The result is the
// greedy colouring in descending (mix32(i ^ salt), i) order, as the CPU computes it.
extern "C" __global__ void cm_colour(const i64* __restrict__ indptr,
                                     const int* __restrict__ indices, int n, unsigned salt,
                                     const int* __restrict__ before, int* __restrict__ after,
                                     int* __restrict__ left) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || before[i] >= 0) return;
    const unsigned pi = mix32((unsigned)i ^ salt);
    for (i64 j = indptr[i]; j < indptr[i + 1]; ++j) {
        const int v = indices[j];
        if (v == i || before[v] >= 0) continue;
        const unsigned pv = mix32((unsigned)v ^ salt);
        if (pv > pi || (pv == pi && v > i)) {  // a higher-priority neighbour is still waiting
            *left = 1;
            return;
        }
    }
    for (int base = 0;; base += 64) {
        u64 used = 0;
        for (i64 j = indptr[i]; j < indptr[i + 1]; ++j) {
            const int c = before[indices[j]] - base;
            if (c >= 0 && c < 64) used |= 1ULL << c;
        }
        if (used != ~0ULL) {
            after[i] = base + __ffsll((long long)~used) - 1;
            return;
        }
    }
}

__device__ __forceinline__ int slot_of(int c, i64 slots) {
    return (int)(((unsigned)c * 2654435761U) % (unsigned long long)slots);
}

#define FULL_MASK 0xffffffffu

// Best move of each node of one colour class (a warp per node). A node's weight to each neighbouring
// community is accumulated in a hash table in its own part of the scratch (2 slots per arc),
// filled by the warp with atomics (integer sums: exact in any order) and read back past L1
// (__ldcg: other warps' plain loads may have cached lines of it before the atomics). Candidates
// are scored per arc and reduced over the warp with a total order (higher gain, then smaller
// community id), so the choice is the CPU's whatever the table's layout or the lanes' order.
// refine: only nodes alone in their community move, only towards neighbours of the same part.
extern "C" __global__ void cm_decide(const int* __restrict__ order, int count,
                                     const i64* __restrict__ indptr,
                                     const int* __restrict__ indices, const i64* __restrict__ w,
                                     const int* __restrict__ comm, const i64* __restrict__ k,
                                     const i64* __restrict__ sigma, const int* __restrict__ size,
                                     const int* __restrict__ part, int refine, double res,
                                     double m2, int* __restrict__ keys, i64* __restrict__ vals,
                                     int* __restrict__ target) {
    const long long p = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (p >= count) return;  // whole warps: p is the same for all 32 lanes
    const int i = order[p];
    const int a = comm[i];
    if (lane == 0) target[p] = a;
    if (refine && size[a] != 1) return;
    const i64 lo = indptr[i], hi = indptr[i + 1];
    const i64 slots = 2 * (hi - lo);
    if (slots == 0) return;
    int* K = keys + 2 * lo;
    i64* V = vals + 2 * lo;
    for (i64 s = lane; s < slots; s += 32) {
        K[s] = -1;
        V[s] = 0;
    }
    __syncwarp();
    for (i64 j = lo + lane; j < hi; j += 32) {
        const int v = indices[j];
        if (v == i || (refine && part[v] != part[i])) continue;
        const int c = comm[v];
        int s = slot_of(c, slots);
        while (true) {
            const int seen = atomicCAS(&K[s], -1, c);
            if (seen == -1 || seen == c) break;
            s = (s + 1 == slots) ? 0 : s + 1;
        }
        atomicAdd((u64*)&V[s], (u64)w[j]);
    }
    __syncwarp();
    i64 kia = 0;
    {
        int s = slot_of(a, slots);
        int key;
        while ((key = __ldcg(&K[s])) != a && key != -1) s = (s + 1 == slots) ? 0 : s + 1;
        if (key == a) kia = __ldcg(&V[s]);
    }
    const double kd = (double)k[i];
    const double stay = (double)kia - res * (kd * (double)(sigma[a] - k[i])) / m2;
    double best = 0.0;
    int best_c = -1;
    for (i64 j = lo + lane; j < hi; j += 32) {
        const int v = indices[j];
        if (v == i || (refine && part[v] != part[i])) continue;
        const int c = comm[v];
        if (c == a) continue;
        int s = slot_of(c, slots);
        while (__ldcg(&K[s]) != c) s = (s + 1 == slots) ? 0 : s + 1;
        const double score = (double)__ldcg(&V[s]) - res * (kd * (double)sigma[c]) / m2;
        if (best_c < 0 || score > best || (score == best && c < best_c)) {
            best = score;
            best_c = c;
        }
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        const double other = __shfl_down_sync(FULL_MASK, best, offset);
        const int other_c = __shfl_down_sync(FULL_MASK, best_c, offset);
        if (other_c >= 0 &&
            (best_c < 0 || other > best || (other == best && other_c < best_c))) {
            best = other;
            best_c = other_c;
        }
    }
    if (lane == 0 && best_c >= 0 && best > stay) target[p] = best_c;
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
