// Maximal independent set kernels (gpu.py drives them; cpu.py holds the
// Numba twin of each one, decision for decision).
//
// State: one 64-bit word per vertex, tag in the low half, residual degree in the high half, so that
// looking at a neighbour costs one load. Tag 0 is live; round r (>= 2) writes 2r+1 (joined) and
// 2r+2 (left); 1/2 are frozen in/out (reductions), 3/4 fixed in/out before a completion phase.
// A vertex is live at the start of round r when its tag is 0 or >= 2r+1: a round reads the
// snapshot of its start although it writes as it goes, so results never depend on thread timing.
//
// Work lists: the live vertices of round r are in a light list (rows of at most MIS_HEAVY
// entries, one thread each) and a heavy list (one warp each); a round appends the vertices that
// stay live to the lists of round r+1. Counters live on the device, SLOTS per round in ctl:
// {light size, heavy size, live at the start, joined (or changed)}. Kernels over all vertices
// (all_vertices = 1: the first round of a run, and the passes outside rounds) take the light
// vertices by index and the heavy ones from the static heavy list that mis_init writes, whose
// size is ctl[1] (rounds start at 2, so slots 0..7 are free). Passes outside rounds (r_in = 0)
// count into aux.

#include "grid_sync.cuh"

#ifndef MIS_HEAVY
#define MIS_HEAVY 32
#endif
// Neighbours a lane of Select examines at once (their loads in flight together).
#define SELECT_UNROLL 4
// Blocks per multiprocessor of mis_rounds (= gpu.ROUND_BLOCKS_PER_SM; its __launch_bounds__).
#define ROUND_BLOCKS 4

typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;

#define FULL_MASK 0xffffffffu
#define SLOTS 4
#define FROZEN_IN 1u
#define FROZEN_OUT 2u
#define FIXED_IN 3u
#define FIXED_OUT 4u

// MurmurHash3's finaliser, a bijection: cpu.py:mix32.
__device__ __forceinline__ u32 mix32(u32 h) {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    return h ^ (h >> 16);
}

template <int G> __device__ __forceinline__ bool group_any(bool p) {
    if constexpr (G == 1) return p;
    else return __any_sync(FULL_MASK, p);
}

// Lane 0's value: a vertex's own word can change under a heavy warp (a neighbour joining), and
// its lanes must take the same branch before the next warp vote.
template <int G> __device__ __forceinline__ u64 group_first(u64 x) {
    if constexpr (G == 1) return x;
    else return __shfl_sync(FULL_MASK, x, 0);
}

template <int G> __device__ __forceinline__ int group_sum(int x) {
    if constexpr (G == 1) return x;
    else return __reduce_add_sync(FULL_MASK, x);
}

// Adds a per-thread count to a device counter: one atomic per warp. Every lane must call it.
__device__ __forceinline__ void flush(int* counter, int value) {
    const int total = __reduce_add_sync(FULL_MASK, value);
    if ((threadIdx.x & 31) == 0 && total != 0) atomicAdd(counter, total);
}

// Appends v to a list with one atomic per group of converged lanes.
__device__ __forceinline__ void append(int* list, int* count, int v) {
    const u32 mask = __activemask();
    const int lane = threadIdx.x & 31;
    const int leader = __ffs(mask) - 1;
    int base = 0;
    if (lane == leader) base = atomicAdd(count, __popc(mask));
    base = __shfl_sync(mask, base, leader);
    list[base + __popc(mask & ((1u << lane) - 1u))] = v;
}

struct Ctx {
    const i64* indptr;
    const int* indices;
    u64* word;
    int* light_out;
    int* heavy_out;
    int* out_n;

    __device__ __forceinline__ u32* tags() const { return reinterpret_cast<u32*>(word); }
    __device__ __forceinline__ u32 tag(int v) const { return tags()[2 * (i64)v]; }
    __device__ __forceinline__ void set_tag(int v, u32 t) const { tags()[2 * (i64)v] = t; }
    __device__ __forceinline__ u32 degree(int v) const { return tags()[2 * (i64)v + 1]; }
    // Keeps v live for the next round (called by every lane of its group; lane 0 appends).
    template <int G> __device__ __forceinline__ void keep(int v, int lane) const {
        if (lane == 0) {
            if constexpr (G == 1) append(light_out, out_n, v);
            else append(heavy_out, out_n + 1, v);
        }
    }
    // Whether any neighbour of v is a member (odd tag); stops at the first one.
    template <int G> __device__ bool member_beside(int v, int lane) const {
        const i64 stop = indptr[v + 1];
        for (i64 base = indptr[v]; base < stop; base += G) {
            const i64 j = base + lane;
            if (group_any<G>(j < stop && (tag(indices[j]) & 1u))) return true;
        }
        return false;
    }
};

// Everything live with its full degree (the first round visits all vertices, so only the heavy
// ones are listed, in the static list); isolated vertices join at once with tag in_tag. Over
// the whole grid (mis_init, and mis_rounds when it starts a run).
__device__ void init_pass(const i64* indptr, int n, u64* word, u32 in_tag, int* static_heavy,
                          int* static_n) {
    const int stride = gridDim.x * blockDim.x;
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
        const i64 length = indptr[v + 1] - indptr[v];
        if (length == 0) {
            word[v] = in_tag;
        } else {
            word[v] = (u64)length << 32;
            if (length > MIS_HEAVY) append(static_heavy, static_n, v);
        }
    }
}

// Visits the vertices of a round (or all vertices): the first heavy_blocks blocks take the heavy
// list a warp per vertex, so that the long rows start first; the rest take the light list.
template <class Op>
__device__ void visit(Op& op, int n, const int* light_in, const int* heavy_in, const int* in_n,
                      int all_vertices, int heavy_blocks) {
    if ((int)blockIdx.x < heavy_blocks) {
        const int lane = threadIdx.x & 31;
        const int warps = heavy_blocks * (blockDim.x >> 5);
        const int count = in_n[1];
        for (int i = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < count; i += warps)
            op.template run<32>(heavy_in[i], lane);
        return;
    }
    const int stride = (gridDim.x - heavy_blocks) * blockDim.x;
    const int first = (blockIdx.x - heavy_blocks) * blockDim.x + threadIdx.x;
    if (all_vertices) {
        for (int v = first; v < n; v += stride)
            if (op.c.indptr[v + 1] - op.c.indptr[v] <= MIS_HEAVY) op.template run<1>(v, 0);
    } else {
        const int count = in_n[0];
        for (int i = first; i < count; i += stride) op.template run<1>(light_in[i], 0);
    }
}

#define VISIT_PARAMS                                                                           \
    const i64 *indptr, const int *indices, int n, u64 *word, const int *light_in,              \
        const int *heavy_in, int *light_out, int *heavy_out, int *ctl, int *aux, int r_in,     \
        int r_out, int all_vertices, int heavy_blocks
#define CTX {indptr, indices, word, light_out, heavy_out, ctl + SLOTS * r_out}
#define VISIT(op) visit(op, n, light_in, heavy_in, ctl + (all_vertices ? 0 : SLOTS * r_in),   \
                        all_vertices, heavy_blocks)
// Where a kernel's counters go: its round's slots, or aux outside rounds.
#define STATS (r_in > 0 ? ctl + SLOTS * r_in + 2 : aux)

// One DUMIS/LUMIS round: a live vertex joins when its key beats every live neighbour's.
struct Select {
    Ctx c;
    u32 in_tag;  // 2r+1; 2r+2 is "left this round"
    u32 salt;
    int use_degree;
    int live = 0, wins = 0;

    __device__ __forceinline__ u64 key(int v, u64 word) const {
        const u64 rank = mix32((u32)v * 0x9e3779b1u + salt);
        return use_degree ? ((word >> 32) << 32) | rank : rank;
    }
    template <int G> __device__ void run(int v, int lane) {
        const u64 wv = group_first<G>(c.word[v]);
        const u32 t = (u32)wv;
        if (lane == 0 && (t == 0 || t == in_tag + 1)) ++live;  // live at the round's start
        if (t != 0) return;
        const u64 kv = key(v, wv);
        const i64 start = c.indptr[v], stop = c.indptr[v + 1];
        // SELECT_UNROLL neighbours per lane at a time, their loads issued together: a short row
        // walked one neighbour after the other is a chain of dependent L2 round trips.
        for (i64 base = start; base < stop; base += G * SELECT_UNROLL) {
            int us[SELECT_UNROLL];
            u64 wus[SELECT_UNROLL];
#pragma unroll
            for (int q = 0; q < SELECT_UNROLL; ++q) {
                const i64 j = base + q * G + lane;
                us[q] = j < stop ? c.indices[j] : -1;
            }
#pragma unroll
            for (int q = 0; q < SELECT_UNROLL; ++q) wus[q] = us[q] >= 0 ? c.word[us[q]] : 0;
            bool beaten = false, gone = false;
#pragma unroll
            for (int q = 0; q < SELECT_UNROLL; ++q) {
                const u32 tu = (u32)wus[q];
                beaten |= us[q] >= 0 && (tu == 0 || tu >= in_tag) && key(us[q], wus[q]) < kv;
                gone |= us[q] >= 0 && tu == in_tag;  // u joined already, so v is leaving
            }
            if (group_any<G>(beaten)) {
                // List v for the next round unless it is known to leave in this one: stale
                // entries are harmless, but an empty next list lets the host stop a round early.
                if (!group_any<G>(gone) && c.tag(v) == 0) c.keep<G>(v, lane);
                return;
            }
        }
        if (lane == 0) {
            c.set_tag(v, in_tag);
            ++wins;
        }
        // Another winner may mark the same neighbour: both write the same value.
        for (i64 j = start + lane; j < stop; j += G) {
            const int u = c.indices[j];
            if (c.tag(u) == 0) c.set_tag(u, in_tag + 1);
        }
    }
};

extern "C" __global__ void mis_select(VISIT_PARAMS, u32 in_tag, u32 salt, int use_degree) {
    Select op{CTX, in_tag, salt, use_degree};
    VISIT(op);
    flush(STATS, op.live);
    flush(STATS + 1, op.wins);
}

// Residual degree of every live vertex (no tag changes in this kernel); in reduction rounds only
// of the vertices marked for round `round` (the others' neighbourhoods did not change).
struct Degree {
    Ctx c;
    const int* dirty;
    int round;  // < 0: every live vertex

    template <int G> __device__ void run(int v, int lane) {
        if (c.tag(v) != 0 || (round >= 0 && dirty[v] != round)) return;
        int count = 0;
        const i64 stop = c.indptr[v + 1];
        for (i64 j = c.indptr[v] + lane; j < stop; j += G) count += c.tag(c.indices[j]) == 0;
        count = group_sum<G>(count);
        if (lane == 0) c.tags()[2 * (i64)v + 1] = (u32)count;
    }
};

extern "C" __global__ void mis_degree(VISIT_PARAMS, const int* dirty, int round) {
    Degree op{CTX, dirty + (round >= 0 ? (i64)(round & 1) * n : 0), round};
    VISIT(op);
}

// Rounds r .. r + rounds - 1 of a completion phase in one launch, separated by grid barriers:
// the passes of mis_degree (every f-th round from r0, and the first when recount_first) and
// mis_select, on the same lists and counters as a launch per round, so the set is the same. It
// stops after the first round that leaves nothing listed for its successor (every block reads
// the same counters after the barrier). Small graphs: a launch and host read-back per batch of
// rounds cost more than the rounds. Every block must be resident at once (gpu.py sizes the grid).
// start: the run's start comes first (gpu.GpuEngine.start: every counter zeroed, then mis_init's
// pass with round r's tag), so that a whole run is one launch. host_out (pinned host memory, or
// null): where block 0 copies the counters the host reads (ctl[SLOTS r .. SLOTS (r + rounds) + 2)),
// so that the read-back needs no copy of its own.
extern "C" __global__ void __launch_bounds__(256, ROUND_BLOCKS)
mis_rounds(const i64* indptr, const int* indices, int n, u64* word, int* light0, int* light1,
           int* heavy0, int* heavy1, int* static_heavy, int* ctl, unsigned* bar, int r,
           int rounds, int r0, int f, u32 salt, int use_degree, int recount_first, int all_round,
           int heavy_blocks, int start, int ctl_words, int* host_out) {
    if (start) {
        const int stride = gridDim.x * blockDim.x;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < ctl_words; i += stride) ctl[i] = 0;
        grid_sync(bar);
        init_pass(indptr, n, word, 2u * r + 1u, static_heavy, ctl + 1);
        grid_sync(bar);
    }
    for (int rr = r; rr < r + rounds; ++rr) {
        const int every = rr == all_round;
        const int* light_in = rr & 1 ? light1 : light0;
        const int* heavy_in = every ? static_heavy : (rr & 1 ? heavy1 : heavy0);
        const Ctx c{indptr, indices, word, rr & 1 ? light0 : light1, rr & 1 ? heavy0 : heavy1,
                    ctl + SLOTS * (rr + 1)};
        const int* in_n = ctl + (every ? 0 : SLOTS * rr);
        const int k = rr - r0;
        if (use_degree && ((k == 0 && recount_first) || (k > 0 && f > 0 && k % f == 0))) {
            Degree degree{c, nullptr, -1};
            visit(degree, n, light_in, heavy_in, in_n, every, heavy_blocks);
            grid_sync(bar);
        }
        Select select{c, 2u * rr + 1u, salt, use_degree};
        visit(select, n, light_in, heavy_in, in_n, every, heavy_blocks);
        flush(ctl + SLOTS * rr + 2, select.live);
        flush(ctl + SLOTS * rr + 3, select.wins);
        grid_sync(bar);
        if (__ldcg(&ctl[SLOTS * (rr + 1)]) + __ldcg(&ctl[SLOTS * (rr + 1) + 1]) == 0) break;
    }
    // After the last barrier every counter is final; rounds not run read as zeros.
    if (host_out != nullptr && blockIdx.x == 0)
        for (int i = threadIdx.x; i < SLOTS * rounds + 2; i += blockDim.x)
            host_out[i] = __ldcg(&ctl[SLOTS * r + i]);
}

// One reduction round: isolated vertices join; v leaves when a live neighbour u with
// (deg u, u) < (deg v, v) has N[u] within N[v]. Each vertex writes only its own tag. Only the
// vertices marked for this round are examined (a status can change only when something within
// distance two changed in the previous round); a change marks its distance-two neighbourhood
// for the next round, in the other parity's array so that this round's marks stay as they are.
struct Reduce {
    Ctx c;
    u32 in_tag;
    int round;
    const int* dirty;   // marks for this round
    int* next_dirty;    // marks for the next round
    int* expanded;      // round in which a live vertex's row was last marked
    int live = 0, changes = 0;

    template <int G> __device__ void mark_around(int v, int lane) const {
        for (i64 j = c.indptr[v] + lane; j < c.indptr[v + 1]; j += G) {
            const int u = c.indices[j];
            next_dirty[u] = round + 1;
            if (live_at_start(c.tag(u)) && atomicExch(expanded + u, round) != round)
                for (i64 k = c.indptr[u]; k < c.indptr[u + 1]; ++k) next_dirty[c.indices[k]] = round + 1;
        }
    }

    __device__ __forceinline__ bool live_at_start(u32 t) const { return t == 0 || t >= in_tag; }
    // Every live neighbour of u but v lies in v's sorted row [start, stop).
    __device__ bool dominates(int u, int v, i64 start, i64 stop) const {
        i64 low = start;
        for (i64 k = c.indptr[u]; k < c.indptr[u + 1]; ++k) {
            const int w = c.indices[k];
            if (w == v || !live_at_start(c.tag(w))) continue;
            i64 high = stop;
            while (low < high) {
                const i64 mid = (low + high) >> 1;
                if (c.indices[mid] < w) low = mid + 1;
                else high = mid;
            }
            if (low == stop || c.indices[low] != w) return false;
            ++low;
        }
        return true;
    }
    template <int G> __device__ void run(int v, int lane) {
        if (c.tag(v) != 0) return;
        if (lane == 0) ++live;
        if (dirty[v] != round) {
            c.keep<G>(v, lane);
            return;
        }
        const u32 dv = c.degree(v);
        if (dv == 0) {
            if (lane == 0) {
                c.set_tag(v, in_tag);
                ++changes;
            }
            return;  // no live neighbours: nothing around to mark
        }
        const i64 start = c.indptr[v], stop = c.indptr[v + 1];
        for (i64 base = start; base < stop; base += G) {
            const i64 j = base + lane;
            bool dominated = false;
            if (j < stop) {
                const int u = c.indices[j];
                const u64 wu = c.word[u];
                const u32 du = (u32)(wu >> 32);
                dominated = live_at_start((u32)wu) && (du < dv || (du == dv && u < v)) &&
                            dominates(u, v, start, stop);
            }
            if (group_any<G>(dominated)) {
                if (lane == 0) {
                    c.set_tag(v, in_tag + 1);
                    ++changes;
                }
                mark_around<G>(v, lane);
                return;
            }
        }
        c.keep<G>(v, lane);
    }
};

extern "C" __global__ void mis_reduce(VISIT_PARAMS, u32 in_tag, int round, int* dirty,
                                      int* expanded) {
    Reduce op{CTX, in_tag, round, dirty + (i64)(round & 1) * n, dirty + (i64)((round + 1) & 1) * n,
              expanded};
    VISIT(op);
    flush(STATS, op.live);
    flush(STATS + 1, op.changes);
}

// Over all vertices. freeze: members become FROZEN_IN, their neighbours FROZEN_OUT. Otherwise
// (release): a non-member with no member beside it goes live (listed), the others FIXED_OUT.
// Only parities are read across vertices and neither mode changes one.
struct Settle {
    Ctx c;
    int freeze;
    int live = 0;

    template <int G> __device__ void run(int v, int lane) {
        const u32 t = c.tag(v);
        if (t & 1u) {
            if (freeze && lane == 0) c.set_tag(v, FROZEN_IN);
            return;
        }
        if (t == FROZEN_OUT || (freeze && t == 0)) return;
        const bool covered = c.member_beside<G>(v, lane);
        if (lane == 0) {
            if (covered) c.set_tag(v, freeze ? FROZEN_OUT : FIXED_OUT);
            else if (!freeze) {
                c.set_tag(v, 0);
                ++live;
            }
        }
        if (!freeze && !covered) c.keep<G>(v, lane);
    }
};

extern "C" __global__ void mis_settle(VISIT_PARAMS, int freeze) {
    Settle op{CTX, freeze};
    VISIT(op);
    flush(STATS, op.live);
}

// Over all vertices: set size, members with a member beside them, non-members with none.
struct Verify {
    Ctx c;
    int size = 0, conflicts = 0, undominated = 0;

    template <int G> __device__ void run(int v, int lane) {
        const bool member = c.tag(v) & 1u;
        const bool beside = c.member_beside<G>(v, lane);
        if (lane == 0) {
            size += member;
            conflicts += member && beside;
            undominated += !member && !beside;
        }
    }
};

extern "C" __global__ void mis_verify(VISIT_PARAMS) {
    Verify op{CTX};
    VISIT(op);
    flush(STATS, op.size);
    flush(STATS + 1, op.conflicts);
    flush(STATS + 2, op.undominated);
}

extern "C" __global__ void mis_init(const i64* indptr, int n, u64* word, u32 in_tag,
                                    int* static_heavy, int* static_n) {
    init_pass(indptr, n, word, in_tag, static_heavy, static_n);
}

// Members become FIXED_IN, or (drop) leave with probability 1/2; counts the members kept.
extern "C" __global__ void mis_mark(u64* word, int n, u32 salt, int drop, int* aux) {
    u32* tags = reinterpret_cast<u32*>(word);
    int kept = 0;
    const int stride = gridDim.x * blockDim.x;
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
        const u32 t = tags[2 * (i64)v];
        if (!(t & 1u)) continue;
        if (t != FROZEN_IN) {
            if (drop && (mix32((u32)v ^ salt) >> 31)) {
                tags[2 * (i64)v] = 0;
                continue;
            }
            tags[2 * (i64)v] = FIXED_IN;
        }
        ++kept;
    }
    flush(aux, kept);
}
