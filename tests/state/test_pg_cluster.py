"""The tests' throwaway PostgreSQL cluster (tests/pg_cluster.py) never outlives its test process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pg_cluster import server_binaries
from tests.waiting import read_line, wait_for_exit, wait_until

ROOT = Path(__file__).resolve().parents[2]

# A test process that starts a cluster, says where it is and which pid serves it, then waits to be killed.
OWNER = """
import sys, time
from pathlib import Path
from tests.pg_cluster import Cluster, server_binaries
cluster = Cluster(server_binaries()).start()
print(cluster.root, flush=True)
print((cluster.data / "postmaster.pid").read_text().split()[0], flush=True)
time.sleep(600)
"""


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_cluster_whose_test_process_is_killed_is_stopped_and_removed() -> None:
    if server_binaries() is None:
        pytest.fail("No PostgreSQL server binaries: run .ci/ensure-postgres", pytrace=False)
    owner = subprocess.Popen([sys.executable, "-c", OWNER], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    root = Path(read_line(owner).strip())
    server = int(read_line(owner))
    assert root.is_dir() and _running(server)

    owner.send_signal(signal.SIGKILL)  # no finaliser, no atexit: only the watchdog can clean up
    wait_for_exit(owner)

    wait_until(lambda: not _running(server), what=lambda: f"the cluster's server (pid {server}) still runs")
    wait_until(lambda: not root.exists(), what=lambda: f"{root} is still there: {sorted(root.iterdir())}")
