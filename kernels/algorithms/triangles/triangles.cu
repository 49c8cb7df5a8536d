// Triangles per node on an acyclic orientation (see triangles/__init__.py).
//
// Per DAG arc a -> b, the common out-neighbours c of a and b (both rows sorted, and every such c
// lies after b in a's row) close the triangles {a, b, c}, each found exactly once. The triangle
// is credited to its three nodes through a's row: `found` to a (one atomic per arc), `found` to
// b through its arc's slot e and 1 to c through the slot i of a -> c; a slot p's count goes to
// node dadj[p] at the end. Crediting a per-node or per-arc counter in global memory per triangle
// cost 2 global atomics each (4.2 G on rmat22, queued on hubs and over 256 MB of counters).
//
// A block takes a chunk of whole rows (gpu.py cuts them, about CHUNK arcs each), so the slots e
// and i of its triangles lie in its own arc range: they are counted in shared memory and flushed
// with one global atomic per slot. Slots past the shared range (rows longer than a chunk) and the
// arcs of the queue's overflow go to `spill` (global, flushed by triangles_spill).
//
// Light arcs (the shorter of their two lists, a's row after b and b's row, holds at most `limit`
// entries) are taken by one thread (intersect::thread_lists: a merge, or binary searches of the
// shorter's entries in the longer); on R-MAT most arcs pair a list of a few entries with one of
// hundreds. Heavy ones (both lists long: hubs) are queued, then a warp takes each (heavy_arc,
// intersect::warp_lists), so that the lanes of a warp are not held by one long merge.

#include "intersect.cuh"

typedef unsigned long long u64;

// THREADS (block width), SLOTS (shared counters of a chunk), QUEUE (heavy arcs a block keeps;
// more go to the global overflow) and RATIO (see heavy_arc) come from gpu.py as -D options.

// Credit `by` to the node of slot p: in the block's shared counters when p is in range.
__device__ __forceinline__ void credit(unsigned* slots, long long lo, long long hi, long long p,
                                       unsigned by, unsigned* spill) {
    if (p < hi) atomicAdd(&slots[p - lo], by);
    else atomicAdd(&spill[p], by);
}

// The triangles of heavy arc e (a -> b), found by one warp (intersect::warp_lists); credits as
// in the notes, `hi` = lo when the slots are all global (the overflow kernel).
__device__ __forceinline__ void heavy_arc(
    const long long* __restrict__ dptr, const int* __restrict__ dadj, long long e, int a,
    unsigned* slots, long long lo, long long hi, unsigned* spill, u64* count)
{
    const int b = dadj[e];
    unsigned found = 0;
    intersect::warp_lists(dadj, e + 1, dptr[a + 1], dptr[b], dptr[b + 1], RATIO,
                          [&](long long i, long long) {
                              credit(slots, lo, hi, i, 1u, spill);  // the slot of a -> c
                              ++found;
                          });
    found = intersect::warp_sum(found);
    if ((threadIdx.x & 31) == 0 && found) {
        credit(slots, lo, hi, e, found, spill);
        atomicAdd(&count[a], (u64)found);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS) triangles_chunks(
    const long long* __restrict__ dptr, const int* __restrict__ dadj,
    const int* __restrict__ tail, const long long* __restrict__ bounds, long long limit,
    unsigned* spill, u64* count, long long* __restrict__ overflow, u64* overflow_size)
{
    __shared__ unsigned slots[SLOTS];
    __shared__ unsigned queue[QUEUE];
    __shared__ unsigned queued;
    const long long lo = bounds[blockIdx.x], end = bounds[blockIdx.x + 1];
    const long long hi = min(end, lo + SLOTS);  // slots [lo, hi) are shared
    for (int p = threadIdx.x; p < hi - lo; p += blockDim.x) slots[p] = 0;
    if (threadIdx.x == 0) queued = 0;
    __syncthreads();
    for (long long e = lo + threadIdx.x; e < end; e += blockDim.x) {
        const int a = tail[e], b = dadj[e];
        const long long s0 = e + 1, s1 = dptr[a + 1];    // a's row after b
        const long long t0 = dptr[b], t1 = dptr[b + 1];  // b's row
        const long long rest = s1 - s0, row = t1 - t0;
        if (rest == 0 || row == 0) continue;
        if (min(rest, row) > limit) {
            const unsigned q = atomicAdd(&queued, 1u);
            if (q < QUEUE) queue[q] = (unsigned)(e - lo);
            else overflow[atomicAdd(overflow_size, 1ull)] = e;
            continue;
        }
        unsigned found = 0;
        intersect::thread_lists(dadj, s0, s1, t0, t1, [&](long long i, long long) {
            credit(slots, lo, hi, i, 1u, spill);  // the slot of a -> c
            ++found;
        });
        if (found) {
            credit(slots, lo, hi, e, found, spill);
            atomicAdd(&count[a], (u64)found);
        }
    }
    __syncthreads();
    const unsigned heavy = min(queued, (unsigned)QUEUE);
    for (unsigned q = threadIdx.x >> 5; q < heavy; q += blockDim.x >> 5) {
        const long long e = lo + queue[q];
        heavy_arc(dptr, dadj, e, tail[e], slots, lo, hi, spill, count);
    }
    __syncthreads();
    for (int p = threadIdx.x; p < hi - lo; p += blockDim.x)
        if (slots[p]) atomicAdd(&count[dadj[lo + p]], (u64)slots[p]);
}

// The heavy arcs that did not fit a block's queue, a warp each, every slot global.
extern "C" __global__ void triangles_overflow(
    const long long* __restrict__ dptr, const int* __restrict__ dadj,
    const int* __restrict__ tail, const long long* __restrict__ overflow,
    const u64* __restrict__ overflow_size, unsigned* spill, u64* count)
{
    const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
    const long long size = (long long)*overflow_size;
    for (long long h = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; h < size;
         h += warps) {
        const long long e = overflow[h];
        heavy_arc(dptr, dadj, e, tail[e], nullptr, 0, 0, spill, count);
    }
}

// The global slots' counts to their nodes.
extern "C" __global__ void triangles_spill(
    const int* __restrict__ dadj, const unsigned* __restrict__ spill, long long arcs, u64* count)
{
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < arcs;
         p += (long long)gridDim.x * blockDim.x)
        if (spill[p]) atomicAdd(&count[dadj[p]], (u64)spill[p]);
}
