// Union-find on node ids hooked with atomics, a root only ever under a smaller root (as ECL-CC,
// Jaiganesh & Burtscher 2018): each tree's root is the smallest node of its set, whatever the
// order of the hooks. Finds halve the path by plain writes, safe while other threads hook:
// whatever a node's parent becomes, it is still one of its ancestors. ``Parents`` says how the
// parents are read and written: ``L2Parents`` for a global array other blocks write (loads
// through L2, never a stale L1 line), ``SharedParents`` for a block's shared memory its other
// warps write (volatile: never a value kept in a register).
#pragma once

struct L2Parents {
    __device__ static __forceinline__ int load(int* p) { return __ldcg(p); }
    __device__ static __forceinline__ void store(int* p, int v) { *p = v; }
};

struct SharedParents {
    __device__ static __forceinline__ int load(int* p) { return *(volatile int*)p; }
    __device__ static __forceinline__ void store(int* p, int v) { *(volatile int*)p = v; }
};

// Root of x, each node on the way pointed at its grandparent.
template <class Parents>
__device__ __forceinline__ int uf_find(int* parent, int x) {
    while (true) {
        const int p = Parents::load(&parent[x]);
        if (p == x) return x;
        const int g = Parents::load(&parent[p]);
        if (g == p) return p;
        Parents::store(&parent[x], g);
        x = g;
    }
}

// Join the sets of a and b: the larger root goes under the smaller, again from the new roots
// where another thread hooked one first.
template <class Parents>
__device__ __forceinline__ void uf_unite(int* parent, int a, int b) {
    while (true) {
        a = uf_find<Parents>(parent, a);
        b = uf_find<Parents>(parent, b);
        if (a == b) return;
        if (a < b) {
            const int t = a;
            a = b;
            b = t;
        }
        if (atomicCAS(&parent[a], a, b) == a) return;
    }
}
