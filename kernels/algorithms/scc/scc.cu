// Strongly connected components by trimming and min-colouring (see scc/__init__.py).
//
// label[v] < 0: v is not assigned yet; otherwise the smallest node id of its component.
// Every kernel takes one thread per node (grid-stride) and looks only at unassigned neighbours.
// Flags are set by plain stores of 1; the host clears and reads them.

extern "C" __global__ void scc_trim(
    const long long* __restrict__ indptr, const int* __restrict__ indices,
    const long long* __restrict__ in_indptr, const int* __restrict__ in_indices,
    int n, int* label, int* changed)
{
    // A node with no unassigned out-neighbour or no unassigned in-neighbour lies on no cycle of
    // the unassigned nodes: a component of its own. Trimming it never changes the others.
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n;
         v += (long long)gridDim.x * blockDim.x) {
        if (label[v] >= 0) continue;
        bool out = false, in = false;
        for (long long j = indptr[v]; j < indptr[v + 1] && !out; ++j)
            out = label[indices[j]] < 0;
        for (long long j = in_indptr[v]; j < in_indptr[v + 1] && !in && out; ++j)
            in = label[in_indices[j]] < 0;
        if (!out || !in) {
            label[v] = (int)v;
            *changed = 1;
        }
    }
}

extern "C" __global__ void scc_color_init(int n, const int* __restrict__ label, int* color,
                                          unsigned char* mark)
{
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n;
         v += (long long)gridDim.x * blockDim.x) {
        color[v] = (int)v;
        mark[v] = 0;
    }
}

extern "C" __global__ void scc_color_pull(
    const long long* __restrict__ in_indptr, const int* __restrict__ in_indices,
    int n, const int* __restrict__ label, volatile int* color, int* changed)
{
    // color[v] <- the smallest id that reaches v through unassigned nodes (a fixpoint of
    // repeated pulls; reading neighbours' newer colours only speeds it up: colours only fall).
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n;
         v += (long long)gridDim.x * blockDim.x) {
        if (label[v] >= 0) continue;
        int c = color[v];
        const int before = c;
        for (long long j = in_indptr[v]; j < in_indptr[v + 1]; ++j) {
            const int u = in_indices[j];
            if (label[u] < 0) c = min(c, color[u]);
        }
        if (c < before) {
            color[v] = c;
            *changed = 1;
        }
    }
}

extern "C" __global__ void scc_roots(int n, const int* __restrict__ label,
                                     const int* __restrict__ color, unsigned char* mark)
{
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n;
         v += (long long)gridDim.x * blockDim.x)
        mark[v] = label[v] < 0 && color[v] == (int)v;
}

extern "C" __global__ void scc_backward(
    const long long* __restrict__ indptr, const int* __restrict__ indices,
    int n, const int* __restrict__ label, const int* __restrict__ color,
    volatile unsigned char* mark, int* changed)
{
    // mark[v] <- v reaches its colour's root through nodes of that colour: then v is in the
    // root's component (the root reaches v, as v has the root's colour).
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n;
         v += (long long)gridDim.x * blockDim.x) {
        if (label[v] >= 0 || mark[v]) continue;
        const int c = color[v];
        for (long long j = indptr[v]; j < indptr[v + 1]; ++j) {
            const int u = indices[j];
            if (mark[u] && color[u] == c && label[u] < 0) {
                mark[v] = 1;
                *changed = 1;
                break;
            }
        }
    }
}

extern "C" __global__ void scc_assign(int n, int* label, const int* __restrict__ color,
                                      const unsigned char* __restrict__ mark,
                                      unsigned long long* remaining)
{
    for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < n;
         v += (long long)gridDim.x * blockDim.x) {
        if (label[v] >= 0) continue;
        if (mark[v]) label[v] = color[v];
        else atomicAdd(remaining, 1ull);
    }
}
