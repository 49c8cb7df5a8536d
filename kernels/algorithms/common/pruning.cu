// Phase I of pendant pruning on the GPU (driven by kernels/algorithms/common/pruning.py, one pair
// of launches per round). Same rules as the CPU version, so that both produce the same record: a
// round decides on the degrees at its start (prune_decide), then applies (prune_apply).

// For each candidate: its one remaining neighbour, and whether it goes this round. It goes unless
// it is stale (degree no longer 1) or its neighbour qualifies too and is the larger of the two
// (of an isolated edge only the larger end goes).
extern "C" __global__ void prune_decide(const long long* __restrict__ indptr,
                                        const int* __restrict__ indices,
                                        const int* __restrict__ cand, int count,
                                        const signed char* __restrict__ alive,
                                        const int* __restrict__ degree,
                                        const signed char* __restrict__ pin,
                                        int* __restrict__ nbr, signed char* __restrict__ take) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    const int v = cand[k];
    if (degree[v] != 1) {
        take[k] = 0;
        return;
    }
    int w = -1;
    for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
        if (alive[indices[j]]) {
            w = indices[j];
            break;
        }
    }
    nbr[k] = w;
    const bool both = degree[w] == 1 && !pin[w];
    take[k] = !both || w < v;
}

// Remove the chosen candidates, record them, and queue each neighbour whose degree drops to 1:
// the atomic returns the old degree, so exactly one remover sees 2 and queues it.
// counters[0] = next round's candidates, counters[1] = records written.
extern "C" __global__ void prune_apply(const int* __restrict__ cand, int count,
                                       const int* __restrict__ nbr,
                                       const signed char* __restrict__ take,
                                       signed char* __restrict__ alive, int* degree,
                                       const signed char* __restrict__ pin,
                                       int* __restrict__ next, int* counters,
                                       int* __restrict__ vertex, int* __restrict__ round,
                                       int* __restrict__ neighbour, int r) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count || !take[k]) return;
    const int v = cand[k];
    const int w = nbr[k];
    alive[v] = 0;
    const int slot = atomicAdd(&counters[1], 1);
    vertex[slot] = v;
    round[slot] = r;
    neighbour[slot] = w;
    if (atomicSub(&degree[w], 1) == 2 && !pin[w]) next[atomicAdd(&counters[0], 1)] = w;
}
