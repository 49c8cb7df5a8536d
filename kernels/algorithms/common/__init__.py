"""Building blocks shared by several algorithm families (no algorithm is registered here)."""
