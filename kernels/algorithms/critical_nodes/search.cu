// Critical node detection: the swap search (kernels/algorithms/critical_nodes/gpu.py drives it).
// One warp per chain (the moves of search.py's swap_search; the chain's state and moves in
// chain.cuh): the warp walks the graph (Tarjan's DFS, BFS relabels) and scans the component
// table, and scores every removal and every restore candidate in parallel, reducing by argmin
// with hashed tie-breaks.
#include "chain.cuh"

extern "C" __global__ void cnd_search_init(
    const long long* __restrict__ indptr, const int* __restrict__ indices, int n, int k,
    int chains, char* pool, unsigned long long stride, int block_max,
    const unsigned char* starts_removed, int nstarts, unsigned long long seed) {
    const int c = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (c >= chains) return;
    Chain ch = chain_of(pool, stride, c, n, k, block_max);
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
    }
    __syncwarp();
    load(indptr, indices, ch, n, k, ch.best);
    if (lane == 0) ch.ctl[CTL_BEST] = ch.ctl[CTL_OBJ];
}

extern "C" __global__ void cnd_search_run(
    const long long* __restrict__ indptr, const int* __restrict__ indices, int n, int k,
    int chains, char* pool, unsigned long long stride, int block_max, int iterations,
    int patience, int random_move, int block_nodes) {
    const int c = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (c >= chains) return;  // whole warps: chains are counted in warps
    Chain ch = chain_of(pool, stride, c, n, k, block_max);
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
        const int members = dfs_cuts(indptr, indices, ch, root);
        __syncwarp();
        const long long total = ch.csize[label];
        const int block = min((int)(total / block_nodes), block_max);
        if (block > 1) {
            block_delete(indptr, indices, ch, label, members, total, block, it, random_move, rng);
        } else {
            const unsigned long long salt = next_rand(rng);
            long long left = BIG_SCORE;
            unsigned long long tie = 0;
            int v = BIG_NODE;
            for (int i = lane; i < members; i += 32) {
                const int x = ch.queue[i];
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
            int pieces = 0;
            long long rest = 0;
            if (lane == 0) pieces = cut_pieces(indptr, indices, ch, v, total, &rest);
            pieces = __shfl_sync(0xffffffffu, pieces, 0);
            rest = __shfl_sync(0xffffffffu, rest, 0);
            const int above = ch.parent[v];
            __syncwarp();
            for (int i = lane; i < members; i += 32) ch.disc[ch.queue[i]] = -1;  // next walk
            __syncwarp();
            delete_cut(indptr, indices, ch, v, root, pieces, rest, above);
            const unsigned long long tenure = next_rand(rng);  // every lane's generator in step
            if (lane == 0) ch.tabu[v] = it + 1 + (int)(tenure % 3);
            __syncwarp();
        }
        // The non-tabu deleted node whose return joins the fewest pairs, until k are left.
        while (ch.ctl[CTL_ND] > k) {
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
        }
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
            if (lane == 0) ch.ctl[CTL_STALL] = 0;
            __syncwarp();
            load(indptr, indices, ch, n, k, ch.best);
            const int swaps = 1 + (int)(next_rand(rng) % (unsigned long long)(1 + k / 20));
            for (int s = 0; s < swaps; ++s) {
                const int x = (int)(next_rand(rng) % (unsigned long long)n);
                const unsigned long long pick = next_rand(rng);
                __syncwarp();
                if (ch.comp[x] == 0) continue;
                __syncwarp();
                delete_node(indptr, indices, ch, x);
                if (lane == 0) {
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
