// Triangles per node on the (degree, id) orientation, by hash probes (see triangles/__init__.py).
//
// The out-lists come unsorted and in node ids, in place of the CSR (common/dag.cu): out-list of
// v = out[indptr[v] .. indptr[v] + od[v]). A triangle a < b < c (in the order) is the arc a -> b
// with c in both out-lists, N+(a) and N+(b); each arc is taken once, at its endpoint whose
// out-list is the longer (ties: at the tail), the "pivot" v: its out-list goes in a hash table in
// shared memory, and the other endpoint's ("partner" u) out-list, the shorter, is probed in it,
// one probe per entry. On rmat22 that is 11.8 G probes, against 43 G entries for merges of both
// lists of every arc, and a probe is a shared-memory load where a merge step is a global one.
//
// A pivot's partners are the neighbours u in its CSR row for which it is the pivot (`mine`), 32
// at a time, a lane each; a warp probes the lists of its 32 partners as one run, 32 x UNROLL
// entries a round (all loads of a round in flight at once), whatever their lengths (on R-MAT most
// are 1 to a few hundred entries; rmat22 on the H100: 54-56 ms for the kernels, 57 with a lane
// per list of up to 32 entries and a warp per longer one). A hit c credits the triangle to its
// three nodes: c through the hit count of its slot (shared, flushed once per pivot), u through
// its lane's count (shared, flushed per 32 partners; counting a lane's hits per partner in a
// register first cost 5 ms more, its branches) and v once per warp.
//
// A pivot of out-degree k gets a table of the first power of two >= 4k slots (load at most 1/4:
// about 1.4 slots per missed probe, most probes miss); tables are at most `slots` large, and a
// longer out-list is hashed in pieces of slots / 4 entries (the partners probed once per piece).

typedef unsigned long long u64;

#define EMPTY (-1)
#define ALL 0xffffffffu
#define MAX_WARPS 8  // warps of a block of triangles_warps

// UNROLL (entries a lane loads before probing them) comes from gpu.py as a -D option.

__device__ __forceinline__ unsigned slot_of(int x, int bits) {
    return ((unsigned)x * 2654435769u) >> (32 - bits);  // Fibonacci hashing: top bits
}

// The pivot of the arc between v and its neighbour u is v: u's out-list is the shorter, or as
// long and v the tail (u above v in (degree, id)).
__device__ __forceinline__ bool mine(int u, int ou, const int* __restrict__ deg, int v, int ov,
                                     int dv) {
    if (ou != ov) return ou < ov;
    const int du = deg[u];
    return du > dv || (du == dv && u > v);
}

// Probe c: on a hit count it on its slot.
__device__ __forceinline__ unsigned probe(const int* keys, unsigned* hits, int bits, int c) {
    const unsigned mask = (1u << bits) - 1;
    for (unsigned h = slot_of(c, bits);; h = (h + 1) & mask) {
        const int k = keys[h];
        if (k == c) {
            atomicAdd(&hits[h], 1u);
            return 1;
        }
        if (k == EMPTY) return 0;
    }
}

__device__ __forceinline__ u64 warp_sum(u64 value) {
    for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(ALL, value, offset);
    return value;
}

template <int WARPS>
__device__ __forceinline__ void group_sync() {
    if (WARPS == 1) __syncwarp(); else __syncthreads();
}

// The triangles of pivot v, by a group of WARPS warps (the warp, or the block) sharing the
// table keys/hits of `slots` slots.
template <int WARPS>
__device__ __forceinline__ void pivot(
    int v, const long long* __restrict__ indptr, const int* __restrict__ indices,
    const int* __restrict__ out, const int* __restrict__ od, const int* __restrict__ deg,
    int* keys, unsigned* hits, int slots, u64* count, unsigned* partner_hits)
{
    const int lane = threadIdx.x & 31;
    const int rank = WARPS == 1 ? lane : threadIdx.x, width = 32 * WARPS;
    const int warp = WARPS == 1 ? 0 : threadIdx.x >> 5;
    const int ov = od[v], dv = deg[v];
    const long long row0 = indptr[v], row1 = indptr[v + 1];
    const int* list = out + row0;
    const int piece = slots / 4;
    u64 total = 0;  // this lane's triangles at v
    for (int p0 = 0; p0 < ov; p0 += piece) {
        const int k = min(ov - p0, piece);
        int bits = 5;
        while ((1 << bits) < 4 * k) ++bits;
        const int size = 1 << bits;
        for (int s = rank; s < size; s += width) {
            keys[s] = EMPTY;
            hits[s] = 0;
        }
        group_sync<WARPS>();
        for (int i = rank; i < k; i += width) {
            const int x = list[p0 + i];
            unsigned h = slot_of(x, bits);
            while (atomicCAS(&keys[h], EMPTY, x) != EMPTY) h = (h + 1) & (size - 1);
        }
        group_sync<WARPS>();
        for (long long j0 = row0 + 32 * warp; j0 < row1; j0 += width) {
            int u = 0, ou = 0;
            long long start = 0;
            if (j0 + lane < row1) {
                u = indices[j0 + lane];
                ou = od[u];
                start = indptr[u];  // loaded beside od[u], not after it
                if (ou && !mine(u, ou, deg, v, ov, dv)) ou = 0;
            }
            // The lanes' lists as one run of `all` entries (exclusive prefix `pre`), 32 lanes
            // x UNROLL entries a round; entry i belongs to the last lane with pre <= i.
            int pre = ou;
            for (int o = 1; o < 32; o <<= 1) {
                const int x = __shfl_up_sync(ALL, pre, o);
                if (lane >= o) pre += x;
            }
            const int all = __shfl_sync(ALL, pre, 31);
            pre -= ou;
            partner_hits[lane] = 0;
            __syncwarp();
            for (int base = 0; base < all; base += 32 * UNROLL) {
                int c[UNROLL], owner[UNROLL];
#pragma unroll
                for (int r = 0; r < UNROLL; ++r) {
                    const int i = base + 32 * r + lane;
                    int at = 0;
#pragma unroll
                    for (int step = 16; step; step >>= 1)
                        if (__shfl_sync(ALL, pre, at + step) <= i) at += step;
                    const long long from = __shfl_sync(ALL, start, at);
                    const int first = __shfl_sync(ALL, pre, at);
                    owner[r] = at;
                    c[r] = i < all ? out[from + (i - first)] : EMPTY;
                }
#pragma unroll
                for (int r = 0; r < UNROLL; ++r)
                    if (c[r] != EMPTY && probe(keys, hits, bits, c[r])) {
                        atomicAdd(&partner_hits[owner[r]], 1u);
                        ++total;
                    }
            }
            __syncwarp();
            if (partner_hits[lane]) atomicAdd(&count[u], (u64)partner_hits[lane]);
            __syncwarp();
        }
        group_sync<WARPS>();
        for (int s = rank; s < size; s += width)
            if (hits[s]) atomicAdd(&count[keys[s]], (u64)hits[s]);
        group_sync<WARPS>();  // before the next piece clears the table
    }
    total = warp_sum(total);
    if (lane == 0 && total) atomicAdd(&count[v], total);
}

// A warp per pivot (grid-stride over `pivots`), each warp's table `slots` slots of the block's
// dynamic shared memory.
extern "C" __global__ void triangles_warps(
    const long long* __restrict__ indptr, const int* __restrict__ indices,
    const int* __restrict__ out, const int* __restrict__ od, const int* __restrict__ deg,
    const long long* __restrict__ pivots, long long count_pivots, int slots, u64* count)
{
    extern __shared__ int table[];
    __shared__ unsigned lane_hits[32 * MAX_WARPS];
    const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    int* keys = table + 2 * slots * warp;
    unsigned* hits = (unsigned*)(keys + slots);
    for (long long p = (long long)blockIdx.x * warps + warp; p < count_pivots;
         p += (long long)gridDim.x * warps)
        pivot<1>((int)pivots[p], indptr, indices, out, od, deg, keys, hits, slots, count,
                 lane_hits + 32 * warp);
}

// A block of WARPS warps per pivot, its table `slots` slots of dynamic shared memory.
#define PIVOT_BLOCKS(NAME, WARPS)                                                              \
    extern "C" __global__ void __launch_bounds__(32 * WARPS) NAME(                             \
        const long long* __restrict__ indptr, const int* __restrict__ indices,                 \
        const int* __restrict__ out, const int* __restrict__ od, const int* __restrict__ deg,  \
        const long long* __restrict__ pivots, int slots, u64* count)                           \
    {                                                                                          \
        extern __shared__ int table[];                                                         \
        __shared__ unsigned lane_hits[32 * WARPS];                                             \
        pivot<WARPS>((int)pivots[blockIdx.x], indptr, indices, out, od, deg, table,            \
                     (unsigned*)(table + slots), slots, count,                                 \
                     lane_hits + 32 * (threadIdx.x >> 5));                                     \
    }

PIVOT_BLOCKS(triangles_blocks4, 4)
PIVOT_BLOCKS(triangles_blocks8, 8)

// The summary's sums in one pass (see driver.result): per node its clustering 2t / (d (d - 1))
// (0 below two neighbours) into `local`, and into sums[0..5] the triangle counts, d (d - 1), and
// the four 32-bit limbs of the clustering values (driver.mean_limbs: limb k of c is
// floor(c 2^(32 (k + 1))) mod 2^32, c <= 1 so limb 0 needs no mod). Integer sums: the same in
// any order, hence the CPU's values.
extern "C" __global__ void triangles_summary(
    const long long* __restrict__ triangles, const long long* __restrict__ degrees, long long n,
    double* __restrict__ local, u64* sums)
{
    u64 acc[6] = {0, 0, 0, 0, 0, 0};
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long t = triangles[i], d = degrees[i], pairs = d * (d - 1);
        const double c = pairs > 0 ? (double)(2 * t) / (double)pairs : 0.0;
        local[i] = c;
        acc[0] += (u64)t;
        acc[1] += (u64)pairs;
        acc[2] += (u64)floor(ldexp(c, 32));
        acc[3] += (u64)fmod(floor(ldexp(c, 64)), 4294967296.0);
        acc[4] += (u64)fmod(floor(ldexp(c, 96)), 4294967296.0);
        acc[5] += (u64)fmod(floor(ldexp(c, 128)), 4294967296.0);
    }
    __shared__ u64 part[6][32];  // per warp, then added by warp 0: one atomic per block
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
#pragma unroll
    for (int k = 0; k < 6; ++k) {
        const u64 total = warp_sum(acc[k]);
        if (lane == 0) part[k][warp] = total;
    }
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int k = 0; k < 6; ++k) {
            const u64 total = warp_sum(lane < warps ? part[k][lane] : 0);
            if (lane == 0 && total) atomicAdd(&sums[k], total);
        }
    }
}
