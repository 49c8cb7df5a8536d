// Jaccard coefficients of node pairs (kernels/algorithms/similarity): one thread per pair merges
// the two sorted neighbour rows; the quotient is the same IEEE division as on the CPU.

extern "C" __global__ void jaccard_pairs(const long long* __restrict__ indptr,
                                         const int* __restrict__ indices,
                                         const int* __restrict__ us, const int* __restrict__ vs,
                                         long long pairs, double* __restrict__ out) {
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= pairs) return;
    const int u = us[p], v = vs[p];
    long long a = indptr[u], a_end = indptr[u + 1];
    long long b = indptr[v], b_end = indptr[v + 1];
    const long long du = a_end - a, dv = b_end - b;
    long long common = 0;
    while (a < a_end && b < b_end) {
        const int x = indices[a], y = indices[b];
        common += (x == y);
        a += (x <= y);
        b += (y <= x);
    }
    const long long both = du + dv - common;
    out[p] = both == 0 ? 0.0 : (double)common / (double)both;
}
