// The state of one swap-search chain and its moves (search.cu's kernels run them; one warp per
// chain). A chain's arrays live in one slice of a pool (layout in chain_of, sizes in gpu.py).
// comp[v] is v's component label (1..n), 0 when v is deleted; csize[label] its size.
//
// The walks of a component (Tarjan's DFS, the BFS relabels) are the cost of a move on a large
// component, and one lane walking alone waits on every load in turn (~120 ms a move on
// ca-CondMat's giant, 2,048 chains at once on an H100): the warp walks together, its lanes
// loading 32 neighbours' states at once (one wait per 32 arcs; little gain where degrees are
// small), and the largest piece of a split or merge keeps its label (small to large) so that
// only the smaller ones are walked.
#pragma once
#include "critical_nodes.cuh"

#define FULL_MASK 0xffffffffu

enum { CTL_OBJ, CTL_FREE, CTL_ITER, CTL_RNG, CTL_BEST, CTL_STALL, CTL_STAMP, CTL_ND };

struct Chain {
    long long *ctl, *edge, *cut_pairs;
    int *comp, *csize, *freel, *dlist, *dpos, *tabu, *best, *queue, *disc, *low, *sub, *parent,
        *cut_nodes, *rep;
    unsigned *seen;
};

__device__ Chain chain_of(char* pool, size_t stride, int c, int n, int k, int block_max) {
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
    ch.dlist = take4(k + max(block_max, 1));  // room for a block of deletions
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

// The whole warp: give root's component a fresh label by BFS, the lanes over each node's row;
// returns its size (in every lane).
__device__ int relabel(const long long* indptr, const int* indices, Chain& ch, int root) {
    const int lane = threadIdx.x & 31;
    const unsigned stamp = (unsigned)(ch.ctl[CTL_STAMP] + 1);
    const long long top = ch.ctl[CTL_FREE] - 1;
    const int fresh = ch.freel[top];
    __syncwarp();
    if (lane == 0) {
        ch.ctl[CTL_STAMP] += 1;
        ch.ctl[CTL_FREE] = top;
        ch.seen[root] = stamp;
        ch.queue[0] = root;
    }
    __syncwarp();
    int head = 0, tail = 1;
    while (head < tail) {
        const int v = ch.queue[head++];
        if (lane == 0) ch.comp[v] = fresh;
        const long long end = indptr[v + 1];
        for (long long base = indptr[v]; base < end; base += 32) {
            const long long a = base + lane;
            int w = -1;
            bool take = false;
            if (a < end) {  // a row holds distinct neighbours: no two lanes take one node
                w = indices[a];
                take = ch.comp[w] != 0 && ch.seen[w] != stamp;
            }
            const unsigned votes = __ballot_sync(FULL_MASK, take);
            if (take) {
                ch.seen[w] = stamp;
                ch.queue[tail + __popc(votes & ((1u << lane) - 1))] = w;
            }
            tail += __popc(votes);
        }
        __syncwarp();
    }
    if (lane == 0) {
        ch.csize[fresh] = tail;
        ch.rep[fresh] = root;
    }
    __syncwarp();
    return tail;
}

__device__ void release(Chain& ch, int c) {
    ch.csize[c] = 0;
    ch.freel[ch.ctl[CTL_FREE]++] = c;
}

// The whole warp: label every component of the residual graph from the deleted list (labels in
// the order of their smallest node, as one lane scanning the nodes would give them).
__device__ void load(const long long* indptr, const int* indices, Chain& ch, int n, int k,
                     const int* nodes) {
    const int lane = threadIdx.x & 31;
    for (int v = lane; v < n; v += 32) { ch.comp[v] = -1; ch.dpos[v] = -1; }
    __syncwarp();
    for (int i = lane; i < k; i += 32) {
        ch.comp[nodes[i]] = 0;
        ch.dlist[i] = nodes[i];
        ch.dpos[nodes[i]] = i;
    }
    for (int c = 1 + lane; c <= n; c += 32) { ch.csize[c] = 0; ch.freel[n - c] = c; }
    if (lane == 0) ch.ctl[CTL_FREE] = n;
    __syncwarp();
    long long obj = 0;
    for (int base = 0; base < n; base += 32) {
        while (true) {  // relabel() treats comp != 0 as present; -1: present, unlabelled
            const int r = base + lane;
            const unsigned open = __ballot_sync(FULL_MASK, r < n && ch.comp[r] == -1);
            if (open == 0) break;
            obj += pairs(relabel(indptr, indices, ch, base + __ffs(open) - 1));
        }
    }
    if (lane == 0) {
        ch.ctl[CTL_OBJ] = obj;
        ch.ctl[CTL_ND] = k;
    }
    __syncwarp();
}

// The whole warp: delete v (slot nd of dlist); its component splits into pieces.
__device__ void delete_node(const long long* indptr, const int* indices, Chain& ch, int v) {
    const int lane = threadIdx.x & 31;
    const int old = ch.comp[v];
    const long long nd = ch.ctl[CTL_ND];
    long long delta = -pairs(ch.csize[old]);
    __syncwarp();
    if (lane == 0) {
        ch.comp[v] = 0;
        ch.dlist[nd] = v;
        ch.dpos[v] = (int)nd;
        ch.ctl[CTL_ND] = nd + 1;
    }
    __syncwarp();
    for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
        const int w = indices[j];
        if (ch.comp[w] == old) delta += pairs(relabel(indptr, indices, ch, w));
    }
    if (lane == 0) {
        release(ch, old);  // only now: a fresh piece must not reuse the old label
        ch.ctl[CTL_OBJ] += delta;
    }
    __syncwarp();
}

// Lane 0 only: put u back; its neighbours' components merge. The largest keeps its label and
// only u and the others are walked (small to large: the giant is not relabelled at each move).
__device__ void restore_node(const long long* indptr, const int* indices, Chain& ch, int u) {
    const long long nd = ch.ctl[CTL_ND];
    const int last = ch.dlist[nd - 1];
    ch.dlist[ch.dpos[u]] = last;
    ch.dpos[last] = ch.dpos[u];
    ch.dpos[u] = -1;
    ch.ctl[CTL_ND] = nd - 1;
    int keep = 0;
    for (long long j = indptr[u]; j < indptr[u + 1]; ++j) {
        const int c = ch.comp[indices[j]];
        if (c != 0 && (keep == 0 || ch.csize[c] > ch.csize[keep])) keep = c;
    }
    if (keep == 0) {  // no neighbour left: u alone, a fresh label (no pairs)
        const int fresh = ch.freel[--ch.ctl[CTL_FREE]];
        ch.comp[u] = fresh;
        ch.csize[fresh] = 1;
        ch.rep[fresh] = u;
        return;
    }
    long long delta = -pairs(ch.csize[keep]);
    for (long long j = indptr[u]; j < indptr[u + 1]; ++j) {
        const int c = ch.comp[indices[j]];
        if (c != 0 && c != keep && ch.csize[c] != 0) {
            delta -= pairs(ch.csize[c]);
            release(ch, c);
        }
    }
    // Breadth-first from u through the present nodes not yet labelled keep (the released
    // components' members, whose old labels are free but not reused before this ends).
    ch.comp[u] = keep;
    ch.queue[0] = u;
    int head = 0, tail = 1;
    while (head < tail) {
        const int v = ch.queue[head++];
        for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
            const int w = indices[j];
            const int c = ch.comp[w];
            if (c != 0 && c != keep) { ch.comp[w] = keep; ch.queue[tail++] = w; }
        }
    }
    ch.csize[keep] += tail;
    delta += pairs(ch.csize[keep]);
    ch.ctl[CTL_OBJ] += delta;
}

// Lane 0 only, right after dfs_cuts of v's component (root its root): the pieces v's deletion
// leaves are its DFS children w with low[w] >= disc[v] (sub[w] nodes each) and, unless v is the
// root, the rest (total - 1 - cut_nodes[v] nodes, parent[v] among them). Stores the children
// as (size << 32 | w) in ch.edge (free after the walk) and returns how many; *rest its size.
__device__ int cut_pieces(const long long* indptr, const int* indices, Chain& ch, int v,
                          long long total, long long* rest) {
    int count = 0;
    for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
        const int w = indices[j];
        if (ch.comp[w] != 0 && ch.parent[w] == v && ch.low[w] >= ch.disc[v]) {
            ch.edge[count++] = ((long long)ch.sub[w] << 32) | (long long)w;
        }
    }
    *rest = total - 1 - ch.cut_nodes[v];
    return count;
}

// The whole warp: delete v (slot nd of dlist) with its pieces known (cut_pieces; pieces and rest
// the same in every lane): the largest keeps the label and only the others are walked.
__device__ void delete_cut(const long long* indptr, const int* indices, Chain& ch, int v,
                           int root, int pieces, long long rest, int above) {
    const int lane = threadIdx.x & 31;
    const int old = ch.comp[v];
    const long long nd = ch.ctl[CTL_ND];
    long long delta = -pairs(ch.csize[old]);
    __syncwarp();
    if (lane == 0) {
        ch.comp[v] = 0;
        ch.dlist[nd] = v;
        ch.dpos[v] = (int)nd;
        ch.ctl[CTL_ND] = nd + 1;
    }
    __syncwarp();
    int largest = -1;  // -1: the rest
    long long kept = rest;
    for (int i = 0; i < pieces; ++i) {
        const long long size = ch.edge[i] >> 32;
        if (size > kept) { kept = size; largest = i; }
    }
    if (kept > 0) {
        for (int i = 0; i < pieces; ++i) {
            const int w = (int)(ch.edge[i] & 0xffffffffLL);
            if (i != largest) delta += pairs(relabel(indptr, indices, ch, w));
        }
        if (largest >= 0 && rest > 0) delta += pairs(relabel(indptr, indices, ch, above));
        delta += pairs(kept);
    }
    if (lane == 0) {
        if (kept == 0) {  // v was alone
            release(ch, old);
        } else {
            ch.csize[old] = (int)kept;
            ch.rep[old] = largest < 0 ? root : (int)(ch.edge[largest] & 0xffffffffLL);
        }
        ch.ctl[CTL_OBJ] += delta;
    }
    __syncwarp();
}

// The whole warp: Tarjan's DFS of root's component; members go to queue. Returns their number.
// The lanes load 32 arcs' neighbours at once: the arcs before the first undiscovered neighbour
// are back edges (low), that neighbour is the next tree edge, and the scan of v resumes after it
// when the walk comes back (loading again: the states may have changed below): the very order
// of one lane's walk.
__device__ int dfs_cuts(const long long* indptr, const int* indices, Chain& ch, int root) {
    const int lane = threadIdx.x & 31;
    if (lane == 0) {
        ch.disc[root] = 0; ch.low[root] = 0; ch.sub[root] = 1; ch.parent[root] = -1;
        ch.edge[root] = indptr[root]; ch.cut_pairs[root] = 0; ch.cut_nodes[root] = 0;
        ch.queue[0] = root;
    }
    __syncwarp();
    int count = 1, clock = 1, v = root;
    while (true) {
        const long long j = ch.edge[v], end = indptr[v + 1];
        if (j < end) {
            const long long a = j + lane;
            int w = -1, d = 0;
            bool present = false;
            if (a < end) {
                w = indices[a];
                present = ch.comp[w] != 0;
                if (present) d = ch.disc[w];
            }
            const unsigned fresh = __ballot_sync(FULL_MASK, present && d < 0);
            const int stop = fresh ? __ffs(fresh) - 1 : 32;
            const int up = ch.parent[v];
            int low = (lane < stop && present && d >= 0 && w != up) ? d : 0x7fffffff;
            for (int off = 16; off > 0; off >>= 1) {
                low = min(low, __shfl_xor_sync(FULL_MASK, low, off));
            }
            const int x = __shfl_sync(FULL_MASK, w, stop & 31);
            __syncwarp();
            if (lane == 0) {
                if (low < ch.low[v]) ch.low[v] = low;
                ch.edge[v] = fresh ? j + stop + 1 : min(j + 32, end);
                if (fresh) {
                    ch.disc[x] = clock; ch.low[x] = clock; ch.sub[x] = 1; ch.parent[x] = v;
                    ch.edge[x] = indptr[x]; ch.cut_pairs[x] = 0; ch.cut_nodes[x] = 0;
                    ch.queue[count] = x;
                }
            }
            __syncwarp();
            if (fresh) { ++clock; ++count; v = x; }
        } else {
            const int p = ch.parent[v];
            if (p < 0) break;
            __syncwarp();
            if (lane == 0) {
                ch.sub[p] += ch.sub[v];
                ch.low[p] = min(ch.low[p], ch.low[v]);
                if (ch.low[v] >= ch.disc[p]) {
                    ch.cut_pairs[p] += pairs(ch.sub[v]);
                    ch.cut_nodes[p] += ch.sub[v];
                }
            }
            __syncwarp();
            v = p;
        }
    }
    return count;
}

// The whole warp, right after dfs_cuts of component label (its members in queue): delete the
// `block` non-tabu members whose single removals leave the fewest pairs (the walk's gains: the
// later picks' are estimates, mostly exact as they lie far apart in a large component; one in
// random_move a random member instead), then relabel the component's pieces once.
// One walk for `block` exchanges on a giant component (the CPU's block moves, search.py).
__device__ void block_delete(const long long* indptr, const int* indices, Chain& ch, int label,
                             int members, long long total, int block, int it, int random_move,
                             unsigned long long& rng) {
    const int lane = threadIdx.x & 31;
    const long long first = ch.ctl[CTL_ND];
    for (int b = 0; b < block; ++b) {
        const unsigned long long salt = next_rand(rng);
        long long left = BIG_SCORE;
        unsigned long long tie = 0;
        int v = BIG_NODE;
        for (int i = lane; i < members; i += 32) {
            const int x = ch.queue[i];
            if (ch.comp[x] == 0 || ch.tabu[x] > it) continue;
            const long long lx = ch.cut_pairs[x] + pairs(total - 1 - ch.cut_nodes[x]);
            const unsigned long long tx = mix(salt ^ (unsigned long long)x);
            if (lx < left || (lx == left && tx < tie)) { left = lx; tie = tx; v = x; }
        }
        warp_argmin(left, tie, v);
        if (v == BIG_NODE) break;  // the same in every lane
        if (random_move > 0) {
            const unsigned long long roll = next_rand(rng), pick = next_rand(rng);
            if (roll % (unsigned long long)random_move == 0) {
                const int w = ch.queue[pick % (unsigned long long)members];
                if (ch.comp[w] != 0 && ch.tabu[w] <= it) v = w;
            }
        }
        const unsigned long long tenure = next_rand(rng);
        __syncwarp();
        if (lane == 0) {
            const long long nd = ch.ctl[CTL_ND];
            ch.comp[v] = 0;
            ch.dlist[nd] = v;
            ch.dpos[v] = (int)nd;
            ch.ctl[CTL_ND] = nd + 1;
            ch.tabu[v] = it + 1 + (int)(tenure % 3);
        }
        __syncwarp();
    }
    for (int i = lane; i < members; i += 32) ch.disc[ch.queue[i]] = -1;  // for the next walk
    __syncwarp();
    const long long last = ch.ctl[CTL_ND];
    if (last > first) {  // the pieces, each walked once (a walk gives its nodes a new label)
        long long delta = -pairs(total);
        for (long long i = first; i < last; ++i) {
            const int v = ch.dlist[i];
            for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
                const int w = indices[j];
                if (ch.comp[w] == label) delta += pairs(relabel(indptr, indices, ch, w));
            }
        }
        if (lane == 0) {
            release(ch, label);  // every piece touches a deleted node: all relabelled
            ch.ctl[CTL_OBJ] += delta;
        }
    }
    __syncwarp();
}
