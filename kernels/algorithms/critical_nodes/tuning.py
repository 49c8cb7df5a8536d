"""Tuning constants of the ``critical_nodes`` searches (both backends share them)."""

from __future__ import annotations

#: Longest component-size histogram and best-over-time list kept in the summary.
MAX_LISTED = 1000
#: Share of a ``search`` or memetic run's time limit its greedy (CND*) starts may take.
START_SHARE = 0.2
#: ... and the share its first CND* start may take (its set keeps the answer no worse than
#: greedy); where even that does not fit, the run starts without one.
FIRST_START_SHARE = 0.5
#: Where the memetic improver has a first descent (CPU: ruin and regrow), the greedy removal
#: start runs only if k walks of the graph (its cost, about) fit in this share of the limit.
REMOVAL_SHARE = 0.05
#: Ruin and regrow (CPU): on a start whose largest component has at least ``RUIN_NODES``
#: nodes, until ``RUIN_STALL`` rounds in a row bring nothing better or ``RUIN_SHARE`` of the
#: limit has passed; a round deletes up to k / ``RUIN_DIVISOR`` nodes (a quarter of that at
#: least) of the components of at least 1 / ``RUIN_POOL`` of the largest's size.
#: ca-CondMat (k = 2,313), from a CND* set of 39.5M pairs, rounds alone for 1.5 s on the VM
#: (seeds 0 / 1): pool 1/2: 8.3M / 7.8M (divisor 12; 48: 15.5M / 14.0M, 24: 10.3M / 9.7M,
#: 6: 10.6M); the largest alone 13.4M / 10.0M; 1/4: 5.0M / 5.1M; 1/8: 2.8M / 3.6M; 1/16:
#: 4.2M / 3.9M; 1/64: 5.3M / 5.2M. Memetic 5 s with pool 1/8, rounds until 0.2 / 0.5 / 0.8
#: of the limit: 4.6M / 4.2M, 2.54M / 2.65M, 2.42M / 2.70M; ca-HepTh 114k / 110k, 114k /
#: 111k, 113k / 111k (its rounds stall early). Until 0.6: 2.89M (seed 1, the rounds never
#: stalled, the chain's last 2 s gained 1%); until 0.9: 2.44M / 2.64M.
#: ca-HepTh (k = 988, CND* giants of 277-553 nodes), memetic 5 s, 3 runs per seed: 114.5k mean
#: with ``RUIN_NODES`` 200, 116.7k with 1000 (no descent there); ca-GrQc's giants (~35)
#: never get one.
RUIN_NODES = 200
RUIN_STALL = 300
RUIN_DIVISOR = 12
RUIN_POOL = 8
RUIN_SHARE = 0.9
#: The GPU's descent (chains of rounds, a block each): launches in a row that bring no better
#: set end it (each runs every chain's rounds: hundreds at least, where the host stops after
#: ``RUIN_STALL``). 2 / 8, seed 0, H200 (bench/results/cnd.md, round 10): ca-HepTh 60 s
#: +3.2% / +1.8% above best-known, ca-CondMat 5 s 1.71M / 1.72M, CNP 30 s ER2344 +11.1% /
#: +10.6%, WS1000 +15.8% / +14.3%, WS1500 +0.0% both. (Chains going on from sets within 0.5-2%
#: of their best, record-to-record travel, at 8: WS1000 +4.2%, but ca-HepTh +3.3-3.9%,
#: ca-CondMat 1.81-1.83M.)
DESCENT_STALL_LAUNCHES = 8
#: CND* starts of a memetic run at least (time permitting) when its population takes fewer:
#: the best one goes on (ca-CondMat, k = 2,313: seeds 0-2 all ~62M pairs, seeds 0-7 39.5M).
STARTS_MIN = 8
#: Share of a memetic run's time limit that building (and improving) its first population may
#: take; the generations have the rest.
POPULATION_SHARE = 0.3
#: In the memetic improvement (both backends), one removal in this many takes a random node of
#: the component instead of its best cut (diversification, as the random choices of the CNP
#: memetic searches); the plain swap search (``method=search``) makes none.
RANDOM_MOVE = 4
#: The swap search on a component of ``BLOCK_NODES * b`` nodes or more deletes b (at most
#: ``BLOCK_MAX``) of its nodes per articulation walk, then restores b (both backends: a walk of
#: a giant component is the cost of a move there). Picked on the CPU, ca-CondMat, k = 2,313, one
#: chain from the greedy removal, 5 s on the VM: 14.4M pairs without blocks, 9.3M with 1000 /
#: 16, 8.5M with 500 / 32 (250 / 16: 8.9M; 500 / 64: 8.7M); ca-HepTh 112k in all.
BLOCK_NODES = 500
BLOCK_MAX = 32

#: A memetic run bounded by time on an instance of n * k up to ``POLISH_MAX_WORK`` (the CNP
#: benchmark's 16) gives its last ``POLISH_SHARE`` of the time to the swap search (``search``'s
#: chains; on the GPU hundreds at once) from its best set. On WS250 (k = 70) the memetic alone
#: stalled far above what ``search`` found in the same time (10 s, seeds 0 / 1: CPU 4,057 /
#: 3,378 against 3,154 / 3,154; GPU 3,210 / 3,188 against 3,094 / 3,094; best known 3,083),
#: while on WS1000 and ER2344 ``search`` trailed it (GPU 206k / 1.13M against 125k / 1.00M;
#: H100, 2026-11-27). Larger graphs keep the memetic search to the end (their descent and
#: chains gain late: ca-HepTh at 60 s).
POLISH_SHARE = 1 / 3
POLISH_MAX_WORK = 1_000_000

#: Generations without a new best before a reduce-solve-combine restart.
STALL_GENERATIONS = 30
#: Share of a member's nodes drawn at random when a member is built from scratch or restarted.
RANDOM_SHARE = 0.25
#: Share of the population that must delete a node for a restart to keep it (the reduce step).
FIX_SHARE = 0.75
#: Weight of the objective against the likeness to the rest when a child enters the population.
QUALITY_WEIGHT = 0.6
#: Islands trade their bests every this share of the time limit (and at most every
#: ``MIGRATION_MIN_S``: one Redis round trip each).
MIGRATION_SHARE = 0.05
MIGRATION_MIN_S = 0.2
#: Seconds between progress reports when no new best comes (cancel checks).
BEAT_S = 0.2
#: Share of the time limit one greedy completion may take (large k on large graphs: batches).
FILL_SHARE = 0.1


def patience_for(k: int) -> int:
    """Moves without a new best before a swap-search chain restarts from its best set (or, in
    the memetic improvement, ends); the CPU counts a block move as its b exchanges."""
    return 100 + 4 * k
