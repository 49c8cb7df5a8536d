// Reductions whose code does not depend on the array's length (kernels/core/reductions.py).
//
// A grid-stride loop per thread, a warp's sum by shuffles, one atomic add per warp: any length
// runs the same compiled kernel (CuPy's CUB reductions compile one per block size, and pick the
// block size by the length).

constexpr unsigned FULL_MASK = 0xffffffffu;

__device__ __forceinline__ long long first_index() {
    return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ long long grid_stride() { return (long long)gridDim.x * blockDim.x; }

// *total += the entries of values[0..n) that are not zero.
template <typename T>
__device__ __forceinline__ void count_nonzero(const T* __restrict__ values, long long n,
                                              unsigned long long* total) {
    unsigned long long mine = 0;
    for (long long i = first_index(); i < n; i += grid_stride()) mine += values[i] != T(0);
    for (int offset = 16; offset > 0; offset /= 2) mine += __shfl_down_sync(FULL_MASK, mine, offset);
    if (threadIdx.x % 32 == 0 && mine) atomicAdd(total, mine);
}

// counts[values[i]] += 1 (weights: += weights[i]) for i < n; values lie in [0, size), which the
// caller guarantees (an entry outside is skipped rather than written out of bounds).
template <typename T>
__device__ __forceinline__ void bincount(const T* __restrict__ values, long long n,
                                         long long size, unsigned long long* counts) {
    for (long long i = first_index(); i < n; i += grid_stride()) {
        const long long v = values[i];
        if (v >= 0 && v < size) atomicAdd(&counts[v], 1ull);
    }
}

template <typename T>
__device__ __forceinline__ void bincount_weighted(const T* __restrict__ values,
                                                  const double* __restrict__ weights,
                                                  long long n, long long size, double* sums) {
    for (long long i = first_index(); i < n; i += grid_stride()) {
        const long long v = values[i];
        if (v >= 0 && v < size) atomicAdd(&sums[v], weights[i]);
    }
}

// CuPy's bool is a byte of 0 or 1.
extern "C" __global__ void count_nonzero_b1(const unsigned char* __restrict__ values, long long n,
                                            unsigned long long* total) {
    count_nonzero<unsigned char>(values, n, total);
}

#define BINCOUNT(SUFFIX, T)                                                                    \
    extern "C" __global__ void bincount_##SUFFIX(const T* __restrict__ values, long long n,    \
                                                 long long size, unsigned long long* counts) { \
        bincount<T>(values, n, size, counts);                                                  \
    }                                                                                          \
    extern "C" __global__ void bincount_weighted_##SUFFIX(                                     \
        const T* __restrict__ values, const double* __restrict__ weights, long long n,         \
        long long size, double* sums) {                                                        \
        bincount_weighted<T>(values, weights, n, size, sums);                                  \
    }
BINCOUNT(i4, int)
BINCOUNT(i8, long long)
