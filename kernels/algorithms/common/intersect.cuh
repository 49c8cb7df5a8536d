// Intersections of two ascending lists of one int32 adjacency array: [s0, s1) and [t0, t1) are
// index ranges of `adj`, each sorted ascending, without repeats. Shared by the triangles
// (common neighbours along DAG arcs) and similarity (common neighbours of a pair) families.
//
// Each common entry is reported once as on_match(i, j): i its index in [s0, s1), j in [t0, t1).
#pragma once

namespace intersect {

// Past every entry (entries are node ids or ranks below 2^31 - 1): pads a warp's window.
constexpr int PAST = 0x7fffffff;

// One thread: a merge of the lists, or binary searches of the shorter list's entries in the
// longer (each from where the last one ended) where those take fewer steps: on R-MAT most
// pairs join a list of a few entries with one of hundreds.
template <typename OnMatch>
__device__ __forceinline__ void thread_lists(const int* __restrict__ adj, long long s0,
                                             long long s1, long long t0, long long t1,
                                             OnMatch on_match) {
    const long long rest = s1 - s0, row = t1 - t0;
    if (rest <= 0 || row <= 0) return;
    const bool walk_s = rest <= row;  // walk the shorter, search the longer
    const long long shorter = walk_s ? rest : row, longer = walk_s ? row : rest;
    if (rest + row <= shorter * (64 - __clzll(longer))) {  // merging costs fewer steps
        while (s0 < s1 && t0 < t1) {
            const int x = adj[s0], y = adj[t0];
            if (x == y) on_match(s0, t0);
            s0 += x <= y;
            t0 += y <= x;
        }
        return;
    }
    const long long w0 = walk_s ? s0 : t0, w1 = walk_s ? s1 : t1;
    const long long end = walk_s ? t1 : s1;
    long long l = walk_s ? t0 : s0;
    for (long long x = w0; x < w1; ++x) {
        const int c = adj[x];
        long long h = end;
        while (l < h) {
            const long long mid = (l + h) >> 1;
            if (adj[mid] < c) l = mid + 1; else h = mid;
        }
        if (l == end) break;  // the rest of the shorter list is past the longer's end
        if (adj[l] == c) {
            if (walk_s) on_match(x, l); else on_match(l, x);
            ++l;
        }
    }
}

// One warp (all 32 lanes call it with the same lists; on_match runs on the lane that found the
// entry). Lists of like lengths are merged 32 entries of each at a time (two coalesced loads and
// a few shuffles per window: the lanes' entries of the first list are looked up in the second's
// window held across the lanes); where one list is over `ratio` times the other, the lanes
// binary-search the shorter list's entries in the longer.
template <typename OnMatch>
__device__ __forceinline__ void warp_lists(const int* __restrict__ adj, long long s0,
                                           long long s1, long long t0, long long t1, int ratio,
                                           OnMatch on_match) {
    constexpr unsigned ALL = 0xffffffffu;
    const int lane = threadIdx.x & 31;
    const long long rest = s1 - s0, row = t1 - t0;
    if (max(rest, row) <= ratio * min(rest, row)) {
        int x = s0 + lane < s1 ? adj[s0 + lane] : PAST;
        int y = t0 + lane < t1 ? adj[t0 + lane] : PAST;
        while (s0 < s1 && t0 < t1) {
            int at = 0;  // the lanes of the second window below x, at most 31
            for (int step = 16; step > 0; step >>= 1)
                if (__shfl_sync(ALL, y, at + step - 1) < x) at += step;
            if (__shfl_sync(ALL, y, at) == x && x != PAST) on_match(s0 + lane, t0 + at);
            // The window with the smaller last entry is done (both when they end alike); only
            // that one is loaded again.
            const int x_last = __shfl_sync(ALL, x, 31), y_last = __shfl_sync(ALL, y, 31);
            if (x_last <= y_last) {
                s0 += 32;
                x = s0 + lane < s1 ? adj[s0 + lane] : PAST;
            }
            if (y_last <= x_last) {
                t0 += 32;
                y = t0 + lane < t1 ? adj[t0 + lane] : PAST;
            }
        }
        return;
    }
    const bool walk_s = rest <= row;
    const long long w0 = walk_s ? s0 : t0, w1 = walk_s ? s1 : t1;
    const long long b0 = walk_s ? t0 : s0, b1 = walk_s ? t1 : s1;
    for (long long x = w0 + lane; x < w1; x += 32) {
        const int c = adj[x];
        long long l = b0, h = b1;
        while (l < h) {
            const long long mid = (l + h) >> 1;
            if (adj[mid] < c) l = mid + 1; else h = mid;
        }
        if (l < b1 && adj[l] == c) {
            if (walk_s) on_match(x, l); else on_match(l, x);
        }
    }
}

// Sum of `value` over the warp's lanes (in every lane).
__device__ __forceinline__ unsigned warp_sum(unsigned value) {
    for (int offset = 16; offset > 0; offset >>= 1)
        value += __shfl_xor_sync(0xffffffffu, value, offset);
    return value;
}

}  // namespace intersect
