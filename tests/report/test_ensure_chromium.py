"""``.ci/ensure-chromium``: what `make test` runs before the suite, for the browser test."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.chromium import CHROMIUM

ROOT = Path(__file__).resolve().parents[2]


def test_ensure_chromium_does_nothing_when_chromium_is_there() -> None:
    assert CHROMIUM.exists(), "run .ci/ensure-chromium"
    done = subprocess.run([str(ROOT / ".ci" / "ensure-chromium")], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_make_test_runs_ensure_chromium_before_the_suite() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = [line.strip() for line in makefile.split("\ntest: install\n", 1)[1].split("\n\n", 1)[0].splitlines()]
    assert ".ci/ensure-chromium" in recipe
    assert recipe.index(".ci/ensure-chromium") < recipe.index("$(BIN)/python -m pytest")
