"""Installs the four top-level folders as one import namespace, ``graphgpu.*``.

``service/``, ``workers/``, ``kernels/`` and ``client/`` become ``graphgpu.service`` and so on
(setuptools ``package_dir``), so nothing we install shadows, or is shadowed by, PyPI packages
named ``kernels`` or ``client``. Packages are found by walking the folders, so a new algorithm
family needs no edit here. Metadata and dependencies live in pyproject.toml.
"""

from setuptools import find_packages, setup

NAMESPACE = "graphgpu"
FOLDERS = ("service", "workers", "kernels", "client")

setup(
    package_dir={f"{NAMESPACE}.{folder}": folder for folder in FOLDERS},
    packages=[f"{NAMESPACE}.{folder}{'.' + sub if sub else ''}"
              for folder in FOLDERS for sub in ("", *find_packages(folder))],
)
