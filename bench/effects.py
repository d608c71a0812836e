"""What the effects model costs the planner (reconciler/plan/effects.py).

``python -m bench.effects``: a Live of N workspaces x 25 entries (each its
own list), then the simulation and the effects of (a) no change that alters
a list, the steady state, (b) one POST, (c) one POST on each of N/10
workspaces; CPU seconds (process time), fastest of three runs.
"""

from __future__ import annotations

import argparse
import sys
import time

from reconciler.live import Live, LiveEntry, LiveWorkspace
from reconciler.plan.effects import effects, simulate
from reconciler.plan.model import AccessChange, AccessSnapshot, Action, ApiCall, Change, EntryChange


def _live(n: int) -> Live:
    workspaces = {}
    for i in range(n):
        users = {f"u{j}@c{i}.com": LiveEntry(id=f"wu_{i}_{j}", key=f"u{j}@c{i}.com", role="viewer")
                 for j in range(25)}
        workspaces[f"ws_{i}"] = LiveWorkspace(id=f"ws_{i}", name=f"W{i}", users=users)
    return Live(workspaces=workspaces, complete=True)


def _post(workspace_id: str) -> AccessChange:
    return AccessChange(address=f"workspace.{workspace_id}", workspace_id=workspace_id, strategy="replace",
                        entries=(EntryChange(kind="user", key="a@b.com", action=Action.CREATE, after="viewer"),),
                        before=AccessSnapshot(), after=AccessSnapshot(users={"a@b.com": "viewer"}),
                        calls=(ApiCall(method="POST", path=f"/workspaces/{workspace_id}/access"),))


def _cpu(changes: list[Change], live: Live) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        effects(simulate(changes, live), live)
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.effects", description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int, nargs="?", default=10_000, help="workspaces, 25 entries each (default 10,000)")
    n = parser.parse_args(argv).n
    live = _live(n)
    print(f"N = {n:,} workspaces x 25 entries")
    print(f"  no change altering a list: {_cpu([], live):.4f} s CPU")
    print(f"  one POST:                  {_cpu([_post('ws_5')], live):.3f} s CPU")
    print(f"  a POST on N/10 workspaces: {_cpu([_post(f'ws_{i}') for i in range(0, n, 10)], live):.3f} s CPU")


if __name__ == "__main__":
    main(sys.argv[1:])
