// Bit-parallel multi-source BFS (kernels/algorithms/common/bitset_bfs.py drives it; compiled by
// NVRTC through CuPy, no headers). Word w of node v holds the batch's sources 64 w .. 64 w + 63:
// bit b set means source 64 w + b has reached v. Used by closeness and DACCER's hub balls
// (centrality) and by the all-pairs hop counts (apsp), each with its own per-level kernel.

typedef long long i64;
typedef unsigned long long u64;

#define FULL 0xffffffffu

// Level 0 and 1 at once: source i sets its bit at its own node, then pushes it to each neighbour
// (a neighbour gets each source's bit exactly once, so cnt, when counting, counts arcs). One warp
// per source.
extern "C" __global__ void ms_seed(const i64* __restrict__ indptr,
                                   const int* __restrict__ indices,
                                   const int* __restrict__ sources, int count, int words,
                                   u64* visited, u64* next, unsigned* cnt, int counting) {
    const int i = (int)((blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5);
    const int lane = threadIdx.x & 31;
    if (i >= count) return;
    const int s = sources[i];
    const u64 bit = 1ull << (i & 63);
    if (lane == 0) atomicOr(&visited[(i64)s * words + (i >> 6)], bit);
    for (i64 j = indptr[s] + lane; j < indptr[s + 1]; j += 32) {
        const i64 at = (i64)indices[j] * words + (i >> 6);
        atomicOr(&visited[at], bit);
        atomicOr(&next[at], bit);
        if (counting) atomicAdd(&cnt[indices[j]], 1u);
    }
}

// One pull level: next = (OR of the neighbours' frontier words) minus visited, for every word of
// every node (thread t = v * words + w). Words whose sources have all reached v are skipped.
// When counting, cnt[v] gets v's new bits, summed over the lanes that share v first.
extern "C" __global__ void ms_pull(const i64* __restrict__ indptr, const int* __restrict__ indices,
                                   int n, int words, u64 last_mask,
                                   const u64* __restrict__ frontier, u64* __restrict__ visited,
                                   u64* __restrict__ next, unsigned* cnt, int counting) {
    const i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x;
    int v = -1;
    u64 f = 0;
    if (t < (i64)n * words) {
        v = (int)(t / words);
        const int w = (int)(t - (i64)v * words);
        const u64 valid = w == words - 1 ? last_mask : ~0ull;
        const u64 seen = visited[t];
        if (seen != valid) {
            for (i64 j = indptr[v]; j < indptr[v + 1]; ++j) {
                f |= frontier[(i64)indices[j] * words + w];
                if ((f | seen) == valid) break;
            }
            f &= ~seen;
        }
        next[t] = f;
        if (f) visited[t] = seen | f;
    }
    if (counting) {
        const unsigned peers = __match_any_sync(FULL, v);
        const unsigned c = __reduce_add_sync(peers, (unsigned)__popcll(f));
        if (v >= 0 && c && (int)(threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&cnt[v], c);
    }
}
