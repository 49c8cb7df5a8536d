// DACCER volumes and exact closeness (kernels/algorithms/centrality/gpu.py): bounded and
// unbounded multi-source BFS. Compiled by NVRTC through CuPy; no headers.
//
// Volumes of radius r >= 2 come from two engines:
//   * ball_warp / ball_block: one team (a warp, or a whole block) per source, the source's r-ball
//     deduplicated in a shared-memory hash table sized from a proven bound on the ball, the nodes
//     of levels < r kept in insertion order (so each level's frontier is a contiguous range) and
//     each frontier chunk expanded arc by arc with a warp-wide prefix sum, its arcs dealt out
//     to the team's warps (load balance), the degrees of new nodes summed straight into the
//     volume;
//   * the bit-parallel multi-source BFS of kernels/algorithms/common/bitset_bfs.cu (64 sources
//     per word, one word per node and source group) for sources whose bound exceeds the largest
//     table, and for closeness; ms_accumulate and ms_volume here reduce its bits.

typedef long long i64;
typedef unsigned long long u64;

#define FULL 0xffffffffu
#define EMPTY (-1)

// out[v] = c0 + c1 * x[v] + sum over neighbours u of (x[u] - sub), capped at cap. `group` lanes
// (a power of two <= 32) share a row. Gives r = 1 volumes and the ball-size bounds.
extern "C" __global__ void neighbour_sum(const i64* __restrict__ indptr,
                                         const int* __restrict__ indices,
                                         const i64* __restrict__ x, int n, int group, i64 c0,
                                         i64 c1, i64 sub, i64 cap, i64* __restrict__ out) {
    const i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x;
    const int v = (int)(t / group);
    const int lane = (int)(t & (group - 1));
    const bool valid = v < n;
    i64 acc = 0;
    if (valid) {
        for (i64 j = indptr[v] + lane; j < indptr[v + 1]; j += group) acc += x[indices[j]] - sub;
    }
    for (int off = group >> 1; off > 0; off >>= 1) acc += __shfl_xor_sync(FULL, acc, off);
    if (valid && lane == 0) {
        const i64 r = c0 + c1 * x[v] + acc;
        out[v] = r < cap ? r : cap;
    }
}

__device__ __forceinline__ unsigned slot_of(int w, int log2_slots) {
    return ((unsigned)w * 2654435761u) >> (32 - log2_slots);  // Fibonacci hashing: top bits
}

// Linear-probing insert into a shared table; true when w was not there yet.
__device__ __forceinline__ bool insert(int* table, int log2_slots, int w) {
    const unsigned mask = (1u << log2_slots) - 1;
    unsigned h = slot_of(w, log2_slots);
    while (true) {
        int seen = ((volatile int*)table)[h];  // read first: most probes hit a present node
        if (seen == w) return false;
        if (seen == EMPTY) {
            seen = atomicCAS(&table[h], EMPTY, w);
            if (seen == EMPTY) return true;
            if (seen == w) return false;
        }
        h = (h + 1) & mask;
    }
}

template <bool BLOCK>
__device__ __forceinline__ void team_sync() {
    if (BLOCK) __syncthreads(); else __syncwarp();
}

// Volumes of sources[0..count) whose bound is at most `cap`: persistent teams take sources from
// *next_source. Shared memory per team: 2 cap table slots + cap ball entries (ints).
template <bool BLOCK>
__device__ void ball_volumes(const i64* __restrict__ indptr, const int* __restrict__ indices,
                             const int* __restrict__ deg, const int* __restrict__ sources,
                             const i64* __restrict__ bound, int count, int radius, int cap,
                             int* next_source, i64* __restrict__ volume) {
    extern __shared__ int smem[];
    __shared__ int s_source, s_count;
    __shared__ u64 s_acc;
    const int lane = threadIdx.x & 31;
    const int team_warp = BLOCK ? threadIdx.x >> 5 : 0;
    const int team_threads = BLOCK ? blockDim.x : 32;
    const int rank = BLOCK ? threadIdx.x : lane;
    int* table = smem + (BLOCK ? 0 : (threadIdx.x >> 5) * 3 * cap);
    int* ball = table + 2 * cap;
    while (true) {
        int i;
        if (BLOCK) {
            if (threadIdx.x == 0) { s_source = atomicAdd(next_source, 1); s_count = 1; s_acc = 0; }
            __syncthreads();
            i = s_source;
        } else {
            if (lane == 0) i = atomicAdd(next_source, 1);
            i = __shfl_sync(FULL, i, 0);
        }
        if (i >= count) break;
        const int v = sources[i];
        int log2_slots = 5;  // table at most half full: 2 * bound <= slots <= 2 * cap
        while ((1ll << log2_slots) < 2 * bound[v]) ++log2_slots;
        for (int s = rank; s < (1 << log2_slots); s += team_threads) table[s] = EMPTY;
        team_sync<BLOCK>();
        if (rank == 0) { table[slot_of(v, log2_slots)] = v; ball[0] = v; }
        team_sync<BLOCK>();
        i64 acc = rank == 0 ? deg[v] : 0;
        int filled = 1;  // ball entries so far (the warp's own count; s_count for a block)
        int first = 0, last = 1;  // the frontier: ball[first..last)
        for (int level = 1; level <= radius && first < last; ++level) {
            const bool keep = level < radius;  // the last level is counted, never expanded
            // Every warp scans every chunk of 32 frontier nodes and takes every team_warps-th
            // run of 32 of its arcs: a hub in a small frontier is shared by the whole team.
            for (int chunk = first; chunk < last; chunk += 32) {
                const int idx = chunk + lane;
                const int u = idx < last ? ball[idx] : -1;
                const i64 beg = u >= 0 ? indptr[u] : 0;
                const int d = u >= 0 ? deg[u] : 0;
                int incl = d;
                for (int off = 1; off < 32; off <<= 1) {
                    const int up = __shfl_up_sync(FULL, incl, off);
                    if (lane >= off) incl += up;
                }
                const int total = __shfl_sync(FULL, incl, 31);
                const int excl = incl - d;
                for (int base = 32 * team_warp; base < total; base += team_threads) {
                    const int e = base + lane;
                    int owner = 0;  // the last lane whose arcs start at or before e
                    for (int step = 16; step > 0; step >>= 1) {
                        if (__shfl_sync(FULL, excl, owner + step) <= e) owner += step;
                    }
                    const i64 obeg = __shfl_sync(FULL, beg, owner);
                    const int oexcl = __shfl_sync(FULL, excl, owner);
                    bool fresh = false;
                    int w = 0;
                    if (e < total) {
                        w = indices[obeg + (e - oexcl)];
                        fresh = insert(table, log2_slots, w);
                        if (fresh) acc += deg[w];
                    }
                    if (keep) {
                        const unsigned m = __ballot_sync(FULL, fresh);
                        if (m) {
                            int at;
                            if (BLOCK) {
                                if (lane == 0) at = atomicAdd(&s_count, __popc(m));
                                at = __shfl_sync(FULL, at, 0);
                            } else {
                                at = filled;
                                filled += __popc(m);
                            }
                            if (fresh) ball[at + __popc(m & ((1u << lane) - 1))] = w;
                        }
                    }
                }
            }
            team_sync<BLOCK>();
            first = last;
            last = BLOCK ? s_count : filled;
            team_sync<BLOCK>();  // everyone has read s_count before the next level adds to it
        }
        for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(FULL, acc, off);
        if (BLOCK) {
            if (lane == 0) atomicAdd(&s_acc, (u64)acc);
            __syncthreads();
            if (threadIdx.x == 0) volume[v] = (i64)s_acc;
        } else if (lane == 0) {
            volume[v] = acc;
        }
        team_sync<BLOCK>();  // the table is free again
    }
}

extern "C" __global__ void ball_warp(const i64* indptr, const int* indices, const int* deg,
                                     const int* sources, const i64* bound, int count, int radius,
                                     int cap, int* next_source, i64* volume) {
    ball_volumes<false>(indptr, indices, deg, sources, bound, count, radius, cap, next_source,
                        volume);
}

extern "C" __global__ void ball_block(const i64* indptr, const int* indices, const int* deg,
                                      const int* sources, const i64* bound, int count, int radius,
                                      int cap, int* next_source, i64* volume) {
    ball_volumes<true>(indptr, indices, deg, sources, bound, count, radius, cap, next_source,
                       volume);
}

// ---- bit-parallel multi-source BFS: the sweep itself (ms_seed, ms_pull) is
// kernels/algorithms/common/bitset_bfs.cu; these kernels reduce its bits ------------------------

// Closeness sums after a level: distances, reached count and the harmonic sum (Neumaier-
// compensated, so the order of batches and levels changes the result by rounding only). *any is
// set when some node was reached at this level.
extern "C" __global__ void ms_accumulate(int n, int level, unsigned* cnt, i64* total,
                                         i64* reached, double* harmonic, double* compensation,
                                         int* any) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned c = v < n ? cnt[v] : 0u;
    if (c) {
        cnt[v] = 0;
        total[v] += (i64)c * level;
        reached[v] += c;
        const double x = (double)c / level, s = harmonic[v], sum = s + x;
        compensation[v] += fabs(s) >= fabs(x) ? (s - sum) + x : (x - sum) + s;
        harmonic[v] = sum;
    }
    if (__syncthreads_or(c != 0) && threadIdx.x == 0) *any = 1;
}

// volume[sources[64 w + b]] += sum of deg(v) over the nodes v whose word w has bit b. blockIdx.y
// is the word; a warp reduces a bit over 32 nodes with two exact 32-bit sums (low 16 bits and the
// rest of the degree), and lane b & 31 keeps bit b's running sum.
extern "C" __global__ void ms_volume(int n, int words, const u64* __restrict__ visited,
                                     const int* __restrict__ deg,
                                     const int* __restrict__ sources, int count,
                                     i64* volume) {
    const int w = blockIdx.y;
    const int lane = threadIdx.x & 31;
    const int stride = gridDim.x * blockDim.x;
    i64 low_half = 0, high_half = 0;  // bits lane and lane + 32
    for (int base = blockIdx.x * blockDim.x + (threadIdx.x & ~31); base < n; base += stride) {
        const int v = base + lane;
        const u64 x = v < n ? visited[(i64)v * words + w] : 0;
        if (__ballot_sync(FULL, x != 0) == 0) continue;
        const unsigned d = v < n ? (unsigned)deg[v] : 0;
#pragma unroll
        for (int b = 0; b < 64; ++b) {
            const bool in = (x >> b) & 1;
            const unsigned lo = __reduce_add_sync(FULL, in ? d & 0xffffu : 0u);
            const unsigned hi = __reduce_add_sync(FULL, in ? d >> 16 : 0u);
            if (lane == (b & 31)) {
                const i64 sum = (i64)lo + ((i64)hi << 16);
                if (b < 32) low_half += sum; else high_half += sum;
            }
        }
    }
    const int i = 64 * w + lane;
    if (i < count && low_half) atomicAdd((u64*)&volume[sources[i]], (u64)low_half);
    if (i + 32 < count && high_half) atomicAdd((u64*)&volume[sources[i + 32]], (u64)high_half);
}
