// All-pairs shortest paths (driven by kernels/apsp.py; compiled through CuPy's NVRTC, no headers).
//
//   * apsp_bfs_level: the per-level step of the unweighted all-pairs BFS. The bit-parallel sweep
//     itself (ms_seed / ms_pull, 64 sources per word) is kernels/cuda/centrality.cu's; this kernel
//     takes the bits found at one level and writes them into the distance rows (or, without a
//     matrix, reduces them to per-node distance sums and eccentricities).
//   * fw_diag / fw_panel / fw_rest: blocked Floyd-Warshall on a padded TILE-multiple matrix,
//     min-plus tiles in shared memory, three phases per block row. The schedule fixes every
//     value (each update is one rounded addition and an exact minimum), so the CPU version in
//     kernels/apsp.py, which follows the same schedule, gets the same bits.
//   * apsp_bf_sweep: batched Bellman-Ford (one thread per (vertex, source), sources contiguous),
//     in place until a sweep changes nothing: the least fixpoint, i.e. Dijkstra's distances.

typedef long long i64;
typedef unsigned long long u64;

// ---- unweighted: one BFS level ------------------------------------------------------------------

// Thread t = w * n + v (v fastest, so a warp writes neighbouring columns of one row). Each bit b
// of next[v * words + w] is the batch's source 64 w + b, which reached v at `level`. With write,
// that source's row of dist (rows `stride` wide, dist pointing at the batch's first row) gets the
// level at column v; without, sum[v] and ecc[v] take it (distances are symmetric, so a node's
// sums over all batches are its own sums as a source). *any is set when some bit was found.
extern "C" __global__ void apsp_bfs_level(const u64* __restrict__ next, int n, int words,
                                          int level, int write, int* __restrict__ dist,
                                          i64 stride, i64* __restrict__ sum,
                                          int* __restrict__ ecc, int* any) {
    const i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x;
    if (t >= (i64)n * words) return;
    const int w = (int)(t / n);
    const int v = (int)(t - (i64)w * n);
    u64 x = next[(i64)v * words + w];
    if (!x) return;
    *any = 1;
    if (!write) {  // the words of v are other threads of this launch: atomics
        atomicAdd((u64*)&sum[v], (u64)__popcll(x) * (u64)level);
        atomicMax(&ecc[v], level);
        return;
    }
    int* row = dist + (i64)64 * w * stride + v;
    while (x) {
        const int b = __ffsll((long long)x) - 1;
        x &= x - 1;
        row[(i64)b * stride] = level;
    }
}

// ---- weighted: blocked Floyd-Warshall -----------------------------------------------------------

#define TILE 64
#define KC 32  // k-chunk of the min-plus product held in shared memory at a time

// A 64 x 64 block of 256 threads: thread (ty, tx) owns rows ty + 16 a and columns tx + 16 b,
// a, b < 4, so that a warp's shared-memory reads of a row are 16 consecutive words.
template <typename T>
__device__ __forceinline__ void load_block(T (*s)[TILE + 1], const T* d, i64 stride, int row0,
                                           int col0) {
    for (int e = threadIdx.x; e < TILE * TILE; e += blockDim.x) {
        const int i = e / TILE, j = e % TILE;
        s[i][j] = d[(i64)(row0 + i) * stride + col0 + j];
    }
}

template <typename T>
__device__ __forceinline__ void store_block(T (*s)[TILE + 1], T* d, i64 stride, int row0,
                                            int col0) {
    for (int e = threadIdx.x; e < TILE * TILE; e += blockDim.x) {
        const int i = e / TILE, j = e % TILE;
        d[(i64)(row0 + i) * stride + col0 + j] = s[i][j];
    }
}

// c = min(c, a[i][k] + b[k][j]) for k = 0..63 in order, one k per step with a barrier between:
// step k never changes row k of b or column k of a (their diagonal entry is 0), so every step
// reads only values of the previous step, whichever thread writes first.
template <typename T>
__device__ __forceinline__ void closure_steps(T (*c)[TILE + 1], T (*a)[TILE + 1],
                                              T (*b)[TILE + 1]) {
    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    for (int k = 0; k < TILE; ++k) {
#pragma unroll
        for (int p = 0; p < 4; ++p) {
            const T aik = a[ty + 16 * p][k];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const T cand = aik + b[k][tx + 16 * q];
                T* out = &c[ty + 16 * p][tx + 16 * q];
                if (cand < *out) *out = cand;
            }
        }
        __syncthreads();
    }
}

// Phase 1: the pivot block k closes over itself.
template <typename T>
__device__ void fw_diag_impl(T* d, i64 stride, int kb) {
    __shared__ T s[TILE][TILE + 1];
    const int k0 = kb * TILE;
    load_block(s, d, stride, k0, k0);
    __syncthreads();
    closure_steps(s, s, s);
    store_block(s, d, stride, k0, k0);
}

// Phase 2: block j of the pivot row (blockIdx.y == 0) or block i of the pivot column (== 1),
// each against the closed pivot block, one k at a time.
// Two blocks (66 KB in double): dynamic shared memory, its limit raised by the host.
template <typename T>
__device__ void fw_panel_impl(T* d, i64 stride, int kb) {
    extern __shared__ __align__(16) unsigned char panel_smem[];
    T (*pivot)[TILE + 1] = reinterpret_cast<T (*)[TILE + 1]>(panel_smem);
    T (*s)[TILE + 1] = pivot + TILE;
    const int other = blockIdx.x < kb ? blockIdx.x : blockIdx.x + 1;
    const int k0 = kb * TILE, o0 = other * TILE;
    const bool row = blockIdx.y == 0;
    load_block(pivot, d, stride, k0, k0);
    if (row) load_block(s, d, stride, k0, o0); else load_block(s, d, stride, o0, k0);
    __syncthreads();
    if (row) closure_steps(s, pivot, s); else closure_steps(s, s, pivot);
    if (row) store_block(s, d, stride, k0, o0); else store_block(s, d, stride, o0, k0);
}

// Phase 3: every block (i, j) off the pivot row and column: c = min(c, a (min,+) b) with a the
// block (i, k) and b the block (k, j), both final for this round; k in chunks of KC.
template <typename T>
__device__ void fw_rest_impl(T* d, i64 stride, int kb) {
    __shared__ T a[TILE][KC + 1];  // a[i][k]
    __shared__ T b[KC][TILE];      // b[k][j]
    const int bi = blockIdx.y < kb ? blockIdx.y : blockIdx.y + 1;
    const int bj = blockIdx.x < kb ? blockIdx.x : blockIdx.x + 1;
    const int i0 = bi * TILE, j0 = bj * TILE, k0 = kb * TILE;
    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    T acc[4][4];
#pragma unroll
    for (int p = 0; p < 4; ++p)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[p][q] = d[(i64)(i0 + ty + 16 * p) * stride + j0 + tx + 16 * q];
    for (int kc = 0; kc < TILE; kc += KC) {
        for (int e = threadIdx.x; e < TILE * KC; e += blockDim.x) {
            const int i = e / KC, k = e % KC;
            a[i][k] = d[(i64)(i0 + i) * stride + k0 + kc + k];
            const int kk = e / TILE, j = e % TILE;
            b[kk][j] = d[(i64)(k0 + kc + kk) * stride + j0 + j];
        }
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < KC; ++k) {
            T bk[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) bk[q] = b[k][tx + 16 * q];
#pragma unroll
            for (int p = 0; p < 4; ++p) {
                const T aik = a[ty + 16 * p][k];
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const T cand = aik + bk[q];
                    acc[p][q] = cand < acc[p][q] ? cand : acc[p][q];
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int p = 0; p < 4; ++p)
#pragma unroll
        for (int q = 0; q < 4; ++q) d[(i64)(i0 + ty + 16 * p) * stride + j0 + tx + 16 * q] = acc[p][q];
}

// ---- weighted: batched Bellman-Ford --------------------------------------------------------------

// w_dist is (n, sources): entry v * sources + s is the distance from source s to v. Thread
// (v, s) pulls over v's arcs; values only ever drop to another path's sum, so reading a
// neighbour's entry mid-update (old or new) keeps every value a path sum, and the loop ends at
// the least fixpoint. *changed is set when some entry dropped.
template <typename T>
__device__ void bf_sweep_impl(const i64* __restrict__ indptr, const int* __restrict__ indices,
                              const T* __restrict__ weight, int n, int sources, T* w_dist,
                              int* changed) {
    const i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x;
    if (t >= (i64)n * sources) return;
    const int v = (int)(t / sources);
    const int s = (int)(t - (i64)v * sources);
    const T old = w_dist[t];
    T best = old;
    for (i64 j = indptr[v]; j < indptr[v + 1]; ++j) {
        const T cand = ((volatile T*)w_dist)[(i64)indices[j] * sources + s] + weight[j];
        best = cand < best ? cand : best;
    }
    if (best < old) {
        w_dist[t] = best;
        *changed = 1;
    }
}

#define APSP_KERNELS(T, suffix)                                                                \
    extern "C" __global__ void __launch_bounds__(256) fw_diag_##suffix(T* d, i64 stride,      \
                                                                      int kb) {               \
        fw_diag_impl<T>(d, stride, kb);                                                       \
    }                                                                                         \
    extern "C" __global__ void __launch_bounds__(256) fw_panel_##suffix(T* d, i64 stride,     \
                                                                       int kb) {              \
        fw_panel_impl<T>(d, stride, kb);                                                      \
    }                                                                                         \
    extern "C" __global__ void __launch_bounds__(256) fw_rest_##suffix(T* d, i64 stride,      \
                                                                      int kb) {               \
        fw_rest_impl<T>(d, stride, kb);                                                       \
    }                                                                                         \
    extern "C" __global__ void apsp_bf_sweep_##suffix(const i64* indptr, const int* indices,  \
                                                      const T* weight, int n, int sources,    \
                                                      T* w_dist, int* changed) {              \
        bf_sweep_impl<T>(indptr, indices, weight, n, sources, w_dist, changed);               \
    }

APSP_KERNELS(float, float32)
APSP_KERNELS(double, float64)
