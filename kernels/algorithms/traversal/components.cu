// GPU kernels of the connected components, ECL-CC (compiled by
// kernels/algorithms/traversal/gpu.py through CuPy's NVRTC, once per process and device; BFS is
// traversal.cu). Graph: CSR with long long offsets and int neighbours, each row sorted ascending;
// vertex ids fit in int (the service caps n far below 2^31).

#ifndef INT_MAX  // NVRTC has no <climits>; nvcc (a compile check) does
#define INT_MAX 2147483647
#endif
#define FULL_MASK 0xffffffffu

// ---------------------------------------------------------------------------------------------
// Connected components: ECL-CC (Jaiganesh & Burtscher, HPDC 2018)
// ---------------------------------------------------------------------------------------------
// parent pointers only ever point to smaller ids, so each tree's root is the smallest vertex of
// its component: the deterministic numbering then needs no extra min-reduction.

// Degree tiers of the hooking: a thread per vertex up to THREAD_DEGREE neighbours, a warp up to
// WARP_DEGREE, a block beyond (ECL-CC's thresholds).
#define THREAD_DEGREE 16
#define WARP_DEGREE 352

// Root of idx's tree, with intermediate pointer jumping (each visited node skips one level). The
// races with other threads are benign: every value written is an ancestor of the node written.
__device__ __forceinline__ int representative(int idx, volatile int* nstat) {
    int curr = nstat[idx];
    if (curr != idx) {
        int next;
        int prev = idx;
        while (curr > (next = nstat[curr])) {
            nstat[prev] = next;
            prev = curr;
            curr = next;
        }
    }
    return curr;
}

// Link the trees of v and its neighbour u: hook the larger root under the smaller with a CAS,
// retrying from the root that won if another thread moved it first. vstat (v's representative)
// is carried from one neighbour to the next, as in ECL-CC, and moves to ostat once v's root is
// hooked under it: a stale vstat would cost the next neighbour a failed CAS.
__device__ __forceinline__ void hook(int& vstat, int u, int* nstat) {
    int ostat = representative(u, nstat);
    bool repeat;
    do {
        repeat = false;
        if (vstat != ostat) {
            int ret;
            if (vstat < ostat) {
                if ((ret = atomicCAS(&nstat[ostat], ostat, vstat)) != ostat) {
                    ostat = ret;
                    repeat = true;
                }
            } else {
                if ((ret = atomicCAS(&nstat[vstat], vstat, ostat)) != vstat) {
                    vstat = ret;
                    repeat = true;
                } else {
                    vstat = ostat;
                }
            }
        }
    } while (repeat);
}

// Each vertex starts at its first smaller neighbour (rows are sorted: the first entry), or itself.
extern "C" __global__ void cc_init(const long long* __restrict__ indptr,
                                   const int* __restrict__ indices, int n,
                                   int* __restrict__ nstat, int* counts) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v == 0) {
        counts[0] = 0;  // medium-degree worklist length (front of wl)
        counts[1] = n;  // high-degree worklist start (back of wl)
    }
    if (v >= n) return;
    const long long begin = indptr[v];
    int first = v;
    if (begin < indptr[v + 1]) {
        const int u = indices[begin];
        if (u < v) first = u;
    }
    nstat[v] = first;
}

// Claims one worklist slot for each lane with `take` set, with one atomic per warp (`add`: +1
// grows the front, -1 shrinks the back's start). A per-vertex atomic on the shared counter
// serialised ~10^5 vertices of a skewed graph. Every lane of the warp must call it.
__device__ __forceinline__ void push_tier(bool take, int v, int* counter, int add,
                                          int* __restrict__ wl) {
    const unsigned mask = __ballot_sync(FULL_MASK, take);
    if (!mask) return;
    const int lane = threadIdx.x & 31;
    const int total = __popc(mask);
    int base = 0;
    if (lane == 0) base = atomicAdd(counter, add * total);
    base = __shfl_sync(FULL_MASK, base, 0);
    if (add < 0) base -= total;  // the back's new start: slots [old - total, old)
    if (take) wl[base + __popc(mask & ((1u << lane) - 1))] = v;
}

// Low-degree vertices, one thread each; medium and high degrees go to the worklist's front and
// back for the warp and block kernels. Every edge is processed once, from its larger endpoint; a
// vertex with no smaller neighbour (nstat[v] == v at init) has nothing to do. All three tiers
// skip the row's first entry: init made it v's parent, so it is in v's tree already.
extern "C" __global__ void cc_compute_thread(const long long* __restrict__ indptr,
                                             const int* __restrict__ indices, int n,
                                             int* nstat, int* __restrict__ wl, int* counts) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    const bool active = v < n && nstat[v] != v;
    long long begin = 0, end = 0;
    if (active) {
        begin = indptr[v];
        end = indptr[v + 1];
    }
    const long long deg = end - begin;
    // No early return above: the whole warp takes part in the worklist pushes.
    push_tier(active && deg > THREAD_DEGREE && deg <= WARP_DEGREE, v, &counts[0], 1, wl);
    push_tier(active && deg > WARP_DEGREE, v, &counts[1], -1, wl);
    if (!active || deg > THREAD_DEGREE) return;
    // Many vertices have no smaller neighbour beyond the first: no walk to the root for them.
    if (deg < 2 || indices[begin + 1] > v) return;
    int vstat = representative(v, nstat);
    for (long long j = begin + 1; j < end; ++j) {
        const int u = indices[j];
        if (u < v) hook(vstat, u, nstat);
        else break;  // sorted row: no smaller neighbours after this
    }
}

// Medium-degree vertices: one warp each, grid-striding over the worklist front. Rows are sorted,
// so the warp stops after the first round that reaches a larger neighbour: the edges to larger
// ids are hooked from the other end (ECL-CC reads the whole row).
extern "C" __global__ void cc_compute_warp(const long long* __restrict__ indptr,
                                           const int* __restrict__ indices,
                                           int* nstat, const int* __restrict__ wl,
                                           const int* counts) {
    const int lane = threadIdx.x & 31;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    const int count = counts[0];
    for (long long k = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; k < count;
         k += warps) {
        const int v = wl[k];
        int vstat = representative(v, nstat);
        const long long end = indptr[v + 1];
        for (long long base = indptr[v] + 1; base < end; base += 32) {
            const long long j = base + lane;
            const int u = j < end ? indices[j] : INT_MAX;
            if (u < v) hook(vstat, u, nstat);
            if (__any_sync(FULL_MASK, u > v)) break;
        }
    }
}

// High-degree vertices: one block each, from the worklist back; stops like the warp kernel.
extern "C" __global__ void cc_compute_block(const long long* __restrict__ indptr,
                                            const int* __restrict__ indices, int n,
                                            int* nstat, const int* __restrict__ wl,
                                            const int* counts) {
    const int start = counts[1];
    for (long long k = start + blockIdx.x; k < n; k += gridDim.x) {
        const int v = wl[k];
        int vstat = representative(v, nstat);
        const long long end = indptr[v + 1];
        for (long long base = indptr[v] + 1; base < end; base += blockDim.x) {
            const long long j = base + threadIdx.x;
            const int u = j < end ? indices[j] : INT_MAX;
            if (u < v) hook(vstat, u, nstat);
            if (__syncthreads_or(u > v)) break;
        }
    }
}

// Point every vertex straight at its root, the smallest vertex of its component (ECL-CC's flatten).
extern "C" __global__ void cc_flatten(int n, int* nstat) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    int next;
    int vstat = nstat[v];
    const int old = vstat;
    while (vstat > (next = nstat[vstat])) vstat = next;
    if (old != vstat) nstat[v] = vstat;
}

// Numbering, step 1: each block is one tile of blockDim.x vertices; a root's rank among the roots
// of its tile goes to rank[root], the tile's root count to tile_count[tile].
extern "C" __global__ void cc_root_ranks(int n, const int* __restrict__ nstat,
                                         int* __restrict__ rank, int* __restrict__ tile_count) {
    __shared__ int warp_roots[32];
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const bool root = v < n && nstat[v] == v;
    const unsigned roots = __ballot_sync(FULL_MASK, root);
    if (lane == 0) warp_roots[warp] = __popc(roots);
    __syncthreads();
    if (root) {
        int before = __popc(roots & ((1u << lane) - 1));
        for (int w = 0; w < warp; ++w) before += warp_roots[w];
        rank[v] = before;
    }
    if (threadIdx.x == 0) {
        int total = 0;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) total += warp_roots[w];
        tile_count[blockIdx.x] = total;
    }
}

// Inclusive scan of one value per lane across the warp.
__device__ __forceinline__ int warp_inclusive_scan(int value) {
    const int lane = threadIdx.x & 31;
    for (int d = 1; d < 32; d <<= 1) {
        const int other = __shfl_up_sync(FULL_MASK, value, d);
        if (lane >= d) value += other;
    }
    return value;
}

// Numbering, step 2: the one scan. A single block (32 full warps) turns the tile counts into
// exclusive offsets in place and writes the component count to counts[2]: each thread sums a
// contiguous chunk of tiles, the block scans the chunk sums, each thread writes its chunk's offsets.
extern "C" __global__ void cc_scan_tiles(int tiles, int* tile_count, int* counts) {
    __shared__ int warp_offset[32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int per = (tiles + blockDim.x - 1) / blockDim.x;
    const int first = threadIdx.x * per;
    const int last = min(first + per, tiles);
    int sum = 0;
    for (int t = first; t < last; ++t) sum += tile_count[t];
    const int inclusive = warp_inclusive_scan(sum);
    if (lane == 31) warp_offset[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        const int total = warp_offset[lane];
        warp_offset[lane] = warp_inclusive_scan(total) - total;
    }
    __syncthreads();
    int running = warp_offset[warp] + inclusive - sum;
    for (int t = first; t < last; ++t) {
        const int c = tile_count[t];
        tile_count[t] = running;
        running += c;
    }
    if (threadIdx.x == blockDim.x - 1) counts[2] = running;
}

// Numbering, step 3: label[v] = global rank of v's root (tile offset + rank in the tile). Also
// zeroes the first `count` entries of sizes for cc_sizes (a memset of all n would cost more).
extern "C" __global__ void cc_label(int n, int tile, const int* __restrict__ nstat,
                                    const int* __restrict__ rank,
                                    const int* __restrict__ tile_offset, const int* counts,
                                    int* __restrict__ label,
                                    unsigned long long* __restrict__ sizes) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    const int root = nstat[v];
    label[v] = tile_offset[root / tile] + rank[root];
    if (v < counts[2]) sizes[v] = 0;
}

// Component sizes: one atomic per distinct label in a warp (__match_any_sync): most warps of a
// giant component lie wholly in it, and atomics on one address serialise.
extern "C" __global__ void cc_sizes(int n, const int* __restrict__ label,
                                    unsigned long long* sizes) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    const int mine = v < n ? label[v] : -1;
    const unsigned peers = __match_any_sync(FULL_MASK, mine);
    if (mine >= 0 && (threadIdx.x & 31) == __ffs(peers) - 1) {
        atomicAdd(&sizes[mine], (unsigned long long)__popc(peers));
    }
}
