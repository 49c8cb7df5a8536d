"""Pure compute: the graph container and store, parsers, generators, the algorithm registry.

Nothing here talks to Redis or HTTP. Modules that run on the GPU import CuPy lazily, so the
package imports with NumPy/SciPy alone.
"""
