// pCND*: greedy critical node detection, one CUDA block per start (driven by kernels/cnd_gpu.py).
// Graph: CSR with long long offsets and int neighbours. Each block owns its slice of the work
// arrays (MIS state, component ids, component sizes, marks) and keeps the best removed set it has
// found across the waves of starts it runs. The answer equals kernels/cnd_cpu.py's cnd_star for
// every seed: same hashed MIS, same scores (exact 64-bit integers), smallest node on ties.

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
// components c next to x (the paper's score_with_node, minus the unchanged total).
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
        bool dup = false;
        for (int t = 0; t < count && !dup; ++t) dup = seen[t] == c;
        if (!dup && count == SEEN) {  // past the remembered ones: look back along the row
            for (long long i = begin; i < j && !dup; ++i) dup = comp[indices[i]] == c;
        }
        if (dup) continue;
        if (count < SEEN) seen[count++] = c;
        joined += sizes[c];
        lost += pairs(sizes[c]);
    }
    return pairs(joined + 1) - lost;
}

// Rescore the candidates in work[0, count): one warp each, lanes over the row; a per-warp mark
// array (stamped with the warp's own tags) counts each neighbouring component once.
__device__ void rescore(const long long* __restrict__ indptr, const int* __restrict__ indices,
                        const int* comp, const long long* sizes, const int* work, int count,
                        int* wmark, unsigned& tag, long long* delta) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    for (int i = warp; i < count; i += warps) {
        const int x = work[i];
        const int t = (int)(++tag);
        long long joined = 0, lost = 0;
        for (long long j = indptr[x] + lane; j < indptr[x + 1]; j += 32) {
            const int c = comp[indices[j]];
            if (c != 0 && atomicExch(&wmark[c], t) != t) {
                joined += sizes[c];
                lost += pairs(sizes[c]);
            }
        }
        for (int off = 16; off > 0; off >>= 1) {
            joined += __shfl_xor_sync(0xffffffffu, joined, off);
            lost += __shfl_xor_sync(0xffffffffu, lost, off);
        }
        if (lane == 0) delta[x] = pairs(joined + 1) - lost;
    }
}

extern "C" __global__ void cnd_multistart(
    const long long* __restrict__ indptr, const int* __restrict__ indices, int n, int k,
    unsigned long long first_seed, int first_start, int starts,
    unsigned char* state_all, int* comp_all, long long* sizes_all, int* mark_all,
    int* wmark_all, long long* delta_all, int* work_all, int* dirty_all,
    unsigned char* best_removed_all, long long* best_obj, int* best_start) {
    __shared__ long long s_score[32];
    __shared__ int s_node[32];
    __shared__ long long s_grown;
    __shared__ int s_count;
    const int start = first_start + blockIdx.x;
    if (start >= starts) return;
    const int warps = blockDim.x >> 5;
    unsigned char* state = state_all + (size_t)blockIdx.x * n;
    int* comp = comp_all + (size_t)blockIdx.x * n;
    long long* sizes = sizes_all + (size_t)blockIdx.x * (n + 1);
    int* mark = mark_all + (size_t)blockIdx.x * (n + 1);  // by component id
    int* dirty = dirty_all + (size_t)blockIdx.x * n;  // by node
    int* wmark = wmark_all + ((size_t)blockIdx.x * warps + (threadIdx.x >> 5)) * (n + 1);
    long long* delta = delta_all + (size_t)blockIdx.x * n;
    int* work = work_all + (size_t)blockIdx.x * n;
    unsigned char* best_removed = best_removed_all + (size_t)blockIdx.x * n;
    const unsigned long long base = mix((first_seed + (unsigned long long)start) ^ GOLDEN);

    // MIS in rounds: a node joins once every lower-priority neighbour is out, and leaves when a
    // neighbour is in; this is the set the CPU takes greedily in priority order.
    for (int v = threadIdx.x; v < n; v += blockDim.x) { state[v] = 0; dirty[v] = 0; }
    for (int v = threadIdx.x; v <= n; v += blockDim.x) { mark[v] = 0; sizes[v] = 0; }
    for (int v = threadIdx.x & 31; v <= n; v += 32) wmark[v] = 0;
    __syncthreads();
    int undecided = 1;
    while (undecided) {
        for (int v = threadIdx.x; v < n; v += blockDim.x) {
            if (state[v] != 0) continue;
            for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
                if (state[indices[j]] == 1) { state[v] = 2; break; }
            }
        }
        __syncthreads();
        int left = 0;
        for (int v = threadIdx.x; v < n; v += blockDim.x) {
            if (state[v] != 0) continue;
            const unsigned long long pv = mix(base + (unsigned long long)v);
            bool join = true;
            for (long long j = indptr[v]; j < indptr[v + 1] && join; ++j) {
                const int u = indices[j];
                join = state[u] == 2 || mix(base + (unsigned long long)u) > pv;
            }
            if (join) state[v] = 1; else left = 1;
        }
        undecided = __syncthreads_or(left);
    }
    int forbidden = 0;
    for (int v = threadIdx.x; v < n; v += blockDim.x) {
        const bool in = state[v] == 1;
        comp[v] = in ? v + 1 : 0;
        if (in) sizes[v + 1] = 1;
        forbidden += !in;
    }
    for (int off = 16; off > 0; off >>= 1) {
        forbidden += __shfl_down_sync(0xffffffffu, forbidden, off);
    }
    if ((threadIdx.x & 31) == 0) s_node[threadIdx.x >> 5] = forbidden;
    __syncthreads();
    if (threadIdx.x == 0) {
        int total_forbidden = 0;
        for (int w = 0; w < warps; ++w) total_forbidden += s_node[w];
        // Trivial case: too few forbidden; the highest-id MIS nodes go too (objective stays 0).
        for (int v = n - 1; v >= 0 && total_forbidden < k; --v) {
            if (comp[v] != 0) { sizes[comp[v]] = 0; comp[v] = 0; ++total_forbidden; }
        }
        s_node[0] = total_forbidden;
        s_count = 0;
    }
    __syncthreads();
    forbidden = s_node[0];
    unsigned tag = 0;
    if (forbidden > k) {  // every candidate's cost once; afterwards only those that change
        for (int v = threadIdx.x; v < n; v += blockDim.x) {
            if (comp[v] == 0) work[atomicAdd(&s_count, 1)] = v;
        }
        __syncthreads();
        rescore(indptr, indices, comp, sizes, work, s_count, wmark, tag, delta);
    }
    __syncthreads();

    long long total = 0;
    int stamp = 0;
    while (forbidden > k) {
        long long score = BIG_SCORE;
        int node = BIG_NODE;
        for (int x = threadIdx.x; x < n; x += blockDim.x) {
            if (comp[x] != 0) continue;
            const long long s = total + delta[x];
            if (s < score) { score = s; node = x; }  // x ascends: ties keep the smallest
        }
        block_argmin(score, node, s_score, s_node);
        ++stamp;
        if (threadIdx.x == 0) { s_grown = 1; s_count = 0; }
        __syncthreads();
        for (long long j = indptr[node] + threadIdx.x; j < indptr[node + 1]; j += blockDim.x) {
            const int c = comp[indices[j]];
            if (c != 0 && atomicExch(&mark[c], stamp) != stamp) {
                atomicAdd(reinterpret_cast<unsigned long long*>(&s_grown),
                          (unsigned long long)sizes[c]);
            }
        }
        __syncthreads();
        // The grown component: node and the marked components. node + 1 was never a component
        // id (node was forbidden until now), so no stale mark matches it. Every forbidden
        // neighbour of the grown component has a new cost; no other cost changes.
        for (int v = threadIdx.x; v < n; v += blockDim.x) {
            const int c = comp[v];
            if (v != node && (c == 0 || mark[c] != stamp)) continue;
            for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
                const int w = indices[j];
                if (w != node && comp[w] == 0 && atomicExch(&dirty[w], stamp) != stamp) {
                    work[atomicAdd(&s_count, 1)] = w;
                }
            }
        }
        __syncthreads();
        for (int v = threadIdx.x; v < n; v += blockDim.x) {
            const int c = comp[v];
            if (v == node || (c != 0 && mark[c] == stamp)) comp[v] = node + 1;
        }
        if (threadIdx.x == 0) sizes[node + 1] = s_grown;
        __syncthreads();
        rescore(indptr, indices, comp, sizes, work, s_count, wmark, tag, delta);
        total = score;
        --forbidden;
        __syncthreads();
    }
    if (total < best_obj[blockIdx.x] ||
        (total == best_obj[blockIdx.x] && start < best_start[blockIdx.x])) {
        for (int v = threadIdx.x; v < n; v += blockDim.x) best_removed[v] = comp[v] == 0;
        __syncthreads();
        if (threadIdx.x == 0) { best_obj[blockIdx.x] = total; best_start[blockIdx.x] = start; }
    }
}

// ------------------------------------------------------------------------------------------------
// Swap search: one warp per chain (the moves of kernels/cnd_cpu.py's swap_search). Lane 0 walks
// the graph (BFS relabels, Tarjan's DFS); the warp scans the component table and scores every
// removal and every restore candidate in parallel, reducing by argmin with hashed tie-breaks.
// A chain's arrays live in one slice of a pool (layout in chain_of, sizes in cnd_gpu.py).
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
    int chains, char* pool, unsigned long long stride, int iterations, int patience) {
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
