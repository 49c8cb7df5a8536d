// Critical node detection: the swap search (kernels/algorithms/critical_nodes/gpu.py drives it).
#include "critical_nodes.cuh"

// ------------------------------------------------------------------------------------------------
// Swap search: one warp per chain (the moves of search.py's swap_search). Lane 0 walks
// the graph (BFS relabels, Tarjan's DFS); the warp scans the component table and scores every
// removal and every restore candidate in parallel, reducing by argmin with hashed tie-breaks.
// A chain's arrays live in one slice of a pool (layout in chain_of, sizes in gpu.py).
// comp[v] is v's component label (1..n), 0 when v is deleted; csize[label] its size.

enum { CTL_OBJ, CTL_FREE, CTL_ITER, CTL_RNG, CTL_BEST, CTL_STALL, CTL_STAMP, CTL_ND };

struct Chain {
    long long *ctl, *edge, *cut_pairs;
    int *comp, *csize, *freel, *dlist, *dpos, *tabu, *best, *queue, *disc, *low, *sub, *parent,
        *cut_nodes, *rep;
    unsigned *seen;
};

__device__ Chain chain_of(char* pool, size_t stride, int c, int n, int k) {
    char* p = pool + stride * c;
    Chain ch;
    auto take8 = [&](size_t count) { long long* a = (long long*)p; p += 8 * count; return a; };
    auto take4 = [&](size_t count) { int* a = (int*)p; p += 4 * count; return a; };
    ch.ctl = take8(8);
    ch.edge = take8(n);
    ch.cut_pairs = take8(n);
    ch.comp = take4(n);
    ch.csize = take4(n + 1);
    ch.freel = take4(n + 1);
    ch.dlist = take4(k + 1);
    ch.dpos = take4(n);
    ch.tabu = take4(n);
    ch.best = take4(k);
    ch.queue = take4(n);
    ch.disc = take4(n);
    ch.low = take4(n);
    ch.sub = take4(n);
    ch.parent = take4(n);
    ch.cut_nodes = take4(n);
    ch.rep = take4(n + 1);
    ch.seen = (unsigned*)take4(n + 1);
    return ch;
}

__device__ __forceinline__ unsigned long long next_rand(unsigned long long& rng) {
    rng += GOLDEN;
    return mix(rng);
}

// Lexicographic (a, b, c) minimum over the warp.
__device__ void warp_argmin(long long& a, unsigned long long& b, int& c) {
    for (int off = 16; off > 0; off >>= 1) {
        const long long oa = __shfl_xor_sync(0xffffffffu, a, off);
        const unsigned long long ob = __shfl_xor_sync(0xffffffffu, b, off);
        const int oc = __shfl_xor_sync(0xffffffffu, c, off);
        if (oa < a || (oa == a && (ob < b || (ob == b && oc < c)))) { a = oa; b = ob; c = oc; }
    }
}

// Lane 0 only: give root's component a fresh label by BFS; returns its size.
__device__ int relabel(const long long* indptr, const int* indices, Chain& ch, int root) {
    const unsigned stamp = (unsigned)(++ch.ctl[CTL_STAMP]);
    const int fresh = ch.freel[--ch.ctl[CTL_FREE]];
    ch.seen[root] = stamp;
    ch.queue[0] = root;
    int head = 0, tail = 1;
    while (head < tail) {
        const int v = ch.queue[head++];
        ch.comp[v] = fresh;
        for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
            const int w = indices[j];
            if (ch.comp[w] != 0 && ch.seen[w] != stamp) {
                ch.seen[w] = stamp;
                ch.queue[tail++] = w;
            }
        }
    }
    ch.csize[fresh] = tail;
    ch.rep[fresh] = root;
    return tail;
}

__device__ void release(Chain& ch, int c) {
    ch.csize[c] = 0;
    ch.freel[ch.ctl[CTL_FREE]++] = c;
}

// Lane 0 only: label every component of the residual graph from the deleted list.
__device__ void load(const long long* indptr, const int* indices, Chain& ch, int n, int k,
                     const int* nodes) {
    for (int v = 0; v < n; ++v) { ch.comp[v] = -1; ch.dpos[v] = -1; }
    for (int i = 0; i < k; ++i) {
        ch.comp[nodes[i]] = 0;
        ch.dlist[i] = nodes[i];
        ch.dpos[nodes[i]] = i;
    }
    ch.ctl[CTL_FREE] = 0;
    for (int c = n; c >= 1; --c) { ch.csize[c] = 0; ch.freel[ch.ctl[CTL_FREE]++] = c; }
    long long obj = 0;
    for (int r = 0; r < n; ++r) {
        if (ch.comp[r] != -1) continue;
        // relabel() treats comp != 0 as present; -1 marks present but unlabelled.
        const long long s = relabel(indptr, indices, ch, r);
        obj += pairs(s);
    }
    ch.ctl[CTL_OBJ] = obj;
    ch.ctl[CTL_ND] = k;
}

// Lane 0 only: delete v (slot nd of dlist); its component splits into pieces.
__device__ void delete_node(const long long* indptr, const int* indices, Chain& ch, int v) {
    const int old = ch.comp[v];
    const long long nd = ch.ctl[CTL_ND];
    long long delta = -pairs(ch.csize[old]);
    ch.comp[v] = 0;
    ch.dlist[nd] = v;
    ch.dpos[v] = (int)nd;
    ch.ctl[CTL_ND] = nd + 1;
    for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
        const int w = indices[j];
        if (ch.comp[w] == old) delta += pairs(relabel(indptr, indices, ch, w));
    }
    release(ch, old);  // only now: a fresh piece must not reuse the old label
    ch.ctl[CTL_OBJ] += delta;
}

// Lane 0 only: put u back; its neighbours' components merge.
__device__ void restore_node(const long long* indptr, const int* indices, Chain& ch, int u) {
    const long long nd = ch.ctl[CTL_ND];
    const int last = ch.dlist[nd - 1];
    ch.dlist[ch.dpos[u]] = last;
    ch.dpos[last] = ch.dpos[u];
    ch.dpos[u] = -1;
    ch.ctl[CTL_ND] = nd - 1;
    long long delta = 0;
    for (long long j = indptr[u]; j < indptr[u + 1]; ++j) {
        const int c = ch.comp[indices[j]];
        if (c != 0 && ch.csize[c] != 0) { delta -= pairs(ch.csize[c]); release(ch, c); }
    }
    ch.comp[u] = -1;  // present; relabel() gives it and the merged components one label
    delta += pairs(relabel(indptr, indices, ch, u));
    ch.ctl[CTL_OBJ] += delta;
}

// Lane 0 only: Tarjan's DFS of root's component; members go to queue. Returns their number.
__device__ int dfs_cuts(const long long* indptr, const int* indices, Chain& ch, int root) {
    ch.disc[root] = 0; ch.low[root] = 0; ch.sub[root] = 1; ch.parent[root] = -1;
    ch.edge[root] = indptr[root]; ch.cut_pairs[root] = 0; ch.cut_nodes[root] = 0;
    ch.queue[0] = root;
    int count = 1, clock = 1, v = root;
    while (true) {
        const long long j = ch.edge[v];
        if (j < indptr[v + 1]) {
            ch.edge[v] = j + 1;
            const int w = indices[j];
            if (ch.comp[w] == 0) continue;
            if (ch.disc[w] < 0) {
                ch.disc[w] = clock; ch.low[w] = clock; ++clock; ch.sub[w] = 1; ch.parent[w] = v;
                ch.edge[w] = indptr[w]; ch.cut_pairs[w] = 0; ch.cut_nodes[w] = 0;
                ch.queue[count++] = w;
                v = w;
            } else if (w != ch.parent[v]) {
                ch.low[v] = min(ch.low[v], ch.disc[w]);
            }
        } else {
            const int p = ch.parent[v];
            if (p < 0) break;
            ch.sub[p] += ch.sub[v];
            ch.low[p] = min(ch.low[p], ch.low[v]);
            if (ch.low[v] >= ch.disc[p]) {
                ch.cut_pairs[p] += pairs(ch.sub[v]);
                ch.cut_nodes[p] += ch.sub[v];
            }
            v = p;
        }
    }
    return count;
}

extern "C" __global__ void cnd_search_init(
    const long long* __restrict__ indptr, const int* __restrict__ indices, int n, int k,
    int chains, char* pool, unsigned long long stride, const unsigned char* starts_removed,
    int nstarts, unsigned long long seed) {
    const int c = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (c >= chains) return;
    Chain ch = chain_of(pool, stride, c, n, k);
    const unsigned char* removed = starts_removed + (size_t)(c % nstarts) * n;
    for (int v = lane; v < n; v += 32) {
        ch.tabu[v] = 0; ch.seen[v] = 0; ch.disc[v] = -1;
    }
    __syncwarp();
    if (lane == 0) {
        int count = 0;
        for (int v = 0; v < n && count < k; ++v) if (removed[v]) ch.best[count++] = v;
        ch.ctl[CTL_ITER] = 0; ch.ctl[CTL_STALL] = 0; ch.ctl[CTL_STAMP] = 0;
        ch.ctl[CTL_RNG] = (long long)mix(seed * 0x100000001B3ULL + (unsigned long long)c);
        load(indptr, indices, ch, n, k, ch.best);
        ch.ctl[CTL_BEST] = ch.ctl[CTL_OBJ];
    }
}

extern "C" __global__ void cnd_search_run(
    const long long* __restrict__ indptr, const int* __restrict__ indices, int n, int k,
    int chains, char* pool, unsigned long long stride, int iterations, int patience,
    int random_move) {
    const int c = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (c >= chains) return;  // whole warps: chains are counted in warps
    Chain ch = chain_of(pool, stride, c, n, k);
    unsigned long long rng = (unsigned long long)ch.ctl[CTL_RNG];  // same in every lane
    for (int step = 0; step < iterations; ++step) {
        __syncwarp();
        if (ch.ctl[CTL_BEST] == 0) break;
        const int it = (int)ch.ctl[CTL_ITER];
        // A random one of the large components (size at least midway between min and max).
        int big = 0, small = n + 1;
        for (int l = 1 + lane; l <= n; l += 32) {
            const int s = ch.csize[l];
            if (s > 0) { big = max(big, s); small = min(small, s); }
        }
        for (int off = 16; off > 0; off >>= 1) {
            big = max(big, __shfl_xor_sync(0xffffffffu, big, off));
            small = min(small, __shfl_xor_sync(0xffffffffu, small, off));
        }
        if (big < 2) break;
        const int limit = max((big + small + 1) / 2, 2);
        int count = 0;
        for (int l = 1 + lane; l <= n; l += 32) count += ch.csize[l] >= limit;
        for (int off = 16; off > 0; off >>= 1) count += __shfl_xor_sync(0xffffffffu, count, off);
        int target = (int)(next_rand(rng) % (unsigned long long)count), label = 0;
        for (int base = 1; base <= n && label == 0; base += 32) {
            const int l = base + lane;
            const bool hit = l <= n && ch.csize[l] >= limit;
            const unsigned votes = __ballot_sync(0xffffffffu, hit);
            const int here = __popc(votes);
            if (target < here) {
                const bool mine = hit && __popc(votes & ((1u << lane) - 1)) == target;
                const int from = __ffs(__ballot_sync(0xffffffffu, mine)) - 1;
                label = base + from;
            } else {
                target -= here;
            }
        }
        // The non-tabu member whose removal leaves the fewest pairs in the component.
        const int root = ch.rep[label];
        int members = 0;
        if (lane == 0) members = dfs_cuts(indptr, indices, ch, root);
        members = __shfl_sync(0xffffffffu, members, 0);
        __syncwarp();
        const long long total = ch.csize[label];
        const unsigned long long salt = next_rand(rng);
        long long left = BIG_SCORE;
        unsigned long long tie = 0;
        int v = BIG_NODE;
        for (int i = lane; i < members; i += 32) {
            const int x = ch.queue[i];
            ch.disc[x] = -1;
            if (ch.tabu[x] > it) continue;
            const long long lx = ch.cut_pairs[x] + pairs(total - 1 - ch.cut_nodes[x]);
            const unsigned long long tx = mix(salt ^ (unsigned long long)x);
            if (lx < left || (lx == left && tx < tie)) { left = lx; tie = tx; v = x; }
        }
        warp_argmin(left, tie, v);
        if (v == BIG_NODE) v = root;
        if (random_move > 0) {
            // Diversification, as the CPU's memetic improvement: one removal in random_move
            // takes a random non-tabu member of the component instead of its best cut.
            const unsigned long long roll = next_rand(rng), pick = next_rand(rng);
            if (roll % (unsigned long long)random_move == 0) {
                const int w = ch.queue[pick % (unsigned long long)members];
                if (ch.tabu[w] <= it) v = w;
            }
        }
        __syncwarp();
        if (lane == 0) {
            delete_node(indptr, indices, ch, v);
            ch.tabu[v] = it + 1 + (int)(next_rand(rng) % 3);
        } else {
            next_rand(rng);  // keep every lane's generator in step
        }
        __syncwarp();
        // The non-tabu deleted node whose return joins the fewest pairs.
        const int nd = (int)ch.ctl[CTL_ND];
        const unsigned long long salt2 = next_rand(rng);
        long long cost = BIG_SCORE;
        unsigned long long tie2 = 0;
        int u = BIG_NODE;
        for (int i = lane; i < nd; i += 32) {
            const int x = ch.dlist[i];
            if (ch.tabu[x] > it) continue;
            const long long cx = join_cost(indptr, indices, ch.comp, ch.csize, x);
            const unsigned long long tx = mix(salt2 ^ (unsigned long long)x);
            if (cx < cost || (cx == cost && tx < tie2)) { cost = cx; tie2 = tx; u = x; }
        }
        warp_argmin(cost, tie2, u);
        const unsigned long long fallback = next_rand(rng);
        if (u == BIG_NODE) u = ch.dlist[fallback % (unsigned long long)nd];
        if (lane == 0) {
            restore_node(indptr, indices, ch, u);
            ch.tabu[u] = it + 1 + (int)(next_rand(rng) % (unsigned long long)(3 + k / 10));
        } else {
            next_rand(rng);
        }
        __syncwarp();
        const bool better = ch.ctl[CTL_OBJ] < ch.ctl[CTL_BEST];
        __syncwarp();
        if (better) {
            for (int i = lane; i < k; i += 32) ch.best[i] = ch.dlist[i];
        }
        __syncwarp();
        if (lane == 0) {
            ch.ctl[CTL_ITER] = it + 1;
            if (better) { ch.ctl[CTL_BEST] = ch.ctl[CTL_OBJ]; ch.ctl[CTL_STALL] = 0; }
            else ++ch.ctl[CTL_STALL];
        }
        __syncwarp();
        const bool restart = ch.ctl[CTL_STALL] >= patience;
        __syncwarp();
        if (restart) {
            // Restart from the best set with a few random swaps.
            if (lane == 0) { ch.ctl[CTL_STALL] = 0; load(indptr, indices, ch, n, k, ch.best); }
            __syncwarp();
            const int swaps = 1 + (int)(next_rand(rng) % (unsigned long long)(1 + k / 20));
            for (int s = 0; s < swaps; ++s) {
                const int x = (int)(next_rand(rng) % (unsigned long long)n);
                const unsigned long long pick = next_rand(rng);
                __syncwarp();
                if (ch.comp[x] == 0) continue;
                __syncwarp();
                if (lane == 0) {
                    delete_node(indptr, indices, ch, x);
                    const int y = ch.dlist[pick % (unsigned long long)k];  // never x: slot k
                    restore_node(indptr, indices, ch, y);
                    ch.tabu[y] = (int)ch.ctl[CTL_ITER] + 2;
                }
                __syncwarp();
            }
        }
    }
    __syncwarp();
    if (lane == 0) ch.ctl[CTL_RNG] = (long long)rng;
}
