// Shared by multistart.cu and search.cu (critical node detection): hashing, pair counts, the
// block argmin and the join cost of restoring a node. Included through the loader's -I.
#pragma once

#define GOLDEN 0x9E3779B97F4A7C15ULL
#define BIG_SCORE 0x7fffffffffffffffLL
#define BIG_NODE 0x7fffffff
#define SEEN 16  // distinct neighbour components a thread remembers before it rescans its row

__device__ __forceinline__ unsigned long long mix(unsigned long long x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

__device__ __forceinline__ long long pairs(long long s) { return s * (s - 1) / 2; }

// Lexicographic (score, node) minimum over the block; every thread gets the result.
__device__ void block_argmin(long long& score, int& node, long long* s_score, int* s_node) {
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int off = 16; off > 0; off >>= 1) {
        const long long os = __shfl_down_sync(0xffffffffu, score, off);
        const int on = __shfl_down_sync(0xffffffffu, node, off);
        if (os < score || (os == score && on < node)) { score = os; node = on; }
    }
    if (lane == 0) { s_score[warp] = score; s_node[warp] = node; }
    __syncthreads();
    if (warp == 0) {
        const unsigned warps = blockDim.x >> 5;
        score = lane < warps ? s_score[lane] : BIG_SCORE;
        node = lane < warps ? s_node[lane] : BIG_NODE;
        for (int off = 16; off > 0; off >>= 1) {
            const long long os = __shfl_down_sync(0xffffffffu, score, off);
            const int on = __shfl_down_sync(0xffffffffu, node, off);
            if (os < score || (os == score && on < node)) { score = os; node = on; }
        }
        if (lane == 0) { s_score[0] = score; s_node[0] = node; }
    }
    __syncthreads();
    score = s_score[0];
    node = s_node[0];
    __syncthreads();
}

// Pairs joined if forbidden node x came back: C(1 + sum s_c, 2) - sum C(s_c, 2) over the distinct
// components c next to x (the paper's score_with_node, minus the unchanged total). A component
// of one node is that neighbour alone, once in x's row: it needs no look among the others (a hub
// next to hundreds of single nodes rescanned its row for each past the remembered ones).
template <typename S>
__device__ long long join_cost(const long long* __restrict__ indptr,
                               const int* __restrict__ indices, const int* comp, const S* sizes,
                               int x) {
    int seen[SEEN];
    int count = 0;
    long long joined = 0, lost = 0;
    const long long begin = indptr[x], end = indptr[x + 1];
    for (long long j = begin; j < end; ++j) {
        const int c = comp[indices[j]];
        if (c == 0) continue;
        const long long size = sizes[c];
        if (size == 1) { joined += 1; continue; }
        bool dup = false;
        for (int t = 0; t < count && !dup; ++t) dup = seen[t] == c;
        if (!dup && count == SEEN) {  // past the remembered ones: look back along the row
            for (long long i = begin; i < j && !dup; ++i) dup = comp[indices[i]] == c;
        }
        if (dup) continue;
        if (count < SEEN) seen[count++] = c;
        joined += size;
        lost += pairs(size);
    }
    return pairs(joined + 1) - lost;
}
