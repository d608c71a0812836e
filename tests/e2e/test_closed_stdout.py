"""`reconciler apply ... | head -3`: the reader leaving is not a failure.

The pipe's read end is closed before the command writes anything, so the very
first write (the plan shown before applying) meets a closed pipe: the apply
must still run to the end and exit 0, with nothing alarming on stderr.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml


def test_apply_into_a_closed_pipe_applies_everything_and_exits_0(project: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the first line
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECONCILER_")}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "reconciler", "apply", str(project), "--emulator", str(project / "emulator.yaml"),
             "--seed", str(project / "seed.yaml"), "--auto-approve"],
            stdout=write_end, stderr=subprocess.PIPE, text=True, env=env, timeout=120, check=False)
    finally:
        os.close(write_end)

    assert done.returncode == 0, done.stderr
    assert "Error" not in done.stderr and "BrokenPipe" not in done.stderr and "Exception" not in done.stderr
    data = yaml.safe_load((project / "emulator.yaml").read_text())
    home = next(ws for ws in data["companies"]["acme"]["workspaces"] if ws["id"] == "ws_home")
    assert {u["email"]: u["role"] for u in home["users"]} == {
        "jane@acme.com": "owner", "raj@customer.com": "collaborator", "priya@customer.com": "commenter"}
