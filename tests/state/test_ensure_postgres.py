"""``.ci/ensure-postgres``: what `make test` runs before the suite."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.pg_cluster import server_binaries

ROOT = Path(__file__).resolve().parents[2]


def test_ensure_postgres_does_nothing_when_the_server_binaries_are_there() -> None:
    assert server_binaries() is not None, "run .ci/ensure-postgres"
    done = subprocess.run([str(ROOT / ".ci" / "ensure-postgres")], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_make_test_runs_ensure_postgres_before_the_suite() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ntest: install\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert recipe[0].strip() == ".ci/ensure-postgres"
    assert recipe[-1].strip() == "$(BIN)/python -m pytest"
