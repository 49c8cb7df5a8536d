// Brandes betweenness by hop counts for a batch of up to 32 * S sources (kernels/algorithms/
// betweenness/hops.py drives it; weighted paths keep betweenness.cu).
//
// State is node-major with a stride of W = 32 * S (entry v * W + b for node v and the batch's
// source b): level (T: uint8 or uint32, ~0 unreached), sigma (float64 path counts, overwritten by
// x = (1 + delta) / sigma once the node's dependency is known) and delta (float64). A warp works
// on one node, lane l on sources l * S .. l * S + S - 1, so one vector load gives a lane its S
// levels and a warp a neighbour's W levels (S = 4, uint8: one 128-byte line serves 128 sources).
//
// One pass down finds the levels and the path counts: a warp per node of level d's frontier list
// pushes along its out-arcs to the entries that are unreached or reached at d + 1 in the same
// launch, adds its path counts to theirs (atomics on integers held exactly: any order gives the
// same sums) and sets the arc's bits in a tight mask (W bits an arc, in CSR order). Nodes newly
// reached are appended to list d + 1 once (a stamp). The dependencies then go up level by level
// over the same lists, reading each arc's tight mask (S words, one load that the whole warp
// shares) instead of every neighbour's W levels, and x only where an arc is tight. A warp takes its row's arcs
// GROUP at a time, their loads issued before any is used, so that a lane has several random
// loads in flight rather than one.
//
// Rows over `hub` arcs are cut into items (hops.py), a block of 256 threads each; the dependency
// sums of an item's warps are added in warp order and the items' in item order (bc_hop_finish),
// so every floating-point sum has a fixed order.

typedef long long i64;
#define FULL 0xffffffffu
#define LANES 32
#define GROUP 4
#define HUB_THREADS 256
// Blocks of hops.py's ROW_THREADS (2 warps: a warp on a long row holds few others' places) and
// 16 of them an SM: 64 registers a thread (at 2 blocks of 256 threads, 108, push took 1.4x).
#define ROW_THREADS 64
#define ROW_BLOCKS 16

template <typename T>
__device__ __forceinline__ T unseen() {
    return (T)~(T)0;
}

// A lane's S levels, loaded as one vector.
template <typename T, int S>
struct alignas(sizeof(T) * S) Pack {
    T v[S];
};

template <typename T, int S>
__device__ __forceinline__ Pack<T, S> load_levels(const T* level, int w) {
    return *reinterpret_cast<const Pack<T, S>*>(level + (i64)w * (LANES * S) +
                                                (threadIdx.x % LANES) * S);
}

// The lane's sources (bits 0 .. S - 1) whose level at node v is `depth`.
template <typename T, int S>
__device__ __forceinline__ unsigned at_depth(const T* level, int v, int depth) {
    const Pack<T, S> p = load_levels<T, S>(level, v);
    unsigned act = 0;
#pragma unroll
    for (int i = 0; i < S; ++i) act |= (p.v[i] == (T)depth ? 1u : 0u) << i;
    return act;
}

// A node's path counts and x are stored source-interleaved: entry v * W + i * 32 + lane for the
// lane's source i (its level sits at v * W + lane * S + i), so that one instruction of a warp
// adds to or reads 32 consecutive doubles of a neighbour.
template <int S>
__device__ __forceinline__ i64 slot(int v, int i) {
    return (i64)v * (LANES * S) + i * LANES + threadIdx.x % LANES;
}

// An arc's tight mask: S words, bit l of word i for the source of lane l's bit i.
template <int S>
struct alignas(4 * S) Mask {
    unsigned w[S];
};

// Top-down: the lane's sources `act` at v (path counts `mine`) reach their out-neighbours in
// [start, end) that are unreached or reached at depth + 1 in this launch; those arcs are tight.
// An unreached entry gets depth + 1 (a neighbour given a new level is appended to next_list
// once per level: stamp), every tight entry the path count of v added (integers: exact in any
// order), and the arc's mask the sources' bits (lane j keeps arc base + j's mask: one load
// and one store of 32 masks).
template <typename T, int S>
__device__ __forceinline__ void push_arcs(const int* __restrict__ indices, i64 start, i64 end,
                                          unsigned act, const double* mine, T* level,
                                          int depth, int* stamp, int* next_list,
                                          int* next_count, double* sigma, Mask<S>* tight) {
    const int lane = threadIdx.x % LANES;
    for (i64 base = start; base < end; base += LANES) {
        const int cnt = (int)min((i64)LANES, end - base);
        const int here = lane < cnt ? indices[base + lane] : 0;
        Mask<S> held;
        if (lane < cnt) held = tight[base + lane];
        bool dirty = false;
        for (int k0 = 0; k0 < cnt; k0 += GROUP) {
            int w[GROUP];
            Pack<T, S> lv[GROUP];
#pragma unroll
            for (int q = 0; q < GROUP; ++q) {
                w[q] = __shfl_sync(FULL, here, (k0 + q) % LANES);
                if (act && k0 + q < cnt) lv[q] = load_levels<T, S>(level, w[q]);
            }
#pragma unroll
            for (int q = 0; q < GROUP; ++q) {
                if (k0 + q >= cnt) break;  // the same for the whole warp
                bool fresh = false;
                unsigned bits = 0;
                const i64 at = (i64)w[q] * (LANES * S) + lane * S;
#pragma unroll
                for (int i = 0; i < S; ++i)
                    if (((act >> i) & 1u) &&
                        (lv[q].v[i] == unseen<T>() || lv[q].v[i] == (T)(depth + 1))) {
                        if (lv[q].v[i] == unseen<T>()) {
                            level[at + i] = (T)(depth + 1);
                            fresh = true;
                        }
                        atomicAdd(&sigma[slot<S>(w[q], i)], mine[i]);
                        bits |= 1u << i;
                    }
                if (!__any_sync(FULL, bits)) continue;
#pragma unroll
                for (int i = 0; i < S; ++i) {
                    const unsigned word = __ballot_sync(FULL, (bits >> i) & 1u);
                    if (lane == k0 + q) held.w[i] |= word;
                }
                dirty |= lane == k0 + q;
                if (__ballot_sync(FULL, fresh) && lane == 0 &&
                    atomicExch(&stamp[w[q]], depth + 1) != depth + 1)
                    next_list[atomicAdd(next_count, 1)] = w[q];
            }
        }
        if (dirty) tight[base + lane] = held;
    }
}

// total[i] += x[u, i] over the arcs [start, end) (CSR order) tight for the lane's source i of
// `act` (u one level deeper than the row's node for that source).
template <int S>
__device__ __forceinline__ void gather_arcs(const int* __restrict__ indices, i64 start, i64 end,
                                            unsigned act, const Mask<S>* __restrict__ tight,
                                            const double* x, double* total) {
    const int lane = threadIdx.x % LANES;
    for (i64 base = start; base < end; base += LANES) {
        const int cnt = (int)min((i64)LANES, end - base);
        const int here = lane < cnt ? indices[base + lane] : 0;
        for (int k0 = 0; k0 < cnt; k0 += GROUP) {
            int w[GROUP];
            Mask<S> m[GROUP];
#pragma unroll
            for (int q = 0; q < GROUP; ++q) {
                w[q] = __shfl_sync(FULL, here, (k0 + q) % LANES);
                if (act && k0 + q < cnt) m[q] = tight[base + k0 + q];
            }
            if (!act) continue;
#pragma unroll
            for (int q = 0; q < GROUP; ++q) {
                if (k0 + q >= cnt) break;
#pragma unroll
                for (int i = 0; i < S; ++i)
                    if ((act >> i) & (m[q].w[i] >> lane) & 1u) total[i] += x[slot<S>(w[q], i)];
            }
        }
    }
}

// The entry's dependency delta from its sum of x over the tight arcs, and x = (1 + delta) /
// sigma in place of its path count (read by the level above).
__device__ __forceinline__ void settle(i64 at, double total, double* sigma, double* delta) {
    const double s = sigma[at];
    const double d = s * total;
    delta[at] = d;
    sigma[at] = (1.0 + d) / s;
}

// The item's arcs split into contiguous parts, one per warp of the block.
__device__ __forceinline__ void warp_part(i64 start, i64 end, i64* lo, i64* hi) {
    const int warps = blockDim.x / LANES, w = threadIdx.x / LANES;
    const i64 part = (end - start + warps - 1) / warps;
    *lo = min(end, start + w * part);
    *hi = min(end, *lo + part);
}

// The lane's sources at `depth` at v, and their path counts.
template <typename T, int S>
__device__ __forceinline__ unsigned frontier(const T* level, const double* sigma, int v,
                                             int depth, double* mine) {
    const unsigned act = at_depth<T, S>(level, v, depth);
#pragma unroll
    for (int i = 0; i < S; ++i) mine[i] = (act >> i) & 1u ? sigma[slot<S>(v, i)] : 0.0;
    return act;
}

template <typename T, int S>
__device__ void push(const i64* __restrict__ indptr, const int* __restrict__ indices,
                     const int* __restrict__ list, int count, i64 hub, T* level, int depth,
                     int* stamp, int* next_list, int* next_count, double* sigma,
                     Mask<S>* tight) {
    const i64 g = ((i64)blockIdx.x * blockDim.x + threadIdx.x) / LANES;
    if (g >= count) return;
    const int v = list[g];
    const i64 start = indptr[v], end = indptr[v + 1];
    if (end - start > hub) return;
    double mine[S];
    const unsigned act = frontier<T, S>(level, sigma, v, depth, mine);
    push_arcs<T, S>(indices, start, end, act, mine, level, depth, stamp, next_list, next_count,
                    sigma, tight);
}

template <typename T, int S>
__device__ void push_hub(const int* __restrict__ indices, const int* __restrict__ item_node,
                         const i64* __restrict__ item_start, const i64* __restrict__ item_end,
                         T* level, int depth, int* stamp, int* next_list, int* next_count,
                         double* sigma, Mask<S>* tight) {
    const int v = item_node[blockIdx.x];
    double mine[S];
    const unsigned act = frontier<T, S>(level, sigma, v, depth, mine);
    if (!__syncthreads_or(act)) return;
    i64 lo, hi;
    warp_part(item_start[blockIdx.x], item_end[blockIdx.x], &lo, &hi);
    push_arcs<T, S>(indices, lo, hi, act, mine, level, depth, stamp, next_list, next_count,
                    sigma, tight);
}

// Dependencies of the frontier list's nodes at `depth` (rows up to `hub` arcs) over their
// tight out-arcs.
template <typename T, int S>
__device__ void gather(const i64* __restrict__ indptr, const int* __restrict__ indices,
                       const int* __restrict__ list, int count, i64 hub,
                       const T* __restrict__ level, int depth,
                       const Mask<S>* __restrict__ tight, double* sigma, double* delta) {
    const i64 g = ((i64)blockIdx.x * blockDim.x + threadIdx.x) / LANES;
    if (g >= count) return;
    const int v = list[g];
    const i64 start = indptr[v], end = indptr[v + 1];
    if (end - start > hub) return;
    const unsigned act = at_depth<T, S>(level, v, depth);
    if (!__any_sync(FULL, act)) return;
    double total[S];
#pragma unroll
    for (int i = 0; i < S; ++i) total[i] = 0.0;
    gather_arcs<S>(indices, start, end, act, tight, sigma, total);
#pragma unroll
    for (int i = 0; i < S; ++i)
        if ((act >> i) & 1u) settle(slot<S>(v, i), total[i], sigma, delta);
}

// An item's part of a hub's sum (per source, warps added in order), for bc_hop_finish.
template <typename T, int S>
__device__ void gather_hub(const int* __restrict__ indices, const int* __restrict__ item_node,
                           const i64* __restrict__ item_start, const i64* __restrict__ item_end,
                           const T* __restrict__ level, int depth,
                           const Mask<S>* __restrict__ tight, const double* __restrict__ sigma,
                           double* __restrict__ part) {
    __shared__ double sums[HUB_THREADS / LANES][LANES * S];
    const int v = item_node[blockIdx.x], lane = threadIdx.x % LANES;
    const unsigned act = at_depth<T, S>(level, v, depth);
    if (!__syncthreads_or(act)) return;
    i64 lo, hi;
    warp_part(item_start[blockIdx.x], item_end[blockIdx.x], &lo, &hi);
    double total[S];
#pragma unroll
    for (int i = 0; i < S; ++i) total[i] = 0.0;
    gather_arcs<S>(indices, lo, hi, act, tight, sigma, total);
#pragma unroll
    for (int i = 0; i < S; ++i) sums[threadIdx.x / LANES][i * LANES + lane] = total[i];
    __syncthreads();
    for (int j = threadIdx.x; j < LANES * S; j += blockDim.x) {
        double sum = 0.0;
        for (int w = 0; w < (int)(blockDim.x / LANES); ++w) sum += sums[w][j];
        part[(i64)blockIdx.x * (LANES * S) + j] = sum;
    }
}

// Thread per (hub, source): the hub's item sums in item order, settled where it is at depth.
template <typename T, int S>
__device__ void finish(const int* __restrict__ hubs, int count, const int* __restrict__ first,
                       const T* __restrict__ level, int depth, const double* __restrict__ part,
                       double* sigma, double* delta) {
    const i64 g = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= (i64)count * (LANES * S)) return;
    const int h = (int)(g / (LANES * S)), j = (int)(g % (LANES * S));
    if (level[(i64)hubs[h] * (LANES * S) + j] != (T)depth) return;
    const int at = (j % S) * LANES + j / S;  // source j's place in sigma, delta and part
    double total = 0.0;
    for (int i = first[h]; i < first[h + 1]; ++i) total += part[(i64)i * (LANES * S) + at];
    settle((i64)hubs[h] * (LANES * S) + at, total, sigma, delta);
}

// reached[b] += the nodes where source b (< batch) has a level: a thread per (node, source) of
// a grid-stride loop (consecutive threads read a node's consecutive levels), counted per block in
// shared memory, then one atomic per block and source. blockDim.x is a multiple of 32 * S.
template <typename T, int S>
__device__ void count_reached(int n, int batch, const T* __restrict__ level,
                              unsigned long long* reached) {
    __shared__ unsigned counts[LANES * S];
    const int slot = threadIdx.x % (LANES * S), per_block = blockDim.x / (LANES * S);
    for (int j = threadIdx.x; j < LANES * S; j += blockDim.x) counts[j] = 0;
    __syncthreads();
    unsigned mine = 0;
    if (slot < batch)
        for (i64 v = (i64)blockIdx.x * per_block + threadIdx.x / (LANES * S); v < n;
             v += (i64)gridDim.x * per_block)
            mine += level[v * (LANES * S) + slot] != unseen<T>() ? 1u : 0u;
    atomicAdd(&counts[slot], mine);
    __syncthreads();
    for (int j = threadIdx.x; j < batch; j += blockDim.x)
        if (counts[j]) atomicAdd(&reached[j], (unsigned long long)counts[j]);
}

// bc[v] += the batch's contributions at v: a warp per node, lane l adding its S sources' (their
// levels one vector load, their deltas at their interleaved places, see slot: 32 consecutive
// doubles a load), then the lanes' sums in a fixed tree, so the order is the same every run.
// (A thread per node walking its W entries in turn took 12 of rmat22's 262 ms.)
template <typename T, int S>
__device__ void accumulate(int n, int batch, const int* __restrict__ sources,
                           const T* __restrict__ level, const double* __restrict__ delta,
                           const i64* __restrict__ reached, int endpoints,
                           double* __restrict__ bc) {
    const i64 g = ((i64)blockIdx.x * blockDim.x + threadIdx.x) / LANES;
    if (g >= n) return;
    const int v = (int)g, lane = threadIdx.x % LANES;
    const Pack<T, S> p = load_levels<T, S>(level, v);
    double total = 0.0;
#pragma unroll
    for (int i = 0; i < S; ++i) {
        const int b = lane * S + i;
        if (b >= batch || p.v[i] == unseen<T>()) continue;
        if (v == sources[b]) {
            if (endpoints) total += (double)(reached[b] - 1);
        } else {
            const double d = delta[slot<S>(v, i)];
            total += endpoints ? d + 1.0 : d;
        }
    }
#pragma unroll
    for (int offset = LANES / 2; offset > 0; offset /= 2)
        total += __shfl_down_sync(FULL, total, offset);
    if (lane == 0) bc[v] += total;
}

// The kernels of one level type T and S sources per lane, named bc_hop_<step>_<SUF>.
#define HOP_KERNELS(T, S, SUF)                                                                 \
    extern "C" __global__ void __launch_bounds__(ROW_THREADS, ROW_BLOCKS) bc_hop_push_##SUF(   \
        const i64* indptr, const int* indices, const int* list, int count, i64 hub, T* level,  \
        int depth, int* stamp, int* next_list, int* next_count, double* sigma,                 \
        Mask<S>* tight) {                                                                      \
        push<T, S>(indptr, indices, list, count, hub, level, depth, stamp, next_list,          \
                   next_count, sigma, tight);                                                  \
    }                                                                                          \
    extern "C" __global__ void bc_hop_push_hub_##SUF(                                          \
        const int* indices, const int* item_node, const i64* item_start, const i64* item_end,  \
        T* level, int depth, int* stamp, int* next_list, int* next_count, double* sigma,       \
        Mask<S>* tight) {                                                                      \
        push_hub<T, S>(indices, item_node, item_start, item_end, level, depth, stamp,          \
                       next_list, next_count, sigma, tight);                                   \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(ROW_THREADS, ROW_BLOCKS) bc_hop_gather_##SUF( \
        const i64* indptr, const int* indices, const int* list, int count, i64 hub,            \
        const T* level, int depth, const Mask<S>* tight, double* sigma, double* delta) {       \
        gather<T, S>(indptr, indices, list, count, hub, level, depth, tight, sigma, delta);    \
    }                                                                                          \
    extern "C" __global__ void bc_hop_gather_hub_##SUF(                                        \
        const int* indices, const int* item_node, const i64* item_start, const i64* item_end,  \
        const T* level, int depth, const Mask<S>* tight, const double* sigma, double* part) { \
        gather_hub<T, S>(indices, item_node, item_start, item_end, level, depth, tight, sigma, \
                         part);                                                                \
    }                                                                                          \
    extern "C" __global__ void bc_hop_finish_##SUF(const int* hubs, int count,                 \
                                                   const int* first, const T* level,           \
                                                   int depth, const double* part,              \
                                                   double* sigma, double* delta) {             \
        finish<T, S>(hubs, count, first, level, depth, part, sigma, delta);                    \
    }                                                                                          \
    extern "C" __global__ void bc_hop_accumulate_##SUF(int n, int batch, const int* sources,   \
                                                       const T* level, const double* delta,    \
                                                       const i64* reached, int endpoints,      \
                                                       double* bc) {                           \
        accumulate<T, S>(n, batch, sources, level, delta, reached, endpoints, bc);             \
    }                                                                                          \
    extern "C" __global__ void bc_hop_reached_##SUF(int n, int batch, const T* level,          \
                                                    unsigned long long* reached) {             \
        count_reached<T, S>(n, batch, level, reached);                                         \
    }

HOP_KERNELS(unsigned char, 1, u8x1)
HOP_KERNELS(unsigned char, 2, u8x2)
HOP_KERNELS(unsigned char, 4, u8x4)
HOP_KERNELS(unsigned int, 1, u32x1)
HOP_KERNELS(unsigned int, 2, u32x2)
HOP_KERNELS(unsigned int, 4, u32x4)
