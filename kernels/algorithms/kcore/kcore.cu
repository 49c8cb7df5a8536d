// Parallel k-core peeling (see kcore/__init__.py).
//
// The level k lives on the device (kcore_min_degree writes it), so a level costs the host one
// read per frontier and none for finding k.
// core[v] < 0: v is still in the graph. deg[v]: v's neighbours still in the graph (or not yet
// subtracted). A level k peels every node of degree <= k: kcore_scan starts the level's
// frontier, kcore_peel removes a frontier and collects the next one: the thread whose
// decrement takes a neighbour from k + 1 to k (exactly one does) appends it.

extern "C" __global__ void kcore_scan(int n, const int* __restrict__ level,
                                      const int* __restrict__ deg, int* core,
                                      int* frontier, unsigned int* size)
{
    const int k = *level;
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n;
         v += (long long)gridDim.x * blockDim.x) {
        if (core[v] < 0 && deg[v] <= k) {
            core[v] = k;
            frontier[atomicAdd(size, 1u)] = (int)v;
        }
    }
}

extern "C" __global__ void kcore_peel(
    const long long* __restrict__ indptr, const int* __restrict__ indices,
    const int* __restrict__ frontier, unsigned int count, const int* __restrict__ level,
    int* deg, int* core, int* next, unsigned int* next_size)
{
    const int k = *level;
    // A warp per frontier node, its lanes over the neighbours.
    const int lane = threadIdx.x % 32;
    const long long warps = (long long)gridDim.x * (blockDim.x / 32);
    for (long long i = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32; i < count;
         i += warps) {
        const int v = frontier[i];
        for (long long j = indptr[v] + lane; j < indptr[v + 1]; j += 32) {
            const int u = indices[j];
            if (core[u] >= 0) continue;
            if (atomicSub(&deg[u], 1) == k + 1) {
                core[u] = k;
                next[atomicAdd(next_size, 1u)] = u;
            }
        }
    }
}

extern "C" __global__ void kcore_min_degree(int n, const int* __restrict__ deg,
                                            const int* __restrict__ core, int* out)
{
    int best = 0x7fffffff;
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n;
         v += (long long)gridDim.x * blockDim.x)
        if (core[v] < 0) best = min(best, deg[v]);
    for (int offset = 16; offset > 0; offset /= 2)
        best = min(best, __shfl_down_sync(0xffffffffu, best, offset));
    if (threadIdx.x % 32 == 0 && best != 0x7fffffff) atomicMin(out, best);
}
