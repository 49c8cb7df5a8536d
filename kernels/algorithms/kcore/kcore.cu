// Parallel k-core peeling in one persistent launch (see kcore/__init__.py).
//
// A rmat22 graph has ~1000 core levels; a launch and a host read per level and per frontier
// cost more than the levels' work, so the whole peeling runs in one launch, phases separated by
// grid barriers (common/grid_sync.cuh). Per level k:
//   1. k = the smallest degree among the nodes left, which are also compacted into the other
//      `alive` list (so later levels only walk what is left: most nodes leave in the first few);
//   2. every node left of degree <= k gets core number k and joins the frontier;
//   3. rounds: a warp per frontier node decrements its neighbours' degrees; the decrement that
//      takes a neighbour from k + 1 to k (exactly one does) gives it core number k and appends it
//      to the next frontier; until a frontier is empty.
// core[v] < 0: v is still in the graph. Counters that one phase appends to are zeroed by block 0
// in an earlier phase, after their last reader has passed a barrier. Data that other blocks wrote
// is read with __ldcg (past the non-coherent L1).

#include "grid_sync.cuh"

constexpr int THREADS = 1024;  // THREADS in gpu.py
constexpr int NONE = 0x7fffffff;

extern "C" __global__ void __launch_bounds__(THREADS) kcore_peel_all(
    const long long* __restrict__ indptr, const int* __restrict__ indices, int* alive0,
    int* alive1, int* frontier0, int* frontier1, int* deg, int* core, unsigned* alive_size,
    unsigned* size, int* level_min, unsigned* bar)
{
    const long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const long long threads = (long long)gridDim.x * blockDim.x;
    const int lane = threadIdx.x & 31;
    const long long warp = tid >> 5, warps = threads >> 5;
    unsigned r = 0;  // frontier round: frontier r & 1, its size size[r % 3]
    for (unsigned level = 0;; ++level) {
        int* from = (level & 1) ? alive1 : alive0;
        int* to = (level & 1) ? alive0 : alive1;
        const unsigned left = __ldcg(&alive_size[level & 1]);
        int best = NONE;
        for (long long x = tid; x < left; x += threads) {
            const int v = __ldcg(&from[x]);
            if (__ldcg(&core[v]) >= 0) continue;
            to[atomicAdd(&alive_size[(level + 1) & 1], 1u)] = v;
            best = min(best, __ldcg(&deg[v]));
        }
        for (int offset = 16; offset > 0; offset >>= 1)
            best = min(best, __shfl_down_sync(0xffffffffu, best, offset));
        if (lane == 0 && best != NONE) atomicMin(&level_min[level & 1], best);
        if (tid == 0) level_min[(level + 1) & 1] = NONE;
        grid_sync(bar);
        const int k = __ldcg(&level_min[level & 1]);
        if (k == NONE) return;
        const unsigned kept = __ldcg(&alive_size[(level + 1) & 1]);
        int* frontier = (r & 1) ? frontier1 : frontier0;
        for (long long x = tid; x < kept; x += threads) {
            const int v = __ldcg(&to[x]);
            if (__ldcg(&deg[v]) <= k) {
                core[v] = k;
                frontier[atomicAdd(&size[r % 3], 1u)] = v;
            }
        }
        if (tid == 0) {
            alive_size[level & 1] = 0;  // read above, before the barrier
            size[(r + 1) % 3] = 0;
        }
        grid_sync(bar);
        while (true) {
            const unsigned count = __ldcg(&size[r % 3]);
            if (count == 0) break;
            const int* current = (r & 1) ? frontier1 : frontier0;
            int* next = (r & 1) ? frontier0 : frontier1;
            for (long long x = warp; x < count; x += warps) {
                const int v = __ldcg(&current[x]);
                for (long long j = indptr[v] + lane; j < indptr[v + 1]; j += 32) {
                    const int u = indices[j];
                    if (__ldcg(&core[u]) >= 0) continue;
                    if (atomicSub(&deg[u], 1) == k + 1) {
                        core[u] = k;
                        next[atomicAdd(&size[(r + 1) % 3], 1u)] = u;
                    }
                }
            }
            if (tid == 0) size[(r + 2) % 3] = 0;
            grid_sync(bar);
            ++r;
        }
    }
}
