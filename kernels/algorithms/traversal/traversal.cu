// GPU kernels of breadth-first search, direction-optimising (compiled by
// kernels/algorithms/traversal/gpu.py through CuPy's NVRTC, once per process and device; the
// connected components are components.cu). Graph: CSR with long long offsets and int neighbours,
// each row sorted ascending; vertex ids fit in int (the service caps n far below 2^31).
//
// Parents are found during the search rather than by a pass over all vertices afterwards:
// parent[v] is v's smallest neighbour one level up, and rows are sorted, so
//   * a vertex found bottom-up gets the first frontier neighbour of its row, its parent;
//   * a frontier vertex expanded top-down reads every neighbour's level anyway, and takes the
//     smallest at depth - 1 (levels up to depth are final by then);
//   * a frontier found top-down but searched bottom-up (the first bottom-up step after a switch)
//     looks for its parent in that step (`fix`), like an unvisited vertex looks for the frontier.
// Every reached vertex is in exactly one frontier, and every frontier is expanded one way or the
// other, so every parent is written; sources are their own parents, unreached vertices keep -1.

#include "grid_sync.cuh"

#ifndef INT_MAX
#define INT_MAX 2147483647
#endif
#define FULL_MASK 0xffffffffu
#define HUB 65536  // = gpu.HUGE_DEGREE: rows the whole grid expands; flagged in C_HUB

// Counters of the frontier being built (unsigned long long, zeroed before its level).
#define C_SIZE 0   // vertices appended
#define C_ARCS 1   // their degree sum (the direction heuristic's m_f)
#define C_HUB 2    // nonzero once one of them has more than HUB neighbours
#define C_LONG 3   // rows listed at the front of the side list (a block each)
#define C_HUGE 4   // rows listed at its back, from index n - 1 down (the whole grid each)
#define C_WORDS 5  // = gpu.COUNTERS

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

__device__ __forceinline__ unsigned clamp_degree(long long deg) {
    // Clamped so that 32 lanes cannot overflow a 32-bit warp sum.
    return (unsigned)(deg < (1 << 26) ? deg : (1 << 26));
}

// Appends v to a queue with one atomic per group of converged threads instead of one per thread:
// every vertex is appended exactly once per BFS, and n same-address atomics would serialise in
// L2. The same atomic accumulates the new frontier's degree sum.
__device__ __forceinline__ void append(int v, long long deg, int* queue,
                                       unsigned long long* counters) {
    const unsigned active = __activemask();
    const int lane = threadIdx.x & 31;
    const int leader = __ffs(active) - 1;
    const unsigned degsum = __reduce_add_sync(active, clamp_degree(deg));
    unsigned long long base = 0;
    if (lane == leader) {
        base = atomicAdd(&counters[C_SIZE], (unsigned long long)__popc(active));
        atomicAdd(&counters[C_ARCS], (unsigned long long)degsum);
    }
    base = __shfl_sync(active, base, leader);
    queue[base + __popc(active & ((1u << lane) - 1u))] = v;
}

// The same for a whole block at once (every thread calls it; `take`: whether it appends v): one
// pair of atomics per block. A bottom-up step appends most of the graph.
__device__ __forceinline__ void block_append(bool take, int v, long long deg, int* queue,
                                             unsigned long long* counters) {
    __shared__ unsigned offset[32];
    __shared__ unsigned degsum[32];
    __shared__ unsigned long long base;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned ballot = __ballot_sync(FULL_MASK, take);
    const unsigned sum = __reduce_add_sync(FULL_MASK, take ? clamp_degree(deg) : 0u);
    if (lane == 0) {
        offset[warp] = __popc(ballot);
        degsum[warp] = sum;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned total = 0;
        unsigned long long arcs = 0;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) {
            const unsigned count = offset[w];
            offset[w] = total;
            total += count;
            arcs += degsum[w];
        }
        base = total ? atomicAdd(&counters[C_SIZE], (unsigned long long)total) : 0;
        if (total) atomicAdd(&counters[C_ARCS], arcs);
    }
    __syncthreads();
    if (take) queue[base + offset[warp] + __popc(ballot & ((1u << lane) - 1u))] = v;
}

// Level of the parents of a frontier at `depth`; none (-2, no vertex's level) for the sources.
__device__ __forceinline__ int parent_level(int depth) { return depth > 0 ? depth - 1 : -2; }

// Claim w for depth + 1 if it is unvisited (lw: its level as read; a stale -1 only costs the
// CAS) and queue it; a hub is flagged in counters[C_HUB].
__device__ __forceinline__ void claim(const long long* __restrict__ indptr,
                                      int* __restrict__ level, int w, int lw, int depth,
                                      int* __restrict__ next, unsigned long long* counters) {
    if (lw == -1 && atomicCAS(&level[w], -1, depth + 1) == -1) {
        const long long deg = indptr[w + 1] - indptr[w];
        if (deg > HUB) atomicOr(&counters[C_HUB], 1ull);
        append(w, deg, next, counters);
    }
}

// Top-down expansion of entries j, j + stride, ... < end of a frontier vertex's row: claims the
// unvisited neighbours and returns the smallest neighbour one level up that this thread saw
// (INT_MAX if none). FRESH reads levels from L2: inside the persistent kernel L1 may still hold
// a level from before the last grid barrier, and the parent test must see final levels.
template <bool FRESH>
__device__ __forceinline__ int expand_row(const long long* __restrict__ indptr,
                                          const int* __restrict__ indices,
                                          int* __restrict__ level, long long j, long long end,
                                          long long stride, int depth, int* __restrict__ next,
                                          unsigned long long* counters) {
    const int up = parent_level(depth);
    int first = INT_MAX;
    for (; j < end; j += stride) {
        const int w = indices[j];
        const int lw = FRESH ? __ldcg(&level[w]) : level[w];
        if (lw == up) first = min(first, w);
        claim(indptr, level, w, lw, depth, next, counters);
    }
    return first;
}

// u's parent from the candidates of the `group` aligned lanes (all present) that expanded it.
__device__ __forceinline__ void group_parent(int first, int group, int u,
                                             long long* __restrict__ parent) {
    const int lane = threadIdx.x & 31;
    const unsigned mask = group == 32 ? FULL_MASK
                                      : ((1u << group) - 1u) << (lane & ~(group - 1));
    first = __reduce_min_sync(mask, first);
    if ((lane & (group - 1)) == 0 && first != INT_MAX) parent[u] = first;
}

// u's parent from the candidates of whole warps (a block or the grid shares the row): each
// warp's smallest goes in with an atomic min (parent starts at -1, the largest as unsigned).
__device__ __forceinline__ void warps_parent(int first, int u, long long* __restrict__ parent) {
    first = __reduce_min_sync(FULL_MASK, first);
    if ((threadIdx.x & 31) == 0 && first != INT_MAX) {
        atomicMin(reinterpret_cast<unsigned long long*>(&parent[u]), (unsigned long long)first);
    }
}

// ---------------------------------------------------------------------------------------------
// Top-down steps of the host loop
// ---------------------------------------------------------------------------------------------

// `group` lanes (a power of two, at most 32) expand one frontier vertex. Vertices with more than
// `big` neighbours are set aside so that one hub cannot hold a few lanes for thousands of
// iterations: up to `huge` neighbours to the front of `big_queue` (a block each,
// bfs_top_down_block), above that to its back (the whole grid, bfs_top_down_grid).
extern "C" __global__ void bfs_top_down(const long long* __restrict__ indptr,
                                        const int* __restrict__ indices,
                                        int* __restrict__ level, long long* __restrict__ parent,
                                        const int* __restrict__ frontier, int frontier_size,
                                        int* __restrict__ next, unsigned long long* counters,
                                        int* __restrict__ big_queue, int n, int depth, int group,
                                        long long big, long long huge) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long slot = tid / group;
    if (slot >= frontier_size) return;  // whole groups leave together
    const int u = frontier[slot];
    const long long begin = indptr[u];
    const long long end = indptr[u + 1];
    if (end - begin > big) {
        if ((tid & (group - 1)) == 0) {
            if (end - begin > huge) big_queue[n - 1 - atomicAdd(&counters[C_HUGE], 1ull)] = u;
            else big_queue[atomicAdd(&counters[C_LONG], 1ull)] = u;
        }
        return;
    }
    const int first = expand_row<false>(indptr, indices, level, begin + (tid & (group - 1)), end,
                                        group, depth, next, counters);
    group_parent(first, group, u, parent);
}

// The big vertices set aside by bfs_top_down, one block each. Launched with a fixed grid every
// top-down step; the count is read on the device, so the host needs no sync.
extern "C" __global__ void bfs_top_down_block(const long long* __restrict__ indptr,
                                              const int* __restrict__ indices,
                                              int* __restrict__ level,
                                              long long* __restrict__ parent,
                                              const int* __restrict__ big_queue,
                                              int* __restrict__ next,
                                              unsigned long long* counters, int depth) {
    const long long count = (long long)counters[C_LONG];
    for (long long k = blockIdx.x; k < count; k += gridDim.x) {
        const int u = big_queue[k];
        warps_parent(expand_row<false>(indptr, indices, level, indptr[u] + threadIdx.x,
                                       indptr[u + 1], blockDim.x, depth, next, counters),
                     u, parent);
    }
}

// The huge vertices (hubs): the whole grid strides over each one's neighbours in turn.
extern "C" __global__ void bfs_top_down_grid(const long long* __restrict__ indptr,
                                             const int* __restrict__ indices,
                                             int* __restrict__ level,
                                             long long* __restrict__ parent,
                                             const int* __restrict__ big_queue, int n,
                                             int* __restrict__ next,
                                             unsigned long long* counters, int depth) {
    const long long count = (long long)counters[C_HUGE];
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (long long k = 0; k < count; ++k) {
        const int u = big_queue[n - 1 - k];
        warps_parent(expand_row<false>(indptr, indices, level, indptr[u] + tid, indptr[u + 1],
                                       stride, depth, next, counters),
                     u, parent);
    }
}

// ---------------------------------------------------------------------------------------------
// Bottom-up steps of the host loop
// ---------------------------------------------------------------------------------------------

// Thread first, warp for the rest: each lane scans the first SCAN_FIRST neighbours of its own
// vertex; the vertices left with longer rows are then searched by the whole warp, one after the
// other, 32 neighbours per round. A lone thread scanning a hub's row serially took milliseconds.
// Rows are sorted, so the first hit in row order is the smallest matching neighbour.
// Vertices whose rows are longer still (a web graph's unvisited hub can stay pending through
// several bottom-up steps) go to a heavy list searched by a whole block each, after the launch.
#define SCAN_FIRST 16
#define HEAVY 1024

// First neighbour of row [begin, end) whose level is `wanted`, searched by the whole warp
// (every lane must call it with the same arguments); -1 if none.
__device__ __forceinline__ int warp_find(const int* __restrict__ indices,
                                         const int* __restrict__ level, long long begin,
                                         long long end, int wanted) {
    const int lane = threadIdx.x & 31;
    for (long long base = begin; base < end; base += 32) {
        const long long j = base + lane;
        const int u = j < end ? indices[j] : 0;
        const unsigned hits = __ballot_sync(FULL_MASK, j < end && level[u] == wanted);
        if (hits) return __shfl_sync(FULL_MASK, u, __ffs(hits) - 1);
    }
    return -1;
}

// Search of the vertices whose first SCAN_FIRST neighbours held no match (`pending`), by the
// whole warp; returns the match for the calling lane's own vertex. All 32 lanes must call it.
__device__ __forceinline__ int warp_find_pending(const int* __restrict__ indices,
                                                 const int* __restrict__ level, bool pending,
                                                 long long begin, long long end, int wanted) {
    unsigned todo = __ballot_sync(FULL_MASK, pending);
    const int lane = threadIdx.x & 31;
    int mine = -1;
    while (todo) {
        const int leader = __ffs(todo) - 1;
        todo &= todo - 1;
        const int found = warp_find(indices, level, __shfl_sync(FULL_MASK, begin, leader),
                                    __shfl_sync(FULL_MASK, end, leader),
                                    __shfl_sync(FULL_MASK, wanted, leader));
        if (lane == leader) mine = found;
    }
    return mine;
}

// The same for one row searched by the whole block (every thread calls it with the same
// arguments): the smallest hit of the first round that has one; -1 if none.
__device__ __forceinline__ int block_find(const int* __restrict__ indices,
                                          const int* __restrict__ level, long long begin,
                                          long long end, int wanted) {
    __shared__ int best;
    for (long long base = begin; base < end; base += blockDim.x) {
        const long long j = base + threadIdx.x;
        const bool hit = j < end && level[indices[j]] == wanted;
        if (__syncthreads_or(hit)) {
            if (threadIdx.x == 0) best = INT_MAX;
            __syncthreads();
            if (hit) atomicMin(&best, (int)threadIdx.x);
            __syncthreads();
            // Read by all before any thread can reset it: a reset follows the next call's
            // __syncthreads_or.
            return indices[base + best];
        }
    }
    return -1;
}

// Bottom-up step: each unvisited vertex looks for its first neighbour in the frontier (level ==
// depth), its parent; with `fix`, the frontier's own vertices (found top-down, not expanded
// top-down) look for their parents (level depth - 1) the same way. Only the vertex's own lane
// writes its level and parent: no atomics. Launch with whole warps; every thread must reach the
// end (shared searches, block-wide append).
extern "C" __global__ void bfs_bottom_up(const long long* __restrict__ indptr,
                                         const int* __restrict__ indices,
                                         int* __restrict__ level, long long* __restrict__ parent,
                                         int n, int* __restrict__ next,
                                         unsigned long long* counters, int* __restrict__ heavy,
                                         int depth, int fix) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    const int lv = v < n ? level[v] : -2;
    const int wanted = lv == -1 ? depth : (fix && lv == depth ? depth - 1 : -2);
    long long begin = 0, end = 0, j = 0;
    int hit = -1;
    if (wanted != -2) {
        begin = indptr[v];
        end = indptr[v + 1];
        const long long stop = begin + SCAN_FIRST < end ? begin + SCAN_FIRST : end;
        for (j = begin; j < stop; ++j) {
            const int u = indices[j];
            if (level[u] == wanted) {
                hit = u;
                break;
            }
        }
    }
    bool pending = hit < 0 && j < end;
    if (pending && end - j > HEAVY) {
        heavy[atomicAdd(&counters[C_LONG], 1ull)] = v;
        pending = false;
    }
    const int found = warp_find_pending(indices, level, pending, j, end, wanted);
    if (pending) hit = found;
    if (hit >= 0) parent[v] = hit;
    const bool take = lv == -1 && hit >= 0;
    if (take) level[v] = depth + 1;
    block_append(take, v, end - begin, next, counters);
}

// The heavy vertices of a bottom-up step, one block each.
extern "C" __global__ void bfs_bottom_up_heavy(const long long* __restrict__ indptr,
                                               const int* __restrict__ indices,
                                               int* __restrict__ level,
                                               long long* __restrict__ parent,
                                               const int* __restrict__ heavy,
                                               int* __restrict__ next,
                                               unsigned long long* counters, int depth) {
    const long long count = (long long)counters[C_LONG];
    for (long long k = blockIdx.x; k < count; k += gridDim.x) {
        const int v = heavy[k];
        const int lv = level[v];  // -1: unvisited; depth: a frontier vertex fixing its parent
        const long long begin = indptr[v];
        const long long end = indptr[v + 1];
        const int hit = block_find(indices, level, begin + SCAN_FIRST, end,
                                   lv == -1 ? depth : depth - 1);
        if (threadIdx.x == 0 && hit >= 0) {
            parent[v] = hit;
            if (lv == -1) {
                level[v] = depth + 1;
                append(v, end - begin, next, counters);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// BFS while the frontier is small: one persistent launch, levels separated by a grid barrier
// ---------------------------------------------------------------------------------------------

// A top-down level of a small frontier is a few microseconds of memory latency; as separate
// launches each also paid a host round trip (the frontier size is read back to size the next
// launch): about 80 us a level, 1.4 ms for a 5k-node graph. bfs_persistent keeps one launch
// going from level to level while the frontier's arcs stay under `limit` and no hub joins it,
// then hands its state back to the host loop (direction-optimising, a launch per level). The
// levels and parents are the same whichever path expands a frontier.
#define PERSIST_THREADS 512  // = gpu.PERSIST_THREADS
#define PERSIST_ROUNDS 16    // rows longer than this many rounds of their lanes: a block each
// ctl (unsigned long long, zeroed by the host before every launch): per depth d % 3 the
// counters of the frontier of depth d (C_WORDS), then the barrier's word, then the state handed
// back (CTL_STATE.., gpu.CTL_STATE).
#define CTL_BARRIER (3 * C_WORDS)
#define CTL_STATE (CTL_BARRIER + 1)

// grid_sync (common/grid_sync.cuh) that also copies `count` counters to shared `seen` for the
// whole block, one L2 read per block.
__device__ __forceinline__ void grid_barrier(unsigned* bar, const unsigned long long* counters,
                                             unsigned long long* seen, int count) {
    __syncthreads();
    if (threadIdx.x == 0) {
        grid_arrive_and_wait(bar);
        for (int i = 0; i < count; ++i) seen[i] = __ldcg(&counters[i]);
    }
    __syncthreads();
}

// start: a new search (level and parent := -1 everywhere, then the sources at level 0: the
// `nsources` entries of `sources`, or when there are none the one vertex `source`, in queue0).
// Otherwise go on from the `size` vertices (`arcs` arcs) of depth `depth` in queue[parity].
// Handed back in ctl[CTL_STATE..]: depth, frontier size, frontier arcs, hub flag, parity of the
// queue holding the frontier, arcs of the frontiers expanded here, vertices reached here, arcs
// of the last frontier expanded here. `rows` holds the long rows of a level.
extern "C" __global__ void __launch_bounds__(PERSIST_THREADS, 1)
bfs_persistent(const long long* __restrict__ indptr, const int* __restrict__ indices,
               int* __restrict__ level, long long* __restrict__ parent, int* queue0,
               int* queue1, int* rows, unsigned long long* ctl,
               const long long* __restrict__ sources, int start, int nsources, int source, int n,
               int depth, long long size, long long arcs, int parity, long long limit) {
    __shared__ unsigned long long seen[C_WORDS];
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    unsigned* bar = reinterpret_cast<unsigned*>(ctl + CTL_BARRIER);
    unsigned long long hub = 0;
    if (start) {
        for (long long v = tid; v < n; v += stride) {
            level[v] = -1;
            parent[v] = -1;
        }
        grid_barrier(bar, ctl, seen, 0);
        unsigned long long* first = ctl + C_WORDS * (depth % 3);
        const long long count = nsources > 0 ? nsources : 1;
        for (long long k = tid; k < count; k += stride) {
            const int s = nsources > 0 ? (int)sources[k] : source;
            const long long deg = indptr[s + 1] - indptr[s];
            level[s] = depth;
            parent[s] = s;
            queue0[k] = s;
            atomicAdd(&first[C_ARCS], (unsigned long long)deg);
            if (deg > HUB) atomicOr(&first[C_HUB], 1ull);
        }
        grid_barrier(bar, first, seen, C_WORDS);
        size = count;
        arcs = (long long)seen[C_ARCS];
        hub = seen[C_HUB];
        parity = 0;
    }
    long long expanded = 0, reached = 0, last = 0;
    while (size > 0 && arcs <= limit && !hub) {
        const int* frontier = parity ? queue1 : queue0;
        int* next = parity ? queue0 : queue1;
        unsigned long long* out = ctl + C_WORDS * ((depth + 1) % 3);
        if (tid == 0) {  // the counters after next: every block read them before the last barrier
            unsigned long long* spare = ctl + C_WORDS * ((depth + 2) % 3);
            for (int i = 0; i < C_WORDS; ++i) spare[i] = 0;
        }
        // `group` lanes per row (a power of two covering the mean degree, at most a warp);
        // rows longer than PERSIST_ROUNDS rounds of them are listed and get a block each.
        int group = 1;
        while (group < 32 && group * size < arcs) group <<= 1;
        const long long long_row = (long long)group * PERSIST_ROUNDS;
        for (long long k = tid / group; k < size; k += stride / group) {
            const int u = __ldcg(&frontier[k]);
            const long long begin = indptr[u], end = indptr[u + 1];
            if (end - begin > long_row) {
                if ((tid & (group - 1)) == 0) rows[atomicAdd(&out[C_LONG], 1ull)] = u;
                continue;
            }
            group_parent(expand_row<true>(indptr, indices, level, begin + (tid & (group - 1)),
                                          end, group, depth, next, out),
                         group, u, parent);
        }
        grid_barrier(bar, out, seen, C_WORDS);
        const long long listed = (long long)seen[C_LONG];
        if (listed > 0) {  // uniform: every thread read the same count after the barrier
            for (long long k = blockIdx.x; k < listed; k += gridDim.x) {
                const int u = __ldcg(&rows[k]);
                warps_parent(expand_row<true>(indptr, indices, level, indptr[u] + threadIdx.x,
                                              indptr[u + 1], blockDim.x, depth, next, out),
                             u, parent);
            }
            grid_barrier(bar, out, seen, C_WORDS);
        }
        expanded += arcs;
        last = arcs;
        size = (long long)seen[C_SIZE];
        arcs = (long long)seen[C_ARCS];
        hub = seen[C_HUB];
        reached += size;
        parity ^= 1;
        ++depth;
    }
    if (tid == 0) {
        unsigned long long* state = ctl + CTL_STATE;
        state[0] = depth;
        state[1] = size;
        state[2] = arcs;
        state[3] = hub;
        state[4] = parity;
        state[5] = expanded;
        state[6] = reached;
        state[7] = last;
    }
}
