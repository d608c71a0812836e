"""Building the package prints no setuptools warning about its configuration (issue 41 item 1).

``make demo`` / ``pip install -e .`` printed ~250 lines of "Package would be ignored": the examples'
directories, mapped into the wheel as ``reconciler.examples.*``, hold data, and Python would import
them as namespace packages that pyproject.toml did not list. The three builds pip asks setuptools for
(wheel, sdist, editable) run here offline, from a copy of the sources, with this environment's setuptools
(as tests/e2e/test_wheel.py builds its wheel), and their output is read.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT
from tests.e2e.test_wheel import LEFTOVERS

BUILD = """
import sys, warnings
warnings.simplefilter("default")
from setuptools import build_meta
hook, out = sys.argv[1], sys.argv[2]
getattr(build_meta, hook)(out)
"""

WARNINGS = ("would be ignored", "SetuptoolsDeprecationWarning", "is absent from the `packages` configuration")


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("build")
    src = base / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "reconciler", src / "reconciler", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "examples", src / "examples", ignore=shutil.ignore_patterns(*LEFTOVERS))
    return src


@pytest.mark.parametrize("hook", ["build_wheel", "build_sdist", "build_editable"])
def test_building_the_package_prints_no_setuptools_warning(source: Path, tmp_path: Path, hook: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECONCILER_", "PYTHON"))}
    # Each build in its own copy: one build's build/ and egg-info must not hide another's warnings.
    src = tmp_path / "src"
    shutil.copytree(source, src)
    result = subprocess.run([sys.executable, "-c", BUILD, hook, str(tmp_path / "out")], cwd=src, env=env,
                            capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert list((tmp_path / "out").iterdir()), output
    found = [w for w in WARNINGS if w in output]
    assert not found, f"{hook} warned ({found}):\n{output[:3000]}"
