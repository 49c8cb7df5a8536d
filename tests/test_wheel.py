"""The wheel that ``pip install .`` builds: only graphgpu's packages, the CUDA sources included."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import REPO

FOLDERS = ("service", "workers", "kernels", "client")


def test_wheel_holds_the_graphgpu_packages_and_their_cu_files(tmp_path: Path) -> None:
    # Built from a copy, so the build leaves no build/ or egg-info in the working tree.
    source = tmp_path / "src"
    source.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in FOLDERS:
        shutil.copytree(REPO / folder, source / folder, ignore=ignore)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", str(source), "-w", str(tmp_path / "dist")], check=True,
                   cwd=tmp_path, timeout=300)
    wheel, = (tmp_path / "dist").glob("graphgpu-*.whl")
    names = zipfile.ZipFile(wheel).namelist()

    metadata = [n for n in names if n.split("/")[0].endswith(".dist-info")]
    packaged = [n for n in names if n not in metadata]
    assert packaged and all(n.startswith("graphgpu/") for n in packaged), [
        n for n in packaged if not n.startswith("graphgpu/")]
    assert not any("tests/" in n or "bench/" in n for n in packaged)

    wanted_data = {f"graphgpu/{p.relative_to(REPO).as_posix()}"
                 for folder in FOLDERS for pattern in ("*.cu", "*.cuh", "*.json")
                 for p in (REPO / folder).rglob(pattern) if "__pycache__" not in p.parts}
    assert wanted_data and wanted_data <= set(packaged), wanted_data - set(packaged)
    wanted_py = {f"graphgpu/{p.relative_to(REPO).as_posix()}"
                 for folder in FOLDERS for p in (REPO / folder).rglob("*.py")
                 if "__pycache__" not in p.parts}
    assert wanted_py <= set(packaged), sorted(wanted_py - set(packaged))[:5]
    # The entry point of the `graphgpu` command.
    entry = next(n for n in metadata if n.endswith("entry_points.txt"))
    assert "graphgpu = graphgpu.client.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()
