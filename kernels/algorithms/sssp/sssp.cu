// GPU kernels of single-source shortest paths (driven by kernels/algorithms/sssp/gpu.py; compiled
// through CuPy's NVRTC for T = float and double). Graph: CSR with long long offsets, int
// neighbours, rows sorted ascending, one weight per arc (both arcs of an edge carry the same), all
// weights >= 0.
//
// Distances are a frontier Bellman-Ford fixpoint: the smallest, over paths, of the path's weights
// added left to right in T. Dijkstra on the CPU computes the same value when it adds in T, since
// adding a non-negative weight never decreases a distance and rounding is monotone.

// Non-negative IEEE floats order like their bit patterns read as unsigned integers (+inf above
// every finite value), so atomicMin on the bits is an atomic minimum of the distances.
template <typename T> struct Bits;
template <> struct Bits<float> {
    typedef unsigned int type;
    static __device__ unsigned int of(float x) { return __float_as_uint(x); }
};
template <> struct Bits<double> {
    typedef unsigned long long type;
    static __device__ unsigned long long of(double x) {
        return (unsigned long long)__double_as_longlong(x);
    }
};

// The calling lane's share of one frontier vertex u: `group` lanes (a power of two, at most 32)
// take u, lane k its arcs k, k + group, ...; arc(j, v, du) is called for each, with du = dist[u]
// read once at the start.
template <typename T, typename F>
__device__ __forceinline__ void frontier_arcs(const long long* __restrict__ indptr,
                                              const int* __restrict__ indices, const T* dist,
                                              const int* __restrict__ frontier,
                                              int frontier_size, int group, F arc) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long slot = tid / group;
    if (slot >= frontier_size) return;
    const int u = frontier[slot];
    const T du = dist[u];
    for (long long j = indptr[u] + (tid & (group - 1)); j < indptr[u + 1]; j += group) {
        arc(j, indices[j], du);
    }
}

// One relaxation round: the lanes of a frontier vertex u relax its arcs. A vertex whose distance
// drops is queued once per round: stamp[v] holds the last round that queued it. u's distance is
// read once at the start; if it drops again during the round u is queued for the next one, so
// the fixpoint is still reached.
template <typename T>
__device__ void relax(const long long* __restrict__ indptr, const int* __restrict__ indices,
                      const T* __restrict__ weight, T* dist, const int* __restrict__ frontier,
                      int frontier_size, int* __restrict__ next, int* count, int* stamp,
                      int round, int group) {
    typedef typename Bits<T>::type B;
    frontier_arcs(indptr, indices, (const T*)dist, frontier, frontier_size, group,
                  [&](long long j, int v, T du) {
                      const T nd = du + weight[j];
                      if (nd < dist[v]) {
                          const B old = atomicMin(reinterpret_cast<B*>(&dist[v]), Bits<T>::of(nd));
                          if (Bits<T>::of(nd) < old && atomicExch(&stamp[v], round) != round) {
                              next[atomicAdd(count, 1)] = v;
                          }
                      }
                  });
}

// Fewest-hop count over tight arcs (dist[u] + w == dist[v] exactly, in T): one BFS level, with the
// same lane grouping. It makes the parent rule below a tree even on zero-weight plateaus.
template <typename T>
__device__ void tight_hops(const long long* __restrict__ indptr, const int* __restrict__ indices,
                           const T* __restrict__ weight, const T* __restrict__ dist, int* hops,
                           const int* __restrict__ frontier, int frontier_size,
                           int* __restrict__ next, int* count, int depth, int group) {
    frontier_arcs(indptr, indices, dist, frontier, frontier_size, group,
                  [&](long long j, int v, T du) {
                      if (hops[v] == -1 && du + weight[j] == dist[v] &&
                          atomicCAS(&hops[v], -1, depth + 1) == -1) {
                          next[atomicAdd(count, 1)] = v;
                      }
                  });
}

// Deterministic parent: the smallest u (rows are sorted: the first hit) with a tight arc u -> v
// and hops[u] == hops[v] - 1. The source is its own parent; unreachable vertices get -1.
template <typename T>
__device__ void parent_of(const long long* __restrict__ indptr, const int* __restrict__ indices,
                          const T* __restrict__ weight, const T* __restrict__ dist,
                          const int* __restrict__ hops, int n, int source,
                          long long* __restrict__ parent) {
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    long long p = v == source ? source : -1;
    const int h = hops[v];
    if (h > 0) {
        for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
            const int u = indices[j];
            if (hops[u] == h - 1 && dist[u] + weight[j] == dist[v]) {
                p = u;
                break;
            }
        }
    }
    parent[v] = p;
}

// extern "C" entry points per type, so that the host looks kernels up by plain names.
#define SSSP_KERNELS(T, suffix)                                                                 \
    extern "C" __global__ void sssp_relax_##suffix(                                            \
        const long long* indptr, const int* indices, const T* weight, T* dist,                 \
        const int* frontier, int frontier_size, int* next, int* count, int* stamp, int round,  \
        int group) {                                                                           \
        relax<T>(indptr, indices, weight, dist, frontier, frontier_size, next, count, stamp,  \
                 round, group);                                                                \
    }                                                                                          \
    extern "C" __global__ void sssp_hops_##suffix(                                             \
        const long long* indptr, const int* indices, const T* weight, const T* dist,           \
        int* hops, const int* frontier, int frontier_size, int* next, int* count, int depth,   \
        int group) {                                                                           \
        tight_hops<T>(indptr, indices, weight, dist, hops, frontier, frontier_size, next,     \
                      count, depth, group);                                                    \
    }                                                                                          \
    extern "C" __global__ void sssp_parent_##suffix(                                           \
        const long long* indptr, const int* indices, const T* weight, const T* dist,           \
        const int* hops, int n, int source, long long* parent) {                               \
        parent_of<T>(indptr, indices, weight, dist, hops, n, source, parent);                  \
    }

SSSP_KERNELS(float, float32)
SSSP_KERNELS(double, float64)
