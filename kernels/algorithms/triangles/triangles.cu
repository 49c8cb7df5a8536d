// Triangles per node on an acyclic orientation (see triangles/__init__.py).
//
// One thread per DAG arc a -> b: the common out-neighbours c of a and b (both rows sorted, and
// every such c lies after b in a's row) close the triangles {a, b, c}, each found exactly once.
// Counts are in rank ids; a's share is added once per arc, b's and c's by atomics.

extern "C" __global__ void triangles_arcs(
    const long long* __restrict__ dptr, const int* __restrict__ dadj,
    const int* __restrict__ tail, long long arcs, unsigned long long* count)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < arcs;
         e += (long long)gridDim.x * blockDim.x) {
        const int a = tail[e], b = dadj[e];
        long long i = e + 1;
        const long long i_end = dptr[a + 1];
        long long j = dptr[b];
        const long long j_end = dptr[b + 1];
        unsigned long long found = 0;
        while (i < i_end && j < j_end) {
            const int x = dadj[i], y = dadj[j];
            if (x < y) {
                ++i;
            } else if (y < x) {
                ++j;
            } else {
                atomicAdd(&count[x], 1ull);
                ++found;
                ++i;
                ++j;
            }
        }
        if (found) {
            atomicAdd(&count[a], found);
            atomicAdd(&count[b], found);
        }
    }
}
