"""What one apply of N changes writes to its journal per change: the file's
journal against PostgreSQL's journal rows.

    .venv/bin/python -m bench.state_journal 10000

The workload of ``python -m bench`` (bench/scenario.py: N workspaces of
25 entries), with every access list drifted: N access changes, applied twice from an empty
state by ``apply_plan`` on the in-process emulator: once with the state in a
file, once in a throwaway PostgreSQL cluster (tests/pg_cluster.py: needs
PostgreSQL's server binaries, ``.ci/ensure-postgres``).  Each backend's
journal is measured just before the fold folds it away:

- file: the journal file's size (its header line, one line per change);
- PostgreSQL: the journal rows' payload (``entry``, the same JSON as the
  file's line without its newline, and ``lineage``, on the first row only)
  and the rows' whole size as stored (``pg_column_size`` of each row: the
  tuple header and every column).

Neither grows with the size of the state: a change costs what it touched.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psycopg import sql

from bench.scenario import build
from bench.service import make_emulator, open_session
from reconciler.apply import apply_plan
from reconciler.commands.plan import plan_with_client
from reconciler.manifest import load_desired
from reconciler.state import State
from reconciler.state.backend import JournalWriter, StateBackend
from reconciler.state.file import FileBackend
from reconciler.state.journal import journal_path
from reconciler.state.postgres import PostgresBackend


@dataclass
class JournalSize:
    changes: int = 0  # lines (rows) appended
    payload: int = 0  # bytes of the file, or of the rows' entry and lineage
    stored: int = 0  # bytes as stored: the file, or every row whole


class _Measured:
    """A journal that measures what its backend stored, just before the fold."""

    def __init__(self, inner: JournalWriter, measure: Any, size: JournalSize) -> None:
        self.inner, self.measure, self.size = inner, measure, size

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def append(self, entry: Mapping[str, object]) -> None:
        self.inner.append(entry)
        self.size.changes += 1

    def fold(self, state: State) -> State:
        self.measure(self.size)
        return self.inner.fold(state)


class _MeasuredBackend:
    def __init__(self, inner: StateBackend, measure: Any) -> None:
        self.inner, self.measure, self.size = inner, measure, JournalSize()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def journal(self, state: State) -> _Measured:
        return _Measured(self.inner.journal(state), self.measure, self.size)


def _apply(n: int, root: Path, backend: _MeasuredBackend) -> int:
    scenario = build(n, drift_every=1)
    manifest = root / "manifest.yaml"
    manifest.write_text(scenario.manifest, encoding="utf-8")
    emulator, clock = make_emulator(scenario.seed)
    session = open_session(emulator, clock)
    plan = plan_with_client(session.client, load_desired(manifest), State())
    apply_plan(plan, client=open_session(emulator, clock).client, state=State(), state_path=backend)  # a measuring proxy of a backend: a StateBackend
    return len(plan.changes)


def measure(n: int) -> tuple[int, JournalSize, JournalSize]:
    from tests.pg_cluster import Cluster, server_binaries

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "reconciler.state.json"

        def file_size(size: JournalSize) -> None:
            size.payload = size.stored = journal_path(path).stat().st_size

        on_file = _MeasuredBackend(FileBackend(path), file_size)
        changes = _apply(n, root, on_file)

        bindir = server_binaries()
        if bindir is None:
            raise SystemExit("No PostgreSQL server binaries: run .ci/ensure-postgres.")
        cluster = Cluster(bindir).start()
        try:
            import os

            os.environ.update({k: v for k, v in cluster.env().items() if k.startswith("PG")})
            pg = PostgresBackend.from_url(cluster.url(key="bench"))

            def rows_size(size: JournalSize) -> None:
                conn = pg._session()
                row = conn.execute(sql.SQL(
                    "SELECT sum(octet_length(entry) + coalesce(octet_length(lineage), 0)), sum(pg_column_size(j.*)) "
                    "FROM {journal} j WHERE key = %s").format(**pg._tables()), ("bench",)).fetchone()
                assert row is not None
                size.payload, size.stored = int(row[0]), int(row[1])

            on_pg = _MeasuredBackend(pg, rows_size)
            with pg.lock("bench"):
                _apply(n, root, on_pg)
            pg.close()
        finally:
            cluster.stop()
    return changes, on_file.size, on_pg.size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int, nargs="?", default=10_000, help="workspaces (one access change each)")
    n = parser.parse_args().n
    changes, file, pg = measure(n)
    print(f"{changes} changes applied, journal per change:")
    print(f"  file journal:        {file.stored / file.changes:7.1f} bytes ({file.stored} in {file.changes} lines "
          "with the header)")
    print(f"  PostgreSQL rows:     {pg.payload / pg.changes:7.1f} bytes of entry and lineage "
          f"({pg.payload} in {pg.changes} rows)")
    print(f"  PostgreSQL as rows:  {pg.stored / pg.changes:7.1f} bytes per row whole (tuple header, key, seq, "
          "serial included)")


if __name__ == "__main__":
    main()
