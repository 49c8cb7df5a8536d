// GPU kernels of breadth-first search, direction-optimising (compiled by
// kernels/algorithms/traversal/gpu.py through CuPy's NVRTC, once per process and device; the
// connected components are components.cu). Graph: CSR with long long offsets and int neighbours,
// each row sorted ascending; vertex ids fit in int (the service caps n far below 2^31).

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

// Appends v to a queue with one atomic per group of converged threads instead of one per thread:
// every vertex is appended exactly once per BFS, and n same-address atomics would serialise in
// L2. The same atomic accumulates the new frontier's degree sum (the direction heuristic's m_f),
// clamped per vertex so that 32 lanes cannot overflow the 32-bit warp reduction.
// counters[0] = queue length, counters[1] = degree sum.
__device__ __forceinline__ void append(int v, long long deg, int* queue,
                                       unsigned long long* counters) {
    const unsigned active = __activemask();
    const int lane = threadIdx.x & 31;
    const int leader = __ffs(active) - 1;
    const unsigned clamped = (unsigned)(deg < (1 << 26) ? deg : (1 << 26));
    const unsigned degsum = __reduce_add_sync(active, clamped);
    unsigned long long base = 0;
    if (lane == leader) {
        base = atomicAdd(&counters[0], (unsigned long long)__popc(active));
        atomicAdd(&counters[1], (unsigned long long)degsum);
    }
    base = __shfl_sync(active, base, leader);
    queue[base + __popc(active & ((1u << lane) - 1u))] = v;
}

// ---------------------------------------------------------------------------------------------
// BFS
// ---------------------------------------------------------------------------------------------

// Top-down step: `group` lanes (a power of two, at most 32) expand one frontier vertex. Vertices
// with more than `big` neighbours are set aside so that one hub cannot hold a few lanes for
// thousands of iterations: up to `huge` neighbours to the front of `big_queue` (one block each,
// bfs_top_down_block), above that to its back (the whole grid, bfs_top_down_grid).
// big_count[0] = entries at the front, big_count[1] = entries at the back (from index n - 1 down).
extern "C" __global__ void bfs_top_down(const long long* __restrict__ indptr,
                                        const int* __restrict__ indices,
                                        int* __restrict__ level,
                                        const int* __restrict__ frontier, int frontier_size,
                                        int* __restrict__ next, unsigned long long* counters,
                                        int* __restrict__ big_queue, int* big_count, int n,
                                        int depth, int group, long long big, long long huge) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long slot = tid / group;
    if (slot >= frontier_size) return;
    const int lane = (int)(tid & (group - 1));
    const int u = frontier[slot];
    const long long begin = indptr[u];
    const long long end = indptr[u + 1];
    if (end - begin > big) {
        if (lane == 0) {
            if (end - begin > huge) big_queue[n - 1 - atomicAdd(&big_count[1], 1)] = u;
            else big_queue[atomicAdd(&big_count[0], 1)] = u;
        }
        return;
    }
    for (long long j = begin + lane; j < end; j += group) {
        const int w = indices[j];
        // Plain read first: most neighbours are already visited and need no atomic.
        if (level[w] == -1 && atomicCAS(&level[w], -1, depth + 1) == -1) {
            append(w, indptr[w + 1] - indptr[w], next, counters);
        }
    }
}

// Expand u's neighbours with `stride` threads numbered `tid`.
__device__ __forceinline__ void expand(const long long* __restrict__ indptr,
                                       const int* __restrict__ indices, int* __restrict__ level,
                                       int u, long long tid, long long stride,
                                       int* __restrict__ next, unsigned long long* counters,
                                       int depth) {
    const long long end = indptr[u + 1];
    for (long long j = indptr[u] + tid; j < end; j += stride) {
        const int w = indices[j];
        if (level[w] == -1 && atomicCAS(&level[w], -1, depth + 1) == -1) {
            append(w, indptr[w + 1] - indptr[w], next, counters);
        }
    }
}

// The big vertices set aside by bfs_top_down, one block each. Launched with a fixed grid every
// top-down step; the count is read on the device, so the host needs no sync.
extern "C" __global__ void bfs_top_down_block(const long long* __restrict__ indptr,
                                              const int* __restrict__ indices,
                                              int* __restrict__ level,
                                              const int* __restrict__ big_queue,
                                              const int* big_count,
                                              int* __restrict__ next,
                                              unsigned long long* counters, int depth) {
    const int count = big_count[0];
    for (int k = blockIdx.x; k < count; k += gridDim.x) {
        expand(indptr, indices, level, big_queue[k], threadIdx.x, blockDim.x, next, counters,
               depth);
    }
}

// The huge vertices (hubs): the whole grid strides over each one's neighbours in turn.
extern "C" __global__ void bfs_top_down_grid(const long long* __restrict__ indptr,
                                             const int* __restrict__ indices,
                                             int* __restrict__ level,
                                             const int* __restrict__ big_queue,
                                             const int* big_count, int n,
                                             int* __restrict__ next,
                                             unsigned long long* counters, int depth) {
    const int count = big_count[1];
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < count; ++k) {
        expand(indptr, indices, level, big_queue[n - 1 - k], tid, stride, next, counters, depth);
    }
}

// Thread first, warp for the rest: each lane scans the first SCAN_FIRST neighbours of its own
// vertex; the vertices left with longer rows are then searched by the whole warp, one after the
// other, 32 neighbours per round. A lone thread scanning a hub's row serially took milliseconds.
// Rows are sorted, so the first hit in row order is the smallest matching neighbour.
// Vertices whose rows are longer still (a web graph's unvisited hub can stay pending through
// several bottom-up steps) go to a heavy queue searched by a whole block each, after the launch.
#ifndef INT_MAX
#define INT_MAX 2147483647
#endif
#define SCAN_FIRST 16
#define HEAVY 1024
#define FULL_MASK 0xffffffffu

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

// Bottom-up step: each unvisited vertex looks for any neighbour in the current frontier (level ==
// depth). Only the vertex's own lane writes its level: no atomics. Launch with whole warps.
extern "C" __global__ void bfs_bottom_up(const long long* __restrict__ indptr,
                                         const int* __restrict__ indices,
                                         int* __restrict__ level, int n,
                                         int* __restrict__ next, unsigned long long* counters,
                                         int* __restrict__ heavy, int* heavy_count, int depth) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    const bool mine = v < n && level[v] == -1;
    long long begin = 0, end = 0, j = 0;
    bool found = false;
    if (mine) {
        begin = indptr[v];
        end = indptr[v + 1];
        const long long stop = begin + SCAN_FIRST < end ? begin + SCAN_FIRST : end;
        for (j = begin; j < stop && !found; ++j) found = level[indices[j]] == depth;
    }
    bool pending = mine && !found && j < end;
    if (pending && end - j > HEAVY) {
        heavy[atomicAdd(heavy_count, 1)] = v;
        pending = false;
    }
    // No early return above: every lane of the warp takes part in the shared search.
    if (warp_find_pending(indices, level, pending, j, end, depth) >= 0) found = true;
    if (found) {
        level[v] = depth + 1;
        append(v, end - begin, next, counters);
    }
}

// Deterministic parent: the smallest neighbour one level up. The source is its own parent;
// unreachable vertices get -1. Launch with whole warps.
extern "C" __global__ void bfs_parent(const long long* __restrict__ indptr,
                                      const int* __restrict__ indices,
                                      const int* __restrict__ level, int n, int source,
                                      long long* __restrict__ parent, int* __restrict__ heavy,
                                      int* heavy_count) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    const int lv = v < n ? level[v] : -1;
    long long p = v == source ? source : -1;
    long long j = 0, end = 0;
    if (lv > 0) {
        j = indptr[v];
        end = indptr[v + 1];
        const long long stop = j + SCAN_FIRST < end ? j + SCAN_FIRST : end;
        for (; j < stop; ++j) {
            const int u = indices[j];
            if (level[u] == lv - 1) {
                p = u;
                break;
            }
        }
    }
    bool pending = lv > 0 && p < 0 && j < end;
    if (pending && end - j > HEAVY) {
        heavy[atomicAdd(heavy_count, 1)] = v;  // bfs_parent_heavy writes parent[v] afterwards
        pending = false;
    }
    const int found = warp_find_pending(indices, level, pending, j, end, lv - 1);
    if (pending) p = found;
    if (v < n) parent[v] = p;
}

// The heavy vertices of a bottom-up step, one block each: stop at the first round with a hit.
extern "C" __global__ void bfs_bottom_up_heavy(const long long* __restrict__ indptr,
                                               const int* __restrict__ indices,
                                               int* __restrict__ level,
                                               const int* __restrict__ heavy,
                                               const int* heavy_count, int* __restrict__ next,
                                               unsigned long long* counters, int depth) {
    const int count = *heavy_count;
    for (int k = blockIdx.x; k < count; k += gridDim.x) {
        const int v = heavy[k];
        const long long begin = indptr[v];
        const long long end = indptr[v + 1];
        for (long long base = begin + SCAN_FIRST; base < end; base += blockDim.x) {
            const long long j = base + threadIdx.x;
            if (__syncthreads_or(j < end && level[indices[j]] == depth)) {
                if (threadIdx.x == 0) {
                    level[v] = depth + 1;
                    append(v, end - begin, next, counters);
                }
                break;
            }
        }
    }
}

// The heavy vertices of bfs_parent, one block each: the smallest hit of the first round that
// has one is the parent.
extern "C" __global__ void bfs_parent_heavy(const long long* __restrict__ indptr,
                                            const int* __restrict__ indices,
                                            const int* __restrict__ level,
                                            const int* __restrict__ heavy, const int* heavy_count,
                                            long long* __restrict__ parent) {
    __shared__ int best;
    const int count = *heavy_count;
    for (int k = blockIdx.x; k < count; k += gridDim.x) {
        const int v = heavy[k];
        const int wanted = level[v] - 1;
        const long long end = indptr[v + 1];
        for (long long base = indptr[v] + SCAN_FIRST; base < end; base += blockDim.x) {
            if (threadIdx.x == 0) best = INT_MAX;
            __syncthreads();
            const long long j = base + threadIdx.x;
            if (j < end && level[indices[j]] == wanted) atomicMin(&best, (int)threadIdx.x);
            __syncthreads();
            const int first = best;
            __syncthreads();  // everyone has read best before the next round resets it
            if (first != INT_MAX) {
                if (threadIdx.x == 0) parent[v] = indices[base + first];
                break;
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
// levels are the same whichever path expands a frontier; parents are derived from the levels.
#define PERSIST_THREADS 512  // = gpu.PERSIST_THREADS
#define PERSIST_ROUNDS 16    // rows longer than this many rounds of their lanes: a block each
#define PERSIST_HUB 65536    // = gpu.HUGE_DEGREE: a frontier with such a row goes to the host loop
// ctl (unsigned long long, zeroed by the host before every launch): per depth d % 3 a quad
// (size, arcs, hub, long rows) of the frontier of depth d, then the barrier's two words, then
// the state handed back (CTL_STATE.., gpu.CTL_STATE).
#define CTL_QUAD 4
#define CTL_BARRIER 12
#define CTL_STATE 14

// Grid-wide barrier of a persistent launch: every block must be resident at once (the host
// launches at most one block per multiprocessor). bar[0] counts arrivals, bar[1] the generation.
__device__ __forceinline__ void grid_barrier(unsigned long long* bar) {
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile unsigned long long* generation = bar + 1;
        const unsigned long long seen = *generation;
        __threadfence();
        if (atomicAdd(&bar[0], 1ull) == gridDim.x - 1) {
            atomicExch(&bar[0], 0ull);
            __threadfence();
            atomicAdd(&bar[1], 1ull);
        } else {
            while (*generation == seen) __nanosleep(32);
        }
        __threadfence();
    }
    __syncthreads();
}

// Claim w for level depth + 1 and queue it (quad `out`); a hub is flagged in out[2].
__device__ __forceinline__ void visit(const long long* __restrict__ indptr,
                                      int* __restrict__ level, int w, int depth, int* next,
                                      unsigned long long* out) {
    // Plain read first: most neighbours are already visited. A stale -1 only costs the CAS.
    if (level[w] == -1 && atomicCAS(&level[w], -1, depth + 1) == -1) {
        const long long deg = indptr[w + 1] - indptr[w];
        if (deg > PERSIST_HUB) atomicOr(&out[2], 1ull);
        append(w, deg, next, out);
    }
}

// nsources > 0: start a search (level := -1 everywhere, the sources at `depth`, the frontier in
// queue0); otherwise go on from the `size` vertices (`arcs` arcs) of depth `depth` in
// queue[parity]. Handed back in ctl[CTL_STATE..]: depth, frontier size, frontier arcs, hub flag,
// parity of the queue holding the frontier, arcs of the frontiers expanded here, vertices
// reached here, arcs of the last frontier expanded here. `rows` holds the long rows of a level.
extern "C" __global__ void __launch_bounds__(PERSIST_THREADS, 1)
bfs_persistent(const long long* __restrict__ indptr, const int* __restrict__ indices,
               int* __restrict__ level, int* queue0, int* queue1, int* rows,
               unsigned long long* ctl, const long long* __restrict__ sources, int nsources,
               int n, int depth, long long size, long long arcs, int parity, long long limit) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    unsigned long long* bar = ctl + CTL_BARRIER;
    unsigned long long hub = 0;
    if (nsources > 0) {
        for (long long v = tid; v < n; v += stride) level[v] = -1;
        grid_barrier(bar);
        unsigned long long* first = ctl + CTL_QUAD * (depth % 3);
        for (long long k = tid; k < nsources; k += stride) {
            const int s = (int)sources[k];
            const long long deg = indptr[s + 1] - indptr[s];
            level[s] = depth;
            queue0[k] = s;
            atomicAdd(&first[1], (unsigned long long)deg);
            if (deg > PERSIST_HUB) atomicOr(&first[2], 1ull);
        }
        grid_barrier(bar);
        size = nsources;
        arcs = (long long)__ldcg(&first[1]);
        hub = __ldcg(&first[2]);
        parity = 0;
    }
    long long expanded = 0, reached = 0, last = 0;
    while (size > 0 && arcs <= limit && !hub) {
        const int* frontier = parity ? queue1 : queue0;
        int* next = parity ? queue0 : queue1;
        unsigned long long* out = ctl + CTL_QUAD * ((depth + 1) % 3);
        if (tid == 0) {  // the quad after next: every block read it before the last barrier
            unsigned long long* spare = ctl + CTL_QUAD * ((depth + 2) % 3);
            spare[0] = spare[1] = spare[2] = spare[3] = 0;
        }
        // `group` lanes per row (a power of two covering the mean degree, at most a warp);
        // rows longer than PERSIST_ROUNDS rounds of them are listed and get a block each.
        int group = 1;
        while (group < 32 && group * size < arcs) group <<= 1;
        const long long long_row = (long long)group * PERSIST_ROUNDS;
        const int lane = (int)(tid & (group - 1));
        for (long long k = tid / group; k < size; k += stride / group) {
            const int u = __ldcg(&frontier[k]);
            const long long begin = indptr[u], end = indptr[u + 1];
            if (end - begin > long_row) {
                if (lane == 0) rows[atomicAdd(&out[3], 1ull)] = u;
                continue;
            }
            for (long long j = begin + lane; j < end; j += group) {
                visit(indptr, level, indices[j], depth, next, out);
            }
        }
        grid_barrier(bar);
        const long long listed = (long long)__ldcg(&out[3]);
        if (listed > 0) {  // uniform: every thread read the same count after the barrier
            for (long long k = blockIdx.x; k < listed; k += gridDim.x) {
                const int u = __ldcg(&rows[k]);
                const long long end = indptr[u + 1];
                for (long long j = indptr[u] + threadIdx.x; j < end; j += blockDim.x) {
                    visit(indptr, level, indices[j], depth, next, out);
                }
            }
            grid_barrier(bar);
        }
        expanded += arcs;
        last = arcs;
        size = (long long)__ldcg(&out[0]);
        arcs = (long long)__ldcg(&out[1]);
        hub = __ldcg(&out[2]);
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
