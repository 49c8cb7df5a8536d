"""Algorithm families, one sub-package each; the registry imports every one of them.

A family's ``__init__.py`` declares it (params and result models, registration); ``cpu.py`` and
``gpu.py`` hold the two backends of one signature; ``<family>.cu`` the CUDA source. ``common``
holds the building blocks several families use and registers nothing.
"""
