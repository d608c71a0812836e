"""A plain ``pip install`` of the wheel (not editable, no checkout around it)
runs the demo, every shipped example by name, and prints the schemas.

The wheel is built from a copy of the sources (so no build/ or egg-info lands
in the repository) without build isolation, with the test environment's
setuptools; it is installed (by this environment's pip) into a fresh virtual environment, its
dependencies pinned to the versions this environment has (so the generated
schema is compared under the same pydantic), and run from an empty directory.
"""

from __future__ import annotations

import fnmatch
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT

# What running an example in place leaves beside it: not part of the example.
LEFTOVERS = ("reconciler.state.json*", "emulator.yaml", "*.lock", "__pycache__")

# A generous cap on each step: a hung pip or demo fails the test instead of the run.
STEP_TIMEOUT = 600


def _run(argv: list[str], *, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=STEP_TIMEOUT)
    assert result.returncode == 0, f"{argv} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


def _pins() -> str:
    """This environment's distributions as exact constraints (the installed wheel's own and pip's excepted)."""
    lines = {f"{dist.metadata['Name']}=={dist.version}" for dist in importlib.metadata.distributions()
             if dist.metadata["Name"] and dist.metadata["Name"].lower() not in {"reconciler", "pip", "setuptools"}}
    return "\n".join(sorted(lines)) + "\n"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """(the fresh environment's bin directory, an environment for running it) with the wheel installed."""
    base = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECONCILER_", "PYTHON"))}
    # The review demo keeps its work directory (the page and evidence it tells the user to open): here, not in /tmp.
    env["TMPDIR"] = str(base / "tmp")
    (base / "tmp").mkdir()
    source = base / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "reconciler", source / "reconciler", ignore=shutil.ignore_patterns("__pycache__"))
    # What a checkout holds and the wheel maps in (pyproject.toml: package-dir), not what a run left there.
    shutil.copytree(ROOT / "examples", source / "examples", ignore=shutil.ignore_patterns(*LEFTOVERS))
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
          "--wheel-dir", str(base / "dist"), str(source)], cwd=base, env=env)
    wheels = list((base / "dist").glob("reconciler-*.whl"))
    assert len(wheels) == 1, wheels
    # No pip of its own (ensurepip takes ~10 s): this environment's pip installs into it (--python).
    _run([sys.executable, "-m", "venv", "--without-pip", str(base / "venv")], cwd=base, env=env)
    (base / "pins.txt").write_text(_pins(), encoding="utf-8")
    bin_dir = base / "venv" / "bin"
    _run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "--quiet",
          "--constraint", str(base / "pins.txt"), str(wheels[0])], cwd=base, env=env)
    return bin_dir, env


def test_the_installed_wheel_runs_the_demo_from_an_empty_directory(
        installed: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    bin_dir, env = installed
    result = _run([str(bin_dir / "reconciler"), "demo"], cwd=tmp_path, env=env)
    out = result.stdout
    first = out.splitlines()[0]
    # The quickstart shipped inside the installed package, not a checkout's.
    assert first.startswith("$ reconciler validate ") and first.endswith("/site-packages/reconciler/examples/quickstart")
    assert first.removeprefix("$ reconciler validate ").startswith(str(bin_dir.parent))
    assert "Plan: 2 to add, 1 to change, 1 to remove." in out
    last_plan = out.rsplit("\n$ reconciler plan ", 1)[1].split("\n", 1)[1]
    assert last_plan.startswith("No changes.")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "schemas").glob("*.json")))
def test_the_installed_wheel_prints_every_schema_of_the_repository(
        installed: tuple[Path, dict[str, str]], tmp_path: Path, name: str) -> None:
    bin_dir, env = installed
    listed = _run([str(bin_dir / "reconciler"), "schema", "--list"], cwd=tmp_path, env=env).stdout
    kind = next((line.split()[0] for line in listed.splitlines() if line.split()[1] == f"schemas/{name}"), None)
    assert kind is not None, f"schema --list has no schemas/{name}:\n{listed}"
    result = _run([str(bin_dir / "reconciler"), "schema", kind], cwd=tmp_path, env=env)
    committed = (ROOT / "schemas" / name).read_text(encoding="utf-8")
    assert json.loads(result.stdout) == json.loads(committed)
    assert result.stdout == committed


@pytest.mark.parametrize("example", sorted(p.name for p in (ROOT / "examples").iterdir() if p.is_dir()))
def test_the_installed_wheel_runs_every_example_by_name_from_an_empty_directory(
        installed: tuple[Path, dict[str, str]], tmp_path: Path, example: str) -> None:
    bin_dir, env = installed
    result = _run([str(bin_dir / "reconciler"), "demo", example], cwd=tmp_path, env=env)
    first = result.stdout.splitlines()[0]
    assert f"/site-packages/reconciler/examples/{example}" in first, first
    last_plan = result.stdout.rsplit("\n$ reconciler plan ", 1)[1].split("\n", 1)[1]
    assert last_plan.startswith("No changes.")
    assert list(tmp_path.iterdir()) == []


def test_the_installed_wheel_carries_each_examples_files_and_readme(installed: tuple[Path, dict[str, str]]) -> None:
    bin_dir, _ = installed
    shipped = next((bin_dir.parent / "lib").glob("python*/site-packages/reconciler/examples"))
    for example in (p for p in (ROOT / "examples").iterdir() if p.is_dir()):
        # Every file, the GitOps example's workflow and .gitignore included.
        wanted = {f.relative_to(ROOT / "examples").as_posix() for f in example.rglob("*")
                  if f.is_file() and not any(fnmatch.fnmatch(f.name, left) for left in LEFTOVERS)}
        have = {f.relative_to(shipped).as_posix() for f in (shipped / example.name).rglob("*") if f.is_file()}
        assert wanted <= have, sorted(wanted - have)
        assert f"{example.name}/README.md" in have
