// Grid-wide barrier of a persistent launch, shared by the kernels that keep one launch going
// across rounds (BFS levels, MIS rounds): small graphs are launch bound, a launch and a host
// read-back per round cost more than the round. Every block of the grid must be resident at once
// (the host sizes such grids with graphgpu.kernels.core.cuda.resident_blocks).
//
// One unsigned word, zero before its first use and after every barrier: block 0 adds
// 2^31 - (blocks - 1), every other block 1, so the last arrival flips the top bit and leaves the
// low bits at zero. A block waits until the top bit differs from what it saw at its own arrival;
// the next barrier cannot flip it back before every block has arrived there.
#pragma once

// Thread 0 of each block, between two __syncthreads of its block: arrive and wait for the rest.
__device__ __forceinline__ void grid_arrive_and_wait(unsigned* bar) {
    if (gridDim.x == 1) return;
    const unsigned add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1) : 1u;
    __threadfence();
    const unsigned old = atomicAdd(bar, add);
    while (((*(volatile unsigned*)bar ^ old) & 0x80000000u) == 0) {
    }
    __threadfence();
}

// The whole barrier, for every thread of every block.
__device__ __forceinline__ void grid_sync(unsigned* bar) {
    __syncthreads();
    if (threadIdx.x == 0) grid_arrive_and_wait(bar);
    __syncthreads();
}
