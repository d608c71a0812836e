"""Shared builders: manifests written to temp files, Live values built by hand.

Tests build real inputs (YAML on disk, the emulator) rather than mocks of
our own code; these helpers only shorten the spelling.
"""

from __future__ import annotations

import errno
import os
import subprocess
import textwrap
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from reconciler.live import Live, LiveEntry, LiveWorkspace
from tests.pg_cluster import ENSURE, Cluster, server_binaries


@pytest.fixture
def write_manifest(tmp_path: Path) -> Callable[..., Path]:
    """Write a manifest (dedented YAML) and return its path."""

    def write(text: str, name: str = "manifest.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return write


@pytest.fixture
def disk_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Make every write to a file under ``tmp_path`` fail with ENOSPC after
    its first few bytes, as a full disk does; returns the switch."""
    real_write = os.write
    root = str(tmp_path.resolve())

    def write(fd: int, data: bytes) -> int:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if target.startswith(root):
            if len(data) > 3:
                real_write(fd, bytes(data[:3]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    return lambda: monkeypatch.setattr(os, "write", write)


def live_workspace(
    workspace_id: str,
    users: Mapping[str, str] | None = None,
    domains: Mapping[str, str] | None = None,
    name: str | None = None,
    **fields: str | None,
) -> LiveWorkspace:
    """A live workspace whose entry ids are derived from their keys;
    ``fields`` are its other attributes (``account_id``, ``template_id`` ...)."""
    return LiveWorkspace(
        id=workspace_id,
        name=name,
        **fields,  # type: ignore[arg-type]
        users={k: LiveEntry(id=f"wu_{workspace_id}_{k}", key=k, role=r) for k, r in (users or {}).items()},
        domains={k: LiveEntry(id=f"wd_{workspace_id}_{k}", key=k, role=r) for k, r in (domains or {}).items()},
    )


def live_of(*workspaces: LiveWorkspace, pages_read: int = 1, complete: bool = False) -> Live:
    return Live(workspaces={ws.id: ws for ws in workspaces}, pages_read=pages_read, complete=complete)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """A PostgreSQL cluster of its own for the whole session (tests/pg_cluster.py).

    Never skipped: without the server binaries the tests that need it fail,
    saying how to install them."""
    bindir = server_binaries()
    if bindir is None:
        pytest.fail(f"No PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb). {ENSURE}", pytrace=False)
    cluster = Cluster(bindir)
    try:
        cluster.start()
    except subprocess.CalledProcessError as exc:
        cluster.stop()
        pytest.fail(f"Could not start a throwaway PostgreSQL cluster: {exc.cmd}: {exc.stderr}", pytrace=False)
    yield cluster
    cluster.stop()


@pytest.fixture
def pg_state(pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh state address (its own key), with the role's password in PGPASSWORD."""
    for name, value in pg_cluster.env().items():
        if name.startswith("PG"):
            monkeypatch.setenv(name, value)
    return pg_cluster.url()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    """Say the test order's seed at the end of every run (``-q`` hides pytest-randomly's
    header line), so a failure that depends on the order can be replayed exactly."""
    seed = getattr(config.option, "randomly_seed", None)
    if isinstance(seed, int) and config.pluginmanager.hasplugin("randomly"):
        terminalreporter.write_line(f"Test order: --randomly-seed={seed} (replay it: python -m pytest -p randomly "
                                    f"--randomly-seed={seed}; file order: -p no:randomly)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``make mutation`` only (mutmut names the mutant in MUTANT_UNDER_TEST, and runs pytest with -x
    in mutants/, beside its record of each test's duration): the fastest tests first, so a mutant a quick
    test kills costs that test, not every slower one mutmut happened to list before it."""
    if not os.environ.get("MUTANT_UNDER_TEST"):
        return
    stats = Path("mutmut-stats.json")
    if not stats.exists():
        return
    import json

    durations: dict[str, float] = json.loads(stats.read_text(encoding="utf-8")).get("duration_by_test", {})
    items.sort(key=lambda item: durations.get(item.nodeid, 0.0))
