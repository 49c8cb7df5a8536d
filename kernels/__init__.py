"""Pure compute: the graph container and store, parsers, generators, the algorithm registry.

Nothing here talks to Redis or HTTP. Modules that run on the GPU import CuPy lazily, so the
package imports with NumPy/SciPy alone.
"""

from graphgpu.kernels.core import jit_cache

# Before any of our modules compiles: processes that compile at once (the warm-up pool) must
# not lose each other's entries in Numba's cache (core/jit_cache.py).
jit_cache.install()
