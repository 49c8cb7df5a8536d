// Triangles per node on an acyclic orientation (see triangles/__init__.py).
//
// Per DAG arc a -> b, the common out-neighbours c of a and b (both rows sorted, and every such c
// lies after b in a's row) close the triangles {a, b, c}, each found exactly once. Each triangle
// adds 1 to the support of its three arcs a -> b, a -> c, b -> c (integer atomics: exact in any
// order); a node's triangles are half the support of its arcs (gpu.py). Counting per node here
// put every triangle's atomic on its highest-ranked node, a few hubs, where they queued.
//
// triangles_arcs merges the two rows in one thread per arc; an arc whose rows hold more than
// `limit` entries together (the hubs' rows of skewed graphs) is left to triangles_heavy, where a
// warp takes the arc and its lanes binary-search the shorter row's entries in the longer row, so
// one thread no longer walks thousands of entries while its warp waits.

typedef unsigned long long u64;

extern "C" __global__ void triangles_arcs(
    const long long* __restrict__ dptr, const int* __restrict__ dadj,
    const int* __restrict__ tail, long long arcs, long long limit, u64* support,
    long long* __restrict__ heavy, u64* heavy_size)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < arcs;
         e += (long long)gridDim.x * blockDim.x) {
        const int a = tail[e], b = dadj[e];
        long long i = e + 1;
        const long long i_end = dptr[a + 1];
        long long j = dptr[b];
        const long long j_end = dptr[b + 1];
        if ((i_end - i) + (j_end - j) > limit) {
            heavy[atomicAdd(heavy_size, 1ull)] = e;
            continue;
        }
        u64 found = 0;
        while (i < i_end && j < j_end) {
            const int x = dadj[i], y = dadj[j];
            if (x < y) {
                ++i;
            } else if (y < x) {
                ++j;
            } else {
                atomicAdd(&support[i], 1ull);
                atomicAdd(&support[j], 1ull);
                ++found;
                ++i;
                ++j;
            }
        }
        if (found) atomicAdd(&support[e], found);
    }
}

extern "C" __global__ void triangles_heavy(
    const long long* __restrict__ dptr, const int* __restrict__ dadj,
    const int* __restrict__ tail, const long long* __restrict__ heavy,
    const u64* __restrict__ heavy_size, u64* support)
{
    const int lane = threadIdx.x & 31;
    const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
    const long long size = (long long)*heavy_size;
    for (long long h = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; h < size;
         h += warps) {
        const long long e = heavy[h];
        const int a = tail[e], b = dadj[e];
        long long s0 = e + 1, s1 = dptr[a + 1];    // a's row after b
        long long t0 = dptr[b], t1 = dptr[b + 1];  // b's row
        if (s1 - s0 > t1 - t0) {                   // walk the shorter, search the longer
            long long u = s0; s0 = t0; t0 = u;
            u = s1; s1 = t1; t1 = u;
        }
        u64 found = 0;
        for (long long x = s0 + lane; x < s1; x += 32) {
            const int c = dadj[x];
            long long lo = t0, hi = t1;
            while (lo < hi) {
                const long long mid = (lo + hi) >> 1;
                if (dadj[mid] < c) lo = mid + 1; else hi = mid;
            }
            if (lo < t1 && dadj[lo] == c) {  // arcs a -> c and b -> c, in either range
                atomicAdd(&support[x], 1ull);
                atomicAdd(&support[lo], 1ull);
                ++found;
            }
        }
        for (int offset = 16; offset > 0; offset >>= 1)
            found += __shfl_down_sync(0xffffffffu, found, offset);
        if (lane == 0 && found) atomicAdd(&support[e], found);
    }
}
