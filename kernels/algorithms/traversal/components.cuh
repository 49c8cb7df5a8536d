// Building blocks of components.cu (connected components): union-find and block/grid
// cooperation. Included by components.cu after its macros (CC_THREADS, CTL_*, FULL_MASK), which
// these use; not a stand-alone header.
#pragma once

// ---------------------------------------------------------------------------------------------
// Union-find
// ---------------------------------------------------------------------------------------------

// Root of idx's tree, with intermediate pointer jumping (each visited node skips one level). The
// races with other threads are benign: every value written is an ancestor of the node written.
// Plain (L1-cached) loads, as ECL-CC's: a stale value is still an ancestor, and hook's CAS reads
// the current one before it links anything. On a long init chain each step through L2 instead
// (volatile) cost a whole latency: the link phase took 0.27 ms on dblp-2010. Flatten, where the
// walk must end at the current root, reads through L2 (flatten_phase).
__device__ __forceinline__ int representative(int idx, int* __restrict__ nstat) {
    int curr = nstat[idx];
    if (curr != idx) {
        int next;
        int prev = idx;
        while (curr > (next = nstat[curr])) {
            nstat[prev] = next;
            prev = curr;
            curr = next;
        }
    }
    return curr;
}

// Link the trees of v and its neighbour u: hook the larger root under the smaller with a CAS,
// retrying from the root that won if another thread moved it first. vstat (an ancestor of v,
// its root when the call starts) is carried from one neighbour to the next, as in ECL-CC, and
// moves to ostat once v's root is hooked under it: a stale vstat would cost the next neighbour a
// failed CAS. Every value vstat takes is an ancestor of v.
__device__ __forceinline__ void hook_roots(int& vstat, int ostat, int* nstat) {
    bool repeat;
    do {
        repeat = false;
        if (vstat != ostat) {
            int ret;
            if (vstat < ostat) {
                if ((ret = atomicCAS(&nstat[ostat], ostat, vstat)) != ostat) {
                    ostat = ret;
                    repeat = true;
                }
            } else {
                if ((ret = atomicCAS(&nstat[vstat], vstat, ostat)) != vstat) {
                    vstat = ret;
                    repeat = true;
                } else {
                    vstat = ostat;
                }
            }
        }
    } while (repeat);
}

__device__ __forceinline__ void hook(int& vstat, int u, int* nstat) {
    hook_roots(vstat, representative(u, nstat), nstat);
}

// ---------------------------------------------------------------------------------------------
// Block and grid cooperation
// ---------------------------------------------------------------------------------------------

// Whether p holds in any thread of the group: a warp (BLOCK false) or the block. Every thread of
// the group must call it.
template <bool BLOCK>
__device__ __forceinline__ bool group_any(bool p) {
    return BLOCK ? __syncthreads_or(p) : __any_sync(FULL_MASK, p);
}

// Inclusive scan of one value per lane across the warp.
__device__ __forceinline__ int warp_inclusive_scan(int value) {
    const int lane = threadIdx.x & 31;
    for (int d = 1; d < 32; d <<= 1) {
        const int other = __shfl_up_sync(FULL_MASK, value, d);
        if (lane >= d) value += other;
    }
    return value;
}

// Exclusive prefix sum of one value per thread across the block, and the block's total. Every
// thread of the block must call it.
__device__ __forceinline__ int block_exclusive_sum(int value, int& total) {
    __shared__ int warp_sum[CC_THREADS / 32];
    const int warp = threadIdx.x >> 5;
    const int inclusive = warp_inclusive_scan(value);
    if ((threadIdx.x & 31) == 31) warp_sum[warp] = inclusive;
    __syncthreads();
    int before = inclusive - value;
    total = 0;
    for (int w = 0; w < (int)(blockDim.x >> 5); ++w) {
        const int s = warp_sum[w];
        if (w < warp) before += s;
        total += s;
    }
    __syncthreads();  // warp_sum is reused by the next call
    return before;
}

// Grid-wide barrier of the persistent launch (every block resident: the host launches at most
// CC_MIN_BLOCKS blocks per multiprocessor, which __launch_bounds__ guarantees room for). Split in
// two so that the last block to arrive can do a serial step while the others wait:
// `if (grid_arrive(ctl, seen)) step(); grid_leave(ctl, last, seen);`.
__device__ __forceinline__ bool grid_arrive(unsigned* ctl, unsigned& seen) {
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) {
        seen = *(volatile unsigned*)&ctl[CTL_GENERATION];
        __threadfence();
        last = atomicAdd(&ctl[CTL_ARRIVED], 1u) == gridDim.x - 1;
        if (last) __threadfence();  // the serial step reads what the other blocks wrote
    }
    __syncthreads();
    return last;
}

__device__ __forceinline__ void grid_leave(unsigned* ctl, bool last, unsigned seen);

// A grid barrier with no serial step.
__device__ __forceinline__ void grid_sync_cc(unsigned* ctl, unsigned& seen) {
    const bool last = grid_arrive(ctl, seen);
    grid_leave(ctl, last, seen);
}

__device__ __forceinline__ void grid_leave(unsigned* ctl, bool last, unsigned seen) {
    __syncthreads();  // the serial step's writes, whichever thread made them
    if (threadIdx.x == 0) {
        if (last) {
            atomicExch(&ctl[CTL_ARRIVED], 0u);
            __threadfence();
            atomicAdd(&ctl[CTL_GENERATION], 1u);
        } else {
            while (*(volatile unsigned*)&ctl[CTL_GENERATION] == seen) __nanosleep(32);
        }
        __threadfence();
    }
    __syncthreads();
}

// Claims one worklist slot for each lane with `take` set, with one atomic per warp; from the
// front (wl[k]) or the back (wl[n - 1 - k]). Every lane of the warp must call it.
__device__ __forceinline__ void push_tier(bool take, int v, unsigned* counter, bool back, int n,
                                          int* wl) {
    const unsigned mask = __ballot_sync(FULL_MASK, take);
    if (!mask) return;
    const int lane = threadIdx.x & 31;
    int base = 0;
    if (lane == 0) base = (int)atomicAdd(counter, (unsigned)__popc(mask));
    base = __shfl_sync(FULL_MASK, base, 0);
    if (take) {
        const int k = base + __popc(mask & ((1u << lane) - 1));
        wl[back ? n - 1 - k : k] = v;
    }
}
