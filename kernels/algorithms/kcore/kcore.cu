// Parallel k-core peeling in one persistent launch (see kcore/__init__.py).
//
// A rmat22 graph has ~1000 core levels; a launch and a host read per level and per frontier
// cost more than the levels' work, so the whole peeling runs in one launch, phases separated by
// grid barriers (common/grid_sync.cuh). Per level k (a lower bound of the smallest degree left,
// exact after a level without rounds):
//   1. one pass over the nodes left: degree <= k gets core number k and joins the frontier, the
//      rest is compacted into the other `alive` list (later levels walk only what is left: most
//      nodes leave in the first few) and gives the next level's bound, the smallest degree seen;
//   2. rounds: the frontier's nodes decrement their neighbours' degrees (a warp per node, or a
//      block per node when the frontier is short: its nodes are then the hubs of the last
//      levels); the decrement that takes a neighbour from k + 1 to k (exactly one does) gives it
//      core number k and appends it to the next frontier, any other lowers the next bound; until
//      a frontier is empty.
// So a level costs one barrier plus one per non-empty round (it was three: the smallest degree
// had a pass and a barrier of its own). Counters are used in turn (three of each), so the one a
// phase appends to was zeroed by block 0 in an earlier phase, after its last reader had passed a
// barrier. core[v] < 0: v is still in the graph. Data that other blocks wrote is read with
// __ldcg (past the non-coherent L1).

#include "grid_sync.cuh"

constexpr int THREADS = 1024;  // THREADS in gpu.py
constexpr int NONE = 0x7fffffff;
constexpr int WARP = 32;

// The warp's smallest `best` into *bound (all lanes call it).
__device__ __forceinline__ void lower_bound(int best, int* bound) {
    for (int offset = WARP / 2; offset > 0; offset >>= 1)
        best = min(best, __shfl_down_sync(0xffffffffu, best, offset));
    if ((threadIdx.x & (WARP - 1)) == 0 && best != NONE) atomicMin(bound, best);
}

extern "C" __global__ void __launch_bounds__(THREADS) kcore_peel_all(
    const long long* __restrict__ indptr, const int* __restrict__ indices, int* alive0,
    int* alive1, int* frontier0, int* frontier1, int* deg, int* core, unsigned* alive_size,
    unsigned* size, int* level_min, unsigned* bar)
{
    const long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const long long threads = (long long)gridDim.x * blockDim.x;
    const int lane = threadIdx.x & (WARP - 1);
    const long long warp = tid / WARP, warps = threads / WARP;
    unsigned r = 0;  // frontier round: frontier r & 1, its size size[r % 3]
    for (unsigned level = 0;; ++level) {
        const int* from = (level & 1) ? alive1 : alive0;
        int* to = (level & 1) ? alive0 : alive1;
        const int k = __ldcg(&level_min[level % 3]);
        int* next_bound = &level_min[(level + 1) % 3];
        unsigned* kept_size = &alive_size[(level + 1) % 3];
        const unsigned left = __ldcg(&alive_size[level % 3]);
        int* frontier = (r & 1) ? frontier1 : frontier0;
        int best = NONE;
        for (long long x = tid; x < left; x += threads) {
            const int v = __ldcg(&from[x]);
            if (__ldcg(&core[v]) >= 0) continue;
            const int d = __ldcg(&deg[v]);
            if (d <= k) {
                core[v] = k;
                frontier[atomicAdd(&size[r % 3], 1u)] = v;
            } else {
                to[atomicAdd(kept_size, 1u)] = v;
                best = min(best, d);
            }
        }
        lower_bound(best, next_bound);
        if (tid == 0) {  // the level before last read these before its first barrier
            level_min[(level + 2) % 3] = NONE;
            alive_size[(level + 2) % 3] = 0;
            size[(r + 1) % 3] = 0;
        }
        grid_sync(bar);
        if (__ldcg(&size[r % 3]) == 0 && __ldcg(kept_size) == 0) return;
        while (true) {
            const unsigned count = __ldcg(&size[r % 3]);
            if (count == 0) break;
            const int* current = (r & 1) ? frontier1 : frontier0;
            int* next = (r & 1) ? frontier0 : frontier1;
            // A block per node when the frontier is short, a warp per node otherwise.
            const bool by_block = count <= 4u * gridDim.x;
            const long long first = by_block ? blockIdx.x : warp;
            const long long stride = by_block ? gridDim.x : warps;
            const int width = by_block ? blockDim.x : WARP;
            const int offset = by_block ? threadIdx.x : lane;
            for (long long x = first; x < count; x += stride) {
                const int v = __ldcg(&current[x]);
                for (long long j = indptr[v] + offset; j < indptr[v + 1]; j += width) {
                    const int u = indices[j];
                    if (__ldcg(&core[u]) >= 0) continue;
                    const int old = atomicSub(&deg[u], 1);
                    if (old == k + 1) {
                        core[u] = k;
                        next[atomicAdd(&size[(r + 1) % 3], 1u)] = u;
                    } else if (old > k + 1) {
                        best = min(best, old - 1);
                    }
                }
            }
            lower_bound(best, next_bound);
            if (tid == 0) size[(r + 2) % 3] = 0;
            grid_sync(bar);
            ++r;
        }
    }
}
