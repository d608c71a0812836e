"""A throwaway PostgreSQL cluster for the tests: ``initdb`` and ``pg_ctl``
in a temporary directory, a unix socket there and a free 127.0.0.1 port.

``initdb`` refuses to run as root, so as root the cluster runs as the
``postgres`` user (the Debian package makes it), its directory handed over.
The superuser (``admin``) connects over the socket without a password; the
role the tests use (``team``) connects over TCP with a password (SCRAM), as
a CI runner would, given as ``PGPASSWORD``.

A cluster outlives nothing: a watchdog process holds the read end of a pipe
whose write end only this process holds, and stops the cluster and removes
its directory when that pipe closes, which the kernel does however this
process ends (``kill -9`` by a timeout or by mutmut included).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path

import psycopg

ENSURE = "Run .ci/ensure-postgres (or `make test`, which runs it) to install PostgreSQL's server binaries."
ROLE = "team"
PASSWORD = "pw-9f3c1e-never-printed"
DATABASE = "states"

# The watchdog: block until the pipe on stdin closes (its writer, the test process, ended), then run
# the stop command given as arguments and remove the cluster's directory (the last argument).
WATCHDOG = (
    "import shutil, subprocess, sys\n"
    "sys.stdin.buffer.read()\n"
    "subprocess.run(sys.argv[1:-1], capture_output=True, timeout=120)\n"
    "shutil.rmtree(sys.argv[-1], ignore_errors=True)\n"
)


def server_binaries() -> Path | None:
    """The newest /usr/lib/postgresql/N/bin holding initdb, if any."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """One running cluster; ``stop`` removes it."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="reconciler-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.user: str | None = None
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._watch_pipe: int | None = None
        if os.geteuid() == 0:
            self.user = "postgres"
            info = pwd.getpwnam(self.user)
            os.chown(self.root, info.pw_uid, info.pw_gid)
        os.chmod(self.root, 0o755)  # the socket is reached by this (root) process too

    def _command(self, args: Sequence[str]) -> list[str]:
        prefix = ["runuser", "-u", self.user, "--"] if self.user else []
        return [*prefix, *args]

    def _run(self, args: Sequence[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self._command(args), capture_output=True, text=True, check=check, timeout=120,
                              cwd=self.root)

    def _stop_command(self) -> list[str]:
        return self._command([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-w", "stop", "-m", "immediate"])

    def _watch(self) -> None:
        """Start the watchdog (module docstring). Its own session, so a signal to this process's group
        does not end it too; the pipe's write end is not inheritable, so no other child keeps it open."""
        read_end, self._watch_pipe = os.pipe()
        self._watchdog = subprocess.Popen([sys.executable, "-c", WATCHDOG, *self._stop_command(), str(self.root)],
                                          stdin=read_end, start_new_session=True)
        os.close(read_end)

    def start(self) -> Cluster:
        self._watch()
        self._run([str(self.bindir / "initdb"), "-D", str(self.data), "-U", "admin", "--auth-local=trust",
                   "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C"])
        self._pg_ctl("start")
        self.admin_sql(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'")
        self.admin_sql(f"CREATE DATABASE {DATABASE} OWNER {ROLE}")
        return self

    def _pg_ctl(self, action: str, *extra: str) -> None:
        options = f"-k {self.root} -p {self.port} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), "-o", options,
                   "-w", action, *extra])

    def restart(self) -> None:
        """Restart the server at once (every session is cut, as a crash or a failover does)."""
        self._pg_ctl("restart", "-m", "immediate")

    def stop(self) -> None:
        if self._watchdog is not None:
            self._watchdog.kill()
            self._watchdog.wait()
        if self._watch_pipe is not None:
            os.close(self._watch_pipe)
        subprocess.run(self._stop_command(), capture_output=True, check=False, timeout=120, cwd=self.root)
        shutil.rmtree(self.root, ignore_errors=True)

    def admin(self, dbname: str = DATABASE) -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(host=str(self.root), port=self.port, user="admin", dbname=dbname, autocommit=True)

    def admin_sql(self, statement: str, dbname: str = "postgres") -> list[tuple[object, ...]]:
        with self.admin(dbname) as conn:
            cursor = conn.execute(statement)  # test SQL, written here
            return cursor.fetchall() if cursor.description else []

    def url(self, *, key: str | None = None, schema: str | None = None, user: str = ROLE,
            dbname: str = DATABASE, extra: str = "") -> str:
        """A state address over TCP; a fresh key unless one is given."""
        params = [f"key={key or 'k-' + uuid.uuid4().hex[:12]}"]
        if schema is not None:
            params.append(f"schema={schema}")
        if extra:
            params.append(extra)
        return f"postgresql://{user}@127.0.0.1:{self.port}/{dbname}?{'&'.join(params)}"

    def env(self) -> dict[str, str]:
        """The environment of a command using the state: the password from PGPASSWORD, no pgpass of this user."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        return {**env, "PGPASSWORD": PASSWORD, "PGPASSFILE": str(self.root / "no-pgpass")}
