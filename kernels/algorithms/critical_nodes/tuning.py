"""Tuning constants of the ``critical_nodes`` searches (both backends share them)."""

from __future__ import annotations

#: Longest component-size histogram and best-over-time list kept in the summary.
MAX_LISTED = 1000
#: Share of a ``search`` or memetic run's time limit its greedy (CND*) starts may take.
START_SHARE = 0.2
#: In the memetic improvement (both backends), one removal in this many takes a random node of
#: the component instead of its best cut (diversification, as the random choices of the CNP
#: memetic searches); the plain swap search (``method=search``) makes none.
RANDOM_MOVE = 4


def patience_for(k: int) -> int:
    """Moves without a new best before a swap-search chain restarts from its best set."""
    return 100 + 4 * k
