"""Start-up: whole processes, as a person or CI meets them.

Each command runs ``runs`` times as a subprocess; the figure is the best
(least) wall time, which is the least disturbed by whatever else the machine
is doing. ``reconciler`` is the console script of the interpreter running the
benchmark (``.venv/bin/reconciler`` when run with ``.venv/bin/python``);
``python -c pass`` is that same interpreter with its site packages, so the
difference is the tool's own start-up.

The package's bytecode is compiled first (``compileall``), as ``pip install``
and ``make install`` leave it: otherwise, where ``PYTHONDONTWRITEBYTECODE``
is set (as on the development machines), every run would compile some
twenty modules again, ~35 ms that no installed tool pays.
"""

from __future__ import annotations

import compileall
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import reconciler
from bench.scenario import tiny_manifest


@dataclass(frozen=True)
class StartupResult:
    label: str
    command: str
    best: float
    median: float
    exit_code: int


def reconciler_command() -> list[str]:
    """The console script beside this interpreter, else ``python -m reconciler``."""
    script = Path(sys.executable).with_name("reconciler")
    return [str(script)] if script.exists() else [sys.executable, "-m", "reconciler"]


def _time(argv: list[str], runs: int) -> tuple[float, float, int]:
    times = []
    code = 0
    for _ in range(runs):
        start = time.perf_counter()
        code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False).returncode
        times.append(time.perf_counter() - start)
    times.sort()
    return times[0], times[len(times) // 2], code


# The floor of ``validate``'s start-up: what importing the libraries it stands
# on costs before any of reconciler's own code runs: click, PyYAML, pydantic
# with the two names every model needs, and pydantic's plugin discovery
# (imported when the first validator is built; it imports importlib.metadata).
LIBRARIES = "import click, yaml; from pydantic import BaseModel, Field; import pydantic.plugin._loader"


def measure_startup(runs: int = 10) -> list[StartupResult]:
    """``python -c pass``, the libraries ``validate`` needs (its floor),
    ``reconciler --help`` and ``reconciler validate`` of a tiny manifest."""
    compileall.compile_dir(Path(reconciler.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        manifest = Path(tmp) / "manifest.yaml"
        manifest.write_text(tiny_manifest(), encoding="utf-8")
        commands = [
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ("floor: click, PyYAML and pydantic imported", [sys.executable, "-c", LIBRARIES]),
            ("reconciler --help", [*reconciler_command(), "--help"]),
            ("reconciler validate (5-line manifest)", [*reconciler_command(), "validate", str(manifest)]),
        ]
        results = []
        for label, argv in commands:
            best, median, code = _time(argv, runs)
            results.append(StartupResult(label, " ".join(argv), best, median, code))
        return results
