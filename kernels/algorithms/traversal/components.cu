// GPU connected components, labels and sizes included, in one persistent launch (compiled by
// kernels/algorithms/traversal/gpu_components.py through CuPy's NVRTC, once per process and
// device; BFS is traversal.cu). Graph: CSR with long long offsets and int neighbours, each row
// sorted ascending; vertex ids fit in int (the service caps n far below 2^31).
//
// Union-find as in ECL-CC (Jaiganesh & Burtscher, HPDC 2018): every vertex starts at its first
// smaller neighbour, trees are hooked larger root under smaller with atomicCAS and walked with
// intermediate pointer jumping, rows are processed by a thread, a warp or a block by length.
// Parent pointers only ever point to smaller ids, so each root is the smallest vertex of its
// tree: the CPU's numbering (by smallest member) needs no extra reduction. On top of that, the
// neighbour sampling of Afforest (Sutton, Ben-Nun & Barak, IPDPS 2018): after a second link per
// vertex a sample finds the tree that holds most arcs (the giant component, on most graphs), and
// from then on a vertex stops hooking its row as soon as it is seen in that tree, so the giant's
// own edges are mostly never read. Small graphs are launch bound: the whole run (ECL-CC's five
// kernels, the numbering and the sizes) is one launch, its phases separated by grid barriers.

#ifndef INT_MAX  // NVRTC has no <climits>; nvcc (a compile check) does
#define INT_MAX 2147483647
#endif
#define FULL_MASK 0xffffffffu

#ifndef CC_THREADS  // -D overrides: bench/cc_variants.py compares settings
#define CC_THREADS 512     // = gpu_components.CC_THREADS
#endif
#ifndef CC_MIN_BLOCKS
#define CC_MIN_BLOCKS 3    // = gpu_components.CC_BLOCKS_PER_SM: resident blocks per multiprocessor
#endif
// 1: Afforest's second link and giant-tree sample (below); 0: ECL-CC's order alone (init, then
// every smaller neighbour hooked), one grid barrier and the serial sample fewer.
#ifndef CC_AFFOREST
#define CC_AFFOREST 1
#endif
// 1: hook's short rows (a thread each) before the worklists of long rows. Timed with link's
// dedup (H100, 2026-11-27, bench/cc_variants.py, medians of 30, 1 vs 0): dblp-2010 0.127 vs
// 0.143 ms in one call and 0.123 vs 0.124 in another, ca-CondMat 0.063 vs 0.053, ca-GrQc 0.030
// vs 0.031, rmat20 0.570 vs 0.576, rmat22 1.594 vs 1.625: no consistent gain, so off.
#ifndef CC_SMALL_FIRST
#define CC_SMALL_FIRST 0
#endif
// 1: link's lanes of a warp that would join the same two roots leave it to one of them. After
// init up to 372 of dblp-2010's link edges meet one root, and neighbouring vertices (a warp's)
// often share both roots: their CASes queued on one word. Link 65 -> 55 us there (H100).
#ifndef CC_LINK_DEDUP
#define CC_LINK_DEDUP 1
#endif
// Row positions left to hook after the first links: a thread per vertex up to THREAD_DEGREE, a
// warp up to WARP_DEGREE, a block beyond (ECL-CC's thresholds).
#ifndef THREAD_DEGREE
#define THREAD_DEGREE 16
#endif
#ifndef WARP_DEGREE
#define WARP_DEGREE 352
#endif
// Arcs sampled to find the giant tree, and the share of them (1 / GIANT_SHARE) it must hold for
// the giant rule to pay: otherwise every vertex hooks its smaller neighbours, as in ECL-CC.
#define SAMPLES 256
#ifndef GIANT_SHARE
#define GIANT_SHARE 3
#endif

// Phases, in order (= gpu_components.DeviceComponents.PHASES); a launch runs first..last.
#define PHASE_INIT 0     // parent := first smaller neighbour; tier worklists; second link noted
#define PHASE_LINK 1     // the second link of every vertex
#define PHASE_HOOK 2     // (sample the giant tree first) the rest of the rows, by tier
#define PHASE_FLATTEN 3  // parent := root; roots ranked within tiles; component sizes counted
#define PHASE_LABEL 4    // (scan the tile counts first) label := rank of the root; sizes out

// Control words (= gpu_components.CTL_*; zeroed by the host before a run's first phase, and left
// so by a run that reaches the label phase: it zeroes what hook and flatten used, and the
// barrier leaves CTL_ARRIVED at zero, so the next run on the same buffers needs no memset).
#define CTL_ARRIVED 0       // grid barrier: blocks arrived
#define CTL_GENERATION 1    // grid barrier: barriers passed
#define CTL_MEDIUM 2        // worklist front: vertices for a warp
#define CTL_HEAVY 3         // worklist back: vertices for a block
#define CTL_MEDIUM_TAKEN 4
#define CTL_HEAVY_TAKEN 5
#define CTL_GIANT 6         // root of the sampled giant tree (-1: no arcs)
#define CTL_GIANT_RULE 7    // 1: the giant rule, 0: smaller neighbours only
#define CTL_COUNT 8         // components
#define CTL_WORDS 9

#include "components.cuh"  // union-find and block/grid cooperation (uses the macros above)

// ---------------------------------------------------------------------------------------------
// Phases
// ---------------------------------------------------------------------------------------------

// Where the rest of v's row starts: its smallest neighbour is linked in init and its second in
// link, each only when smaller than v (as ECL-CC hooks only smaller neighbours: a walk to the
// root per vertex and link, not two). 0 for a vertex smaller than all its neighbours; 2 when
// both are smaller; else 1.
__device__ __forceinline__ int row_start(int v, const int* __restrict__ indices, long long begin,
                                         long long deg) {
    if (deg == 0 || indices[begin] > v) return 0;
    return CC_AFFOREST && deg > 1 && indices[begin + 1] < v ? 2 : 1;
}

// Init: parent := the first (smallest) neighbour when smaller; the second, when smaller too, is
// noted in note[v] for link; vertices with long rows go to the worklists of the warp and block
// tiers.
__device__ void init_phase(const long long* __restrict__ indptr,
                           const int* __restrict__ indices, int n, int* nstat, int* wl,
                           int* note, unsigned* ctl) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    // Block-uniform loop bound: the whole warp takes part in the worklist pushes.
    for (long long base = (long long)blockIdx.x * blockDim.x; base < n; base += stride) {
        const int v = (int)(base + threadIdx.x);
        long long rest = 0;
        if (v < n) {
            const long long begin = indptr[v];
            const long long deg = indptr[v + 1] - begin;
            const int start = row_start(v, indices, begin, deg);
            const int parent = start > 0 ? indices[begin] : v;
            const int second = start == 2 ? indices[begin + 1] : -1;
            rest = deg - start;
            nstat[v] = parent;
            note[v] = CC_AFFOREST ? second : 0;  // 0: what link leaves for the size counts
        }
        push_tier(rest > THREAD_DEGREE && rest <= WARP_DEGREE, v, &ctl[CTL_MEDIUM], false, n, wl);
        push_tier(rest > WARP_DEGREE, v, &ctl[CTL_HEAVY], true, n, wl);
    }
}

// Link: every vertex hooks the smaller neighbour noted in init. note[] is zeroed for the size
// counts. With CC_LINK_DEDUP, lanes of a warp whose two roots are the same pair leave the hook to
// the lowest of them: its hook joins those two trees, which hold the others' vertices too.
__device__ void link_phase(int n, int* nstat, int* note) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    // Block-uniform loop bound: the whole warp takes part in the match.
    for (long long base = (long long)blockIdx.x * blockDim.x; base < n; base += stride) {
        const int v = (int)(base + threadIdx.x);
        int u = -1;
        if (v < n) {
            u = note[v];
            note[v] = 0;
        }
        int vstat = 0, ostat = 0;
        if (u >= 0) {
            vstat = representative(v, nstat);
            ostat = representative(u, nstat);
        }
        bool mine = u >= 0 && vstat != ostat;
        if (CC_LINK_DEDUP) {
            const unsigned long long key =
                mine ? ((unsigned long long)min(vstat, ostat) << 32) | (unsigned)max(vstat, ostat)
                     : ~0ull;
            const unsigned peers = __match_any_sync(FULL_MASK, key);
            mine = mine && (threadIdx.x & 31) == __ffs(peers) - 1;
        }
        if (mine) hook_roots(vstat, ostat, nstat);
    }
}

// Serial step before hook (the last block to arrive): the root of SAMPLES arcs' targets, evenly
// spaced over the arcs (so a tree is hit in proportion to its arcs); the most frequent root is
// the giant tree, and the giant rule is used when it holds more than 1 / GIANT_SHARE of them.
__device__ void sample_giant(const int* __restrict__ indices, long long arcs, int* nstat,
                             unsigned* ctl) {
    __shared__ int root[SAMPLES];
    __shared__ unsigned long long best;  // (hits << 32) | (INT_MAX - root): most hits, then smallest
    if (threadIdx.x == 0) best = 0;
    if (threadIdx.x < SAMPLES && arcs > 0) {
        const long long j = (2 * (long long)threadIdx.x + 1) * arcs / (2 * SAMPLES);
        root[threadIdx.x] = representative(indices[j], nstat);
    }
    __syncthreads();
    if (threadIdx.x < SAMPLES && arcs > 0) {
        const int mine = root[threadIdx.x];
        unsigned hits = 0;
        for (int k = 0; k < SAMPLES; ++k) hits += root[k] == mine;
        atomicMax(&best, ((unsigned long long)hits << 32) | (unsigned)(INT_MAX - mine));
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned hits = (unsigned)(best >> 32);
        ctl[CTL_GIANT] = hits ? (unsigned)(INT_MAX - (int)(best & 0xffffffffu)) : ~0u;
        ctl[CTL_GIANT_RULE] = hits * GIANT_SHARE > SAMPLES;
    }
}

// Hook v's row from row position `from` (absolute) to `end`, `width` lanes of a warp (BLOCK
// false) or of the block side by side, this one at `lane`. Giant rule: every neighbour, until
// any lane sees v in the giant tree. Otherwise the smaller neighbours only (a prefix: rows are
// sorted), the larger ones being hooked from their end.
//
// Why the giant rule is complete: an edge (v, u) is linked in init or link, or hooked from v
// unless v was seen in the giant tree first, and from u likewise; if neither hooked it, both are
// in the giant tree. Without the giant rule, every edge is hooked from its larger end (a vertex
// smaller than all its neighbours, from = 0, has nothing to do).
template <bool BLOCK>
__device__ __forceinline__ void hook_row(int v, long long from, long long end, int lane,
                                         int width, const int* __restrict__ indices, int* nstat,
                                         bool giant_rule, int giant) {
    int vstat = representative(v, nstat);
    if (giant_rule) {
        if (group_any<BLOCK>(vstat == giant)) return;
        for (long long base = from; base < end; base += width) {
            const long long j = base + lane;
            if (j < end) hook(vstat, indices[j], nstat);
            if (group_any<BLOCK>(vstat == giant)) return;
        }
    } else {
        for (long long base = from; base < end; base += width) {
            const long long j = base + lane;
            const int u = j < end ? indices[j] : INT_MAX;
            if (u < v) hook(vstat, u, nstat);
            if (group_any<BLOCK>(u > v)) return;
        }
    }
}

// Hook's short rows (at most THREAD_DEGREE positions left), a thread each.
__device__ __forceinline__ void hook_short_rows(const long long* __restrict__ indptr,
                                                const int* __restrict__ indices, int n,
                                                int* nstat, bool giant_rule, int giant) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += stride) {
        const int v = (int)t;
        const long long begin = indptr[v], end = indptr[v + 1];
        const long long from = begin + row_start(v, indices, begin, end - begin);
        if (from >= end || end - from > THREAD_DEGREE) continue;
        if (giant_rule) {
            int vstat = representative(v, nstat);
            for (long long j = from; j < end && vstat != giant; ++j) hook(vstat, indices[j], nstat);
        } else if (indices[from] < v) {  // else no smaller neighbour is left (sorted row)
            int vstat = representative(v, nstat);
            for (long long j = from; j < end; ++j) {
                const int u = indices[j];
                if (u > v) break;  // sorted row: no smaller neighbours after this
                hook(vstat, u, nstat);
            }
        }
    }
}

// Hook: the rest of every row, longest rows first (a block each, then a warp each, both taking
// vertices as they free up), then the short rows, a thread each (CC_SMALL_FIRST: those first).
__device__ void hook_phase(const long long* __restrict__ indptr, const int* __restrict__ indices,
                           int n, int* nstat, const int* wl, unsigned* ctl) {
    __shared__ int block_vertex;
    const int giant = (int)__ldcg(&ctl[CTL_GIANT]);
    const bool giant_rule = __ldcg(&ctl[CTL_GIANT_RULE]) != 0;
    const unsigned heavy = __ldcg(&ctl[CTL_HEAVY]);
    const unsigned medium = __ldcg(&ctl[CTL_MEDIUM]);
    if (CC_SMALL_FIRST) hook_short_rows(indptr, indices, n, nstat, giant_rule, giant);
    while (true) {
        if (threadIdx.x == 0) {
            const unsigned k = atomicAdd(&ctl[CTL_HEAVY_TAKEN], 1u);
            block_vertex = k < heavy ? __ldcg(&wl[n - 1 - (int)k]) : -1;
        }
        __syncthreads();
        const int v = block_vertex;
        __syncthreads();  // block_vertex is rewritten next round
        if (v < 0) break;
        const long long begin = indptr[v];
        const long long end = indptr[v + 1];
        hook_row<true>(v, begin + row_start(v, indices, begin, end - begin), end, threadIdx.x,
                       blockDim.x, indices, nstat, giant_rule, giant);
    }
    const int lane = threadIdx.x & 31;
    while (true) {
        unsigned k = 0;
        if (lane == 0) k = atomicAdd(&ctl[CTL_MEDIUM_TAKEN], 1u);
        k = __shfl_sync(FULL_MASK, k, 0);
        if (k >= medium) break;
        const int v = __ldcg(&wl[k]);
        const long long begin = indptr[v];
        const long long end = indptr[v + 1];
        hook_row<false>(v, begin + row_start(v, indices, begin, end - begin), end, lane, 32,
                        indices, nstat, giant_rule, giant);
    }
    if (!CC_SMALL_FIRST) hook_short_rows(indptr, indices, n, nstat, giant_rule, giant);
}

// Flatten: every vertex points at its root (no hooks are left, so the walks end at roots); the
// roots of each tile of `tile` vertices are ranked (rank[root], tile_count[tile]); component
// sizes are counted at their roots (count[]): the giant tree's members per block with one atomic
// at the end (one address taken by every warp would serialise), the others per warp.
__device__ void flatten_phase(int n, int tile, int tiles, int* nstat, int* rank,
                              int* tile_count, int* count, const unsigned* ctl) {
    __shared__ int giant_root;
    volatile int* vstat = nstat;
    if (threadIdx.x == 0) {
        const int giant = (int)__ldcg(&ctl[CTL_GIANT]);
        int root = giant;
        if (giant >= 0) {
            while (root != vstat[root]) root = vstat[root];
        }
        giant_root = root;
    }
    __syncthreads();
    const int lane = threadIdx.x & 31;
    int giant_members = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        int running = 0;  // roots ranked so far in this tile
        const long long tile_end = min((long long)(t + 1) * tile, (long long)n);
        // Block-uniform bounds: every thread takes part in the scans and warp votes.
        for (long long base = (long long)t * tile; base < tile_end; base += blockDim.x) {
            const long long v = base + threadIdx.x;
            int root = -1;
            if (v < tile_end) {
                const int old = vstat[v];
                root = old;
                int next;
                while (root > (next = vstat[root])) root = next;
                if (root != old) vstat[v] = root;
            }
            int roots;
            const bool is_root = root == v;
            const int before = block_exclusive_sum(is_root, roots);
            if (is_root) rank[v] = running + before;
            running += roots;
            if (root >= 0 && root == giant_root) ++giant_members;
            const int key = root >= 0 && root != giant_root ? root : -1;
            const unsigned peers = __match_any_sync(FULL_MASK, key);
            if (key >= 0 && lane == __ffs(peers) - 1) atomicAdd(&count[key], __popc(peers));
        }
        if (threadIdx.x == 0) tile_count[t] = running;
    }
    int members;
    block_exclusive_sum(giant_members, members);
    if (threadIdx.x == 0 && members > 0) atomicAdd(&count[giant_root], members);
}

// Serial step before label (the last block to arrive): tile counts -> exclusive offsets, in
// place (each thread a contiguous run of tiles, one block scan of the run totals); the total is
// the number of components, also written to host_count (pinned host memory) unless null. The
// words of init, hook and flatten are zeroed for the next run (nothing reads them after this).
__device__ void scan_tiles(int tiles, int* tile_count, unsigned* ctl, unsigned* host_count) {
    const int per = (tiles + blockDim.x - 1) / blockDim.x;
    const int first = min((int)threadIdx.x * per, tiles);
    const int last = min(first + per, tiles);
    int sum = 0;
    for (int t = first; t < last; ++t) sum += __ldcg(&tile_count[t]);
    int total;
    int running = block_exclusive_sum(sum, total);
    for (int t = first; t < last; ++t) {
        const int c = __ldcg(&tile_count[t]);
        tile_count[t] = running;
        running += c;
    }
    if (threadIdx.x == 0) {
        ctl[CTL_COUNT] = (unsigned)total;
        if (host_count != nullptr) *host_count = (unsigned)total;
    }
    if (threadIdx.x >= CTL_MEDIUM && threadIdx.x <= CTL_GIANT_RULE) ctl[threadIdx.x] = 0;
}

// Label: label[v] := rank of v's root among all roots (tile offset + rank in the tile); each
// root writes its component's size. count[] and label[] share memory: a thread reads only its
// own vertex's count, before writing its label.
__device__ void label_phase(int n, int tile, const int* nstat, const int* rank,
                            const int* tile_offset, int* label, long long* sizes) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
        const int root = __ldcg(&nstat[v]);
        const int mine = __ldcg(&tile_offset[root / tile]) + __ldcg(&rank[root]);
        if (root == v) sizes[mine] = __ldcg(&label[v]);
        label[v] = mine;
    }
}

#ifdef CC_STAMPS
// Profiling only (bench/cc_variants.py): per phase, %globaltimer (ns) when block 0 starts it and
// when the last block ends it; the host zeroes them before a run.
extern "C" {
__device__ unsigned long long cc_stamps[16];
}
__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ void stamp_start(int phase) {
    if (blockIdx.x == 0 && threadIdx.x == 0) cc_stamps[2 * phase] = global_ns();
}
__device__ __forceinline__ void stamp_end(int phase) {
    __syncthreads();
    if (threadIdx.x == 0) atomicMax(&cc_stamps[2 * phase + 1], global_ns());
}
#else
__device__ __forceinline__ void stamp_start(int) {}
__device__ __forceinline__ void stamp_end(int) {}
#endif

// The run, phases first..last (PHASE_*). scratch: nstat[n] | worklist, then root ranks [n] |
// second links, then size counts, then labels [n] | tile counts, then offsets [tiles] | ctl.
// host_count: see scan_tiles. A launch must not exceed CC_MIN_BLOCKS blocks per multiprocessor
// (grid barriers).
extern "C" __global__ void __launch_bounds__(CC_THREADS, CC_MIN_BLOCKS)
cc_run(const long long* __restrict__ indptr, const int* __restrict__ indices, int n,
       long long arcs, int tile, int tiles, int* scratch, long long* sizes, int first, int last,
       unsigned* host_count) {
    int* nstat = scratch;
    int* wl = scratch + n;
    int* label = scratch + 2 * (long long)n;
    int* tile_count = scratch + 3 * (long long)n;
    unsigned* ctl = (unsigned*)(tile_count + tiles);
    unsigned seen = 0;
    for (int phase = first; phase <= last; ++phase) {
        if (!CC_AFFOREST && phase == PHASE_LINK) continue;  // init left note[] zeroed
        const bool serial = phase == PHASE_LABEL || (CC_AFFOREST && phase == PHASE_HOOK);
        if (serial) {
            const bool last_block = grid_arrive(ctl, seen);
            if (last_block) {
                if (phase == PHASE_HOOK) sample_giant(indices, arcs, nstat, ctl);
                else scan_tiles(tiles, tile_count, ctl, host_count);
            }
            grid_leave(ctl, last_block, seen);
        } else if (phase > first) {
            grid_sync_cc(ctl, seen);
        }
        stamp_start(phase);
        switch (phase) {
            case PHASE_INIT: init_phase(indptr, indices, n, nstat, wl, label, ctl); break;
            case PHASE_LINK: link_phase(n, nstat, label); break;
            case PHASE_HOOK: hook_phase(indptr, indices, n, nstat, wl, ctl); break;
            case PHASE_FLATTEN:
                flatten_phase(n, tile, tiles, nstat, wl, tile_count, label, ctl);
                break;
            default: label_phase(n, tile, nstat, wl, tile_count, label, sizes); break;
        }
        stamp_end(phase);
    }
}
