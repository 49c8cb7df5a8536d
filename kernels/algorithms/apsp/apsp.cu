// All-pairs shortest paths (driven by kernels/algorithms/apsp/gpu.py; compiled through CuPy's
// NVRTC, no headers).
//
//   * apsp_bfs_level: the per-level step of the unweighted all-pairs BFS. The bit-parallel sweep
//     itself (ms_seed / ms_pull, 64 sources per word) is kernels/algorithms/common/bitset_bfs.cu;
//     this kernel takes the bits found at one level and writes them into the distance rows (or,
//     without a matrix, reduces them to per-node distance sums and eccentricities).
//   * fw_diag / fw_panel / fw_rest: blocked Floyd-Warshall on a padded TILE-multiple matrix,
//     min-plus tiles in shared memory, three phases per block row. The schedule fixes every
//     value (each update is one rounded addition and an exact minimum), so the CPU version in
//     kernels/algorithms/apsp/cpu.py, which follows the same schedule, gets the same bits.
//     Integer weights run the same schedule on an integer matrix (int32, or uint16 pairs in
//     32-bit words), phase 3 with Hopper's fused add-min (DPX); fw_finish writes the float result.
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

// Four consecutive values, moved as one 16-byte (float) or 32-byte (double) access.
template <typename T>
struct alignas(4 * sizeof(T)) Quad {
    T v[4];
};

template <typename T>
__device__ __forceinline__ Quad<T> load_quad(const T* p) {
    return *reinterpret_cast<const Quad<T>*>(p);
}

template <typename T>
__device__ __forceinline__ void store_quad(T* p, const Quad<T>& q) {
    *reinterpret_cast<Quad<T>*>(p) = q;
}

// min(c, a + b) in two instructions (FADD, FMNMX); the same value as `a + b < c ? a + b : c`,
// distances being never NaN (weights are finite and nonnegative).
__device__ __forceinline__ float min_plus(float c, float a, float b) { return fminf(c, a + b); }
__device__ __forceinline__ double min_plus(double c, double a, double b) { return fmin(c, a + b); }

// Phase 3: every block (i, j) off the pivot row and column: c = min(c, a (min,+) b) with a the
// block (i, k) and b the block (k, j), both final for this round; k in chunks of KC. Thread
// (ty, tx) owns the 4 x 4 cell of rows 4 ty.. and columns 4 tx..: each k costs it two quad
// reads of shared memory (a quad of a's row per 4 k, a quad of b's row per k) for 16 updates,
// where one word per read took four times as many. The minimum over k is exact, so the order
// of the k does not change a bit of the result.
template <typename T>
__device__ void fw_rest_impl(T* d, i64 stride, int kb) {
    __shared__ __align__(32) T a[TILE][KC + 4];  // a[i][k]; rows padded, still whole quads
    __shared__ __align__(32) T b[KC][TILE];      // b[k][j]
    const int bi = blockIdx.y < kb ? blockIdx.y : blockIdx.y + 1;
    const int bj = blockIdx.x < kb ? blockIdx.x : blockIdx.x + 1;
    const int i0 = bi * TILE, j0 = bj * TILE, k0 = kb * TILE;
    const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
    T acc[4][4];
#pragma unroll
    for (int p = 0; p < 4; ++p) {
        const Quad<T> c = load_quad(&d[(i64)(i0 + 4 * ty + p) * stride + j0 + 4 * tx]);
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[p][q] = c.v[q];
    }
    for (int kc = 0; kc < TILE; kc += KC) {
        for (int e = threadIdx.x; e < TILE * KC / 4; e += blockDim.x) {
            const int i = e / (KC / 4), kq = 4 * (e % (KC / 4));
            store_quad(&a[i][kq], load_quad(&d[(i64)(i0 + i) * stride + k0 + kc + kq]));
            const int kk = e / (TILE / 4), jq = 4 * (e % (TILE / 4));
            store_quad(&b[kk][jq], load_quad(&d[(i64)(k0 + kc + kk) * stride + j0 + jq]));
        }
        __syncthreads();
#pragma unroll 2
        for (int k = 0; k < KC; k += 4) {
            Quad<T> ak[4];
#pragma unroll
            for (int p = 0; p < 4; ++p) ak[p] = load_quad(&a[4 * ty + p][k]);
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) {
                const Quad<T> bk = load_quad(&b[k + kk][4 * tx]);
#pragma unroll
                for (int p = 0; p < 4; ++p)
#pragma unroll
                    for (int q = 0; q < 4; ++q) {
                        acc[p][q] = min_plus(acc[p][q], ak[p].v[kk], bk.v[q]);
                    }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int p = 0; p < 4; ++p) {
        Quad<T> c;
#pragma unroll
        for (int q = 0; q < 4; ++q) c.v[q] = acc[p][q];
        store_quad(&d[(i64)(i0 + 4 * ty + p) * stride + j0 + 4 * tx], c);
    }
}

// ---- weighted, integer weights: Floyd-Warshall phase 3 on DPX -----------------------------------
//
// gpu.py picks an integer matrix when every weight is an integer and every distance is provably
// below the kind's INF, the entry standing for "no path yet": int32 with INF = 2^30 - 1, or uint16
// with INF = 0x7FFF, two to a 32-bit word. Entries never exceed INF, so a + b never overflows
// (2 INF fits), and min(c, a + b) with c <= INF equals min(c, min(a + b, INF)): the schedule
// computes every distance saturated at INF, i.e. exactly below it, and INF for no path. Phases 1
// and 2 are the templates above on int / unsigned short (a + b <= 2 INF fits in the type).

// min(a + b, c) on one 32-bit word: one int32 lane, or two uint16 lanes (one instruction each
// on sm_90: VIADDMNMX).
template <int LANES>
__device__ __forceinline__ unsigned add_min(unsigned a, unsigned b, unsigned c);

template <>
__device__ __forceinline__ unsigned add_min<1>(unsigned a, unsigned b, unsigned c) {
    return (unsigned)__viaddmin_s32((int)a, (int)b, (int)c);
}

template <>
__device__ __forceinline__ unsigned add_min<2>(unsigned a, unsigned b, unsigned c) {
    return __viaddmin_u16x2(a, b, c);
}

// Phase 3 as fw_rest, on words: a block holds the TILE x TILE values of c (TILE / LANES words a
// row) and 256 / LANES threads, each a cell of 4 rows x 4 words, so every thread does 16 fused
// add-mins per k from one quad of b's row k and a quarter quad of its rows of a. a is kept one
// word per value, the value repeated in every lane (an a[i][k] is added to every lane of a word
// of b). The whole k range of the round is staged at once: 33 KB (int32) or 25 KB (uint16).
template <int LANES>
__device__ void fw_rest_dpx_impl(unsigned* d, i64 stride, int kb) {
    constexpr int WORDS = TILE / LANES;  // words in a row of a tile
    constexpr int CELLS = WORDS / 4;     // cells across a tile
    __shared__ __align__(16) unsigned a[TILE][TILE + 4];  // a[i][k]; rows padded, whole quads
    __shared__ __align__(16) unsigned b[TILE][WORDS];     // b[k][word]
    const int bi = blockIdx.y < kb ? blockIdx.y : blockIdx.y + 1;
    const int bj = blockIdx.x < kb ? blockIdx.x : blockIdx.x + 1;
    const int i0 = bi * TILE, w0 = bj * WORDS, k0 = kb * TILE;
    const int ty = threadIdx.x / CELLS, tx = threadIdx.x % CELLS;
    Quad<unsigned> acc[4];  // issued first: the global loads overlap the staging below
#pragma unroll
    for (int p = 0; p < 4; ++p) {
        acc[p] = load_quad(&d[(i64)(i0 + 4 * ty + p) * stride + w0 + 4 * tx]);
    }
    for (int e = threadIdx.x; e < TILE * CELLS; e += blockDim.x) {
        const int i = e / CELLS, wq = 4 * (e % CELLS);
        const Quad<unsigned> w = load_quad(&d[(i64)(i0 + i) * stride + k0 / LANES + wq]);
        const Quad<unsigned> r = load_quad(&d[(i64)(k0 + i) * stride + w0 + wq]);
        store_quad(&b[i][wq], r);
        if constexpr (LANES == 1) {
            store_quad(&a[i][wq], w);
        } else {  // uint16 value v of a: v in both halves (v * 0x10001)
            Quad<unsigned> lo, hi;
#pragma unroll
            for (int q = 0; q < 2; ++q) {
                lo.v[2 * q] = (w.v[q] & 0xffffu) * 0x10001u;
                lo.v[2 * q + 1] = (w.v[q] >> 16) * 0x10001u;
                hi.v[2 * q] = (w.v[q + 2] & 0xffffu) * 0x10001u;
                hi.v[2 * q + 1] = (w.v[q + 2] >> 16) * 0x10001u;
            }
            store_quad(&a[i][2 * wq], lo);
            store_quad(&a[i][2 * wq + 4], hi);
        }
    }
    __syncthreads();
#pragma unroll 4
    for (int k = 0; k < TILE; k += 4) {
        Quad<unsigned> ak[4];
#pragma unroll
        for (int p = 0; p < 4; ++p) ak[p] = load_quad(&a[4 * ty + p][k]);
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
            const Quad<unsigned> bk = load_quad(&b[k + kk][4 * tx]);
#pragma unroll
            for (int p = 0; p < 4; ++p)
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    acc[p].v[q] = add_min<LANES>(ak[p].v[kk], bk.v[q], acc[p].v[q]);
                }
        }
    }
#pragma unroll
    for (int p = 0; p < 4; ++p) {
        store_quad(&d[(i64)(i0 + 4 * ty + p) * stride + w0 + 4 * tx], acc[p]);
    }
}

// The float result of an integer matrix: out (n x n, contiguous) = d's top-left n x n (rows
// `stride` values apart), INF read as `unreachable` (inf).
template <typename I, typename F>
__device__ void fw_finish_impl(const I* __restrict__ d, i64 stride, int n, int inf,
                               F unreachable, F* __restrict__ out) {
    const i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x;
    if (t >= (i64)n * n) return;
    const i64 i = t / n;
    const int v = d[i * stride + (t - i * n)];
    out[t] = v == inf ? unreachable : (F)v;
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

// Phases 1 and 2 of one matrix dtype.
#define FW_CLOSURE_KERNELS(T, suffix)                                                          \
    extern "C" __global__ void __launch_bounds__(256) fw_diag_##suffix(T* d, i64 stride,      \
                                                                      int kb) {               \
        fw_diag_impl<T>(d, stride, kb);                                                       \
    }                                                                                         \
    extern "C" __global__ void __launch_bounds__(256) fw_panel_##suffix(T* d, i64 stride,     \
                                                                       int kb) {              \
        fw_panel_impl<T>(d, stride, kb);                                                      \
    }

// Float distances: all three phases and Bellman-Ford.
#define APSP_KERNELS(T, suffix)                                                                \
    FW_CLOSURE_KERNELS(T, suffix)                                                              \
    extern "C" __global__ void __launch_bounds__(256) fw_rest_##suffix(T* d, i64 stride,      \
                                                                      int kb) {               \
        fw_rest_impl<T>(d, stride, kb);                                                       \
    }                                                                                         \
    extern "C" __global__ void apsp_bf_sweep_##suffix(const i64* indptr, const int* indices,  \
                                                      const T* weight, int n, int sources,    \
                                                      T* w_dist, int* changed) {              \
        bf_sweep_impl<T>(indptr, indices, weight, n, sources, w_dist, changed);               \
    }

// Integer distances (I, LANES values to a word): phases 1 and 2 on values, phase 3 on words
// (stride in words), and the float result (fw_finish_<I>_<F>).
#define FW_INTEGER_KERNELS(I, suffix, LANES)                                                   \
    FW_CLOSURE_KERNELS(I, suffix)                                                              \
    extern "C" __global__ void __launch_bounds__(256 / LANES) fw_rest_##suffix(             \
        unsigned* d, i64 stride, int kb) {                                                     \
        fw_rest_dpx_impl<LANES>(d, stride, kb);                                                \
    }                                                                                          \
    extern "C" __global__ void fw_finish_##suffix##_float32(const I* d, i64 stride, int n,    \
                                                            int inf, float unreachable,       \
                                                            float* out) {                     \
        fw_finish_impl<I, float>(d, stride, n, inf, unreachable, out);                         \
    }                                                                                          \
    extern "C" __global__ void fw_finish_##suffix##_float64(const I* d, i64 stride, int n,    \
                                                            int inf, double unreachable,      \
                                                            double* out) {                    \
        fw_finish_impl<I, double>(d, stride, n, inf, unreachable, out);                        \
    }

APSP_KERNELS(float, float32)
APSP_KERNELS(double, float64)
FW_INTEGER_KERNELS(int, int32, 1)
FW_INTEGER_KERNELS(unsigned short, uint16, 2)
