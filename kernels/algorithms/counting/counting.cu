// Exact counting kernels (algorithms/counting: __init__.py, gpu.py): k-cliques on an oriented graph, connected induced
// k-sets (ESU), and the local counts behind small independent sets.
//
// Totals are 128-bit per size: acc[2 * size] is the low word, acc[2 * size + 1] the high word.
// Threads keep 64-bit partials and flush one before it would wrap, so no count is ever lost.

typedef unsigned long long u64;

#define FULL 0xffffffffu
// Largest k (and the depth of the per-thread search stacks).
#define KMAX 64

__device__ __forceinline__ void add_wide(u64* acc, int size, u64 x) {
    if (x == 0) return;
    const u64 old = atomicAdd(&acc[2 * size], x);
    if (old + x < old) atomicAdd(&acc[2 * size + 1], 1ULL);  // the low word wrapped: carry
}

__device__ __forceinline__ void add_partial(u64* part, u64* acc, int size, u64 x) {
    const u64 sum = part[size] + x;
    if (sum < x) {  // would wrap: hand the partial over first
        add_wide(acc, size, part[size]);
        part[size] = x;
    } else {
        part[size] = sum;
    }
}

// Whether sorted list[lo:end] holds x.
__device__ __forceinline__ bool contains(const int* __restrict__ list, long long lo,
                                         long long end, int x) {
    long long hi = end;
    while (lo < hi) {
        const long long mid = (lo + hi) >> 1;
        if (list[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo < end && list[lo] == x;
}

// ------------------------------------------------------------------------------------------------
// Cliques. One warp per item (fetched from a shared counter, heaviest first): the rows of
// the bitmap of v's out-neighbourhood (bit b of row a: out-list entry b is an out-neighbour of
// entry a, so only b > a), then a depth-first search over common candidates. Each lane owns words
// lane, lane + 32, ... of every bitmap (R per lane: out-degrees up to 1024 R).
// ------------------------------------------------------------------------------------------------

// Row a of v's bitmap (out-list at p, length s), built by the calling lane alone.
__device__ __forceinline__ void build_row(const long long* __restrict__ dptr,
                                          const int* __restrict__ dadj, long long p, int s,
                                          int a, unsigned* row, int words) {
    for (int w = 0; w < words; ++w) row[w] = 0;
    const int u = dadj[p + a];
    for (long long j = dptr[u]; j < dptr[u + 1]; ++j) {
        const int b = dadj[j];
        int lo = a + 1, hi = s;  // out-lists are sorted: b can only sit after a
        while (lo < hi) {
            const int mid = (lo + hi) >> 1;
            if (dadj[p + mid] < b) lo = mid + 1; else hi = mid;
        }
        if (lo < s && dadj[p + lo] == b) row[lo >> 5] |= 1u << (lo & 31);
    }
}

// Deepest level the cutting pass (CUT) descends to: items carry at most this many indices.
#define CUT_DEPTH 3

// An item is a search node: its root, its candidates (weight) and the local indices it chose
// (-1 padded to cols - 2). An item below the root builds only the rows its subtree reads: those of
// its prefix and of its candidates.
//
// CUT: instead of searching, the warp follows each item's search while a node has split or more
// candidates (above level depth), counting those nodes into acc as the search would, and writes
// their children as items (rows of out_cols ints) to out; out_count counts them (slots past
// out_cap are not written). The caller cuts one level per launch (depth = the items' level + 1),
// so that the subtrees of one giant root are cut by many warps.
template <int R, bool CUT>
__device__ void clique_warp(const long long* __restrict__ dptr, const int* __restrict__ dadj,
                            const int* __restrict__ items, int cols, int nitems, int kmax,
                            int lo_size, unsigned* __restrict__ scratch, int row_words,
                            int dmax, int* next_item, u64* acc, int split, int depth,
                            int* __restrict__ out, int out_cols, int out_cap, int* out_count) {
    const int lane = threadIdx.x & 31;
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    unsigned* rows = scratch + warp * (long long)dmax * row_words;
    u64 part[KMAX + 1];
    for (int size = 0; size <= kmax; ++size) part[size] = 0;
    unsigned cand[KMAX][R];
    int path[CUT_DEPTH + 1];  // CUT: the local index chosen at each level
    for (;;) {
        int idx = 0;
        if (lane == 0) idx = atomicAdd(next_item, 1);
        idx = __shfl_sync(FULL, idx, 0);
        if (idx >= nitems) break;
        const int* item = items + (long long)idx * cols;
        const int v = item[0];
        const long long p = dptr[v];
        const int s = (int)(dptr[v + 1] - p);
        const int words = (s + 31) >> 5;
        int t0 = 0;
        while (t0 < cols - 2 && item[2 + t0] >= 0) ++t0;
        if (CUT) {
            for (int q = 0; q < t0; ++q) path[q + 1] = item[2 + q];
        }
        if (t0 == 0) {
            for (int a = lane; a < s; a += 32) {
                build_row(dptr, dadj, p, s, a, rows + (long long)a * row_words, words);
            }
            __syncwarp();
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int w = r * 32 + lane;
                cand[0][r] = w < words - 1 ? FULL
                           : w == words - 1 ? ((s & 31) ? (1u << (s & 31)) - 1 : FULL) : 0u;
            }
        } else {
            if (lane < t0) {
                const int a = item[2 + lane];
                build_row(dptr, dadj, p, s, a, rows + (long long)a * row_words, words);
            }
            __syncwarp();
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int w = r * 32 + lane;
                unsigned x = w < words ? FULL : 0u;
                for (int q = 0; q < t0 && x; ++q) {
                    x &= rows[(long long)item[2 + q] * row_words + w];
                }
                cand[t0][r] = x;
            }
            // Candidates lie after every prefix index, so their rows never overwrite the prefix's.
            for (int a = lane; a < s; a += 32) {
                unsigned x = 1u;
                for (int q = 0; q < t0 && x; ++q) {
                    x &= rows[(long long)item[2 + q] * row_words + (a >> 5)] >> (a & 31);
                }
                if (x) build_row(dptr, dadj, p, s, a, rows + (long long)a * row_words, words);
            }
            __syncwarp();
        }
        int t = t0;
        bool fresh = true;
        while (t >= t0) {
            if (fresh) {
                fresh = false;
                int c = 0;
#pragma unroll
                for (int r = 0; r < R; ++r) c += __popc(cand[t][r]);
                c = __reduce_add_sync(FULL, c);
                if (CUT && (c < split || t == depth)) {
                    if (c > 0 && lane == 0) {
                        const int slot = atomicAdd(out_count, 1);
                        if (slot < out_cap) {
                            int* row = out + (long long)slot * out_cols;
                            row[0] = v;
                            row[1] = c;
                            for (int q = 0; q < out_cols - 2; ++q) {
                                row[2 + q] = q < t ? path[q + 1] : -1;
                            }
                        }
                    }
                    --t;
                    continue;
                }
                if (lane == 0 && t >= 1) add_partial(part, acc, t + 2, (u64)c);
                if (t + 3 > kmax || t + 1 + c < lo_size) { --t; continue; }
            }
            int i = -1;
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const unsigned ballot = __ballot_sync(FULL, cand[t][r] != 0);
                if (ballot) {
                    const int owner = __ffs(ballot) - 1;
                    const unsigned word = __shfl_sync(FULL, cand[t][r], owner);
                    if (lane == owner) cand[t][r] = word & (word - 1);
                    i = ((r * 32 + owner) << 5) + __ffs(word) - 1;
                    break;
                }
            }
            if (i < 0) { --t; continue; }
            if (CUT) path[t + 1] = i;
            const unsigned* row = rows + (long long)i * row_words;
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int w = r * 32 + lane;
                cand[t + 1][r] = w < words ? cand[t][r] & row[w] : 0u;
            }
            ++t;
            fresh = true;
        }
        __syncwarp();  // every lane is done with the rows before they are rebuilt
    }
    if (lane == 0) {
        for (int size = 3; size <= kmax; ++size) add_wide(acc, size, part[size]);
    }
}

#define CLIQUE_KERNELS(R)                                                                       \
    extern "C" __global__ void clique_count_r##R(                                              \
        const long long* dptr, const int* dadj, const int* items, int cols, int nitems,        \
        int kmax, int lo_size, unsigned* scratch, int row_words, int dmax, int* next_item,     \
        u64* acc) {                                                                            \
        clique_warp<R, false>(dptr, dadj, items, cols, nitems, kmax, lo_size, scratch,         \
                              row_words, dmax, next_item, acc, 0, 0, nullptr, 0, 0, nullptr);  \
    }                                                                                          \
    extern "C" __global__ void clique_cut_r##R(                                                \
        const long long* dptr, const int* dadj, const int* items, int cols, int nitems,        \
        int kmax, int lo_size, unsigned* scratch, int row_words, int dmax, int* next_item,     \
        u64* acc, int split, int depth, int* out, int out_cols, int out_cap, int* out_count) { \
        clique_warp<R, true>(dptr, dadj, items, cols, nitems, kmax, lo_size, scratch,          \
                             row_words, dmax, next_item, acc, split, depth, out, out_cols,     \
                             out_cap, out_count);                                              \
    }

CLIQUE_KERNELS(1)
CLIQUE_KERNELS(2)
CLIQUE_KERNELS(4)
CLIQUE_KERNELS(8)

// The node of size s (members[0..s-1], the last one just picked) appends the picked vertex's
// neighbours above the root that no earlier member has discovered; len[s] = the new length.
__device__ __forceinline__ void extend(const long long* __restrict__ indptr,
                                       const int* __restrict__ indices, int r,
                                       const int* members, int s, int* ext, int* len) {
    const int picked = members[s - 1];
    int tail = len[s - 1];
    for (long long j = indptr[picked]; j < indptr[picked + 1]; ++j) {
        const int u = indices[j];
        if (u <= r) continue;
        bool seen = false;
        for (int q = 0; q < s - 1 && !seen; ++q) {
            const int x = members[q];
            seen = x == u || contains(indices, indptr[x], indptr[x + 1], u);
        }
        if (!seen) ext[tail++] = u;
    }
    len[s] = tail;
}

// ------------------------------------------------------------------------------------------------
// Connected induced sets. One thread per item (a search node of size depth + 1: its smallest vertex
// r and the list positions of its picks), fetched from a shared counter. ESU as on the CPU
// (esu.py connected_root) with the same list order; "already discovered" is
// tested by adjacency to the earlier members (binary search in sorted rows), not by marks.
// ------------------------------------------------------------------------------------------------

extern "C" __global__ void connected_items(const long long* __restrict__ indptr,
                                           const int* __restrict__ indices,
                                           const int* __restrict__ items, int depth, int nitems,
                                           int kmax, int* __restrict__ scratch, long long cap,
                                           int* next_item, u64* acc) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int* ext = scratch + tid * cap;
    int members[KMAX + 1];
    int nxt[KMAX + 1];
    int len[KMAX + 1];
    u64 part[KMAX + 2];
    for (int size = 0; size <= kmax + 1; ++size) part[size] = 0;
    for (;;) {
        const int item = atomicAdd(next_item, 1);
        if (item >= nitems) break;
        const int* path = items + (long long)item * (depth + 1);
        const int r = path[0];
        long long base = indptr[r];
        {
            long long hi = indptr[r + 1];
            while (base < hi) {  // first neighbour above r
                const long long mid = (base + hi) >> 1;
                if (indices[mid] <= r) base = mid + 1; else hi = mid;
            }
        }
        const int size0 = (int)(indptr[r + 1] - base);
        for (int a = 0; a < size0; ++a) ext[a] = indices[base + a];
        members[0] = r;
        len[1] = size0;
        // Replay the item's picks (the host counted the nodes on the way), then search below it.
        int s = 1;
        for (int q = 1; q <= depth; ++q) {
            if (q > 1) extend(indptr, indices, r, members, s, ext, len);
            members[s] = ext[path[q]];
            nxt[s] = path[q] + 1;
            ++s;
        }
        bool fresh = true;
        while (s > depth) {
            if (fresh) {
                fresh = false;
                extend(indptr, indices, r, members, s, ext, len);
                const int tail = len[s];
                nxt[s] = nxt[s - 1];
                if (s + 1 <= kmax) add_partial(part, acc, s + 1, (u64)(tail - nxt[s]));
                if (s + 2 > kmax) nxt[s] = tail;
            }
            if (nxt[s] < len[s]) {
                members[s] = ext[nxt[s]];
                ++nxt[s];
                ++s;
                fresh = true;
                continue;
            }
            --s;
        }
    }
    for (int size = 3; size <= kmax; ++size) add_wide(acc, size, part[size]);
}

// ------------------------------------------------------------------------------------------------
// Local counts for independent sets of size <= 4.
// ------------------------------------------------------------------------------------------------

// Triangles through each arc u -> v: |N(u) ∩ N(v)|, the shorter row searched in the longer one.
extern "C" __global__ void arc_triangles(const long long* __restrict__ indptr,
                                         const int* __restrict__ indices,
                                         const int* __restrict__ arc_src, long long arcs,
                                         long long* __restrict__ out) {
    const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= arcs) return;
    int a = arc_src[j], b = indices[j];
    if (indptr[a + 1] - indptr[a] > indptr[b + 1] - indptr[b]) { const int t = a; a = b; b = t; }
    long long c = 0;
    for (long long q = indptr[a]; q < indptr[a + 1]; ++q) {
        c += contains(indices, indptr[b], indptr[b + 1], indices[q]);
    }
    out[j] = c;
}

// 4-cycles from their highest-ranked vertex u (rank ids, sorted rows, split[u] = first neighbour
// above u): one block per u counts the wedges u - v - w with v, w below u in a per-block counter
// array; each wedge adds the number of earlier wedges to the same w (pairs of middles), then the
// counters are cleared by walking the same wedges again.
extern "C" __global__ void four_cycles(const long long* __restrict__ ptr,
                                       const int* __restrict__ adj,
                                       const long long* __restrict__ split, int n,
                                       int* __restrict__ scratch, int* next_vertex, u64* acc) {
    __shared__ int u_shared;
    int* cnt = scratch + (long long)blockIdx.x * n;
    u64 mine = 0;
    for (;;) {
        if (threadIdx.x == 0) u_shared = atomicAdd(next_vertex, 1);
        __syncthreads();
        const int u = u_shared;
        __syncthreads();
        if (u >= n) break;
        for (long long a = ptr[u] + threadIdx.x; a < split[u]; a += blockDim.x) {
            const int v = adj[a];
            for (long long b = ptr[v]; b < ptr[v + 1]; ++b) {
                const int w = adj[b];
                if (w >= u) break;
                mine += (u64)atomicAdd(&cnt[w], 1);
            }
        }
        __syncthreads();
        for (long long a = ptr[u] + threadIdx.x; a < split[u]; a += blockDim.x) {
            const int v = adj[a];
            for (long long b = ptr[v]; b < ptr[v + 1]; ++b) {
                const int w = adj[b];
                if (w >= u) break;
                cnt[w] = 0;
            }
        }
        __syncthreads();
    }
    add_wide(acc, 0, mine);
}
